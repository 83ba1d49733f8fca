"""Frames too short for their width: OpenCV's DIS returned NaN flow, raised, or crashed the process.

A 200x12 clip made ``robojudge score`` die with a segmentation fault (exit 139, nothing printed, the
other items' results after it never computed); a 200x8 one gave ``mq_flow_score`` NaN without a reason
and ``mq_dynamic_degree`` 0.0 from NaN flows. Such frames are now unscored, with the reason, before
DIS runs (``DIS_MIN_SIDE``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from robojudge.metrics import Unmeasurable
from robojudge.metrics import functional as F
from robojudge.metrics.functional._flow import DIS_MIN_SIDE
from robojudge.store import ResultStore
from robojudge.video import write_video


def _textured(height: int, width: int, frames: int = 10) -> np.ndarray:
    rng = np.random.default_rng(7)
    canvas = cv2.GaussianBlur(rng.integers(0, 256, (height, width + frames, 3), dtype=np.uint8), (5, 5), 1.5)
    return np.stack([canvas[:, t:t + width] for t in range(frames)])


def test_score_survives_and_leaves_short_wide_clips_unscored(tmp_path: Path) -> None:
    lines = []
    for name, (h, w) in {"short": (12, 200), "shorter": (8, 200), "fine": (40, 200)}.items():
        write_video(tmp_path / f"{name}.mp4", _textured(h, w), fps=8)
        lines.append(json.dumps({"item_id": name, "video": f"{name}.mp4"}))
    (tmp_path / "suite.jsonl").write_text("\n".join(lines) + "\n")
    metrics = "mq_flow_score,mq_dynamic_degree,cc_photometric"
    run = subprocess.run([sys.executable, "-m", "robojudge", "score", "suite.jsonl", "-m", metrics,
                          "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "200"})
    assert run.returncode == 0, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])  # was -11
    assert "9 tasks: 3 scored, 6 unscored (nothing to measure), 0 failed" in run.stdout
    with ResultStore(tmp_path / "runs" / "suite" / "results.sqlite", read_only=True) as store:
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    for item in ("short", "shorter"):
        for metric in metrics.split(","):
            row = rows[(item, metric)]
            assert row.status == "ok" and row.value is not None and math.isnan(row.value), (item, metric)
            reason = (row.details or {})["unscored_reason"]
            if metric == "cc_photometric":  # it refuses frames under 16 px on a side before its flow
                assert f"frames of 200x{12 if item == 'short' else 8} are too small" in reason
            else:
                assert "too small for DIS optical flow" in reason
    assert all(not math.isnan(rows[("fine", m)].value or math.nan) for m in metrics.split(","))


@pytest.mark.parametrize("preset", sorted(DIS_MIN_SIDE))
def test_each_preset_refuses_below_its_bound_and_measures_at_it(preset: str) -> None:
    bound = DIS_MIN_SIDE[preset]
    settings = F.FlowSettings(estimator="dis", dis_preset=preset)
    with pytest.raises(Unmeasurable, match=rf"frames of 200x{bound - 1} are too small .*{preset}"):
        F.flow_function(settings, (2, bound - 1, 200))
    gray = _textured(bound, 200, 2)[..., 0]
    flow = F.flow_function(settings, gray.shape)(np.ascontiguousarray(gray[0]), np.ascontiguousarray(gray[1]))
    assert np.isfinite(flow).all()
    # A small square frame is no problem for DIS and is not refused by the auto choice (medium).
    assert F.flow_function(F.NATIVE_FLOW, (2, 16, 16)) is not None


def test_a_frame_smaller_than_the_crop_is_unmeasurable() -> None:
    flow = np.zeros((20, 40, 2), np.float32)
    with pytest.raises(Unmeasurable, match="frames of 40x20 are too small for a 30px crop"):
        F.forward_backward_epe(flow, flow, crop=30)
