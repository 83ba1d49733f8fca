"""KIVA in 3D: keypoints read in several calibrated views, triangulated, and link rigidity in metres."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from robojudge.kiva import segment_values
from robojudge.kiva._score import SegmentValues, SegmentVerdict, Thresholds, judge_segments
from robojudge.kiva._triangulate import projection_matrix, segment_rigidity_3d, triangulate
from robojudge.robots import Camera
from robojudge.robots._camera import project

F, SIZE = 500.0, 256


def _look_at(eye) -> tuple[np.ndarray, np.ndarray]:
    """World-to-camera R, t of a camera at ``eye`` looking at the origin (OpenCV axes, z up in the world)."""
    eye = np.asarray(eye, dtype=np.float64)
    fwd = -eye / np.linalg.norm(eye)
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    r = np.stack([right, down, fwd])
    return r, -r @ eye


EYES = ([2.0, 0.3, 1.2], [0.2, 2.0, 1.0], [-1.4, -1.4, 1.6])
K = np.array([[F, 0.0, SIZE / 2], [0.0, F, SIZE / 2], [0.0, 0.0, 1.0]])


def _rig():
    rts = [_look_at(e) for e in EYES]
    return rts, np.stack([projection_matrix(K, r, t) for r, t in rts])


def _views(points: np.ndarray):
    """(T, V, K, 2) projections and (T, V, K) in-frame masks of world points in the three cameras."""
    rts, proj = _rig()
    uv, vis = zip(*(project(points, K, r, t, SIZE) for r, t in rts), strict=True)
    return np.stack(uv, axis=1), np.stack(vis, axis=1), proj


def _points(t: int = 32, k: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.25, 0.25, (t, k, 3))


# ------------------------------------------------------------------ triangulation (numpy, fast)


def test_noise_free_projections_triangulate_to_the_points_and_noise_stays_within_millimetres():
    pts = _points()
    uv, vis, proj = _views(pts)
    assert vis.all()
    tri = triangulate(uv, vis, proj)
    assert tri.ok.all() and (tri.views_used == 3).all()
    assert np.abs(tri.points - pts).max() < 1e-9
    assert np.nanmax(tri.error) < 1e-6
    # 0.5 px of reading noise at f = 500 px and about 2 m: a few millimetres, not centimetres.
    noisy = uv + np.random.default_rng(1).normal(0.0, 0.5, uv.shape)
    tri = triangulate(noisy, vis, proj)
    err = np.linalg.norm(tri.points - pts, axis=-1)
    assert 1e-4 < np.median(err) < 0.004 and err.max() < 0.015


def test_a_point_seen_in_one_view_is_not_placed():
    pts = _points(t=4, k=2)
    uv, vis, proj = _views(pts)
    vis[:, 1:, 0] = False  # keypoint 0 only in view 0
    tri = triangulate(uv, vis, proj)
    assert not tri.ok[:, 0].any() and np.isnan(tri.points[:, 0]).all()
    assert tri.ok[:, 1].all()


def test_a_bad_read_in_one_of_three_views_is_dropped_and_with_two_views_rejected():
    pts = _points(t=4, k=2)
    uv, vis, proj = _views(pts)
    uv[:, 1, 0] += [30.0, -20.0]  # view 1 misreads keypoint 0
    tri = triangulate(uv, vis, proj, max_error=2.0)
    assert tri.ok.all() and (tri.views_used[:, 0] == 2).all() and (tri.views_used[:, 1] == 3).all()
    assert np.abs(tri.points - pts).max() < 1e-9
    two = triangulate(uv[:, :2], vis[:, :2], proj[:2], max_error=2.0)
    assert not two.ok[:, 0].any() and two.ok[:, 1].all()
    assert (two.error[:, 0] > 2.0).all()
    # Without a bound the misread point is placed, wrongly: the bound is what rejects it.
    loose = triangulate(uv[:, :2], vis[:, :2], proj[:2])
    assert loose.ok[:, 0].all() and np.linalg.norm(loose.points[:, 0] - pts[:, 0], axis=-1).min() > 0.01


def test_a_link_stretched_along_one_views_line_of_sight_is_caught_in_3d_and_missed_in_that_views_2d():
    t = 32
    rts, _ = _rig()
    r0, t0 = rts[0]
    centre = -r0.T @ t0  # camera 0's position in the world
    parent = np.array([0.0, 0.0, 0.0])
    child = np.array([0.05, 0.25, 0.1])
    ray = (child - centre) / np.linalg.norm(child - centre)
    # Frames 16-31: the child slides along camera 0's ray through it, so camera 0 sees it where it was.
    along = np.r_[np.zeros(16), np.linspace(0.0, 0.3, 16)]
    pts = np.stack([np.broadcast_to(parent, (t, 3)), child + along[:, None] * ray], axis=1)
    uv, vis, proj = _views(pts)
    assert vis.all()
    links = [(0, 1)]
    two = segment_values(uv[:, 0], vis[:, 0], links, 10.0, math.hypot(SIZE, SIZE), min_link=0.01)
    assert two[0].rigidity < 1e-9 and two[1].rigidity < 1e-9  # the main view cannot tell
    tri = triangulate(uv, vis, proj)
    three = segment_rigidity_3d(tri.points, tri.ok, links, [(0, 16), (16, 32)])
    assert three[0][0] < 1e-9 and three[0][1] == 1
    lengths = np.linalg.norm(pts[16:, 1] - pts[16:, 0], axis=-1)
    assert three[1][0] == pytest.approx(np.std(lengths) / np.median(lengths), rel=1e-6)
    assert three[1][0] > 0.05


def test_3d_rigidity_needs_a_long_enough_link_on_four_frames():
    pts = np.zeros((8, 2, 3))
    pts[:, 1, 0] = 0.01  # a 1 cm link: shorter than MIN_LINK_M
    ok = np.ones((8, 2), bool)
    assert math.isnan(segment_rigidity_3d(pts, ok, [(0, 1)], [(0, 8)])[0][0])
    pts[:, 1, 0] = 0.1
    ok[:5, 1] = False  # three frames left
    assert math.isnan(segment_rigidity_3d(pts, ok, [(0, 1)], [(0, 8)])[0][0])
    ok[4, 1] = True
    assert segment_rigidity_3d(pts, ok, [(0, 1)], [(0, 8)])[0] == (0.0, 1)


def test_segments_with_a_3d_value_are_judged_against_the_3d_threshold_the_rest_stay_2d():
    from robojudge.kiva.multiview import apply_3d

    cuts = Thresholds(rigidity=0.05, jerk=1.0)
    values = [SegmentValues(0, 16, 0.01, 0.5, 1.0), SegmentValues(16, 32, 0.2, 0.5, 1.0),
              SegmentValues(32, 48, 0.2, 0.5, 1.0)]
    verdicts: list[SegmentVerdict] = judge_segments(values, cuts)
    assert [v.invalid for v in verdicts] == [False, True, True]
    out, how = apply_3d(verdicts, [(0.03, 1), (0.001, 2), (math.nan, 0)], cuts, 0.02)
    assert how == ["3d", "3d", "2d"]
    assert [v.values.rigidity for v in out] == [0.03, 0.001, 0.2]
    assert [v.invalid for v in out] == [True, False, True]  # 0.03 > 0.02 in 3D; 0.001 passes
    assert out[0].score == pytest.approx(0.03 / 0.02)
    # A frozen segment (its picture does not change) stays unmeasured, whatever the other views give.
    still = SegmentValues(48, 64, math.nan, math.nan, 1.0, frozen=True)
    out, how = apply_3d(judge_segments([still], cuts), [(0.001, 2)], cuts, 0.02)
    assert how == ["2d"] and not out[0].measured


def test_a_span_frozen_in_any_view_gives_no_3d_value_and_one_held_frame_does_not_stop_it():
    from robojudge.kiva.multiview import ViewReadings, segment_values_3d

    t = 48
    pts = np.stack([np.zeros((t, 3)), np.broadcast_to([0.05, 0.25, 0.1], (t, 3)).copy()], axis=1)
    pts[16:32, 1, 2] += np.linspace(0.0, 0.2, 16)  # the link stretches in the second segment
    uv, vis, proj = _views(pts)
    spans = [(0, 16), (16, 32), (32, 48)]
    readings = ViewReadings(["a", "b", "c"], uv, vis, proj, math.hypot(SIZE, SIZE))
    free = segment_values_3d(readings, [(0, 1)], spans)
    assert free[1][0] > 0.05 and free[0][0] < 1e-9 and free[2][0] < 1e-9
    held = np.zeros((t, 3), bool)
    held[17:32, 2] = True  # view c shows one picture through the second segment
    held[40, 0] = True  # one repeated frame in view a: the third segment is still measured
    got = segment_values_3d(dataclasses.replace(readings, held=held), [(0, 1)], spans)
    assert math.isnan(got[1][0]) and got[1][1] == 0
    assert got[0] == free[0] and got[2] == free[2]


def test_read_views_carries_each_views_held_frames(tmp_path: Path):
    from robojudge.kiva._score import Tracks
    from robojudge.kiva.multiview import read_views
    from robojudge.suite import Item
    from robojudge.video import write_video

    frames = np.random.default_rng(0).integers(0, 255, (6, 16, 16, 3), dtype=np.uint8)
    views = {}
    for name in ("a", "b"):
        write_video(tmp_path / name, frames, fps=10.0)  # a frame folder: no codec between test and reader
        views[name] = str(tmp_path / name)
    item = Item(item_id="x", video=views["a"], instruction="i", views=views)
    held = {"a": np.r_[False, True, True, False, False, False],
            "b": np.r_[False, False, True, True, True, True]}

    def tracks(n: int, fps: float, view: str) -> Tracks:
        return Tracks(np.zeros((n, 1, 2)), np.ones((n, 1), bool), np.ones((n, 1)), fps, 16, 16,
                      held=held[view])

    main = ("a", tracks(6, 10.0, "a"))  # the main view, already read; only view b is read here
    eye = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    cams = {v: Camera(K=((F, 0.0, 8.0), (0.0, F, 8.0), (0.0, 0.0, 1.0)), R=eye, t=(0.0, 0.0, 2.0 + i),
                      size=(16, 16)) for i, v in enumerate(views)}
    got = read_views(lambda f, fps: tracks(len(f), fps, "b"), item, cams, main=main)
    assert got.held is not None and got.held.shape == (6, 2)
    assert (got.held[:, 0] == held["a"]).all() and (got.held[:, 1] == held["b"]).all()


def _two_views(tmp_path: Path, b_frames: Callable[[np.ndarray], np.ndarray], fps_b: float = 10.0,
               **fields: object):
    """A two-view item (views a and b, 16x16 cameras; a is six random frames at 10 fps, b ``b_frames`` of
    them at ``fps_b``), its cameras, and a stand-in reader that records how many frames each call read."""
    from robojudge.kiva._score import Tracks
    from robojudge.suite import Item
    from robojudge.video import write_video

    frames = np.random.default_rng(0).integers(0, 255, (6, 16, 16, 3), dtype=np.uint8)
    write_video(tmp_path / "a", frames, fps=10.0)
    write_video(tmp_path / "b", b_frames(frames), fps=fps_b)
    views = {"a": str(tmp_path / "a"), "b": str(tmp_path / "b")}
    item = Item(item_id="x", video=views["a"], instruction="i", views=views, **fields)
    eye = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    cams = {v: Camera(K=((F, 0.0, 8.0), (0.0, F, 8.0), (0.0, 0.0, 1.0)), R=eye, t=(0.0, 0.0, 2.0 + i),
                      size=(16, 16)) for i, v in enumerate(views)}
    read: list[int] = []

    def tracks(f: np.ndarray, fps: float) -> Tracks:
        read.append(len(f))
        return Tracks(np.zeros((len(f), 1, 2)), np.ones((len(f), 1), bool), np.ones((len(f), 1)), fps,
                      f.shape[2], f.shape[1])

    return frames, item, cams, read, tracks


@pytest.mark.parametrize(("frames_b", "fps_b", "words"), [
    (5, 10.0, "frame counts {'a': 6, 'b': 5}"),
    (6, 20.0, "view 'b' runs at 20 fps, view 'a' at 10 fps (+100.0%)"),
])
def test_views_out_of_step_are_refused_before_the_reader_reads_them(tmp_path: Path, frames_b: int,
                                                                    fps_b: float, words: str):
    from robojudge.kiva.multiview import ViewsOutOfStep, read_views

    frames, item, cams, read, tracks = _two_views(tmp_path, lambda f: f[:frames_b], fps_b)
    main = ("a", tracks(frames, 10.0))  # the main view, read by the metric already
    read.clear()
    with pytest.raises(ViewsOutOfStep, match=rf"^views are not synchronised: .*{re.escape(words)}"):
        read_views(tracks, item, cams, main=main)
    with pytest.raises(ViewsOutOfStep, match=re.escape(words)):
        read_views(tracks, item, cams)  # without a main view, the first view read is the reference
    assert read == [6]  # view a, read in the second call; view b never reached the reader


# ------------------------------------------------------------------ items, views, calibration (fast)


def _camera_json(r, t) -> dict:
    return {"K": K.tolist(), "R": r.tolist(), "t": t.tolist(), "size": [SIZE, SIZE]}


def test_which_items_can_be_measured_in_3d_and_why_not(tmp_path: Path):
    from robojudge.kiva.multiview import calibrated_views
    from robojudge.suite import Item

    rts, _ = _rig()
    calib = tmp_path / "rig.json"
    calib.write_text(json.dumps({"cam0": _camera_json(*rts[0]), "cam1": _camera_json(*rts[1])}))
    one_cam = tmp_path / "one.json"
    one_cam.write_text(json.dumps({"cam0": _camera_json(*rts[0])}))
    views = {"cam0": "a.mp4", "cam1": "b.mp4", "cam2": "c.mp4"}
    single = Item(item_id="s", video="a.mp4", calibration=str(calib))
    assert calibrated_views(single)[1] == "the item has one view: rigidity is measured in 2D"
    bare = Item(item_id="b", video="a.mp4", views=views)
    assert "no calibration" in str(calibrated_views(bare)[1])
    short = Item(item_id="c", video="a.mp4", views=views, calibration=str(one_cam))
    assert "describes 1 of the item's views" in str(calibrated_views(short)[1])
    cams, why = calibrated_views(Item(item_id="m", video="a.mp4", views=views, calibration=str(calib)))
    assert why is None and list(cams) == ["cam0", "cam1"] and isinstance(cams["cam0"], Camera)
    # a grid item's main cell is read (as by every metric reading one video), its cells not triangulated
    grid = Item(item_id="g", video="g.mp4", grid={"rows": 1, "cols": 2, "views": ["cam0", "cam1"]},
                main_view="cam0", calibration=str(calib))
    assert calibrated_views(grid)[1] == ("the item's views are cells of one grid video, which are not "
                                         "triangulated: rigidity is measured in 2D on its main view's cell")


def test_a_view_calibrated_at_another_size_is_scaled_to_the_frames_read():
    from robojudge.kiva._triangulate import cameras_for_views

    rts, proj = _rig()
    cam = Camera.model_validate(_camera_json(*rts[0]))
    half = cameras_for_views({"v": cam}, ["v"], {"v": (SIZE // 2, SIZE // 2)})[0]
    p = np.array([0.1, -0.05, 0.2, 1.0])
    full = proj[0] @ p
    small = half @ p
    assert small[:2] / small[2] == pytest.approx(full[:2] / full[2] / 2)
    # A crop is another framing: scaling K per axis to it would put the readings on other rays.
    with pytest.raises(ValueError, match=rf"^view 'v' is {SIZE}x144 \(aspect 1\.778\), its calibration is "
                                         rf"for {SIZE}x{SIZE} \(1\.000\)"):
        cameras_for_views({"v": cam}, ["v"], {"v": (SIZE, 144)})


def test_a_view_framed_otherwise_than_calibrated_is_refused_before_the_reader_reads_it(tmp_path: Path):
    from robojudge.kiva.multiview import ViewOffCalibration, read_views

    # view b: 16x9 cut from the square camera's 16x16
    frames, item, cams, read, tracks = _two_views(tmp_path, lambda f: f[:, 4:13], calibration="rig.json")
    with pytest.raises(ViewOffCalibration, match=r"^field calibration: rig\.json: view 'b' is 16x9 "
                                                 r"\(aspect 1\.778\), its calibration is for 16x16"):
        read_views(tracks, item, cams, main=("a", tracks(frames, 10.0)))
    assert read == [6]  # the main view only: view b never reached the reader
    # The main view is checked too (a calibration for 32x16 of the 16x16 main view).
    with pytest.raises(ViewOffCalibration, match=r"view 'a' is 16x16 \(aspect 1\.000\), its calibration is "
                                                 r"for 32x16"):
        read_views(tracks, item, {"a": cams["a"].model_copy(update={"size": (32, 16)}), "b": cams["b"]},
                   main=("a", tracks(frames, 10.0)))


def _mv_manifest(root: Path) -> Path:
    """Two faithful rollouts with three views and one with a planted failure, keypoints in every view."""
    from robojudge.video import write_video

    for sub in ("videos", "state", "reference"):
        (root / sub).mkdir()
    names, views = ["a", "b"], ["cam0", "cam1", "cam2"]
    frames = np.zeros((6, 20, 40, 3), np.uint8)
    rows = []
    for item, failures in (("c0-ok", []), ("c0-bad", [{"type": "jitter"}])):
        paths = {}
        for v in views:
            write_video(root / f"videos/{item}_{v}.mp4", frames, fps=10)
            paths[v] = f"videos/{item}_{v}.mp4"
        kp2 = np.zeros((6, 3, 2, 2), np.float32)
        kp2[..., 0] = np.arange(3)[None, :, None] * 10 + 1  # view v's keypoints at x = 10 v + 1
        np.savez(root / f"state/{item}.npz", keypoint_names=np.array(names), view_names=np.array(views),
                 keypoints_2d=kp2, keypoints_visible=np.ones((6, 3, 2), bool))
        rows.append({"item_id": item, "video": paths["cam0"], "views": paths, "main_view": "cam0",
                     "clip_id": "c0", "state": f"state/{item}.npz", "meta": {"failures": failures}})
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_training_on_all_views_takes_each_view_of_a_faithful_rollout_with_its_own_keypoints(tmp_path):
    from robojudge.kiva import episodes_from_manifest
    from robojudge.kiva._data import load_episode

    manifest = _mv_manifest(tmp_path)
    main, _ = episodes_from_manifest(manifest)
    assert [(e.name, e.view) for e in main] == [("c0-ok", 0)]
    every, names = episodes_from_manifest(manifest, all_views=True)
    assert [(e.name, e.view, e.view_name, e.video.name) for e in every] == [
        ("c0-ok", 0, "cam0", "c0-ok_cam0.mp4"),
        ("c0-ok@cam1", 1, "cam1", "c0-ok_cam1.mp4"),
        ("c0-ok@cam2", 2, "cam2", "c0-ok_cam2.mp4"),
    ]
    assert {e.group for e in every} == {"c0"}  # one clip: never split between training and held-out
    xs = [float(load_episode(e, names, 40).keypoints[0, 0, 0]) for e in every]
    assert xs == [1.0, 11.0, 21.0]  # each view's own keypoints (frames 40 px wide, read at 40 px)


def test_the_training_setting_defaults_to_the_main_view():
    from robojudge.kiva import TrainConfig

    assert TrainConfig().views == "main"
    assert TrainConfig(views="all").views == "all"
    with pytest.raises(ValueError):
        TrainConfig(views="some")


# ------------------------------------------------------------------ on the simulator (slow)


@pytest.fixture(scope="module")
def mv_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mujoco")
    import os

    os.environ.setdefault("MUJOCO_GL", "egl")
    from robojudge.suite.sim import make_sim_suite

    out = tmp_path_factory.mktemp("kiva_mv_suite")
    # Worker processes render, never this one (torch trains here afterwards; see docs/kiva.md, Notes).
    return make_sim_suite(out, seed=0, episodes=2, views=3, size=64, profiles=("oracle",),
                          scenes=["pick_and_place", "push"], workers=2, calibration=True)


@pytest.mark.slow
def test_the_simulators_keypoints_triangulate_to_its_3d_keypoints(mv_suite: Path):
    from robojudge.suite import load_suite

    for item in load_suite(mv_suite).items:
        with np.load(item.state) as z:
            kp2, vis, kp3 = z["keypoints_2d"].astype(np.float64), z["keypoints_visible"], z["keypoints_3d"]
            proj = projection_matrix(z["K"][None], z["R"], z["t"])
        tri = triangulate(kp2, vis, proj, max_error=0.5)
        seen = vis.sum(axis=1) >= 2
        assert seen.sum() > 20 and (tri.ok == seen).all()
        err = np.linalg.norm(tri.points - kp3, axis=-1)[seen]
        assert err.max() < 1e-4  # sub-millimetre
        noisy = kp2 + np.random.default_rng(0).normal(0.0, 0.3, kp2.shape)
        tri = triangulate(noisy, vis, proj)
        err = np.linalg.norm(tri.points - kp3, axis=-1)[seen]
        # 0.3 px at 64 px is about 3 mm at these distances; a misplaced body would be centimetres off.
        assert 1e-4 < np.median(err) < 0.01, np.median(err)


@pytest.fixture(scope="module")
def mv_reader(mv_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from _kiva_consts import TINY

    from robojudge.kiva import TrainConfig, train_reader

    out = tmp_path_factory.mktemp("kiva_mv_reader")
    train_reader(mv_suite, "fetch", out, TrainConfig(**{**TINY, "holdout": 0.5, "views": "all"}))
    return out


@pytest.mark.slow
def test_a_reader_trained_on_every_view_reads_each_of_them(mv_reader: Path, mv_suite: Path):
    from _kiva_consts import TINY

    from robojudge.kiva import episodes_from_manifest, load_reader
    from robojudge.kiva._data import load_episode

    meta = load_reader(mv_reader).meta
    assert meta["config"]["views"] == "all"
    held = meta["episodes"]["held_out"]
    assert {h.split("@")[1] for h in held if "@" in h} == {"cam1", "cam2"}  # the held-out clip in each view
    assert set(meta["held_out_error_by_view"]) == {"cam0", "cam1", "cam2"}
    assert meta["losses"][-1] < meta["losses"][0] / 2
    # As the single-view training test: against guessing each keypoint's mean training position, on the
    # clip never seen, in every view. One training clip here (the tests' budget), so the bound is looser.
    episodes, names = episodes_from_manifest(mv_suite, meta["keypoints"], all_views=True)
    data = {e.name: load_episode(e, names, TINY["size"]) for e in episodes}
    train = [data[n] for n in meta["episodes"]["train"]]
    kp, vis = np.concatenate([d.keypoints for d in train]), np.concatenate([d.visible for d in train])
    guess = np.array([kp[vis[:, k], k].mean(axis=0) if vis[:, k].any() else [16.0, 16.0]
                      for k in range(len(names))])
    for view, err in meta["held_out_error_by_view"].items():
        mine = [data[n] for n in held if data[n].episode.view_name == view]
        guess_err = np.concatenate([np.linalg.norm(d.keypoints - guess, axis=-1)[d.visible] for d in mine])
        assert err["keypoints"] == len(guess_err) > 0, view
        assert err["mean_px"] < 0.7 * guess_err.mean(), (view, err, guess_err.mean())
        assert err["fraction_of_diagonal"] < 0.15, (view, err)


@pytest.fixture(scope="module")
def mv_calibrated(mv_reader: Path, mv_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multi-view reader calibrated on the suite's references and, in 3D, its faithful rollouts (by
    the command line)."""
    import shutil

    from typer.testing import CliRunner

    from robojudge.cli import app

    out = tmp_path_factory.mktemp("kiva_mv_calibrated") / "reader"
    shutil.copytree(mv_reader, out)
    done = CliRunner().invoke(app, ["kiva", "calibrate", "--reader", str(out), "--episodes", str(mv_suite),
                                    "--multiview-rollouts"])
    assert done.exit_code == 0, done.output
    assert "3D rigidity" in done.output and "of 2 multi-view videos" in done.output
    return out


