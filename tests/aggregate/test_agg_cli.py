"""``robojudge aggregate`` commands, driven through typer's test runner for speed."""

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.aggregate import DEFAULT_ROBOPHYSCORE_METRICS, ROBOPHYSCORE_THRESHOLD, agreement
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
    row = next(csv.DictReader(res.stdout.splitlines()))
    # r1: (0.5 + 0.75) / 2 = 0.625, r2: (1 + 0.75) / 2 = 0.875 -> macro 0.75.
    assert float(row["robophyscore"]) == pytest.approx(0.75)
    # IQ-1 in the /6 convention: 6 * 0.625 = 3.75 and 6 * 0.875 = 5.25 -> 4.5.
    assert float(row["subdim_IQ-1"]) == pytest.approx(4.5)
    assert row["n_regimes"] == "2" and row["afs"] == ""  # NaN: levels 2-4 have no metric
    assert (row["n_subdim_IQ-1"], row["n_level_1"]) == ("2", "1")  # the fewest of any regime


def test_scores_under_drop_count_what_each_total_rests_on(tmp_path):
    # Two IQ-1 metrics summing to 1.0 came out as subdim_IQ-1 3.0 and level_1 2.5 with nothing to say so.
    path = tmp_path / "two.csv"
    path.write_text("generator,iq1_psnr,iq1_ssim\ng1,25,0.5\n")  # psnr 25 / 50 = 0.5
    res = _invoke("scores", "--in", path, "--by", "generator", "--missing", "drop")
    assert res.exit_code == 0, res.output
    row = next(csv.DictReader(res.stdout.splitlines()))
    assert (row["subdim_IQ-1"], row["n_subdim_IQ-1"]) == ("3.0", "2")  # 0.5 x 6 from 2 metrics
    assert (row["level_1"], row["n_level_1"]) == ("2.5", "1")  # 0.5 x 5 from 1 sub-dimension
    assert row["n_subdim_AQ"] == "0" and row["subdim_AQ"] == ""
    said = " ".join(res.stderr.split())
    assert "2 total(s) rest on fewer parts than the paper's" in said and "not their sum" in said
    assert said.endswith("g1: level_1 1 of 5, subdim_IQ-1 2 of 6")
    res = _invoke("scores", "--in", path, "--by", "generator")
    assert res.exit_code == 0 and "n_subdim_IQ-1" not in res.stdout  # (nan: a total is whole or empty)
    res = _invoke("scores", "--help")
    assert "mean of those present times the full count" in " ".join(res.output.split())


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


def test_select_without_threshold_uses_eq3_s_default(wide):
    # the option's default is the library's constant: a literal of its own could drift from it
    res = _invoke("select", "--in", wide, "--normalized", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.output[res.output.index("{"):])
    assert got["threshold"] == ROBOPHYSCORE_THRESHOLD
    assert set(got["selected"]) == set(DEFAULT_ROBOPHYSCORE_METRICS)  # App. B.10's eight


def test_select_sensitivity_table(wide):
    res = _invoke("select", "--in", wide, "--normalized", "--thresholds", "0.5,0.6,0.7,0.8,0.9")
    assert res.exit_code == 0, res.output
    assert "0.8 (1): ds_jepa_similarity" in res.output
    assert "0.9 (0): none (RoboPhyscore undefined)" in res.output


def test_select_prints_why_a_min_r_is_undefined(tmp_path):
    # iq1_ssim is constant: its row read "nan" with no reason, and the JSON's reason was null.
    path = tmp_path / "sel.csv"
    path.write_text("config,iq1_psnr,iq1_ssim,ts_vlm2\nA,25,0.5,0.5\nB,20,0.5,0.5\nC,30,0.5,0.6\nD,22,0.5,0.3\n")
    res = _invoke("select", "--in", path, "--by", "config", "--targets", "ts_vlm2")
    assert res.exit_code == 0, res.output
    assert "note: no min r (values of iq1_ssim are constant): iq1_ssim" in " ".join(res.stdout.split())
    res = _invoke("select", "--in", path, "--by", "config", "--targets", "ts_vlm2", "--json")
    out = json.loads(res.stdout)
    assert out["min_r"]["iq1_ssim"] is None and out["reason"] is None
    assert out["min_r_why"] == {"iq1_ssim": "values of iq1_ssim are constant"}


def test_select_sensitivity_prints_table_16_s_four_statistics_per_reference(tmp_path):
    # The report's threshold table heads its columns from the same list (AGREEMENT_STATISTICS): both
    # give Pearson, Spearman, R^2 and MAE per reference, as Table 16 does.
    path = tmp_path / "sel.csv"
    path.write_text("config,iq1_psnr,ts_vlm2,human\nA,25,0.5,6.33\nB,20,0.3,4.67\nC,30,0.6,7\nD,22,0.4,7.5\n")
    args = ["select", "--in", path, "--by", "config", "--targets", "ts_vlm2", "--references", "human",
            "--thresholds", "0.5"]
    (row,) = json.loads(_invoke(*args, "--json").stdout)
    a = agreement([0.5, 0.4, 0.6, 0.44], [6.33, 4.67, 7.0, 7.5])  # iq1_psnr / 50 (Table 13)
    assert row["agreement"] == {"human": {name: pytest.approx(getattr(a, name), abs=1e-6)
                                          for name in ("pearson", "spearman", "r2", "mae")}
                                | {"n": 4, "level": "sample"}}  # (one row per configuration: the same)
    shown = " ".join(_invoke(*args).stdout.replace("\u2503", " ").replace("\u2502", " ").split())  # (rules)
    assert "threshold reference pearson r spearman rho R^2 MAE # metrics" in shown
    assert f"0.5 human {a.pearson:.4f} {a.spearman:.4f} {a.r2:.4f} {a.mae:.4f} 1" in shown
