"""scripts/kiva_scales_check.py: versions 3 and 4 judged on made-up reads, and its paired bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _scripts import load_script

ks = load_script("kiva_scales_check")


def _read(n: int, stretch: tuple[int, int] | None, seed: int) -> dict:
    """A read of a 4-keypoint arm: link 0-1 foreshortens (swings in depth), links 1-2 and 2-3 are stiff;
    ``stretch`` grows link 2-3 smoothly by 12% over those frames."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    a = 0.4 * np.sin(0.2 * t + seed)
    pts = np.zeros((n, 4, 2))
    pts[:, 0] = [50.0, 50.0]
    pts[:, 1] = pts[:, 0] + np.stack([25 * (0.7 + 0.3 * np.cos(0.3 * t + seed)), np.zeros(n)], -1)
    pts[:, 2] = pts[:, 1] + 30 * np.stack([np.cos(a), np.sin(a)], -1)
    scale = np.ones(n)
    if stretch is not None:
        lo, hi = stretch
        scale[lo:hi] = 1.0 + 0.06 * (1 - np.cos(np.linspace(0.0, np.pi, hi - lo)))  # no kink: no jerk
        scale[hi:] = 1.12
    pts[:, 3] = pts[:, 2] + (30 * np.stack([np.cos(a + 0.5), np.sin(a + 0.5)], -1)) * scale[:, None]
    pts += rng.normal(0, 0.05, pts.shape)
    vis = np.ones((n, 4), bool)
    return {"pos": pts, "vis": vis, "held": np.zeros(n, bool), "fps": 10.0, "w": 100, "h": 100,
            "true_pos": pts, "true_vis": vis}


def test_version_4_flags_a_stiff_link_stretch_that_version_3_leaves_under_the_foreshortening_cut():
    refs = {f"r{i}": _read(48, None, i) for i in range(8)}
    items = {}
    for i in range(6):
        bad = i % 2 == 1
        planted = [{"start": s, "stop": s + 16, "verdict": "Bad" if bad and s == 16 else "Good"}
                   for s in (0, 16, 32)]
        read = _read(48, (16, 32) if bad else None, 100 + i)
        items[f"c{i}-x"] = {**read, "clip": f"c{i}", "planted": planted}
    data = {"links": [(0, 1), (1, 2), (2, 3)], "fingers": [], "refs": refs, "items": items}
    rows = ks.judged_rows(data, true=False)
    assert len(rows) == 18
    bad = [r for r in rows if r[3] == "Bad"]
    assert len(bad) == 3
    good = [r for r in rows if r[3] == "Good"]
    # Version 4 flags every stretch, far above every clean segment ...
    assert min(r[1] for r in bad) > 10 > 1.5 > max(r[1] for r in good)
    # ... where version 3, whose cut the foreshortening link sets, does not tell them apart.
    assert min(r[2] for r in bad) < max(r[2] for r in good) < 1.5
    d, lo, hi, share = ks.bootstrap({"arm": rows}, draws=50, seed=0)
    assert d > 0.3 and lo <= d <= hi and 0 <= share <= 1
    same = [(c, v3, v3, verdict) for c, _, v3, verdict in rows]
    assert ks.bootstrap({"arm": same}, draws=20, seed=0)[:3] == pytest.approx((0.0, 0.0, 0.0))
    assert not math.isnan(ks.rho([r[1] for r in rows], [0 if r[3] == "Good" else 2 for r in rows]))
