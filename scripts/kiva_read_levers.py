"""Where KIVA with a reader loses against the simulator's true keypoints, and three levers tried on the reads.

Works on the reads that ``scripts/kiva_scales_check.py`` caches (``ROOT/ROBOT/_tracks.pkl``: every reference
and rollout of a suite read once, the true keypoints beside); run that first. Subcommands:

``errors``
    Per robot and suite: the reader's error on the references' visible keypoints (median and 90th
    percentile, pixels of the video), the share of (frame, keypoint) pairs whose visibility it gets wrong,
    the 95th percentile of its per-keypoint window jerk against that of the true keypoints (reader noise
    raises the jerk cut by this factor), and, per planted failure type, how many segments showing it the
    measure (version 4) flags with the reader and with true keypoints; for robots with fingers, how close
    the first finger pair comes in the references and in the ``finger_pass`` segments, read and true
    (:func:`finger_gaps`). Used to compare the suite a reader was trained on with one it never saw.
``tta``
    Reads a suite once per test-time candidate of a larger pool (horizontal and vertical shifts of 1 and
    2 px, the two brightness gains; ``POOL``), caches them in ``ROOT/ROBOT/_tta_pool.pkl``, and prints
    Spearman's rho of ``kiva`` (version 4) with the positions folded over each subset of ``SUBSETS``, by
    their mean and by their median. ``base5`` is the metric's own five candidates.
``ensemble``
    Reads a suite with each of several readers of one robot (trained alike but for their seed), caching
    each reader's reads in ``ROOT/ROBOT/_tracks_<reader folder name>.pkl``, and prints Spearman's rho of
    ``kiva`` (version 4) for each reader alone and for their ensemble: positions averaged over the
    readers, visibility probabilities averaged (visible above 0.5). Unlike the test-time candidates of one
    reader, independently trained readers need not err together.
``disagree``
    Where several reads of the same frames disagree: per frame and keypoint, the mean distance of each
    read from their mean, for several readers of one robot (the ``ensemble`` caches) and, where ``tta`` (or
    ``read_pool`` with ``POOL[:5]``) has cached a suite's candidates, for the first reader's five
    test-time candidates (with one ``--reader``, only those). Each keypoint's spread is
    divided by its own 95th percentile over the references' visible frames (at least half the median of
    those, as the measure's per-part scales are), a segment's value is its largest over visible keypoints,
    and its cut the 95th percentile of the references' segments. Printed: rho of the ensemble's ``kiva``,
    of that disagreement alone, of the two combined (the larger of the two ratios to their cuts, and
    their sum), and of ``kiva`` with every keypoint whose spread is above the references' 99th
    percentile treated as not seen.
``kth``
    Rho when a jerk window's value is the k-th largest scaled keypoint jerk instead of the largest (k = 1,
    2, 3): whether asking two or three keypoints to move at once keeps failures and drops isolated misreads.

``smooth``
    Rho when each read keypoint's track is smoothed in time before the measure (references and rollouts
    alike, so the cuts move with it): a centred mean (``ma3``), median (``med3``) or Savitzky-Golay fit of
    order 2 (``sg5``) over a window of frames where the keypoint is seen, and ``ma3`` for the rigidity part
    only (jerk and fingers from the raw reads). Whether removing frame-to-frame read noise, which sets the
    cuts, keeps the failures. With ``--reader NAME`` (repeatable) it works on those readers' ``ensemble``
    caches, and ends with each variant's mean change of rho over every reader and suite.

``local``
    Reads each suite again with a reader's heatmaps read within ``--radius`` cells of their peak
    (``robojudge.kiva._net.local_window``) instead of over the whole map, caching the reads in
    ``ROOT/ROBOT/_tracks_<reader>-local<r>.pkl``, and prints rho of ``kiva`` (version 4), the failures
    found by type and the references' read error for the whole-map reads (the ``ensemble`` cache) and each
    radius, then each radius's mean change of rho.

``compare``
    Rho of ``kiva`` (version 4) per robot and macro for several readers' cached reads of one root's suites
    (the ``ensemble`` caches) and for the true keypoints, with 95% intervals from one paired cluster
    bootstrap (clips redrawn within each robot; ``robojudge.meta.segment_spearman_bootstrap``), and each
    reader's difference from the first.

``settings``
    Two training settings, each several readers (``--setting NAME=READER,READER``, seeds of one setting):
    every reader's rho, each setting's mean, and the second's mean minus the first's with the interval
    of ``compare``'s bootstrap, per robot and macro. A reader's seed moves rho by about 0.1, so a
    setting is judged by several readers.

``gap``
    Measure version 5 (the finger part also judges the fingers' gap, docs/kiva.md) against version 4 on
    the same cached reads (the ``ensemble`` caches of ``--reader``, repeatable) and on the true keypoints:
    rho of each per robot and macro, version 5 minus version 4 with a 95% interval from a paired cluster
    bootstrap, and the Good and Medium/Bad segments each flags.
``versions``
    The same for any two measure versions, ``--old`` and ``--new`` (default 6 and 7: version 7 gives a
    segment its own jerk windows and the one reaching back a frame; :data:`MEASURES`).
``rigidity``
    Rho of ``kiva`` (version 7) with a link's rigidity in a segment taken another way
    (:data:`RIGIDITY_VARIANTS`: the coefficient of variation inside the segment, as the measure does, or
    the link's length against its typical length over the whole video) and over the segment widened by
    ``--extend`` frames each side; on the true keypoints, or with ``--reader NAME`` that reader's cache.
    Whether a link held bent or stretched for a whole segment, which varies little inside it, is better
    found so.
``order``
    How KIVA orders Bad above Medium segments, on the true keypoints and, with ``--reader NAME``, that
    reader's cache: the share of (Bad, Medium) pairs whose Bad segment scores higher (ties half), over all
    pairs, pairs of one failure type (a segment's type: its most severe failure's), pairs of one family
    (``jerk``: jitter and configuration jumps; ``shape``: the rest), and a shape Bad against a jerk Medium.
    Then rho with each part's ratio above its cut compressed by the tail of that part on the references
    (``1 + ln(ratio) / ln(t)``, ``t`` the references' largest ratio of the part; :func:`tail_rows`), a
    lever that would put the parts' overshoots on one footing.
``links``
    Training data, not reads: builds (or reuses) ``ROOT/ROBOT``, a simulator suite of one custom profile,
    ``kin_links`` (one link stretch or shrink per rollout; ``--episodes``, ``--seed``, ``--size``), and writes
    ``ROOT/ROBOT/train.jsonl``, every row of the ``--train`` manifest with those rollouts added (without
    their references, ids prefixed ``links-``), for ``robojudge kiva train --episodes``.

Every subcommand judges with the current measure, version 7 (where it says version 4 above, it judged
with the version of its day; ``gap`` and ``versions`` give two on the same reads).

``errors`` and ``kth`` take ``--reader NAME`` to work on the reads ``ensemble`` cached for the reader in
the folder ``NAME`` instead of ``_tracks.pkl``.

Used for docs/kiva_validation.md, "Where the reader loses, and levers on the reads", "Where reads
disagree, and a reader trained on twice the episodes", "A reader trained on warped frames", "Smoothing
the reads, and what the reader reads of the fingers", "Reading heatmaps near their peak", "Again at 128 px,
judged on clips it never saw", "A heatmap loss, and one frame of input", "More oversampling
(`--failure-repeat 8`), and two rigidity variants" and "Link-stretch rollouts in training (ADROIT)".
Rerun (``A=runs/kiva_val18``)::

    .venv/bin/python scripts/kiva_read_levers.py errors --root $A --root runs/kiva_hold2
    MUJOCO_GL=egl .venv/bin/python scripts/kiva_read_levers.py tta --root $A --episodes 18 --seed 1 \\
        --reader adroit=$A/adroit/reader-s128-e10
    .venv/bin/python scripts/kiva_read_levers.py kth --root $A --root runs/kiva_hold2
    .venv/bin/python scripts/kiva_read_levers.py disagree --root $A --root runs/kiva_hold2 \\
        --robots aloha,adroit --reader reader-s128-e10 --reader reader-s128-e10-seed2 \\
        --reader reader-s128-e10-seed3
    .venv/bin/python scripts/kiva_read_levers.py local --root $A --root runs/kiva_hold2 \\
        --reader reader-base-s1 --radius 2 --radius 4
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROBOTS = ("fetch", "adroit", "aloha", "franka")

POOL: tuple[tuple[int, int, float], ...] = (
    (0, 0, 1.0), (2, 0, 1.0), (-2, 0, 1.0), (0, 0, 1.1), (0, 0, 0.9),  # the metric's five
    (0, 2, 1.0), (0, -2, 1.0), (2, 2, 1.0), (2, -2, 1.0), (-2, 2, 1.0), (-2, -2, 1.0),
    (1, 0, 1.0), (-1, 0, 1.0), (0, 1, 1.0), (0, -1, 1.0),
)
"""(horizontal shift, vertical shift, brightness gain) of each candidate read by ``tta``."""

SUBSETS: dict[str, list[int]] = {
    "base5": [0, 1, 2, 3, 4],
    "xy7": [0, 1, 2, 3, 4, 5, 6],
    "grid9": [0, 1, 2, 5, 6, 7, 8, 9, 10],
    "grid9+gain": [0, 1, 2, 5, 6, 7, 8, 9, 10, 3, 4],
    "cross11": [0, 1, 2, 5, 6, 11, 12, 13, 14, 3, 4],
    "all15": list(range(len(POOL))),
}


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        data: dict[str, Any] = pickle.load(f)  # noqa: S301 - a file kiva_scales_check.py or this script wrote
    return data


def _diag(d: dict[str, Any]) -> float:
    return math.hypot(d["w"], d["h"])


def keypoint_jerk(d: dict[str, Any], pos: str, vis: str) -> np.ndarray:
    """``(T, K)`` window jerk of a read, its held frames left out (as ``segment_values`` does)."""
    from robojudge.kiva import keypoint_jerk as jerk

    return jerk(d[pos], d[vis], d["fps"], _diag(d), d.get("held"))


def read_errors(data: dict[str, Any]) -> dict[str, float]:
    """The reader against the true keypoints on the references (module doc, ``errors``)."""
    err, wrong, jr, jt = [], [], [], []
    for d in data["refs"].values():
        both = d["true_vis"] & d["vis"]
        e = np.linalg.norm(d["pos"] - d["true_pos"], axis=-1)
        err.append(e[both])
        wrong.append(np.asarray(d["true_vis"] != d["vis"]).ravel())
        jr.append(keypoint_jerk(d, "pos", "vis").ravel())
        jt.append(keypoint_jerk(d, "true_pos", "true_vis").ravel())
    e_all, j_read, j_true = np.concatenate(err), np.concatenate(jr), np.concatenate(jt)
    return {"median_px": float(np.median(e_all)), "p90_px": float(np.percentile(e_all, 90)),
            "visibility_wrong": float(np.mean(np.concatenate(wrong))),
            "jerk_p95_ratio": float(np.nanpercentile(j_read, 95) / np.nanpercentile(j_true, 95))}


def finger_gaps(data: dict[str, Any], true: bool) -> dict[str, Any] | None:
    """How close the first finger pair comes, in pixels: the 1st percentile of its gap over the references'
    frames where both fingers are seen, and each ``finger_pass`` segment's smallest gap (the main view
    showing it). None for a robot without finger pairs."""
    if not data["fingers"]:
        return None
    from robojudge.kiva import finger_gaps as pair_gaps

    p, v = ("true_pos", "true_vis") if true else ("pos", "vis")

    def gaps(d: dict[str, Any]) -> np.ndarray:
        # The measure's own gaps (a share of the diagonal; NaN where a finger is unseen), in pixels.
        return np.asarray(pair_gaps(d[p], d[v], data["fingers"][:1], 1.0)[:, 0])

    refs = np.concatenate([gaps(d) for d in data["refs"].values()])
    passes = []
    for d in data["items"].values():
        g = gaps(d)
        for seg in d["planted"]:
            if any(f["type"] == "finger_pass" and f.get("visible", True) for f in seg["failures"]):
                s = g[seg["start"]:seg["stop"]]
                passes.append(float(np.nanmin(s)) if np.isfinite(s).any() else math.nan)
    floor = float(np.nanpercentile(refs, 1)) if np.isfinite(refs).any() else math.nan
    return {"reference_p1": floor, "passes": passes}


MEASURES: dict[int, dict[str, Any]] = {
    4: {"finger_gap": False, "relative": False, "window": "centre"},
    5: {"finger_gap": True, "relative": False, "window": "centre"},
    6: {"finger_gap": True, "relative": True, "window": "centre"},
    7: {"finger_gap": True, "relative": True, "window": "lead"},
}
"""What each measure version judges, as :func:`segment_rows`' keywords: version 5 adds the finger gap,
version 6 relative link lengths, version 7 the ``lead`` jerk windows (docs/kiva.md)."""


def reference_parts(data: dict[str, Any], true: bool, relative: bool = True, window: str = "lead"
                    ) -> tuple[list[Any], Any, Any]:
    """The references' segment values (read, or ``true`` keypoints) and the per-part scales and cuts drawn
    from them at the 95th percentile, as ``robojudge kiva calibrate`` draws them."""
    from robojudge.kiva import reference_cuts, segment_values

    p, v = ("true_pos", "true_vis") if true else ("pos", "vis")
    refs = [x for d in data["refs"].values()
            for x in segment_values(d[p], d[v], data["links"], d["fps"], _diag(d), fingers=data["fingers"],
                                    held=d["held"], relative=relative, window=window)]
    scales, cuts = reference_cuts(refs, 95.0)
    return refs, scales, cuts


def segment_rows(data: dict[str, Any], true: bool, finger_gap: bool = True, relative: bool = True,
                 window: str = "lead") -> list[dict[str, Any]]:
    """Every planted segment judged with measure version 7 (``window="centre"``: version 6; and
    ``relative=False``: version 5, pixel link lengths; and ``finger_gap=False``: version 4, no gap cut;
    :data:`MEASURES`): its score, parts (as ratios to their cuts; ``finger`` the crossing's, ``gap`` the
    gap's), verdict and planted failures."""
    from dataclasses import replace

    from robojudge.kiva import Tracks, judge_tracks
    from robojudge.kiva._score import gap_ratio

    p, v = ("true_pos", "true_vis") if true else ("pos", "vis")
    links, fingers = data["links"], data["fingers"]
    _, scales, cuts = reference_parts(data, true, relative=relative, window=window)
    if not finger_gap:
        cuts = replace(cuts, finger_gap=math.nan)
    rows = []
    for item, d in data["items"].items():
        tracks = Tracks(d[p], d[v], d[v].astype(float), d["fps"], d["w"], d["h"], held=d["held"])
        judged = {(x.values.start, x.values.stop): x
                  for x in judge_tracks(tracks, links, cuts, fingers=fingers, scales=scales,
                                        relative=relative, window=window).verdicts}
        for seg in d["planted"]:
            x = judged.get((seg["start"], seg["stop"]))
            parts = {"score": math.nan, "rigidity": math.nan, "jerk": math.nan, "finger": math.nan,
                     "gap": math.nan}
            if x is not None:
                gap_ok = not (math.isnan(x.values.finger_gap) or math.isnan(cuts.finger_gap))
                parts = {"score": x.score,
                         "rigidity": _ratio(x.values.rigidity, cuts.rigidity),
                         "jerk": _ratio(x.values.jerk, cuts.jerk),
                         "finger": _ratio(x.values.finger, cuts.finger),
                         "gap": gap_ratio(x.values.finger_gap, cuts.finger_gap) if gap_ok else math.nan}
            rows.append({**parts, "item": item, "clip": d["clip"], "start": seg["start"],
                         "stop": seg["stop"], "verdict": seg["verdict"], "failures": seg["failures"]})
    return rows


def _ratio(value: float, cut: float) -> float:
    if math.isnan(value) or math.isnan(cut) or cut <= 0:
        return math.nan
    return value / cut


def rescore(row: dict[str, Any]) -> None:
    """Take a row's score again as its largest part ratio, after a part was replaced (the measure's rule;
    the finger gap's ratio counts since version 5)."""
    parts = [row[x] for x in ("rigidity", "jerk", "finger", "gap") if not math.isnan(row.get(x, math.nan))]
    row["score"] = max(parts) if parts else math.nan


def rho(rows: Sequence[dict[str, Any]], key: str = "score") -> float:
    from scipy.stats import spearmanr

    from robojudge.meta import verdict_levels

    levels = verdict_levels([r["verdict"] for r in rows])
    scores = np.asarray([r[key] for r in rows], float)
    ok = ~np.isnan(scores)
    if ok.sum() < 3 or len(np.unique(levels[ok])) < 2 or len(np.unique(scores[ok])) < 2:
        return math.nan
    return float(spearmanr(scores[ok], levels[ok])[0])


def flagged_by_type(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per planted failure type shown in the main view: (segments flagged, segments). ``none``: Good ones."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        shown = [f["type"] for f in r["failures"] if f.get("visible", True)]
        for t in shown or (["none"] if not r["failures"] else []):
            out[t][0] += int(r["score"] > 1)
            out[t][1] += 1
    return {t: (a, b) for t, (a, b) in sorted(out.items())}


# --- test-time candidates ---------------------------------------------------------------------------------

def shift_xy(x: Any, dx: int, dy: int) -> Any:
    """Content moved ``dx`` px right and ``dy`` px down (edges repeated), as training augments."""
    from torch.nn import functional as F

    if dx == 0 and dy == 0:
        return x
    h, w = x.shape[-2:]
    p = max(abs(dx), abs(dy))
    padded = F.pad(x, (p, p, p, p), mode="replicate")
    return padded[..., p - dy : p - dy + h, p - dx : p - dx + w]


def predict_pool(net: Any, frames: np.ndarray, context: int, pool: Sequence[tuple[int, int, float]] = POOL,
                 batch_size: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """``(C, T, K, 2)`` positions and ``(C, T, K)`` visibility probabilities, a row per candidate."""
    import torch

    from robojudge.kiva._infer import stack_context, to_tensor

    net.eval()
    pos = np.zeros((len(pool), len(frames), net.keypoints, 2))
    vis = np.zeros((len(pool), len(frames), net.keypoints))
    with torch.no_grad():
        for lo in range(0, len(frames), batch_size):
            idx = np.arange(lo, min(lo + batch_size, len(frames)))
            x = to_tensor(stack_context(frames, idx, context))
            for c, (dx, dy, gain) in enumerate(pool):
                xi = shift_xy(x, dx, dy)
                if gain != 1.0:
                    xi = (xi * gain).clamp_(0.0, 1.0)
                p, v = net(xi)
                p = p.clone()
                p[..., 0] -= dx
                p[..., 1] -= dy
                pos[c, idx] = p.numpy()
                vis[c, idx] = torch.sigmoid(v).numpy()
    return pos, vis


def fold(data: dict[str, Any], pool: dict[str, Any], chosen: Sequence[int], reduce: str = "mean"
         ) -> dict[str, Any]:
    """``data`` with every read replaced by the ``chosen`` candidates of ``pool`` folded by their mean or
    median (visibility: mean probability above 0.5, as the metric does)."""
    out = {**data, "refs": {}, "items": {}}
    for group in ("refs", "items"):
        for key, d in data[group].items():
            p = pool[group][key]["pos"][list(chosen)]
            v = pool[group][key]["vis"][list(chosen)]
            out[group][key] = {**d, "pos": np.median(p, 0) if reduce == "median" else p.mean(0),
                               "vis": v.mean(0) > 0.5}
    return out


def read_pool(manifest: Path, robot: str, reader_path: Path,
              pool: Sequence[tuple[int, int, float]] = POOL) -> dict[str, Any]:
    """Every reference and rollout of ``robot`` read once per candidate of ``pool`` (cached: the whole
    ``POOL`` in ``_tta_pool.pkl``, the metric's five alone in ``_tta_base5.pkl``)."""
    import cv2
    from kiva_validation import robot_items

    from robojudge.kiva import load_reader
    from robojudge.video import sample_frames

    pool = list(pool)
    if pool != list(POOL[:len(pool)]):
        raise ValueError("a pool is the whole POOL or its first candidates")
    cache = manifest.parent / ("_tta_pool.pkl" if pool == list(POOL) else f"_tta_base{len(pool)}.pkl")
    for path in (cache, manifest.parent / "_tta_pool.pkl"):
        if path.exists():
            data = _load(path)
            if data.get("reader") == str(reader_path.resolve()) and data.get("pool", [])[:len(pool)] == pool:
                return data
    reader = load_reader(reader_path)
    context, s = int(reader.meta["config"]["context"]), reader.size
    items = robot_items(manifest, robot)

    def read(video: str) -> dict[str, np.ndarray]:
        clip = sample_frames(manifest.parent / video, fps=None, max_frames=None)
        h, w = clip.frames.shape[1:3]
        small = np.stack([cv2.resize(f, (s, s), interpolation=cv2.INTER_AREA) for f in clip.frames])
        pos, vis = predict_pool(reader.net, small, context, pool)
        return {"pos": pos * np.array([w / s, h / s]), "vis": vis}

    refs = sorted({it.reference_video for it in items if it.reference_video})
    data = {"reader": str(reader_path.resolve()), "pool": pool,
            "refs": {ref: read(ref) for ref in refs}, "items": {it.item_id: read(it.video) for it in items}}
    with cache.open("wb") as f:
        pickle.dump(data, f)
    return data


# --- several readers ---------------------------------------------------------------------------------------

def ensemble(reads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The reads of several readers of the same suite folded into one: mean positions, mean visibility
    probability above 0.5 (a read cached without probabilities counts its visibility as 0 or 1)."""
    first = reads[0]
    out = {**first, "reader": [r.get("reader") for r in reads], "refs": {}, "items": {}}
    for group in ("refs", "items"):
        for key, d in first[group].items():
            members = [r[group][key] for r in reads]
            prob = np.mean([m.get("prob", m["vis"].astype(float)) for m in members], axis=0)
            out[group][key] = {**d, "pos": np.mean([m["pos"] for m in members], axis=0), "vis": prob > 0.5,
                               "prob": prob}
    return out


def reads_cache(folder: Path, reader: str | None = None) -> Path:
    """Where a suite folder's reads are cached: ``_tracks.pkl`` (scripts/kiva_scales_check.py), or for the
    reader in the folder named ``reader`` ``_tracks_<reader>.pkl`` (``ensemble``)."""
    return folder / (f"_tracks_{reader}.pkl" if reader else "_tracks.pkl")


def ensemble_reads(root: Path, robot: str, readers: Sequence[Path], episodes: int, seed: int, size: int
                   ) -> list[dict[str, Any]]:
    """Every reader's reads of ``robot``'s suite under ``root`` (built or reused), each cached apart."""
    from kiva_scales_check import read_suite
    from kiva_validation import build_suite

    manifest = build_suite(root / robot, robot, episodes=episodes, size=size, seed=seed)
    return [read_suite(manifest, robot, r, cache=reads_cache(manifest.parent, r.resolve().name))
            for r in readers]


# --- where reads disagree -------------------------------------------------------------------------------

def spread(positions: np.ndarray) -> np.ndarray:
    """``(T, K)`` mean distance of each of ``(R, T, K, 2)`` reads from their mean position."""
    return np.asarray(np.linalg.norm(positions - positions.mean(axis=0), axis=-1).mean(axis=0))


def disagreement_rows(data: dict[str, Any], spreads: dict[str, dict[str, np.ndarray]]
                      ) -> list[dict[str, Any]]:
    """:func:`segment_rows` of ``data`` (the folded reads), each with ``disagree`` (its largest scaled spread
    over visible keypoints, as a ratio to the references' 95th percentile of segments), ``max`` and
    ``sum`` (that ratio and the score combined)."""
    from robojudge.kiva import segments

    refs = data["refs"]
    ref_spread = np.concatenate([spreads["refs"][k] for k in refs])
    ref_vis = np.concatenate([refs[k]["vis"] for k in refs])
    scale = np.array([np.percentile(ref_spread[ref_vis[:, j], j], 95) if ref_vis[:, j].sum() >= 10 else np.nan
                      for j in range(ref_spread.shape[1])])
    scale = np.maximum(np.where(np.isnan(scale), np.nanmedian(scale), scale), 0.5 * np.nanmedian(scale))

    def value(group: str, key: str, start: int, stop: int) -> float:
        s = (spreads[group][key] / scale)[start:stop][data[group][key]["vis"][start:stop]]
        return float(s.max()) if s.size else math.nan

    cut = float(np.nanpercentile([value("refs", k, a, b) for k in refs
                                  for a, b in segments(len(spreads["refs"][k]))], 95))
    rows = []
    for r in segment_rows(data, False):
        d = value("items", r["item"], r["start"], r["stop"]) / cut
        rows.append({**r, "disagree": d, "max": float(np.nanmax([r["score"], d])), "sum": r["score"] + d})
    return rows


def masked(data: dict[str, Any], spreads: dict[str, dict[str, np.ndarray]], percentile: float
           ) -> dict[str, Any]:
    """``data`` with every keypoint whose spread is above the references' ``percentile`` not seen."""
    refs = data["refs"]
    tau = np.percentile(np.concatenate([spreads["refs"][k][refs[k]["vis"]] for k in refs]), percentile)
    out = {**data, "refs": {}, "items": {}}
    for group in ("refs", "items"):
        for key, d in data[group].items():
            out[group][key] = {**d, "vis": d["vis"] & (spreads[group][key] <= tau)}
    return out


def _disagree_line(label: str, data: dict[str, Any], spreads: dict[str, dict[str, np.ndarray]]) -> str:
    rows = disagreement_rows(data, spreads)
    good = [r for r in rows if r["verdict"] == "Good"]
    return (f"  {label:28s} rho kiva {rho(rows):.3f}, disagreement {rho(rows, 'disagree'):.3f}, "
            f"larger ratio {rho(rows, 'max'):.3f}, sum {rho(rows, 'sum'):.3f}, kiva without spread "
            f"keypoints {rho(segment_rows(masked(data, spreads, 99.0), False)):.3f}; Good flagged "
            f"{sum(r['score'] > 1 for r in good)} -> {sum(r['max'] > 1 for r in good)} of {len(good)}")


def cmd_disagree(roots: Sequence[Path], robots: Sequence[str], readers: Sequence[str]) -> None:
    for root in roots:
        for robot in robots:
            folder = root / robot
            caches = [reads_cache(folder, r) for r in readers]
            missing = [c for c in caches if not c.exists()]
            if missing:
                print(f"{folder}: no cached reads {', '.join(c.name for c in missing)} (run ensemble first)")
                continue
            reads = [_load(c) for c in caches]
            print(f"{folder}:", flush=True)
            if len(reads) > 1:
                folded = ensemble(reads)
                spreads = {g: {k: spread(np.stack([r[g][k]["pos"] for r in reads])) for k in folded[g]}
                           for g in ("refs", "items")}
                print(_disagree_line(f"{len(reads)} readers averaged", folded, spreads), flush=True)
            for name in ("_tta_pool.pkl", "_tta_base5.pkl"):
                path = folder / name
                pool = _load(path) if path.exists() else None
                if pool is not None and Path(pool["reader"]).name == readers[0]:
                    break
            else:
                print(f"  (no candidates of {readers[0]} cached in {folder}: "
                      "run tta, or read_pool with POOL[:5])")
                continue
            base = SUBSETS["base5"]
            one = fold(reads[0], pool, base)
            cand = {g: {k: spread(pool[g][k]["pos"][base]) for k in one[g]} for g in ("refs", "items")}
            print(_disagree_line(f"{readers[0]}, its 5 candidates", one, cand), flush=True)


# --- the jerk's k-th keypoint -----------------------------------------------------------------------------

def kth_segment_jerk(d: dict[str, Any], pos: str, vis: str, scales: np.ndarray, k: int) -> list[float]:
    """Per segment: the largest over its jerk windows of the window's k-th largest scaled keypoint jerk
    (fewer than k keypoints measured: the smallest of those measured)."""
    from robojudge.kiva import segments
    from robojudge.kiva._score import jerk_window_span

    per = keypoint_jerk(d, pos, vis) / scales
    measured = ~np.isnan(per)
    ordered = -np.sort(-np.where(measured, per, -np.inf), axis=1)
    count = measured.sum(axis=1)
    pick = np.minimum(k, np.maximum(count, 1)) - 1
    window = ordered[np.arange(len(per)), pick]
    window[count == 0] = np.nan
    out = []
    for start, stop in segments(len(per)):
        lo, hi = jerk_window_span(start, stop)
        vals = window[lo:hi][~np.isnan(window[lo:hi])]
        out.append(float(vals.max()) if len(vals) else math.nan)
    return out


def kth_rows(data: dict[str, Any], true: bool, k: int) -> list[dict[str, Any]]:
    """:func:`segment_rows` with the jerk part replaced by :func:`kth_segment_jerk` (its cut: the 95th
    percentile of the references' values) and the score taken again as the largest part ratio."""
    from robojudge.kiva import part_scales, segment_values, segments

    p, v = ("true_pos", "true_vis") if true else ("pos", "vis")
    refs = [x for d in data["refs"].values()
            for x in segment_values(d[p], d[v], data["links"], d["fps"], _diag(d), fingers=data["fingers"],
                                    held=d["held"])]
    scales = np.asarray(part_scales(refs, 95.0).keypoints)
    cut = float(np.nanpercentile(np.concatenate(
        [kth_segment_jerk(d, p, v, scales, k) for d in data["refs"].values()]), 95))
    rows = segment_rows(data, true)
    at = 0
    for d in data["items"].values():
        jerk = kth_segment_jerk(d, p, v, scales, k)
        bounds = segments(len(d[p]))
        for seg in d["planted"]:
            row = rows[at]
            at += 1
            row["jerk"] = jerk[bounds.index((seg["start"], seg["stop"]))] / cut
            rescore(row)
    return rows


# --- smoothing the reads in time -------------------------------------------------------------------------

SMOOTHING = ("ma3", "med3", "sg5")
"""Smoothers of :func:`smooth_positions` that ``smooth`` compares with the raw reads."""


def smooth_positions(pos: np.ndarray, vis: np.ndarray, mode: str) -> np.ndarray:
    """``(T, K, 2)`` positions smoothed along time: ``ma<w>`` a centred mean, ``med<w>`` a median, ``sg<w>``
    a Savitzky-Golay fit of order 2, over ``w`` (odd) frames. A frame keeps its raw value where the
    keypoint is not seen on every frame of its window, and so do the first and last ``w // 2`` frames."""
    from scipy.signal import savgol_filter

    kind, w = mode.rstrip("0123456789"), int(mode.lstrip("amedsg") or 0)
    if kind not in ("ma", "med", "sg") or w < 3 or w % 2 == 0:
        raise ValueError(f"unknown smoothing {mode!r}: ma, med or sg and an odd window of 3 or more")
    half, out = w // 2, pos.astype(np.float64, copy=True)
    if len(pos) < w:
        return out
    fitted = savgol_filter(pos, w, 2, axis=0) if kind == "sg" else None
    for t in range(half, len(pos) - half):
        ok = vis[t - half:t + half + 1].all(axis=0)
        window = pos[t - half:t + half + 1, ok]
        if kind == "ma":
            out[t, ok] = window.mean(axis=0)
        elif kind == "med":
            out[t, ok] = np.median(window, axis=0)
        else:
            out[t, ok] = fitted[t, ok]
    return out


def smoothed(data: dict[str, Any], mode: str) -> dict[str, Any]:
    """``data`` with every reference's and rollout's read positions smoothed (:func:`smooth_positions`)."""
    def each(reads: dict[str, Any]) -> dict[str, Any]:
        return {k: {**d, "pos": smooth_positions(d["pos"], d["vis"], mode)} for k, d in reads.items()}

    return {**data, "refs": each(data["refs"]), "items": each(data["items"])}


def rigidity_smoothed_rows(data: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    """:func:`segment_rows` of the reader with the rigidity part from smoothed reads (its own cut), jerk and
    finger from the raw ones, the score taken again as the largest part ratio."""
    rows = segment_rows(data, False)
    for row, smooth in zip(rows, segment_rows(smoothed(data, mode), False), strict=True):
        row["rigidity"] = smooth["rigidity"]
        rescore(row)
    return rows


# --- commands ---------------------------------------------------------------------------------------------

def _caches(roots: Sequence[Path], robots: Sequence[str], reader: str | None = None
            ) -> list[tuple[Path, str, Path]]:
    """The cached reads (:func:`reads_cache`) of each root and robot."""
    found = [(root, robot, reads_cache(root / robot, reader)) for root in roots for robot in robots]
    missing = [str(path) for *_, path in found if not path.exists()]
    if missing:
        how = "`ensemble` with that reader" if reader else "scripts/kiva_scales_check.py"
        raise SystemExit(f"no cached reads (run {how} first): " + ", ".join(missing))
    return found


def cmd_errors(roots: Sequence[Path], robots: Sequence[str], reader: str | None = None) -> None:
    for root, robot, path in _caches(roots, robots, reader):
        data = _load(path)
        e = read_errors(data)
        read, true = segment_rows(data, False), segment_rows(data, True)
        print(f"{root} {robot}: reference read error median {e['median_px']:.2f} px, "
              f"p90 {e['p90_px']:.2f} px; "
              f"visibility wrong {100 * e['visibility_wrong']:.1f}%; jerk p95 reader/true "
              f"{e['jerk_p95_ratio']:.2f}; rho reader {rho(read):.2f}, true {rho(true):.2f}")
        fr, ft = flagged_by_type(read), flagged_by_type(true)
        print("    flagged (reader / true of n): " + ", ".join(
            f"{t} {fr[t][0]}/{ft[t][0]} of {fr[t][1]}" for t in fr))
        gr, gt = finger_gaps(data, False), finger_gaps(data, True)
        if gr is not None and gt is not None and gr["passes"]:
            def below(g: dict[str, Any]) -> int:
                return sum(x < g["reference_p1"] for x in g["passes"])

            floor = f"{gr['reference_p1']:.2f} / {gt['reference_p1']:.2f}"
            least = f"{np.nanmedian(gr['passes']):.2f} / {np.nanmedian(gt['passes']):.2f}"
            print(f"    finger gap (px), reader / true: references' 1st percentile {floor}; smallest in the "
                  f"{len(gr['passes'])} finger-pass segments, median {least}, below that percentile "
                  f"{below(gr)} / {below(gt)}")


def cmd_tta(root: Path, readers: dict[str, Path], episodes: int, seed: int, size: int) -> None:
    from kiva_validation import build_suite

    t0 = time.time()
    for robot, reader in readers.items():
        manifest = build_suite(root / robot, robot, episodes=episodes, size=size, seed=seed)
        cache = manifest.parent / "_tracks.pkl"
        if not cache.exists():
            raise SystemExit(f"no cached reads at {cache} (run scripts/kiva_scales_check.py first)")
        data = _load(cache)
        pool = read_pool(manifest, robot, reader)
        print(f"[{time.time() - t0:6.0f} s] {robot}: {len(POOL)} candidates read", flush=True)
        for name, chosen in SUBSETS.items():
            for reduce in ("mean", "median"):
                rows = segment_rows(fold(data, pool, chosen, reduce), False)
                good = [r for r in rows if r["verdict"] == "Good"]
                bad = [r for r in rows if r["verdict"] != "Good"]
                print(f"  {name:10s} {reduce:6s} rho {rho(rows):.3f} (rigidity {rho(rows, 'rigidity'):.2f}, "
                      f"jerk {rho(rows, 'jerk'):.2f}); flagged Good {sum(r['score'] > 1 for r in good)} of "
                      f"{len(good)}, Medium/Bad {sum(r['score'] > 1 for r in bad)} of {len(bad)}")


def cmd_kth(roots: Sequence[Path], robots: Sequence[str], reader: str | None = None) -> None:
    for root, robot, path in _caches(roots, robots, reader):
        data = _load(path)
        cells = [f"{'true' if true else 'reader'} k={k} {rho(kth_rows(data, true, k)):.2f}"
                 for true in (False, True) for k in (1, 2, 3)]
        print(f"{root} {robot}: " + ", ".join(cells), flush=True)


def cmd_smooth(roots: Sequence[Path], robots: Sequence[str], readers: Sequence[str | None]) -> None:
    change: dict[str, list[float]] = defaultdict(list)
    for reader in readers:
        for root, robot, path in _caches(roots, robots, reader):
            data = _load(path)
            raw = rho(segment_rows(data, False))
            got = {m: rho(segment_rows(smoothed(data, m), False)) for m in SMOOTHING}
            got["ma3 rigidity only"] = rho(rigidity_smoothed_rows(data, "ma3"))
            for m, r in got.items():
                change[m].append(r - raw)
            print(f"{root} {robot} {reader or '_tracks.pkl'}: raw {raw:.3f}, "
                  + ", ".join(f"{m} {r:.3f}" for m, r in got.items()), flush=True)
    print("mean change of rho over the " + f"{len(change['ma3'])} reader and suite pairs: " + ", ".join(
        f"{m} {np.mean(d):+.3f} ({sum(x < 0 for x in d)} lower)" for m, d in change.items()))


def cmd_local(roots: Sequence[Path], robots: Sequence[str], reader: str, radii: Sequence[int]) -> None:
    """Each suite read again with ``reader``'s heatmaps read within each radius of their peak, against its
    whole-map reads (the ``ensemble`` cache)."""
    from kiva_scales_check import read_suite
    from kiva_validation import robot_items

    t0 = time.time()
    change: dict[int, list[float]] = defaultdict(list)
    for root, robot, path in _caches(roots, robots, reader):
        whole = _load(path)
        manifest = path.parent / "suite.jsonl"
        robot_items(manifest, robot)  # the suite is there and holds this robot
        variants: list[tuple[str, dict[str, Any]]] = [("whole map", whole)]
        for r in radii:
            cache = path.parent / f"_tracks_{reader}-local{r}.pkl"
            # the reader those reads came from (a suite it was not trained on keeps no reader beside it)
            variants.append((f"radius {r}", read_suite(manifest, robot, Path(whole["reader"]), cache=cache,
                                                        local_radius=r)))
        print(f"[{time.time() - t0:6.0f} s] {root} {robot} {reader}:", flush=True)
        base = rho(segment_rows(whole, False))
        for label, data in variants:
            rows = segment_rows(data, False)
            e = read_errors(data)
            good = [x for x in rows if x["verdict"] == "Good"]
            bad = [x for x in rows if x["verdict"] != "Good"]
            fr = flagged_by_type(rows)
            if label != "whole map":
                change[int(label.split()[1])].append(rho(rows) - base)
            print(f"  {label:9s} rho {rho(rows):.3f} (rigidity {rho(rows, 'rigidity'):.2f}, jerk "
                  f"{rho(rows, 'jerk'):.2f}); flagged Good {sum(x['score'] > 1 for x in good)} of "
                  f"{len(good)}, "
                  f"Medium/Bad {sum(x['score'] > 1 for x in bad)} of {len(bad)}; reference read error median "
                  f"{e['median_px']:.2f} px, p90 {e['p90_px']:.2f} px; jerk p95 read/true "
                  f"{e['jerk_p95_ratio']:.2f}; " + ", ".join(f"{t} {n}/{m}" for t, (n, m) in fr.items()))
    for r, d in change.items():
        lower = sum(x < 0 for x in d)
        print(f"radius {r}: mean change of rho {np.mean(d):+.3f} over {len(d)} suites ({lower} lower)")


LEVELS = {"Good": 0, "Medium": 1, "Bad": 2}


def compare_readers(root: Path, robots: Sequence[str], readers: Sequence[str], replicates: int = 2000,
                    seed: int = 0) -> Any:
    """Rho of ``kiva`` (version 4) per robot and macro for each reader's cached reads of ``root``'s suites
    (the ``ensemble`` caches) and for the true keypoints, with paired cluster-bootstrap intervals
    (clips redrawn within each robot) and each reader's difference from the first."""
    from robojudge.meta import segment_spearman_bootstrap

    scores: dict[str, list[float]] = {r: [] for r in (*readers, "true keypoints")}
    levels: list[int] = []
    groups: list[str] = []
    clusters: list[str] = []
    caches = {r: _caches([root], robots, r) for r in readers}  # all there, or an error naming what is not
    for k_robot, robot in enumerate(robots):
        reads = [segment_rows(_load(caches[r][k_robot][2]), False) for r in readers]
        true = segment_rows(_load(caches[readers[0]][k_robot][2]), True)
        for k, row in enumerate(true):
            if any((x[k]["item"], x[k]["start"]) != (row["item"], row["start"]) for x in reads):
                raise SystemExit(f"{root / robot}: the readers' cached reads do not hold the same segments")
            for r, x in zip(readers, reads, strict=True):
                scores[r].append(x[k]["score"])
            scores["true keypoints"].append(row["score"])
            levels.append(LEVELS[row["verdict"]])
            groups.append(robot)
            clusters.append(row["clip"])
    return segment_spearman_bootstrap(scores, levels, groups, clusters, reference=readers[0],
                                      replicates=replicates, seed=seed)


def cmd_compare(root: Path, robots: Sequence[str], readers: Sequence[str], replicates: int) -> None:
    res = compare_readers(root, robots, readers, replicates)

    def cells(m: Any) -> str:
        parts = [f"{g} {v.rho:+.2f} [{v.low:+.2f}, {v.high:+.2f}]" for g, v in m.groups.items()]
        return ", ".join(parts) + f"; macro {m.macro.rho:+.3f} [{m.macro.low:+.2f}, {m.macro.high:+.2f}]"

    for name, m in res.metrics.items():
        print(f"{name}: {cells(m)}")
    for name, m in res.differences.items():
        print(f"{name} minus {readers[0]}: {cells(m)}")


def compare_settings(roots: Sequence[Path], robots: Sequence[str], settings: dict[str, Sequence[str]],
                     replicates: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Two training settings, each a list of readers (seeds) whose reads ``ensemble`` cached: per root and
    robot, every reader's rho of ``kiva`` (version 4), each setting's mean over its readers, and the second
    setting's mean minus the first's with a 95% interval from one paired cluster bootstrap
    (:func:`compare_readers`: clips redrawn within each robot, every reader on the same draws; macro: the
    mean over the robots).

    A reader's seed moves rho by about 0.1 on these suites (docs/kiva_validation.md, "Readers differ"), so
    a setting is judged by the mean of several readers, not by one."""
    (name_a, readers_a), (name_b, readers_b) = settings.items()
    out: dict[str, Any] = {}
    for root in roots:
        res = compare_readers(root, robots, [*readers_a, *readers_b], replicates, seed)

        def cell(pick: Any, res: Any = res) -> dict[str, Any]:
            def mean(readers: Sequence[str]) -> tuple[float, np.ndarray]:
                picked = [pick(res.metrics[r]) for r in readers]
                return float(np.mean([x.rho for x in picked])), np.mean([x.draws for x in picked], axis=0)

            (a, draws_a), (b, draws_b) = mean(readers_a), mean(readers_b)
            return {"rho": {r: pick(res.metrics[r]).rho for r in (*readers_a, *readers_b)}, name_a: a,
                    name_b: b, "difference": b - a,
                    "interval": tuple(np.nanpercentile(draws_b - draws_a, [2.5, 97.5]))}

        out[str(root)] = {"robots": {robot: cell(lambda m, g=robot: m.groups[g]) for robot in robots},
                          "macro": cell(lambda m: m.macro)}
    return out


def compare_versions(root: Path, robots: Sequence[str], reader: str, replicates: int = 2000, seed: int = 0,
                     versions: tuple[int, int] = (4, 5)
                     ) -> tuple[Any, dict[str, dict[str, tuple[int, int, int, int]]]]:
    """Measure version ``versions[1]`` against ``versions[0]`` (:data:`MEASURES`) on ``reader``'s cached
    reads of ``root``'s suites and on the true keypoints: one paired cluster bootstrap
    (``robojudge.meta.segment_spearman_bootstrap``, clips redrawn within each robot) of the four,
    differences against the older version read; and per robot and measure the Good segments flagged,
    Good segments, Medium/Bad flagged and Medium/Bad segments."""
    from robojudge.meta import segment_spearman_bootstrap

    old, new = versions
    keys = (f"read v{old}", f"read v{new}", f"true v{old}", f"true v{new}")
    scores: dict[str, list[float]] = {k: [] for k in keys}
    levels: list[int] = []
    groups: list[str] = []
    clusters: list[str] = []
    flags: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    for _, robot, path in _caches([root], robots, reader):
        data = _load(path)
        rows = {k: segment_rows(data, k.startswith("true"), **MEASURES[int(k.rsplit("v", 1)[1])])
                for k in keys}
        flags[robot] = {}
        for k, rs in rows.items():
            scores[k] += [r["score"] for r in rs]
            good = [r["score"] > 1 for r in rs if r["verdict"] == "Good"]
            bad = [r["score"] > 1 for r in rs if r["verdict"] != "Good"]
            flags[robot][k] = (sum(good), len(good), sum(bad), len(bad))
        first = rows[keys[0]]
        levels += [LEVELS[r["verdict"]] for r in first]
        groups += [robot] * len(first)
        clusters += [r["clip"] for r in first]
    res = segment_spearman_bootstrap(scores, levels, groups, clusters, reference=keys[0],
                                     replicates=replicates, seed=seed)
    return res, flags


def compare_gap(root: Path, robots: Sequence[str], reader: str, replicates: int = 2000, seed: int = 0
                ) -> tuple[Any, dict[str, dict[str, tuple[int, int, int, int]]]]:
    """:func:`compare_versions` of measure version 5 (the finger gap) against version 4."""
    return compare_versions(root, robots, reader, replicates, seed, (4, 5))


def cmd_versions(root: Path, robots: Sequence[str], readers: Sequence[str], replicates: int,
                 versions: tuple[int, int] = (4, 5)) -> None:
    old, new = versions
    a, b = f"read v{old}", f"read v{new}"
    for reader in readers:
        res, flags = compare_versions(root, robots, reader, replicates, versions=versions)
        print(f"{root} {reader}:")
        for robot in robots:
            cells = ", ".join(f"{k} {res.metrics[k].groups[robot].rho:.3f}" for k in res.metrics)
            d = res.differences[b].groups[robot]
            f4, f5 = flags[robot][a], flags[robot][b]
            print(f"  {robot}: {cells}; {b} - v{old} {d.rho:+.3f} [{d.low:+.3f}, {d.high:+.3f}]; flagged "
                  f"Good {f4[0]}->{f5[0]} of {f4[1]}, Medium/Bad {f4[2]}->{f5[2]} of {f4[3]}")
        cells = ", ".join(f"{k} {m.macro.rho:.3f}" for k, m in res.metrics.items())
        d = res.differences[b].macro
        print(f"  macro: {cells}; {b} - v{old} {d.rho:+.3f} [{d.low:+.3f}, {d.high:+.3f}]")


def cmd_settings(roots: Sequence[Path], robots: Sequence[str], settings: dict[str, Sequence[str]],
                 replicates: int) -> None:
    res = compare_settings(roots, robots, settings, replicates)
    name_a, name_b = settings
    for root, r in res.items():
        print(f"{root}:")
        for robot, v in r["robots"].items():
            each = ", ".join(f"{k} {x:.2f}" for k, x in v["rho"].items())
            lo, hi = v["interval"]
            print(f"  {robot}: {each}; {name_a} {v[name_a]:.3f}, {name_b} {v[name_b]:.3f}, difference "
                  f"{v['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        m = r["macro"]
        lo, hi = m["interval"]
        print(f"  macro: {name_a} {m[name_a]:.3f}, {name_b} {m[name_b]:.3f}, difference "
              f"{m['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]")


# --- rigidity taken other ways ------------------------------------------------------------------------------

RIGIDITY_VARIANTS = ("cv", "rms", "median", "cv+median", "max")
"""A link's rigidity value in a segment: ``cv``, its coefficient of variation there (the measure's
:func:`robojudge.kiva._score.link_cvs`); of ``r = length / typical length - 1`` (the typical length over the
whole video), ``rms`` the root mean square, ``median`` the absolute median and ``max`` the largest absolute
value over the segment's frames; ``cv+median`` the first plus the absolute median."""


def link_values(lengths: np.ndarray, diagonal: float, min_link: float, typical: np.ndarray, variant: str
                ) -> np.ndarray:
    """``(L,)`` each link's value over ``lengths`` (``(T, L)``, a segment's frames) by ``variant``; links
    gated as :func:`robojudge.kiva._score.link_cvs` gates them."""
    from robojudge.kiva._score import MIN_FRAMES, link_cvs

    if variant not in RIGIDITY_VARIANTS:
        raise ValueError(f"unknown rigidity variant {variant!r}; expected one of {RIGIDITY_VARIANTS}")
    cvs = link_cvs(lengths, diagonal, min_link, typical)
    if variant == "cv":
        return cvs
    out = np.full(lengths.shape[1], np.nan)
    for j, col in enumerate(lengths.T):
        ok = col[~np.isnan(col)]
        if math.isnan(cvs[j]) or len(ok) < MIN_FRAMES:
            continue  # (not measured by the measure either)
        r = ok / typical[j] - 1.0
        if variant == "rms":
            out[j] = float(np.sqrt(np.mean(r**2)))
        elif variant == "median":
            out[j] = abs(float(np.median(r)))
        elif variant == "cv+median":
            out[j] = float(cvs[j]) + abs(float(np.median(r)))
        else:
            out[j] = float(np.max(np.abs(r)))
    return out


def variant_segment_values(variant: str, extend: int) -> Any:
    """A stand-in for :func:`robojudge.kiva.segment_values` (relative lengths, as version 7): the measure's
    own values, with each segment's links valued by ``variant`` over the segment widened by ``extend``
    frames each side (a frozen segment keeps no value)."""
    from dataclasses import replace

    from robojudge.kiva import _score as sc

    measure = sc.segment_values

    def values(tracks: Any, visible: Any, links: Any, fps: float, diagonal: float, **kw: Any) -> list[Any]:
        if not kw.get("relative", True):
            raise ValueError("rigidity variants are measured on relative link lengths (version 6 on)")
        lengths = sc.link_lengths(np.asarray(tracks, dtype=np.float64), np.asarray(visible, dtype=bool),
                                  links)
        typical = sc.typical_lengths(lengths)
        lengths = sc.relative_lengths(lengths, typical=typical)
        out = []
        for v in measure(tracks, visible, links, fps, diagonal, **kw):
            if not v.frozen:
                vals = link_values(lengths[max(0, v.start - extend) : v.stop + extend], diagonal,
                                   kw.get("min_link", sc.MIN_LINK), typical, variant)
                v = replace(v, rigidity=sc._nanmax(vals), link_cv=tuple(float(x) for x in vals))
            out.append(v)
        return out

    return values


def rigidity_rows(data: dict[str, Any], true: bool, variant: str, extend: int) -> list[dict[str, Any]]:
    """:func:`segment_rows` (version 7) with the links valued by ``variant`` over segments widened by
    ``extend`` frames: the measure's own segment values are swapped for the stand-in while it runs."""
    import robojudge.kiva as kiva
    from robojudge.kiva import _score as sc

    saved = kiva.segment_values, sc.segment_values
    kiva.segment_values = sc.segment_values = variant_segment_values(variant, extend)
    try:
        return segment_rows(data, true)
    finally:
        kiva.segment_values, sc.segment_values = saved


def cmd_rigidity(roots: Sequence[Path], robots: Sequence[str], reader: str | None, variants: Sequence[str],
                 extends: Sequence[int]) -> None:
    for root in roots:
        datas = {r: _load(root / r / (f"_tracks_{reader}.pkl" if reader else "_true.pkl")) for r in robots}
        for variant in variants:
            for extend in extends:
                rhos = [rho(rigidity_rows(d, reader is None, variant, extend)) for d in datas.values()]
                cells = " ".join(f"{r} {x:.3f}" for r, x in zip(robots, rhos, strict=True))
                print(f"{root} {reader or 'true keypoints'} {variant:9s} +{extend} frames: {cells}; "
                      f"macro {np.nanmean(rhos):.3f}", flush=True)


JERK_FAMILY = frozenset({"jitter", "config_jump"})
"""Failure types that the jerk finds (the ``jerk`` family of ``order``); the rest are the ``shape`` family."""
PARTS = ("rigidity", "jerk", "finger", "gap")


def segment_type(row: dict[str, Any]) -> str | None:
    """A planted segment's failure type: its most severe failure's (``None`` for a Good one)."""
    return max(row["failures"], key=lambda f: f["severity"])["type"] if row["failures"] else None


def family(kind: str | None) -> str | None:
    return None if kind is None else "jerk" if kind in JERK_FAMILY else "shape"


def bad_over_medium(rows: Sequence[dict[str, Any]], same: Any = None, key: str = "score"
                    ) -> tuple[float, int]:
    """The share of (Bad, Medium) pairs, among those ``same(bad, medium)`` keeps, whose Bad segment has the
    higher ``key`` (ties count half; unscored segments left out), and how many pairs there were."""
    scored = [r for r in rows if not math.isnan(r[key])]
    bad = [r for r in scored if r["verdict"] == "Bad"]
    medium = [r for r in scored if r["verdict"] == "Medium"]
    wins, n = 0.0, 0
    for b in bad:
        for m in medium:
            if same is None or same(b, m):
                n += 1
                wins += 1.0 if b[key] > m[key] else 0.5 if b[key] == m[key] else 0.0
    return (wins / n if n else math.nan), n


def part_tails(data: dict[str, Any], true: bool) -> dict[str, float]:
    """Each part's largest ratio to its cut over the reference segments (NaN when at most 1: no tail)."""
    from robojudge.kiva import apply_scales
    from robojudge.kiva._score import gap_ratio

    refs, scales, cuts = reference_parts(data, true)
    ratios: dict[str, list[float]] = {k: [] for k in PARTS}
    for x in apply_scales(refs, scales):
        ratios["rigidity"].append(_ratio(x.rigidity, cuts.rigidity))
        ratios["jerk"].append(_ratio(x.jerk, cuts.jerk))
        ratios["finger"].append(_ratio(x.finger, cuts.finger))
        gap_ok = not (math.isnan(x.finger_gap) or math.isnan(cuts.finger_gap))
        ratios["gap"].append(gap_ratio(x.finger_gap, cuts.finger_gap) if gap_ok else math.nan)
    out = {}
    for k, values in ratios.items():
        seen = [r for r in values if not math.isnan(r)]
        top = max(seen) if seen else math.nan
        out[k] = top if top > 1.0 else math.nan
    return out


def tail_rows(rows: Sequence[dict[str, Any]], tails: dict[str, float]) -> list[dict[str, Any]]:
    """Rows whose ``score`` is the largest part ratio with each ratio above 1 compressed by its part's tail,
    ``1 + ln(ratio) / ln(tail)`` (a part without a tail keeps its ratio)."""
    def squeeze(r: float, t: float) -> float:
        return r if r <= 1.0 or math.isnan(t) else 1.0 + math.log(r) / math.log(t)

    out = []
    for row in rows:
        squeezed = {**row, **{k: squeeze(row[k], tails[k]) for k in PARTS if k in row}}
        rescore(squeezed)
        out.append(squeezed)
    return out


def cmd_order(roots: Sequence[Path], robots: Sequence[str], reader: str | None) -> None:
    pairs: dict[str, Any] = {
        "all": None,
        "same type": lambda b, m: segment_type(b) == segment_type(m),
        "same family": lambda b, m: family(segment_type(b)) == family(segment_type(m)),
        "shape Bad, jerk Medium": lambda b, m: family(segment_type(b)) == "shape"
        and family(segment_type(m)) == "jerk",
    }
    for root, robot, path in _caches(roots, robots, reader):
        data = _load(path)
        for true in (True, False) if reader else (True,):
            rows = segment_rows(data, true)
            shares = ", ".join(f"{name} {share:.2f} ({n})" for name, (share, n) in
                               ((name, bad_over_medium(rows, same)) for name, same in pairs.items()))
            squeezed = tail_rows(rows, part_tails(data, true))
            who = "true keypoints" if true else reader
            print(f"{root} {robot}, {who}: Bad over Medium (pairs): {shares}; rho {rho(rows):.3f}, "
                  f"parts squeezed by their reference tails {rho(squeezed):.3f}")


def cmd_ensemble(root: Path, robot: str, readers: Sequence[Path], episodes: int, seed: int, size: int
                 ) -> None:
    t0 = time.time()
    reads = ensemble_reads(root, robot, readers, episodes, seed, size)
    print(f"[{time.time() - t0:6.0f} s] {root} {robot}: {len(readers)} readers read", flush=True)
    for reader, data in zip(readers, reads, strict=True):
        print(f"  {reader.name:28s} rho {rho(segment_rows(data, False)):.3f}")
    for n in range(2, len(reads) + 1):
        folded = ensemble(reads[:n])
        rows = segment_rows(folded, False)
        good = [r for r in rows if r["verdict"] == "Good"]
        bad = [r for r in rows if r["verdict"] != "Good"]
        e = read_errors(folded)
        print(f"  ensemble of the first {n}       rho {rho(rows):.3f} (rigidity {rho(rows, 'rigidity'):.2f}, "
              f"jerk {rho(rows, 'jerk'):.2f}); flagged Good {sum(r['score'] > 1 for r in good)} of "
              f"{len(good)}, Medium/Bad {sum(r['score'] > 1 for r in bad)} of {len(bad)}; "
              f"reference read error median {e['median_px']:.2f} px, "
              f"jerk p95 read/true {e['jerk_p95_ratio']:.2f}")
    print(f"  true keypoints               rho {rho(segment_rows(reads[0], True)):.3f}")


def links_profile() -> Any:
    """``kin_links``: one link stretch or shrink per rollout, severity 0.15-1.0 (a link scaled by 0.50-0.84
    or 1.16-1.50), nothing else. A custom profile, so its draws are seeded by its name."""
    from robojudge.suite.sim import Profile

    return Profile("kin_links", 1.0, (1, 1), (0.15, 1.0), ("link_stretch",), 0.0, (0.1, 0.1), (),
                   "one link stretch or shrink per rollout (reader training data)")


def links_suite(root: Path, robot: str, train: Path, episodes: int, seed: int, size: int) -> Path:
    """Build (or reuse) ``ROOT/ROBOT``, a suite of :func:`links_profile` (one link stretch or shrink per
    rollout), and write ``ROOT/ROBOT/train.jsonl``: every row of the ``train`` manifest and the link-stretch
    rollouts without their references (ids prefixed ``links-``). Returns that training manifest."""
    from kiva_validation import build_suite, mixed_manifest

    folder = root / robot
    manifest = build_suite(folder, robot, episodes=episodes, size=size, seed=seed, profiles=[links_profile()])
    metas = [json.loads(x).get("meta", {}) for x in manifest.read_text(encoding="utf-8").splitlines()]
    found = ({m.get("seed") for m in metas}, len({m.get("episode") for m in metas}))
    if found != ({seed}, episodes):
        seeds = ", ".join(sorted(map(str, found[0])))
        raise SystemExit(f"{manifest}: built with seed {seeds} and {found[1]} episodes, not seed {seed} and "
                         f"{episodes}; remove {folder} or give another --root")
    return mixed_manifest(train, manifest, folder / "train.jsonl", "links-", keep_first=True)


def main(argv: Sequence[str] | None = None) -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    sub = parser.add_subparsers(dest="command", required=True)
    def cached_suites(name: str) -> argparse.ArgumentParser:
        """A subcommand that works on cached reads: ``--root`` (repeatable) and ``--robots``."""
        p = sub.add_parser(name)
        p.add_argument("--root", type=Path, action="append", required=True)
        p.add_argument("--robots", default=",".join(ROBOTS))
        return p

    for name in ("errors", "kth"):
        cached_suites(name).add_argument(
            "--reader", default=None,
            help="a reader's folder name: its `ensemble` cache instead of _tracks.pkl")
    cached_suites("smooth").add_argument(
        "--reader", action="append", default=None,
        help="a reader's folder name (repeatable): its `ensemble` cache instead of _tracks.pkl")
    p = cached_suites("local")
    p.add_argument("--reader", required=True, help="a reader's folder name, whose `ensemble` cache is there")
    p.add_argument("--radius", type=int, action="append", required=True,
                   help="heatmap cells either side of the peak (repeatable)")
    cached_suites("disagree").add_argument(
        "--reader", action="append", required=True,
        help="a reader's folder name whose reads `ensemble` cached (and the first's candidates)")
    p = cached_suites("compare")
    p.add_argument("--reader", action="append", required=True,
                   help="a reader's folder name whose reads `ensemble` cached (repeatable; the first is the "
                   "base)")
    p.add_argument("--replicates", type=int, default=2000)
    for name in ("gap", "versions"):
        p = cached_suites(name)
        p.add_argument("--reader", action="append", required=True,
                       help="a reader's folder name whose reads `ensemble` cached (repeatable)")
        p.add_argument("--replicates", type=int, default=2000)
        if name == "versions":
            p.add_argument("--old", type=int, choices=sorted(MEASURES), default=6)
            p.add_argument("--new", type=int, choices=sorted(MEASURES), default=7)
    p = cached_suites("settings")
    p.add_argument("--setting", action="append", required=True,
                   help="NAME=READER,READER,... (folder names of readers whose reads `ensemble` cached); "
                   "exactly two")
    p.add_argument("--replicates", type=int, default=1000)
    p = cached_suites("rigidity")
    p.add_argument("--reader", default=None, help="a reader's folder name (its `ensemble` cache); "
                   "default: the true keypoints (`_true.pkl`)")
    p.add_argument("--variant", action="append", choices=RIGIDITY_VARIANTS, default=None)
    p.add_argument("--extend", type=int, action="append", default=None,
                   help="frames each side a segment's links are measured over beyond it (repeatable)")
    cached_suites("order").add_argument(
        "--reader", default=None,
        help="a reader's folder name (its `ensemble` cache) besides the true keypoints")
    p = sub.add_parser("tta")
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--episodes", type=int, default=18)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--reader", action="append", required=True, help="ROBOT=READER_DIR")
    p = sub.add_parser("ensemble")
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--robot", required=True, choices=ROBOTS)
    p.add_argument("--episodes", type=int, default=18)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--reader", type=Path, action="append", required=True,
                   help="READER_DIR, one or more (one: its reads cached and judged alone)")
    p = sub.add_parser("links")
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--robot", required=True, choices=ROBOTS)
    p.add_argument("--train", type=Path, required=True,
                   help="the training suite's manifest; all its rows go into ROOT/ROBOT/train.jsonl")
    p.add_argument("--episodes", type=int, default=24)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--size", type=int, default=128)
    args = parser.parse_args(argv)
    if args.command == "links":
        out = links_suite(args.root, args.robot, args.train, args.episodes, args.seed, args.size)
        rows = out.read_text(encoding="utf-8").splitlines()
        print(f"{out}: {len(rows)} rows ({sum(json.loads(r)['item_id'].startswith('links-') for r in rows)} "
              "link-stretch rollouts)")
        return 0
    if args.command == "ensemble":
        cmd_ensemble(args.root, args.robot, args.reader, args.episodes, args.seed, args.size)
        return 0
    if args.command == "compare":
        if len(args.root) != 1:
            parser.error("compare takes one --root")
        cmd_compare(args.root[0], [r for r in args.robots.split(",") if r], args.reader, args.replicates)
        return 0
    if args.command in ("gap", "versions"):
        if len(args.root) != 1:
            parser.error(f"{args.command} takes one --root")
        versions = (4, 5) if args.command == "gap" else (args.old, args.new)
        if versions[0] == versions[1]:
            parser.error("versions needs two different versions (--old, --new)")
        cmd_versions(args.root[0], [r for r in args.robots.split(",") if r], args.reader, args.replicates,
                     versions)
        return 0
    if args.command == "settings":
        settings = dict(x.split("=", 1) for x in args.setting)
        if len(settings) != 2 or any("=" not in x for x in args.setting):
            parser.error("settings takes exactly two --setting NAME=READER,READER,...")
        cmd_settings(args.root, [r for r in args.robots.split(",") if r],
                     {k: [r for r in v.split(",") if r] for k, v in settings.items()}, args.replicates)
        return 0
    if args.command == "rigidity":
        cmd_rigidity(args.root, [r for r in args.robots.split(",") if r], args.reader,
                     args.variant or list(RIGIDITY_VARIANTS), args.extend or [0])
        return 0
    if args.command == "order":
        cmd_order(args.root, [r for r in args.robots.split(",") if r], args.reader)
        return 0
    if args.command == "local":
        cmd_local(args.root, [r for r in args.robots.split(",") if r], args.reader, args.radius)
        return 0
    if args.command == "disagree":
        cmd_disagree(args.root, [r for r in args.robots.split(",") if r], args.reader)
        return 0
    if args.command == "tta":
        from kiva_validation import robot_paths

        cmd_tta(args.root, robot_paths(args.reader, "--reader"), args.episodes, args.seed, args.size)
        return 0
    robots = [r for r in args.robots.split(",") if r]
    if args.command == "smooth":
        cmd_smooth(args.root, robots, args.reader or [None])
        return 0
    (cmd_errors if args.command == "errors" else cmd_kth)(args.root, robots, args.reader)
    return 0


if __name__ == "__main__":
    sys.exit(main())
