"""KIVA's rigidity in 3D against 2D, per 16-frame segment, on a multi-view simulator suite (issue 15).

For every rollout of a suite built with calibrated views (``make_sim_suite(..., views=3,
calibration=True, profiles=["oracle", "kin_mild", "kin_severe"])``) and each planted segment
(``meta.segments``), this computes the segment's link rigidity four ways:

* ``true_2d``: the simulator's keypoints in the main view (``keypoints_2d`` of view 0), 2D rigidity;
* ``true_3d``: the same keypoints of every view, with their visibility, triangulated with the state
  file's cameras (``K``, ``R``, ``t``), 3D rigidity in metres;
* ``true_2d_inframe`` / ``true_3d_inframe``: the same with every keypoint that projects inside a view
  counted as seen there, occluded or not (a bound: what a reader that sees through the robot's own links
  would give);
* ``reader_2d`` / ``reader_3d`` (with ``--reader``): the reader's readings of the main view, and of every
  calibrated view (the manifest's ``calibration``) triangulated.

and Spearman's rho of each value (higher = less rigid = worse) against the planted level (Good 0,
Medium 1, Bad 2; :func:`robojudge.meta.segment_spearman`, a segment without a value is unscored), on each
measure's own segments, on the segments both of a pair measure, and on the segments that are clean or
hold only a link stretch (the one failure that changes a link's length); for those, also the AUC of
stretched against clean segments (the chance a stretched one ranks above a clean one). It also lists
each measure's median value per planted failure type. No thresholds are involved: both rank raw values.

Rerun (see docs/kiva.md, "3D rigidity")::

    .venv/bin/python scripts/kiva_3d.py --suite runs/k3/suite8/suite.jsonl --reader runs/k3/reader_all
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def _true_values(state: Path, keypoints: Sequence[str], links: Sequence[tuple[int, int]],
                 spans: Sequence[tuple[int, int]], fps: float, diagonal: float) -> dict[str, list[float]]:
    from robojudge.kiva import segment_values
    from robojudge.kiva._triangulate import projection_matrix, segment_rigidity_3d, triangulate

    with np.load(state) as z:
        names = [str(x) for x in z["keypoint_names"]]
        idx = [names.index(k) for k in keypoints]
        kp2 = z["keypoints_2d"][:, :, idx].astype(np.float64)
        vis = z["keypoints_visible"][:, :, idx]
        proj = projection_matrix(z["K"][None], z["R"], z["t"])
        size = float(np.asarray(z["K"])[0, 0, 2]) * 2  # square frames, principal point at the centre
    # In frame, whether or not the robot's own links hide it: what an ideal reader that sees through
    # occlusion would give (the state's visibility is the honest one).
    inframe = np.isfinite(kp2).all(axis=-1) & (kp2 >= 0).all(axis=-1) & (kp2 < size).all(axis=-1)
    out: dict[str, list[float]] = {}
    for tag, mask in (("", vis), ("_inframe", inframe)):
        two = segment_values(kp2[:, 0], mask[:, 0], links, fps, diagonal)
        by_span = {(v.start, v.stop): v.rigidity for v in two}
        tri = triangulate(kp2, mask, proj, max_error=1.0)
        out[f"true_2d{tag}"] = [by_span.get(s, math.nan) for s in spans]
        out[f"true_3d{tag}"] = [v for v, _ in segment_rigidity_3d(tri.points, tri.ok, links, spans)]
    return out


def _reader_values(reader: Any, item: Any, spans: Sequence[tuple[int, int]]
                   ) -> tuple[list[float], list[float]]:
    from robojudge.kiva._reader import read_frames, read_video, tracks_segments
    from robojudge.kiva.multiview import calibrated_views, read_views, segment_values_3d

    tracks = read_video(reader, item.video)
    by_span = {(v.start, v.stop): v.rigidity for v in tracks_segments(reader, tracks)}
    cams, why = calibrated_views(item)
    if why is not None:
        raise SystemExit(f"item {item.item_id}: {why}")
    main = next(v for v, p in item.views.items() if p == item.video)
    readings = read_views(lambda f, fps: read_frames(reader, f, fps), item, cams, (main, tracks))
    three = segment_values_3d(readings, reader.links, spans)
    return [by_span.get(s, math.nan) for s in spans], [v for v, _ in three]


def collect(manifest: Path, reader_path: Path | None, robot: str) -> list[dict[str, Any]]:
    from robojudge.kiva import resolve_robot
    from robojudge.suite import load_suite
    from robojudge.video import probe_video

    bot = resolve_robot(robot)
    reader = None
    if reader_path is not None:
        from robojudge.kiva import load_reader

        reader = load_reader(reader_path)
        keypoints = list(reader.meta["keypoints"])
        links = reader.links
    else:
        keypoints = list(bot.keypoints)
        pos = {k: i for i, k in enumerate(keypoints)}
        links = [(pos[a], pos[b]) for a, b in bot.links or ()]
    rows = []
    for item in load_suite(manifest).items:
        planted = item.meta.get("segments")
        if not planted or not item.state:
            continue
        spans = [(p["start"], p["stop"]) for p in planted]
        info = probe_video(item.video)
        diag = math.hypot(info.width, info.height)
        true = _true_values(Path(item.state), keypoints, links, spans, float(info.fps), diag)
        r2, r3 = _reader_values(reader, item, spans) if reader is not None else ([math.nan] * len(spans),) * 2
        for i, p in enumerate(planted):
            rows.append({"item": item.item_id, "generator": item.generator, "start": p["start"],
                         "stop": p["stop"], "verdict": p["verdict"],
                         "failures": sorted({f["type"] for f in p.get("failures", [])}),
                         **{k: v[i] for k, v in true.items()}, "reader_2d": r2[i], "reader_3d": r3[i]})
    return rows


def summarise(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, Any]:
    from robojudge.meta import segment_spearman, verdict_levels

    levels = verdict_levels([r["verdict"] for r in rows])
    groups = ["all"] * len(rows)
    out: dict[str, Any] = {"segments": len(rows), "rho": {}, "rho_common": {}, "by_failure": {}}
    vals = {c: np.array([r[c] for r in rows], dtype=np.float64) for c in columns}
    for c in columns:
        if np.isnan(vals[c]).all():
            continue
        g = segment_spearman(vals[c], levels, groups).groups["all"]
        out["rho"][c] = {"rho": g.rho, "n": g.n, "unscored": g.unscored}
    for a, b in (("true_2d", "true_3d"), ("true_2d_inframe", "true_3d_inframe"), ("reader_2d", "reader_3d")):
        if a not in vals or b not in vals:
            continue
        both = ~np.isnan(vals[a]) & ~np.isnan(vals[b])
        if both.sum() < 3:
            continue
        out["rho_common"][f"{a} vs {b}"] = {
            c: segment_spearman(vals[c][both], levels[both], ["all"] * int(both.sum())).groups["all"].rho
            for c in (a, b)} | {"n": int(both.sum())}
    # Rigidity can only see a link change length: on segments that are clean or hold a stretch and
    # nothing else, rho says how well each measure tells the two apart.
    sub = np.array([set(r["failures"]) <= {"link_stretch"} for r in rows])
    if sub.sum() >= 3:
        out["rho_stretch_or_clean"] = {"n": int(sub.sum())} | {
            c: segment_spearman(vals[c][sub], levels[sub], ["all"] * int(sub.sum())).groups["all"].rho
            for c in columns if not np.isnan(vals[c]).all()}
    # The same question as a detector: the chance that a stretched segment's value is above a clean one's
    # (ties count half; the Mann-Whitney U over the two groups' measured segments).
    stretch = np.array([r["failures"] == ["link_stretch"] for r in rows])
    clean = np.array([not r["failures"] for r in rows])
    out["auc_stretch_vs_clean"] = {}
    for c in columns:
        a, b = vals[c][stretch], vals[c][clean]
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        if len(a) and len(b):
            wins = (a[:, None] > b[None, :]).sum() + 0.5 * (a[:, None] == b[None, :]).sum()
            out["auc_stretch_vs_clean"][c] = {"auc": float(wins / (len(a) * len(b))), "stretched": len(a),
                                              "clean": len(b)}
    kinds: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        for k in r["failures"] or ["none"]:
            kinds.setdefault(k, []).append(i)
    for k, idx in sorted(kinds.items()):
        out["by_failure"][k] = {"segments": len(idx)} | {
            c: {"median": float(np.nanmedian(vals[c][idx])) if (~np.isnan(vals[c][idx])).any() else None,
                "measured": int((~np.isnan(vals[c][idx])).sum())}
            for c in columns if not np.isnan(vals[c]).all()}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", type=Path, required=True, help="suite.jsonl with views and calibration")
    ap.add_argument("--reader", type=Path, help="a reader folder or reader.pt (adds the reader's columns)")
    ap.add_argument("--robot", default="fetch")
    ap.add_argument("--out", type=Path, help="write rows and summary as JSON here")
    args = ap.parse_args(argv)
    rows = collect(args.suite, args.reader, args.robot)
    summary = summarise(rows, ["true_2d", "true_3d", "true_2d_inframe", "true_3d_inframe", "reader_2d",
                               "reader_3d"])
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
