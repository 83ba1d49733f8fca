"""Benchmark ``sample_frames`` against a full FFmpeg decode and a naive PyAV loop.

Run with::

    .venv/bin/python benchmarks/bench_sample_frames.py [--repeats 9]

The clip is 81 frames of 1280x720 H.264 at 16 fps (5.06 s, the output shape of common
video-generation models), made of a blurred noise texture that pans diagonally over a moving
gradient, so the encoder and decoder do real work. It is generated once into
``benchmarks/_data/`` (git-ignored). At 4 fps the sampler picks frames 0, 4, ..., 80 (21 frames), so
no thinning happens and 21 of 81 frames are converted to RGB.

Timed, interleaved round-robin so machine noise hits every method alike, median of the repeats:

(a) ``ffmpeg -v error -threads 0 -i clip.mp4 -f null -``: decodes every frame, no conversion
    (skipped with a message if the ``ffmpeg`` executable is not installed);
(b) ``sample_frames(clip, fps=4, max_frames=32)``;
(c) a naive loop: decode every frame to an RGB ndarray with PyAV defaults, then pick every 4th;
(c') the same naive loop with ``thread_type = "AUTO"``, for reference;
(d) OpenCV ``VideoCapture``: ``grab()`` every frame, ``retrieve()`` every 4th, for reference.

Targets: (b) time <= 1.25x (a) time, and (c) time >= 2x (b) time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import av
import cv2
import numpy as np

from robojudge.video import sample_frames, write_video

N_FRAMES, WIDTH, HEIGHT, FPS = 81, 1280, 720, 16
DATA = Path(__file__).resolve().parent / "_data"
CLIP = DATA / f"bench_{N_FRAMES}f_{WIDTH}x{HEIGHT}_{FPS}fps_v1.mp4"


def make_clip(path: Path) -> None:
    """Write the textured, moving benchmark clip to ``path``."""
    rng = np.random.default_rng(1234)
    noise = rng.integers(0, 256, (HEIGHT + 4 * N_FRAMES, WIDTH + 6 * N_FRAMES, 3), dtype=np.uint8)
    canvas = cv2.GaussianBlur(noise, (0, 0), 1.5)
    ramp = (np.arange(WIDTH)[None, :] + np.arange(HEIGHT)[:, None] // 3).astype(np.int16)
    frames = np.empty((N_FRAMES, HEIGHT, WIDTH, 3), dtype=np.uint8)
    for i in range(N_FRAMES):
        texture = canvas[4 * i : 4 * i + HEIGHT, 6 * i : 6 * i + WIDTH].astype(np.int16)
        gradient = ((ramp + 9 * i) % 256 // 2)[..., None]
        frames[i] = np.clip(texture // 2 + gradient, 0, 255).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, frames, fps=FPS)


def run_ffmpeg() -> None:
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-threads", "0", "-i", str(CLIP), "-f", "null", "-"]
    subprocess.run(cmd, check=True)


def run_sample() -> None:
    result = sample_frames(CLIP, fps=4, max_frames=32)
    assert len(result) == 21, len(result)


def _naive(thread_type: str | None) -> list[np.ndarray]:
    with av.open(str(CLIP)) as container:
        stream = container.streams.video[0]
        if thread_type:
            stream.thread_type = thread_type
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]
    return frames[::4]


def run_naive() -> None:
    assert len(_naive(None)) == 21


def run_naive_auto() -> None:
    assert len(_naive("AUTO")) == 21


def run_opencv() -> None:
    cap = cv2.VideoCapture(str(CLIP))
    kept, index = 0, 0
    while cap.grab():
        if index % 4 == 0:
            ok, _ = cap.retrieve()
            kept += int(ok)
        index += 1
    cap.release()
    assert kept == 21, kept


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    if not CLIP.exists():
        print(f"generating {CLIP} ...", flush=True)
        make_clip(CLIP)

    methods: dict[str, Callable[[], None]] = {}
    if shutil.which("ffmpeg"):
        methods["(a) ffmpeg -threads 0 -f null"] = run_ffmpeg
    else:
        print("ffmpeg executable not found: skipping (a). Install it with `apt-get install -y ffmpeg`.")
    methods["(b) sample_frames fps=4 max=32"] = run_sample
    methods["(c) naive PyAV decode-all-to-RGB"] = run_naive
    methods["(c') naive, thread_type=AUTO"] = run_naive_auto
    methods["(d) OpenCV grab/retrieve"] = run_opencv

    for fn in methods.values():  # warm-up: page cache, lazy imports
        fn()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, fn in methods.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)

    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"clip: {CLIP.name} ({N_FRAMES} frames), median of {args.repeats} interleaved repeats")
    for name, seconds in med.items():
        print(f"  {name:34s} {seconds * 1000:8.1f} ms  {N_FRAMES / seconds:7.1f} source frames/s")
    b = med["(b) sample_frames fps=4 max=32"]
    c = med["(c) naive PyAV decode-all-to-RGB"]
    if "(a) ffmpeg -threads 0 -f null" in med:
        a = med["(a) ffmpeg -threads 0 -f null"]
        print(f"  (b)/(a) time ratio: {b / a:.2f}  (target <= 1.25)")
    print(f"  (c)/(b) time ratio: {c / b:.2f}  (target >= 2)")
    c_auto = med["(c') naive, thread_type=AUTO"]
    print(f"  (c')/(b) time ratio: {c_auto / b:.2f}  (for reference)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
