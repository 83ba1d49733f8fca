"""CPU time of decoding an item's two samplings of the weights-free set apart (two passes over the file,
as before ``prefetch_main_video``) and together (``sample_file_many``: one pass), side by side.

Run with::

    .venv/bin/python benchmarks/bench_decode_joint.py [--clips small,wan,cosmos] [--repeats 5]

The two samplings are the ones a task of the weights-free set reads: every frame at the evaluation
size (native, or 640 px under the fast profile with its bilinear shrink) as RGB, and RoboJudge App.
B.3's 8 fps 256x256 gray sequence. The clips are bench_real_speed.py's (written there on first use).
Each repeat runs both legs, alternating which goes first; medians of CPU seconds (every thread of the
process), OpenCV on one thread. The outputs of the two legs are compared array by array.

With ``--with-set N`` the whole weights-free set then runs as one runner task
(:func:`robojudge.run.compute_task`, the fast profile) N times per leg, alternating: as it runs now
(one decode) and with ``prefetch_main_video`` replaced by a no-op (each sampling decoded by its first
reader, as before); medians of CPU seconds.

Measured numbers are in docs/performance.md ("The weights-free set on clips shaped like today's
generators").
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_speed import make_clip  # noqa: E402

from robojudge.video._filesample import Sampling, sample_file, sample_file_many  # noqa: E402
from robojudge.video._post import PostProcess  # noqa: E402

PROFILES = {"native": (None, "area"), "fast": (640, "fast")}


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _samplings(profile: str) -> list[Sampling]:
    size, resample = PROFILES[profile]
    return [Sampling(None, None, PostProcess(size, False, resample)),
            Sampling(8.0, None, PostProcess((256, 256), True, "area"))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", default="small,wan,cosmos")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--with-set", type=int, default=0, metavar="N",
                    help="also time the fast-profile set with and without the one-pass decode, N times each")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in args.clips.split(","):
        path = make_clip(name, None)
        for profile in PROFILES:
            times: dict[str, list[float]] = {"apart": [], "together": []}
            for k in range(args.repeats):
                legs = ["apart", "together"] if k % 2 == 0 else ["together", "apart"]
                out = {}
                for leg in legs:
                    todo = _samplings(profile)  # fresh post-processing state each time
                    start = _cpu()
                    if leg == "apart":
                        out[leg] = [sample_file(path, s.fps, s.max_frames, s.post, s.spread) for s in todo]
                    else:
                        out[leg] = sample_file_many(path, todo)
                    times[leg].append(_cpu() - start)
                if not all(np.array_equal(a.frames, b.frames) for a, b in zip(out["apart"], out["together"],
                                                                              strict=True)):
                    raise SystemExit(f"{name} {profile}: the two legs gave different frames")
            apart, together = statistics.median(times["apart"]), statistics.median(times["together"])
            print(f"{path.name} {profile}: apart {apart:.3f} s CPU, together {together:.3f} s "
                  f"({together / apart:.2f}x; {apart - together:.3f} s saved)", flush=True)
        if args.with_set:
            one, two = set_legs(path, args.with_set)
            print(f"{path.name} fast set: one decode {one:.2f} s CPU, two decodes {two:.2f} s "
                  f"({one / two:.3f}x)", flush=True)
    return 0


def set_legs(path: Path, repeats: int) -> tuple[float, float]:
    """Median CPU seconds of the fast-profile set as one task, with the one-pass decode and without."""
    from bench_real_speed import video_only_ids

    import robojudge.run._score as run_score
    from robojudge.metrics import FrameOptions
    from robojudge.run import Task, build_requests, compute_task
    from robojudge.suite import Item

    item = Item(item_id=path.stem, video=str(path))
    task = Task(item, tuple(build_requests(video_only_ids(), frames=FrameOptions(profile="fast"))))
    real = run_score.prefetch_main_video
    compute_task(task)  # warm: imports, OpenCV's first calls
    times: dict[str, list[float]] = {"one": [], "two": []}
    try:
        for k in range(repeats):
            for leg in (("one", "two") if k % 2 == 0 else ("two", "one")):
                run_score.prefetch_main_video = real if leg == "one" else (lambda *_: 0)  # type: ignore[assignment]
                start = _cpu()
                compute_task(task)
                times[leg].append(_cpu() - start)
    finally:
        run_score.prefetch_main_video = real
    return statistics.median(times["one"]), statistics.median(times["two"])


if __name__ == "__main__":
    raise SystemExit(main())
