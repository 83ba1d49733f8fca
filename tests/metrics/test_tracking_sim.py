"""Trajectory and localization metrics end to end on simulated rollouts with a planted wrong target."""

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.metrics import MetricInputError, get_metric  # noqa: E402
from robojudge.metrics.robophys.tracking import TrackingConfig, item_tracks  # noqa: E402
from robojudge.suite import Item  # noqa: E402

SIZE = 64
TA = ("ta_hsd", "ta_ndtw", "ta_dyn")
OL = ("ol_average_precision", "ol_average_recall")


@pytest.fixture(scope="module")
def rollouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Item]:
    """A pick-and-place episode rendered faithfully (also the reference) and with a wrong target."""
    from robojudge.suite.sim._build import _state_arrays
    from robojudge.suite.sim._failures import Editor
    from robojudge.suite.sim._policy import FPS, faithful_episode, object_positions, run_episode
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env
    from robojudge.video import write_video

    out = tmp_path_factory.mktemp("tracking_sim")
    env = make_env("pick_and_place", SIZE)
    ep = faithful_episode(env, "pick_and_place", np.random.default_rng(0), 0)
    renderer = SceneRenderer(env.model, "pick_and_place", SIZE, 1)
    paths = {}
    try:
        for name, episode in (
            ("faithful", ep),
            ("wrong", run_episode(env, "pick_and_place", ep.layout, 0, "wrong_target", 0.9)),
        ):
            ed = Editor(env.model, episode, object_positions(env.model, episode, "object0"))
            frames, raw = renderer.render(ed.plan, ep.layout.goal)
            write_video(out / f"{name}.mp4", frames[0], fps=FPS)
            np.savez_compressed(
                out / f"{name}.npz", **_state_arrays(raw, episode, renderer, ed.plan, ep.layout.goal)
            )
            paths[name] = out / name
    finally:
        renderer.close()
    ref_dir = out / "ref"
    ref_dir.mkdir()
    (ref_dir / "clip.mp4").write_bytes((out / "faithful.mp4").read_bytes())
    items = {
        name: Item(
            item_id=name, video=f"{p}.mp4", reference_video=str(ref_dir / "clip.mp4"), state=f"{p}.npz"
        )
        for name, p in paths.items()
    }
    return items


def _scores(item: Item) -> dict[str, float]:
    return {m: get_metric(m).compute(item).value for m in (*TA, *OL)}


@pytest.mark.slow
def test_wrong_target_scores_worse_than_faithful(rollouts: dict[str, Item]) -> None:
    faithful, wrong = _scores(rollouts["faithful"]), _scores(rollouts["wrong"])
    # The faithful rollout is the reference video itself: identical tracks, distance 0, score 1.
    assert all(faithful[m] == 1.0 for m in TA)
    assert faithful["ol_average_precision"] == 1.0 and faithful["ol_average_recall"] == 1.0
    assert wrong["ta_hsd"] < 0.5 < faithful["ta_hsd"]
    assert wrong["ta_ndtw"] < faithful["ta_ndtw"] and wrong["ta_dyn"] < faithful["ta_dyn"]
    assert wrong["ol_average_precision"] < faithful["ol_average_precision"]
    details = get_metric("ta_hsd").compute(rollouts["wrong"]).details
    assert details["truth"] == "tracked_reference" and details["selected"] in ("ee", "object")


