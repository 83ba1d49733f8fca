"""Frames as JPEG data URLs, and uniform thinning to a per-request image cap."""

from __future__ import annotations

import base64

import cv2
import numpy as np

from robojudge.judges._backend import Frames


def thin_indices(n: int, cap: int) -> list[int]:
    """``cap`` indices spread uniformly over ``range(n)``, first and last kept (all when ``n <= cap``)."""
    if n <= cap:
        return list(range(n))
    if cap == 1:
        return [0]
    picks = np.linspace(0, n - 1, cap).round().astype(int)
    return sorted(set(int(i) for i in picks))


def jpeg_data_urls(frames: Frames, quality: int) -> list[str]:
    """Every frame as a ``data:image/jpeg;base64,...`` URL; cached on ``frames`` per quality."""
    key = f"jpeg:{quality}"
    cached = frames.encoded.get(key)
    if cached is None:
        cached = []
        for rgb in frames.arrays:
            ok, buf = cv2.imencode(
                ".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality]
            )
            if not ok:  # pragma: no cover - OpenCV only fails on invalid arrays
                raise ValueError("JPEG encoding failed")
            cached.append("data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii"))
        frames.encoded[key] = cached
    return list(cached)
