"""The Ray executor against the local one, side by side in one run (issue 18's ratios).

Needs the ``ray`` extra (``pip install -e '.[ray]'``); without it the script says so and stops.
Run with::

    .venv/bin/python benchmarks/bench_ray.py [--items 48] [--frames 48] [--side 160]
        [--small 1000] [--large 10000] [--skip-speed] [--skip-memory]

Speed: ``--items`` items of one synthetic video (``--frames`` frames, ``--side`` px square, decoded
again for every item: the work is CPU-bound) are scored with ``pixel_frame_consistency`` and
``flow_motion_magnitude_farneback`` three times, each into a fresh store: the local executor with 2
processes, Ray with 2 workers, Ray with 1 worker (a private Ray instance on 127.0.0.1 per Ray leg,
started before the clock starts: a cluster is up before a run). Printed per leg: the wall time, when the first
item was stored (worker start-up: imports in fresh processes), and the items per second from the
first stored item to the last; the Ray 2 / local 2 and Ray 2 / Ray 1 ratios are of the latter.

Memory: ``score_suite`` over a JSONL manifest of ``--small`` and of ``--large`` items (one tiny
frame-folder video, ``pixel_frame_consistency``) with ``--executor ray`` (2 workers) and with the
local executor (2 processes), each in a fresh driver process. Printed: the driver's peak resident
memory (``VmHWM``), the largest worker peak (sampled from /proc every 0.2 s), and the large / small
ratios.

The machine this runs on may be shared: every leg reports its own wall time, so compare ratios
measured in one run, and rerun when the load changes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from robojudge.run import Executor

METRICS = ["pixel_frame_consistency", "flow_motion_magnitude_farneback"]

_MEMORY_CHILD = r"""
import json, os, sys, threading, time
from pathlib import Path

def peak(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0

def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        out += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return out

workers = {}
stop = threading.Event()
def sample():
    while not stop.wait(0.2):
        for pid in descendants(os.getpid()):
            try:
                name = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            cmd = Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
            if name.startswith("ray::") or "multiprocessing" in cmd:
                workers[pid] = max(workers.get(pid, 0.0), peak(pid))

from robojudge.run import score_suite
manifest, db, executor = sys.argv[1], sys.argv[2], sys.argv[3]
threading.Thread(target=sample, daemon=True).start()
before = peak(os.getpid())
t0 = time.perf_counter()
if executor == "ray":
    run = score_suite(manifest, ["pixel_frame_consistency"], db=db, executor="ray", address="local",
                      workers=2)
else:
    run = score_suite(manifest, ["pixel_frame_consistency"], db=db, workers=2)
stop.set()
print(json.dumps({"ok": run.summary.ok, "failed": run.summary.failed,
                  "seconds": time.perf_counter() - t0, "driver_mb": peak(os.getpid()),
                  "driver_before_mb": before, "worker_mb": max(workers.values(), default=0.0)}))
"""


def _video(folder: Path, frames: int, side: int, name: str = "clip.mp4") -> Path:
    from robojudge.video import write_video

    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (side, side, 3), dtype=np.uint8)
    seq = np.stack([np.roll(base, 2 * i, axis=1) for i in range(frames)])
    return write_video(folder / name, seq, fps=8)


def speed(args: argparse.Namespace, tmp: Path) -> None:
    import ray

    from robojudge.run import LocalProcessExecutor, build_requests, score_items
    from robojudge.run._ray import RayExecutor
    from robojudge.store import ResultStore
    from robojudge.suite import Item

    video = _video(tmp, args.frames, args.side)
    items = [Item(item_id=f"i{i:05d}", video=str(video), instruction="x") for i in range(args.items)]
    reqs = build_requests(METRICS)

    def leg(name: str, make: Callable[[], Executor]) -> float:
        """Seconds per item once the first item is stored (worker start-up left out), printed with
        the whole wall time."""
        stamps: list[float] = []

        def note(row: object, summary: object) -> None:
            stamps.append(time.perf_counter())

        with ResultStore(tmp / f"{name}.sqlite") as store:
            t0 = time.perf_counter()
            run = score_items(items, reqs, store, executor=make(), progress=note)
            wall = time.perf_counter() - t0
        assert run.failed == 0, run.errors[:1]
        per_item: float = (stamps[-1] - stamps[len(reqs) - 1]) / (args.items - 1)
        print(f"{name:<16s} wall {wall:7.2f} s (first item after {stamps[0] - t0:5.1f} s), then "
              f"{1 / per_item:6.2f} items/s", flush=True)
        return per_item

    def ray_leg(name: str, cpus: int) -> float:
        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
                 log_to_driver=False)
        print(f"  (Ray start, not timed: {time.perf_counter() - t0:.1f} s)", flush=True)
        try:
            return leg(name, lambda: RayExecutor())
        finally:
            ray.shutdown()

    print(f"speed: {args.items} items x {METRICS}, {args.frames} frames {args.side}x{args.side}")
    local2 = leg("local, 2 procs", lambda: LocalProcessExecutor(2))
    ray2 = ray_leg("ray, 2 workers", 2)
    ray1 = ray_leg("ray, 1 worker", 1)
    print(f"ray 2 / local 2 throughput after start-up: {local2 / ray2:.2f}x (target >= 0.9)")
    print(f"ray 2 / ray 1 throughput after start-up:   {ray1 / ray2:.2f}x (target >= 1.7)")


def memory(args: argparse.Namespace, tmp: Path) -> None:
    video = _video(tmp, 4, 16, "tiny")  # a frame folder
    results: dict[tuple[str, int], dict[str, float]] = {}
    for n in (args.small, args.large):
        manifest = tmp / f"suite{n}.jsonl"
        with manifest.open("w") as fh:
            for i in range(n):
                row = {"item_id": f"i{i:06d}", "video": str(video), "instruction": "x"}
                fh.write(json.dumps(row) + "\n")
        for executor in ("ray", "local"):
            db = tmp / f"mem-{executor}-{n}.sqlite"
            out = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(manifest), str(db), executor],
                                 capture_output=True, text=True, check=True, env=os.environ)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            assert res["ok"] == n and res["failed"] == 0, res
            results[(executor, n)] = res
            print(f"{executor:<6s} {n:>6d} items: {res['seconds']:7.1f} s, driver peak "
                  f"{res['driver_mb']:6.0f} MB (before scoring {res['driver_before_mb']:.0f}), worker peak "
                  f"{res['worker_mb']:6.0f} MB", flush=True)
    for executor in ("ray", "local"):
        small, large = results[(executor, args.small)], results[(executor, args.large)]
        driver = large["driver_mb"] / small["driver_mb"]
        worker = large["worker_mb"] / max(small["worker_mb"], 1e-9)
        print(f"{executor}: {args.large} / {args.small} items, driver peak {driver:.2f}x, worker peak "
              f"{worker:.2f}x (target <= 1.2)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=48)
    ap.add_argument("--frames", type=int, default=48)
    ap.add_argument("--side", type=int, default=160)
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--large", type=int, default=10_000)
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise SystemExit("bench_ray needs Ray, an optional extra: pip install -e '.[ray]'")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as d:
        if not args.skip_speed:
            speed(args, Path(d))
        if not args.skip_memory:
            memory(args, Path(d))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
