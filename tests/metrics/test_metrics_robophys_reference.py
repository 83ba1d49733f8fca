"""iq1_psnr and iq1_ssim against skimage, Wang et al.'s formula and hand-worked values, on lossless frames."""

import math

import numpy as np
import pytest
from _agree import agree
from scipy import ndimage
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from robojudge.metrics import Unmeasurable, get_metric
from robojudge.metrics.functional import psnr, ssim
from robojudge.run._score import MetricRequest, compute_metric, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import frame_cache, sample_frames, video_warnings, write_video

RNG = np.random.default_rng(0)


def _frames(n=4, h=32, w=40):
    base = RNG.integers(20, 230, size=(h, w, 3), dtype=np.uint8)
    return np.stack([np.roll(base, i, axis=1) for i in range(n)])


def _item(tmp_path, gen, ref, fps=10, ref_fps=None):
    write_video(tmp_path / "gen", gen, fps=fps)  # PNG folders: lossless, so values are exact
    write_video(tmp_path / "ref", ref, fps=ref_fps or fps)
    return Item(item_id="a", video=str(tmp_path / "gen"), reference_video=str(tmp_path / "ref"))


def test_psnr_by_hand_and_against_skimage():
    ref = np.full((4, 4, 3), 100, np.uint8)
    # Off by 5 everywhere: MSE = 25, PSNR = 10 log10(255^2 / 25) = 10 log10(2601) = 34.1514 dB.
    assert psnr(ref + 5, ref) == pytest.approx(10 * math.log10(2601))
    a, b = RNG.integers(0, 256, (2, 16, 16, 3), dtype=np.uint8)
    assert psnr(a, b) == pytest.approx(peak_signal_noise_ratio(b, a, data_range=255))


def test_psnr_identical_frames_hit_the_cap():
    f = RNG.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    assert psnr(f, f) == 100.0 and psnr(f, f, max_db=60.0) == 60.0
    g = f.copy()
    g[0, 0, 0] ^= 1  # MSE = 1/192 -> 10 log10(65025 * 192) = 70.96 dB: under 100, above 60
    assert psnr(g, f) == pytest.approx(10 * math.log10(65025 * 192))
    assert psnr(g, f, max_db=60.0) == 60.0


def test_ssim_matches_skimage_and_is_one_for_identical_frames():
    a = _frames(1)[0]
    b = np.clip(a.astype(int) + RNG.integers(-30, 30, a.shape), 0, 255).astype(np.uint8)
    expect = structural_similarity(b, a, data_range=255, channel_axis=-1, gaussian_weights=True, sigma=1.5,
                                   use_sample_covariance=False)
    assert ssim(b, a) == pytest.approx(expect)
    assert ssim(b, a, gaussian_weights=False) == pytest.approx(
        structural_similarity(b, a, data_range=255, channel_axis=-1))
    assert ssim(a, a) == pytest.approx(1.0)


def _noisy(frames, spread=30):
    return np.clip(frames.astype(int) + RNG.integers(-spread, spread, frames.shape), 0, 255).astype(np.uint8)


