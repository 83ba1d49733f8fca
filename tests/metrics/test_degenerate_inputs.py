"""No metric scores a degenerate video as well as a clean one (issue 12, item 6).

Every per-item metric robojudge computes itself (provider ``computed`` or ``model``) is listed in
:data:`CASES` with the degenerate variants of a clean clip that apply to it; the registry is enumerated,
so a new metric without an entry fails :func:`test_every_per_item_metric_has_a_case`. For each case the
metric must either leave the item unscored (NaN, with ``details["unscored_reason"]``) or score it
strictly worse than the clean clip, in the metric's own direction.

The variants, all 128x96 at 8 fps except where said:

* ``one``: the clean clip's first frame alone (the conditioning frame of an image-to-video model);
* ``blank``: flat grey frames, as many as the clean clip;
* ``stopped``: the clean clip's first frame repeated (textured, nothing moves); against the moving
  reference, the frame-paired metrics score ``blank`` and ``stopped`` at their worst, ``iq1_lpips``
  before its network loads (tests/metrics/test_reference_motion.py);
* ``faded``: ``stopped`` whose exposure drifts, 12 levels brighter by the last frame (audit
  "degenerate" F1: a change of the whole frame's brightness is no motion);
* ``flashed``: ``stopped`` with one frame 20 levels brighter (clipped at white), a single flash;
* ``lost``: the first frame, then frames of noise that show nothing of it (no tracker can follow);
* ``short``: the generated video cut to its first 4 of 16 frames (reference metrics);
* ``short_ref``: the clean video against a reference cut to 4 of 16 frames (reference metrics);
* ``two``: the first two frames (a metric that needs three);
* ``state_one``: a simulator state file of one frame (state metrics).

Model metrics run here with no weights at all (an empty ``$ROBOJUDGE_WEIGHTS``): their cases are the
inputs they must refuse before loading a network, so anything but NaN (a value, a missing-weights
error) fails; :func:`test_model_metrics_reach_their_network_on_the_clean_clip` checks the clean clip
does get as far as the network. What a real network says about a stopped or lost video cannot be
checked with a tiny random one; those variants are left out of their rows (docs/metrics.md, "When a
metric cannot measure").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _scene import FPS, H, T, W, clean_frames, state_arrays

from robojudge.metrics import Provider, get_metric, is_set_metric, list_metrics
from robojudge.metrics.robophys.catalog import is_unavailable
from robojudge.models import MissingWeightsError
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

SHORT = 4

VIDEO = ("one", "blank", "stopped", "faded", "flashed", "lost")
REFERENCE = ("one", "blank", "stopped", "lost", "short", "short_ref")
# Model metrics: the variants a metric refuses before its network runs (see the module doc).
STILL_REFUSED = ("one", "blank", "stopped", "faded", "flashed")

CASES: dict[str, tuple[str, ...]] = {
    # computed, from the main video only
    "pixel_frame_consistency": VIDEO,
    "flow_warp_error": VIDEO,
    "flow_motion_magnitude_farneback": VIDEO,
    "mq_temporal_flickering": VIDEO,
    "mq_dynamic_degree": VIDEO,
    "mq_flow_score": VIDEO,
    "cc_photometric": VIDEO,
    "ctg_camera_control": VIDEO,
    "rbg_stability": VIDEO,
    # computed, against the reference video (and the state file for the tracks)
    "iq1_psnr": REFERENCE,
    "iq1_ssim": REFERENCE,
    "ta_hsd": REFERENCE,
    "ta_ndtw": REFERENCE,
    "ta_dyn": REFERENCE,
    "ol_average_precision": REFERENCE,
    "ol_average_recall": REFERENCE,
    # computed, from the state file only
    "cs_collision_count": ("state_one",),
    "sim_task_success": ("state_one",),
    # model, reference-free: refused before the network loads
    "aq_clip_ap": STILL_REFUSED,
    "aq_clip_iqa": STILL_REFUSED,
    "aq_hpsv3": STILL_REFUSED,
    "aq_laion_ap": STILL_REFUSED,
    "cc_background": STILL_REFUSED,
    "cc_semantics": STILL_REFUSED,
    "cc_style": STILL_REFUSED,
    "cc_subject": STILL_REFUSED,
    "clip_frame_consistency": STILL_REFUSED,
    "dino_frame_consistency": STILL_REFUSED,
    "iq1_musiq": STILL_REFUSED,
    "musiq_spaq": STILL_REFUSED,
    "mq_motion_smoothness": (*STILL_REFUSED, "two"),
    "rbg_reprojection_geometric": STILL_REFUSED,
    "rbg_reprojection_photometric": STILL_REFUSED,
    # model, motion amount: a still video is a true 0, which a random RAFT cannot show
    "flow_motion_magnitude_raft": ("one", "lost"),
    # model, against the reference video
    # "blank" and "stopped" against the moving reference count as worst (1) before the network loads;
    # "short" (missing frames count as worst) needs the network: slow test below
    "iq1_lpips": ("one", "blank", "stopped", "short_ref"),
    "dc_depth_accuracy": ("one", "short", "short_ref"),
    "vjepa_paired_similarity": ("one", "short", "short_ref"),
    # model, a reader the user trains (config `reader`, none here): a video shorter than one 16-frame
    # segment is refused before the reader is needed; the rest is tested with a reader in tests/kiva
    "kiva": ("one",),
    "kiva_rigidity": ("one",),
    "kiva_jerk": ("one",),
}

# Per-item metrics that read no frames, so no degenerate video applies to them.
EXEMPT: dict[str, str] = {
    "sa_bleu": "scores a caption (an input) against the instruction; reads no frames",
    "sa_clip": "scores key-step texts (inputs) against reference steps; reads no frames",
    "uniform_random": "a chance-level baseline that reads nothing",
    # Multi-view metrics: the clips here have one view (unscored by definition); blank, still and
    # one-frame views of a rig are tested in tests/metrics/multiview/test_rigis.py.
    "rigis": "multi-view; degenerate views tested in tests/metrics/multiview/test_rigis.py",
    "rigis_geo": "multi-view; degenerate views tested in tests/metrics/multiview/test_rigis.py",
    "rigis_pose": "multi-view; degenerate views tested in tests/metrics/multiview/test_rigis.py",
    "rigis_da3": "multi-view; one view and no overlap tested in tests/metrics/multiview/test_rigis_da3.py",
    "rigis_da3_geo": "multi-view; see tests/metrics/multiview/test_rigis_da3.py",
    "rigis_da3_pose": "multi-view; see tests/metrics/multiview/test_rigis_da3.py",
    "rigis_vggt": "multi-view; one view tested in tests/metrics/multiview/test_rigis_vggt.py",
    "rigis_vggt_geo": "multi-view; see tests/metrics/multiview/test_rigis_vggt.py",
    "rigis_vggt_pose": "multi-view; see tests/metrics/multiview/test_rigis_vggt.py",
}


def per_item_metrics() -> list[str]:
    """robojudge's own per-item metrics that it computes (no judge, external, set-level or stub)."""
    return sorted(
        s.id for s in list_metrics()
        if s.fn.__module__.startswith("robojudge.") and s.provider in (Provider.computed, Provider.model)
        and not is_set_metric(s.id) and not is_unavailable(s.fn)
    )


