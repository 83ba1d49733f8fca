"""robojudge.metrics._content: the checks that leave a clip unscored, and how compute() reports them."""

import math

import cv2
import numpy as np
import pytest
from scipy import stats

from robojudge.metrics import MetricInputError, Score, Unmeasurable, get_metric, metric
from robojudge.metrics._content import (
    MIN_CORRELATION,
    MIN_TEXTURED,
    STILL_LEVELS,
    TEXTURE_LEVELS,
    Span,
    block_means,
    largest_change,
    require_correspondence,
    require_frames,
    require_motion,
    require_same_span,
    require_texture,
    span_seconds,
    step_correlations,
    texture_share,
    texture_shares,
)
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

RNG = np.random.default_rng(3)


def test_block_means_by_hand():
    # A 16x8 gray frame whose left 8x8 block is 10 and right block 30 -> two block means.
    f = np.zeros((1, 8, 16), np.uint8)
    f[0, :, :8], f[0, :, 8:] = 10, 30
    assert block_means(f).tolist() == [[[10.0, 30.0]]]
    # RGB keeps its channels; frames smaller than a block become one block.
    assert block_means(np.full((2, 4, 4, 3), 7, np.uint8)).shape == (2, 1, 1, 3)


def test_block_means_are_means_of_whole_blocks():
    # 354 rows are 44 blocks and 2 rows left out (not 44 cells of 8.05 rows); values round to a level.
    rng = np.random.default_rng(11)  # its own draws: RNG's sequence feeds the tests below
    f = rng.integers(0, 256, (2, 354, 645, 3), dtype=np.uint8)
    exact = f[:, :352, :640].reshape(2, 44, 8, 80, 8, 3).mean(axis=(2, 4))
    blocks = block_means(f)
    assert blocks.shape == (2, 44, 80, 3) and blocks.dtype == np.float32
    assert np.abs(blocks - exact).max() <= 0.5
    # A frame lower than a block is one block high, its blocks the means of all its rows.
    g = rng.integers(0, 256, (1, 5, 20), dtype=np.uint8)
    assert np.abs(block_means(g) - g[:, :, :16].reshape(1, 5, 2, 8).mean(axis=(1, 3))[:, None]).max() <= 0.5


def test_largest_change_is_against_the_first_frame():
    frames = np.zeros((3, 8, 8), np.uint8)
    frames[1] = 5
    frames[2, :4] = 40  # half of the only block: its mean moves by 20
    assert largest_change(frames) == pytest.approx(20.0)


def test_step_correlations_match_scipy_and_flag_flat_frames():
    frames = RNG.integers(0, 256, (4, 32, 32), dtype=np.uint8)
    frames[1] = frames[0] // 2 + 40  # same pattern, other gain and offset: correlation 1
    frames[3] = 90  # flat: undefined
    corr = step_correlations(frames)
    b = block_means(frames).reshape(4, -1)
    assert corr[0] == pytest.approx(1.0, abs=1e-3)
    assert corr[1] == pytest.approx(stats.pearsonr(b[1], b[2]).statistic, rel=1e-6)
    assert math.isnan(corr[2])


def test_require_frames_and_motion():
    with pytest.raises(Unmeasurable, match="gave 1 frame; the metric needs at least 2 frames") as exc:
        require_frames(np.zeros((1, 8, 8), np.uint8))
    assert exc.value.details == {"frames": 1}
    still = np.repeat(RNG.integers(0, 256, (1, 32, 32), dtype=np.uint8), 5, axis=0)
    still[3] = np.clip(still[3].astype(int) + 8, 0, 255)  # every pixel +8: at the tolerance
    with pytest.raises(Unmeasurable, match="is still") as exc:
        require_motion(still)
    assert exc.value.details["frames"] == 5 and exc.value.details["largest_change"] <= STILL_LEVELS
    moving = still.copy()
    moving[4, :8, :8] = 0 if moving[4, :8, :8].mean() > 128 else 255  # one 8x8 block changes
    assert require_motion(moving) > STILL_LEVELS


