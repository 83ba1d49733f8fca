"""robojudge.meta's CSV functions: what `robojudge meta agreement|compare` print, callable from Python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.meta import (
    OVERALL,
    ScoreTableError,
    agreement_from_csv,
    agreement_table,
    fit_agreement,
    fit_from_csv,
)


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


# ---- items awaiting an adjudication: the 'disputed' column of `robojudge annotate export -f scores`

_DISPUTED_HUMAN = """item_id,axis,score,clip_id,source,disputed
a,pa,4,ca,s,
a,ia,5,ca,s,
b,pa,2,cb,s,pa
b,ia,3,cb,s,pa
c,pa,1,cc,s,
c,ia,2,cc,s,
d,pa,5,cd,s,pa;ia
d,ia,1,cd,s,pa;ia
"""
_DISPUTED_PRED = """judge,item_id,axis,score
j,a,pa,4
j,a,ia,4
j,b,pa,5
j,b,ia,3
j,c,pa,1
j,c,ia,4
j,d,pa,2
j,d,ia,1
"""


def _disputed_csvs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "human.csv").write_text(_DISPUTED_HUMAN)
    (tmp_path / "pred.csv").write_text(_DISPUTED_PRED)
    return tmp_path / "pred.csv", tmp_path / "human.csv"


def _exact_within_mae_bias(report, axis):
    cell = report.cells["j"][axis]
    return cell.n, tuple(cell.stats[k].value for k in ("exact", "within_one", "mae", "bias"))


def test_disputed_items_are_left_out_by_default_and_kept_or_alone_on_request(tmp_path: Path) -> None:
    # The human table kept every item awaiting an adjudication (b, d: a primary label its cross-review
    # disputes), and meta agreement compared judges with those primary labels with no way to leave them
    # out. (judge - human) per item: PA a 4-4=0, b 5-2=+3, c 1-1=0, d 2-5=-3; IA a 4-5=-1, b 3-3=0,
    # c 4-2=+2, d 1-1=0.
    pred, human = _disputed_csvs(tmp_path)
    said: list[str] = []
    dropped = agreement_from_csv(pred, human, bootstrap=0, warn=said.append)
    # a, c only. PA: 0, 0 -> exact 2/2, MAE 0, bias 0. IA: -1, +2 -> exact 0/2, within one 1/2,
    # MAE (1 + 2) / 2 = 1.5, bias (-1 + 2) / 2 = 0.5.
    assert _exact_within_mae_bias(dropped, "pa") == (2, (1.0, 1.0, 0.0, 0.0))
    assert _exact_within_mae_bias(dropped, "ia") == (2, (0.0, 0.5, 1.5, 0.5))
    assert said == [f"{human}: 2 item(s) await an adjudication (a 'disputed' cell set): their human score is "
                    "a primary label a cross-review disputes, not a final label, so they are left out, with "
                    "4 row(s) of human.csv and 4 of pred.csv; --disputed keep compares with them too"]
    said.clear()
    kept = agreement_from_csv(pred, human, bootstrap=0, disputed="keep", warn=said.append)
    # All four. PA: 0, +3, 0, -3 -> exact 2/4, within one 2/4, MAE 6/4 = 1.5, bias 0. IA: -1, 0, +2, 0 ->
    # exact 2/4, within one 3/4, MAE 3/4, bias 1/4.
    assert _exact_within_mae_bias(kept, "pa") == (4, (0.5, 0.5, 1.5, 0.0))
    assert _exact_within_mae_bias(kept, "ia") == (4, (0.5, 0.75, 0.75, 0.25))
    assert len(said) == 1 and "2 item(s) await an adjudication" in said[0] and "(4 row(s) of human.csv, " \
        "4 of pred.csv)" in said[0]
    said.clear()
    alone = agreement_from_csv(pred, human, bootstrap=0, disputed="only", warn=said.append)
    # b, d only. PA: +3, -3 -> exact 0, MAE 3, bias 0. IA: 0, 0 -> exact 1, MAE 0.
    assert _exact_within_mae_bias(alone, "pa") == (2, (0.0, 0.0, 3.0, 0.0))
    assert _exact_within_mae_bias(alone, "ia") == (2, (1.0, 1.0, 0.0, 0.0))
    assert said == [f"{human}: 2 item(s) with a final label (no 'disputed' cell) left out, as --disputed "
                    "only asks, with 4 row(s) of human.csv and 4 of pred.csv"]
    # Overall accuracy is the mean of the axes': (1 + 0) / 2 dropped, (1/2 + 1/2) / 2 kept.
    assert dropped.cells["j"][OVERALL].stats["exact"].value == 0.5
    assert kept.cells["j"][OVERALL].n == 8
    # The command: the same numbers, the count on stderr, the choice in the JSON.
    runner = CliRunner()
    for mode, report in (("drop", dropped), ("keep", kept), ("only", alone)):
        args = ["agreement", "--pred", str(pred), "--human", str(human), "--bootstrap", "0", "--json"]
        res = runner.invoke(app, args + (["--disputed", mode] if mode != "drop" else []))
        assert res.exit_code == 0, res.output
        printed = json.loads(res.stdout)
        assert printed["disputed"] == mode
        assert {k: printed[k] for k in report.to_dict()} == json.loads(json.dumps(report.to_dict()))
        assert "4 row(s) of human.csv" in " ".join(res.stderr.split())
    res = runner.invoke(app, ["agreement", "--pred", str(pred), "--human", str(human), "--disputed", "yes"])
    assert res.exit_code == 2 and "--disputed 'yes': use drop, keep, only" in res.output
    # Without the column every row is final: nothing is left out and nothing is said.
    (tmp_path / "plain.csv").write_text("\n".join(",".join(r.split(",")[:5]) for r in
                                                  _DISPUTED_HUMAN.splitlines()) + "\n")
    said.clear()
    plain = agreement_from_csv(pred, tmp_path / "plain.csv", bootstrap=0, warn=said.append)
    assert plain.to_dict() == kept.to_dict() and said == []


def test_a_disputed_column_that_cannot_be_used_is_an_error_naming_the_line(tmp_path: Path) -> None:
    pred, human = _disputed_csvs(tmp_path)

    def fails(text: str, match: str, disputed: str = "drop", judge: str = _DISPUTED_PRED) -> None:
        (tmp_path / "h.csv").write_text(text)
        (tmp_path / "p.csv").write_text(judge)
        with pytest.raises(ScoreTableError, match=match):
            agreement_from_csv(tmp_path / "p.csv", tmp_path / "h.csv", bootstrap=0, disputed=disputed)

    # A hand-written "no" is not read as a mark that would leave the item out.
    fails(_DISPUTED_HUMAN.replace("a,pa,4,ca,s,\na,ia,5,ca,s,", "a,pa,4,ca,s,no\na,ia,5,ca,s,no"),
          r"h\.csv line 2, item 'a', column 'disputed': 'no' is not a list of the file's axes \(ia, pa\)")
    fails(_DISPUTED_HUMAN.replace("pa;ia\n", "pa;\n"), r"line 8, item 'd', column 'disputed': 'pa;'")
    fails(_DISPUTED_HUMAN.replace("b,ia,3,cb,s,pa", "b,ia,3,cb,s,"),
          r"h\.csv, item 'b', column 'disputed': line 4 gives 'pa' and line 5 gives ''")
    fails(_DISPUTED_HUMAN.replace(",\n", ",pa\n"), "all 4 item.s. await an adjudication .* --disputed keep")
    fails(_DISPUTED_HUMAN.replace(",pa\n", ",\n").replace(",pa;ia\n", ",\n"),
          r"h\.csv: marks no item as disputed, so --disputed only leaves nothing", "only")
    fails("\n".join(",".join(r.split(",")[:5]) for r in _DISPUTED_HUMAN.splitlines()) + "\n",
          r"h\.csv: has no 'disputed' column, so --disputed only", "only")
    fails(_DISPUTED_HUMAN, r"p\.csv: every judge row is on one of the 2 item.s. .* --disputed drop leaves",
          judge="judge,item_id,axis,score\nj,b,pa,3\n")
    fails(_DISPUTED_HUMAN, r"p\.csv: no judge row is on one of the 2 item.s.", "only",
          judge="judge,item_id,axis,score\nj,a,pa,3\n")
    with pytest.raises(ValueError, match="disputed must be one of drop, keep, only, got 'yes'"):
        agreement_from_csv(pred, human, bootstrap=0, disputed="yes")
    # An item/axis without a human score is still an error when its item is left out.
    with pytest.raises(ScoreTableError, match="1 row.s. have no human score"):
        (tmp_path / "p.csv").write_text(_DISPUTED_PRED + "j,zz,pa,3\n")
        agreement_from_csv(tmp_path / "p.csv", human, bootstrap=0)
