"""Time the HTML report's sections on a big in-memory run, and count how often it rebuilds its columns.

Run with::

    .venv/bin/python benchmarks/bench_report.py [--items 2000] [--metrics 20] [--judges 2] [--bootstrap 200]

Synthetic data: ``--items`` labelled items (6 generators, clips of 3 items, 4 sources), ``--metrics``
RoboPhys-3D taxonomy metrics (one of them a task-success measure, so every section has work) and
``--judges`` judges with PA and IA scores, all following the planted labels with noise. Nothing is
read from or written to disk: the sections are built from a :class:`ReportInput` directly.

Prints the wall and CPU seconds of each section and of the whole report, the size of its figures (inline
SVG, what they add to ``index.html``), and how many times the rows were split into series
(``split_series``: one full sort and split of every row each time).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np

from robojudge.aggregate import load_taxonomy
from robojudge.report import _html, _series
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item


def _data(n_items: int, n_metrics: int, n_judges: int) -> tuple[list[ResultRow], list[Item]]:
    rng = np.random.default_rng(0)
    tax = load_taxonomy()
    metrics = ["ts_action_planner", *[m for m in tax.ids if not m.startswith("ts_")][: n_metrics - 1]]
    gens = [f"gen{g}" for g in range(6)]
    items, rows = [], []
    for i in range(n_items):
        g = gens[i % len(gens)]
        pa, ia = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        it = Item(item_id=f"i{i:05d}", video="v.mp4", clip_id=f"c{i // 3}", source=f"s{(i // 3) % 4}",
                  generator=g, labels={"pa": pa, "ia": ia})
        items.append(it)
        for k, m in enumerate(metrics):
            v = 0.1 * (pa if k % 2 else ia) + rng.normal(0, 0.2)
            rows.append(ResultRow(item_id=it.item_id, metric=m, config_hash="h", version="1", status="ok",
                                  value=float(v)))
        for j in range(n_judges):
            for a, y in (("pa", pa), ("ia", ia)):
                s = float(np.clip(round(y + rng.normal(0, 0.7 + 0.3 * j)), 1, 5))
                rows.append(ResultRow(item_id=it.item_id, metric=f"judge:j{j}:{a}", config_hash=f"h{j}{a}",
                                      version="1", status="ok", value=s,
                                      config={"model": f"m{j}", "rubric": a}))
    return rows, items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--metrics", type=int, default=20)
    ap.add_argument("--judges", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=200)
    args = ap.parse_args()
    rows, items = _data(args.items, args.metrics, args.judges)
    print(f"{args.items} items x {args.metrics} metrics + {args.judges} judges = {len(rows)} rows, "
          f"{args.bootstrap} bootstrap replicates")

    calls: Counter[str] = Counter()
    split = _series.split_series

    def counted(*a: object, **kw: object) -> list[_series.Series]:
        calls["split_series"] += 1
        return split(*a, **kw)  # type: ignore[arg-type]

    _series.split_series = counted  # type: ignore[assignment]

    def direction(metric: str) -> bool:
        return True

    inp = ReportInput(rows, items, direction, bootstrap=args.bootstrap, seed=0)
    # CPU seconds next to wall seconds: on a shared machine the wall clock also counts waiting.
    total, total_cpu = time.perf_counter(), time.process_time()
    figures = 0
    for key, _, build in _html._BUILDERS:
        t0, c0 = time.perf_counter(), time.process_time()
        sec = build(inp)
        size = sum(len(p.encode()) for p in sec.plots)
        figures += size
        state = ("skipped: " + sec.skipped if sec.skipped
                 else f"{len(sec.tables)} tables, {len(sec.plots)} figures of {size / 1024:.0f} KiB")
        print(f"  {key:<14s} {time.perf_counter() - t0:7.2f} s wall {time.process_time() - c0:7.2f} s cpu"
              f"  ({state})")
    print(f"{'whole report':<16s} {time.perf_counter() - total:7.2f} s wall "
          f"{time.process_time() - total_cpu:7.2f} s cpu, figures {figures / 1024:.0f} KiB")
    print(f"split_series calls: {calls['split_series']}")


if __name__ == "__main__":
    main()