def test_a_still_clip_survives_lossy_encoding_as_still(tmp_path):
    # libx264 moves single pixels of unchanged frames by up to ~16 levels; block means stay within 8.
    still = np.repeat(RNG.integers(0, 256, (1, 96, 128, 3), dtype=np.uint8), 12, axis=0)
    write_video(tmp_path / "still.mp4", still, fps=8)
    frames = sample_frames(tmp_path / "still.mp4", fps=None, max_frames=None).frames
    assert np.abs(frames.astype(int) - frames[0]).max() > STILL_LEVELS  # the pixels do move
    with pytest.raises(Unmeasurable, match="is still"):
        require_motion(frames)


def test_require_correspondence_counts_lost_steps_and_refuses_a_majority():
    scene = RNG.integers(0, 256, (64, 96), dtype=np.uint8)
    shifted = np.stack([np.roll(scene, 2 * t, axis=1) for t in range(6)])
    assert require_correspondence(shifted) == 0
    shifted[3] = RNG.integers(0, 256, (64, 96), dtype=np.uint8)  # a cut: steps 2-3 and 3-4 are lost
    assert require_correspondence(shifted) == 2
    noise = RNG.integers(0, 256, (6, 64, 96), dtype=np.uint8)
    with pytest.raises(Unmeasurable, match="tracking lost: 5 of the 5") as exc:
        require_correspondence(noise)
    assert exc.value.details == {"frames": 6, "steps_without_correspondence": 5}
    assert np.all(step_correlations(noise) < MIN_CORRELATION)


def _grain(h, w, sigma, seed):
    """A texture of Gaussian-blurred noise whose grain is about ``sigma`` px, ``(h, w)`` uint8."""
    noise = np.random.default_rng(seed).normal(0, 1, (h, w)).astype(np.float32)
    smooth = cv2.GaussianBlur(noise, (0, 0), sigma)
    return np.clip(128 + 40 * smooth / smooth.std(), 0, 255).astype(np.uint8)


def _pan(texture, n, dy, dx, h=120, w=160):
    """``n`` frames of ``h x w`` cut from ``texture`` by a window moving ``(dy, dx)`` px a frame."""
    y0, x0 = max(0, -dy) * (n - 1), max(0, -dx) * (n - 1)
    return np.stack([texture[y0 + dy * t:y0 + dy * t + h, x0 + dx * t:x0 + dx * t + w] for t in range(n)])


def _unshifted(frames):
    """Pearson correlation of consecutive frames' block means as they are (the check before pans)."""
    b = block_means(frames).reshape(len(frames), -1)
    return np.array([np.corrcoef(b[t], b[t + 1])[0, 1] for t in range(len(frames) - 1)])


@pytest.mark.parametrize("step", [(0, 12), (10, 0), (6, 9), (-5, -14), (20, 36)])
def test_a_camera_pan_corresponds(step):
    # The texture's grain (3 px) is finer than the step, so the block means of consecutive frames at the
    # same place do not correlate (the check called such pans "frames that show nothing of each other");
    # aligned by the pan they do. (20, 36) px is just within a quarter of each side of 120x160.
    frames = _pan(_grain(400, 600, 3, seed=21), 8, *step)
    assert np.all(_unshifted(frames) < MIN_CORRELATION)
    assert require_correspondence(frames) == 0
    assert step_correlations(frames).min() > 0.7
    rgb = np.repeat(frames[..., None], 3, axis=3)  # RGB frames align on their mean and correlate as well
    assert step_correlations(rgb).min() > 0.7
    assert np.array_equal(step_correlations(frames.copy()), step_correlations(frames))  # deterministic


def test_frames_that_correspond_as_they_are_keep_their_correlation():
    # A slow pan (2 px a frame) corresponds without the search; the check reports the same values as before.
    frames = _pan(_grain(400, 600, 3, seed=27), 8, 1, 2)
    assert np.all(_unshifted(frames) >= MIN_CORRELATION)
    np.testing.assert_allclose(step_correlations(frames), _unshifted(frames), rtol=1e-9)


