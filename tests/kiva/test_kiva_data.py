"""Which episodes of a manifest train a reader, and how their frames and keypoints are prepared."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robojudge.kiva import KivaDataError, episodes_from_manifest, measured_links, resolve_robot
from robojudge.kiva._data import load_episode
from robojudge.suite import ManifestError
from robojudge.video import write_video

NAMES = ["a", "b", "c"]
T, W, H = 6, 40, 20


def _state(path: Path, names=NAMES, kp2=None, views=("cam0", "cam1")) -> None:
    rng = np.random.default_rng(0)
    if kp2 is None:
        kp2 = rng.uniform(0, [W, H], (T, len(views), len(names), 2)).astype(np.float32)
    np.savez(path, keypoint_names=np.array(names), view_names=np.array(views), keypoints_2d=kp2,
             keypoints_visible=np.ones(kp2.shape[:3], bool))


def _suite(root: Path) -> Path:
    for sub in ("videos", "reference", "state"):
        (root / sub).mkdir()
    frames = np.zeros((T, H, W, 3), np.uint8)
    for name in ("reference/c0", "videos/c0-ok_cam1", "videos/c0-bad_cam0", "videos/c1-ok_cam0"):
        write_video(root / f"{name}.mp4", frames, fps=10)
    _state(root / "reference/c0.npz")
    for name in ("c0-ok", "c0-bad"):
        _state(root / f"state/{name}.npz")
    np.savez(root / "state/c1-ok.npz", joint_pos=np.zeros((T, 2)))  # a state file without keypoints
    rows = [
        {"item_id": "c0-ok", "video": "videos/c0-ok_cam1.mp4", "reference_video": "reference/c0.mp4",
         "views": {"cam1": "videos/c0-ok_cam1.mp4"}, "main_view": "cam1", "clip_id": "c0",
         "embodiment": "gripper", "state": "state/c0-ok.npz", "meta": {"failures": []}},
        {"item_id": "c0-bad", "video": "videos/c0-bad_cam0.mp4", "reference_video": "reference/c0.mp4",
         "clip_id": "c0", "state": "state/c0-bad.npz", "meta": {"failures": [{"type": "jitter"}]}},
        {"item_id": "c1-ok", "video": "videos/c1-ok_cam0.mp4", "clip_id": "c1", "state": "state/c1-ok.npz"},
    ]
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_references_once_and_faithful_rollouts_with_keypoints_are_the_episodes(tmp_path):
    manifest = _suite(tmp_path)
    episodes, names = episodes_from_manifest(manifest)
    assert names == NAMES
    assert [(e.name, e.group, e.reference, e.view) for e in episodes] == [
        # A reference video shows the main view (docs/sim_suite.md), here the state file's second.
        ("reference:c0", "c0", True, 1),
        ("c0-ok", "c0", False, 1),
    ]
    assert episodes[1].embodiment == "gripper"
    refs, _ = episodes_from_manifest(manifest, rollouts=False)
    assert [e.name for e in refs] == ["reference:c0"]
    with pytest.raises(KivaDataError, match="suite.jsonl: no reference video .* keypoints \\['zz'\\]"):
        episodes_from_manifest(manifest, ["zz"])



def test_a_rollout_is_labelled_in_the_view_its_video_is(tmp_path):
    # Without main_view, the main view is the view whose file is `video` (robojudge.suite.main_view_name);
    # collect_episodes took state view 0 (cam0) for frames of cam1, and a reference in that view too.
    for name in ("ref", "r_cam0", "r_cam1"):
        write_video(tmp_path / f"{name}.mp4", np.zeros((T, H, W, 3), np.uint8), fps=10)
    _state(tmp_path / "ref.npz")
    _state(tmp_path / "r.npz")
    row = {"item_id": "r", "video": "r_cam1.mp4", "reference_video": "ref.mp4", "state": "r.npz",
           "views": {"cam0": "r_cam0.mp4", "cam1": "r_cam1.mp4"}, "clip_id": "c"}
    (tmp_path / "suite.jsonl").write_text(json.dumps(row) + "\n")
    episodes, _ = episodes_from_manifest(tmp_path / "suite.jsonl", all_views=True)
    assert [(e.name, e.video.name, e.view, e.view_name) for e in episodes] == [
        ("reference:c", "ref.mp4", 1, "cam1"), ("r", "r_cam1.mp4", 1, "cam1"),
        ("r@cam0", "r_cam0.mp4", 0, "cam0")]
    # main_view naming the other camera than `video` is refused by the manifest, not labelled across cameras
    (tmp_path / "bad.jsonl").write_text(json.dumps({**row, "main_view": "cam0"}) + "\n")
    with pytest.raises(ManifestError, match="main_view: main_view 'cam0' is not the view that video shows"):
        episodes_from_manifest(tmp_path / "bad.jsonl")

def test_keypoints_are_read_in_the_robots_order_and_scaled_to_the_readers_frames(tmp_path):
    kp2 = np.zeros((T, 1, 3, 2), np.float32)
    kp2[:, 0, 0] = [10.0, 5.0]  # "a"
    kp2[:, 0, 2] = [30.0, 15.0]  # "c"
    kp2[:, 0, 1] = [-4.0, 5.0]  # "b", left of the frame: not visible however the file marks it
    _state(tmp_path / "s.npz", kp2=kp2, views=("cam0",))
    write_video(tmp_path / "v.mp4", np.zeros((T, H, W, 3), np.uint8), fps=10)
    from robojudge.kiva import Episode

    ep = Episode("x", "x", tmp_path / "v.mp4", tmp_path / "s.npz", 0, True)
    data = load_episode(ep, ["c", "a", "b"], size=16)
    assert data.frames.shape == (T, 16, 16, 3) and data.native == (W, H)
    assert data.keypoints[0] == pytest.approx(np.array([[12.0, 12.0], [4.0, 4.0], [-1.6, 4.0]]))
    assert data.visible[0].tolist() == [True, True, False]


def test_keypoints_drawn_on_a_larger_render_are_scaled_to_the_video_or_refused_if_framed_otherwise(tmp_path):
    # A simulator's state file holds its keypoints in the pixels of the render its masks have; a video
    # written at half that size is the same picture (its keypoints halve), one of another aspect is not.
    kp2 = np.zeros((T, 1, 3, 2), np.float32)
    kp2[:, 0, 0] = [20.0, 10.0]
    kp2[:, 0, 1] = [60.0, 30.0]
    kp2[:, 0, 2] = [79.0, 39.0]
    _state(tmp_path / "s.npz", kp2=kp2, views=("cam0",))
    with np.load(tmp_path / "s.npz") as z:
        fields = dict(z)
    np.savez(tmp_path / "s.npz", **fields, masks=np.zeros((T, 1, 2 * H, 2 * W), np.uint8))
    write_video(tmp_path / "v.mp4", np.zeros((T, H, W, 3), np.uint8), fps=10)
    from robojudge.kiva import Episode

    data = load_episode(Episode("x", "x", tmp_path / "v.mp4", tmp_path / "s.npz", 0, True), NAMES, size=W)
    assert data.keypoints[0] == pytest.approx(np.array([[10.0, 10.0], [30.0, 30.0], [39.5, 39.0]]))
    assert data.visible[0].tolist() == [True, True, True]
    write_video(tmp_path / "crop.mp4", np.zeros((T, H, H, 3), np.uint8), fps=10)
    with pytest.raises(KivaDataError, match=(
            r"episode 'x': video .*crop.mp4 is 20x20 \(aspect 1.000\) and its keypoints are pixels of a "
            r"80x40 picture \(2.000, the size of the masks in state file .*s.npz\): another framing")):
        load_episode(Episode("x", "x", tmp_path / "crop.mp4", tmp_path / "s.npz", 0, True), NAMES, size=W)


def test_a_state_file_with_misshapen_keypoints_is_named_with_its_field(tmp_path):
    _state(tmp_path / "s.npz", kp2=np.zeros((T, 3, 2), np.float32))
    write_video(tmp_path / "v.mp4", np.zeros((T, H, W, 3), np.uint8), fps=10)
    from robojudge.kiva import Episode

    with pytest.raises(KivaDataError, match="s.npz: field keypoints_2d must be"):
        load_episode(Episode("x", "x", tmp_path / "v.mp4", tmp_path / "s.npz", 0, True), NAMES, 16)


def test_a_visible_keypoint_without_a_position_is_named_not_dropped(tmp_path):
    # NaN coordinates on a keypoint marked visible were left out of training without a word.
    kp2 = np.random.default_rng(0).uniform(0, [W, H], (T, 2, len(NAMES), 2)).astype(np.float32)
    kp2[3, 0, 1] = np.nan
    _state(tmp_path / "s.npz", kp2=kp2)
    write_video(tmp_path / "v.mp4", np.zeros((T, H, W, 3), np.uint8), fps=10)
    from robojudge.kiva import Episode

    with pytest.raises(KivaDataError, match=r"s\.npz: field keypoints_2d: 1 keypoint\(s\) marked visible in "
                                            r"keypoints_visible have no finite position in view 0 \(first: "
                                            r"frame 3, keypoint 'b'\)"):
        load_episode(Episode("x", "x", tmp_path / "v.mp4", tmp_path / "s.npz", 0, True), NAMES, 16)
    # the other view has every position: it loads
    load_episode(Episode("x", "x", tmp_path / "v.mp4", tmp_path / "s.npz", 1, True), NAMES, 16)


def test_links_come_from_the_spec_or_are_measured_as_pairs_of_constant_distance(tmp_path):
    fetch = resolve_robot("fetch")
    assert fetch.links is not None
    assert fetch.links[0] == ("robot0:shoulder_pan_link", "robot0:shoulder_lift_link")
    spec = tmp_path / "arm.toml"
    spec.write_text('name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "elbow", "tip"]\n')
    arm = resolve_robot(str(spec))
    assert arm.name == "arm" and arm.keypoints == ("base", "elbow", "tip") and arm.links is None
    assert "links not checked against the model: file not found" in arm.source  # said, not silent
    with pytest.raises(ValueError, match="not a built-in robot"):
        resolve_robot(str(tmp_path / "missing.toml"))
    # base-elbow rigid (0.3 m), elbow-tip rigid (0.2 m), base-tip not (the elbow bends).
    t = np.linspace(0, 2, 30)
    elbow = 0.3 * np.stack([np.cos(t), np.sin(t), 0 * t], axis=-1)
    tip = elbow + 0.2 * np.stack([np.cos(3 * t), np.sin(3 * t), 0 * t], axis=-1)
    pts = np.stack([np.zeros_like(elbow), elbow, tip], axis=1)
    assert measured_links([pts]) == [(0, 1), (1, 2)]
    assert measured_links([pts * 0.05]) == []  # 1.5 and 1 cm: shorter than 2 cm


def _toml_list(values) -> str:
    return "[" + ", ".join(json.dumps(v) if isinstance(v, str) else _toml_list(v) for v in values) + "]"


def _fetch_recording(kiva_suite: Path, tmp_path: Path):
    """The suite's first Fetch reference, its state file's camera and keypoints, and the Fetch spec
    written as a spec file (tmp_path/fetch.toml) for presenting it as a real recording."""
    from robojudge.robots import builtin_robot

    ref = kiva_suite.parent / "reference" / "fetch00.mp4"
    with np.load(ref.with_suffix(".npz")) as z:
        state = {k: z[k] for k in ("K", "R", "t", "keypoints_2d", "keypoints_visible")}
    spec = builtin_robot("fetch")
    (tmp_path / "fetch.toml").write_text(
        f"name = \"fetch\"\nmodel = {json.dumps(str(spec.model))}\nkeypoints = {_toml_list(spec.keypoints)}\n"
        f"links = {_toml_list(spec.links)}\njoints = {_toml_list(spec.joints)}\n")
    return ref, state, spec


@pytest.mark.slow
def test_a_recording_gets_its_keypoints_from_joint_states_calibration_and_robot_spec(kiva_suite, tmp_path):
    """A Fetch reference episode presented as a real recording: forward kinematics of its joint states,
    projected with its camera, must land where the simulator put the keypoints."""
    from robojudge.kiva import TrainConfig, train_reader

    ref, state, spec = _fetch_recording(kiva_suite, tmp_path)
    cam = {"K": state["K"][0].tolist(), "R": state["R"][0, 0].tolist(), "t": state["t"][0, 0].tolist(),
           "size": [64, 64]}
    (tmp_path / "calib.json").write_text(json.dumps({"cam0": cam}))
    row = {"item_id": "lab-0", "video": str(ref), "embodiment": "gripper", "regime": "real",
           "robot": str(tmp_path / "fetch.toml"), "joint_states": str(ref.with_suffix(".npz")),
           "calibration": str(tmp_path / "calib.json")}
    manifest = tmp_path / "real.jsonl"
    generated = {**row, "item_id": "gen-0", "generator": "wm"}
    manifest.write_text(json.dumps(row) + "\n" + json.dumps(generated) + "\n")
    episodes, names = episodes_from_manifest(manifest, spec.keypoints)
    assert [e.name for e in episodes] == ["lab-0"]  # the generated video's joints are not what it shows
    assert episodes[0].state is None and episodes[0].recording is not None
    data = load_episode(episodes[0], names, size=64)
    truth, seen = state["keypoints_2d"][:, 0], state["keypoints_visible"][:, 0]
    assert np.abs(data.keypoints[seen] - truth[seen]).max() < 0.05
    assert (data.visible | ~seen).all()  # no depth here: every keypoint the simulator saw is visible
    cfg = TrainConfig(size=32, width=8, epochs=1, holdout=0)
    meta = train_reader(manifest, "fetch", tmp_path / "reader", cfg)
    assert sorted(meta["data"]["files"]) == sorted(str(p) for p in episodes[0].files)
    assert len(meta["data"]["files"]) == 4 and meta["episodes"]["train"] == ["lab-0"]
    from robojudge.kiva import calibrate_reader

    cal = calibrate_reader(tmp_path / "reader", manifest)  # a recording is a real video: it calibrates
    assert cal["videos"] == [str(ref)] and cal["segments"] == 3


def test_a_recording_calibrated_at_another_size_is_labelled_in_its_videos_pixels(kiva_suite, tmp_path):
    """A camera calibrated on the full-size picture labels a video written at half its size (the
    keypoints halve with it); a calibration of another aspect ratio is another framing, refused."""
    ref, state, spec = _fetch_recording(kiva_suite, tmp_path)
    big = np.diag([2.0, 2.0, 1.0]) @ state["K"][0]  # the same camera, at 128x128
    cam = {"K": big.tolist(), "R": state["R"][0, 0].tolist(), "t": state["t"][0, 0].tolist(),
           "size": [128, 128]}
    row = {"item_id": "lab-0", "video": str(ref), "embodiment": "gripper", "regime": "real",
           "robot": str(tmp_path / "fetch.toml"), "joint_states": str(ref.with_suffix(".npz")),
           "calibration": str(tmp_path / "calib.json")}
    manifest = tmp_path / "real.jsonl"
    manifest.write_text(json.dumps(row) + "\n")
    (tmp_path / "calib.json").write_text(json.dumps({"cam0": cam}))
    episodes, names = episodes_from_manifest(manifest, spec.keypoints)
    data = load_episode(episodes[0], names, size=64)  # the video is 64x64
    truth, seen = state["keypoints_2d"][:, 0], state["keypoints_visible"][:, 0]
    assert np.abs(data.keypoints[seen] - truth[seen]).max() < 0.05
    (tmp_path / "calib.json").write_text(json.dumps({"cam0": {**cam, "size": [128, 96]}}))
    with pytest.raises(KivaDataError,
                       match=r"64x64 .* a 128x96 picture \(1.333, the size of its camera in calibration"):
        load_episode(episodes[0], names, size=64)
