"""RoboPhys-3D aggregation at its edges (an audit of 2026-12-05): a regime missing a whole level under
--macro, partly measured configurations in eq. 3, raw HPSv3 in `select`, grouping columns named twice,
nothing selectable for a reason other than the data, RoboPhyscore sets with unknown or repeated ids, and
raw values passed as --normalized."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from robojudge.aggregate import (
    AggregateInputError,
    load_taxonomy,
    robophyscore,
    scores_from_table,
    select_metrics,
    selection_from_table,
)
from robojudge.cli._aggregate import app

runner = CliRunner()


def _invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _regimes(path: Path) -> Path:
    """Generator A in two regimes, normalized: r1 every metric 0.9; r2 levels 1-3 at 0.3 and level 4
    (the simulator metrics) blank."""
    tax = load_taxonomy()
    rows = []
    for reg in ("r1", "r2"):
        row = {"generator": "A", "regime": reg}
        for m in tax.ids:
            row[m] = "" if tax[m].level == 4 and reg == "r2" else (0.9 if reg == "r1" else 0.3)
        rows.append(row)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_macro_drop_gives_the_afs_of_the_averaged_levels_not_of_the_best_regime(tmp_path: Path) -> None:
    notes: list[str] = []
    out = scores_from_table(pd.read_csv(_regimes(tmp_path / "m.csv")), by=["generator"], normalized=True,
                            macro="regime", missing="drop", note=notes.append)
    row = out.iloc[0]
    # Levels 1-3: mean of 0.9 and 0.3 = 0.6 each; level 4: r1 only, 0.9. r2's own AFS is NaN (a level
    # has nothing), so averaging the regimes' AFS skipping NaN gave r1's 3.6 alone.
    levels = [row[f"level_{lv}"] / len(load_taxonomy().subdims_of(lv)) for lv in (1, 2, 3, 4)]
    assert levels == pytest.approx([0.6, 0.6, 0.6, 0.9])
    assert row["afs"] == pytest.approx(2.7)
    said = " ".join(notes)
    assert "A: regime r2 lacks level_4" in said and "afs is the sum of the averaged levels" in said
    # Under --missing nan the regime without level 4 leaves every column it enters NaN, as before.
    strict = scores_from_table(pd.read_csv(tmp_path / "m.csv"), by=["generator"], normalized=True,
                               macro="regime")
    assert math.isnan(strict.iloc[0]["afs"]) and math.isnan(strict.iloc[0]["level_4"])


def test_a_complete_macro_table_is_unchanged_by_the_drop_rule(tmp_path: Path) -> None:
    # With every regime complete, the sum of the averaged levels is the average of the regimes' AFS.
    tax = load_taxonomy()
    rows = [{"generator": "A", "regime": reg, **{m: v for m in tax.ids}}
            for reg, v in (("r1", 1.0), ("r2", 0.0))]
    df = pd.DataFrame(rows)
    drop = scores_from_table(df, by=["generator"], normalized=True, macro="regime", missing="drop")
    nan = scores_from_table(df, by=["generator"], normalized=True, macro="regime")
    assert drop.iloc[0]["afs"] == pytest.approx(nan.iloc[0]["afs"]) == pytest.approx(2.0)


def _partial_configs(path: Path) -> Path:
    """Five generators; 'e' has its ssim measured on 1 of its 3 items only (the others blank), and that
    one clean item is its best: mean over the measured item would put e on the line, and over all items
    it is no value."""
    lines = ["item_id,metric,value,generator"]
    succ = {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.2}
    ssim = {"a": 0.2, "b": 0.4, "c": 0.6, "d": 0.8, "e": 0.95}
    for g in succ:
        for k in range(3):
            blank = g == "e" and k > 0
            lines.append(f"{g}{k},iq1_ssim,{'' if blank else ssim[g]},{g}")
            lines.append(f"{g}{k},sim_task_success,{succ[g]},{g}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_select_leaves_out_a_partly_measured_configuration_by_default(tmp_path: Path) -> None:
    path = _partial_configs(tmp_path / "p.csv")
    notes: list[str] = []
    nan = selection_from_table(pd.read_csv(path), ["sim_task_success"], by=["generator"], note=notes.append)
    assert math.isnan(nan.values["iq1_ssim"][4])
    r_nan = select_metrics(nan.values, ["sim_task_success"]).min_r["iq1_ssim"]
    assert r_nan == pytest.approx(1.0)  # a..d lie on a line
    assert "e: iq1_ssim 1 of 3" in " ".join(notes)
    drop = selection_from_table(pd.read_csv(path), ["sim_task_success"], by=["generator"], missing="drop")
    assert drop.values["iq1_ssim"][4] == pytest.approx(0.95)
    assert select_metrics(drop.values, ["sim_task_success"]).min_r["iq1_ssim"] < 0.7  # e's one item moved r
    res = _invoke("select", "--in", path, "--by", "generator", "--targets", "sim_task_success", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["selected"] == ["iq1_ssim"]
    res = _invoke("select", "--in", path, "--by", "generator", "--targets", "sim_task_success", "--json",
                  "--missing", "drop")
    assert json.loads(res.stdout)["selected"] is None


def test_select_normalizes_raw_hpsv3_with_the_percentile_strategy(tmp_path: Path) -> None:
    path = tmp_path / "hps.csv"
    path.write_text("generator,aq_hpsv3,iq1_ssim,sim_task_success\n"
                    "a,5.2,0.5,0.1\nb,7.1,0.7,0.5\nc,9.3,0.9,0.8\nd,6.0,0.6,0.3\n")
    res = _invoke("select", "--in", path, "--targets", "sim_task_success")
    assert res.exit_code == 2
    assert f"{path}: cannot normalize aq_hpsv3" in " ".join(res.output.split())
    res = _invoke("select", "--in", path, "--targets", "sim_task_success", "--strategy", "percentile",
                  "--json")
    assert res.exit_code == 0, res.output
    assert "aq_hpsv3" in json.loads(res.stdout)["selected"]
    assert _invoke("select", "--in", path, "--strategy", "pooled").exit_code == 2


@pytest.mark.parametrize(("args", "said"), [
    (("--by", "generator,regime", "--macro", "regime"), "'regime' named more than once"),
    (("--by", "generator,generator"), "'generator' named more than once"),
])
def test_a_grouping_column_named_twice_is_an_error_line(tmp_path: Path, args: tuple[str, ...],
                                                        said: str) -> None:
    path = _regimes(tmp_path / "m.csv")
    res = _invoke("scores", "--in", path, "--normalized", *args)
    assert res.exit_code == 2 and said in res.output and "Traceback" not in res.output


def test_select_refuses_a_configuration_column_named_twice(tmp_path: Path) -> None:
    res = _invoke("select", "--in", _regimes(tmp_path / "m.csv"), "--normalized", "--targets", "iq1_ssim",
                  "--by", "generator,generator")
    assert res.exit_code == 2 and "'generator' named more than once" in res.output


def test_grouping_a_long_table_by_its_metric_column_is_an_error_line(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("item_id,metric,value,generator\na1,iq1_ssim,0.5,g\n")
    res = _invoke("scores", "--in", path, "--by", "metric")
    assert res.exit_code == 2 and "'metric' cannot group rows" in res.output


def test_select_says_why_nothing_can_be_selected(tmp_path: Path) -> None:
    const = tmp_path / "const.csv"
    const.write_text("gen,iq1_ssim,ts_vlm2\na,0.5,1\nb,0.7,1\nc,0.9,1\n")
    res = _invoke("select", "--in", const, "--targets", "ts_vlm2")
    assert res.exit_code == 0, res.output
    assert "ts_vlm2 is 1 for every configuration" in " ".join(res.stdout.split())
    two = tmp_path / "two.csv"
    two.write_text("gen,iq1_ssim,ts_vlm2\na,0.5,0.2\nb,0.7,0.4\n")
    res = _invoke("select", "--in", two, "--targets", "ts_vlm2", "--json")
    assert "has 2 configuration(s) with a value (Pearson r needs 3)" in json.loads(res.stdout)["reason"]
    res = _invoke("select", "--in", two, "--targets", "ts_vlm2", "--thresholds", "0.5,0.7")
    assert "no metric can be selected at any threshold" in " ".join(res.output.split())
    # A selection that is the data's verdict carries no reason.
    fine = select_metrics({"iq1_ssim": [0.1, 0.2, 0.3], "t": [0.3, 0.1, 0.2]}, ["t"])
    assert fine.selected is None and fine.reason is None


def test_robophyscore_refuses_unknown_and_repeated_ids(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="did you mean iq1_fvd"):
        robophyscore({"iq1_fvd": [1.0]}, ["iq1_fdv"], missing="drop")
    with pytest.raises(ValueError, match="names iq1_ssim more than once"):
        robophyscore({"iq1_ssim": [0.75], "iq1_fvd": [0.5]}, ["iq1_ssim", "iq1_ssim", "iq1_fvd"])
    assert robophyscore({"iq1_ssim": [0.75], "iq1_fvd": [0.5]}, ["iq1_ssim", "iq1_fvd"]) == pytest.approx(
        [0.625])
    # Other keys (the targets select_metrics correlated with) are left alone: eq. 3's output feeds eq. 4.
    values = {"iq1_ssim": [0.1, 0.5, 0.9], "iq1_psnr": [0.2, 0.4, 0.8], "success": [0.1, 0.4, 0.9]}
    chosen = select_metrics(values, ["success"], 0.7).selected
    assert chosen is not None and robophyscore(values, chosen) == pytest.approx([0.15, 0.45, 0.85])
    path = tmp_path / "w.csv"
    path.write_text("generator,iq1_ssim,iq1_fvd\nA,0.75,0.5\n")
    res = _invoke("scores", "--in", path, "--normalized", "--by", "generator",
                  "--robophyscore-metrics", "iq1_ssim,iq1_ssim,iq1_fvd")
    assert res.exit_code == 2 and "more than once" in res.output
    with pytest.raises(AggregateInputError, match="more than once"):
        scores_from_table(pd.read_csv(path), normalized=True, metrics=["iq1_ssim", "iq1_ssim"])


def test_raw_values_passed_as_normalized_are_named(tmp_path: Path) -> None:
    path = tmp_path / "raw.csv"
    path.write_text("generator,iq1_psnr,iq1_ssim\nA,30,0.8\nB,25,0.7\n")
    res = _invoke("scores", "--in", path, "--by", "generator", "--normalized", "--missing", "drop")
    assert res.exit_code == 0, res.output
    said = " ".join(res.stderr.split())
    assert "values given as normalized (--normalized) lie outside [0, 1]: iq1_psnr (2, e.g. 30)" in said
    assert "iq1_ssim" not in said.split("outside [0, 1]:")[1].split(";")[0]
    res = _invoke("select", "--in", path, "--normalized", "--targets", "iq1_ssim")
    assert "lie outside [0, 1]: iq1_psnr" in " ".join(res.stderr.split())
    fine = tmp_path / "fine.csv"
    fine.write_text("generator,iq1_ssim\nA,0.7\nB,0.6\n")
    assert "outside" not in _invoke("scores", "--in", fine, "--by", "generator", "--normalized").stderr


def test_selection_reason_is_none_with_enough_varying_configurations() -> None:
    values = {"iq1_ssim": np.array([0.1, 0.5, 0.9]), "t": np.array([0.2, 0.4, 0.8])}
    sel = select_metrics(values, ["t"])
    assert sel.selected == ("iq1_ssim",) and sel.reason is None
