"""Dense optical flow (OpenCV's Farneback and DIS) and the metrics built on it: warp error, motion magnitude.

RoboJudge (App. B.3) and RoboPhys-3D (App. B.1.4) compute these with RAFT; robojudge uses classical
flow so they run with no weights (values are close in spirit, not equal to RAFT's). The RoboJudge pair
(8 fps 256x256) uses Farneback; the RoboPhys-3D trio at native size (flow score, dynamic degree,
photometric consistency) uses DIS (Kroeger et al., ECCV 2016), which follows rendered robot motion
better and is 2-10x faster (docs/metrics.md, "Flow: shared per item, and the choice of estimator").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import cv2
import numpy as np

from robojudge.metrics._errors import Unmeasurable


class FarnebackSettings(Protocol):
    """Anything with the six Farneback settings as attributes: :class:`Farneback`, or a metric's config."""

    @property
    def pyr_scale(self) -> float: ...
    @property
    def levels(self) -> int: ...
    @property
    def winsize(self) -> int: ...
    @property
    def iterations(self) -> int: ...
    @property
    def poly_n(self) -> int: ...
    @property
    def poly_sigma(self) -> float: ...


@dataclass(frozen=True)
class Farneback:
    """Farneback settings: OpenCV's customary values (the papers do not list theirs).

    Pyramid scale 0.5 with 3 levels, a 15 px averaging window, 3 iterations per level, and a 5 px
    polynomial neighbourhood smoothed with sigma 1.2.
    """

    pyr_scale: float = 0.5
    levels: int = 3
    winsize: int = 15
    iterations: int = 3
    poly_n: int = 5
    poly_sigma: float = 1.2


#: The default settings, shared by every function here.
FARNEBACK = Farneback()

#: OpenCV's DIS presets by name.
DIS_PRESETS: dict[str, int] = {
    "ultrafast": cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST,
    "fast": cv2.DISOPTICAL_FLOW_PRESET_FAST,
    "medium": cv2.DISOPTICAL_FLOW_PRESET_MEDIUM,
}
#: ``dis_preset="auto"`` takes ``medium`` for frames whose short side is below this, ``fast`` above:
#: on small frames a motion is large for the frame and ``fast`` loses it (bench_flow.py, 128x96 and
#: bench_flow_truth.py, 256 px), while at 480 px and more the two are about as accurate and ``fast``
#: takes a fifth of the time.
DIS_MEDIUM_BELOW = 480
#: The shortest frame side each DIS preset is run on. Below it OpenCV's DIS (5.0) picks its pyramid from
#: the width alone: on frames short for their width it returns NaN flow, raises, or crashes the process
#: (``fast`` on 200x16, ``medium`` on 40x12; every size from 8 to 128 px high and 8 to 4096 px wide was
#: tried, each in its own process). Square or tall small frames are safe; these bounds refuse every
#: failing size and keep every size the presets are used on in practice.
DIS_MIN_SIDE = {"ultrafast": 32, "fast": 32, "medium": 16}
#: The preset ``"auto"`` stands for under the fast evaluation profile (a settings object whose
#: ``profile`` is ``"fast"``), at every frame size: docs/metrics.md, "The fast profile".
FAST_DIS_PRESET = "fast"


@dataclass(frozen=True)
class FlowSettings(Farneback):
    """Which estimator computes a flow, with its settings: Farneback's six (used when ``estimator`` is
    ``"farneback"``) and DIS's preset (``"auto"``: :data:`DIS_MEDIUM_BELOW`); ``magnitude_dtype``: the
    precision :func:`flow_steps` forms the flow lengths in (:func:`flow_magnitude`)."""

    estimator: str = "farneback"
    dis_preset: str = "auto"
    magnitude_dtype: str = "float64"


#: The native-size RoboPhys-3D trio's flow: DIS with the preset chosen by frame size.
NATIVE_FLOW = FlowSettings(estimator="dis")


