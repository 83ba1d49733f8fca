"""Benchmark the shared per-item work of the weights-free video metrics on a real-sized clip.

Run with::

    .venv/bin/python benchmarks/bench_content_checks.py [--seconds 10] [--repeats 3] [--skip-full]
    .venv/bin/python benchmarks/bench_content_checks.py --block-crop | --shift-search [--repeats 7]

Clip: 1280x720, ``--seconds`` long at 30 fps (default 10 s, 300 frames), written once with
``robojudge.video.write_video`` to ``benchmarks/_data/content_checks/`` (git-ignored): a fixed camera
over a textured table with three textured objects moving across it, so every metric has motion,
correspondence, trackable corners and features to work on.

Metric set: every registered metric with provider ``computed`` whose only input is the video (the
weights-free per-item video metrics). All of them run in one runner task (``robojudge.run.compute_task``):
one frame cache, so the video is decoded once per distinct sampling.

Legs, interleaved round-robin (machine noise hits both alike), median of ``--repeats`` (default 1: the
set takes minutes per run at this size, almost all of it Farneback flow at native size):

(a) full set, memo on: the whole task as the runner does it;
(b) full set, memo off: the same with :mod:`robojudge.metrics._derived` storing nothing, so every
    metric converts the frames to gray and computes the block means of its content checks again,
    as before the memo existed. (b)/(a) is the speed-up of the whole set.
    Within each run, the time spent inside ``_content.block_means`` and the ``to_gray`` conversions
    of the robophys metrics is measured by wrapping those functions.
(c) shared work alone, memo on versus off (at least 3 repeats): the gray conversions and content
    checks the nine metrics make on one item's frames, replayed in the runner's order on fresh
    read-only copies of the decoded frames, without the flow, tracking and matching around them. The
    full set's run-to-run noise (tens of seconds, on a shared machine) is far larger than this work.

``--block-crop`` runs only a side-by-side timing of ``_content.block_means`` against the area resize of
whole frames it replaced (block means of cells ``H / (H // 8)`` rows high, OpenCV's general path when
that is not a whole number), on random frames of several sizes, one OpenCV thread, alternating, median
of ``--repeats`` (at least 5).

``--shift-search`` runs only a side-by-side timing of the correspondence check with and without its search
for the translation between consecutive frames (``_content._aligned_correlations``, replaced for the
"without" leg by a stub that aligns none: the check as it was before the search), alternating, median of
``--repeats`` (at least 5): the content facts of each frame array the nine metrics read from the
benchmark clip (their block means given), the whole replay of leg (c) with the memo on, and, as the
worst case, the search run on every pair of each array (a clip none of whose frames correspond as they
are, as in a fast pan: the fixed camera of the benchmark clip needs it on none).

On code without :mod:`robojudge.metrics._derived` (the code before the memo; run it with
``PYTHONPATH=<old checkout>/src``) only (a) runs, which gives the "before" figures of the set.

Measured numbers are in docs/metrics.md ("Speed of the shared checks").
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from robojudge.metrics import Input, Provider, list_metrics
from robojudge.run import MetricRequest, Task, compute_task
from robojudge.store import ResultRow
from robojudge.suite import Item
from robojudge.video import SampledFrames, write_video

DATA = Path(__file__).resolve().parent / "_data" / "content_checks"
W, H, FPS = 1280, 720, 30


def clip(seconds: float) -> Path:
    """The benchmark clip, written on first use."""
    path = DATA / f"table_{W}x{H}_{seconds:g}s.mp4"
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    # Texture at several scales, so corners and features exist at every pyramid level.
    table = sum(cv2.resize(rng.normal(0, 1, (H // s, W // s)).astype(np.float32), (W, H),
                           interpolation=cv2.INTER_CUBIC) for s in (4, 16, 64))
    table = np.clip(128 + 30 * table, 0, 255).astype(np.uint8)
    background = np.stack([table, (table * 0.9).astype(np.uint8), (table * 0.8).astype(np.uint8)], -1)
    objects = []
    for k in range(3):
        patch = rng.integers(40, 255, (90 + 20 * k, 120 + 30 * k, 3), dtype=np.uint8)
        objects.append(cv2.GaussianBlur(patch, (5, 5), 0))
    frames = []
    n = round(seconds * FPS)
    for t in range(n):
        f = background.copy()
        for k, obj in enumerate(objects):
            h, w = obj.shape[:2]
            x = int((W - w - 1) * (0.5 + 0.45 * np.sin(2 * np.pi * (t / n) * (k + 1) + k)))
            y = int((H - h - 1) * (0.5 + 0.4 * np.cos(2 * np.pi * (t / n) * (0.5 + k) + 2 * k)))
            f[y:y + h, x:x + w] = obj
        frames.append(f)
    print(f"writing {path} ({n} frames) ...", flush=True)
    return write_video(path, frames, fps=FPS)


def video_only_ids() -> list[str]:
    return [s.id for s in list_metrics()
            if s.provider is Provider.computed and set(s.inputs) == {Input.video}]


class Shares:
    """Wrap the shared-work functions wherever a metric module holds them, and time their calls."""

    NAMES = ("block_means", "to_gray")

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(self.NAMES, 0.0)
        self.calls = dict.fromkeys(self.NAMES, 0)
        self._undo: list[tuple[Any, str, Callable[..., Any]]] = []

    def __enter__(self) -> Shares:
        originals = {"block_means": importlib.import_module("robojudge.metrics._content").block_means,
                     "to_gray": importlib.import_module("robojudge.metrics.robophys.motion").to_gray}
        for mod in [m for name, m in sys.modules.items() if name.startswith("robojudge.metrics")]:
            for name, fn in originals.items():
                if getattr(mod, name, None) is fn:
                    self._undo.append((mod, name, fn))
                    setattr(mod, name, self._timed(name, fn))
        return self

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.calls[name] += 1
        return wrapper

    def __exit__(self, *exc: object) -> None:
        for mod, name, fn in self._undo:
            setattr(mod, name, fn)


class _NoMemo(dict):  # type: ignore[type-arg]
    """A memo that forgets everything: the code path of a metric set without shared derived arrays."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def memo_switch() -> Callable[[bool], None] | None:
    """Turns the derived-array memo on or off; None on code that has no memo."""
    try:
        derived = importlib.import_module("robojudge.metrics._derived")
    except ImportError:
        return None
    real = derived._MEMO

    def switch(on: bool) -> None:
        derived._MEMO = real if on else _NoMemo()

    return switch


