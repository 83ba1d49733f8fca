"""``aggregate`` says what its numbers rest on (audit aggedge F3, F4, F7): the configurations behind each
row of the threshold table, the metrics behind a robophyscore under ``--missing drop``, and which columns
it reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from robojudge.aggregate._tables import scores_from_table
from robojudge.cli._aggregate import app

runner = CliRunner()

CONFIGS = """config,iq1_ssim,iq1_psnr,cs_collision_count,ts_action_planner,ts_data_engine,ts_vlm2
k0,0.2759,16.027,29.503,0.0,0.042,0.17
k1,0.4033,20.342,24.43,0.2,0.275,0.445
k2,0.5082,,20.083,0.4,0.56,0.43
k3,0.548,25.749,15.674,0.6,0.537,0.527
k4,0.6786,29.66,13.874,0.8,0.741,0.861
k5,0.8249,25.071,9.487,1.0,0.902,0.974
"""


def test_select_thresholds_prints_the_configurations_behind_each_row(tmp_path) -> None:
    path = tmp_path / "configs.csv"
    path.write_text(CONFIGS)
    res = runner.invoke(app, ["select", "--in", str(path), "--thresholds", "0.5,0.9"])
    assert res.exit_code == 0, res.output
    rows = {(line.split()[0], line.split()[2]): line for line in res.output.splitlines()
            if line.strip().startswith(("0.5", "0.9")) and "ts_" in line}
    # At 0.5 the set holds iq1_psnr, which k2 lacks: 5 configurations; at 0.9 all 6.
    assert rows[("0.5", "ts_action_planner")].rstrip().endswith("5 of 6")
    assert rows[("0.9", "ts_action_planner")].rstrip().endswith("6 of 6")
    assert "rows with different n are over different configurations" in res.output
    # The 0.9 row by hand: Table 13 bounds, SSIM as is and collisions (68 - x) / 68, their mean against
    # task success with scipy.
    df = pd.read_csv(path)
    score = (df["iq1_ssim"] + (68 - df["cs_collision_count"]) / 68) / 2
    r = stats.pearsonr(score, df["ts_action_planner"]).statistic
    assert f"{r:.4f}" in rows[("0.9", "ts_action_planner")]


def _long(rows: list[tuple[str, str, float | None]]) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"{g}{c}", "generator": g, "metric": m, "value": v}
                         for g, c, m, v in rows])


def test_missing_drop_counts_the_metrics_behind_robophyscore() -> None:
    # R's ta_ndtw failed on all 4 items (an empty value); P and Q have both of the two metrics stored.
    ndtw = {"P": 0.9, "Q": 0.5, "R": None}
    pla = {"P": 2.0, "Q": 3.0, "R": 5.0}
    rows = []
    for g in "PQR":
        for c in range(4):
            rows += [(g, str(c), "ta_ndtw", None if ndtw[g] is None else ndtw[g] + 0.01 * c),
                     (g, str(c), "pla_physical_commonsense", pla[g])]
    notes: list[str] = []
    out = scores_from_table(_long(rows), by=["generator"], missing="drop", note=notes.append)
    out = out.set_index("generator")
    # By hand: P = mean(0.915, (2 - 1) / 4) = 0.5825 over 2 of the 8 metrics; R = (5 - 1) / 4 over 1.
    assert out.loc["P", "robophyscore"] == pytest.approx(0.5825)
    assert out.loc["R", "robophyscore"] == pytest.approx(1.0)
    assert list(out["n_robophyscore"]) == [2, 2, 1]
    scaled = next(n for n in notes if n.startswith("under --missing drop"))
    assert "R: level_3 1 of 6, robophyscore 1 of 8" in scaled and "n_robophyscore" in scaled
    # Under --missing nan there is no count: a robophyscore short of a metric is NaN.
    nan = scores_from_table(_long(rows), by=["generator"], missing="nan")
    assert "n_robophyscore" not in nan.columns and np.isnan(nan["robophyscore"]).all()


def test_item_id_is_not_called_ignored() -> None:
    df = pd.DataFrame({"item_id": ["a", "b"], "clip_id": ["c0", "c1"], "comment": ["x", "y"],
                       "iq1_ssim": [0.5, 0.6]})
    notes: list[str] = []
    scores_from_table(df, normalized=True, note=notes.append)
    (ignored,) = [n for n in notes if n.startswith("ignoring non-metric")]
    assert ignored.startswith("ignoring non-metric column(s): clip_id, comment (")
    assert "item_id" not in ignored and "--cluster" in ignored
