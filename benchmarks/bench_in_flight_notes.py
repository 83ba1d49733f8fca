"""Benchmark what noting each item in flight costs a run, with one worker (the default) and with a pool.

Run with::

    .venv/bin/python benchmarks/bench_in_flight_notes.py [--items 500] [--repeats 3]

With the in-process executor, ``score_items`` notes each item in the store before computing it and
clears the note once its rows are stored (two small SQLite transactions), so that a run that dies on
an item computes that item alone in a child process next time. With worker processes (``-w N``) the
run notes each item as it hands it out (``queued``), so that the same command launched again leaves
it alone. This scores ``--items`` items with a metric that does nothing (so only the bookkeeping is
timed) into a fresh SQLite store, side by side, each without notes (the store's note and clear made to
do nothing) and with them:

(a) the default in-process executor;
(b) a pool of 2 worker processes.

It prints the median of the repeats and the cost per item of the notes. On real metrics an item takes
0.1 s to minutes, so the per-item figure is what to compare with.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from robojudge.metrics import Score, metric
from robojudge.run import Executor, LocalProcessExecutor, SerialExecutor, build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item


class _Nothing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


@metric("bench_nothing", inputs={"instruction"}, config=_Nothing, family="baseline", higher_is_better=True,
        native_range=(None, None), version="1", citation="robojudge benchmark", description="does nothing")
def _nothing(item: Item, config: _Nothing) -> Score:
    return Score(value=1.0)


class _Unnoting(ResultStore):
    """A store whose in-flight notes do nothing: the run as without them."""

    def note_in_flight(self, item_id: str, metrics: Iterable[str], *, queued: bool = False) -> None:
        pass

    def clear_in_flight(self, item_ids: Iterable[str]) -> None:
        pass


def _time(make: Callable[[], Executor], items: list[Item], notes: bool) -> float:
    kind = ResultStore if notes else _Unnoting
    with tempfile.TemporaryDirectory() as folder, kind(Path(folder) / "r.sqlite") as store:
        start = time.perf_counter()
        score_items(items, build_requests(["bench_nothing"]), store, executor=make())
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    items = [Item(item_id=f"item{i:05d}", video="/not/read.mp4", instruction="x") for i in range(args.items)]
    for name, make in (("1 worker (in process)", SerialExecutor),
                       ("2 worker processes", lambda: LocalProcessExecutor(2))):
        plain, noted = [], []
        for _ in range(args.repeats):  # alternated, so that load from other work falls on both alike
            plain.append(_time(make, items, notes=False))
            noted.append(_time(make, items, notes=True))
        a, b = statistics.median(plain), statistics.median(noted)
        print(f"{name}: {args.items} items, median of {args.repeats}: without notes {a:.2f} s, with notes "
              f"{b:.2f} s ({b / a:.2f}x); {1000 * (b - a) / args.items:.2f} ms more per item")
    return 0


if __name__ == "__main__":
    sys.exit(main())
