"""Accuracy of a tracker on the simulator suite against the true tracks in each rollout's state file.

Usage::

    MUJOCO_GL=egl .venv/bin/python scripts/track_accuracy.py [SUITE_DIR] [--tracker lk_flow] \
        [--episodes 8] [--size 128] [--seed 0] [--metrics [--truth auto|tracked_reference]]

Builds the sim suite into SUITE_DIR first when it has no suite.jsonl (default /tmp/h3_suite). For
every rollout it seeds the tracker with frame 0 of the main view (object masks, end effector,
visible keypoints), tracks the main video, and compares each frame with the state's truth: mask
centroids for objects, the projected end effector, visible keypoints. Prints a Markdown table per
target kind and rollout group: median pixel error, fraction within 5 px, and how often a target the
state shows was reported lost ("missed") or one it does not show was reported ("phantom").
With ``--metrics`` it also prints the mean of the trajectory and localization metrics per planted
failure type (and for faithful rollouts).
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from robojudge.metrics.tracking import SimState, get_tracker, seed_from_state, true_tracks
from robojudge.suite import Item, load_suite
from robojudge.video import sample_frames


def kind_of(name: str) -> str:
    return "keypoints" if name.startswith("kp:") else name


def group_of(failures: list[dict[str, object]]) -> str:
    return "faithful" if not failures else "with failures"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite", nargs="?", default="/tmp/h3_suite")
    ap.add_argument("--tracker", default="lk_flow")
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--metrics", action="store_true", help="also score ta_* and ol_* per failure type")
    ap.add_argument("--truth", default="auto", choices=("auto", "reference_state", "tracked_reference"),
                    help="the metrics' ground truth (auto: the reference's state file; the suite writes one)")
    args = ap.parse_args()
    manifest = Path(args.suite) / "suite.jsonl"
    if not manifest.exists():
        os.environ.setdefault("MUJOCO_GL", "egl")
        from robojudge.suite.sim import make_sim_suite

        make_sim_suite(args.suite, seed=args.seed, episodes=args.episodes, views=1, size=args.size)
    else:
        # A suite built by an older robojudge may differ (reference state files, video encoding): the
        # documented tables once matched such a folder and no fresh build.
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(manifest.stat().st_mtime))
        print(f"reusing the suite in {args.suite} (written {built}); delete the folder to build one with "
              "this robojudge")
    tracker = get_tracker(args.tracker)
    errors: dict[tuple[str, str], list[float]] = defaultdict(list)
    missed: dict[tuple[str, str], list[bool]] = defaultdict(list)
    phantom: dict[tuple[str, str], list[bool]] = defaultdict(list)
    by_failure: dict[str, list[float]] = defaultdict(list)
    items = list(load_suite(manifest))
    t0 = time.perf_counter()
    for item in items:
        assert item.state is not None
        state = SimState.load(item.state)
        frames = sample_frames(item.video, fps=None, max_frames=None).frames
        seed = seed_from_state(state, (frames.shape[2], frames.shape[1]), keypoints=True)
        got = tracker.track(frames, seed)
        truth = true_tracks(state, seed.names(), got.size)
        group = group_of(item.meta.get("failures", []))
        for i, name in enumerate(seed.names()):
            key = (kind_of(name), group)
            have, real = np.isfinite(got.points[:, i, 0]), np.isfinite(truth.points[:, i, 0])
            err = np.linalg.norm(got.points[:, i] - truth.points[:, i], axis=1)[have & real]
            errors[key].extend(err.tolist())
            missed[key].extend((~have[real]).tolist())
            phantom[key].extend(have[~real].tolist())
            if not name.startswith("kp:"):
                for f in item.meta.get("failures", []):
                    by_failure[f"{f['type']} ({kind_of(name)})"].extend(err.tolist())
    secs = time.perf_counter() - t0
    print(
        f"tracker {args.tracker}: {len(items)} rollouts from {manifest}, {secs:.1f} s "
        f"({secs / len(items):.2f} s per rollout)\n"
    )
    print("| target | rollouts | frames compared | median error (px) | within 5 px | missed | phantom |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(errors):
        e = np.array(errors[key])
        miss = np.mean(missed[key]) if missed[key] else 0.0
        ph = f"{np.mean(phantom[key]):.3f} of {len(phantom[key])}" if phantom[key] else "- of 0"
        med = f"{np.median(e):.2f}" if len(e) else "-"
        within = f"{np.mean(e <= 5):.3f}" if len(e) else "-"
        print(f"| {key[0]} | {key[1]} | {len(e)} | {med} | {within} | {miss:.3f} | {ph} |")
    print("\n| failure (target) | frames | median error (px) | within 5 px |")
    print("| --- | --- | --- | --- |")
    for fkey in sorted(by_failure):
        fe = np.array(by_failure[fkey])
        if len(fe):
            print(f"| {fkey} | {len(fe)} | {np.median(fe):.2f} | {np.mean(fe <= 5):.3f} |")
    if args.metrics:
        metric_table(items, args.truth)


METRICS = ("ta_hsd", "ta_ndtw", "ta_dyn", "ol_average_precision", "ol_average_recall")


def metric_table(items: list[Item], truth: str = "auto") -> None:
    """Mean of each metric over the scored rollouts with each planted failure type; a cell where some
    were unscored says how many were scored ("0.412 (3/5)"), "-" where none was (errors left out)."""
    from robojudge.metrics import MetricInputError, get_metric

    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        types = [str(f["type"]) for f in item.meta.get("failures", [])] or ["(none: faithful)"]
        for kind in types:
            counts[kind] += 1
        for mid in METRICS:
            spec = get_metric(mid)
            try:
                value = spec.compute(item, spec.make_config({"truth": truth})).value
            except MetricInputError:
                continue
            for kind in types:
                rows[kind][mid].append(value)
    print(f"\ntruth={truth}\n\n| planted failure | rollouts | " + " | ".join(METRICS) + " |")
    print("| --- | --- |" + " --- |" * len(METRICS))
    for kind in sorted(counts):
        cells = []
        for m in METRICS:
            scored = [v for v in rows[kind][m] if np.isfinite(v)]
            part = "" if len(scored) == counts[kind] else f" ({len(scored)}/{counts[kind]})"
            cells.append(f"{np.mean(scored):.3f}{part}" if scored else "-")
        print(f"| {kind} | {counts[kind]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