def run_set(item: Item, reqs: tuple[MetricRequest, ...]) -> list[ResultRow]:
    rows = compute_task(Task(item, reqs))
    bad = [f"{r.metric}: {r.status} {r.error}" for r in rows if r.status != "ok"]
    if bad:
        raise SystemExit("metrics failed on the benchmark clip:\n  " + "\n  ".join(bad))
    return rows


def _replay(path: Path) -> tuple[SampledFrames, np.ndarray, Callable[[np.ndarray, np.ndarray], None]]:
    """The clip's native frames, its 8 fps 256x256 gray sampling, and the replay of the gray conversions
    and content checks the nine metrics make on them, in the runner's order."""
    from robojudge.metrics._content import require_correspondence, require_motion
    from robojudge.metrics.robophys.motion import to_gray
    from robojudge.video import sample_frames

    native = sample_frames(path, fps=None, max_frames=None)
    small = sample_frames(path, fps=8.0, max_frames=None, size=(256, 256), gray=True).frames
    stride = max(1, round(native.source_fps / 8.0))

    def replay(rgb: np.ndarray, g8: np.ndarray) -> None:
        for check in (require_motion, require_correspondence):  # cc_photometric
            check(to_gray(rgb))
        require_motion(to_gray(rgb))  # ctg_camera_control
        require_correspondence(g8)  # flow_motion_magnitude_farneback
        require_motion(g8)  # flow_warp_error
        require_correspondence(to_gray(rgb, stride))  # mq_dynamic_degree
        require_correspondence(to_gray(rgb))  # mq_flow_score
        require_motion(rgb)  # mq_temporal_flickering
        require_motion(g8)  # pixel_frame_consistency
        require_motion(to_gray(rgb))  # rbg_stability

    return native, small, replay


