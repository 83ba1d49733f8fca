"""The faster paths of the weights-free metrics against straightforward versions of the same formulas.

Each reference below is the plain form of what a function computes (the form it had before it was made
faster); the fast path must give the same value bit for bit, or within the tolerance its docstring
states.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from robojudge.metrics.functional import _flow as FL
from robojudge.metrics.functional import _geometry as G
from robojudge.metrics.robophys.motion import luma, to_gray


def _textured_clip(n: int = 6, h: int = 96, w: int = 128, seed: int = 0) -> np.ndarray:
    """Gray frames of a blurred random texture with a block sliding over it (known, varied motion)."""
    rng = np.random.default_rng(seed)
    table = cv2.GaussianBlur(rng.uniform(0, 255, (h, w)).astype(np.float32), (0, 0), 1.5)
    table = cv2.normalize(table, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    block = rng.integers(0, 256, (h // 3, w // 4), dtype=np.uint8)
    frames = np.repeat(table[None], n, axis=0)
    for t in range(n):
        y, x = (10 + 2 * t) % (h - h // 3), (5 + 3 * t) % (w - w // 4)
        frames[t, y:y + block.shape[0], x:x + block.shape[1]] = block
    return frames


def _flows(frames: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    dis = cv2.DISOpticalFlow.create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)
    pairs = zip(frames[:-1], frames[1:], strict=True)
    return [(dis.calc(a, b, None), dis.calc(b, a, None)) for a, b in pairs]


def _magnitude_ref(flow: np.ndarray) -> np.ndarray:
    f = flow.astype(np.float64)
    return np.asarray(np.sqrt(f[..., 0] * f[..., 0] + f[..., 1] * f[..., 1]))


def _top_mean_ref(values: np.ndarray, fraction: float) -> float:
    flat = np.sort(values.ravel())
    return float(flat[flat.size - max(1, int(flat.size * fraction)):].mean())


def _epe_ref(forward: np.ndarray, backward: np.ndarray, crop: int) -> float:
    h, w = forward.shape[:2]
    ch, cw = h - crop, w - crop
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    fwd, bwd = forward[y0:y0 + ch, x0:x0 + cw], backward[y0:y0 + ch, x0:x0 + cw]
    rx = np.clip(np.rint(np.arange(cw, dtype=np.float64) + fwd[..., 0]).astype(np.intp), 0, cw - 1)
    ry = np.clip(np.rint(np.arange(ch, dtype=np.float64)[:, None] + fwd[..., 1]).astype(np.intp), 0, ch - 1)
    miss = fwd + bwd[ry, rx]
    return float(np.sqrt(miss[..., 0] * miss[..., 0] + miss[..., 1] * miss[..., 1]).mean(dtype=np.float64))


def test_flow_magnitude_is_bit_identical_to_the_float64_copy() -> None:
    rng = np.random.default_rng(1)
    fields = [f for pair in _flows(_textured_clip()) for f in pair]
    fields.append(rng.normal(0, 7, (50, 70, 2)).astype(np.float32))
    fields.append(rng.normal(0, 7, (9, 11, 2)))  # float64 input
    for flow in fields:
        assert np.array_equal(FL.flow_magnitude(flow), _magnitude_ref(flow))


def test_float32_flow_lengths_do_not_depend_on_where_the_flow_lies_in_memory() -> None:
    # cv2.magnitude gave other float32 lengths for channels at some offsets from a 64-byte boundary
    # (1 and 6 floats here), so a clip's value under --fast changed from process to process.
    rng = np.random.default_rng(0)
    flow = (rng.standard_normal((180, 320, 2)) * 3).astype(np.float32)
    expect = np.sqrt(flow[..., 0] * flow[..., 0] + flow[..., 1] * flow[..., 1])  # IEEE float32 steps
    for offset in range(16):
        buffer = np.empty(flow.size + 16, np.float32)
        moved = buffer[offset : offset + flow.size].reshape(flow.shape)
        moved[...] = flow
        lengths = FL.flow_magnitude(moved, "float32")
        assert lengths.dtype == np.float32
        assert np.array_equal(lengths, expect), offset
    # within about 1e-7 of the float64 lengths, as the profile's docs say
    np.testing.assert_allclose(expect, FL.flow_magnitude(flow), rtol=2e-7, atol=1e-30)


@pytest.mark.parametrize("fraction", [0.05, 0.01, 0.3, 1.0])
def test_top_mean_selects_the_same_values_as_a_full_sort(fraction: float) -> None:
    rng = np.random.default_rng(2)
    cases = [
        rng.exponential(2.0, (120, 160)),  # the fast path: a sample's floor, then a small partition
        np.floor(rng.exponential(2.0, (120, 160))),  # many ties at the floor
        np.zeros((64, 64)),  # all equal
        np.where(np.arange(4096).reshape(64, 64) % 16 == 0, 5.0, 0.0),  # the sample sees only the peaks
        rng.uniform(0, 1, (7, 9)),  # too small for the sample: full partition
    ]
    cases += [_magnitude_ref(f) for pair in _flows(_textured_clip()) for f in pair]
    for values in cases:
        got, want = FL._top_mean(values, fraction), _top_mean_ref(values, fraction)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_forward_backward_epe_is_bit_identical_to_the_plain_gather() -> None:
    rng = np.random.default_rng(3)
    pairs = _flows(_textured_clip())
    # large and fractional flows: targets beyond the window (clipped) and half-pixel ties (rint)
    big = rng.normal(0, 40, (60, 80, 2)).astype(np.float32)
    halves = (np.round(rng.normal(0, 3, (60, 80, 2)) * 2) / 2).astype(np.float32)
    pairs += [(big, rng.normal(0, 40, (60, 80, 2)).astype(np.float32)), (halves, -halves + 0.25)]
    pairs.append((rng.normal(0, 2, (40, 50, 2)), rng.normal(0, 2, (40, 50, 2))))  # float64 flows
    for fwd, bwd in pairs:
        for crop in (0, 10, 30):
            assert FL.forward_backward_epe(fwd, bwd, crop) == _epe_ref(fwd, bwd, crop)


def test_forward_backward_epe_of_a_nan_flow_is_nan_not_an_index_error() -> None:
    fwd = np.zeros((20, 30, 2), np.float32)
    fwd[5, 7] = (np.nan, np.nan)  # the old integer cast sent NaN somewhere inside the clip; so does fmin
    fwd[6, 8] = (np.inf, -np.inf)  # infinite flow: clipped to the window's corner
    assert np.isnan(FL.forward_backward_epe(fwd, np.zeros_like(fwd), crop=2))
    fwd[5, 7] = 0.0
    assert np.isinf(FL.forward_backward_epe(fwd, np.zeros_like(fwd), crop=2))


def _stability_ref(gray: np.ndarray, detector: str, intervals: tuple[int, ...], pairs: int
                   ) -> dict[int, float]:
    """Per-interval keep-ratios with every frame's features detected up front (the plain form)."""
    det = cv2.ORB.create(1000) if detector == "orb" else cv2.SIFT.create(1000)
    feats = [det.detectAndCompute(g, None) for g in gray]
    norm = cv2.NORM_HAMMING if detector == "orb" else cv2.NORM_L2
    out = {}
    for k in intervals:
        ratios = []
        for t in G._starts(len(gray), k, pairs):
            (k1, d1), (k2, d2) = feats[t], feats[t + k]
            knn = cv2.BFMatcher(norm).knnMatch(d1, d2, k=2)
            good = [m[0] for m in knn if len(m) == 2 and m[0].distance < 0.8 * m[1].distance]
            if len(good) < 8:
                ratios.append(0.0)
                continue
            p1 = np.array([k1[m.queryIdx].pt for m in good], np.float32)
            p2 = np.array([k2[m.trainIdx].pt for m in good], np.float32)
            ratios.append(G.verified_ratio(p1, p2, 2.0))
        out[k] = float(np.mean(ratios))
    return out


