"""What the tracks of the trajectory and localization metrics are seeded with, and what they refuse.

Three ways a track that cannot be measured was scored as if it had been:

* NaN in the state's ``ee_pos`` at frame 0 left the end effector unseeded, so it was missing from the
  reference too, and "farthest" scored the barely moving object instead: ta_hsd and ta_ndtw 1.0;
* a target the state cannot seed was dropped from the choice of the farthest-moving track, even when
  the reference shows it moving farthest;
* on a black frame the tracker's colour model (object vs background) is flat, every window holds the
  seed's mass, and lk_flow "found" each object at confidence 1 on every frame: AP for a blank clip.
"""

import numpy as np
import pytest
from _scene import FPS, OBJ, H, W, _boxes, clean_frames, state_arrays

from robojudge.metrics import MetricInputError, get_metric
from robojudge.metrics.tracking import SimState, Target, Tracks, TrackSeed, get_tracker, seed_from_state
from robojudge.metrics.tracking._sim import StateFileError
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

TA = ("ta_hsd", "ta_ndtw", "ta_dyn")
OL = ("ol_average_precision", "ol_average_recall")
NOT_SEEDED = "not tracked: not visible in the first frames of the state file (nothing to seed)"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeds")
    clean = clean_frames()
    write_video(root / "clean.mp4", clean, fps=FPS)
    write_video(root / "black.mp4", np.zeros_like(clean), fps=FPS)
    for name in ("tracked", "with_state"):  # a reference without and with its own state file beside it
        (root / name).mkdir()
        write_video(root / name / "clip.mp4", clean, fps=FPS)
    (root / "backwards").mkdir()  # its frame 0 shows the object at the end of its path, not at the seed
    write_video(root / "backwards" / "clip.mp4", clean[::-1].copy(), fps=FPS)
    np.savez(root / "with_state" / "clip.npz", **state_arrays())
    return root


def _state(root, name, **changes):
    arrays = state_arrays()
    for key, value in changes.items():
        arrays[key] = value
    path = root / f"{name}.npz"
    np.savez(path, **arrays)
    return path


def _item(root, state, video="clean", reference="tracked"):
    return Item(item_id=video, video=str(root / f"{video}.mp4"),
                reference_video=str(root / reference / "clip.mp4"), state=str(state))


# -- the state file's positions ---------------------------------------------------------------------


def test_nan_end_effector_is_an_error_naming_file_array_and_frames(folder):
    ee = state_arrays()["ee_pos"]
    ee[0] = np.nan
    path = _state(folder, "ee_nan0", ee_pos=ee)
    with pytest.raises(StateFileError) as err:
        SimState.load(path)
    assert str(err.value) == f"state file {path}: array 'ee_pos' is not finite (NaN or inf) at frame 0"
    # Before: the end effector was left out of both track sets and the object (farthest of those left)
    # scored ta_hsd 1.0 against a state whose only fault was this one sample.
    for metric in (*TA, *OL):
        with pytest.raises(MetricInputError, match=r"array 'ee_pos' is not finite \(NaN or inf\) at frame 0"):
            get_metric(metric).compute(_item(folder, path))
    ee[[4, 5, 9, 12]] = np.inf
    five = r"'ee_pos' is not finite \(NaN or inf\) at 5 frames \(first 0, 4, 5, \.\.\.\)"
    with pytest.raises(StateFileError, match=five):
        SimState.load(_state(folder, "ee_nan5", ee_pos=ee))


def test_a_camera_that_is_not_finite_is_an_error(folder):
    r = state_arrays()["R"]
    r[3, 0, 1, 1] = np.nan
    with pytest.raises(StateFileError, match=r"array 'R' is not finite \(NaN or inf\) at frame 3"):
        SimState.load(_state(folder, "r_nan", R=r))
    k = state_arrays()["K"]
    k[0, 0, 0] = np.nan
    with pytest.raises(StateFileError, match=r"array 'K' is not finite \(NaN or inf\) for view 0"):
        SimState.load(_state(folder, "k_nan", K=k))


def test_keypoints_without_a_place_may_be_hidden_but_not_visible(folder):
    arrays = state_arrays()
    uv, seen = arrays["keypoints_2d"], arrays["keypoints_visible"]
    uv[2:, 0, 0] = np.nan  # off the image or behind the camera: no position, marked not visible
    state = SimState.load(_state(folder, "kp_hidden", keypoints_2d=uv))
    assert np.isnan(state.keypoints_uv[2:, 0]).all() and not state.keypoints_visible.any()
    seen[5, 0, 0] = True
    broken = (r"array 'keypoints_2d' has no finite position in view 0 for keypoints marked visible at "
              r"frame 5 \(first keypoint 'gripper'\)")
    with pytest.raises(StateFileError, match=broken):
        SimState.load(_state(folder, "kp_broken", keypoints_2d=uv, keypoints_visible=seen))
    with pytest.raises(StateFileError, match=r"array 'keypoints_visible' must be bool .* got dtype float64"):
        SimState.load(_state(folder, "kp_float", keypoints_visible=np.full(seen.shape, np.nan)))


