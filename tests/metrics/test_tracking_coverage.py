"""Trajectory and localization metrics when the generated video and its reference differ in length."""

import math

import numpy as np
import pytest
from _scene import FPS, clean_frames, state_arrays

from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import write_video

TA = ("ta_hsd", "ta_ndtw", "ta_dyn")
OL = ("ol_average_precision", "ol_average_recall")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("coverage")
    clean = clean_frames()
    for name, frames in (("full", clean), ("half", clean[:8]), ("two", clean[:2])):
        write_video(root / f"{name}.mp4", frames, fps=FPS)
    np.savez(root / "state.npz", **state_arrays())
    return root


def _item(root, video, reference):
    return Item(item_id=video, video=str(root / f"{video}.mp4"),
                reference_video=str(root / f"{reference}.mp4"), state=str(root / "state.npz"))


def test_localization_counts_frames_the_video_does_not_reach_as_undetected(folder):
    full = {m: get_metric(m).compute(_item(folder, "full", "full")) for m in OL}
    half = {m: get_metric(m).compute(_item(folder, "half", "full")) for m in OL}
    assert full["ol_average_recall"].value == 1.0  # the video is its own reference
    # 8 of the reference's 16 frames have no generated frame: at most half of its boxes can be found
    # (the 8 it has are found, up to codec noise). Compared over the common 8 frames, as before, the
    # half video scored about 1 too.
    assert 0.45 < half["ol_average_recall"].value <= 0.5
    assert half["ol_average_precision"].value < 0.6
    assert half["ol_average_recall"].details["objects"]["object"]["frames_with_truth"] == 16
    d = half["ol_average_recall"].details
    assert (d["frames"], d["frames_expected"], d["frames_missing"], d["frames_unmatched"]) == (8, 16, 8, 0)


def test_trajectories_cut_short_are_unscored_unless_allowed(folder):
    for m in TA:
        score = get_metric(m).compute(_item(folder, "half", "full"))
        assert not score.scored and score.details == {
            "unscored_reason": "the generated video has 8 frames, fewer than 0.9 of the reference's 16: its "
            "trajectory ends early", "frames": 8, "reference_frames": 16}
    spec = get_metric("ta_hsd")
    allowed = spec.compute(_item(folder, "half", "full"), spec.make_config({"min_generated_coverage": 0.5}))
    assert allowed.scored and allowed.value < 1.0  # the half path lies 0.3 of the frame from the end


def test_a_short_reference_or_a_one_step_clip_is_unscored(folder):
    for m in (*TA, *OL):
        score = get_metric(m).compute(_item(folder, "full", "half"))
        assert not score.scored and score.details["reference_frames"] == 8 and score.details["frames"] == 16
        assert score.details["unscored_reason"].startswith("the reference has 8 frames, fewer than 0.9")
    # Two frames each: HSD and nDTW compare two points, DYN needs an acceleration (it raised ValueError).
    assert get_metric("ta_hsd").compute(_item(folder, "two", "two")).value == 1.0
    dyn = get_metric("ta_dyn").compute(_item(folder, "two", "two"))
    assert math.isnan(dyn.value)
    assert dyn.details["unscored_reason"] == "DYN needs tracks of at least 3 frames, got 2 and 2"


@pytest.mark.parametrize(("ng", "nr", "reason"), [
    (1, 0, "the video gave 1 frame and the reference 0 frames; tracks need at least 2 frames"),
    (0, 1, "the video gave 0 frames and the reference 1 frame; tracks need at least 2 frames"),
    (1, 16, "the video gave 1 frame; tracks need at least 2 frames"),
    (16, 0, "the reference gave 0 frames; tracks need at least 2 frames"),
])
def test_a_clip_without_two_frames_is_named_with_its_own_count(folder, monkeypatch, ng, nr, reason):
    from types import SimpleNamespace

    from robojudge.metrics.robophys import tracking

    def tracks(n):
        return SimpleNamespace(points=np.zeros((n, 1, 2)))

    # Whatever the tracker returns for such clips (a real decode cannot give 0 frames of one video and
    # 1 of the other on demand): the message must name each short clip with its own frame count.
    monkeypatch.setattr(tracking, "_cached_tracks",
                        lambda key: tracking.ItemTracks(tracks(ng), tracks(nr), "tracked_reference", {}))
    spec = get_metric("ta_hsd")
    score = spec.compute(_item(folder, "full", "full"), spec.make_config({"truth": "tracked_reference"}))
    assert not score.scored
    assert score.details == {"unscored_reason": reason, "frames": ng, "reference_frames": nr}