@pytest.mark.slow
def test_calibration_sets_a_3d_threshold_only_from_multi_view_real_videos(mv_reader, mv_calibrated, mv_suite,
                                                                          tmp_path):
    import shutil

    from robojudge.kiva import calibrate_reader, load_reader

    plain = tmp_path / "plain"
    shutil.copytree(mv_reader, plain)
    cal = calibrate_reader(plain, mv_suite)  # references are one view each; rollouts not asked for
    assert cal["rigidity_3d"] is None and cal["videos_3d"] == [] and cal["segments_3d"] == 0
    assert math.isnan(load_reader(plain).rigidity_3d)
    cal = load_reader(mv_calibrated).meta["calibration"]
    assert cal["videos_3d"] == ["fetch00-oracle", "fetchpush01-oracle"]
    assert cal["segments_3d"] > 0 and 0 < cal["rigidity_3d"] < 1
    assert cal["rigidity"] == load_reader(plain).meta["calibration"]["rigidity"]  # 2D: as without 3D


def _true_readings(item, stretch: float = 0.0, link: tuple[str, str] = ("robot0:wrist_roll_link",
                                                                         "robot0:gripper_link")):
    """What a perfect reader would read in every view of a rollout (in-frame keypoints), optionally with
    ``link``'s child moved along the main camera's line of sight on frames 16-31 by up to ``stretch`` m."""
    from robojudge.kiva import resolve_robot
    from robojudge.kiva.multiview import ViewReadings

    names = list(resolve_robot("fetch").keypoints)
    with np.load(item.state) as z:
        stored = [str(x) for x in z["keypoint_names"]]
        kp3 = z["keypoints_3d"][:, [stored.index(k) for k in names]].astype(np.float64)
        k, r, t = z["K"], z["R"], z["t"]
    child = names.index(link[1])
    if stretch:
        centre = -np.einsum("tji,tj->ti", r[:, 0], t[:, 0])  # camera 0's position per frame
        ray = kp3[:, child] - centre
        ray /= np.linalg.norm(ray, axis=-1, keepdims=True)
        along = np.r_[np.zeros(16), np.linspace(0, stretch, 16), np.zeros(len(kp3) - 32)]
        kp3[:, child] += along[:, None] * ray
    uv, vis = zip(*(project(kp3, k[v], r[:, v], t[:, v], 64) for v in range(3)), strict=True)
    proj = projection_matrix(k[None], r, t)[0]
    return ViewReadings(["cam0", "cam1", "cam2"], np.stack(uv, 1), np.stack(vis, 1), proj, 64 * 2**0.5), kp3


