"""Benchmark a judge fleet: the judge runner against several local servers with a fixed latency.

Run with::

    .venv/bin/python benchmarks/bench_judge_fleet.py [--items 1000] [--servers 2] [--latency 0.2]
        [--concurrency 64] [--rubrics pa,ia] [--decode-workers N] [--warm-runs 3]

Each server (``tests/judges/_judge_server.py``, threaded, on 127.0.0.1) runs in its own process and
sleeps ``--latency`` seconds per request; the judge lists them all as ``endpoints``, the total
``--concurrency`` split evenly. Items are ``benchmarks/bench_judge.py``'s 16-frame 64x64 clips (shared
folder ``benchmarks/_data/judge_clips``), judged with PA and IA: two requests per video. Measured:

(a) cold run, empty response cache: requests/s against the ideal ``concurrency / latency``
    (target >= 90%), and the client's CPU per request, ``time.process_time()`` of this process over
    the run divided by the requests sent (target <= 5 ms; decoding runs in the decoder processes,
    reported apart); requests per endpoint.
(b) warm rerun into a new store with the cache from (a): no request, no decoding; the median of
    ``--warm-runs`` against (a) (target < 5%).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "judges"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _judge_server import FakeServer, Reply  # noqa: E402
from bench_judge import _children_cpu, clips  # noqa: E402

from robojudge.judges import ResponseCache, get_rubric, make_backend, make_judge  # noqa: E402
from robojudge.judges._fleet import FleetBackend  # noqa: E402
from robojudge.run._judge import judge_items  # noqa: E402
from robojudge.store import ResultStore  # noqa: E402
from robojudge.video import shared_decoder  # noqa: E402

REPLY = '{"reasoning": "stable gripper, on task", "physical_adherence": 4, "instruction_alignment": 3}'


def _server_main(latency: float, urls: Any) -> None:
    with FakeServer(lambda b, n: Reply(REPLY, delay=latency), record=False) as srv:
        urls.put(srv.url)
        time.sleep(24 * 3600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--servers", type=int, default=2, help="endpoints, each a server process")
    ap.add_argument("--latency", type=float, default=0.2, help="server seconds per request")
    ap.add_argument("--concurrency", type=int, default=64, help="total, split evenly over the servers")
    ap.add_argument("--rubrics", default="pa,ia")
    ap.add_argument("--decode-workers", type=int, default=None, help="decoder processes (0: threads)")
    ap.add_argument("--warm-runs", type=int, default=3)
    args = ap.parse_args()
    if args.concurrency % args.servers:
        ap.error("--concurrency must be a multiple of --servers")
    items = clips(args.items)
    ctx = mp.get_context("fork")
    urls = ctx.Queue()
    servers = [
        ctx.Process(target=_server_main, args=(args.latency, urls), daemon=True) for _ in range(args.servers)
    ]
    for s in servers:
        s.start()
    endpoints = [
        {"base_url": urls.get(timeout=30), "concurrency": args.concurrency // args.servers}
        for _ in servers
    ]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            judge = make_judge(
                {"name": "bench", "model": "fake-vl", "endpoints": endpoints, "timeout_s": 30}
            )
            rubrics = [get_rubric(r.strip()) for r in args.rubrics.split(",")]
            backend = make_backend(judge)
            assert isinstance(backend, FleetBackend)
            with ResponseCache(Path(tmp) / "cache") as cache:
                with ResultStore(Path(tmp) / "cold.sqlite") as store:
                    t0, c0 = time.perf_counter(), time.process_time()
                    cold = judge_items(
                        items,
                        judge,
                        rubrics,
                        store,
                        cache=cache,
                        backend=backend,
                        decode_workers=args.decode_workers,
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
        for s in servers:
            s.terminate()
    assert cold.scored == warm.scored == args.items * len(rubrics), (cold, warm)
    sent = cold.stats.sent
    ideal = args.concurrency / args.latency
    achieved = sent / cold_s
    n = max(1, sent)
    print(
        f"items {args.items}, {args.servers} endpoints x concurrency {args.concurrency // args.servers}, "
        f"latency {args.latency:g} s"
    )
    print(
        f"(a) cold: {cold_s:.2f} s, {sent} requests, {achieved:.1f} req/s vs ideal {ideal:.1f} "
        f"= {100 * achieved / ideal:.1f}% (target >= 90%)"
    )
    print(
        f"    client CPU per request {1000 * cold_cpu / n:.2f} ms (target <= 5 ms; process_time of this "
        f"process, all threads); decoder processes {1000 * decode_cpu / n:.2f} ms"
    )
    per = ", ".join(f"{r['sent']}" for r in backend.report())
    load = os.getloadavg()[0]
    print(f"    requests per endpoint: {per}; load average now {load:.1f} on {os.cpu_count()} CPUs")
    print(
        f"(b) warm: {warm_s:.3f} s (median of {len(warm_times)}: "
        f"{', '.join(f'{t:.3f}' for t in warm_times)}), {warm.stats.cache_hits} cache hits "
        f"= {100 * warm_s / cold_s:.2f}% of cold (target < 5%)"
    )


if __name__ == "__main__":
    main()