def _frozen_copy(a: np.ndarray) -> np.ndarray:
    out = a.copy()  # a fresh array per run: the memo of the last run dies with its arrays
    out.flags.writeable = False
    return out


def replay_leg(path: Path, repeats: int, switch: Callable[[bool], None]) -> None:
    """The gray conversions and content checks the nine metrics make on one item's shared frames, in
    the runner's order, without the flow, tracking and matching around them; memo on versus off."""
    native, small, replay = _replay(path)
    legs = {"memo on": True, "memo off (before)": False}
    times: dict[str, list[float]] = {name: [] for name in legs}
    for _ in range(repeats):
        for name, on in legs.items():
            rgb, g8 = _frozen_copy(native.frames), _frozen_copy(small)
            switch(on)
            start = time.perf_counter()
            replay(rgb, g8)
            times[name].append(time.perf_counter() - start)
            del rgb, g8
    switch(True)
    print(f"\nshared work alone (gray conversions and content checks of the nine metrics on "
          f"{len(native)} frames of {W}x{H}), median of {repeats}:")
    for name, ts in times.items():
        print(f"  {name:18s} {statistics.median(ts):6.2f} s")
    a, b = (statistics.median(ts) for ts in times.values())
    print(f"  before/now time ratio: {b / a:.2f} (saved {b - a:.2f} s per item)")


def shift_search(path: Path, repeats: int) -> None:
    """The correspondence check with its search for the translation between frames against without it."""
    content = importlib.import_module("robojudge.metrics._content")
    from robojudge.metrics.robophys.motion import to_gray

    search = content._aligned_correlations

    def no_search(blocks: np.ndarray, steps: np.ndarray) -> np.ndarray:
        return np.full(len(steps), np.nan)  # fmax with NaN keeps the unshifted correlation

    legs = {"without search (before)": no_search, "with search": search}
    native, small, replay = _replay(path)
    stride = max(1, round(native.source_fps / 8.0))
    arrays = {f"native gray {W}x{H}": to_gray(native.frames), f"native RGB {W}x{H}": native.frames,
              f"gray {W}x{H} every {stride}th": to_gray(native.frames, stride), "8 fps gray 256x256": small}
    print(f"content facts of {len(native)} frames (block means given), then the replay of leg (c); "
          f"median of {max(5, repeats)} alternating runs")
    try:
        for name, frames in arrays.items():
            blocks = content.block_means(frames)
            every = np.arange(len(blocks) - 1)
            times: dict[str, list[float]] = {leg: [] for leg in [*legs, "every pair"]}
            for _ in range(max(5, repeats)):
                for leg, fn in legs.items():
                    content._aligned_correlations = fn
                    start = time.perf_counter()
                    content._facts(frames, blocks)
                    times[leg].append(time.perf_counter() - start)
                start = time.perf_counter()
                search(blocks, every)
                times["every pair"].append(time.perf_counter() - start)
            a, b, c = (statistics.median(ts) * 1e3 for ts in times.values())
            print(f"  {name:28s} ({len(frames):3d} frames): {a:7.1f} ms without, {b:7.1f} ms with; "
                  f"every pair aligned {c:7.1f} ms ({c / len(every):.2f} ms a pair)")
        times = {leg: [] for leg in legs}
        for _ in range(max(5, repeats)):
            for leg, fn in legs.items():
                content._aligned_correlations = fn
                rgb, g8 = _frozen_copy(native.frames), _frozen_copy(small)
                start = time.perf_counter()
                replay(rgb, g8)
                times[leg].append(time.perf_counter() - start)
                del rgb, g8
        a, b = (statistics.median(ts) for ts in times.values())
        print(f"  whole replay, memo on: {a:.2f} s without, {b:.2f} s with (+{b - a:.2f} s per item)")
    finally:
        content._aligned_correlations = search


