"""How far a metric's values move with the OpenCV release they are computed with (docs/sensitivity.md,
"Library versions").

Computes ``--metric`` (default ``ctg_camera_control``) on every rollout of a dose-response suite of
docs/sensitivity.md with the OpenCV of this venv and with each OpenCV wheel given by ``--opencv DIR``
(a folder holding a ``cv2`` package, e.g. made by ``pip install --no-deps --target DIR
opencv-python-headless==5.0.0.93``), each in its own process, and prints per OpenCV build: how many
values differ from this venv's, the largest relative difference, and the suite's dose-response cell::

    .venv/bin/python scripts/library_versions_check.py runs/sim_dose/floating --opencv /tmp/cv_5.0.0.93
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

_VALUES = r"""
import json, sys
import cv2
from robojudge.run import Task, build_requests, compute_task
from robojudge.suite import load_suite
reqs = build_requests([sys.argv[2]])
out = {it.item_id: compute_task(Task(it, tuple(reqs)))[0].value for it in load_suite(sys.argv[1]).items}
print(json.dumps({"opencv": cv2.__version__, "values": out}))
"""


def values(manifest: Path, metric: str, opencv: Path | None) -> dict:
    env = dict(os.environ)
    if opencv is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(opencv), env.get("PYTHONPATH", "")]).strip(os.pathsep)
    done = subprocess.run([sys.executable, "-c", _VALUES, str(manifest), metric], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    import sensitivity_matrix as S

    from robojudge.metrics import get_metric
    from robojudge.suite import load_suite

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", type=Path, help="a dose-response suite folder (SUITES/<failure>)")
    ap.add_argument("--metric", default="ctg_camera_control")
    ap.add_argument("--opencv", type=Path, action="append", default=[], help="a folder holding another cv2")
    args = ap.parse_args()
    manifest = args.suite / "suite.jsonl"
    items = load_suite(manifest).items
    failure = args.suite.name
    hib = {args.metric: get_metric(args.metric).higher_is_better}
    here = values(manifest, args.metric, None)
    for found in [here, *(values(manifest, args.metric, p) for p in args.opencv)]:
        v, base = found["values"], here["values"]
        differ = [k for k in v if v[k] != base[k]]
        rel = max((abs(v[k] - base[k]) / max(abs(base[k]), 1e-12) for k in differ), default=0.0)
        cell = S.dose_response({args.metric: v}, items, failure, hib)[args.metric]
        print(f"OpenCV {found['opencv']}: {len(differ)} of {len(v)} values differ from OpenCV "
              f"{here['opencv']}'s (largest relative difference {rel:.1e}); dose-response on {failure}: "
              f"rho {cell.rho:+.3f}, {cell.dropped:.0%} of planted rollouts below their control")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