def test_correspondence_does_not_depend_on_the_evaluation_size(tmp_path):
    # The audit's clip: pixel noise rolled 2 px a frame at 160x120 (libx264 smooths it). With the blocks
    # fixed at 8 px, scaling it up (`--size 512`) scaled the step past the texture's grain, and every
    # step was lost; aligned, the clip corresponds at every size.
    base = np.random.default_rng(22).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    write_video(tmp_path / "roll.mp4", np.stack([np.roll(base, 2 * t, axis=1) for t in range(12)]), fps=8)
    for size in (None, (256, 256), (512, 384), (1024, 768)):
        frames = sample_frames(tmp_path / "roll.mp4", fps=None, max_frames=None, gray=True, size=size).frames
        assert require_correspondence(frames) == 0, size
    assert np.all(_unshifted(frames) < MIN_CORRELATION)  # 1024x768: lost before


@pytest.mark.parametrize("shape", [(96, 128), (256, 256), (360, 640)])
def test_frames_of_noise_stay_without_correspondence_where_a_shift_is_looked_for(shape):
    rng = np.random.default_rng(23)
    noise = rng.integers(0, 256, (8, *shape), dtype=np.uint8)
    smooth = np.stack([_grain(*shape, 6, seed=s) for s in range(8)])  # independent, but with a coarse grain
    for frames in (noise, smooth):
        with pytest.raises(Unmeasurable, match="tracking lost: 7 of the 7 .* after the translation"):
            require_correspondence(frames)
        assert np.nanmax(step_correlations(frames)) < 0.45


def test_a_cut_in_a_pan_and_a_pan_past_a_quarter_of_the_frame_are_lost():
    frames = _pan(_grain(400, 600, 3, seed=24), 9, 0, 12)
    frames[4] = _grain(120, 160, 3, seed=25)  # a cut to another scene for one frame: steps 3-4 and 4-5
    assert require_correspondence(frames) == 2
    # 60 px a frame on 160 px: the frames share 62% of their width, no translation of that size is
    # looked for (a quarter of the side at most), and the pan is as lost as before.
    with pytest.raises(Unmeasurable, match="tracking lost: 7 of the 7"):
        require_correspondence(_pan(_grain(400, 600, 3, seed=24), 8, 0, 60))


def test_a_pan_is_scored_by_the_flow_metrics(tmp_path):
    # An encoded 160x120 pan, 10 px a frame at 8 fps: the four weights-free metrics that read flow as
    # motion or consistency left it unscored ("tracking lost"); flow_warp_error measured it all along.
    frames = _pan(_grain(400, 600, 3, seed=26), 16, 0, 10)
    write_video(tmp_path / "pan.mp4", np.repeat(frames[..., None], 3, axis=3), fps=8)
    item = Item(item_id="pan", video=str(tmp_path / "pan.mp4"))
    for name in ("cc_photometric", "mq_flow_score", "mq_dynamic_degree", "flow_motion_magnitude_farneback"):
        score = get_metric(name).compute(item)
        assert score.scored and math.isfinite(score.value), (name, score.details)
        assert score.details["steps_without_correspondence"] == 0, name
    farneback = get_metric("flow_motion_magnitude_farneback").compute(item)
    assert farneback.value > 5  # 10 px a frame at 160 px is 16 px at its 256 px width: motion, measured