def test_every_per_item_metric_has_a_case():
    known = set(CASES) | set(EXEMPT)
    missing = [m for m in per_item_metrics() if m not in known]
    assert not missing, f"add degenerate-input cases for {missing} to CASES (or a reason to EXEMPT)"
    assert not set(CASES) & set(EXEMPT)
    assert not known - set(per_item_metrics()), "CASES or EXEMPT names a metric that is not registered"


# ---------------------------------------------------------------- the clips


def variant_frames(clean: np.ndarray) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    stopped = np.repeat(clean[:1], T, axis=0).astype(np.float64)
    ramp = np.arange(T)[:, None, None, None] / (T - 1)
    flashed = stopped.copy()
    flashed[T // 2] += 20
    return {
        "one": clean[:1],
        "two": clean[:2],
        "blank": np.full_like(clean, 128),
        "stopped": stopped.astype(np.uint8),
        "faded": np.clip(stopped + 12.0 * ramp, 0, 255).astype(np.uint8),
        "flashed": np.clip(flashed, 0, 255).astype(np.uint8),
        "lost": np.concatenate([clean[:1], rng.integers(0, 256, (T - 1, H, W, 3), dtype=np.uint8)]),
        "short": clean[:SHORT],
    }


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Item]:
    """Items for the clean clip and every variant; the reference is the clean clip, the generated clean
    clip is the reference with mild noise (so reference metrics do not sit at their cap)."""
    root = tmp_path_factory.mktemp("degenerate")
    clean = clean_frames()
    for name, frames in (("ref", clean), ("ref_short", clean[:SHORT])):
        # No state file beside the reference: its tracks come from the same tracker (EWMBench's protocol).
        (root / name).mkdir()
        write_video(root / name / "clip.mp4", frames, fps=FPS)
    np.savez(root / "state.npz", **state_arrays())
    np.savez(root / "state_one.npz", **state_arrays(1))
    noisy = np.clip(clean + np.random.default_rng(9).normal(0, 3, clean.shape), 0, 255).astype(np.uint8)
    videos = {"clean": noisy, **variant_frames(clean)}
    items = {}
    for name, frames in videos.items():
        write_video(root / f"{name}.mp4", frames, fps=FPS)
        items[name] = _item(root, name, f"{name}.mp4", "ref")
    items["short_ref"] = _item(root, "short_ref", "clean.mp4", "ref_short")
    items["state_one"] = Item(item_id="state_one", video=str(root / "clean.mp4"),
                              state=str(root / "state_one.npz"))
    return items


