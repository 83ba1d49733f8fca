"""Benchmark reading frame-folder images that carry alpha: one decode against two.

Run with::

    .venv/bin/python benchmarks/bench_folder_alpha.py [--repeats 15] [--images 8]

A frame folder's sampler needs each image's colours and, for an image with alpha, its lowest alpha
(the transparency warning). It used to decode such an image twice: OpenCV's colour reader
(``read_image``) then Pillow for the alpha (``lowest_alpha``), fully opaque RGBA exports included.
``read_frame`` decodes an 8-bit RGBA or gray+alpha image once, with OpenCV, alpha included.

Images are 1280x720, written once into ``benchmarks/_data/`` (git-ignored): a blurred noise texture
with a gradient (what a renderer's export compresses like), as RGB PNG (the control: no alpha, one
decode either way), RGBA PNG fully opaque, RGBA PNG with a transparent border, and lossless RGBA WebP.

Timed per image, interleaved (two decoders, then one) so machine noise hits both alike; median over
the repeats, and the ratio. Every image is checked to read the same both ways before timing.
Target: RGBA PNG at least 1.5x faster with one decode; the RGB control about 1.0x, and WebP too (Pillow
reads a WebP's alpha in about a millisecond, so its second decode cost little).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from robojudge.video._folder import lowest_alpha, read_frame, read_image

WIDTH, HEIGHT = 1280, 720
DATA = Path(__file__).resolve().parent / "_data" / "folder_alpha_v1"
KINDS = ("rgb.png", "rgba-opaque.png", "rgba-border.png", "rgba-opaque.webp")


def make_images(n: int) -> dict[str, list[Path]]:
    """``n`` images of each kind under ``DATA`` (kept between runs)."""
    out: dict[str, list[Path]] = {}
    rng = np.random.default_rng(7)
    for kind in KINDS:
        folder = DATA / kind.replace(".", "_")
        folder.mkdir(parents=True, exist_ok=True)
        out[kind] = []
        for i in range(n):
            path = folder / f"frame_{i:03d}.{kind.rsplit('.', 1)[1]}"
            out[kind].append(path)
            if path.exists():
                continue
            noise = rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
            ramp = ((np.arange(WIDTH)[None, :] + np.arange(HEIGHT)[:, None] + 9 * i) % 256)[..., None]
            rgb = ((cv2.GaussianBlur(noise, (0, 0), 2.0).astype(np.int16) + ramp) // 2).astype(np.uint8)
            alpha = np.full((HEIGHT, WIDTH, 1), 255, np.uint8)
            if "border" in kind:
                alpha[:40], alpha[-40:] = 0, 0
            image = Image.fromarray(np.concatenate([rgb, alpha], axis=2), "RGBA")
            if kind.startswith("rgb."):
                image = image.convert("RGB")
            image.save(path, **({"lossless": True} if kind.endswith(".webp") else {}))
    return out


def _two(folder: Path, path: Path) -> tuple[np.ndarray, int | None]:
    return read_image(folder, path), lowest_alpha(folder, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--images", type=int, default=8)
    args = parser.parse_args(argv)
    images = make_images(args.images)
    print(f"{WIDTH}x{HEIGHT}, {args.images} images a kind, median of {args.repeats} rounds, ms per image")
    print(f"{'kind':18s} {'two decodes':>12s} {'one decode':>11s} {'ratio':>6s}")
    for kind, paths in images.items():
        for path in paths:  # the same values both ways
            a, b = _two(path.parent, path), read_frame(path.parent, path)
            assert np.array_equal(a[0], b[0]) and a[1] == b[1], (path, a[1], b[1])
        two: list[float] = []
        one: list[float] = []
        for _ in range(args.repeats):
            for path in paths:
                t0 = time.perf_counter()
                _two(path.parent, path)
                t1 = time.perf_counter()
                read_frame(path.parent, path)
                t2 = time.perf_counter()
                two.append(t1 - t0)
                one.append(t2 - t1)
        a_ms, b_ms = statistics.median(two) * 1e3, statistics.median(one) * 1e3
        print(f"{kind:18s} {a_ms:12.1f} {b_ms:11.1f} {a_ms / b_ms:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