def test_require_motion_names_the_size_of_frames_under_two_blocks():
    # A 2x2 square crossing an 8x8 frame: one block, whose mean never changes, so the clip looks still
    # to block means; it is not, and the reason says the frames are too small to tell.
    tiny = np.zeros((6, 8, 8), np.uint8)
    for t in range(6):
        tiny[t, 3:5, t:t + 2] = 255
    with pytest.raises(Unmeasurable, match="frames of 8x8 are too small to tell whether the video") as exc:
        require_motion(tiny)
    assert exc.value.details == {"frames": 6, "frame_size": "8x8", "largest_change": 0.0}
    # A thin strip (200x8): too small along its height; a still 16x16 clip is still, as before.
    with pytest.raises(Unmeasurable, match="frames of 200x8 are too small"):
        require_motion(np.zeros((3, 8, 200), np.uint8))
    with pytest.raises(Unmeasurable, match="is still"):
        require_motion(np.zeros((3, 16, 16), np.uint8))
    # Motion that does change a block of a tiny frame is motion.
    tiny[3:] = 200
    assert require_motion(tiny) > STILL_LEVELS


def test_texture_share_by_hand():
    flat = np.full((32, 32), 90, np.uint8)
    assert texture_share(flat) == 0.0
    # A 2x2 speck: 1 of the 16 blocks, 1 of the 9 blocks of the grid shifted by half a block: the larger.
    speck = flat.copy()
    speck[5:7, 5:7] = 255
    assert texture_share(speck) == pytest.approx(1 / 9)
    # Tiles of 8 px on the block grid: no block holds an edge, every block of the shifted grid does.
    tiles = np.kron(np.indices((4, 4)).sum(axis=0) % 2 * 200, np.ones((8, 8))).astype(np.uint8)
    assert texture_share(tiles) == 1.0
    # A standard deviation at the threshold is not texture, just above it is (exact: half the block at
    # +-s around the mean has standard deviation s).
    for s, expected in ((TEXTURE_LEVELS, 0.0), (TEXTURE_LEVELS + 1, 1.0)):
        block = np.full((8, 8), 100, np.uint8)
        block[:, ::2] = 100 + s
        block[:, 1::2] = 100 - s
        assert texture_share(block) == expected
    # Colour counts: texture in one channel of RGB.
    rgb = np.zeros((16, 16, 3), np.uint8)
    rgb[2:6, 2:6, 2] = 255
    assert texture_share(rgb) > 0
    # A frame smaller than a block is one block.
    assert texture_share(speck[:7, :7]) == 1.0 and texture_share(flat[:7, :7]) == 0.0


def test_texture_shares_of_encoded_flat_and_textured_clips(tmp_path):
    # libx264 leaves flat frames flat to this measure (a fade), and texture textured.
    fade = np.stack([np.full((96, 128, 3), round(255 * t / 11), np.uint8) for t in range(12)])
    texture = np.random.default_rng(12).integers(0, 256, (96, 128, 3), dtype=np.uint8)
    scene = np.stack([np.roll(texture, t, axis=1) for t in range(12)])
    for name, frames, low, high in (("fade", fade, 0.0, 0.0), ("scene", scene, 0.95, 1.0)):
        write_video(tmp_path / f"{name}.mp4", frames, fps=8)
        gray = sample_frames(tmp_path / f"{name}.mp4", fps=None, max_frames=None, gray=True).frames
        shares = texture_shares(gray)
        assert shares.shape == (12,) and not shares.flags.writeable
        assert low <= shares.min() and shares.max() <= high