# -- choosing the farthest-moving track -------------------------------------------------------------


def _ee_behind_camera(folder):
    """The end effector behind the camera on frame 0 (z < 0 projects to NaN): a valid state that
    cannot seed it; the object is seeded as usual."""
    ee = state_arrays()["ee_pos"]
    ee[0] = (ee[0, 0], ee[0, 1], -1.0)
    path = _state(folder, "ee_behind", ee_pos=ee)
    assert [t.name for t in seed_from_state(SimState.load(path)).targets] == ["object"]
    return path


def test_an_unseeded_track_does_not_let_another_stand_in_for_it(folder):
    item = _item(folder, _ee_behind_camera(folder))
    for metric in TA:
        score = get_metric(metric).compute(item)
        # Before: scored on the object, the only track left, as if it moved farthest.
        assert not score.scored, (metric, score.value, score.details)
        assert score.details["unscored_reason"] == (
            f"cannot tell which reference track moves farthest: ee: {NOT_SEEDED}, and the tracked reference, "
            "seeded the same way, has no track of it either")
        assert set(score.details["tracks"]) == {"ee", "object"}
    spec = get_metric("ta_hsd")
    mean = spec.compute(item, spec.make_config({"select": "mean"}))
    assert not mean.scored and mean.details["unscored_reason"].startswith("the mean needs every track; ee: ")
    only = spec.compute(item, spec.make_config({"targets": ("object",)}))
    assert only.scored and only.value > 0.9  # asked for the object alone, it is scored
    assert get_metric("ol_average_precision").compute(item).scored  # localization reads the object only


def _reference_state(folder, name, *, still):
    """A reference state file beside a copy of the clean reference clip in which ``still`` ('ee' or
    'object') stays where it starts, so the other one moves farthest."""
    arrays = state_arrays()
    if still == "ee":
        arrays["ee_pos"][:] = arrays["ee_pos"][0]
    else:
        x, y = _boxes()[0]
        masks = np.zeros_like(arrays["masks"])
        masks[:, 0, y:y + OBJ, x:x + OBJ] = 3
        arrays["masks"] = masks
    (folder / name).mkdir(exist_ok=True)
    (folder / name / "clip.mp4").write_bytes((folder / "tracked" / "clip.mp4").read_bytes())
    np.savez(folder / name / "clip.npz", **arrays)
    return name


def test_the_reference_state_says_which_track_moves_farthest_seeded_or_not(folder):
    state = _ee_behind_camera(folder)
    ee_farthest = _item(folder, state, reference=_reference_state(folder, "ref_ee_moves", still="object"))
    for metric in TA:
        score = get_metric(metric).compute(ee_farthest)
        # Before: the reference's truth covered only the seeded object, which it scored.
        assert not score.scored, (metric, score.value, score.details)
        assert score.details["unscored_reason"] == (
            f"the reference's farthest-moving track, ee, has no generated track (ee: {NOT_SEEDED}); another "
            "track does not stand in for it")
    object_farthest = _item(folder, state, reference=_reference_state(folder, "ref_obj_moves", still="ee"))
    score = get_metric("ta_hsd").compute(object_farthest)
    assert score.scored and score.details["selected"] == "object"
    assert score.details["truth"] == "reference_state"
    assert score.details["tracks"]["ee"] == {"status": NOT_SEEDED}


def test_localization_of_an_unseeded_object_stays_unscored_with_a_reference_state(folder):
    masks = state_arrays()["masks"]
    masks[masks == 3] = 0  # the object never shows in the item's state
    item = _item(folder, _state(folder, "no_object", masks=masks), reference="with_state")
    for metric in OL:
        score = get_metric(metric).compute(item)
        assert not score.scored
        assert score.details["objects"] == {"object": NOT_SEEDED}


# -- targets the tracker cannot tell from the rest of the frame ---------------------------------------


def test_a_black_frame_seeds_nothing(folder):
    frames = sample_frames(folder / "black.mp4", fps=None, max_frames=None).frames
    seed = seed_from_state(SimState.load(_state(folder, "plain")), (W, H))
    tracks = get_tracker().track(frames, seed)
    i = tracks.index("object")
    # Before: found at the seed position on every frame with confidence 1.
    assert np.isnan(tracks.points[:, i]).all() and (tracks.confidence[:, i] == 0).all()
    assert np.isnan(tracks.boxes[:, i]).all()
    assert tracks.untracked["object"].startswith(
        "not tracked: on frame 0 the colours under its seed mask do not stand out from the rest of the frame "
        "(colour-model mass 0.50 elsewhere, 0.50 in the seed box)")