def estimator_of(settings: FarnebackSettings) -> tuple[str, str]:
    """``(estimator, dis preset)`` of a settings object; Farneback when it names none.

    Under the fast profile (``settings.profile == "fast"``, a metric config of ``score --fast``),
    ``"auto"`` is :data:`FAST_DIS_PRESET`; a preset named explicitly is kept.

    >>> estimator_of(FARNEBACK), estimator_of(NATIVE_FLOW)
    (('farneback', 'auto'), ('dis', 'auto'))
    """
    estimator = getattr(settings, "estimator", "farneback")
    preset = getattr(settings, "dis_preset", "auto")
    if preset == "auto" and getattr(settings, "profile", "native") == "fast":
        preset = FAST_DIS_PRESET
    if estimator not in ("farneback", "dis"):
        raise ValueError(f"unknown flow estimator {estimator!r}; expected 'farneback' or 'dis'")
    if preset != "auto" and preset not in DIS_PRESETS:
        raise ValueError(f"unknown DIS preset {preset!r}; expected auto or one of {sorted(DIS_PRESETS)}")
    return estimator, preset


def dis_preset_for(height: int, width: int, preset: str = "auto") -> str:
    """The DIS preset used on frames of this size (``"auto"`` resolved by :data:`DIS_MEDIUM_BELOW`).

    >>> dis_preset_for(256, 256), dis_preset_for(720, 1280), dis_preset_for(720, 1280, "medium")
    ('medium', 'fast', 'medium')
    """
    if preset != "auto":
        return preset
    return "medium" if min(height, width) < DIS_MEDIUM_BELOW else "fast"


FlowFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _dis_engine(preset: int) -> Any:
    """A new DIS engine (a seam for tests that count flows)."""
    return cv2.DISOpticalFlow.create(preset)


