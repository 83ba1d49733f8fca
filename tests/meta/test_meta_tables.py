"""robojudge.meta's CSV functions: what `robojudge meta agreement|compare` print, callable from Python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.meta import ScoreTableError, agreement_from_csv, agreement_table, fit_agreement, fit_from_csv


def _write(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(3)
    human, pred = ["item_id,axis,score,clip_id"], ["judge,item_id,axis,score"]
    for i in range(16):
        for axis in ("pa", "ia"):
            h = int(rng.integers(1, 6))
            human.append(f"v{i},{axis},{h},c{i // 2}")
            pred.append(f"j,v{i},{axis},{min(5, h + int(rng.integers(0, 2)))}")
    (tmp_path / "human.csv").write_text("\n".join(human) + "\n")
    (tmp_path / "pred.csv").write_text("\n".join(pred) + "\n")
    return tmp_path / "pred.csv", tmp_path / "human.csv"


def test_agreement_from_csv_is_the_cli_answer_and_the_array_answer(tmp_path: Path) -> None:
    pred, human = _write(tmp_path)
    report = agreement_from_csv(pred, human, bootstrap=40, seed=5)
    cli = CliRunner().invoke(app, ["agreement", "--pred", str(pred), "--human", str(human),
                                   "--bootstrap", "40", "--seed", "5", "--json"])
    assert cli.exit_code == 0, cli.output
    printed = json.loads(cli.output)
    assert {k: printed[k] for k in report.to_dict()} == json.loads(json.dumps(report.to_dict()))
    # The same arrays by hand give the same report.
    rows = [line.split(",") for line in human.read_text().split()[1:]]
    items = list(dict.fromkeys(r[0] for r in rows))
    h = {a: np.array([float(r[2]) for r in rows if r[1] == a]) for a in ("pa", "ia")}
    prows = [line.split(",") for line in pred.read_text().split()[1:]]
    p = {"j": {a: np.array([float(r[3]) for r in prows if r[2] == a]) for a in ("pa", "ia")}}
    clusters = np.array([f"c{int(i[1:]) // 2}" for i in items])
    by_hand = agreement_table(p, h, clusters, None, bootstrap=40, seed=5)
    assert by_hand.to_dict() == report.to_dict()


def test_errors_name_file_line_and_column(tmp_path: Path) -> None:
    pred, human = _write(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,axis,score\nv1,pa,3\nv2,pa,abc\n")
    with pytest.raises(ScoreTableError, match=r"bad\.csv line 3, column 'score': not a number: 'abc'"):
        agreement_from_csv(bad, human, bootstrap=0)
    with pytest.raises(ScoreTableError, match="missing column"):
        fit_from_csv(pred, "nope", "score")
    with pytest.raises(ScoreTableError, match="no such file"):
        agreement_from_csv(tmp_path / "absent.csv", human)
    with pytest.raises(ScoreTableError, match="is a folder, not a CSV file"):  # was an IsADirectoryError
        agreement_from_csv(tmp_path, human)


def test_fit_from_csv_counts_dropped_rows(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("s,t\n0,1\n1,3\n2,2\n3,4\n,5\n")
    got = fit_from_csv(tmp_path / "s.csv", "s", "t")
    want = fit_agreement(np.array([0.0, 1, 2, 3]), np.array([1.0, 3, 2, 4]))
    assert got.dropped == 1 and got.fit.n == 4
    assert got.fit.r2 == pytest.approx(want.r2) and got.fit.mae_fit == pytest.approx(want.mae_fit)
