"""The chance-level baseline: a seeded uniform draw per item (RoboJudge App. B.3, Uniform Random)."""

from __future__ import annotations

import hashlib

import numpy as np


def uniform_score(key: str, axis: str = "pa", seed: int = 0) -> int:
    """An integer in 1..5, uniform, fixed by ``(seed, axis, key)`` so reruns and workers agree.

    ``key`` is the item id; a different ``axis`` or ``seed`` draws independently.

    >>> uniform_score("ep1") == uniform_score("ep1") and 1 <= uniform_score("ep1") <= 5
    True
    """
    digest = hashlib.sha256(f"{seed}\0{axis}\0{key}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    return int(rng.integers(1, 6))