def _wang_ssim(gen, ref):
    """SSIM as Wang et al. (2004) define it, written with SciPy: Gaussian sigma 1.5 cut at 3.5 sigma
    (an 11x11 window), population (co)variances, C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2, the mean of
    the SSIM map away from the 5 px border the window cannot cover, averaged over channels."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2

    def blur(a):
        return ndimage.gaussian_filter(a, 1.5, truncate=3.5)

    values = []
    for ch in range(gen.shape[-1]):
        x, y = ref[..., ch].astype(np.float64), gen[..., ch].astype(np.float64)
        mx, my = blur(x), blur(y)
        vx, vy, vxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
        ssim_map = (2 * mx * my + c1) * (2 * vxy + c2) / ((mx * mx + my * my + c1) * (vx + vy + c2))
        values.append(ssim_map[5:-5, 5:-5].mean())
    return float(np.mean(values))


def test_psnr_metric_functional_and_skimage_agree(tmp_path):
    ref = _frames(5)
    gen = _noisy(ref)
    pairs = list(zip(gen, ref, strict=True))
    score = agree("iq1_psnr", _item(tmp_path, gen, ref),
                  functional=lambda: np.mean([psnr(g, r) for g, r in pairs]),
                  reference=lambda: np.mean([peak_signal_noise_ratio(r, g, data_range=255)
                                             for g, r in pairs]))
    assert score.details["frames"] == 5 and score.details["capped_frames"] == 0


def test_ssim_metric_functional_and_wang_formula_agree(tmp_path):
    ref = _frames(4, 40, 48)
    gen = _noisy(ref, 60)
    pairs = list(zip(gen, ref, strict=True))
    assert ssim(gen[0], ref[0]) == pytest.approx(_wang_ssim(gen[0], ref[0]), rel=1e-12)
    score = agree("iq1_ssim", _item(tmp_path, gen, ref),
                  functional=lambda: np.mean([ssim(g, r) for g, r in pairs]),
                  reference=lambda: np.mean([_wang_ssim(g, r) for g, r in pairs]))
    assert 0.2 < score.value < 0.9 and score.details["negative_frames"] == 0


def test_identical_videos(tmp_path):
    frames = _frames()
    item = _item(tmp_path, frames, frames)
    with frame_cache():
        p = get_metric("iq1_psnr").compute(item)
        s = get_metric("iq1_ssim").compute(item)
    assert p.value == 100.0 and p.details["capped_frames"] == 4
    assert s.value == pytest.approx(1.0) and s.details["frames"] == 4


def test_a_generated_video_that_ends_early_counts_missing_frames_as_worst(tmp_path):
    ref = _frames(5)
    gen = (ref[:3].astype(int) + 5).astype(np.uint8)  # values <= 234, no clipping
    item = _item(tmp_path, gen, ref)
    p = get_metric("iq1_psnr").compute(item)
    assert p.details == {"frames": 3, "frames_expected": 5, "frames_missing": 2, "frames_unmatched": 0,
                         "video_size": "40x32", "reference_size": "40x32", "pairing_fps": 10.0,
                         "fps_configured": None, "video_fps": 10.0, "reference_fps": 10.0,
                         "min_frame": pytest.approx(10 * math.log10(2601)), "capped_frames": 0}
    # 3 frames at 10 log10(2601) = 34.15 dB and 2 missing at 0 dB: 3 * 34.15 / 5 = 20.49 dB. Compared
    # over the common 3 frames only, as before, it scored 34.15 dB.
    assert p.value == pytest.approx(3 * 10 * math.log10(2601) / 5)
    s = get_metric("iq1_ssim").compute(item)
    per = [structural_similarity(r, g, data_range=255, channel_axis=-1, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False) for g, r in zip(gen, ref[:3], strict=True)]
    assert s.value == pytest.approx(float(np.sum(per)) / 5)  # the 2 missing frames count as SSIM 0


def test_an_anti_correlated_frame_never_scores_below_a_missing_one(tmp_path):
    ref = _frames(8, 48, 48)
    inverted = 255 - ref  # every frame the negative of its reference: raw SSIM far below 0
    raw = [ssim(g, r) for g, r in zip(inverted, ref, strict=True)]
    assert max(raw) < -0.5
    full = get_metric("iq1_ssim").compute(_item(tmp_path / "full", inverted, ref))
    cut = get_metric("iq1_ssim").compute(_item(tmp_path / "cut", inverted[:2], ref))  # 6 frames missing
    # Raw SSIM in the mean, the clip that shows all 8 frames scored below the one that stops after 2
    # (its 6 missing frames counted 0, above the 2 compared). Below 0 a frame has no structural
    # similarity, like a missing one: both count 0, the bottom of the declared range [0, 1].
    assert full.value == cut.value == 0.0
    assert full.details["min_frame"] == pytest.approx(min(raw))  # the raw value stays visible
    assert full.details["negative_frames"] == 8 and cut.details["negative_frames"] == 2
    lo, hi = get_metric("iq1_ssim").native_range
    assert lo == 0.0 and hi == 1.0


def test_one_frame_of_conditioning_is_unscored_not_perfect(tmp_path):
    ref = _frames(6)
    item = _item(tmp_path, ref[:1], ref)  # only the shared first frame: it scored 100 dB and SSIM 1
    for metric in ("iq1_psnr", "iq1_ssim"):
        score = get_metric(metric).compute(item)
        assert not score.scored and score.details == {
            "unscored_reason": "the video gave 1 frame; the metric needs at least 2 frames", "frames": 1}


def test_a_reference_shorter_than_the_video_is_unscored_within_tolerance_compared(tmp_path):
    gen = _frames(10)
    short = get_metric("iq1_psnr").compute(_item(tmp_path / "a", gen, gen[:4]))
    assert not short.scored and short.details == {
        "unscored_reason": "the reference video has 4 frames at 10 fps, fewer than 0.9 of the generated "
        "video's 10: no ground truth for the rest", "frames": 0, "frames_expected": 4, "reference_frames": 4,
        "generated_frames": 10}  # frames_expected is the reference's count, as on a scored row
    near = get_metric("iq1_psnr").compute(_item(tmp_path / "b", gen, gen[:9]))  # 9 >= 0.9 * 10
    assert near.value == 100.0 and near.details["frames"] == 9 and near.details["frames_unmatched"] == 1
    spec = get_metric("iq1_ssim")
    loose_config = spec.make_config({"min_reference_coverage": 0.4})
    loose = spec.compute(_item(tmp_path / "a", gen, gen[:4]), loose_config)
    assert loose.value == pytest.approx(1.0) and loose.details["frames_unmatched"] == 6


def test_generated_frames_are_resized_to_the_reference(tmp_path):
    ref = _frames(3, 16, 20)
    gen = ref.repeat(2, axis=1).repeat(2, axis=2)  # same content at twice the size (2x2 blocks of each pixel)
    item = _item(tmp_path, gen, ref)
    assert get_metric("iq1_psnr").compute(item).value == 100.0
    assert get_metric("iq1_ssim").compute(item).value == pytest.approx(1.0)


def test_different_rates_are_paired_in_time(tmp_path):
    ref = _frames(4)
    gen = np.repeat(ref, 2, axis=0)  # the same clip at twice the frame rate
    item = _item(tmp_path, gen, ref, fps=20, ref_fps=10)
    p = get_metric("iq1_psnr").compute(item)
    assert p.value == 100.0 and p.details["frames"] == 4


def test_an_fps_above_either_videos_rate_still_pairs_in_time_and_says_so(tmp_path):
    # A 5-fps copy of a 10-fps reference. Asked for 10 fps, sample_frames cannot sample the copy faster
    # than its own rate: it kept its 4 frames (0, 0.2, 0.4, 0.6 s) and paired them with the reference's
    # first 4 (0, 0.1, 0.2, 0.3 s), PSNR 16 dB with 4 frames "missing". The rate is lowered to 5 fps.
    ref = _frames(8)
    item = _item(tmp_path, ref[::2], ref, fps=5, ref_fps=10)
    spec = get_metric("iq1_psnr")
    with video_warnings() as warned:
        high = spec.compute(item, spec.make_config({"fps": 10}))
    assert high.value == 100.0 and high.details["frames"] == 4 and high.details["frames_missing"] == 0
    assert {k: high.details[k] for k in ("pairing_fps", "fps_configured", "video_fps", "reference_fps")} == {
        "pairing_fps": 5.0, "fps_configured": 10.0, "video_fps": 5.0, "reference_fps": 10.0}
    assert any("fps=10 is above the video's own 5 fps" in w and "compared at 5 fps" in w for w in warned)
    # The default records the rate it chose and warns of nothing.
    with video_warnings() as warned:
        default = spec.compute(item)
    assert default.details["pairing_fps"] == 5.0 and default.details["fps_configured"] is None
    assert not warned
    assert get_metric("iq1_ssim").compute(item, get_metric("iq1_ssim").make_config({"fps": 10})).value == 1.0


def test_missing_reference_is_an_error_row(tmp_path):
    write_video(tmp_path / "gen", _frames(), fps=10)
    item = Item(item_id="a", video=str(tmp_path / "gen"))
    row = compute_metric(item, MetricRequest.build("iq1_ssim"))
    assert row.status == "error" and "reference" in (row.error or "")


def test_ssim_leaves_frames_too_small_to_compare_unscored(tmp_path):
    tiny = np.zeros((2, 8, 8, 3), np.uint8)
    row = compute_metric(_item(tmp_path, tiny, tiny), MetricRequest.build("iq1_ssim"))
    # Readable frames SSIM cannot measure: NaN with the reason (was an error row), as for other metrics.
    # Under 16 px on a side a pair is unscored before the SSIM window (11 px) could be larger than it.
    assert row.status == "ok" and row.value is not None and math.isnan(row.value)
    assert "frames of 8x8 are too small" in (row.details or {})["unscored_reason"]
    assert (row.details or {})["video_size"] == "8x8"


def test_only_frames_under_the_ssim_window_are_unmeasurable():
    # What iq1_ssim leaves unscored is F.ssim's Unmeasurable; frames of two shapes are a plain ValueError.
    tiny = np.zeros((8, 10, 3), np.uint8)
    with pytest.raises(Unmeasurable, match="frames of 10x8 are smaller than the 11px SSIM window") as info:
        ssim(tiny, tiny)
    assert info.value.details == {"frame_size": "10x8"}
    with pytest.raises(Unmeasurable, match="frames of 10x6 are smaller than the 7px SSIM window"):
        ssim(tiny[:6], tiny[:6], gaussian_weights=False)
    with pytest.raises(ValueError, match="frames differ in shape") as shape:
        ssim(tiny, tiny[:, :8])
    assert not isinstance(shape.value, Unmeasurable)


def test_a_broken_scikit_image_is_a_failed_row_that_retry_errors_computes(tmp_path, monkeypatch):
    # A scikit-image built against NumPy 1 raises ValueError ("numpy.dtype size changed") beside NumPy 2.
    # iq1_ssim took every ValueError for frames smaller than its window and stored the row as unscored
    # (nothing to measure), which neither a rerun nor --retry-errors computes again (lowdeps audit,
    # finding 2). A library error stands in for such an install by raising from inside F.ssim (which now
    # filters with OpenCV: any library error other than frames under the window must stay a failed row).
    from robojudge.metrics.functional import _image

    def broken(*args, **kwargs):
        raise ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C "
                         "header, got 88 from PyObject")

    frames = _frames()
    item = _item(tmp_path, frames, frames)
    reqs = [MetricRequest.build("iq1_ssim")]
    with monkeypatch.context() as m:
        m.setattr(_image, "_ssim_opencv", broken)
        row = compute_metric(item, reqs[0])
        assert row.status == "error" and row.value is None
        assert "numpy.dtype size changed" in (row.error or "")
        assert "unscored_reason" not in (row.details or {})
        with ResultStore(f"sqlite:///{tmp_path}/r.sqlite") as store:
            first = score_items([item], reqs, store)
    assert (first.failed, first.unscored) == (1, 0)
    with ResultStore(f"sqlite:///{tmp_path}/r.sqlite") as store:  # the install fixed
        again = score_items([item], reqs, store, retry_errors=True)
        (stored,) = store.rows()
    assert (again.failed, again.computed) == (0, 1)
    assert stored.status == "ok" and stored.value == pytest.approx(1.0)


def test_a_landscape_video_against_a_portrait_reference_is_unscored(tmp_path):
    # A re-encode that lost its rotation flag: the video lies on its side next to its upright reference.
    # Stretched to the reference's size it would compare other pixels (it was, with a warning); it is
    # unscored with the reason, which names the likely cause.
    upright = np.random.default_rng(5).integers(0, 256, (4, 40, 24, 3), dtype=np.uint8)
    item = _item(tmp_path / "turned", np.rot90(upright, axes=(1, 2)).copy(), upright)
    for metric in ("iq1_psnr", "iq1_ssim"):
        row = compute_metric(item, MetricRequest.build(metric))
        details = row.details or {}
        assert row.status == "ok" and row.value is not None and math.isnan(row.value)
        assert details["unscored_reason"].startswith("the video is 40x24 (aspect 1.667), its reference 24x40")
        assert "the video is landscape and its reference portrait: a lost rotation flag" in (
            details["unscored_reason"])
    # The same orientation at another size (resized, not turned) is compared.
    larger = np.repeat(np.repeat(upright, 2, axis=1), 2, axis=2)
    row = compute_metric(_item(tmp_path / "larger", larger, upright), MetricRequest.build("iq1_psnr"))
    assert row.value == 100.0 and "video_warnings" not in (row.details or {})
    assert (row.details or {})["video_size"] == "48x80"


def test_a_short_clip_decodes_only_the_reference_frames_it_is_compared_with(tmp_path, monkeypatch):
    # A 1-s clip at 16 fps against a 6-s reference at 30 fps: 16 frames compared, 80 counted missing.
    # Only the first 16 reference frames at the common rate are decoded; the rest are counted from the
    # time stamps. Reading all 96 needed six times the memory (1.8 GB for a 60-s 640x480 reference).
    ref = np.stack([np.roll(_frames(1, 48, 64)[0], 2 * i, axis=1) for i in range(180)])
    write_video(tmp_path / "ref.mp4", ref, fps=30)
    write_video(tmp_path / "gen.mp4", ref[:30:2], fps=15)  # 1 s at 15 fps (the lower rate)
    write_video(tmp_path / "gen16.mp4", _noisy(ref[:32:2], 8), fps=16)
    for name, rate in (("gen.mp4", 15), ("gen16.mp4", 16)):
        monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "0")  # no limit: the value the full read gives
        item = Item(item_id="a", video=str(tmp_path / name), reference_video=str(tmp_path / "ref.mp4"))
        gen = sample_frames(item.video, fps=rate, max_frames=None, size=(64, 48)).frames
        full = sample_frames(item.reference_video, fps=rate, max_frames=None).frames  # the old read
        assert len(full) == 6 * rate and len(gen) == rate
        per_frame = [psnr(g, r) for g, r in zip(gen, full, strict=False)] + [0.0] * (len(full) - len(gen))
        expect = {"frames": rate, "frames_expected": 6 * rate, "frames_missing": 5 * rate,
                  "frames_unmatched": 0}
        # Under a budget that holds the compared frames but not the whole reference: the same values,
        # where the whole reference was refused (an error row).
        budget = 2 * rate * 64 * 48 * 3
        for gib in ("0", str(budget / 1024**3)):
            monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", gib)
            row = compute_metric(item, MetricRequest.build("iq1_psnr"))
            assert row.status == "ok", row.error
            assert row.value == pytest.approx(float(np.mean(per_frame)), rel=1e-12)
            assert {k: (row.details or {})[k] for k in expect} == expect
            ssim_row = compute_metric(item, MetricRequest.build("iq1_ssim"))
            assert ssim_row.status == "ok" and ssim_row.details["frames_expected"] == 6 * rate


def _palette_frames(n=8, h=32, w=40):
    """Frames of 16 colours: a GIF holds them exactly."""
    rng = np.random.default_rng(3)
    palette = rng.integers(0, 256, (16, 3), dtype=np.uint8)
    base = rng.integers(0, 16, (h, w))
    return np.stack([palette[(base + i) % 16] for i in range(n)])


@pytest.mark.parametrize("stalled", ["video", "reference"])
def test_a_stall_is_paired_by_time_not_by_position(tmp_path, stalled):
    # Frames 3 and 4 dropped from a 10-fps clip: the player holds frame 2 from 0.2 to 0.5 s. At 5 fps
    # (targets 0, 0.2, 0.4, 0.6 s) the rate step picks frames 0, 2 and 6 of it (frame 2 once), which
    # paired by position met reference frames 0, 2 and 4, with reference frame 6 counted missing; paired
    # by time, the held frame 2 meets reference frame 4 and frame 6 its own.
    frames = _palette_frames()
    kept = [0, 1, 2, 5, 6, 7]
    write_video(tmp_path / "stall.gif", frames[kept], fps=10, timestamps=[i / 10 for i in kept])
    write_video(tmp_path / "whole", frames, fps=10)
    video, reference = ("stall.gif", "whole") if stalled == "video" else ("whole", "stall.gif")
    item = Item(item_id="a", video=str(tmp_path / video), reference_video=str(tmp_path / reference))
    p = get_metric("iq1_psnr").compute(item, get_metric("iq1_psnr").make_config({"fps": 5}))
    assert p.details["pairing_fps"] == 5.0
    assert p.details["frames"] == 4 and p.details["frames_missing"] == 0
    assert p.details["frames_unmatched"] == 0
    assert p.details["capped_frames"] == 3  # frames 0, 2 and 6 against their own
    assert p.value == pytest.approx((3 * 100.0 + psnr(frames[2], frames[4])) / 4)
    s = get_metric("iq1_ssim").compute(item, get_metric("iq1_ssim").make_config({"fps": 5}))
    assert s.details["frames"] == 4 and s.value == pytest.approx((3 + max(ssim(frames[2], frames[4]), 0)) / 4)


def test_an_fps_within_the_time_base_rounding_of_a_videos_rate_is_kept_without_a_warning(tmp_path):
    # 30 fps stored in whole milliseconds averages 29.99 fps (frames over the time they cover): fps=30 was
    # lowered to it, with a warning on every row, though every frame was compared either way.
    frames = _frames(30)
    for name in ("gen.mp4", "ref.mp4"):
        write_video(tmp_path / name, frames, fps=30, timestamps=[i / 30 for i in range(30)])
    item = Item(item_id="a", video=str(tmp_path / "gen.mp4"), reference_video=str(tmp_path / "ref.mp4"))
    spec = get_metric("iq1_psnr")
    with video_warnings() as warned:
        p = spec.compute(item, spec.make_config({"fps": 30}))
    assert not warned
    assert p.value == 100.0 and p.details["frames"] == 30 and p.details["frames_missing"] == 0
    # lowered to the video's own rate all the same, only without a warning (kept at 30, a 29.97-fps clip
    # against a 30-fps reference paired frame k with k - 1: see the test below)
    assert p.details["pairing_fps"] == p.details["video_fps"] < 30.0
    # Beyond the tolerance the rate is still lowered, and says so.
    with video_warnings() as warned:
        high = spec.compute(item, spec.make_config({"fps": 31}))
    assert high.details["pairing_fps"] == high.details["video_fps"] and high.value == 100.0
    assert any("fps=31 is above the video's own" in w for w in warned)


def test_fps_30_on_a_29_97_fps_clip_and_a_30_fps_reference_pairs_the_same_frames(tmp_path):
    # An fps within the rounding tolerance of the lower rate was kept as set: the 29.97-fps clip then gave,
    # at each target k/30, its frame k - 1 (shown until k * 1.001 / 30) against the reference's frame k,
    # on every pair after the first, without a warning (review rev14 F1: PSNR 22.7 dB for 33.6)
    frames = _frames(30)
    write_video(tmp_path / "gen.mp4", frames, fps=30, timestamps=[i * 1001 / 30000 for i in range(30)])
    write_video(tmp_path / "ref.mp4", frames, fps=30, timestamps=[i / 30 for i in range(30)])
    for video, reference in (("gen.mp4", "ref.mp4"), ("ref.mp4", "gen.mp4")):
        item = Item(item_id="a", video=str(tmp_path / video), reference_video=str(tmp_path / reference))
        spec = get_metric("iq1_psnr")
        by_default = spec.compute(item, spec.make_config({}))
        with video_warnings() as warned:
            at_30 = spec.compute(item, spec.make_config({"fps": 30}))
        assert not warned
        # (the two encodings differ a little: their time stamps differ; a frame against its neighbour,
        # noise rolled by a pixel, scores about 10 dB)
        assert at_30.value == by_default.value > 40.0
        assert at_30.details["frames_missing"] == 0 and at_30.details["frames"] == 30
