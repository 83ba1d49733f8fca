import json

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._meta import app

runner = CliRunner()


@pytest.fixture
def csvs(tmp_path):
    rng = np.random.default_rng(0)
    human, pred = ["item_id,axis,score,clip_id,source"], ["judge,item_id,axis,score"]
    for i in range(40):
        for axis in ("pa", "ia"):
            h = int(rng.integers(1, 6))
            human.append(f"v{i},{axis},{h},clip{i // 2},src{(i // 2) % 3}")
            pred.append(f"good,v{i},{axis},{min(5, max(1, h + int(rng.integers(-1, 2))))}")
            pred.append(f"bad,v{i},{axis},{'' if i == 0 else int(rng.integers(1, 6))}")
    (tmp_path / "human.csv").write_text("\n".join(human) + "\n")
    (tmp_path / "pred.csv").write_text("\n".join(pred) + "\n")
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
