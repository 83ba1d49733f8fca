"""``robojudge meta agreement`` tables on terminals of 80 to 240 columns: every row says which judge it
is, and no value is cut short.

Eleven columns with intervals (``0.872 [0.834, 0.917]``) need about 200 columns. Rich used to shrink the
narrowest columns to nothing on a 100- or 150-column terminal (judge, n, unscored, kendall), so the rows
could not be told apart; the tables now fold the statistics that do not fit into a second table.
"""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

from _meta_csvs import write_agreement_csvs
from robojudge.cli import _meta
from robojudge.meta import OVERALL, agreement_from_csv

JUDGES = ("gpt-4o-mini", "qwen2-vl-7b-sft")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    pred, human = write_agreement_csvs(tmp_path_factory.mktemp("meta"), JUDGES)
    return agreement_from_csv(pred, human, bootstrap=200, seed=1)


def _printed(report, width: int, monkeypatch: pytest.MonkeyPatch) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    monkeypatch.setattr(_meta, "console", Console(file=out, width=width, soft_wrap=True, markup=False))
    _meta._print_report(report)
    return out.getvalue()


@pytest.mark.parametrize("width", [100, 150, 240])
def test_every_row_names_its_judge_and_every_value_is_whole(report, width: int,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    text = _printed(report, width, monkeypatch)
    lines = text.splitlines()
    # (the notes under the tables are prose, printed unwrapped with soft_wrap; the tables must fit)
    assert max(cell_len(x) for x in lines if not x.startswith("note:")) <= width
    assert "…" not in text
    headers = {cell.strip() for x in lines if x.startswith("┃") for cell in x.strip("┃").split("┃")}
    assert {"judge", "n", "unscored", "pearson", "spearman", "kendall", "acc", "within 1", "mse", "mae",
            "bias", "a", "b", "target"} <= headers
    rows = [x for x in lines if x.startswith("│")]
    assert rows and all(x.split("│")[1].strip() in JUDGES for x in rows)  # the first cell names a judge
    for target in (*report.axes, OVERALL):
        for judge in JUDGES:
            cell = report.cells[judge][target]
            mine = [x for x in rows if x.split("│")[1].strip() == judge]
            cells = {c.strip() for x in mine for c in x.split("│")}
            assert str(cell.n) in cells and str(cell.n_unscored) in cells
            for stat in cell.stats.values():
                assert _meta._fmt(stat) in cells, (judge, target, _meta._fmt(stat))


def test_a_wide_console_keeps_one_table_per_target(report, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    text = _printed(report, 240, monkeypatch)
    assert "(continued)" not in text
    assert sum(x.startswith("┏") for x in text.splitlines()) == len(report.axes) + 2  # and the differences
