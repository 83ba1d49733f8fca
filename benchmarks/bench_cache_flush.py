"""Benchmark what writing the judge response cache at most a second after each reply costs.

Run with::

    .venv/bin/python benchmarks/bench_cache_flush.py [--replies 200] [--rate 20] [--burst 20000]
        [--repeats 5]

The cache buffers writes and writes them in one transaction per :data:`WRITE_BATCH` entries. A judge
killed outright (``kill -9``, out of memory) lost every buffered reply, and its resumed run paid for
them again. Now a timer on the runner's event loop also writes the buffer :data:`FLUSH_AFTER_S` after its
first entry came. Side by side, on a fresh cache file each:

(a) ``batch only``: the old setting (no timer);
(b) ``batch or 1 s``: the new default;
(c) ``batch or 0.25 s``: a shorter time, for comparison;
(d) ``every reply``: one transaction per reply (``WRITE_BATCH = 1``), for reference.

Two loads on the event loop:

1. a stream: ``--replies`` replies (about 1 KiB each, as a judge's JSON reply with its metadata)
   arriving at ``--rate`` per second, as from a server under load. Printed: transactions, the time
   spent writing them (on the event loop, so the runner waits for it), and how many replies a kill
   at a random moment would lose (the buffer's mean size, and its largest) and their oldest age.
2. a burst: ``--burst`` replies put one after another with no wait (a warm cache's frame entries,
   or a very fast server): the time per put, writes included.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from robojudge.judges import Completion, ResponseCache, _cache

SETTINGS = {  # name: (WRITE_BATCH, FLUSH_AFTER_S)
    "batch only": (_cache.WRITE_BATCH, math.inf),
    "batch or 1 s": (_cache.WRITE_BATCH, _cache.FLUSH_AFTER_S),
    "batch or 0.25 s": (_cache.WRITE_BATCH, 0.25),
    "every reply": (1, math.inf),
}


def _reply(i: int) -> Completion:
    text = '{"reasoning": "' + "the gripper closes on the cup and lifts it; " * 18 + f'", "score": {i % 5}}}'
    return Completion(text=text, prompt_tokens=1800, completion_tokens=120, latency_s=1.5,
                      meta={"id": f"chatcmpl-{i:08d}", "model": "qwen2.5-vl-7b", "finish_reason": "stop"})


class _Timed(ResponseCache):
    """A cache that adds up the time its transactions take and samples its buffer at each put."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.writing = 0.0
        self.buffered: list[int] = []
        self.oldest = 0.0

    def flush(self) -> None:
        if self._pending:
            self.oldest = max(self.oldest, time.monotonic() - self._first_pending)
        start = time.perf_counter()
        super().flush()
        self.writing += time.perf_counter() - start

    def put_reply(self, key: str, completion: Completion) -> None:
        super().put_reply(key, completion)
        self.buffered.append(len(self._pending))


def _with(setting: str) -> None:
    _cache.WRITE_BATCH, _cache.FLUSH_AFTER_S = SETTINGS[setting]


def _stream(setting: str, replies: int, rate: float) -> str:
    _with(setting)
    with tempfile.TemporaryDirectory() as folder:
        cache = _Timed(Path(folder))

        async def arrive() -> None:
            start = time.monotonic()
            for i in range(replies):
                await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
                cache.put_reply(f"k{i}", _reply(i))

        asyncio.run(arrive())
        cache.close()
        mean = sum(cache.buffered) / len(cache.buffered)
        return (f"{setting:>15}: {cache.flushes:4d} transactions, {1000 * cache.writing:6.1f} ms writing "
                f"({1e6 * cache.writing / replies:5.1f} us/reply); a kill loses {mean:5.1f} replies on "
                f"average, at most {max(cache.buffered):3d} (up to {cache.oldest:4.2f} s old)")


def _burst(setting: str, n: int) -> float:
    _with(setting)
    replies = [_reply(i) for i in range(n)]
    with tempfile.TemporaryDirectory() as folder:
        cache = ResponseCache(Path(folder))

        async def put() -> float:
            start = time.perf_counter()
            for i, reply in enumerate(replies):
                cache.put_reply(f"k{i}", reply)
            cache.flush()
            return time.perf_counter() - start

        took = asyncio.run(put())
        cache.close()
        return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0, help="replies per second in the stream")
    parser.add_argument("--burst", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    default = (_cache.WRITE_BATCH, _cache.FLUSH_AFTER_S)
    try:
        print(f"1. stream: {args.replies} replies at {args.rate:g}/s")
        for setting in SETTINGS:
            print("  " + _stream(setting, args.replies, args.rate), flush=True)
        print(f"2. burst: {args.burst} replies put back to back (median of {args.repeats})")
        took: dict[str, list[float]] = {setting: [] for setting in SETTINGS}
        for _ in range(args.repeats):  # alternated, so that load from other work falls on each alike
            for setting in SETTINGS:
                took[setting].append(_burst(setting, args.burst))
        for setting, times in took.items():
            median = statistics.median(times)
            print(f"  {setting:>15}: {median:6.2f} s, {1e6 * median / args.burst:6.1f} us per reply")
    finally:
        _cache.WRITE_BATCH, _cache.FLUSH_AFTER_S = default
    return 0


if __name__ == "__main__":
    sys.exit(main())
