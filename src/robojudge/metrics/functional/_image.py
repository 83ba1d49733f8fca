"""Frame-level image measures: differences of consecutive frames, PSNR and SSIM against a reference."""

from __future__ import annotations

import math

import cv2
import numpy as np

from robojudge.metrics._errors import Unmeasurable


def frame_differences(frames: np.ndarray) -> np.ndarray:
    """Mean absolute difference of each pair of consecutive frames, ``(T - 1,)`` float64.

    ``d_t = mean |I_{t+1} - I_t|`` over every pixel (and channel) of ``(T, H, W)`` or ``(T, H, W, C)``
    uint8 frames. The step values of RoboJudge's pixel frame consistency and VBench's temporal
    flickering.

    >>> frames = np.stack([np.full((2, 2), v, np.uint8) for v in (0, 10, 30)])
    >>> frame_differences(frames).tolist()
    [10.0, 20.0]
    >>> frame_differences(np.array([[[0]], [[255]]], np.uint8)).tolist()  # no uint8 wrap-around
    [255.0]
    """
    if frames.ndim not in (3, 4):
        raise ValueError(f"expected (T, H, W) or (T, H, W, C) frames, got shape {frames.shape}")
    if len(frames) < 2:
        raise ValueError(f"needs at least 2 frames, got {len(frames)}")
    # One pair at a time: |a - b| of uint8 frames is exact in uint8 (cv2.absdiff saturates nothing
    # here), its sum exact in int64, and sum / size the same float64 as the mean of the differences.
    # A whole-clip int16 copy would take 2 bytes per pixel of the clip, three times over.
    size = frames[0].size
    per_step = np.empty(len(frames) - 1)
    fast = frames.dtype == np.uint8 and frames[0].flags.c_contiguous
    for t in range(len(frames) - 1):
        a, b = frames[t], frames[t + 1]
        if fast:
            per_step[t] = int(cv2.absdiff(a, b).sum(dtype=np.int64)) / size
        else:  # other dtypes as before: int16 differences (exact for uint8-ranged values)
            per_step[t] = np.abs(b.astype(np.int16) - a.astype(np.int16)).mean()
    return per_step


def frame_consistency(frames: np.ndarray) -> float:
    """RoboJudge's pixel frame consistency ``D_pix = 1/(T-1) sum_t mean |G_{t+1} - G_t|`` (App. B.3).

    ``frames`` are grayscale ``(T, H, W)`` uint8 (the paper: 8 fps, 256x256); lower is steadier.

    >>> frame_consistency(np.stack([np.full((2, 2), v, np.uint8) for v in (0, 10, 30)]))
    15.0
    """
    if frames.ndim != 3:
        raise ValueError(f"expected (T, H, W) grayscale frames, got shape {frames.shape}")
    return float(frame_differences(frames).mean())


def psnr(gen: np.ndarray, ref: np.ndarray, max_db: float = 100.0) -> float:
    """``10 log10(255^2 / MSE)`` over all pixels and channels of one frame pair, capped at ``max_db``.

    Peak signal-to-noise ratio as RoboPhys-3D App. B.1.1 scores each generated frame against its
    ground-truth counterpart. Equals ``skimage.metrics.peak_signal_noise_ratio(ref, gen,
    data_range=255)`` below the cap; identical frames (MSE 0, PSNR infinite) give ``max_db``.

    >>> ref = np.full((4, 4, 3), 100, np.uint8)
    >>> round(psnr(ref + 5, ref), 4)  # MSE 25: 10 log10(255^2 / 25) = 10 log10(2601)
    34.1514
    >>> psnr(ref, ref)
    100.0
    """
    if gen.shape != ref.shape:
        raise ValueError(f"frames differ in shape: generated {gen.shape}, reference {ref.shape}")
    mse = float(np.mean((gen.astype(np.float64) - ref.astype(np.float64)) ** 2))
    if mse == 0.0:
        return max_db
    return min(10.0 * math.log10(255.0**2 / mse), max_db)


