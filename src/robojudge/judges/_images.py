"""Frames as JPEG data URLs, and uniform thinning to a per-request image cap."""

from __future__ import annotations

import numpy as np

from robojudge.judges._backend import Frames
from robojudge.video import encode_jpeg_data_urls


def thin_indices(n: int, cap: int) -> list[int]:
    """``cap`` indices spread uniformly over ``range(n)``, first and last kept (all when ``n <= cap``)."""
    if n <= cap:
        return list(range(n))
    if cap == 1:
        return [0]
    picks = np.linspace(0, n - 1, cap).round().astype(int)
    return sorted(set(int(i) for i in picks))


def jpeg_data_urls(frames: Frames, quality: int) -> list[str]:
    """Every frame as a ``data:image/jpeg;base64,...`` URL; cached on ``frames`` per quality.

    Raises:
        ValueError: The frames carry no pixels and were not encoded at ``quality``.
    """
    key = f"jpeg:{quality}"
    cached = frames.encoded.get(key)
    if cached is None:
        if frames.arrays is None:
            have = ", ".join(sorted(frames.encoded)) or "none"
            raise ValueError(
                f"frames were encoded without pixels ({have}); JPEG quality {quality} is missing"
            )
        cached = frames.encoded[key] = encode_jpeg_data_urls(frames.arrays, quality)
    return list(cached)