@pytest.mark.slow
def test_a_stretch_along_the_main_views_line_of_sight_is_flagged_in_3d_by_the_metric(
    mv_calibrated, mv_suite, monkeypatch, tmp_path
):
    import shutil

    import robojudge.kiva.multiview as views3d
    from robojudge.kiva import load_reader, resolve_robot
    from robojudge.kiva._reader import _write
    from robojudge.metrics import get_metric
    from robojudge.suite import load_suite

    # The tests' tiny reader reads too coarsely for a useful 3D threshold (its own is about 0.4); the
    # readings below are exact, so the threshold is set to a plain 2% here.
    folder = tmp_path / "reader"
    shutil.copytree(mv_calibrated, folder)
    reader = load_reader(folder)
    reader.meta["calibration"]["rigidity_3d"] = 0.02
    _write(folder, reader.net.state_dict(), reader.meta)
    item = load_suite(mv_suite).by_id("fetch00-oracle")
    spec = get_metric("kiva_rigidity")
    cfg = spec.make_config({"reader": str(folder / "reader.pt")})
    clean, _ = _true_readings(item)
    stretched, kp3 = _true_readings(item, stretch=0.08)
    # The main view sees the stretched link exactly as before: its 2D lengths do not change.
    main_now, main_before = (np.nan_to_num(x.positions[:, 0]) for x in (stretched, clean))
    assert np.allclose(main_now, main_before, atol=1e-6)
    names = list(resolve_robot("fetch").keypoints)
    a, b = names.index("robot0:wrist_roll_link"), names.index("robot0:gripper_link")
    true_len = np.linalg.norm(kp3[16:32, b] - kp3[16:32, a], axis=-1)
    assert true_len.max() - true_len.min() > 0.03  # ... while the link grows by centimetres

    scores = {}
    for name, readings in (("clean", clean), ("stretched", stretched)):
        monkeypatch.setattr(views3d, "read_views", lambda *_a, r=readings, **_k: r)
        from robojudge.metrics.learned import kiva as kiva_metric

        kiva_metric._VALUES_3D.clear()
        scores[name] = spec.compute(item, cfg)
    segs = {n: s.details["segments"] for n, s in scores.items()}
    assert [s["rigidity_measure"] for s in segs["stretched"]][:2] == ["3d", "3d"]
    assert scores["stretched"].details["measure"].startswith("3d")
    assert segs["clean"][1]["rigidity"] < 1e-6 and segs["clean"][1]["rigidity_invalid"] is False
    assert segs["stretched"][1]["rigidity"] > 0.05 and segs["stretched"][1]["rigidity_invalid"] is True
    assert scores["stretched"].details["thresholds"]["rigidity_3d"] == 0.02
    assert segs["stretched"][0]["rigidity_invalid"] is False  # the segment before it stays clean
    assert scores["stretched"].value > scores["clean"].value


