"""cc_photometric's flow estimators on graded damage, and their speed on a 720p clip.

Run with::

    .venv/bin/python benchmarks/bench_cc_ladder.py [--videos 'clips/*.mp4'] [--damages noise,flicker,shake]
        [--speed-pairs 20]

Gradation: each clean clip (``--videos``, or by default two synthetic 128x96 scenes of 24 frames: a
textured square crossing a flat wall and table that stay bit-exact, as a simulator renders them) gets
a ladder of four levels per damage, written as H.264 (crf 18, like the clean level):

* ``noise``: Gaussian noise of sigma 4, 8, 16, 32 levels;
* ``flicker``: a gain of ``1 + U(-a, a)`` per frame, a = 0.05, 0.1, 0.2, 0.4;
* ``shake``: a random translation per frame of up to 1, 2, 4, 8 px (replicated border);
* ``gain``: an exposure ramp of 2, 5, 10, 20% over the whole clip;
* ``blur``: Gaussian blur of sigma 0.75, 1.5, 3, 6 px.

Every candidate (a ``cc_photometric`` config, below) scores every rung. Reported per candidate and
damage: the mean over clips of Spearman's rho between the level (0-4) and the negated value (+1: each
level scores lower than the one before), how many clips score the clean rung best, and the share of the
clean-to-level-4 drop already spent at level 1 (median over clips; 0.25 is an even grade, near 1 means the
mildest damage costs as much as the worst).

Speed (``--speed-pairs``, 0 skips it): a synthetic 1280x720 clip of 10 s at 30 fps (a textured square
crossing a textured background) is made in memory, and each candidate's flows and end-point errors
(both directions, OpenCV on one thread) are timed on its first ``--speed-pairs`` pairs; the time for
all 299 pairs is that scaled up. Absolute times depend on the machine and its load; read the ratios.

Measured numbers are in docs/metrics.md ("What DIS costs `cc_photometric`: graded damage").
"""

from __future__ import annotations

import argparse
import glob
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from scipy.stats import spearmanr

from robojudge.metrics import functional as F
from robojudge.metrics import get_metric
from robojudge.metrics._frames import native_rgb
from robojudge.suite import Item
from robojudge.video import write_video

CANDIDATES = {
    "farneback": {"estimator": "farneback"},
    "dis": {"estimator": "dis"},
}
LEVELS = {
    "noise": (4, 8, 16, 32),
    "flicker": (0.05, 0.1, 0.2, 0.4),
    "shake": (1, 2, 4, 8),
    "gain": (0.02, 0.05, 0.1, 0.2),
    "blur": (0.75, 1.5, 3, 6),
}


