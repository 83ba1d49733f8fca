"""Uniform thinning of a request's frames to a per-request image cap."""

from __future__ import annotations

import numpy as np


def thin_indices(n: int, cap: int) -> list[int]:
    """``cap`` indices spread uniformly over ``range(n)``, first and last kept (all when ``n <= cap``)."""
    if n <= cap:
        return list(range(n))
    if cap == 1:
        return [0]
    picks = np.linspace(0, n - 1, cap).round().astype(int)
    return sorted(set(int(i) for i in picks))
