"""KIVA's measure version 4 (per-part scales) against version 3 on the same reads, with a paired bootstrap.

For each robot this builds (or reuses) a simulator suite of the profiles ``oracle``, ``kin_mild`` and
``kin_severe`` as ``scripts/kiva_validation.py`` does, reads every reference and rollout once with the
given reader (the reads are kept in ``ROOT/ROBOT/_tracks.pkl``, keyed by the reader), and judges every
planted segment twice: with the thresholds of version 3 (the 95th percentile of the references' largest
link variation and mean keypoint jerk) and with those of version 4 (each link and keypoint first divided
by its own 95th reference percentile, :func:`robojudge.kiva.part_scales`). The same is done on the
simulator's true keypoints. It prints Spearman's rho of each against the planted level per robot, the
Good and Medium/Bad segments flagged, and the macro difference v4 - v3 with a 95% interval from a paired
bootstrap that resamples clips within each robot (both versions on the same draw).

Used for docs/kiva_validation.md, "Per-part scales". Rerun (MuJoCo needs ``MUJOCO_GL=egl``)::

    A=runs/kiva_val18
    MUJOCO_GL=egl .venv/bin/python scripts/kiva_scales_check.py --root runs/kiva_hold2 \\
        --episodes 12 --seed 2 --reader fetch=$A/fetch/reader-s128-e10 \\
        --reader adroit=$A/adroit/reader-s128-e10 --reader aloha=$A/aloha/reader-s128-e10-h2 \\
        --reader franka=$A/franka/reader-s128-e10-h2
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kiva_validation import (  # noqa: E402
    build_suite,
    no_gap,
    reader_fingers,
    robot_items,
    robot_paths,
    true_tracks,
)


def read_suite(manifest: Path, robot: str, reader_path: Path, cache: Path | None = None,
               local_radius: int | None = None) -> dict[str, Any]:
    """Every reference and rollout of ``robot`` in ``manifest`` read once, with the true keypoints beside.

    The reads are kept in ``cache`` (default ``_tracks.pkl`` beside the manifest), keyed by the reader and
    ``local_radius`` (heatmaps read near their peak: ``robojudge.kiva._net.local_window``): a cache of
    another reader or radius is read again and replaced."""
    from robojudge.kiva import held_frames, load_reader, read_frames
    from robojudge.video import sample_frames

    cache = cache or manifest.parent / "_tracks.pkl"
    if cache.exists():
        with cache.open("rb") as f:
            data: dict[str, Any] = pickle.load(f)  # noqa: S301 - a file this script wrote
        if data.get("reader") == str(reader_path.resolve()) and data.get("local_radius") == local_radius:
            return data
    reader = load_reader(reader_path)
    if local_radius is not None:
        from robojudge.kiva._net import set_local_radius

        set_local_radius(reader.net, local_radius)
    items = robot_items(manifest, robot)
    names = reader.meta["keypoints"]

    def read(video: str, state: Path, view: str | None) -> dict[str, Any]:
        clip = sample_frames(manifest.parent / video, fps=None, max_frames=None)
        h, w = clip.frames.shape[1:3]
        tracks = read_frames(reader, clip.frames, clip.source_fps)
        true_pos, true_vis = true_tracks(state, names, view)
        return {"pos": tracks.positions, "vis": tracks.visible, "prob": tracks.probability,
                "held": held_frames(clip.frames),
                "fps": float(clip.source_fps), "w": w, "h": h, "true_pos": true_pos, "true_vis": true_vis}

    data = {"reader": str(reader_path.resolve()), "links": reader.links, "fingers": reader_fingers(reader),
            "refs": {}, "items": {}, "local_radius": local_radius}
    for ref in sorted({it.reference_video for it in items if it.reference_video}):
        data["refs"][ref] = read(ref, (manifest.parent / ref).with_suffix(".npz"), None)
    for it in items:
        data["items"][it.item_id] = {**read(it.video, manifest.parent / str(it.state), it.main_view),
                                     "clip": it.clip_id, "planted": it.meta["segments"]}
    with cache.open("wb") as f:
        pickle.dump(data, f)
    return data


def judged_rows(data: dict[str, Any], true: bool) -> list[tuple[str, float, float, str]]:
    """``(clip, v4 score, v3 score, planted verdict)`` per planted segment."""
    from robojudge.kiva import Tracks, judge_tracks, percentile_thresholds, reference_cuts, segment_values

    p, v = ("true_pos", "true_vis") if true else ("pos", "vis")
    links, fingers = data["links"], data["fingers"]
    refs = [x for d in data["refs"].values()
            for x in segment_values(d[p], d[v], links, d["fps"], math.hypot(d["w"], d["h"]), fingers=fingers,
                                    held=d["held"], relative=False, window="centre")]
    # Versions 3 and 4 as they were: without the finger gap of version 5, on pixel link lengths (version 6
    # measures relative ones), with the centre jerk windows (version 7 has its own).
    scales, cuts4 = reference_cuts(refs, 95.0)
    cuts4, cuts3 = no_gap(cuts4), no_gap(percentile_thresholds(refs, 95.0))
    rows = []
    for d in data["items"].values():
        tracks = Tracks(d[p], d[v], d[v].astype(float), d["fps"], d["w"], d["h"], held=d["held"])
        v4 = {(x.values.start, x.values.stop): x.score
              for x in judge_tracks(tracks, links, cuts4, fingers=fingers, scales=scales,
                                    relative=False, window="centre").verdicts}
        v3 = {(x.values.start, x.values.stop): x.score
              for x in judge_tracks(tracks, links, cuts3, fingers=fingers, relative=False,
                                    window="centre").verdicts}
        for seg in d["planted"]:
            k = (seg["start"], seg["stop"])
            rows.append((d["clip"], v4.get(k, math.nan), v3.get(k, math.nan), seg["verdict"]))
    return rows


def rho(scores: Sequence[float], levels: Any) -> float:
    import numpy as np
    from scipy.stats import spearmanr

    if len(np.unique(np.asarray(levels))) < 2:
        return math.nan  # one level only (a bootstrap draw without Bad clips): no rank order to find
    return float(spearmanr(scores, levels, nan_policy="omit")[0])


def bootstrap(rows: dict[str, list[tuple[str, float, float, str]]], draws: int, seed: int
              ) -> tuple[float, float, float, float]:
    """Macro rho difference v4 - v3: its value, a 95% interval and the share of draws above 0, resampling
    clips with replacement within each robot (the same draw for both versions)."""
    import numpy as np

    from robojudge.meta import verdict_levels

    def macro(chosen: dict[str, list[tuple[str, float, float, str]]]) -> float:
        d = []
        for sel in chosen.values():
            lv = verdict_levels([x[3] for x in sel])
            d.append(rho([x[1] for x in sel], lv) - rho([x[2] for x in sel], lv))
        return float(np.mean(d))

    rng = np.random.default_rng(seed)
    by_clip = {r: {} for r in rows}  # type: dict[str, dict[str, list[tuple[str, float, float, str]]]]
    for r, rs in rows.items():
        for x in rs:
            by_clip[r].setdefault(x[0], []).append(x)
    diffs = []
    for _ in range(draws):
        chosen = {}
        for r, clips in by_clip.items():
            names = sorted(clips)
            chosen[r] = [x for i in rng.integers(0, len(names), len(names)) for x in clips[names[i]]]
        diffs.append(macro(chosen))
    # A draw without a level's segments in some robot has no rho there: it is left out.
    ok = np.asarray(diffs)[~np.isnan(diffs)]
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return macro(rows), float(lo), float(hi), float(np.mean(ok > 0))


def main(argv: Sequence[str] | None = None) -> int:
    from robojudge.meta import verdict_levels

    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--episodes", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--reader", action="append", required=True, help="ROBOT=READER_DIR, one per robot")
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args(argv)
    readers = robot_paths(args.reader, "--reader")
    t0 = time.time()
    rows: dict[bool, dict[str, list[tuple[str, float, float, str]]]] = {False: {}, True: {}}
    for robot, reader in readers.items():
        manifest = build_suite(args.root / robot, robot, episodes=args.episodes, size=args.size,
                               seed=args.seed)
        data = read_suite(manifest, robot, reader)
        for true in (False, True):
            rows[true][robot] = judged_rows(data, true)
        print(f"[{time.time() - t0:6.0f} s] {robot}: {len(rows[False][robot])} segments", flush=True)
    print("| keypoints | robot | rho v3 | rho v4 | Good flagged v3 / v4 | Medium+Bad flagged v3 / v4 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for true in (False, True):
        for robot, rs in rows[true].items():
            lv = verdict_levels([x[3] for x in rs])
            good = lv == 0

            def flagged(col: int, mask: Any, rs: Any = rs) -> int:
                return sum(1 for x, m in zip(rs, mask, strict=True) if m and x[col] > 1)

            print(f"| {'true' if true else 'reader'} | {robot} | {rho([x[2] for x in rs], lv):.2f} | "
                  f"{rho([x[1] for x in rs], lv):.2f} | "
                  f"{flagged(2, good)} / {flagged(1, good)} of {good.sum()} | "
                  f"{flagged(2, ~good)} / {flagged(1, ~good)} of {(~good).sum()} |")
    for true in (False, True):
        d, lo, hi, p = bootstrap(rows[true], args.draws, 0)
        print(f"{'true keypoints' if true else 'reader'}: macro rho v4 - v3 = {d:+.3f} "
              f"[{lo:+.3f}, {hi:+.3f}], above 0 in {100 * p:.1f}% of {args.draws} clip draws")
    return 0


if __name__ == "__main__":
    sys.exit(main())