def ssim(gen: np.ndarray, ref: np.ndarray, *, gaussian_weights: bool = True) -> float:
    """Structural similarity of one frame pair (Wang et al. 2004), data range 255, channels averaged.

    RoboPhys-3D App. B.1.1. With ``gaussian_weights`` it uses the original paper's settings (11x11
    Gaussian window, sigma 1.5, population covariance); otherwise scikit-image's defaults (7x7 uniform
    window, sample covariance). ``(H, W)`` grayscale or ``(H, W, C)`` frames. In [-1, 1]; 1 for identical
    frames.

    The value is ``skimage.metrics.structural_similarity``'s (its filters, constants and the border of half
    a window it leaves out of the mean), computed with OpenCV's separable filters in float64: the same
    value within 1e-9 (tests/metrics/test_ssim_opencv.py) for about half its CPU time on 720p frames
    (benchmarks/bench_ssim.py, docs/performance.md).

    >>> f = np.arange(256, dtype=np.uint8).reshape(16, 16)
    >>> ssim(f, f)
    1.0
    >>> ssim(255 - f, f) < 0  # the negative image is anti-correlated
    True

    Raises:
        ValueError: When the frames differ in shape.
        Unmeasurable: (a ``ValueError``) when they are smaller than the window: readable frames that SSIM
            has nothing to measure on.
    """
    if gen.shape != ref.shape:
        raise ValueError(f"frames differ in shape: generated {gen.shape}, reference {ref.shape}")
    win = 11 if gaussian_weights else 7
    if min(ref.shape[:2]) < win:
        h, w = ref.shape[:2]
        raise Unmeasurable(f"frames of {w}x{h} are smaller than the {win}px SSIM window",
                           frame_size=f"{w}x{h}")
    if ref.ndim == 3 and ref.shape[2] > 4:
        # OpenCV filters at most 4 channels at once as an image; more go one at a time.
        return float(np.mean([ssim(gen[..., c], ref[..., c], gaussian_weights=gaussian_weights)
                              for c in range(ref.shape[2])]))
    return _ssim_opencv(np.asarray(ref, np.float64), np.asarray(gen, np.float64), gaussian_weights)


def _ssim_opencv(x: np.ndarray, y: np.ndarray, gaussian: bool) -> float:
    """scikit-image's ``structural_similarity(x, y, data_range=255)`` on float64 frames, with OpenCV filters.

    scikit-image filters with ``scipy.ndimage.gaussian_filter`` (sigma 1.5, truncated at 3.5 sigma: an
    11-tap kernel, the same normalised samples as ``cv2.getGaussianKernel(11, 1.5)``) or a 7x7
    ``uniform_filter``, and averages the SSIM map without its outer ``(win - 1) // 2`` pixels, which are the
    only ones the border rule reaches: so the border mode does not matter. The uniform window uses the
    sample covariance (``win^2 / (win^2 - 1)``), the Gaussian one the population covariance. The mean over
    every pixel and channel of equal-sized channel maps is scikit-image's mean of per-channel means.
    """
    if gaussian:
        win, cov_norm = 11, 1.0

        def smooth(a: np.ndarray) -> np.ndarray:
            return cv2.GaussianBlur(a, (win, win), 1.5, borderType=cv2.BORDER_REFLECT)
    else:
        win = 7
        cov_norm = win * win / (win * win - 1.0)

        def smooth(a: np.ndarray) -> np.ndarray:
            return cv2.blur(a, (win, win), borderType=cv2.BORDER_REFLECT)

    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    pad = (win - 1) // 2  # the map is averaged without this border: cut before the products

    def inner(a: np.ndarray) -> np.ndarray:
        return smooth(a)[pad:-pad, pad:-pad]

    ux, uy = inner(x), inner(y)
    uxx, uyy, uxy = ux * ux, uy * uy, ux * uy
    vx = cov_norm * (inner(x * x) - uxx)
    vy = cov_norm * (inner(y * y) - uyy)
    vxy = cov_norm * (inner(x * y) - uxy)
    s = ((2 * uxy + c1) * (2 * vxy + c2)) / ((uxx + uyy + c1) * (vx + vy + c2))
    return float(s.mean(dtype=np.float64))