def _item(root: Path, item_id: str, video: str, ref: str) -> Item:
    return Item(item_id=item_id, video=str(root / video), reference_video=str(root / ref / "clip.mp4"),
                state=str(root / "state.npz"), instruction="pick up the red block",
                meta={"caption": "a robot picks up a block"})


# ---------------------------------------------------------------- the contract

_CLEAN: dict[str, float] = {}


def _clean_value(metric: str, clips: dict[str, Item]) -> float:
    if metric not in _CLEAN:
        score = get_metric(metric).compute(clips["clean"])
        assert score.scored, f"{metric} leaves the clean clip unscored: {score.details}"
        _CLEAN[metric] = score.value
    return _CLEAN[metric]


CASE_IDS = [pytest.param(m, v, id=f"{m}-{v}") for m, variants in CASES.items() for v in variants]


@pytest.mark.parametrize(("metric", "variant"), CASE_IDS)
def test_degenerate_input_never_scores_as_well_as_a_clean_one(metric, variant, clips, weights):
    spec = get_metric(metric)
    score = spec.compute(clips[variant])
    if not score.scored:
        reason = score.details.get("unscored_reason")
        assert isinstance(reason, str) and reason, f"{metric} on {variant}: NaN without a reason"
        return
    if spec.provider is Provider.model:
        # a model metric may score without its network only at its worst: a still video against a moving
        # reference (iq1_lpips counts 1, as for the frames a video does not reach)
        notice = score.details.get("notice", "")
        assert notice.startswith("the generated video is still while its reference moves"), (
            f"{metric} on {variant} scored {score.value} without a network: it must refuse this input first")
        assert score.value == (0.0 if spec.higher_is_better else 1.0)
        return
    clean = _clean_value(metric, clips)
    better = score.value > clean if spec.higher_is_better else score.value < clean
    assert not math.isnan(score.value)
    assert not better and score.value != clean, (
        f"{metric}: {variant} scores {score.value:.4g}, clean {clean:.4g} "
        f"({'higher' if spec.higher_is_better else 'lower'} is better); details {score.details}")


