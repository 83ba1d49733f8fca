"""The fast evaluation profile (``robojudge score --fast``, ``FrameOptions(profile="fast")``).

It changes what the native-size metrics compute (a 640 px longer side, DIS ``fast`` at every size,
about 8 consecutive pairs per second, half of ``rbg_stability``'s pairs, float32 flow lengths, one
Farneback iteration in the RoboJudge App. B.3 pair), so
its values must say so (details, config hash) and must be exactly the functional forms on those inputs;
the native profile must stay what it was.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from _scene import H, W, clean_frames
from typer.testing import CliRunner

import robojudge
from robojudge.cli import app
from robojudge.metrics import FrameOptions, frame_option_values, get_metric
from robojudge.metrics import functional as F
from robojudge.metrics._frames import FAST_SIZE, NativeFrames, evaluation_size, profile_step
from robojudge.metrics.robophys.motion import luma
from robojudge.run import MetricRequest, Task, build_requests, compute_task, library_versions
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

NATIVE = ("cc_photometric", "ctg_camera_control", "mq_dynamic_degree", "mq_flow_score",
          "mq_temporal_flickering", "rbg_stability")
FPS = 24.0  # the fast profile then reads every 3rd pair


@pytest.fixture(scope="module")
def item(tmp_path_factory: pytest.TempPathFactory) -> Item:
    path = tmp_path_factory.mktemp("fast") / "clip.mp4"
    write_video(path, clean_frames(), fps=FPS)
    return Item(item_id="clip", video=str(path))


def test_fast_options_name_their_size_and_profile() -> None:
    fast = {"profile": "fast", "resample": "fast"}
    assert FrameOptions(profile="fast").values() == {"size": FAST_SIZE, **fast}
    assert FrameOptions(profile="fast", size=320).values() == {"size": 320, **fast}
    assert FrameOptions(profile="fast", max_side=320).values() == {"max_side": 320, **fast}
    assert FrameOptions(profile="fast", resample="area").values()["resample"] == "area"
    assert FrameOptions(size=320).values() == {"size": 320}  # native: no profile in the config
    with pytest.raises(ValueError, match="profile"):
        FrameOptions(profile="quick")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="resample"):
        FrameOptions(size=320, resample="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a size"):
        FrameOptions(resample="fast")  # native size: nothing to resample
    assert FrameOptions(max_side=320, resample="fast").values() == {"max_side": 320, "resample": "fast"}


@pytest.mark.parametrize("metric", NATIVE)
def test_fast_resampling_is_part_of_the_config_hash_and_area_is_the_default(metric: str) -> None:
    spec = get_metric(metric)
    fast = {"profile": "fast", "size": FAST_SIZE}
    assert spec.config_hash(spec.make_config({**fast, "resample": "fast"})) != spec.config_hash(
        spec.make_config(fast))
    # area is the default, so naming it leaves the hash of existing results alone
    assert spec.config_hash(spec.make_config({"resample": "area"})) == spec.config_hash(spec.make_config())


def test_a_config_with_the_fast_profile_alone_reads_at_the_fast_size(item: Item) -> None:
    assert evaluation_size(item, NativeFrames(profile="fast")) == FAST_SIZE
    assert evaluation_size(item, NativeFrames(profile="fast", size=96)) == 96
    assert evaluation_size(item, NativeFrames()) is None


@pytest.mark.parametrize("metric", NATIVE)
def test_the_profile_is_part_of_the_config_hash(metric: str) -> None:
    spec = get_metric(metric)
    native, fast = spec.make_config(), spec.make_config({"profile": "fast", "size": FAST_SIZE})
    sized = spec.make_config({"size": FAST_SIZE})
    assert len({spec.config_hash(native), spec.config_hash(fast), spec.config_hash(sized)}) == 3


def test_fast_flow_is_dis_fast_at_every_size_unless_a_preset_is_named() -> None:
    fast = get_metric("mq_flow_score").make_config({"profile": "fast"})
    assert F.estimator_of(fast) == ("dis", "fast")
    named = get_metric("mq_flow_score").make_config({"profile": "fast", "dis_preset": "medium"})
    assert F.estimator_of(named) == ("dis", "medium")
    assert F.estimator_of(get_metric("mq_flow_score").make_config()) == ("dis", "auto")


def test_pair_step_reads_the_same_pairs_as_the_full_sequence() -> None:
    frames = luma(clean_frames()[:7])
    full = F.flow_steps(frames, F.NATIVE_FLOW, crop=30, warp=False)
    every3 = F.flow_steps(frames, F.NATIVE_FLOW, crop=30, warp=False, pair_step=3)
    assert every3.pair_step == 3 and len(every3.mean_magnitude) == 2  # pairs (0, 1) and (3, 4)
    for name in ("mean_magnitude", "top_magnitude", "fb_epe"):
        assert np.array_equal(getattr(every3, name), getattr(full, name)[::3]), name
    with pytest.raises(ValueError, match="pair_step"):
        F.flow_steps(frames, pair_step=0)


def test_fast_values_are_the_functional_forms_on_the_fast_inputs(item: Item) -> None:
    reqs = build_requests(list(NATIVE), frames=FrameOptions(profile="fast", size=96))
    rows = {r.metric: r for r in compute_task(Task(item, tuple(reqs)))}
    assert {m: (r.status, r.details.get("profile"), r.details["frame_size"]) for m, r in rows.items()} == {
        m: ("ok", "fast", f"96x{96 * H // W}") for m in NATIVE}
    assert all(r.config["profile"] == "fast" for r in rows.values())
    # 96 px is within half of the clip's longer side, so the fast profile's frames are bilinear
    assert W <= 2 * 96
    gray = sample_frames(item.video, fps=None, max_frames=None, size=96, gray=True, resample="fast").frames
    step = profile_step(NativeFrames(profile="fast"), FPS)
    assert step == 3
    dis_fast = F.FlowSettings(estimator="dis", dis_preset="fast", magnitude_dtype="float32")
    steps = F.flow_steps(gray, dis_fast, crop=30, warp=False, pair_step=step)
    assert rows["mq_flow_score"].value == pytest.approx(float(steps.mean_magnitude.mean()), rel=1e-12)
    assert rows["cc_photometric"].details["aepe"] == pytest.approx(float(steps.fb_epe.mean()), rel=1e-12)
    # float32 lengths: the same pairs' means as in float64, to far below any difference that matters
    wide = F.flow_steps(gray, F.FlowSettings(estimator="dis", dis_preset="fast"), crop=30, warp=False,
                        pair_step=step)
    assert rows["mq_flow_score"].value != float(wide.mean_magnitude.mean())
    assert rows["mq_flow_score"].value == pytest.approx(float(wide.mean_magnitude.mean()), rel=1e-8)
    camera = F.camera_control(gray[::step])
    assert rows["ctg_camera_control"].value == pytest.approx(camera.value, rel=1e-12)
    stability = F.sustained_stability(gray, pairs_per_interval=4)
    assert rows["rbg_stability"].value == pytest.approx(stability.value, rel=1e-12)


def test_the_native_profile_keeps_its_values_and_details(item: Item) -> None:
    plain = {m: get_metric(m).compute(item) for m in NATIVE}
    rows = compute_task(Task(item, tuple(MetricRequest.build(m) for m in NATIVE)))
    for r in rows:
        assert "profile" not in r.details
        assert r.details.pop("frame_size") == f"{W}x{H}"
        assert r.details.pop("libraries") == library_versions()  # the runner's record, not the metric's
        assert r.details.pop("robojudge") == robojudge.__version__  # the runner's too
        assert (r.value, r.details) == (plain[r.metric].value, plain[r.metric].details), r.metric


def test_cli_fast_says_where_it_applied(item: Item, tmp_path) -> None:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(f'{{"item_id": "clip", "video": "{item.video}"}}\n')
    out = CliRunner().invoke(app, ["score", str(manifest), "-m", "mq_flow_score,pixel_frame_consistency",
                                   "--run-dir", str(tmp_path / "r"), "--fast", "--no-progress"])
    assert out.exit_code == 0, out.output
    assert f"--size {FAST_SIZE}, --fast applied to mq_flow_score;" in out.output
    assert "--fast also set: mq_flow_score magnitude_dtype=float32" in out.output


#: The fast profile's settings of its own, per metric (``FAST_SETTINGS``); the others take none.
OWN = {
    "flow_warp_error": {"iterations": 1},
    "flow_motion_magnitude_farneback": {"iterations": 1},
    "cc_photometric": {"magnitude_dtype": "float32"},
    "mq_flow_score": {"magnitude_dtype": "float32"},
    "mq_dynamic_degree": {"magnitude_dtype": "float32"},
}


def test_the_fast_profile_gives_some_metrics_settings_of_their_own() -> None:
    fast = FrameOptions(profile="fast")
    for metric in (*NATIVE, "flow_warp_error", "flow_motion_magnitude_farneback", "pixel_frame_consistency"):
        framed = fast.values() if metric in NATIVE else {}
        assert frame_option_values(metric, fast) == {**framed, **OWN.get(metric, {})}, metric
        # other frame options give none of them
        assert not set(OWN.get(metric, {})) & set(frame_option_values(metric, FrameOptions(size=320)))
    reqs = {r.id: r.config for r in build_requests(
        ["flow_warp_error", "ctg_camera_control", "pixel_frame_consistency"],
        {"flow_warp_error": {"iterations": 2}}, frames=fast)}
    assert reqs["flow_warp_error"].iterations == 2  # the user's own value wins
    assert reqs["ctg_camera_control"] == get_metric("ctg_camera_control").make_config(fast.values())
    assert reqs["pixel_frame_consistency"] == get_metric("pixel_frame_consistency").make_config()


def test_the_run_names_the_settings_the_profile_gave(item: Item, tmp_path) -> None:
    from robojudge.run import score_suite

    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(f'{{"item_id": "clip", "video": "{item.video}"}}\n')
    run = score_suite(manifest, ["flow_warp_error", "rbg_stability", "flow_motion_magnitude_farneback"],
                      configs={"flow_motion_magnitude_farneback": {"iterations": 2}},
                      run_dir=tmp_path / "r", frames=FrameOptions(profile="fast"))
    assert run.frame_options_applied == ["rbg_stability"]  # the frame options
    assert run.profile_settings == {"flow_warp_error": {"iterations": 1},
                                    "flow_motion_magnitude_farneback": {"iterations": 2}}  # the user's wins


# The fast profile's keys before it had settings of its own (native ones: tests/run/test_eval_size.py):
# rows stored under them were computed otherwise and must not be served again.
OLD_FAST_HASHES = {"ctg_camera_control": "78a60cc3b2484c2f", "cc_photometric": "6144c62a8ecbd0e6",
                   "mq_flow_score": "f0d79e1bd6beedc5", "mq_dynamic_degree": "4bc46cfd80558776"}


@pytest.mark.parametrize("metric", sorted(OLD_FAST_HASHES))
def test_own_settings_change_the_fast_keys_and_only_theirs(metric: str) -> None:
    spec = get_metric(metric)
    old = {"profile": "fast", "size": FAST_SIZE, "resample": "fast"}
    assert spec.config_hash(spec.make_config(old)) == OLD_FAST_HASHES[metric]
    new = spec.make_config(frame_option_values(metric, FrameOptions(profile="fast")))
    # camera control has no setting of its own (its fast rows stay valid); the others compute otherwise
    assert (spec.config_hash(new) == OLD_FAST_HASHES[metric]) == (metric == "ctg_camera_control")


def test_fast_farneback_pair_is_the_pair_with_one_iteration(item: Item) -> None:
    pair = ["flow_warp_error", "flow_motion_magnitude_farneback"]
    reqs = build_requests(pair, frames=FrameOptions(profile="fast"))
    rows = {r.metric: r for r in compute_task(Task(item, tuple(reqs)))}
    for metric in pair:
        spec = get_metric(metric)
        one = spec.compute(item, spec.make_config({"iterations": 1}))
        three = spec.compute(item, spec.make_config())
        assert rows[metric].status == "ok" and rows[metric].config["iterations"] == 1
        assert rows[metric].value == one.value != three.value


def test_camera_control_under_the_profile_follows_the_pans_native_size_follows() -> None:
    """Why the profile does not track fewer frames in camera control (docs/metrics.md): each frame is
    tracked from frame 0 starting where the previous tracked frame's points were, so tracking every 6th
    frame loses a pan that every frame (and every 3rd, the profile's) still follows."""
    rng = np.random.default_rng(1)
    width, fps = 640, 24
    strip = cv2.GaussianBlur((rng.random((360, 3 * width)) * 255).astype(np.uint8), (0, 0), 2)
    px = 0.4 * width / fps  # a pan of 0.4 frame widths a second
    pan = np.stack([strip[:, round(t * px):round(t * px) + width] for t in range(49)])
    native = F.camera_control(pan)
    fast = F.camera_control(pan[::profile_step(NativeFrames(profile="fast"), fps)])
    fewer_frames = F.camera_control(pan[::6])
    assert native.lost_frames == fast.lost_frames == 0
    assert fast.value == pytest.approx(native.value, abs=0.03)
    assert fewer_frames.lost_frames >= 6 and fewer_frames.value < native.value - 0.3
