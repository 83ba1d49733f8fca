"""Eq. 3's min r with the number of configurations behind it (audit meta F5).

Before: ``Selection`` and ``aggregate select`` gave each candidate's min r alone, so a metric measured on
3 of 10 configurations, whose r with a target rests on 3 points, was ranked and kept beside metrics
measured on all 10, with nothing to tell them apart.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.aggregate import select_metrics
from robojudge.cli._aggregate import app

TS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
#: Configurations 2 and 5 lack the second target.
TS2 = [0.1, 0.25, math.nan, 0.35, 0.5, math.nan, 0.7, 0.75, 0.95, 1.0]
NAN = math.nan


def _values() -> dict[str, list[float]]:
    return {
        "ts_action_planner": TS, "ts_data_engine": TS2,
        # measured on 3 of 10 configurations (0, 4, 9): its r rests on 3 pairs with either target
        "aq_hpsv3": [0.12, NAN, NAN, NAN, 0.49, NAN, NAN, NAN, NAN, 0.97],
        # measured on 8 (not 3 and 7): 8 pairs with TS, 6 with TS2 (2 and 5 lack it too, 3 and 7 lack this)
        "iq1_ssim": [0.15, 0.2, 0.33, NAN, 0.45, 0.62, 0.7, NAN, 0.88, 0.99],
        "iq1_psnr": [0.1 + 0.01 * (k % 3) + 0.09 * k for k in range(10)],  # all 10; 8 with TS2
    }


def test_each_candidate_counts_the_fewest_configurations_its_r_rests_on() -> None:
    sel = select_metrics(_values(), ["ts_action_planner", "ts_data_engine"])
    # n = min over targets of the configurations with both values:
    # aq_hpsv3 min(3, 3) = 3; iq1_ssim min(8, 6) = 6; iq1_psnr min(10, 8) = 8
    assert sel.n == {"aq_hpsv3": 3, "iq1_ssim": 6, "iq1_psnr": 8}
    assert sel.configurations == 10
    assert sel.selected is not None and "aq_hpsv3" in sel.selected  # still kept: the data's verdict
    assert sel.few_configurations() == ["aq_hpsv3"]  # 3 < 10 / 2; 6 and 8 are not under half
    # n counts what the r is computed over: the same r from the complete pairs alone
    v = _values()
    ok = np.isfinite(v["aq_hpsv3"])
    lone = select_metrics({k: np.asarray(x)[ok] for k, x in v.items()},
                          ["ts_action_planner", "ts_data_engine"])
    assert lone.min_r["aq_hpsv3"] == sel.min_r["aq_hpsv3"] and lone.n["aq_hpsv3"] == 3


def test_a_metric_on_no_common_configuration_has_n_0_and_no_r() -> None:
    v = _values()
    v["iq1_lpips"] = [NAN] * 10
    sel = select_metrics(v, ["ts_action_planner"])
    assert sel.n["iq1_lpips"] == 0 and math.isnan(sel.min_r["iq1_lpips"])
    assert "iq1_lpips" in sel.few_configurations()


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "wide.csv"
    v = _values()
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["config", *v])
        for k in range(10):
            w.writerow([f"cfg{k}", *("" if math.isnan(x[k]) else x[k] for x in v.values())])
    return path


def test_select_prints_and_writes_n_and_flags_a_candidate_under_half(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    args = ["select", "--in", str(path), "--by", "config", "--normalized",
            "--targets", "ts_action_planner,ts_data_engine"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.stdout.splitlines() if "min r" in ln)
    assert header.split()[header.split().index("r") + 2] == "n", header  # (metric ┃ min r ┃ n ┃ kept)
    line = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("aq_hpsv3"))
    assert "3 of 10" in line
    assert "8 of 10" in next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("iq1_psnr"))
    notes = res.stdout.replace("\n", " ").split("note: ")
    flagged = [ln for ln in notes if "a min r can pass by chance" in ln]
    assert len(flagged) == 1 and "aq_hpsv3 (3)" in flagged[0] and "iq1_ssim" not in flagged[0]
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    assert got["n"] == {"aq_hpsv3": 3, "iq1_ssim": 6, "iq1_psnr": 8}
    assert got["configurations"] == 10 and got["few_configurations"] == ["aq_hpsv3"]