def _flat_clips() -> dict[str, np.ndarray]:
    """Clips with no texture (or a speck of it) that change: a fade, a flash, a strobe, a speck on black."""
    h, w, n = 96, 128, 12
    speck = np.zeros((n, h, w), np.uint8)
    for t in range(n):
        speck[t, 40:42, 2 + 3 * t:4 + 3 * t] = 255
    flash = np.zeros((n, h, w), np.uint8)
    flash[n // 2] = 255
    return {
        "fade": np.stack([np.full((h, w), round(255 * t / (n - 1)), np.uint8) for t in range(n)]),
        "flash": flash,
        "strobe": np.stack([np.full((h, w), 255 * (t % 2), np.uint8) for t in range(n)]),
        "speck": speck,
    }


@pytest.mark.parametrize("name", ["fade", "flash", "strobe", "speck"])
def test_flow_checks_refuse_clips_without_texture(name):
    frames = _flat_clips()[name]
    if name == "speck":
        assert require_motion(frames) > STILL_LEVELS  # something moves: not still
    else:  # a flat field that only brightens and darkens: still, past its brightness
        with pytest.raises(Unmeasurable, match="is still"):
            require_motion(frames)
    # Before, the correspondence check passed them (a flat frame's correlation is NaN, not counted).
    with pytest.raises(Unmeasurable, match="too little texture for optical flow: in 11 of the 11") as exc:
        require_correspondence(frames)
    details = exc.value.details
    assert details["frames"] == 12 and details["steps_without_texture"] == 11
    assert details["least_textured_share"] < MIN_TEXTURED


def test_require_texture_counts_steps_and_refuses_a_majority():
    scene = np.random.default_rng(13).integers(0, 256, (64, 96), dtype=np.uint8)
    frames = np.stack([np.roll(scene, 2 * t, axis=1) for t in range(9)])
    assert require_texture(frames) == 0
    frames[:2] = 0  # a clip that opens on two black frames: 2 of its 8 steps touch one
    assert require_texture(frames) == 2
    assert require_correspondence(frames) == 0  # measured; those steps are not counted as lost either
    frames[:5] = 0  # 5 of 8: refused
    with pytest.raises(Unmeasurable, match="in 5 of the 8 consecutive frame pairs of the video"):
        require_texture(frames)


def test_span_seconds_and_require_same_span(tmp_path):
    def sampled(n):
        write_video(tmp_path / f"v{n}", np.zeros((n, 8, 8, 3), np.uint8), fps=8)  # a PNG frame folder
        return sample_frames(tmp_path / f"v{n}", fps=None, max_frames=None)

    assert span_seconds(sampled(16)) == pytest.approx(2.0)  # 15 steps of 1/8 s plus the last frame
    assert require_same_span(sampled(15), sampled(16), 0.9) == {"seconds": 1.875, "reference_seconds": 2.0}
    with pytest.raises(Unmeasurable, match=r"the video lasts 0.50 s, less than 0.9 of the reference's 2.00"):
        require_same_span(sampled(4), sampled(16), 0.9)
    with pytest.raises(Unmeasurable, match="the reference lasts 0.50 s") as exc:
        require_same_span(sampled(16), sampled(4), 0.9)
    assert exc.value.details == {"seconds": 2.0, "reference_seconds": 0.5}
    with pytest.raises(Unmeasurable, match="the reference video gave 1 frame"):
        require_same_span(sampled(16), sampled(1), 0.9)
    # A side given by its cached span (V-JEPA's references) is checked the same way.
    assert Span.of(sampled(15)) == Span(15, 1.875)
    assert require_same_span(sampled(15), Span(16, 2.0), 0.9) == {"seconds": 1.875, "reference_seconds": 2.0}
    with pytest.raises(Unmeasurable, match="the reference video gave 1 frame"):
        require_same_span(sampled(16), Span(1, 0.125), 0.9)


def test_compute_turns_unmeasurable_into_nan_with_the_reason():
    @metric("test_content_toy", family="pixel", inputs={"video"}, higher_is_better=True,
            native_range=(0.0, 1.0), version="1", citation="test", description="raises")
    def toy(item, config):
        if item.item_id == "still":
            raise Unmeasurable("nothing moves", frames=3)
        if item.item_id == "bad":
            raise MetricInputError("no reference")
        return Score(value=0.5)

    spec = get_metric("test_content_toy")
    unscored = spec.compute(Item(item_id="still", video="v.mp4"))
    assert math.isnan(unscored.value) and not unscored.scored
    assert unscored.details == {"unscored_reason": "nothing moves", "frames": 3}
    with pytest.raises(MetricInputError, match="no reference"):  # other input errors stay failures
        spec.compute(Item(item_id="bad", video="v.mp4"))
    assert spec.compute(Item(item_id="ok", video="v.mp4")).value == 0.5
