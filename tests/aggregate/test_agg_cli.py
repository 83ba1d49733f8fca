"""``robojudge aggregate`` commands, driven through typer's test runner for speed."""

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli._aggregate import app

GOLDEN = Path(__file__).parent / "golden"
runner = CliRunner()


@pytest.fixture
def wide(tmp_path):
    src = GOLDEN / "robophys3d_appendix_e_normalized.csv"
    rows = [r for r in csv.DictReader(src.open()) if r["kind"] == "world_model"]
    path = tmp_path / "wide.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def _invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_scores_wide_matches_table17(wide, tmp_path):
    out = tmp_path / "out.csv"
    res = _invoke("scores", "--in", wide, "--by", "model,condition", "--normalized", "--out", out)
    assert res.exit_code == 0, res.output
    rows = {(r["model"], r["condition"]): r for r in csv.DictReader(out.open())}
    assert len(rows) == 25
    wan = rows[("Wan", "GT")]
    assert float(wan["afs"]) == pytest.approx(2.7320, abs=5e-4)  # Table 17
    assert float(wan["robophyscore"]) == pytest.approx(0.5782, abs=2e-4)  # Table 4
    assert float(wan["subdim_IQ-1"]) == pytest.approx(3.6911, abs=5e-4)  # Table 20
    assert {"level_1", "level_4", "subdim_TS"} <= set(wan)


def test_scores_long_raw_with_macro(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("gen,regime,metric,value\n"
                    "g,r1,iq1_psnr,25\n"   # 25 / 50 = 0.5
                    "g,r2,iq1_psnr,50\n"   # 1.0
                    "g,r1,iq1_fvd,500\n"   # 1 - 500 / 2000 = 0.75
                    "g,r2,iq1_fvd,500\n")
    res = _invoke("scores", "--in", path, "--by", "gen", "--macro", "regime", "--missing", "drop",
                  "--robophyscore-metrics", "iq1_psnr,iq1_fvd")
    assert res.exit_code == 0, res.output
    row = next(csv.DictReader(res.output.splitlines()))
    # r1: (0.5 + 0.75) / 2 = 0.625, r2: (1 + 0.75) / 2 = 0.875 -> macro 0.75.
    assert float(row["robophyscore"]) == pytest.approx(0.75)
    # IQ-1 in the /6 convention: 6 * 0.625 = 3.75 and 6 * 0.875 = 5.25 -> 4.5.
    assert float(row["subdim_IQ-1"]) == pytest.approx(4.5)
    assert row["n_regimes"] == "2" and row["afs"] == ""  # NaN: levels 2-4 have no metric


def test_scores_rejects_unknown_metric(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("metric,value\niq1_psrn,3\n")
    res = _invoke("scores", "--in", path)
    assert res.exit_code == 2 and "did you mean iq1_psnr" in res.output


def test_select_json(wide):
    res = _invoke("select", "--in", wide, "--normalized", "--threshold", "0.7", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.output[res.output.index("{"):])
    assert set(got["selected"]) == {"ds_jepa_similarity", "cc_semantics", "sa_subject_adherence",
                                    "if_normalized_score", "ol_average_recall", "pla_physical_commonsense",
                                    "ta_ndtw", "iq1_fvd"}


def test_select_sensitivity_table(wide):
    res = _invoke("select", "--in", wide, "--normalized", "--thresholds", "0.5,0.6,0.7,0.8,0.9")
    assert res.exit_code == 0, res.output
    assert "0.8 (1): ds_jepa_similarity" in res.output
    assert "0.9 (0): none (RoboPhyscore undefined)" in res.output