def synthetic(seed: int, n: int = 24, h: int = 96, w: int = 128) -> np.ndarray:
    """A textured square crossing a flat, bit-exact wall and table, RGB ``(n, h, w, 3)``."""
    rng = np.random.default_rng(seed)
    patch = cv2.GaussianBlur(rng.integers(0, 256, (24, 24)).astype(np.float32), (0, 0), 1.5)
    patch = cv2.normalize(patch, None, 0, 255, cv2.NORM_MINMAX)
    frames = np.zeros((n, h, w, 3), np.uint8)
    frames[:, :, :] = (90, 150, 110)
    frames[:, h * 5 // 8:] = (220, 220, 215)
    for t in range(n):
        x = 10 + 3 * t + seed
        frames[t, 30:54, x:x + 24] = patch[..., None].astype(np.uint8)
    return frames


def damaged(frames: np.ndarray, damage: str, level: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    f = frames.astype(np.float32)
    if damage == "noise":
        f = f + rng.normal(0, level, f.shape)
    elif damage == "flicker":
        f = f * (1 + rng.uniform(-level, level, len(f)))[:, None, None, None]
    elif damage == "gain":
        f = f * (1 + level * np.arange(len(f)) / (len(f) - 1))[:, None, None, None]
    elif damage == "blur":
        f = np.stack([cv2.GaussianBlur(x, (0, 0), level) for x in f])
    elif damage == "shake":
        h, w = f.shape[1:3]
        moves = rng.uniform(-level, level, (len(f), 2))
        shifts = [np.float32([[1, 0, dx], [0, 1, dy]]) for dx, dy in moves]
        f = np.stack([cv2.warpAffine(x, m, (w, h), borderMode=cv2.BORDER_REPLICATE)
                      for x, m in zip(f, shifts, strict=True)])
    return np.clip(f, 0, 255).astype(np.uint8)


def gradation(clips: list[np.ndarray], damages: list[str], out: Path) -> None:
    spec = get_metric("cc_photometric")
    configs = {name: spec.make_config(cfg) for name, cfg in CANDIDATES.items()}
    values: dict[tuple[str, str, int], list[float]] = {}
    for c, clean in enumerate(clips):
        for damage in damages:
            for lvl in range(5):
                frames = clean if lvl == 0 else damaged(clean, damage, LEVELS[damage][lvl - 1], 100 * c + lvl)
                path = out / f"clip{c}_{damage}{lvl}.mp4"
                write_video(path, frames, fps=10.0)
                item = Item(item_id=path.stem, video=str(path))
                for name, cfg in configs.items():
                    values.setdefault((name, damage, c), []).append(spec.compute(item, cfg).value)
    print(f"{'candidate':22s}" + "".join(f"{d:>24s}" for d in damages))
    print(" " * 22 + "".join(f"{'rho best lvl1':>24s}" for _ in damages))
    for name in CANDIDATES:
        line = f"{name:22s}"
        for damage in damages:
            rhos, best, first = [], 0, []
            for c in range(len(clips)):
                v = np.array(values[(name, damage, c)])
                rhos.append(spearmanr(range(5), -v).statistic if np.ptp(v) > 0 else np.nan)
                best += int(v[0] >= v[1:].max())
                if v[0] != v[4]:
                    first.append((v[0] - v[1]) / (v[0] - v[4]))
            line += f"{np.nanmean(rhos):+9.2f} {best:3d}/{len(clips)} {np.median(first):8.2f}"
        print(line, flush=True)


def speed(pairs: int, seconds: float = 10.0, fps: int = 30) -> None:
    cv2.setNumThreads(1)
    rng = np.random.default_rng(0)
    n = int(seconds * fps)
    background = cv2.GaussianBlur(rng.integers(0, 256, (720, 1400)).astype(np.float32), (0, 0), 2.0)
    background = cv2.normalize(background, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    square = background[:240, :240][::-1].copy()
    frames = np.empty((pairs + 1, 720, 1280), np.uint8)
    for t in range(pairs + 1):
        frames[t] = background[:, t // 3:t // 3 + 1280]
        frames[t, 200:440, 100 + 4 * t:340 + 4 * t] = square
    print(f"\n1280x720, {seconds:g} s at {fps} fps ({n - 1} pairs); timed on {pairs} pairs, one thread")
    spec = get_metric("cc_photometric")
    base = None
    for name, cfg in CANDIDATES.items():
        settings = spec.make_config(cfg)
        start = time.perf_counter()
        F.flow_steps(frames, settings, crop=30, warp=False)
        took = (time.perf_counter() - start) * (n - 1) / pairs
        base = base or took
        print(f"{name:22s} {took:8.1f} s for the clip  {took / base:5.2f}x farneback", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", default="", help="glob of clean clips (default: two synthetic scenes)")
    parser.add_argument("--damages", default="noise,flicker,shake,gain,blur")
    parser.add_argument("--speed-pairs", type=int, default=20, help="720p pairs timed (0: no timing)")
    args = parser.parse_args()
    spec = get_metric("cc_photometric")
    if args.videos:
        clips = [native_rgb(Item(item_id=Path(p).stem, video=p), spec.make_config())[0]
                 for p in sorted(glob.glob(args.videos))]
    else:
        clips = [synthetic(0), synthetic(7)]
    with tempfile.TemporaryDirectory() as tmp:
        gradation(clips, args.damages.split(","), Path(tmp))
    if args.speed_pairs:
        speed(args.speed_pairs)


if __name__ == "__main__":
    main()