# Metrics with published weights; KIVA's reader is trained by the user, so with none configured its
# clean-clip error is MetricInputError (tests/kiva checks it), not MissingWeightsError.
MODEL_CASES = [m for m in CASES if get_metric(m).provider is Provider.model and get_metric(m).weights]


@pytest.mark.parametrize("metric", MODEL_CASES)
def test_model_metrics_reach_their_network_on_the_clean_clip(metric, clips, weights):
    # The checks must not refuse a good clip: with no weights present, it fails at the network.
    with pytest.raises(MissingWeightsError, match=metric):
        get_metric(metric).compute(clips["clean"])



# ---------------------------------------------------------------- audit "degenerate" F1, F4, F5


def test_a_small_motion_under_drifting_brightness_still_moves(tmp_path):
    # The still check matches each frame's brightness and contrast to the first's, so a frozen picture
    # that fades is still; an 8x8 object crossing a corner of a frame that fades too is not.
    from robojudge.metrics._content import STILL_LEVELS, is_still, require_motion
    from robojudge.metrics._errors import Unmeasurable

    frozen = np.repeat(clean_frames()[:1], T, axis=0).astype(np.float64)
    gain = 1.0 - 0.3 * np.arange(T)[:, None, None, None] / (T - 1)  # 30% darker, 10 levels lifted
    faded = np.clip(gain * frozen + 10 * np.arange(T)[:, None, None, None] / (T - 1), 0, 255).astype(np.uint8)
    with pytest.raises(Unmeasurable, match="is still"):
        require_motion(faded)
    moving = faded.copy()
    for t in range(T):
        moving[t, 2:10, 2 + t:10 + t] = 255 - faded[t, 2:10, 2 + t:10 + t]  # a small object, in a corner
    assert require_motion(moving) > STILL_LEVELS
    # Written and read back through the codec: the same answers.
    for name, frames, still in (("faded", faded, True), ("moving", moving, False)):
        path = write_video(tmp_path / f"{name}.mp4", frames, fps=FPS)
        decoded = sample_frames(path, fps=None, max_frames=None).frames
        assert is_still(decoded) is still, name


@pytest.mark.parametrize("size", [(2, 2), (1, 96), (8, 8), (15, 15)])
def test_frames_under_16_px_are_refused_by_the_native_frame_metrics(tmp_path, size):
    # Random colours that brighten once half way: mq_temporal_flickering scored it 0.992 at every size,
    # above clean clips, where the pixel and flow pair refused frames under 16 px on a side.
    w, h = size
    base = np.random.default_rng(1).integers(40, 200, (h, w, 3), dtype=np.uint8)
    frames = np.repeat(base[None], 16, axis=0)
    frames[8:] += 30
    item = Item(item_id="tiny", video=str(write_video(tmp_path / "tiny.mp4", frames, fps=8)))
    for metric in ("mq_temporal_flickering", "cc_photometric", "ctg_camera_control", "rbg_stability"):
        score = get_metric(metric).compute(item)
        assert not score.scored, (metric, score.value)
        assert f"frames of {w}x{h} are too small" in score.details["unscored_reason"], metric
        assert score.details["video_size"] == f"{w}x{h}"


def test_too_few_frames_after_sampling_names_the_sampling(tmp_path):
    # Two frames at 10 fps last 0.2 s; sampled at 8 fps they give one. The reason said "the video gave
    # 1 frame", which the file (2 frames) seemed to contradict.
    item = Item(item_id="two", video=str(write_video(tmp_path / "two.mp4", clean_frames()[:2], fps=10)))
    for metric in ("pixel_frame_consistency", "flow_warp_error", "flow_motion_magnitude_farneback"):
        score = get_metric(metric).compute(item)
        assert not score.scored
        assert score.details["unscored_reason"] == (
            "2 frames (0.2 s) sampled at 8 fps give 1 frame; the metric needs at least 2 frames"), metric
        assert score.details["frames"] == 1 and score.details["video_frames"] == 2
