import json

import numpy as np
import pytest
from typer.testing import CliRunner

from _meta_csvs import write_agreement_csvs
from robojudge.cli._meta import app

runner = CliRunner()


@pytest.fixture
def csvs(tmp_path):
    write_agreement_csvs(tmp_path)
    return tmp_path


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_agreement_json(csvs):
    r = run("agreement", "--pred", csvs / "pred.csv", "--human", csvs / "human.csv",
            "--bootstrap", 200, "--seed", 1, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["judges"] == ["good", "bad"] and out["axes"] == ["pa", "ia"]
    assert out["bootstrap"]["clusters"] == 20 and out["bootstrap"]["strata"] == 3
    bad_pa = out["cells"]["bad"]["pa"]
    assert bad_pa["n"] == 39 and bad_pa["n_unscored"] == 1
    good = out["cells"]["good"]["overall"]["stats"]["pearson"]
    assert good["low"] <= good["value"] <= good["high"]
    assert out["differences"][0]["a"] == "good"


def test_agreement_tables(csvs):
    r = run("agreement", "--pred", csvs / "pred.csv", "--human", csvs / "human.csv", "--bootstrap", 50)
    assert r.exit_code == 0, r.output
    assert "overall" in r.output and "paired differences" in r.output


def test_agreement_errors(csvs):
    (csvs / "p2.csv").write_text("item_id,axis,score\nv1,pa,3\nv2,pa,abc\n")
    r = run("agreement", "--pred", csvs / "p2.csv", "--human", csvs / "human.csv")
    assert r.exit_code == 2 and "line 3" in r.output and "'score'" in r.output and "abc" in r.output
    (csvs / "p3.csv").write_text("item_id,axis,score\nzz,pa,3\nv1,xx,3\n")
    r = run("agreement", "--pred", csvs / "p3.csv", "--human", csvs / "human.csv")
    assert r.exit_code == 2 and "2 row(s) have no human score" in r.output and "zz/pa" in r.output
    (csvs / "solo.csv").write_text("item_id,axis,score\nv1,pa,3\nv2,pa,4\n")
    r = run("agreement", "--pred", csvs / "solo.csv", "--human", csvs / "human.csv",
            "--bootstrap", 0, "--json")
    assert r.exit_code == 0 and json.loads(r.output)["judges"] == ["solo"]
    (csvs / "p4.csv").write_text("item,axis,score\n")
    r = run("agreement", "--pred", csvs / "p4.csv", "--human", csvs / "human.csv")
    assert r.exit_code == 2 and "missing column(s) item_id" in r.output


def test_compare_json(tmp_path):
    (tmp_path / "s.csv").write_text("s,t\n0,1\n1,3\n2,2\n3,4\n,5\n")
    r = run("compare", "--in", tmp_path / "s.csv", "--score", "s", "--target", "t", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    # same numbers as the hand-worked example in test_meta_fit.py
    assert out["n"] == 4 and out["dropped"] == 1
    assert out["r2"] == pytest.approx(0.64) and out["mae_fit"] == pytest.approx(0.6)
    assert out["mae_rescaled"] == pytest.approx(1 / 6)
    r = run("compare", "--in", tmp_path / "s.csv", "--score", "s", "--target", "t",
            "--score-range", "0,4", "--target-range", "0,4", "--json")
    assert json.loads(r.output)["mae_rescaled"] == pytest.approx(0.25)
    r = run("compare", "--in", tmp_path / "s.csv", "--score", "nope", "--target", "t")
    assert r.exit_code == 2 and "nope" in r.output


def test_compare_refuses_a_range_that_does_not_hold_the_values(tmp_path):
    from robojudge.meta import fit_agreement
    (tmp_path / "s.csv").write_text("s,t\n0,1\n1,3\n2,2\n3,4\n")
    base = ("compare", "--in", tmp_path / "s.csv", "--score", "s", "--target", "t")
    # the scores reach 3: a "theoretical" range of [0, 2] rescaled 3 to 1.5, outside [0, 1]
    r = run(*base, "--score-range", "0,2")
    assert r.exit_code == 2, r.output
    assert f"{tmp_path / 's.csv'} line 5, column 's': 3 is outside the range [0, 2]" in r.output
    r = run(*base, "--target-range", "2,5")
    assert r.exit_code == 2 and "line 2, column 't': 1 is outside the range [2, 5]" in r.output
    r = run(*base, "--score-range", "-inf,inf")
    assert r.exit_code == 2 and "--score-range expects two finite numbers" in r.output
    with pytest.raises(ValueError, match=r"1 score value\(s\) lie outside the score range \[0, 2\]"):
        fit_agreement([0, 1, 2, 3], [1, 3, 2, 4], (0, 2))
    with pytest.raises(ValueError, match="target range must be two finite numbers"):
        fit_agreement([0, 1, 2, 3], [1, 3, 2, 4], None, (0, float("inf")))


def test_compare_says_why_a_constant_column_has_no_statistics(tmp_path):
    (tmp_path / "c.csv").write_text("s,t\n1,2\n1,4\n1,5\n")
    r = run("compare", "--in", tmp_path / "c.csv", "--score", "s", "--target", "t", "--json")
    assert r.exit_code == 0, r.output
    said = "s vs t: the correlations and the fit are undefined: scores are constant (3 complete rows"
    assert said in r.output
    out = json.loads(r.output[r.output.index("{"):])
    assert out["pearson"] is None and out["why"] == "scores are constant"


def _segment_csv(tmp_path, bad_line: str | None = None):
    rng = np.random.default_rng(4)
    lines = ["robot,clip,video,verdict,kiva,psnr"]
    for robot in ("fetch", "aloha"):
        for c in range(8):
            for level, gen in enumerate(("oracle", "mild", "severe")):
                for start in (0, 16, 32):
                    lv = level if start == 16 else 0
                    verdict = ("Good", "Medium", "Bad")[lv]
                    blank = (robot, c, level, start) == ("fetch", 0, 0, 0)
                    kiva = "" if blank else f"{lv + rng.uniform(0, 1.5):.4f}"
                    psnr = f"{30 - lv + rng.normal(0, 2):.4f}"
                    lines.append(f"{robot},c{c},{robot}{c}-{gen},{verdict},{kiva},{psnr}")
    if bad_line:
        lines.append(bad_line)
    path = tmp_path / "segments.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_segments_json_matches_the_library_on_the_same_arrays(tmp_path):
    import pandas as pd

    from robojudge.meta import group_seed, segment_spearman_bootstrap, three_band_agreement, verdict_levels

    path = _segment_csv(tmp_path)
    r = run("segments", "--in", path, "--score", "kiva", "--score", "psnr:higher-better", "--group", "robot",
            "--clip", "clip", "--video", "video", "--reference", "kiva", "--replicates", 300, "--draws", 50,
            "--seed", 3, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    df = pd.read_csv(path)
    levels = verdict_levels(list(df["verdict"]))
    want = segment_spearman_bootstrap({"kiva": df["kiva"].to_numpy(), "psnr": -df["psnr"].to_numpy()}, levels,
                                      list(df["robot"]), list(df["clip"]), reference="kiva", replicates=300,
                                      seed=3)
    for robot in ("fetch", "aloha"):
        got, exp = out["rho"]["kiva"][robot], want.metrics["kiva"].groups[robot]
        assert (got["rho"], got["low"], got["high"]) == pytest.approx((exp.rho, exp.low, exp.high))
        d = out["minus_reference"]["psnr"][robot]
        assert d["rho"] == pytest.approx(want.differences["psnr"].groups[robot].rho)
        m = (df["robot"] == robot).to_numpy()
        videos = [f"{robot}\x00{v}" for v in df["video"][m]]
        band = three_band_agreement(-df["psnr"].to_numpy()[m], levels[m], videos, draws=50,
                                    seed=group_seed(3, robot))
        assert out["overlap"]["psnr"][robot]["overlap"] == pytest.approx(band.overlap)
    assert out["rho"]["kiva"]["fetch"]["n"] == 71  # one blank kiva left out of 72
    assert out["rho"]["kiva"]["fetch"]["rho"] > 0.5 and out["rho"]["psnr"]["fetch"]["rho"] > 0  # psnr negated
    assert out["segments"] == {"aloha": 72, "fetch": 72} and out["clusters"] == {"aloha": 8, "fetch": 8}
    assert out["verdicts"]["fetch"] == {"Good": 56, "Medium": 8, "Bad": 8}
    assert out["overlap_pooled"]["kiva"]["macro"][0] > 0


def test_segments_tables_and_fallbacks(tmp_path):
    path = _segment_csv(tmp_path)
    r = run("segments", "--in", path, "--score", "kiva", "--score", "psnr:higher-better", "--group", "robot",
            "--clip", "clip", "--reference", "kiva", "--replicates", 100)
    assert r.exit_code == 0, r.output
    assert "rho minus kiva's" in r.output and "fetch" in r.output and "three-band" not in r.output
    r = run("segments", "--in", path, "--score", "kiva", "--replicates", 50, "--json")
    out = json.loads(r.output)
    assert out["clusters_from"] == "row" and out["clusters"] == {"all": 144} and out["overlap"] == {}


def test_segments_errors_name_the_line_and_column(tmp_path):
    path = _segment_csv(tmp_path, "fetch,c9,fetch9-x,Awful,1.0,20")
    r = run("segments", "--in", path, "--score", "kiva")
    assert r.exit_code == 2 and "line 146" in r.output and "'verdict'" in r.output and "Awful" in r.output
    path = _segment_csv(tmp_path, "fetch,c9,fetch9-x,Good,abc,20")
    r = run("segments", "--in", path, "--score", "kiva")
    assert r.exit_code == 2 and "line 146" in r.output and "not a number" in r.output
    r = run("segments", "--in", _segment_csv(tmp_path), "--score", "kiva", "--score", "nope")
    assert r.exit_code == 2 and "missing column(s) nope" in r.output
    r = run("segments", "--in", _segment_csv(tmp_path), "--score", "kiva", "--reference", "psnr")
    assert r.exit_code == 2 and "reference 'psnr' is not one of the scores" in r.output


def test_agreement_names_the_file_without_rows(tmp_path):
    # an annotation export before any cross-review writes raters.csv with its header only; the error
    # named human.csv
    (tmp_path / "human.csv").write_text("item_id,axis,score\na,pa,3\nb,pa,4\n")
    (tmp_path / "raters.csv").write_text("judge,item_id,axis,score\n")
    r = run("agreement", "--pred", tmp_path / "raters.csv", "--human", tmp_path / "human.csv")
    assert r.exit_code == 2 and f"{tmp_path / 'raters.csv'}: no rows of judge scores" in r.output, r.output


def test_segments_notes_say_why_a_rho_is_missing_and_what_a_macro_averages(tmp_path):
    # psnr takes one value on adroit: its cell and its difference from kiva were "-" with no note, and its
    # macro (fetch alone) was set against kiva's over both robots as +0.949.
    rows = ["robot,clip,verdict,kiva,psnr"]
    for i, (v, k, p) in enumerate(zip(("Good", "Bad", "Medium", "Good", "Bad"), (0.1, 0.9, 0.5, 0.2, 0.7),
                                      (30, 10, 20, 26, 12), strict=True)):
        rows += [f"fetch,c{i},{v},{k},{p}", f"adroit,d{i},{v},{1 - k},20"]
    path = tmp_path / "seg.csv"
    path.write_text("\n".join(rows) + "\n")
    args = ("segments", "--in", path, "--score", "kiva", "--score", "psnr:higher-better", "--group", "robot",
            "--clip", "clip", "--reference", "kiva", "--replicates", 200)
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert ("note: Spearman's rho: no rho (the score takes one value on every scored segment): psnr adroit"
            in r.output)
    assert "note: Spearman's rho: macro averages fewer than the 2 groups: psnr over fetch" in r.output
    assert "note: rho minus kiva's: macro averages fewer than the 2 groups: psnr over fetch" in r.output
    out = json.loads(run(*args, "--json").output)
    assert out["minus_reference"]["psnr"]["macro"]["rho"] == 0.0
    assert out["minus_reference"]["psnr"]["macro"]["groups"] == ["fetch"]
    assert out["rho"]["kiva"]["macro"]["groups"] == ["adroit", "fetch"]
    assert out["rho"]["psnr"]["adroit"]["why"] == "the score takes one value on every scored segment"


def test_agreement_differences_give_the_items_both_judges_scored(tmp_path):
    # a leaves i5-i7 blank where b is wrong: the table showed a - b as pearson 0.710, acc 0.375 and mse -3.0
    # without saying the two cells rest on different items; on the 5 both scored they are identical.
    human, pred = ["item_id,axis,score"], ["item_id,axis,score,judge"]
    for i, (h, p) in enumerate(zip((1, 4, 2, 5, 3, 1, 4, 2), (1, 4, 2, 5, 3, 5, 2, 4), strict=True)):
        human.append(f"i{i},pa,{h}")
        pred += [f"i{i},pa,{p if i < 5 else ''},a", f"i{i},pa,{p},b"]
    (tmp_path / "h.csv").write_text("\n".join(human) + "\n")
    (tmp_path / "p.csv").write_text("\n".join(pred) + "\n")
    r = run("agreement", "--pred", tmp_path / "p.csv", "--human", tmp_path / "h.csv", "--bootstrap", 300)
    assert r.exit_code == 0, r.output
    part = r.output[r.output.index("paired differences"):]
    zero = "0.000 [n/a]"  # 0 in every resample: the interval is withheld, and the notes say why
    assert f"│ a │ b │ pa      │ 5 (5/8) │ {zero} │ {zero} │ {zero} │" in part
    assert "note: differences are taken on the n items both judges scored; (a/b): each judge's own" in part