def test_a_mask_over_background_colours_seeds_nothing_and_a_distinct_one_is_followed():
    rng = np.random.default_rng(2)
    grey = np.repeat(np.kron(rng.integers(60, 200, (24, 24)), np.ones((4, 4)))[..., None], 3, axis=2)
    frames = np.repeat(grey.astype(np.uint8)[None], 6, axis=0)
    frames[:, 40:56, 60:76] = (30, 200, 40)  # a green square
    plain = np.zeros((96, 96), bool)
    plain[10:26, 10:26] = True  # the same grey texture as everywhere else
    square = np.zeros((96, 96), bool)
    square[40:56, 60:76] = True
    seed = TrackSeed((Target("plain", (18.0, 18.0), mask=plain), Target("square", (68.0, 48.0), mask=square)),
                     (96, 96))
    tracks = get_tracker().track(frames, seed)
    assert list(tracks.untracked) == ["plain"]
    assert (tracks.confidence[:, 0] == 0).all() and np.isnan(tracks.points[:, 0]).all()
    assert (tracks.confidence[:, 1] > 0.9).all()
    assert np.abs(tracks.points[:, 1] - (68.0, 48.0)).max() < 0.5


def test_a_reference_the_tracker_cannot_start_on_does_not_let_another_track_stand_in(folder):
    item = _item(folder, _state(folder, "plain"), reference="backwards")
    spec = get_metric("ta_hsd")
    for select in ("farthest", "mean"):
        score = spec.compute(item, spec.make_config({"select": select}))
        # Before: the object's reference track was "mostly missing" and the end effector was scored.
        assert not score.scored, (select, score.value)
        said = "object: reference track mostly missing (not tracked: on frame 0 the colours under its seed"
        assert said in score.details["unscored_reason"]
    loc = get_metric("ol_average_precision").compute(item)
    assert not loc.scored
    assert loc.details["objects"]["object"].startswith("never visible in the reference (not tracked: on ")


def test_a_black_video_gets_no_localization_credit(folder):
    item = _item(folder, _state(folder, "plain"), video="black")
    for metric in OL:
        score = get_metric(metric).compute(item)
        # Before: credited with a detection at the seed position on every frame before the object moved.
        assert score.scored and score.value == 0.0, (metric, score.value)
        obj = score.details["objects"]["object"]
        assert obj["frames_detected"] == 0
        assert obj["status"].startswith("lost in the generated video (not tracked: on frame 0 the colours")
    hsd = get_metric("ta_hsd").compute(item)
    assert hsd.value == 0.0
    assert hsd.details["tracks"]["object"]["status"].startswith("lost in the generated video (not tracked: ")
    clean = get_metric("ol_average_precision").compute(_item(folder, _state(folder, "plain")))
    assert clean.value == 1.0 and "status" not in clean.details["objects"]["object"]  # the faithful clip


def test_untracked_names_must_be_tracks():
    arrays = (np.zeros((2, 1, 2)), np.zeros((2, 1, 4)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match=r"untracked targets \['b'\] are not among tracks \['a'\]"):
        Tracks(("a",), *arrays, (4, 4), untracked={"b": "why"})
    assert Tracks(("a",), *arrays, (4, 4)).untracked == {}


def test_a_target_the_smaller_tracked_reference_cannot_seed_is_named_not_a_key_error(tmp_path) -> None:
    """A 2x2 object mask seeds the generated video and vanishes scaled to a reference of half the size: the
    metrics raised KeyError ('no track named object') once the seeding checks compared generated names."""
    import cv2

    clean = clean_frames()
    write_video(tmp_path / "gen.mp4", clean, fps=FPS)
    (tmp_path / "ref").mkdir()
    small = np.stack([cv2.resize(f, (W // 2, H // 2), interpolation=cv2.INTER_AREA) for f in clean])
    write_video(tmp_path / "ref" / "clip.mp4", small, fps=FPS)  # no clip.npz: the reference is tracked
    arrays = state_arrays()
    masks = arrays["masks"]
    masks[masks == 3] = 0
    for t, (x, y) in enumerate(_boxes()):
        cx, cy = x + OBJ // 2, y + OBJ // 2
        masks[t, 0, cy:cy + 2, cx + 1:cx + 3] = 3  # the object: 2x2, at an odd column
    np.savez(tmp_path / "state.npz", **arrays)
    item = Item(item_id="i", video=str(tmp_path / "gen.mp4"),
                reference_video=str(tmp_path / "ref" / "clip.mp4"), state=str(tmp_path / "state.npz"))
    for metric in (*TA, *OL):
        score = get_metric(metric).compute(item)
        assert np.isnan(score.value), metric
        assert "object: not tracked in the reference" in score.details["unscored_reason"], metric