@pytest.mark.slow
def test_a_single_view_item_or_one_without_calibration_is_measured_in_2d_and_says_why(mv_calibrated,
                                                                                      mv_suite):
    from robojudge.kiva import load_reader
    from robojudge.metrics import get_metric
    from robojudge.suite import load_suite

    assert not math.isnan(load_reader(mv_calibrated).rigidity_3d)
    item = load_suite(mv_suite).by_id("fetch00-oracle")
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(Path(mv_calibrated) / "reader.pt")})
    single = item.model_copy(update={"views": None, "main_view": None})
    uncalibrated = item.model_copy(update={"calibration": None})
    for it, why in ((single, "the item has one view"), (uncalibrated, "no calibration")):
        score = spec.compute(it, cfg)
        assert score.details["measure"] == "2d", score.details
        assert why in score.details["measure_2d_reason"]
        assert {s["rigidity_measure"] for s in score.details["segments"]} <= {"2d", None}
    forced = spec.compute(item, spec.make_config({"reader": cfg.reader, "measure": "2d"}))
    assert forced.details["measure"] == "2d" and forced.details["measure_2d_reason"] == "measure is set to 2d"
    assert forced.details["segments"] == spec.compute(single, cfg).details["segments"]


@pytest.mark.slow
def test_views_out_of_step_or_framed_otherwise_are_measured_in_2d_and_the_reason_names_the_view(
    mv_calibrated, mv_suite, tmp_path
):
    from robojudge.metrics import get_metric
    from robojudge.metrics.learned import kiva as kiva_metric
    from robojudge.suite import load_suite
    from robojudge.video import sample_frames, write_video

    item = load_suite(mv_suite).by_id("fetch00-oracle")
    assert item.views is not None
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(Path(mv_calibrated) / "reader.pt")})
    cam2 = sample_frames(item.views["cam2"], fps=None, max_frames=None)
    # cam2's frames tagged at twice the rate, and cam2 two frames short: frame t is no longer the instant
    # frame t of cam0 shows (the audit's 20 fps view doubled the value, read in 3D)
    write_video(tmp_path / "fast", cam2.frames, fps=2 * cam2.source_fps)
    write_video(tmp_path / "short", cam2.frames[:-2], fps=cam2.source_fps)
    # ... and cam2 cropped to 64x48 from its calibrated 64x64: another framing, not the view resized
    write_video(tmp_path / "crop", cam2.frames[:, 8:56], fps=cam2.source_fps)
    for name, words in (("fast", "view 'cam2' runs at"), ("short", "frame counts"),
                        ("crop", "view 'cam2' is 64x48 (aspect 1.333), its calibration is for 64x64")):
        kiva_metric._VALUES_3D.clear()
        odd = item.model_copy(update={"views": {**item.views, "cam2": str(tmp_path / name)}})
        score = spec.compute(odd, cfg)
        assert score.details["measure"] == "2d", score.details
        why = score.details["measure_2d_reason"]
        assert words in why and why.endswith(": rigidity is measured in 2D"), why
        assert {s["rigidity_measure"] for s in score.details["segments"]} <= {"2d", None}


