"""Benchmark ``F.ssim`` (OpenCV filters, what ``iq1_ssim`` runs per frame pair) against scikit-image.

Run with::

    .venv/bin/python benchmarks/bench_ssim.py [--size 1280x720] [--pairs 8] [--repeats 5] [--gray]

Frames: ``--pairs`` pairs of ``--size`` RGB frames made in memory (nothing is written): a smooth textured
background with fine noise, and a textured block moved by a few pixels between the two frames of a pair, so
SSIM sees flat areas, edges and motion. Baseline: ``skimage.metrics.structural_similarity`` with the
settings ``F.ssim`` reproduces (11x11 Gaussian, sigma 1.5, population covariance, data range 255, channels
averaged), the code ``iq1_ssim`` ran before.

Legs alternate (machine noise hits both alike); each leg scores every pair once; median of ``--repeats``
of CPU seconds (``time.process_time``: OpenCV may use more than one thread, so wall time would flatter
it) per pair. Prints both, their ratio, and the largest difference of the values (must stay under 1e-6).

Measured numbers are in docs/performance.md ("iq1_ssim").
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import cv2
import numpy as np

from robojudge.metrics.functional import ssim


def _pairs(width: int, height: int, n: int, gray: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    coarse = rng.integers(0, 256, (height // 16, width // 16, 3)).astype(np.uint8)
    base = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC).astype(np.int16)
    block = rng.integers(0, 256, (height // 4, width // 6, 3)).astype(np.int16)
    out = []
    for k in range(n):
        pair = []
        for shift in (0, 3 + k % 4):
            f = base + rng.integers(-4, 5, base.shape)  # codec-like noise, new in every frame
            y, x = height // 3, width // 4 + 5 * k + shift
            f[y:y + block.shape[0], x:x + block.shape[1]] = block
            f8 = np.clip(f, 0, 255).astype(np.uint8)
            pair.append(cv2.cvtColor(f8, cv2.COLOR_RGB2GRAY) if gray else f8)
        out.append((pair[1], pair[0]))
    return out


def _skimage(gen: np.ndarray, ref: np.ndarray) -> float:
    from skimage.metrics import structural_similarity

    return float(structural_similarity(ref, gen, data_range=255, channel_axis=-1 if ref.ndim == 3 else None,
                                       gaussian_weights=True, sigma=1.5, use_sample_covariance=False))


def _leg(fn: Callable[[np.ndarray, np.ndarray], float], pairs: list[tuple[np.ndarray, np.ndarray]]
         ) -> tuple[float, list[float]]:
    start = time.process_time()
    values = [fn(g, r) for g, r in pairs]
    return (time.process_time() - start) / len(pairs), values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1280x720", help="WIDTHxHEIGHT of the frames")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--gray", action="store_true", help="gray frames (iq1_ssim's gray config)")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    pairs = _pairs(width, height, args.pairs, args.gray)
    legs: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {"scikit-image": _skimage, "F.ssim": ssim}
    for fn in legs.values():  # warm-up: imports, OpenCV's first call
        fn(*pairs[0])
    times: dict[str, list[float]] = {name: [] for name in legs}
    values: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        for name, fn in legs.items():
            t, values[name] = _leg(fn, pairs)
            times[name].append(t)
    base, new = (statistics.median(times[n]) for n in legs)
    diff = max(abs(a - b) for a, b in zip(values["scikit-image"], values["F.ssim"], strict=True))
    kind = "gray" if args.gray else "RGB"
    print(f"{width}x{height} {kind}, {args.pairs} pairs, median of {args.repeats}, CPU per pair "
          f"(OpenCV threads: {cv2.getNumThreads()})")
    print(f"  scikit-image  {1000 * base:8.1f} ms")
    print(f"  F.ssim        {1000 * new:8.1f} ms")
    print(f"  ratio         {base / new:8.2f}x   largest value difference {diff:.2e}")


if __name__ == "__main__":
    main()
