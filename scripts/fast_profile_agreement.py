"""How far the fast profile (``robojudge score --fast``) agrees with native size (docs/metrics.md, "The
fast profile").

``rank`` reads two stores of the same clips, one scored natively and one with ``--fast``, and prints
Spearman's rho between each clip's two values per metric, over all clips and per generator of the
manifest (``mq_dynamic_degree``: its continuous ``details.moving_fraction``)::

    M=cc_photometric,ctg_camera_control,mq_dynamic_degree,mq_flow_score,mq_temporal_flickering,rbg_stability
    M=$M,flow_warp_error,flow_motion_magnitude_farneback  # the RoboJudge App. B.3 pair
    robojudge score SUITE.jsonl -m $M --run-dir runs/native
    robojudge score SUITE.jsonl -m $M --fast --run-dir runs/fast
    .venv/bin/python scripts/fast_profile_agreement.py rank SUITE.jsonl runs/native/results.sqlite \\
        runs/fast/results.sqlite --groups recorded_droid,ctrl_world,robomaster_demo

``dose`` rescoring the dose-response suites of docs/sensitivity.md (built by
``scripts/sensitivity_matrix.py --dose``, scored natively into ``SUITES/<failure>/_run``) under the
fast profile into ``OUT/<failure>``, and prints rho native / fast per metric and failure::

    MUJOCO_GL=egl .venv/bin/python scripts/fast_profile_agreement.py dose runs/sim_dose \\
        --failures teleport,flicker,camera_drift --out runs/fast_dose

``--metrics`` scores a subset of them (for instance the one whose version changed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).parent))
import sensitivity_matrix as S  # noqa: E402

from robojudge.metrics import FrameOptions, get_metric  # noqa: E402
from robojudge.run import score_suite  # noqa: E402
from robojudge.store import ResultStore  # noqa: E402
from robojudge.suite import load_suite  # noqa: E402

# the six read at native size, and the RoboJudge App. B.3 pair (one Farneback iteration under the profile)
METRICS = ("cc_photometric", "ctg_camera_control", "mq_dynamic_degree", "mq_flow_score",
           "mq_temporal_flickering", "rbg_stability", "flow_warp_error", "flow_motion_magnitude_farneback")


def _values(db: Path) -> dict[tuple[str, str], float]:
    """``{(metric, item id): value}`` of the scored rows (dynamic degree: its moving fraction)."""
    out = {}
    with ResultStore(f"sqlite:///{db}", read_only=True) as store:
        for r in store.rows():
            if r.status != "ok" or r.value is None or not np.isfinite(r.value):
                continue
            detail = (r.details or {}).get("moving_fraction")
            out[(r.metric, r.item_id)] = detail if r.metric == "mq_dynamic_degree" else r.value
    return out


def rank(manifest: Path, native: Path, fast: Path, groups: list[str]) -> None:
    generator = {it.item_id: it.generator or "" for it in load_suite(manifest).items}
    a, b = _values(native), _values(fast)
    print("| metric | all | " + " | ".join(groups) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in groups) + " |")
    for metric in sorted({m for m, _ in a} & set(METRICS)):
        cells = []
        for group in [None, *groups]:
            keys = [k for k in a if k[0] == metric and k in b and k[1] in generator
                    and (group is None or generator[k[1]] == group)]
            x, y = np.array([a[k] for k in keys]), np.array([b[k] for k in keys])
            rho = float(spearmanr(x, y)[0]) if len(keys) > 2 else float("nan")
            cells.append(f"{rho:.2f} ({len(keys)})")
        print(f"| `{metric}` | " + " | ".join(cells) + " |")


def dose(suites: Path, failures: list[str], out: Path, metrics: tuple[str, ...] = METRICS) -> None:
    hib = {m: get_metric(m).higher_is_better for m in metrics}
    cells = {}
    for failure in failures:
        manifest = suites / failure / "suite.jsonl"
        items = load_suite(manifest).items
        native, _ = S.stored_results(f"sqlite:///{suites / failure / '_run' / 'results.sqlite'}", metrics)
        run = score_suite(manifest, list(metrics), run_dir=out / failure, frames=FrameOptions(profile="fast"))
        fast, _ = S.stored_results(run.db_url, metrics)
        cells[failure] = (S.dose_response({m: v for m, v in native.items() if v}, items, failure, hib),
                          S.dose_response({m: v for m, v in fast.items() if v}, items, failure, hib))
    print("| metric | " + " | ".join(failures) + " |")
    print("| --- | " + " | ".join("---" for _ in failures) + " |")
    for m in metrics:
        row = [f"{cells[f][0][m].rho:+.2f} / {cells[f][1][m].rho:+.2f}"
               if m in cells[f][0] and m in cells[f][1] else "-" for f in failures]
        print(f"| `{m}` | " + " | ".join(row) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rank")
    r.add_argument("manifest", type=Path)
    r.add_argument("native", type=Path)
    r.add_argument("fast", type=Path)
    r.add_argument("--groups", default="")
    d = sub.add_parser("dose")
    d.add_argument("suites", type=Path)
    d.add_argument("--failures", default="teleport,flicker,camera_drift")
    d.add_argument("--out", type=Path, default=Path("runs/fast_dose"))
    d.add_argument("--metrics", default=",".join(METRICS), help="a subset of the metrics (default: all)")
    args = ap.parse_args()
    if args.cmd == "rank":
        rank(args.manifest, args.native, args.fast, [g for g in args.groups.split(",") if g])
    else:
        unknown = set(args.metrics.split(",")) - set(METRICS)
        if unknown:
            ap.error(f"--metrics: not among the profile's six: {', '.join(sorted(unknown))}")
        dose(args.suites, args.failures.split(","), args.out, tuple(args.metrics.split(",")))


if __name__ == "__main__":
    main()
