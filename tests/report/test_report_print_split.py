"""A table too wide for a printed page is printed in parts (its columns in order, each part with the row
headers); the browser-level check is in test_report_chromium.py."""

import pytest

from robojudge.report._print_split import PRINT_WIDTH, _width, print_parts, table_html
from robojudge.report._tables import Cell, Table, text


def _overview(n: int) -> Table:
    gens = [f"gen_{g:02d}" for g in range(n)]
    table = Table("summary", "Means", ["metric", "n", *gens, *(f"failed {g}" for g in gens)])
    for m in ("ssim", "flow"):
        table.add([text(m), text(9), *(Cell(2.37, 2.08, 2.67, digits=2) for _ in gens),
                   *(text(0) for _ in gens)])
    return table


def test_a_table_that_fits_is_one_table() -> None:
    table = _overview(2)
    assert print_parts(table) == [] and table_html(table) == table.to_html()


def test_a_wide_table_prints_every_column_once_in_parts_that_fit() -> None:
    table = _overview(30)
    parts = print_parts(table)
    assert len(parts) > 1
    assert all(p.columns[0] == "metric" and [r[0].text for r in p.rows] == ["ssim", "flow"] for p in parts)
    assert [c for p in parts for c in p.columns[1:]] == table.columns[1:]  # each once, in order
    assert all(sum(_width(p, k) for k in range(len(p.columns))) <= PRINT_WIDTH for p in parts)
    page = table_html(table)
    assert page.count("<table") == len(parts) + 1 and 'class="screen-only"' in page
    assert 'id="table-summary"' in page and 'id="table-summary-print-2"' in page


def test_a_generator_named_like_a_label_column_is_no_row_header() -> None:
    # The overview's columns are the generators' own names: one named "judge" (or "item", "method") was
    # taken for a row header, printed first in every part and out of its place (review rev30 F3).
    from robojudge.report._sections import ReportInput, overview_section
    from robojudge.store import ResultRow
    from robojudge.suite import Item

    gens = sorted([f"gen_{g:02d}" for g in range(29)] + ["judge"])
    items = [Item(item_id=f"{g}-{c}", video="v.mp4", clip_id=f"c{c}", generator=g)
             for g in gens for c in range(2)]
    rows = [ResultRow(it.item_id, "iq1_ssim", "h", "1", "ok", 0.5) for it in items]
    table = overview_section(ReportInput(rows, items, lambda m: True, bootstrap=0)).tables[0]
    assert table.columns.count("judge") == 1 and table.row_headers() == {0}
    assert '<th scope="row">judge' not in table.to_html()
    parts = print_parts(table)
    assert len(parts) > 1
    assert [c for p in parts for c in p.columns[1:]] == table.columns[1:]  # "judge" once, in its place
    assert all(p.row_headers() == {0} for p in parts)


def test_declared_label_columns_are_the_row_headers() -> None:
    table = Table("t", "t", ["rank", "generator", "judge", "n"], labels=("generator",))
    table.add([text(1), text("wan"), text(0.5), text(3)])
    assert table.row_headers() == {1}
    assert Table("t", "t", ["rank", "generator", "judge"]).row_headers() == {1, 2}  # undeclared: by name
    with pytest.raises(ValueError, match="label column.*'generator'.* not among its columns"):
        Table("t", "t", ["rank", "n"], labels=("generator",))
