"""F.ssim (OpenCV filters) against scikit-image's structural_similarity on encoded frames of a real scene.

The frames are the tests' textured scene (tests/metrics/_scene.py) written through libx264, so flat areas,
edges and codec noise are all there; the values must agree far inside the 1e-6 the reference metrics' golden
tests and stored iq1_ssim values allow.
"""

import sys

import numpy as np
import pytest
from _scene import clean_frames
from skimage.metrics import structural_similarity

from robojudge.metrics import Unmeasurable
from robojudge.metrics.functional import ssim
from robojudge.video import sample_frames, write_video


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    clip = tmp_path_factory.mktemp("ssim") / "scene.mp4"
    write_video(clip, clean_frames(), fps=8)  # 128x96, 16 frames: a few kB
    return sample_frames(clip, fps=None, max_frames=None).frames


def _skimage(gen, ref, gaussian):
    kw = {"gaussian_weights": True, "sigma": 1.5, "use_sample_covariance": False} if gaussian else {}
    return structural_similarity(ref, gen, data_range=255, channel_axis=-1 if ref.ndim == 3 else None, **kw)


@pytest.mark.parametrize("gaussian", [True, False])
@pytest.mark.parametrize("gray", [False, True])
def test_ssim_equals_scikit_image_on_encoded_frames(encoded, gaussian, gray):
    frames = encoded.mean(axis=3).astype(np.uint8) if gray else encoded
    pairs = [(frames[t], frames[t + k]) for t in range(0, 12, 3) for k in (0, 1, 4)]
    got = [ssim(g, r, gaussian_weights=gaussian) for g, r in pairs]
    want = [_skimage(g, r, gaussian) for g, r in pairs]
    assert np.abs(np.subtract(got, want)).max() < 1e-9
    assert min(want) < 0.9  # the moving pairs are compared, not only identical ones


def test_ssim_equals_scikit_image_at_the_window_size_and_on_odd_shapes():
    rng = np.random.default_rng(3)
    for shape in [(11, 11, 3), (11, 17), (23, 12, 4), (16, 16, 5)]:
        a = rng.integers(0, 256, shape, dtype=np.uint8)
        b = np.clip(a.astype(int) + rng.integers(-40, 40, shape), 0, 255).astype(np.uint8)
        assert ssim(b, a) == pytest.approx(_skimage(b, a, True), abs=1e-9)
    with pytest.raises(Unmeasurable, match="smaller than the 11px SSIM window"):
        ssim(a[:10], a[:10])


def test_ssim_needs_no_scikit_image(encoded, monkeypatch):
    # Before, every iq1_ssim row imported skimage.metrics (the slow path on 720p frames, and a broken
    # scikit-image beside another NumPy failed every row); SSIM is now computed without it.
    want = _skimage(encoded[5], encoded[0], True)
    monkeypatch.setitem(sys.modules, "skimage.metrics", None)  # importing it raises ImportError
    monkeypatch.setitem(sys.modules, "skimage", None)
    assert ssim(encoded[5], encoded[0]) == pytest.approx(want, abs=1e-9)
