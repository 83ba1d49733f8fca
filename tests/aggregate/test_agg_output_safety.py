"""``aggregate scores`` writes its CSV as every CSV of robojudge: formula-like text gets a leading ``'``.

``results export`` writes a generator named ``=HYPERLINK("http://x")`` as ``'=HYPERLINK(...)``;
``aggregate scores`` reads that back unescaped (docs/aggregate.md), and wrote it as a live formula,
both to ``--out`` and to stdout. Numbers stay as they were: with ``--normalized --missing drop`` the
one stored IQ-1 metric is its sub-dimension's mean, so subdim_IQ-1 (out of 6) is 6 x the value and
level_1 (the sum of the level's 5 sub-dimension means) 5 x the value.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli._aggregate import app
from robojudge.store import SafeCsvWriter

runner = CliRunner()
FORMULA = '=HYPERLINK("http://x")'


def _export(tmp_path: Path) -> Path:
    path = tmp_path / "export.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = SafeCsvWriter(f)  # as `results export` writes it
        w.writerow(["item_id", "metric", "value", "generator"])
        w.writerows([["a1", "iq1_ssim", 0.5, FORMULA], ["a2", "iq1_ssim", 0.7, "-"],
                     ["a3", "iq1_ssim", 0.25, "+plain"]])
    return path


def _check(text: str) -> None:
    rows = {r["generator"]: r for r in csv.DictReader(text.splitlines())}
    assert set(rows) == {"'" + FORMULA, "-", "'+plain"}  # the lone '-' of --by is no formula
    assert {SafeCsvWriter.unescape(g) for g in rows} == {FORMULA, "-", "+plain"}
    for group, value in (("'" + FORMULA, 0.5), ("-", 0.7), ("'+plain", 0.25)):
        assert float(rows[group]["subdim_IQ-1"]) == pytest.approx(6 * value)
        assert float(rows[group]["level_1"]) == pytest.approx(5 * value)
        assert rows[group]["afs"] == ""  # NaN: the other levels have no metric


def test_the_scores_csv_escapes_formulas_on_stdout_and_in_the_file(tmp_path: Path) -> None:
    args = ["scores", "--in", str(_export(tmp_path)), "--by", "generator", "--normalized", "--missing",
            "drop"]
    printed = runner.invoke(app, args)
    assert printed.exit_code == 0, printed.output
    _check("\n".join(ln for ln in printed.stdout.splitlines() if not ln.startswith("note:")))
    out = tmp_path / "scores.csv"
    written = runner.invoke(app, [*args, "--out", str(out)])
    assert written.exit_code == 0, written.output
    text = out.read_text(encoding="utf-8")
    assert '"=HYPERLINK' not in text and not any(ln.startswith("=") for ln in text.splitlines())
    _check(text)


def test_a_group_with_a_carriage_return_stays_one_row(tmp_path: Path) -> None:
    # The CSV was written with "\n" line ends and a bare "\r" in the name: readers split its row in two.
    import pandas as pd

    src = tmp_path / "export.csv"
    with src.open("w", newline="", encoding="utf-8") as f:
        SafeCsvWriter(f).writerows([["item_id", "metric", "value", "generator"],
                                    ["a1", "iq1_ssim", 0.5, "over\rwrite"], ["a2", "iq1_ssim", 0.7, "plain"]])
    out = tmp_path / "scores.csv"
    done = runner.invoke(app, ["scores", "--in", str(src), "--by", "generator", "--normalized", "--missing",
                               "drop", "--out", str(out)])
    assert done.exit_code == 0, done.output
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["generator"]: float(r["subdim_IQ-1"]) for r in rows} == pytest.approx(
        {"over\rwrite": 3.0, "plain": 4.2})
    df = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert sorted(df["generator"]) == ["over\rwrite", "plain"]
