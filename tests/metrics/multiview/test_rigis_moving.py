"""S_move: the moving parts of each view must move, along their rays, in the other views too.

The synthetic rig's square slides over the table; a view that draws it elsewhere (an arm shown in
another pose, an object in one view only) moves where the others' rays find nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _mv_rig import CAMERAS, clean_views, instants, render, scene_textures

from robojudge.metrics.multiview import RigisParams, analyse_rig, rigis, rigis_geo
from robojudge.metrics.multiview._moving import moving_agreement, moving_masks
from robojudge.metrics.multiview._rigis import rig_motion

N = 8
P = RigisParams(max_features=400)


@pytest.fixture(scope="module")
def views() -> dict[str, np.ndarray]:
    return clean_views()


def _displaced(views: dict[str, np.ndarray], dy: int) -> dict[str, np.ndarray]:
    """View ``a`` shows the square ``dy`` texture pixels (1/512 m each) further down the table."""
    return {**views, "a": render(CAMERAS["a"], scene_textures((0, dy)))}


def test_clean_rig_moves_consistently(views):
    score, details = moving_agreement(views, CAMERAS)
    assert score >= 0.95, details
    assert all(v["moving_steps"] >= 10 for v in details["views"].values())


def test_square_drawn_elsewhere_in_one_view_is_flagged(views):
    clean, _ = moving_agreement(views, CAMERAS)
    scores = [moving_agreement(_displaced(views, dy), CAMERAS)[0] for dy in (60, 150)]
    assert scores[0] < clean - 0.2
    assert scores[1] < 0.5


def test_rigis_geo_and_rigis_drop_for_a_displaced_moving_part(views):
    moved = _displaced(views, 150)
    got = {}
    for name, v in (("clean", views), ("moved", moved)):
        frames = instants(v, N)
        m = analyse_rig(frames, CAMERAS, P)  # shared by every call below
        got[name] = (rigis_geo(frames, CAMERAS, P, analysis=m, timing=v),
                     rigis_geo(frames, CAMERAS, P.model_copy(update={"move": False}), analysis=m, timing=v),
                     rigis(frames, CAMERAS, P, analysis=m, timing=v)[0])
    (geo_clean, d_clean), _, rig_clean = got["clean"]
    (geo, d), (off, d_off), rig = got["moved"]
    assert d_clean["move"] >= 0.95
    assert d["move"] < 0.5
    assert geo < geo_clean - 0.3
    assert rig < rig_clean - 0.15
    # Without S_move (the code before it), the displaced view passes as clean: the square's few
    # keypoints are outweighed by the table's.
    assert "move" not in d_off and off == pytest.approx(d_off["epi"] * d_off["sync"])
    assert off > geo_clean - 0.05


def test_masks_ignore_noise_and_still_views(views):
    still = np.repeat(views["a"][:1], 6, axis=0)
    noisy = np.clip(still.astype(int) + np.random.default_rng(0).integers(-5, 6, still.shape), 0, 255)
    assert not moving_masks(noisy.astype(np.uint8)[..., 0], 12.0, 4).any()
    score, d = moving_agreement({"a": still, "b": still}, {k: CAMERAS[k] for k in "ab"})
    assert math.isnan(score) and "no view moves" in d["unscored_reason"]


def test_bad_input_names_the_view(views):
    with pytest.raises(ValueError, match="'b'"):
        moving_agreement({"a": views["a"], "b": views["b"].astype(np.float32)}, CAMERAS)
    with pytest.raises(ValueError, match="not synchronised"):
        moving_agreement({"a": views["a"], "b": views["b"][:-2]}, CAMERAS)
    with pytest.raises(ValueError, match="move_far"):
        rig_motion(views, CAMERAS, P.model_copy(update={"move_near": 2.0, "move_far": 1.0}))
