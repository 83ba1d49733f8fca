"""Benchmark the judge runner against a local OpenAI-compatible server with a fixed latency.

Run with::

    .venv/bin/python benchmarks/bench_judge.py [--items 1000] [--latency 0.2] [--concurrency 32]
        [--rubrics pa,ia] [--decode-workers N] [--warm-runs 3]

The server (``tests/judges/_judge_server.py``, threaded, on 127.0.0.1, in its own process) sleeps
``--latency`` seconds per request and answers clean JSON. Each item is its own 16-frame 64x64 clip
(4 s at 4 fps), generated once into ``benchmarks/_data/judge_clips`` (git-ignored), judged with the
CLI's default rubrics, PA and IA: two requests per video, one decode. Measured:

(a) cold run: every (item, rubric) pair into a new store with an empty response cache; achieved
    requests/s against the ideal ``concurrency / latency``. Target: >= 90% of the ideal. The wall
    time includes starting the decoder process and importing the HTTP client.
(b) warm rerun: the same items into another new store, with the cache from (a): every reply comes
    from the cache and no video is decoded. Median of ``--warm-runs``. Target: < 5% of (a).

Also printed: CPU time per request of the client process (HTTP, parsing, storing; all threads)
and of the decoder processes (decoding, hashing, JPEG encoding), and the load average: the
server, the client and the decoders share this machine's cores, and on a small or busy machine
CPU, not the server's latency, is what limits (a).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "judges"))

from _judge_server import FakeServer, Reply  # noqa: E402

from robojudge.judges import ResponseCache, get_rubric, make_judge  # noqa: E402
from robojudge.run._judge import judge_items  # noqa: E402
from robojudge.store import ResultStore  # noqa: E402
from robojudge.suite import Item  # noqa: E402
from robojudge.video import shared_decoder, write_video  # noqa: E402


def clips(n: int) -> list[Item]:
    folder = ROOT / "benchmarks" / "_data" / "judge_clips"
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for i in range(n):
        path = folder / f"clip_{i:05d}.mp4"
        if not path.exists():
            rng = np.random.default_rng(i)
            base = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
            frames = np.stack([np.roll(base, 2 * t, axis=1) for t in range(16)])
            write_video(path, frames, fps=4.0)
        items.append(
            Item(item_id=f"clip{i:05d}", video=str(path), instruction="put the red cube in the bowl")
        )
    return items


def _server_main(latency: float, reply: str, urls: Any) -> None:
    with FakeServer(lambda b, n: Reply(reply, delay=latency), record=False) as srv:
        urls.put(srv.url)
        time.sleep(24 * 3600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.2, help="server seconds per request")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument(
        "--rubrics",
        default="pa,ia",
        help="rubrics per item (the CLI's default pa,ia: two requests per video)",
    )
    ap.add_argument("--decode-workers", type=int, default=None, help="decoder processes (0: threads)")
    ap.add_argument("--warm-runs", type=int, default=3, help="warm reruns; the median is reported")
    args = ap.parse_args()
    items = clips(args.items)
    reply = '{"reasoning": "stable gripper, on task", "physical_adherence": 4, "instruction_alignment": 3}'
    ctx = mp.get_context("fork")
    urls = ctx.Queue()
    server = ctx.Process(target=_server_main, args=(args.latency, reply, urls), daemon=True)
    server.start()  # its own process, as a real server would be: no GIL shared with the client
    url = urls.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            judge = make_judge(
                {
                    "name": "bench",
                    "backend": "openai",
                    "model": "fake-vl",
                    "base_url": url,
                    "concurrency": args.concurrency,
                    "timeout_s": 30,
                }
            )
            rubrics = [get_rubric(r.strip()) for r in args.rubrics.split(",")]
            with ResponseCache(Path(tmp) / "cache") as cache:
                with ResultStore(Path(tmp) / "cold.sqlite") as store:
                    t0, c0 = time.perf_counter(), time.process_time()
                    cold = judge_items(
                        items, judge, rubrics, store, cache=cache, decode_workers=args.decode_workers
                    )
                    cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
                decoder = shared_decoder(args.decode_workers)
                if decoder is not None:
                    decoder.close()  # reaped, so their CPU time shows up in RUSAGE_CHILDREN
                decode_cpu = _children_cpu()
                warm_times = []
                for k in range(max(1, args.warm_runs)):
                    with ResultStore(Path(tmp) / f"warm{k}.sqlite") as store:
                        t0 = time.perf_counter()
                        warm = judge_items(items, judge, rubrics, store, cache=cache)
                        warm_times.append(time.perf_counter() - t0)
                        assert warm.stats.sent == 0, "a warm run sent requests"
                warm_s = statistics.median(warm_times)
    finally:
        server.terminate()
    assert cold.scored == warm.scored == args.items * len(rubrics), (cold, warm)
    sent = cold.stats.sent
    ideal = args.concurrency / args.latency
    achieved = sent / cold_s
    print(f"items {args.items}, latency {args.latency:g} s, concurrency {args.concurrency}")
    print(
        f"(a) cold: {cold_s:.2f} s, {sent} requests, {achieved:.1f} req/s vs ideal {ideal:.1f} "
        f"= {100 * achieved / ideal:.1f}% (target >= 90%)"
    )
    n = max(1, sent)
    print(
        f"    CPU per request: client {1000 * cold_cpu / n:.1f} ms (all threads), decoder processes "
        f"{1000 * decode_cpu / n:.1f} ms; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(
        f"(b) warm: {warm_s:.3f} s (median of {len(warm_times)}: "
        f"{', '.join(f'{t:.3f}' for t in warm_times)}), 0 requests, {warm.stats.cache_hits} cache hits "
        f"= {100 * warm_s / cold_s:.2f}% of cold (target < 5%)"
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
