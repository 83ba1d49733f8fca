"""Optical flow for the weights-free flow metrics: accuracy on known motion and speed, side by side.

Run with::

    .venv/bin/python benchmarks/bench_flow.py [--width 1280] [--height 720] [--repeats 3] [--threads 1]

Candidates: robojudge's Farneback (OpenCV's customary settings: pyramid scale 0.5, 3 levels, 15 px
window, 3 iterations, poly_n 5, sigma 1.2), Farneback with other pyramids and windows, Farneback on
frames halved in each side (the flow scaled back up), and OpenCV's DIS flow (Kroeger et al., ECCV 2016)
at its three presets.

Accuracy: pairs rendered with a KNOWN flow. A texture (fine and coarse detail mixed, or a flat
low-contrast one like a simulator's table) is carried by a displacement field with ``cv2.remap``:

* ``shift small`` / ``shift large``: translations of (2.6, -1.4) and (12.3, 7.1) px;
* ``rotate+zoom``: 1.5 degrees and 2% zoom about the centre (up to ~20 px at the corners of a 720p frame);
* ``local``: an arm-like blob (Gaussian, sigma 1/8 of the short side) moving 10 px per frame right
  and 4 px down over a still background; elsewhere the true flow is 0.
* ``object``: a sharp-edged textured square (1/3 of the short side) pasted over the still texture and
  moved by (8, 3) px, as a gripper or block moves in a small generated clip; the true flow is that
  displacement on the square's pixels of the first frame and 0 elsewhere (background it uncovers
  included, which no method can see; the share of such pixels is small).

With ``--sim`` a third texture is a MuJoCo render (the middle frame of the simulator suite's first
Fetch pick-and-place episode, 720x720, gray: flat table, walls and robot links with sharp edges; needs
the ``sim`` extra) carried by the same fields. Its flat areas hold no motion any estimator could see,
so the end-point error there measures how far each method carries the edges' motion inwards.

For a field ``D`` the next frame is ``next(x) = prev(x - D(x))`` (``cv2.remap``, bicubic), so the true
forward flow ``F`` satisfies ``p + F(p) = x`` with ``x - D(x) = p``: ``F(p) = D(p + F(p))``, solved by
fixed-point iteration (exact for the translations; for the smooth fields the iteration converges to
far below the estimators' errors). Reported per method: mean end-point error ``|F_est - F|`` on the
central window (10% cut from each side: no method sees beyond the border), and the relative error of
the mean flow magnitude (what ``mq_flow_score`` and ``flow_motion_magnitude_farneback`` report).

Speed: the median time of one flow between two 720p frames over ``--repeats`` calls, as a ratio to
robojudge's Farneback (absolute times depend on the machine and its load; ratios much less). OpenCV
runs ``--threads`` threads (default 1: one worker per core is how the runner uses a machine).

Shared flow (``--clip-seconds``, default 2; 0 skips it): the five flow metrics of one item in one runner
task (``robojudge.run.compute_task``) on a 1280x720 16 fps clip (a textured object crossing a textured
background, written to ``benchmarks/_data/flow/``, git-ignored), with the per-item flow cache
(:mod:`robojudge.metrics._flow_cache`) on and off (off: every metric computes the flows it reads, as
before the cache). Farneback calls are counted; times are one run of each, interleaved.

Measured numbers are in docs/metrics.md ("Flow: shared per item, and the choice of estimator").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any
from unittest import mock

import cv2
import numpy as np

Flow = Callable[[np.ndarray, np.ndarray], np.ndarray]


def texture(h: int, w: int, kind: str, seed: int = 0) -> np.ndarray:
    """uint8 gray texture: ``rich`` mixes detail at 1, 4 and 16 px; ``flat`` is low-contrast and coarse."""
    rng = np.random.default_rng(seed)
    if kind == "rich":
        img = sum(cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), s) * s
                  for s in (1.0, 4.0, 16.0))
        return cv2.normalize(img, None, 0, 255, cv2.NORM_MINMAX).astype(np.uint8)
    img = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 8.0)
    img = cv2.normalize(img, None, 100, 160, cv2.NORM_MINMAX)  # a 60-level range, like a sim table
    return np.clip(img + rng.normal(0, 1.5, (h, w)), 0, 255).astype(np.uint8)  # sensor-like noise


def fields(h: int, w: int) -> dict[str, np.ndarray]:
    """Displacement fields ``D`` (``(H, W, 2)`` float32, x then y) of the known motions."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    out = {}
    for name, (dx, dy) in {"shift small": (2.6, -1.4), "shift large": (12.3, 7.1)}.items():
        d = np.zeros((h, w, 2), np.float32)
        d[...] = (dx, dy)
        out[name] = d
    a, s = np.deg2rad(1.5), 1.02
    cx, cy = w / 2, h / 2
    rx, ry = xs - cx, ys - cy
    out["rotate+zoom"] = np.stack([s * (np.cos(a) * rx - np.sin(a) * ry) - rx,
                                   s * (np.sin(a) * rx + np.cos(a) * ry) - ry], -1).astype(np.float32)
    sigma = min(h, w) / 8
    blob = np.exp(-((xs - 0.4 * w) ** 2 + (ys - 0.5 * h) ** 2) / (2 * sigma**2))
    out["local"] = np.stack([10.0 * blob, 4.0 * blob], -1).astype(np.float32)
    return out