def flow_function(settings: FarnebackSettings, shape: tuple[int, ...]) -> FlowFn:
    """A function ``(prev, nxt) -> flow`` for frames of ``shape`` (``(..., H, W)``) with these settings.

    DIS keeps one engine per function (engines are not shared between threads; each call of a
    sequence function makes its own). Both estimators are deterministic (bit-equal flows over thread
    counts and between fresh engines); DIS gives exactly 0 between identical frames.

    >>> frame = np.zeros((24, 32), np.uint8)
    >>> flow_function(NATIVE_FLOW, (2, 24, 32))(frame, frame).shape
    (24, 32, 2)
    """
    estimator, preset = estimator_of(settings)
    if estimator == "farneback":
        return lambda a, b: farneback_flow(a, b, settings)
    height, width = shape[-2], shape[-1]
    chosen = dis_preset_for(height, width, preset)
    if min(height, width) < DIS_MIN_SIDE[chosen]:
        raise Unmeasurable(f"frames of {width}x{height} are too small for DIS optical flow (preset "
                           f"{chosen} needs at least {DIS_MIN_SIDE[chosen]} px a side)",
                           frame_size=f"{width}x{height}")
    engine = _dis_engine(DIS_PRESETS[chosen])

    def dis(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out: np.ndarray = engine.calc(a, b, None)
        return out

    return dis


def optical_flow(prev: np.ndarray, nxt: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Flow from ``prev`` to ``nxt`` with the estimator ``settings`` name (:func:`flow_function`).

    >>> f = np.zeros((32, 32), np.uint8)
    >>> float(np.abs(optical_flow(f, f, NATIVE_FLOW)).max())
    0.0
    """
    return flow_function(settings, prev.shape)(prev, nxt)


def _gray_sequence(frames: np.ndarray) -> None:
    if frames.ndim != 3:
        raise ValueError(f"expected (T, H, W) grayscale frames, got shape {frames.shape}")
    if len(frames) < 2:
        raise ValueError(f"needs at least 2 frames, got {len(frames)}")


def farneback_flow(prev: np.ndarray, nxt: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Flow ``F`` from ``prev`` to ``nxt`` (uint8 grayscale ``(H, W)``): ``(H, W, 2)`` float32 (x, y).

    ``prev(p) ~ nxt(p + F(p))``. Farneback (2003), "Two-frame motion estimation based on polynomial
    expansion", as implemented by ``cv2.calcOpticalFlowFarneback``.

    >>> f = np.zeros((32, 32), np.uint8)
    >>> farneback_flow(f, f).shape
    (32, 32, 2)
    """
    s = settings
    # OpenCV 5.0's stubs want an output array where None is allowed at run time; others accept None
    flow: np.ndarray = cv2.calcOpticalFlowFarneback(  # type: ignore[call-overload, unused-ignore]
        prev, nxt, None, s.pyr_scale, s.levels, s.winsize, s.iterations, s.poly_n, s.poly_sigma, 0,
    )
    return flow


def flow_magnitude(flow: np.ndarray, dtype: str = "float64") -> np.ndarray:
    """Per-pixel length ``sqrt(u^2 + v^2)`` of a ``(H, W, 2)`` flow field, float64 ``(H, W)``.

    ``dtype="float32"`` (the fast profile's ``magnitude_dtype``) forms the lengths of a float32 flow in
    float32 (a tenth of the time at 720p): each within about 1e-7 relative of the float64 length, and
    a frame's mean within about 1e-10. Each operation is IEEE float32 (``u*u + v*v``, then ``sqrt``),
    so the lengths are the same on every run. ``cv2.magnitude``, used until 2026-12-05 and as fast,
    is not: its float32 lengths are up to 2 ulp from the rounded value, and which ones moved with the
    memory address of the channels, so the same video gave means that differed in the 13th digit from
    one process to the next.

    >>> flow_magnitude(np.array([[[3.0, 4.0]]])).tolist()
    [[5.0]]
    >>> flow_magnitude(np.array([[[3.0, 4.0]]], np.float32), "float32").tolist()
    [[5.0]]
    """
    u, v = flow[..., 0], flow[..., 1]
    if dtype == "float32" and flow.dtype == np.float32:
        lengths: np.ndarray = np.multiply(u, u)
        lengths += np.multiply(v, v)
        np.sqrt(lengths, out=lengths)
        return lengths
    # Squares formed in float64 straight from the float32 channels (exact: a float32 squared fits a
    # float64), summed and rooted in one buffer: the values of sqrt(u*u + v*v) on a float64 copy, bit
    # for bit, without the copy and two temporaries (about half the time at 720p).
    magnitude: np.ndarray = np.multiply(u, u, dtype=np.float64)
    magnitude += np.multiply(v, v, dtype=np.float64)
    np.sqrt(magnitude, out=magnitude)
    return magnitude


def top_magnitude(flow: np.ndarray, fraction: float = 0.05) -> float:
    """Mean of the largest ``int(H * W * fraction)`` flow magnitudes (at least one pixel).

    VBench's per-step motion score for Dynamic Degree (Huang et al., CVPR 2024): the mean of the top
    5% of RAFT magnitudes; VBench takes no pixel when the share rounds to 0, robojudge takes one.

    >>> flow = np.zeros((10, 10, 2))
    >>> flow[0, :5] = (3.0, 4.0)  # five pixels of length 5 are the top 5% of 100
    >>> top_magnitude(flow, 0.05), top_magnitude(flow, 0.10)
    (5.0, 2.5)
    """
    return _top_mean(flow_magnitude(flow), fraction)


#: :func:`_top_mean` reads every this-many-th value to guess a floor under the top values.
_TOP_SAMPLE_STEP = 16


def _top_mean(magnitude: np.ndarray, fraction: float) -> float:
    """Mean of the largest ``max(1, int(n * fraction))`` values.

    A strided sample gives a floor below which (very likely) fewer than the top values lie; only the
    values at or above it are partitioned (about a tenth of a 720p frame instead of all of it). When
    at least k values reach the floor, the top k are among them, so the selected values are the same
    multiset as a full partition's, and the mean differs from one only in the order of its additions
    (a few 1e-16 relative). When fewer reach it, the full partition runs.
    """
    mag = magnitude.ravel()
    n = mag.size
    k = max(1, int(n * fraction))
    if n >= 64 * _TOP_SAMPLE_STEP and k < n // 2:
        sample = mag[::_TOP_SAMPLE_STEP]
        m = sample.size
        # one and a half times the share asked for: the sample's quantile errs low, not high
        rank = m - min(m - 1, max(1, int(1.5 * m * fraction))) - 1
        candidates = mag[mag >= np.partition(sample, rank)[rank]]
        if candidates.size >= k:
            mag, n = candidates, candidates.size
    return float(np.partition(mag, n - k)[n - k:].mean(dtype=np.float64))


def warp_by_flow(frame: np.ndarray, flow: np.ndarray) -> np.ndarray:
    """Predict the next frame from ``frame`` and the forward flow: ``pred(p) = frame(p - F(p))``.

    Backward warping with the forward flow read at the target pixel, which is exact for locally
    constant flow; sampling is bilinear (``cv2.remap``) and border pixels are replicated. Returns
    float32 ``(H, W)``.

    >>> frame = np.arange(16, dtype=np.uint8).reshape(4, 4)
    >>> flow = np.zeros((4, 4, 2), np.float32)
    >>> flow[..., 0] = 1  # everything moved one pixel right
    >>> warp_by_flow(frame, flow)[0].tolist()
    [0.0, 0.0, 1.0, 2.0]
    """
    h, w = frame.shape
    gx, gy = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    warped: np.ndarray = cv2.remap(
        frame.astype(np.float32), gx - flow[..., 0], gy - flow[..., 1], cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return warped


def warp_residuals(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Per-step ``e_t = mean |warp(G_t, F_t) - G_{t+1}|`` of a ``(T, H, W)`` uint8 sequence, ``(T - 1,)``.

    ``F_t`` is the Farneback flow from ``G_t`` to ``G_{t+1}`` and ``warp`` is :func:`warp_by_flow`.

    >>> frames = np.zeros((3, 16, 16), np.uint8)
    >>> warp_residuals(frames).tolist()
    [0.0, 0.0]
    """
    _gray_sequence(frames)
    out = np.empty(len(frames) - 1)
    flow_of = flow_function(settings, frames.shape)
    for t in range(len(frames) - 1):
        out[t] = _warp_residual(frames[t], frames[t + 1], flow_of(frames[t], frames[t + 1]))
    return out


def _warp_residual(prev: np.ndarray, nxt: np.ndarray, flow: np.ndarray) -> float:
    return float(np.abs(warp_by_flow(prev, flow) - nxt.astype(np.float32)).mean())


def warp_error(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> float:
    """Optical-flow warp error, RoboJudge App. B.3: ``mean_t 1/(HW) ||warp(G_t, F_t) - G_{t+1}||_1``.

    The mean of :func:`warp_residuals` over the ``T - 1`` steps of a grayscale sequence. Lower means
    motion explains the change between frames; a brightness flicker is not motion and scores high.

    >>> frames = np.stack([np.full((16, 16), v, np.uint8) for v in (0, 40)])
    >>> warp_error(frames)
    40.0
    """
    return float(warp_residuals(frames, settings).mean())


def motion_magnitudes(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> np.ndarray:
    """Per-step mean flow length ``m_t = 1/(HW) sum_p |F_t(p)|`` of a ``(T, H, W)`` uint8 sequence.

    >>> motion_magnitudes(np.zeros((3, 16, 16), np.uint8)).tolist()
    [0.0, 0.0]
    """
    _gray_sequence(frames)
    out = np.empty(len(frames) - 1)
    flow_of = flow_function(settings, frames.shape)
    for t in range(len(frames) - 1):
        out[t] = flow_magnitude(flow_of(frames[t], frames[t + 1])).mean()
    return out


def motion_magnitude(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK) -> float:
    """Mean optical-flow magnitude in pixels per frame: the mean of :func:`motion_magnitudes`.

    RoboJudge App. B.3 (Optical-Flow Motion Magnitude) on 8 fps 256x256 frames, and RoboPhys-3D
    App. B.1.4's Flow Score (after EvalCrafter) at native rate and size; both with RAFT in the papers.

    >>> motion_magnitude(np.zeros((2, 16, 16), np.uint8))
    0.0
    """
    return float(motion_magnitudes(frames, settings).mean())


def forward_backward_epe(forward: np.ndarray, backward: np.ndarray, crop: int = 30) -> float:
    """Mean forward-backward end-point error of a flow pair, WorldScore's form (RoboPhys-3D App. B.1.5).

    On the central ``(H - crop) x (W - crop)`` window, each pixel ``p`` is carried to
    ``q = p + F(p)``; the backward flow is read at ``q`` rounded to the nearest pixel of the window
    (clipped to its border) and ``e(p) = |q + B(round(q)) - p| = |F(p) + B(round(q))|``. The result is
    ``mean_p e(p)``; it is 0 when the backward flow exactly undoes the forward flow.

    ``q`` is formed in float64 (exact for float32 flow, so the rounding matches the definition); the
    residual ``F(p) + B(round(q))`` is formed in the flows' own precision (float32 for OpenCV's flow,
    float64 for float64 input) and averaged in float64. On 720p Farneback flows this moves AEPE by about
    1e-9 relative against an all-float64 computation, in half the time.

    Args:
        forward: flow from frame t to t+1, ``(H, W, 2)`` (x, y).
        backward: flow from frame t+1 to t, same shape.
        crop: total pixels removed from each dimension before scoring.

    Raises:
        Unmeasurable: (a ``MetricInputError``, a ``ValueError``) when the crop leaves no pixel.

    >>> fwd = np.zeros((6, 8, 2), np.float32)
    >>> fwd[...] = (2.0, 1.0)
    >>> back_short = np.zeros_like(fwd) - (1.0, 1.0)  # the round trip misses by (1, 0)
    >>> forward_backward_epe(fwd, -fwd, crop=2), forward_backward_epe(fwd, back_short, crop=2)
    (0.0, 1.0)
    """
    h, w = forward.shape[:2]
    ch, cw = h - crop, w - crop
    if ch < 1 or cw < 1:
        raise Unmeasurable(f"frames of {w}x{h} are too small for a {crop}px crop", frame_size=f"{w}x{h}")
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    dtype = np.result_type(forward, backward, np.float32)  # float32 flow (OpenCV's) stays float32
    fwd = forward[y0:y0 + ch, x0:x0 + cw].astype(dtype, copy=False)
    bwd = backward[y0:y0 + ch, x0:x0 + cw].astype(dtype, copy=False)
    fx, fy = fwd[..., 0], fwd[..., 1]
    # Target pixels rounded and clipped in float64 buffers, in place (integers there are exact, and
    # the flat index row * cw + column stays far below 2**53), cast to indices once. fmin/fmax clip
    # as np.clip does and send a NaN flow to the border, so it reads a pixel (its EPE is NaN anyway).
    rx = np.add(np.arange(cw, dtype=np.float64), fx, dtype=np.float64)
    np.fmax(np.fmin(np.rint(rx, out=rx), cw - 1, out=rx), 0, out=rx)
    ry = np.add(np.arange(ch, dtype=np.float64)[:, None], fy, dtype=np.float64)
    np.fmax(np.fmin(np.rint(ry, out=ry), ch - 1, out=ry), 0, out=ry)
    ry *= cw
    ry += rx
    # bwd[ry, rx], read per channel through flat indices: the same values, three times faster at 720p.
    flat = ry.astype(np.intp).ravel()
    mx = np.ascontiguousarray(bwd[..., 0]).ravel().take(flat).reshape(ch, cw)
    my = np.ascontiguousarray(bwd[..., 1]).ravel().take(flat).reshape(ch, cw)
    mx += fx  # the gathered copies become the round-trip miss, then its squared length
    my += fy
    mx *= mx
    my *= my
    mx += my
    return float(np.sqrt(mx, out=mx).mean(dtype=np.float64))


class FlowSteps(NamedTuple):
    """Per-step quantities of the forward (and optionally backward) flows of a gray sequence.

    Each array has one entry per consecutive pair ``(G_t, G_{t+1})`` and is read-only: the flow cache
    of :mod:`robojudge.metrics` hands the same object to every metric of an item.
    """

    mean_magnitude: np.ndarray  # mean |F_t| over pixels (:func:`motion_magnitudes`)
    top_magnitude: np.ndarray  # mean of the top ``top_fraction`` of |F_t| (:func:`top_magnitude`)
    warp_residual: np.ndarray | None  # mean |warp(G_t, F_t) - G_{t+1}| (:func:`warp_residuals`), if asked
    fb_epe: np.ndarray | None  # forward-backward EPE at ``crop`` (:func:`forward_backward_epe`), if asked
    top_fraction: float
    crop: int | None
    pair_step: int = 1  # the pairs read: (G_t, G_{t+1}) for t = 0, pair_step, 2 pair_step, ...


def flow_steps(frames: np.ndarray, settings: FarnebackSettings = FARNEBACK, *, top_fraction: float = 0.05,
               crop: int | None = None, warp: bool = True, pair_step: int = 1) -> FlowSteps:
    """Everything the flow metrics read from each pair's flow, from one flow per pair (and direction).

    ``pair_step`` > 1 reads only every ``pair_step``-th consecutive pair (``t = 0, pair_step, ...``;
    the fast profile's 2 halves the flows): still consecutive frames, so each step's quantities are
    those of the full sequence at those ``t``, and their means estimate the full means.

    The forward flow ``F_t`` gives the mean and top-``top_fraction`` magnitudes and, with ``warp``, the
    warp residual (a remap of the frame: skipped where no metric reads it); with ``crop`` set, the
    backward flow ``B_t`` is computed as well and gives the forward-backward end-point error on the
    cropped window. Each value is computed by the same code as the single-purpose
    functions (:func:`motion_magnitudes`, :func:`top_magnitude`, :func:`warp_residuals`,
    :func:`forward_backward_epe`), so it is equal to theirs bit for bit.

    >>> steps = flow_steps(np.zeros((3, 40, 40), np.uint8), crop=30)
    >>> steps.mean_magnitude.tolist(), steps.warp_residual.tolist(), steps.fb_epe.tolist()
    ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    """
    _gray_sequence(frames)
    if pair_step < 1:
        raise ValueError(f"pair_step must be at least 1, got {pair_step}")
    starts = range(0, len(frames) - 1, pair_step)
    n = len(starts)
    mean, top = np.empty(n), np.empty(n)
    residual = np.empty(n) if warp else None
    epe = None if crop is None else np.empty(n)
    flow_of = flow_function(settings, frames.shape)
    magnitude_dtype = getattr(settings, "magnitude_dtype", "float64")
    for i, t in enumerate(starts):
        flow = flow_of(frames[t], frames[t + 1])
        magnitude = flow_magnitude(flow, magnitude_dtype)
        mean[i] = magnitude.mean(dtype=np.float64)
        top[i] = _top_mean(magnitude, top_fraction)
        if residual is not None:
            residual[i] = _warp_residual(frames[t], frames[t + 1], flow)
        if epe is not None and crop is not None:
            epe[i] = forward_backward_epe(flow, flow_of(frames[t + 1], frames[t]), crop)
    for a in (mean, top, residual, epe):
        if a is not None:
            a.flags.writeable = False
    return FlowSteps(mean, top, residual, epe, top_fraction, crop, pair_step)