@pytest.mark.parametrize(("detector", "n"), [("orb", 40), pytest.param("sift", 16, marks=pytest.mark.slow)])
def test_sustained_stability_detects_only_matched_frames_with_the_same_values(
    detector: str, n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    gray = _textured_clip(n=n, h=120, w=160)
    detected: list[int] = []
    make = G._detector

    class Counting:
        def __init__(self, inner: cv2.Feature2D) -> None:
            self.inner = inner

        def detectAndCompute(self, img: np.ndarray, mask: None) -> tuple[object, object]:  # noqa: N802
            detected.append(next(t for t in range(len(gray)) if np.shares_memory(img, gray[t])))
            return self.inner.detectAndCompute(img, mask)

    monkeypatch.setattr(G, "_detector", lambda d, n: Counting(make(d, n)))
    res = G.sustained_stability(gray, detector=detector, pairs_per_interval=4)  # type: ignore[arg-type]
    used = {u for k in G.default_intervals(n) for t in G._starts(n, k, 4) for u in (t, t + k)}
    assert sorted(detected) == sorted(used) and len(used) < n  # each matched frame once, no other
    assert res.per_interval == _stability_ref(gray, detector, G.default_intervals(n), 4)
    assert res.value == float(np.mean(list(res.per_interval.values())))


def test_contrast_normalized_in_place_is_bit_identical() -> None:
    rng = np.random.default_rng(4)
    noise = rng.integers(0, 256, (3, 33, 47), dtype=np.uint8)
    clips = (_textured_clip(), noise, np.zeros((2, 8, 8), np.uint8))
    for gray in clips:
        want = np.empty(gray.shape, np.uint8)
        for t in range(len(gray)):
            f = gray[t].astype(np.float32)
            scaled = 128.0 + 40.0 * (f - f.mean()) / max(f.std(), np.float32(1e-3))
            want[t] = np.clip(scaled, 0, 255).astype(np.uint8)
        assert np.array_equal(G.contrast_normalized(gray), want)


def test_strided_gray_of_shared_frames_is_a_view_of_the_full_gray_clip() -> None:
    rng = np.random.default_rng(5)
    rgb = rng.integers(0, 256, (7, 24, 32, 3), dtype=np.uint8)
    want = np.stack([cv2.cvtColor(f, cv2.COLOR_RGB2GRAY) for f in rgb])
    assert np.array_equal(luma(rgb), want)
    rgb.flags.writeable = False  # as the frame cache hands them out
    strided = to_gray(rgb, 3)
    assert np.array_equal(strided, want[::3]) and not strided.flags.writeable
    assert np.shares_memory(strided, to_gray(rgb)) and to_gray(rgb, 3) is strided  # one array per item
    fresh = to_gray(rgb.copy(), 3)  # frames that can change: their own writeable copy
    assert np.array_equal(fresh, want[::3]) and fresh.flags.writeable


def _homographies_ref(gray: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, int]:
    """:func:`background_homographies` (defaults) on a normalized copy of the whole clip: the plain form."""
    gray = G.contrast_normalized(gray)
    p0 = cv2.goodFeaturesToTrack(gray[0], 500, 0.003, 5.0).astype(np.float32)
    h_0t, out, lost = np.eye(3), [np.eye(3)], np.zeros(len(gray), bool)
    for t in range(1, len(gray)):
        kept = 0
        guess = cv2.perspectiveTransform(p0.astype(np.float64), h_0t).astype(np.float32)
        pt, ok = G._track(gray[0], gray[t], p0, guess)
        back, ok_back = G._track(gray[t], gray[0], pt, p0)
        ok &= ok_back & (np.linalg.norm(back - p0, axis=-1).ravel() < 1.0)
        if ok.any():
            ok[ok] = G.patch_correlations(gray[0], gray[t], p0[ok], pt[ok]) >= 0.5
        if ok.sum() >= 8:
            h, mask = cv2.findHomography(p0[ok], pt[ok], cv2.RANSAC, 1.0)
            if h is not None and int(mask.sum()) >= 8:
                h_0t, kept = h, int(mask.sum())
        lost[t] = kept == 0
        out.append(h_0t)
    return out, lost, len(p0)


def test_background_homographies_normalizing_frames_as_read_match_a_normalized_clip() -> None:
    base = _textured_clip(n=1, h=140, w=200)[0]
    # a pan with lighting flicker, then a cut to other content (lost frames keep the last homography)
    frames = [np.clip(base[10:106, t:t + 128] * (1.0 + 0.1 * (t % 2)), 0, 255).astype(np.uint8)
              for t in range(8)]
    frames += [_textured_clip(n=1, h=96, w=128, seed=7)[0]] * 2
    gray = np.stack(frames)
    got = G.background_homographies(gray)
    homs, lost, corners = _homographies_ref(gray)
    assert got.corners == corners and np.array_equal(got.lost, lost)
    assert lost[:8].sum() == 0 and lost[8:].all()  # both regimes exercised
    assert all(np.array_equal(a, b) for a, b in zip(got.homographies, homs, strict=True))


def test_background_homographies_memory_does_not_grow_with_the_clip() -> None:
    import tracemalloc

    base = _textured_clip(n=1, h=140, w=260)[0]

    def peak(n: int) -> int:
        gray = np.stack([base[10:130, t:t + 160] for t in range(n)])
        tracemalloc.start()
        try:
            G.background_homographies(gray)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    # 50 more frames are 960 KB more clip; a normalized copy of the clip would add as much to the peak,
    # frames normalized as they are read add nothing (the patches of 500 corners set a constant peak)
    assert peak(60) - peak(10) < 0.25 * 50 * 120 * 160