@pytest.mark.slow
def test_reference_state_file_is_the_truth_when_present(rollouts: dict[str, Item]) -> None:
    ref = Path(rollouts["faithful"].reference_video or "")
    npz = ref.with_suffix(".npz")
    npz.write_bytes(Path(rollouts["faithful"].state or "").read_bytes())
    try:
        gen, truth, source, *_ = item_tracks(rollouts["faithful"], TrackingConfig())
        assert source == "reference_state"
        # The tracker on the faithful video against the simulator's own truth (64 px frames):
        # the object's centroid within 1.5 px on every frame it is found.
        k = gen.index("object")
        err = np.linalg.norm(gen.points[:, k] - truth.points[:, k], axis=1)
        assert np.nanmax(err) < 1.5
        # At 64 px the tracker keeps to the gripper's body about 0.07 of the frame off its true point:
        # checked on the reference video against its state, the end effector is left unmeasured (the
        # faithful video, the reference itself, scored 0.2 against its own truth), the object is scored.
        for m in TA:
            left = get_metric(m).compute(rollouts["faithful"])
            assert np.isnan(left.value), m
            assert left.details["unscored_reason"].startswith(
                "the reference's farthest-moving track, ee: the tracker follows ee on ")
            assert left.details["tracks"]["ee"]["reference_followed"] < 0.5
        obj = {m: get_metric(m).make_config({"targets": ["object"]}) for m in TA}
        faithful = {m: get_metric(m).compute(rollouts["faithful"], obj[m]) for m in TA}
        wrong = {m: get_metric(m).compute(rollouts["wrong"], obj[m]).value for m in TA}
        assert faithful["ta_hsd"].value == 1.0 and faithful["ta_ndtw"].value == 1.0
        assert faithful["ta_hsd"].details["tracks"]["object"]["reference_followed"] == 1.0
        assert faithful["ta_hsd"].details["tracks"]["object"]["reference_score"] == 1.0
        assert all(wrong[m] < faithful[m].value for m in ("ta_hsd", "ta_ndtw"))
        # DYN compares the tracker's frame-to-frame jitter with the simulator's smooth motion: the
        # reference video itself scores about 0.2 against its own truth, so DYN is unmeasured here
        dyn = faithful["ta_dyn"]
        assert np.isnan(dyn.value) and np.isnan(wrong["ta_dyn"])
        assert "the reference video itself scores 0.2" in dyn.details["unscored_reason"]
        ap = get_metric("ol_average_precision").compute(rollouts["faithful"])
        assert ap.details["objects"]["object"]["reference_ap"] == ap.value  # faithful = reference
        assert (get_metric("ol_average_recall").compute(rollouts["wrong"]).value
                < get_metric("ol_average_recall").compute(rollouts["faithful"]).value)
        # Forcing the tracked reference: the faithful video is the reference, so its tracks match.
        forced = get_metric("ta_hsd").make_config({"truth": "tracked_reference"})
        score = get_metric("ta_hsd").compute(rollouts["faithful"], forced)
        assert score.value == 1.0 and score.details["truth"] == "tracked_reference"
    finally:
        npz.unlink()


def test_missing_inputs_are_named(tmp_path: Path) -> None:
    no_state = Item(item_id="a", video="v.mp4", reference_video="r.mp4")
    with pytest.raises(MetricInputError, match="no state file"):
        get_metric("ta_hsd").compute(no_state)
    no_ref = Item(item_id="a", video="v.mp4", state="s.npz")
    with pytest.raises(MetricInputError, match="no reference_video"):
        get_metric("ol_average_recall").compute(no_ref)
    with pytest.raises(MetricInputError, match=r"no reference state file .*r\.npz"):
        spec = get_metric("ta_hsd")
        spec.compute(
            Item(item_id="a", video="v.mp4", reference_video="r.mp4", state="s.npz"),
            spec.make_config({"truth": "reference_state"}),
        )
    with pytest.raises(ValueError, match="unknown tracker 'cotrakcer'"):
        get_metric("ta_dyn").make_config({"tracker": "cotrakcer"})
    bad = tmp_path / "s.npz"
    np.savez(bad, masks=np.zeros((2, 1, 4, 4), np.uint8))
    video = tmp_path / "v.mp4"
    from robojudge.video import write_video

    write_video(video, np.zeros((3, 16, 16, 3), np.uint8), fps=10)
    broken = Item(item_id="a", video=str(video), reference_video=str(video), state=str(bad))
    with pytest.raises(MetricInputError, match=r"s\.npz has no \['ee_pos'"):
        get_metric("ta_ndtw").compute(broken)


def test_the_trackers_declare_the_main_video_sampling_they_read(rollouts: dict[str, Item]) -> None:
    # What TrackingConfig.main_video_samplings declares (the runner decodes it with the item's other
    # samplings) is exactly what the trackers read of the main video.
    from _samplings import read_and_declared
    from robojudge.metrics.robophys.tracking import _cached_tracks

    item = rollouts["wrong"]
    _cached_tracks.cache_clear()  # tracks cached by the other tests would be served without reading
    read, declared = read_and_declared(item, "ta_hsd")
    assert read == declared and len(declared) == 1
    cfg = get_metric("ta_hsd").make_config()
    assert cfg.main_video_samplings(item.model_copy(update={"state": None})) == []