def _whole_frame_block_means(frames: np.ndarray) -> np.ndarray:
    """The block means before whole blocks were cut out: all rows and columns resized by area."""
    h, w = frames.shape[1:3]
    size = (max(1, w // 8), max(1, h // 8))
    return np.stack([cv2.resize(f, size, interpolation=cv2.INTER_AREA) for f in frames]).astype(np.float32)


def block_crop(repeats: int) -> None:
    from robojudge.metrics._content import block_means

    cv2.setNumThreads(1)
    rng = np.random.default_rng(0)
    print("block means of 145 frames, one OpenCV thread; median seconds, whole-frame resize / whole blocks")
    for h, w in ((354, 640), (360, 640), (416, 752), (720, 1280), (180, 320), (270, 480)):
        for channels in (3, 1):
            shape = (145, h, w, channels) if channels == 3 else (145, h, w)
            frames = rng.integers(0, 256, shape, dtype=np.uint8)
            old: list[float] = []
            new: list[float] = []
            for _ in range(max(5, repeats)):
                for fn, out in ((_whole_frame_block_means, old), (block_means, new)):
                    start = time.perf_counter()
                    fn(frames)
                    out.append(time.perf_counter() - start)
            a, b = statistics.median(old), statistics.median(new)
            print(f"  {w}x{h} {'RGB' if channels == 3 else 'gray'}: {a:.4f} s / {b:.4f} s = {a / b:.2f}x")


def main() -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--skip-full", action="store_true", help="skip the full set (legs a-b)")
    parser.add_argument("--block-crop", action="store_true",
                        help="only time block_means against the whole-frame resize it replaced")
    parser.add_argument("--shift-search", action="store_true",
                        help="only time the correspondence check with and without its translation search")
    args = parser.parse_args()
    if args.block_crop:
        block_crop(args.repeats)
        return 0

    path = clip(args.seconds)
    if args.shift_search:
        shift_search(path, args.repeats)
        return 0
    item = Item(item_id="bench", video=str(path))
    if not args.skip_full:
        ids = video_only_ids()
        reqs = tuple(MetricRequest.build(m) for m in ids)
        print(f"clip: {path}\n{len(ids)} metrics: {', '.join(ids)}", flush=True)
        switch = memo_switch()
        legs = {"(a) memo on": True} if switch is None else {"(a) memo on": True, "(b) memo off": False}
        values: dict[str, list[str]] = {}
        times: dict[str, list[float]] = {name: [] for name in legs}
        shares: dict[str, list[Shares]] = {name: [] for name in legs}
        per_metric: dict[str, dict[str, list[float]]] = {name: {} for name in legs}
        for _ in range(args.repeats):
            for name, on in legs.items():
                if switch:
                    switch(on)
                with Shares() as s:
                    start = time.perf_counter()
                    rows = run_set(item, reqs)
                    times[name].append(time.perf_counter() - start)
                shares[name].append(s)
                values.setdefault(name, [f"{r.metric}={r.value:.6g}" for r in rows])
                for r in rows:
                    per_metric[name].setdefault(r.metric, []).append(r.duration_s)
        if switch:
            switch(True)
        if len({tuple(v) for v in values.values()}) != 1:
            raise SystemExit(f"the legs disagree: {values}")
        print("values:", ", ".join(values["(a) memo on"]))
        print(f"median of {args.repeats} interleaved repeats" + (" (code without the memo)" * (not switch)))
        med = {name: statistics.median(ts) for name, ts in times.items()}
        shared = {name: statistics.median(sum(s.seconds.values()) for s in ss) for name, ss in shares.items()}
        for name in legs:
            s = shares[name][0]
            print(f"  {name:14s} set {med[name]:7.2f} s;  shared work {shared[name]:5.2f} s "
                  f"(block_means {s.calls['block_means']} calls {s.seconds['block_means']:.2f} s, "
                  f"to_gray {s.calls['to_gray']} calls {s.seconds['to_gray']:.2f} s)")
            print("    per metric: " + ", ".join(f"{m} {statistics.median(d):.2f} s"
                                                 for m, d in per_metric[name].items()))
        if switch:
            a, b = med["(a) memo on"], med["(b) memo off"]
            sa, sb = shared["(a) memo on"], shared["(b) memo off"]
            print(f"  (b)/(a) set time ratio {b / a:.3f}; shared work ratio {sb / sa:.1f} "
                  f"(saved {sb - sa:.2f} s of {b:.1f} s)")
    switch = memo_switch()
    if switch is not None:
        replay_leg(path, max(3, args.repeats), switch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
