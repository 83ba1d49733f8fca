"""RIGIS where OpenCV's essential-matrix fit fails: OpenCV 5.1's five-point solver raises an assertion on
some near-degenerate samples (``solvePoly``: leading coefficient near 0) where 5.0 returns a model; seen
on 2 of 72 rollouts of docs/rigis_validation.md, whose RIGIS rows then became "metric raised" errors.
A fit that raises now counts as no model found, as a fit that returns none does."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from _mv_rig import CAMERAS, clean_views

from robojudge.metrics import get_metric
from robojudge.metrics.multiview import _rigis
from robojudge.suite import Item
from robojudge.video import frame_cache, write_video

CONFIG = {"instants": 4, "max_features": 300}


def _solver_error(*args: object, **kwargs: object) -> None:
    raise cv2.error("OpenCV(5.1.0) mathfuncs.cpp:1601: error: (-215:Assertion failed) in function "
                    "'solvePoly'")


def _matches() -> tuple[np.ndarray, np.ndarray]:
    """Normalised image points of 60 random scene points seen from two cameras 20 cm apart."""
    rng = np.random.default_rng(0)
    pts = rng.uniform([-1, -1, 4], [1, 1, 6], (60, 3))
    r, _ = cv2.Rodrigues(np.array([0.0, 0.05, 0.0]))
    na = pts[:, :2] / pts[:, 2:]
    cam_b = pts @ r.T + np.array([0.2, 0.0, 0.0])
    nb = cam_b[:, :2] / cam_b[:, 2:]
    return na.astype(np.float64), nb.astype(np.float64)


def test_a_fit_that_raises_counts_as_none_found(monkeypatch: pytest.MonkeyPatch) -> None:
    na, nb = _matches()
    cands, inliers = _rigis._pose_hypotheses(na, nb, 1e-3)
    assert inliers >= 50 and cands  # the fit works on these matches
    monkeypatch.setattr(_rigis.cv2, "findEssentialMat", _solver_error)
    cands_h, inliers_h = _rigis._pose_hypotheses(na, nb, 1e-3)
    assert inliers_h == 0  # no essential matrix, no inliers
    assert len(cands_h) < len(cands)  # the homography's decompositions only
    # the same as a fit that returns no model with a mask of leftover bytes
    monkeypatch.setattr(_rigis.cv2, "findEssentialMat",
                        lambda *a, **k: (None, np.full((len(na), 1), 208, np.uint8)))
    assert _rigis._pose_hypotheses(na, nb, 1e-3)[1] == 0


def test_rigis_scores_an_item_whose_essential_fits_all_raise(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    views = clean_views()
    for name, frames in views.items():
        write_video(tmp_path / name, frames, fps=10)
    (tmp_path / "calib.json").write_text(json.dumps({n: c.model_dump() for n, c in CAMERAS.items()}))
    item = Item(item_id="r", video=str(tmp_path / "a"), views={n: str(tmp_path / n) for n in views},
                calibration=str(tmp_path / "calib.json"))
    monkeypatch.setattr(_rigis.cv2, "findEssentialMat", _solver_error)
    with frame_cache():
        for metric in ("rigis", "rigis_geo", "rigis_pose"):
            spec = get_metric(metric)
            score = spec.compute(item, spec.make_config(CONFIG))  # raised cv2.error before
            assert score.value is not None and 0.0 <= score.value <= 1.0, metric
