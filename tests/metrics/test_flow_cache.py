"""robojudge.metrics._flow_cache: each flow an item's metrics need is computed once per item.

Five metrics read optical flow: ``flow_warp_error`` and ``flow_motion_magnitude_farneback`` (Farneback) on
the 8 fps 256x256 gray sampling, ``mq_dynamic_degree``, ``mq_flow_score`` and ``cc_photometric`` (DIS) on the
native gray frames (dynamic degree after its ~8 fps stride). Before the cache each computed its own flows, and
``cc_photometric`` both directions: four native flows per pair on an 8 fps clip, where two are needed.
"""

import gc

import cv2
import numpy as np
import pytest
from _scene import FPS, H, W, clean_frames

import robojudge
from robojudge.metrics import FrameOptions, _derived, _flow_cache, get_metric
from robojudge.metrics import functional as F
from robojudge.metrics.functional import _flow
from robojudge.run import MetricRequest, Task, build_requests, compute_task, library_versions
from robojudge.suite import Item
from robojudge.video import frame_cache, sample_frames, write_video

FLOW_METRICS = ("flow_warp_error", "flow_motion_magnitude_farneback", "mq_dynamic_degree", "mq_flow_score",
                "cc_photometric")


def _count_flows(monkeypatch) -> list[tuple[int, ...]]:
    """Replace OpenCV's Farneback and DIS by counting wrappers; each flow records the frame shape."""
    shapes: list[tuple[int, ...]] = []
    real = cv2.calcOpticalFlowFarneback
    real_dis = _flow._dis_engine

    def counted(prev, *args, **kwargs):
        shapes.append(prev.shape)
        return real(prev, *args, **kwargs)

    class Counted:
        def __init__(self, preset: int) -> None:
            self.engine = real_dis(preset)

        def calc(self, prev, *args):
            shapes.append(prev.shape)
            return self.engine.calc(prev, *args)

    monkeypatch.setattr(cv2, "calcOpticalFlowFarneback", counted)
    monkeypatch.setattr(_flow, "_dis_engine", Counted)
    return shapes


def _clip(tmp_path, fps: float) -> Item:
    path = tmp_path / f"clip{fps:g}.mp4"
    write_video(path, clean_frames(), fps=fps)
    return Item(item_id=f"clip{fps:g}", video=str(path))


@pytest.mark.parametrize("fps", [FPS, 3 * FPS])
def test_each_flow_of_an_item_is_computed_once(tmp_path, monkeypatch, fps):
    item = _clip(tmp_path, fps)
    separate = {m: get_metric(m).compute(item) for m in FLOW_METRICS}  # no frame cache: nothing shared
    shapes = _count_flows(monkeypatch)
    rows = compute_task(Task(item, tuple(MetricRequest.build(m) for m in FLOW_METRICS)))
    # The runner adds the size each metric read the video at; the rest is the metric's own.
    sizes = {r.metric: r.details.pop("frame_size") for r in rows}
    assert {r.details.pop("libraries") for r in rows} == {library_versions()}  # the runner's record
    assert {r.details.pop("robojudge") for r in rows} == {robojudge.__version__}  # the runner's too
    assert {r.metric: (r.value, r.details) for r in rows} == {
        m: (s.value, s.details) for m, s in separate.items()}
    assert sizes == {m: "256x256" if m.startswith("flow_") else f"{W}x{H}" for m in FLOW_METRICS}
    native = len(sample_frames(item.video, fps=None, max_frames=None).frames)
    small = len(sample_frames(item.video, fps=8.0, size=(256, 256), gray=True).frames)
    stride = max(1, round(fps / 8.0))
    # Native: forward and backward once per pair (mq_flow_score, cc_photometric, and dynamic degree when
    # its stride is 1); dynamic degree's strided frames once more when the stride is not 1. 8 fps 256x256:
    # forward once for both RoboJudge metrics.
    expected_native = 2 * (native - 1) + (0 if stride == 1 else len(range(0, native, stride)) - 1)
    assert shapes.count((H, W)) == expected_native
    assert shapes.count((256, 256)) == small - 1
    assert len(shapes) == expected_native + small - 1
    gc.collect()
    assert not _derived._MEMO  # the flows went with the item's frames


def test_settings_and_parameters_that_differ_get_their_own_flow(tmp_path):
    item = _clip(tmp_path, FPS)
    variants = [("mq_flow_score", {}), ("mq_flow_score", {"dis_preset": "fast"}), ("cc_photometric", {}),
                ("cc_photometric", {"crop": 10}), ("mq_dynamic_degree", {"top_fraction": 0.5}),
                ("mq_dynamic_degree", {}), ("flow_warp_error", {"levels": 1})]
    alone = [get_metric(m).compute(item, get_metric(m).make_config(cfg)) for m, cfg in variants]
    with frame_cache():
        shared = [get_metric(m).compute(item, get_metric(m).make_config(cfg)) for m, cfg in variants]
    assert [(s.value, s.details) for s in shared] == [(s.value, s.details) for s in alone]
    assert alone[0].value != alone[1].value and alone[2].value != alone[3].value
    # Farneback's settings do not touch a DIS flow: the same entry serves, the same value comes out.
    dis_only = get_metric("mq_flow_score").make_config({"winsize": 21})
    assert get_metric("mq_flow_score").compute(item, dis_only).value == alone[0].value


