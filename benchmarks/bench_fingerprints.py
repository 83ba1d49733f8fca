"""Benchmark resume planning with input fingerprints: a cold file-hash cache against a warm one.

Run with::

    .venv/bin/python benchmarks/bench_fingerprints.py [--videos 200] [--repeats 5]

It writes ``--videos`` small H.264 videos of noise (each with a reference video, so 2 x N files) into
``benchmarks/_data/fingerprints/`` (git-ignored), scores them once with three cheap metrics into a
fresh store, and then times :func:`robojudge.run.plan_tasks` -- what every rerun does before it
computes anything -- with every result already stored:

(a) without fingerprints (the planner of result schema 1: only "is a row stored?"), for reference;
(b) cold: an empty hash cache, as on the first rerun after scoring on another machine: every file is
    read and hashed;
(c) warm: a new hasher on the cache that (b) filled, as a later process sees it: one ``stat`` and one
    cache look-up per file, no file read.

Each of (b) and (c) runs with a fresh in-process memo. Files stay in the OS page cache throughout,
so (b) measures hashing, not disk reads. Median of the repeats.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from robojudge import settings
from robojudge.run import MetricRequest, _filehash, build_requests, plan_tasks, score_items
from robojudge.run._plan import pending_per_item
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

DATA = Path(__file__).parent / "_data" / "fingerprints"
METRICS = ["pixel_frame_consistency", "flow_warp_error", "iq1_psnr"]


def make_items(n: int) -> list[Item]:
    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    items = []
    for i in range(n):
        paths = [DATA / f"gen{i:04d}.mp4", DATA / f"ref{i:04d}.mp4"]
        for p in paths:
            if not p.exists():
                write_video(p, rng.integers(0, 256, size=(48, 128, 128, 3), dtype=np.uint8), fps=16)
        items.append(Item(item_id=f"item{i:04d}", video=str(paths[0]), reference_video=str(paths[1])))
    return items


def fresh_hasher(folder: Path) -> None:
    """The next digest uses a new hasher on ``folder``, as a new process would."""
    os.environ["ROBOJUDGE_CACHE_DIR"] = str(folder)
    settings.reload()  # the settings read the environment once per process
    _filehash._default = None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--videos", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    items = make_items(args.videos)
    size = sum(Path(p).stat().st_size for it in items for p in (it.video, it.reference_video or ""))
    time.sleep(_filehash.RACY_NS / 1e9 + 0.1)  # freshly written files are not trusted from the cache
    reqs = build_requests(METRICS)
    work = Path(tempfile.mkdtemp(prefix="rj-bench-fp-"))
    try:
        with ResultStore(work / "results.sqlite") as store:
            fresh_hasher(work / "cache-setup")
            s = score_items(items, reqs, store, workers=2)
            print(f"{len(items)} items, {2 * len(items)} files, {size / 2**20:.0f} MiB; scored {s.computed} "
                  f"results in {s.seconds:.1f} s")
            plain, cold, warm = [], [], []
            def key(q: MetricRequest) -> tuple[str, str, str]:
                return (q.id, q.config_hash, q.spec.version)

            for r in range(args.repeats):
                t = time.perf_counter()
                todo, _ = pending_per_item(items, reqs, key, store)
                plain.append(time.perf_counter() - t)
                assert not todo
                fresh_hasher(work / f"cache{r}")
                t = time.perf_counter()
                tasks, skipped = plan_tasks(items, reqs, store)
                cold.append(time.perf_counter() - t)
                assert not tasks and skipped == len(items) * len(reqs)
                hashed = _filehash.default_hasher().hashed
                fresh_hasher(work / f"cache{r}")
                t = time.perf_counter()
                tasks, _ = plan_tasks(items, reqs, store)
                warm.append(time.perf_counter() - t)
                assert not tasks and _filehash.default_hasher().hashed == 0
            print(f"(a) no fingerprints:   {statistics.median(plain):.3f} s")
            print(f"(b) cold hash cache:   {statistics.median(cold):.3f} s ({hashed} files hashed)")
            print(f"(c) warm hash cache:   {statistics.median(warm):.3f} s (0 files hashed)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