@pytest.mark.slow
def test_an_object_the_state_file_never_shows_early_is_unscored_with_the_reason(
    rollouts: dict[str, Item], tmp_path: Path
) -> None:
    """Nothing to seed the object's track with: readable inputs with nothing to measure, so NaN and why
    (version 3; version 2 stored an error row, which the demo listed among its failures)."""
    import math

    from robojudge.metrics.tracking._sim import REGION_CLASSES

    state = dict(np.load(rollouts["wrong"].state or ""))
    masks = state["masks"].copy()
    masks[:20][masks[:20] == REGION_CLASSES["object"]] = 0  # hidden past the tracker's look-ahead
    state["masks"] = masks
    np.savez_compressed(tmp_path / "hidden.npz", **state)
    item = rollouts["wrong"].model_copy(update={"state": str(tmp_path / "hidden.npz")})
    for metric in OL:
        score = get_metric(metric).compute(item)
        assert math.isnan(score.value), metric
        reason = score.details["unscored_reason"]
        assert reason.startswith("no reference object to localize among ['object'] (object: not tracked")
        assert "nothing to seed" in score.details["objects"]["object"]
    spec = get_metric("ta_hsd")
    only_object = spec.compute(item, spec.make_config({"targets": ["object"]}))
    assert math.isnan(only_object.value)
    assert "no usable reference track among ['object']" in only_object.details["unscored_reason"]
    # The end effector is still there to compare, but the tracked reference (seeded the same way) has no
    # object track either, so which of the two moves farthest cannot be told: the end effector does not
    # stand in for it (version 4; version 3 scored it).
    both = spec.compute(item)
    assert math.isnan(both.value)
    assert both.details["unscored_reason"].startswith("cannot tell which reference track moves farthest: obj")
    only_ee = spec.compute(item, spec.make_config({"targets": ["ee"]}))
    assert not math.isnan(only_ee.value)


def test_a_rollout_framed_unlike_its_reference_is_unscored(rollouts: dict[str, Item], tmp_path: Path) -> None:
    # The faithful rollout on a wider canvas (the same pixels with 16 px borders left and right): its
    # state file's seed, scaled per axis to 96x64, lay on other pixels and the object was lost (audit
    # "sizes", F4). Unscored with both sizes named; the same framing at twice the size is still tracked.
    import cv2

    from robojudge.video import sample_frames, write_video

    faithful = rollouts["faithful"]
    frames = sample_frames(faithful.video, fps=None, max_frames=None).frames
    padded = np.stack([cv2.copyMakeBorder(f, 0, 0, 16, 16, cv2.BORDER_CONSTANT, value=(0, 0, 0))
                       for f in frames])
    write_video(tmp_path / "padded.mp4", padded, fps=10)
    item = faithful.model_copy(update={"video": str(tmp_path / "padded.mp4")})
    for m in (*TA, *OL):
        score = get_metric(m).compute(item)
        assert np.isnan(score.value), m
        assert score.details["unscored_reason"].startswith(
            f"the video is 96x{SIZE} (aspect 1.500), its reference {SIZE}x{SIZE} (1.000)"), m
        assert "the state file's masks and positions would be scaled onto the wrong pixels" in (
            score.details["unscored_reason"])
        assert score.details["video_size"] == f"96x{SIZE}"
    doubled = np.stack([cv2.resize(f, (2 * SIZE, 2 * SIZE), interpolation=cv2.INTER_LINEAR) for f in frames])
    write_video(tmp_path / "doubled.mp4", doubled, fps=10)
    same = get_metric("ta_hsd").compute(faithful.model_copy(update={"video": str(tmp_path / "doubled.mp4")}))
    assert np.isfinite(same.value)


def test_videos_framed_otherwise_than_the_state_s_masks_are_unscored(
    rollouts: dict[str, Item], tmp_path: Path
) -> None:
    # The rollout and its reference both padded the same way agree with each other, but not with the
    # square picture the state's masks were rendered on: scaled per axis, the seeds and truth landed on
    # other pixels. Unscored, naming both sizes and the file.
    import cv2

    from robojudge.video import sample_frames, write_video

    faithful = rollouts["faithful"]
    padded = {}
    for field in ("video", "reference_video"):
        frames = sample_frames(getattr(faithful, field), fps=None, max_frames=None).frames
        out = tmp_path / f"{field}.mp4"
        write_video(out, np.stack([cv2.copyMakeBorder(f, 0, 0, 16, 16, cv2.BORDER_CONSTANT, value=(0, 0, 0))
                                   for f in frames]), fps=10)
        padded[field] = str(out)
    item = faithful.model_copy(update=padded)
    for m in ("ta_hsd", "ol_average_precision"):
        score = get_metric(m).compute(item)
        assert np.isnan(score.value), m
        assert score.details["unscored_reason"].startswith(
            f"the videos are 96x{SIZE} (aspect 1.500) and the masks of the state file "
            f"{SIZE}x{SIZE} (1.000)"), m
        assert score.details["state_size"] == f"{SIZE}x{SIZE}"