def test_a_lone_metric_outside_a_frame_cache_computes_only_what_it_needs(tmp_path, monkeypatch):
    item = _clip(tmp_path, FPS)
    shapes = _count_flows(monkeypatch)
    get_metric("mq_flow_score").compute(item)  # writeable frames: nothing to share, so no backward flow
    assert len(shapes) == len(clean_frames()) - 1


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def test_cached_steps_equal_the_functional_forms():
    gray = _frozen(np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in clean_frames()]))
    steps = _flow_cache.flow_steps(gray, F.FARNEBACK, crop=30, warp=True)
    assert steps is _flow_cache.flow_steps(gray, F.FARNEBACK)  # no crop asked: the entry with one serves
    assert steps.warp_residual is not None
    assert steps.warp_residual.tolist() == F.warp_residuals(gray).tolist()
    assert steps.mean_magnitude.tolist() == F.motion_magnitudes(gray).tolist()
    assert steps.top_magnitude.tolist() == F.dynamic_steps(gray, 0.05, F.FARNEBACK).tolist()
    assert steps.fb_epe is not None and not steps.fb_epe.flags.writeable
    pairs = zip(gray[:-1], gray[1:], strict=True)
    assert steps.fb_epe.tolist() == [F.forward_backward_epe(F.farneback_flow(a, b), F.farneback_flow(b, a))
                                     for a, b in pairs]
    expected = F.photometric_from_steps(steps, min(gray.shape[1:]))
    assert F.photometric_consistency(gray, flow=F.FARNEBACK) == expected
    dis = _flow_cache.flow_steps(gray, F.NATIVE_FLOW, crop=30)  # the native trio's default estimator
    assert dis is not steps and dis.warp_residual is None  # nobody asked for the warp residuals
    with_warp = _flow_cache.flow_steps(gray, F.NATIVE_FLOW, crop=30, warp=True)  # a new entry has them
    assert with_warp is not dis and with_warp.warp_residual is not None
    assert dis.mean_magnitude.tolist() == F.motion_magnitudes(gray, F.NATIVE_FLOW).tolist()
    assert dis.top_magnitude.tolist() == F.dynamic_steps(gray, 0.05).tolist()
    assert F.photometric_consistency(gray) == F.photometric_from_steps(dis, min(gray.shape[1:]))


def test_no_backward_flow_is_computed_ahead_that_photometric_could_not_use(tmp_path, monkeypatch):
    # Dynamic degree with another top fraction makes an entry cc_photometric cannot read (its soft motion
    # needs the top 5%): computing the backward flow for it would be work thrown away.
    item = _clip(tmp_path, FPS)
    shapes = _count_flows(monkeypatch)
    with frame_cache():
        get_metric("mq_dynamic_degree").compute(item, get_metric("mq_dynamic_degree").make_config(
            {"top_fraction": 0.5}))
        get_metric("cc_photometric").compute(item)
    assert len(shapes) == 3 * (len(clean_frames()) - 1)  # forward for one, forward and backward for the other


def test_a_task_without_photometric_computes_no_backward_flow(tmp_path, monkeypatch):
    # The runner says which metrics the task computes: with no reader of the backward flow, mq_flow_score
    # costs one Farneback call per pair, as outside the runner (it paid two before).
    item = _clip(tmp_path, FPS)
    alone = get_metric("mq_flow_score").compute(item)
    shapes = _count_flows(monkeypatch)
    (row,) = compute_task(Task(item, (MetricRequest.build("mq_flow_score"),)))
    assert row.value == alone.value
    assert len(shapes) == len(clean_frames()) - 1


def test_under_the_fast_profile_each_flow_is_computed_once_too(tmp_path, monkeypatch):
    """The profile's own settings (float32 lengths for the DIS trio, one Farneback iteration for the
    RoboJudge pair) are the same within each group, so the groups still share their flows."""
    item = _clip(tmp_path, 3 * FPS)  # every 3rd pair under the profile
    reqs = build_requests(list(FLOW_METRICS), frames=FrameOptions(profile="fast", size=W))
    separate = {r.id: get_metric(r.id).compute(item, r.config) for r in reqs}
    shapes = _count_flows(monkeypatch)
    rows = {r.metric: r for r in compute_task(Task(item, tuple(reqs)))}
    assert {m: r.value for m, r in rows.items()} == {m: s.value for m, s in separate.items()}
    native = len(sample_frames(item.video, fps=None, max_frames=None).frames)
    small = len(sample_frames(item.video, fps=8.0, size=(256, 256), gray=True).frames)
    pairs = len(range(0, native - 1, 3))
    # forward and backward of every 3rd pair (mq_flow_score, cc_photometric), dynamic degree's strided
    # frames; the 8 fps 256x256 forward flow once for both RoboJudge metrics
    assert shapes.count((H, W)) == 2 * pairs + len(range(0, native, 3)) - 1
    assert shapes.count((256, 256)) == small - 1