# ------------------------------------------------------------------ scripts/kiva_3d.py's statistics (fast)


def test_the_measurement_script_ranks_a_less_rigid_segment_as_worse_as_scipy_does():
    import importlib.util
    import sys

    from scipy import stats

    path = Path(__file__).resolve().parents[2] / "scripts" / "kiva_3d.py"
    spec = importlib.util.spec_from_file_location("kiva_3d_script", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kiva_3d_script"] = mod
    spec.loader.exec_module(mod)
    verdicts = ["Good"] * 4 + ["Medium", "Bad", "Medium", "Good"]
    fails = [[]] * 4 + [["link_stretch"], ["link_stretch"], ["bend"], []]
    true_3d = [0.0, 0.001, 0.0, 0.002, 0.05, 0.09, 0.0, float("nan")]
    rows = [{"verdict": v, "failures": f, "true_3d": x}
            for v, f, x in zip(verdicts, fails, true_3d, strict=True)]
    out = mod.summarise(rows, ["true_3d"])
    levels = [{"Good": 0, "Medium": 1, "Bad": 2}[v] for v in verdicts[:7]]
    want = stats.spearmanr(true_3d[:7], levels).statistic
    assert out["rho"]["true_3d"] == {"rho": pytest.approx(want), "n": 7, "unscored": 1}
    assert want > 0.5  # larger coefficients of variation on worse segments: a positive rho
    sub = [0, 1, 2, 3, 4, 5]  # clean or stretch only (the bend and the unscored segment left out)
    assert out["rho_stretch_or_clean"]["true_3d"] == pytest.approx(
        stats.spearmanr([true_3d[i] for i in sub], [levels[i] for i in sub]).statistic)
    assert out["by_failure"]["link_stretch"]["true_3d"] == {"median": pytest.approx(0.07), "measured": 2}
    # Both stretched segments above all four clean ones: AUC 1; one tie would count half.
    assert out["auc_stretch_vs_clean"]["true_3d"] == {"auc": 1.0, "stretched": 2, "clean": 4}
    rows[4]["true_3d"] = 0.001
    auc = mod.summarise(rows, ["true_3d"])["auc_stretch_vs_clean"]["true_3d"]["auc"]
    assert auc == pytest.approx((4 + 2 + 0.5) / 8)  # 0.09 beats all; 0.001 beats two zeros, ties one


def test_the_cli_takes_the_views_setting_and_names_a_wrong_one():
    from typer.testing import CliRunner

    from robojudge.cli import app

    bad = CliRunner().invoke(app, ["kiva", "train", "--episodes", "x.jsonl", "--robot", "fetch", "--out", "o",
                                   "--views", "some"])
    assert bad.exit_code != 0 and "views" in bad.output and "'main' or 'all'" in bad.output


@pytest.mark.slow
def test_the_finger_check_can_be_switched_off(mv_calibrated, mv_suite):
    from robojudge.metrics import get_metric
    from robojudge.suite import load_suite

    item = load_suite(mv_suite).by_id("fetch00-oracle")
    spec = get_metric("kiva")
    reader = str(Path(mv_calibrated) / "reader.pt")
    on = spec.compute(item, spec.make_config({"reader": reader}))
    off = spec.compute(item, spec.make_config({"reader": reader, "finger_check": False}))
    assert any("finger" in s for s in on.details["segments"])  # Fetch's two finger slides are a pair
    assert not any("finger" in s for s in off.details["segments"])
    assert [s["jerk"] for s in on.details["segments"]] == [s["jerk"] for s in off.details["segments"]]


@pytest.mark.slow
def test_a_view_of_another_shape_is_refused_in_3d_too(mv_calibrated, mv_suite, tmp_path):
    """Every view read in 3D is squashed to the reader's square as the main video is: a view of another
    shape than the training videos is refused as the main video would be (it was read squashed, and in
    3D it decides the rigidity whatever the 2D threshold). Its calibration is widened with it, so the
    calibration's own framing check (a view framed otherwise than calibrated is measured in 2D) passes."""
    import json

    import cv2

    from robojudge.metrics import MetricInputError, get_metric
    from robojudge.suite import load_suite
    from robojudge.video import sample_frames, write_video

    item = load_suite(mv_suite).by_id("fetch00-oracle")
    other = next(n for n in item.views if item.views[n] != item.video)
    frames = sample_frames(item.views[other], fps=None, max_frames=None)
    h, w = frames.frames.shape[1:3]
    wide = np.stack([cv2.resize(f, (w * 3 // 2, h)) for f in frames.frames])
    write_video(tmp_path / "wide.mp4", wide, fps=frames.source_fps)
    views = {**item.views, other: str(tmp_path / "wide.mp4")}
    rig = json.loads(Path(str(item.calibration)).read_text())
    (fx, _, cx), row1, row2 = rig[other]["K"]
    rig[other] = {**rig[other], "K": [[fx * 1.5, 0.0, cx * 1.5], row1, row2], "size": [w * 3 // 2, h]}
    (tmp_path / "rig.json").write_text(json.dumps(rig))
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(mv_calibrated)})
    said = rf"view read in 3D is {w * 3 // 2}x{h} \(width/height 1\.500\)"
    with pytest.raises(MetricInputError, match=said):
        spec.compute(item.model_copy(update={"views": views, "calibration": str(tmp_path / "rig.json")}), cfg)
