"""Which view of a state file the trajectory and localization metrics read: the one the video shows.

A state file holds every camera of the rollout (``view_names``, docs/sim_suite.md). The metrics read
view 0 whatever the item's main view was, so a rollout whose ``video`` is ``cam1`` was seeded and judged
with ``cam0``'s masks and camera. Here view 0 is the scene shifted 40 px to the right (another camera's
picture of it), view 1 what the video shows.
"""

import os

import numpy as np
import pytest
from _scene import FPS, clean_frames, state_arrays

from robojudge.metrics import MetricInputError, get_metric
from robojudge.suite import Item
from robojudge.video import write_video

METRICS = ("ta_hsd", "ta_ndtw", "ta_dyn", "ol_average_precision", "ol_average_recall")
SHIFT = 40


def _two_views(names=("cam0", "cam1")) -> dict[str, np.ndarray]:
    """The clean clip's state as view 1, behind a view 0 that sees it shifted ``SHIFT`` px right."""
    one = state_arrays()
    shifted_k = one["K"][0].copy()
    shifted_k[0, 2] += SHIFT  # ee_pos (u, v, 1) projects to (u + SHIFT, v)
    arrays = dict(one)
    arrays["masks"] = np.concatenate([np.roll(one["masks"], SHIFT, axis=-1), one["masks"]], axis=1)
    arrays["K"] = np.stack([shifted_k, one["K"][0]])
    arrays["R"] = np.concatenate([one["R"], one["R"]], axis=1)
    arrays["t"] = np.concatenate([one["t"], one["t"]], axis=1)
    arrays["keypoints_2d"] = np.concatenate([one["keypoints_2d"]] * 2, axis=1)
    arrays["keypoints_visible"] = np.concatenate([one["keypoints_visible"]] * 2, axis=1)
    if names is not None:
        arrays["view_names"] = np.array(names)
    return arrays


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("views")
    clean = clean_frames()
    write_video(root / "cam1.mp4", clean, fps=FPS)
    write_video(root / "cam0.mp4", np.roll(clean, SHIFT, axis=2), fps=FPS)
    for name, arrays in (("one", state_arrays()), ("two", _two_views())):
        (root / name).mkdir()  # a reference and its state file beside it
        write_video(root / name / "clip.mp4", clean, fps=FPS)
        np.savez(root / name / "clip.npz", **arrays)
        np.savez(root / f"{name}.npz", **arrays)
    np.savez(root / "unnamed.npz", **_two_views(names=None))
    return root


def _item(root, state="two", views=("cam0", "cam1"), main_view="cam1"):
    """The rollout whose ``video`` is the clean clip, given as the last of ``views`` (none: no views)."""
    files = dict(zip(views, ("cam0.mp4", "cam1.mp4"), strict=True)) if views else {}
    return Item(item_id="r", video=str(root / "cam1.mp4"), reference_video=str(root / state / "clip.mp4"),
                state=str(root / f"{state}.npz"), views={v: str(root / f) for v, f in files.items()} or None,
                main_view=main_view if views else None)


def test_a_rollout_of_the_second_camera_is_read_in_its_view(folder):
    single = _item(folder, state="one", views=None)  # a one-view state: view 0 is all there is
    for metric in METRICS:
        want = get_metric(metric).compute(single)
        got = get_metric(metric).compute(_item(folder))
        # cam1's rollout against cam1's truth scores as the same clip with a one-view state does (ta_dyn is
        # unscored for both, for the same reason); read in view 0 (v6), the object was seeded 40 px off and
        # the tracker's check on the reference against view 0's truth left every metric unscored
        assert got.value == pytest.approx(want.value, nan_ok=True), metric
        assert got.details.get("unscored_reason") == want.details.get("unscored_reason"), metric
        if got.scored:
            assert (got.details["state_view"], want.details["state_view"]) == (1, 0), metric
    assert [get_metric(m).compute(_item(folder)).scored for m in METRICS] == [True, True, False, True, True]
    forced = get_metric("ol_average_precision").make_config({"view": 0})
    off = get_metric("ol_average_precision").compute(_item(folder), forced)
    assert not off.scored and "the tracker follows object on 0% of the reference video's frames" in \
        off.details["unscored_reason"]  # the other camera's truth, as v6 read every such item


def test_the_state_view_is_the_main_view_found_by_name(folder):
    from robojudge.metrics.robophys.tracking import state_view

    assert state_view(_item(folder, state="one", views=None), folder / "one.npz") == 0
    assert state_view(_item(folder), folder / "two.npz") == 1
    # The main view is the view whose file is video when main_view is not given.
    assert state_view(_item(folder, main_view=None), folder / "two.npz") == 1
    assert state_view(_item(folder), folder / "two.npz", view=0) == 0  # the metric's view, when set
    # An item without views reads view 0, the sim suite's main view, whatever the file holds.
    assert state_view(_item(folder, views=None), folder / "unnamed.npz") == 0


def test_a_state_file_without_the_main_view_is_refused_with_the_reason(folder):
    from robojudge.metrics.robophys.tracking import state_view

    cam2 = _item(folder, views=("cam0", "cam2"), main_view="cam2")
    for metric in ("ta_hsd", "ol_average_precision"):
        with pytest.raises(MetricInputError, match=(
                r"two\.npz field view_names \['cam0', 'cam1'\] has no view 'cam2', the item's main view")):
            get_metric(metric).compute(cam2)
    unnamed = _item(folder)
    with pytest.raises(MetricInputError, match=r"unnamed\.npz holds 2 views and names none \(no array "
                                               r"view_names\), so which is the item's main view 'cam1'"):
        state_view(unnamed, folder / "unnamed.npz")


def test_an_item_built_in_python_is_read_in_the_view_its_video_is(folder, tmp_path):
    """No manifest checks an ``Item`` built in Python: its ``main_view`` may name another view than the one
    whose file ``video`` is. The tracker reads ``video``, so its seed and truth are that view's (v7 read
    ``main_view``'s, another camera's masks for this video), as KIVA reuses the 2D tracks only there."""
    from robojudge.metrics.robophys.tracking import state_view

    other = _item(folder, main_view="cam0")  # video is cam1's file
    assert state_view(other, folder / "two.npz") == 1
    got = get_metric("ol_average_precision").compute(other)
    want = get_metric("ol_average_precision").compute(_item(folder))
    assert got.scored and got.details["state_view"] == 1 and got.value == pytest.approx(want.value)
    # A hard link to the view's file is that file.
    os.link(folder / "cam1.mp4", tmp_path / "linked.mp4")
    linked = other.model_copy(update={"video": str(tmp_path / "linked.mp4")})
    assert state_view(linked, folder / "two.npz") == 1
    # A video that is none of the views' files: the main view, as before.
    loose = other.model_copy(update={"video": str(folder / "one" / "clip.mp4")})
    assert state_view(loose, folder / "two.npz") == 0
