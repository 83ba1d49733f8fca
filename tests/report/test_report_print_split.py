"""A table too wide for a printed page is printed in parts (its columns in order, each part with the row
headers); the browser-level check is in test_report_chromium.py."""

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