def render(prev: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``next(x) = prev(x - D(x))`` and the true forward flow from ``prev`` to ``next``."""
    h, w = prev.shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    nxt = cv2.remap(prev, xs - d[..., 0], ys - d[..., 1], cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT)
    f = d.copy()
    for _ in range(30):  # F(p) = D(p + F(p))
        f = cv2.remap(d, xs + f[..., 0], ys + f[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return nxt, f


def pasted(prev: np.ndarray, step: tuple[int, int] = (8, 3)) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``prev`` with a textured square pasted, the next frame with it moved by ``step``, and the true flow."""
    h, w = prev.shape
    side = min(h, w) // 3
    obj = texture(side, side, "rich", seed=7)
    x, y = w // 4, h // 3
    a, b = prev.copy(), prev.copy()
    a[y:y + side, x:x + side] = obj
    b[y + step[1]:y + step[1] + side, x + step[0]:x + step[0] + side] = obj
    truth = np.zeros((h, w, 2), np.float32)
    truth[y:y + side, x:x + side] = step
    return a, b, truth


def farneback(pyr_scale: float = 0.5, levels: int = 3, winsize: int = 15, iterations: int = 3,
              poly_n: int = 5, poly_sigma: float = 1.2) -> Flow:
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return cv2.calcOpticalFlowFarneback(a, b, None, pyr_scale, levels, winsize, iterations, poly_n,
                                            poly_sigma, 0)
    return run


def halved(flow: Flow) -> Flow:
    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        h, w = a.shape
        small = flow(cv2.resize(a, (w // 2, h // 2), interpolation=cv2.INTER_AREA),
                     cv2.resize(b, (w // 2, h // 2), interpolation=cv2.INTER_AREA))
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR) * 2.0
    return run


def dis(preset: int) -> Flow:
    engine = cv2.DISOpticalFlow.create(preset)

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return engine.calc(a, b, None)
    return run


METHODS: dict[str, Flow] = {
    "farneback (robojudge)": farneback(),
    "farneback levels=5": farneback(levels=5),
    "farneback levels=5 win=31 poly7": farneback(levels=5, winsize=31, poly_n=7, poly_sigma=1.5),
    "farneback levels=2 iter=2": farneback(levels=2, iterations=2),
    "farneback on half size": halved(farneback()),
    "DIS ultrafast": dis(cv2.DISOPTICAL_FLOW_PRESET_ULTRAFAST),
    "DIS fast": dis(cv2.DISOPTICAL_FLOW_PRESET_FAST),
    "DIS medium": dis(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM),
}


def sim_frame() -> np.ndarray:
    """The middle frame of a 720x720 simulator episode, gray (built once into ``benchmarks/_data/flow``)."""
    import os

    os.environ.setdefault("MUJOCO_GL", "egl")
    from robojudge.suite.sim import make_sim_suite
    from robojudge.video import sample_frames

    manifest = DATA / "sim" / "suite.jsonl"
    if not manifest.exists():
        make_sim_suite(DATA / "sim", seed=1, episodes=1, views=1, size=720, profiles=("oracle",), workers=1)
    video = manifest.parent / json.loads(manifest.read_text().splitlines()[0])["video"]
    frames = sample_frames(video, fps=None, max_frames=None, gray=True).frames
    return np.ascontiguousarray(frames[len(frames) // 2])


def accuracy(h: int, w: int, kinds: dict[str, np.ndarray]) -> dict[tuple[str, str, str], tuple[float, float]]:
    """``(method, texture, motion) -> (mean EPE px, relative error of the mean magnitude)``."""
    out = {}
    for kind, prev in kinds.items():
        h, w = prev.shape
        mh, mw = h // 10, w // 10
        pairs = {motion: (prev, *render(prev, d)) for motion, d in fields(h, w).items()}
        pairs["object"] = pasted(prev)
        for motion, (first, nxt, truth) in pairs.items():
            t = truth[mh:-mh, mw:-mw]
            true_mag = float(np.linalg.norm(t, axis=-1).mean())
            for name, flow in METHODS.items():
                est = flow(first, nxt)[mh:-mh, mw:-mw]
                epe = float(np.linalg.norm(est - t, axis=-1).mean())
                mag = float(np.linalg.norm(est, axis=-1).mean())
                out[(name, kind, motion)] = (epe, (mag - true_mag) / true_mag)
    return out


def speed(h: int, w: int, repeats: int) -> dict[str, float]:
    """Median seconds per flow of each method on one pair, methods interleaved round-robin."""
    prev = texture(h, w, "rich")
    nxt, _ = render(prev, fields(h, w)["local"])
    times: dict[str, list[float]] = {name: [] for name in METHODS}
    for flow in METHODS.values():
        flow(prev, nxt)  # warm-up: allocations, DIS's first-call setup
    for _ in range(repeats):
        for name, flow in METHODS.items():
            start = time.perf_counter()
            flow(prev, nxt)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


DATA = Path(__file__).resolve().parent / "_data" / "flow"
FLOW_METRICS = ("flow_warp_error", "flow_motion_magnitude_farneback", "mq_dynamic_degree", "mq_flow_score",
                "cc_photometric")


def clip(seconds: float, fps: int = 16) -> Path:
    """A 1280x720 clip: a 240 px textured square crossing a textured background at 8 px per frame."""
    from robojudge.video import write_video

    path = DATA / f"crossing_{seconds:g}s.mp4"
    if not path.exists():
        bg, obj = texture(720, 1280, "rich", 1), texture(240, 240, "rich", 2)
        frames = []
        for t in range(round(seconds * fps)):
            f = bg.copy()
            x = 100 + 8 * t
            f[240:480, x:x + 240] = obj
            frames.append(np.repeat(f[..., None], 3, axis=2))
        DATA.mkdir(parents=True, exist_ok=True)
        write_video(path, np.stack(frames), fps=fps)
    return path


def shared_flow(seconds: float) -> dict[str, tuple[float, int, dict[str, float | None]]]:
    """``leg -> (seconds, Farneback calls, values)`` for the five flow metrics with the cache on and off."""
    from robojudge.metrics import _flow_cache
    from robojudge.run import MetricRequest, Task, compute_task
    from robojudge.suite import Item

    item = Item(item_id="crossing", video=str(clip(seconds)))
    real_flow = cv2.calcOpticalFlowFarneback
    calls = [0]

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return real_flow(*args)

    def fresh(frames: np.ndarray, key: Hashable, compute: Callable[[], Any]) -> Any:
        return compute()  # the cache off: nothing kept, and no frames count as shared

    out = {}
    with mock.patch.object(cv2, "calcOpticalFlowFarneback", counted):
        for leg in ("cache on", "cache off"):
            with contextlib.ExitStack() as stack:
                if leg == "cache off":
                    stack.enter_context(mock.patch.object(_flow_cache, "derived", fresh))
                    stack.enter_context(mock.patch.object(_flow_cache, "frozen", lambda frames: False))
                calls[0] = 0
                start = time.perf_counter()
                rows = compute_task(Task(item, tuple(MetricRequest.build(m) for m in FLOW_METRICS)))
                out[leg] = (time.perf_counter() - start, calls[0], {r.metric: r.value for r in rows})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clip-seconds", type=float, default=2.0)
    parser.add_argument("--sim", action="store_true", help="add a MuJoCo render as a third texture")
    args = parser.parse_args()
    cv2.setNumThreads(args.threads)
    h, w = args.height, args.width
    kinds = {kind: texture(h, w, kind) for kind in ("rich", "flat")}
    if args.sim:
        kinds["sim"] = sim_frame()
    acc = accuracy(h, w, kinds)
    spd = speed(h, w, args.repeats)
    base = spd["farneback (robojudge)"]
    motions = [*fields(8, 8), "object"]
    print(f"{w}x{h}, OpenCV {cv2.__version__}, {args.threads} thread(s), median of {args.repeats}")
    print(f"base: robojudge's Farneback, {base * 1000:.0f} ms per flow on this machine now")
    for kind in kinds:
        print(f"\nmean EPE in px ({kind} texture) / relative error of the mean magnitude")
        print("| method | time / base | " + " | ".join(motions) + " |")
        print("| --- | --- |" + " --- |" * len(motions))
        for name in METHODS:
            cells = [f"{acc[(name, kind, m)][0]:.3f} / {acc[(name, kind, m)][1]:+.1%}" for m in motions]
            print(f"| {name} | {spd[name] / base:.2f} | " + " | ".join(cells) + " |")
    if args.clip_seconds > 0:
        report_shared(args.clip_seconds)


def report_shared(seconds: float) -> None:
    legs = shared_flow(seconds)
    (on_s, on_calls, on_values), (off_s, off_calls, off_values) = legs["cache on"], legs["cache off"]
    print(f"\nfive flow metrics, one item, 1280x720 16 fps, {seconds:g} s: cache on {on_s:.1f} s, "
          f"{on_calls} Farneback calls; off {off_s:.1f} s, {off_calls} calls; off/on {off_s / on_s:.2f}x")
    print("values equal with and without the cache:", on_values == off_values)


if __name__ == "__main__":
    main()
