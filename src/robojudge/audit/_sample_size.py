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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cv2
import numpy as np

from robojudge.audit._json import json_ready
from robojudge.meta import SampleSizeResult, sample_size_sensitivity
from robojudge.metrics.learned.distribution import frechet_feature_distance
from robojudge.report import render_page, sample_size_section, sample_size_table
from robojudge.suite import load_suite
from robojudge.video import VideoError, sample_frames

FEATURES = ("thumb",)


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
    out_dir: str | Path | None = None,
) -> SampleSizeRun:
    """Frechet distance of each generator's windows to the reference windows, against n.

    Args:
        manifest: The suite; its items' ``reference_video`` files form the reference set.
        generators: Generators to compare (None: every generator of the suite).
        ns: Window counts (None: :func:`default_grid` up to the largest generator's windows).
        window, stride, grid: Window length and step in frames, feature grid (see the module).
        draws, seed, replace: Subsets per (generator, n), their seed, with or without replacement.
        features: Feature kind (only ``thumb`` so far).
        out_dir: Where to write ``sample_size.json``, the table, ``sample_size.svg`` and ``index.html``.

    Raises:
        ValueError: Unknown features, fewer than two generators, no reference video, or a generator
            with fewer than two windows.
    """
    if features not in FEATURES:
        raise ValueError(f"unknown features {features!r}; known: {', '.join(FEATURES)}")
    suite = load_suite(manifest, strict=False)
    names = list(generators) if generators else sorted({it.generator for it in suite.items if it.generator})
    missing = [g for g in names if not any(it.generator == g for it in suite.items)]
    if missing:
        raise ValueError(f"no suite item has generator {', '.join(map(repr, missing))}")
    refs = sorted({it.reference_video for it in suite.items if it.generator in names and it.reference_video})
    if not refs:
        raise ValueError(f"{manifest}: no item of these generators has a reference_video; the set distance "
                         "needs a reference set")
    reference = np.concatenate([video_windows(r, window, stride, grid) for r in refs])
    feats: dict[str, np.ndarray] = {}
    videos: dict[str, int] = {}
    skipped: dict[str, str] = {}
    for g in names:
        parts = []
        for it in suite.items:
            if it.generator != g:
                continue
            try:
                parts.append(video_windows(it.video, window, stride, grid))
            except VideoError as exc:  # one unreadable rollout costs its windows, not the audit
                skipped[it.item_id] = str(exc)
        videos[g] = len(parts)
        x = np.concatenate(parts) if parts else np.zeros((0, 2 * grid * grid))
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
            "draw_flips": list(r.draw_flips), "reference_windows": run.reference_windows,
            "videos": run.videos, "skipped": run.skipped, "features": features,
            "curves": {g: [{k: v for k, v in asdict(p).items() if k != "values"} for p in pts]
                       for g, pts in r.curves.items()}}
    path = out / "sample_size.json"
    path.write_text(json.dumps(json_ready(data), indent=2) + "\n", encoding="utf-8")
    written = [path, *sample_size_table(r, "Frechet distance").write(out / "tables")]
    sec = sample_size_section(r, "Frechet distance", features=f"{features} (docs/audit.md)")
    (out / "sample_size.svg").write_text(sec.plots[0], encoding="utf-8")
    (out / "index.html").write_text(render_page([sec], title="Sample-size sensitivity", source=source),
                                    encoding="utf-8")
    return [*written, out / "sample_size.svg", out / "index.html"]
