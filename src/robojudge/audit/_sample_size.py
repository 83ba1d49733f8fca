"""``robojudge audit sample-size``: FVD-style set distances of each generator against n (RoboWorM Fig. B3).

Every video of a generator is cut into windows of ``window`` consecutive frames (``stride`` apart;
a remainder shorter than a window is dropped), each window becomes one feature vector, and the
Frechet distance of a generator's windows to the windows of the suite's reference videos (each
distinct reference once, all windows: the fixed reference set) is recomputed on random subsets of n
windows (:func:`robojudge.meta.sample_size_sensitivity`).

Features (``features=``):

* ``thumb`` (weights-free, the default): per window, the mean frame and the mean absolute
  frame-to-frame difference, each in gray and reduced to ``grid x grid`` block means (values in
  [0, 1]), concatenated: ``2 grid^2`` numbers (32 for the default grid 4) describing appearance and
  motion. It is a stand-in for I3D: the same estimator with the same small-sample bias, on
  features anyone can compute; its values are not FVD values.
* ``i3d``: the 400-d I3D features FVD uses (the TorchScript I3D of ``robojudge weights fetch
  i3d_torchscript``, the network of ``iq1_fvd``), each window resized to 224 x 224 and fed whole; with
  these, the statistic is FVD on windows. Needs the ``tv`` extra's torch and the weights file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from robojudge._files import replacing
from robojudge._json import json_ready
from robojudge.meta import SampleSizeResult, sample_size_sensitivity
from robojudge.metrics.learned.distribution import frechet_feature_distance
from robojudge.report import render_page, sample_size_section, sample_size_table
from robojudge.suite import load_suite
from robojudge.video import VideoError, sample_frames

FEATURES = ("thumb", "i3d")
#: Side of the square frames fed to I3D (FVD's convention).
I3D_SIZE = 224


def thumb_features(gray: np.ndarray, window: int, stride: int, grid: int = 4) -> np.ndarray:
    """``(windows, 2 grid^2)`` features of a ``(frames, H, W)`` gray clip (see the module docstring).

    >>> clip = np.zeros((10, 8, 8), np.uint8); clip[5:] = 255
    >>> f = thumb_features(clip, window=5, stride=5, grid=2)
    >>> f.shape, f[0].tolist(), f[1][:4].tolist()
    ((2, 8), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0])
    """
    if window < 2 or stride < 1 or grid < 1:
        raise ValueError(f"need window >= 2, stride >= 1 and grid >= 1, got {window}, {stride}, {grid}")
    x = gray.astype(np.float32) / 255.0
    rows = []
    for start in range(0, len(x) - window + 1, stride):
        w = x[start:start + window]
        mean = cv2.resize(w.mean(axis=0), (grid, grid), interpolation=cv2.INTER_AREA)
        change = np.abs(np.diff(w, axis=0)).mean(axis=0)
        motion = cv2.resize(change, (grid, grid), interpolation=cv2.INTER_AREA)
        rows.append(np.concatenate([mean.ravel(), motion.ravel()]))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 2 * grid * grid)


def video_windows(path: str | Path, window: int = 16, stride: int | None = None, grid: int = 4,
                  size: int = 64) -> np.ndarray:
    """The ``thumb`` features of every window of one video (decoded in gray, longer side ``size``)."""
    clip = sample_frames(path, fps=None, max_frames=None, size=size, gray=True)
    frames = clip.frames if clip.frames is not None else np.zeros((0, 1, 1), np.uint8)
    return thumb_features(frames, window, stride or window, grid)


def i3d_windows(path: str | Path, window: int, stride: int | None, net: Any) -> np.ndarray:
    """``(windows, d)`` I3D features of every window of one video (``net``: the I3D TorchScript contract,
    ``robojudge.models.I3D_TORCHSCRIPT``)."""
    from robojudge.metrics.learned.tv_sets import i3d_features

    frames = sample_frames(path, fps=None, max_frames=None, size=(I3D_SIZE, I3D_SIZE)).frames
    step = stride or window
    clips = [] if frames is None else [frames[s:s + window] for s in range(0, len(frames) - window + 1, step)]
    return i3d_features(clips, net) if clips else np.zeros((0, 1))


@dataclass
class SampleSizeRun:
    """What :func:`audit_sample_size` did.

    Attributes:
        result: Curves and flip shares.
        reference_windows: Windows of the reference set.
        videos: Generator -> videos read.
        skipped: Item or generator -> why it was left out (an unreadable video, too few windows).
        written: Files written (with ``out_dir``).
    """

    result: SampleSizeResult
    reference_windows: int
    videos: dict[str, int]
    skipped: dict[str, str] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)


def default_grid(max_windows: int) -> list[int]:
    """Powers of two from 4 up to ``max_windows``, and ``max_windows`` itself.

    >>> default_grid(40)
    [4, 8, 16, 32, 40]
    """
    grid = [n for n in (2 ** k for k in range(2, 20)) if n <= max_windows]
    return sorted({*grid, max_windows}) if max_windows >= 2 else []


def audit_sample_size(
    manifest: str | Path,
    *,
    generators: Sequence[str] | None = None,
    ns: Sequence[int] | None = None,
    window: int = 16,
    stride: int | None = None,
    grid: int = 4,
    draws: int = 100,
    seed: int = 0,
    replace: bool = False,
    features: str = "thumb",
    net: Any = None,
    out_dir: str | Path | None = None,
) -> SampleSizeRun:
    """Frechet distance of each generator's windows to the reference windows, against n.

    Args:
        manifest: The suite; its items' ``reference_video`` files form the reference set.
        generators: Generators to compare (None: every generator of the suite).
        ns: Window counts (None: :func:`default_grid` up to the largest generator's windows).
        window, stride, grid: Window length and step in frames, feature grid (see the module).
        draws, seed, replace: Subsets per (generator, n), their seed, with or without replacement.
        features: ``thumb`` (weights-free) or ``i3d`` (see the module docstring).
        net: The I3D network for ``i3d`` (default: the local TorchScript weights, loaded once).
        out_dir: Where to write ``sample_size.json``, the table, ``sample_size.svg`` and ``index.html``.

    Raises:
        ValueError: Unknown features, fewer than two generators, no reference video, or a generator
            with fewer than two windows.
        robojudge.models.MissingWeightsError: ``i3d`` without ``net`` and without the weights here.
    """
    if features not in FEATURES:
        raise ValueError(f"unknown features {features!r}; known: {', '.join(FEATURES)}")
    if features == "i3d" and net is None:
        from robojudge import models

        net = models.load_i3d_torchscript(metric="iq1_fvd")

    def windows_of(path: str) -> np.ndarray:
        if features == "i3d":
            return i3d_windows(path, window, stride, net)
        return video_windows(path, window, stride, grid)

    suite = load_suite(manifest, strict=False)
    names = list(generators) if generators else sorted({it.generator for it in suite.items if it.generator})
    missing = [g for g in names if not any(it.generator == g for it in suite.items)]
    if missing:
        raise ValueError(f"no suite item has generator {', '.join(map(repr, missing))}")
    refs = sorted({it.reference_video for it in suite.items if it.generator in names and it.reference_video})
    if not refs:
        raise ValueError(f"{manifest}: no item of these generators has a reference_video; the set distance "
                         "needs a reference set")
    ref_parts = [w for w in (windows_of(r) for r in refs) if len(w)]
    if not ref_parts:
        raise ValueError(f"{manifest}: the reference videos are shorter than one window of {window} frames")
    reference = np.concatenate(ref_parts)
    feats: dict[str, np.ndarray] = {}
    videos: dict[str, int] = {}
    skipped: dict[str, str] = {}
    for g in names:
        parts = []
        for it in suite.items:
            if it.generator != g:
                continue
            try:
                w = windows_of(it.video)
                if len(w):  # a video shorter than a window adds none
                    parts.append(w)
            except VideoError as exc:  # one unreadable rollout costs its windows, not the audit
                skipped[it.item_id] = str(exc)
        videos[g] = len(parts)
        x = np.concatenate(parts) if parts else np.zeros((0, 1))
        if len(x) < 2:
            skipped[g] = f"generator {g!r}: {len(x)} window(s) of {window} frames; at least 2 needed"
            continue
        feats[g] = x
    if len(feats) < 2:
        raise ValueError(f"fewer than two generators with windows to compare: {'; '.join(skipped.values())}")
    grid_n = list(ns) if ns else default_grid(max(len(f) for f in feats.values()))

    def statistic(x: np.ndarray) -> float:
        return frechet_feature_distance(x, reference, warn=False)

    result = sample_size_sensitivity(feats, statistic, grid_n, draws=draws, seed=seed, replace=replace)
    run = SampleSizeRun(result, len(reference), videos, skipped)
    if out_dir is not None:
        run.written = write_sample_size(run, out_dir, source=str(manifest), features=features)
    return run


def write_sample_size(run: SampleSizeRun, out_dir: str | Path, *, source: str = "", features: str = "thumb"
                      ) -> list[Path]:
    """Write the JSON (without the per-draw values), the table, the plot and a one-section page."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    r = run.result
    data = {"ns": list(r.ns), "windows": r.windows, "full": r.full, "flips": list(r.flips),
            "draw_flips": list(r.draw_flips), "pairs": list(r.pairs),
            "reference_windows": run.reference_windows,
            "videos": run.videos, "skipped": run.skipped, "features": features,
            "curves": {g: [{k: v for k, v in asdict(p).items() if k != "values"} for p in pts]
                       for g, pts in r.curves.items()}}
    sec = sample_size_section(r, "Frechet distance", features=f"{features} (docs/audit.md)")
    with replacing(out, named=True) as files:  # all new or (on an error) the old ones untouched; page last
        written = [files.write_text(out / "sample_size.json", json.dumps(json_ready(data), indent=2) + "\n"),
                   *sample_size_table(r, "Frechet distance").stage(files, out / "tables"),
                   files.write_text(out / "sample_size.svg", sec.plots[0]),
                   files.write_text(out / "index.html",
                                    render_page([sec], title="Sample-size sensitivity", source=source))]
    return written
