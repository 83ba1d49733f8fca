"""Open the HTML report in headless Chromium (the Debian package) and check that every plot renders.

``bash scripts/system-deps.sh test`` installs Chromium; Playwright drives it. The page is served from
127.0.0.1, and any request elsewhere fails the test, as do console errors and failed requests.
"""

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest
from _report_data import higher_is_better, write_run

from robojudge.report import render_page, write_html_report

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.slow


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        pass


@pytest.fixture
def served_report(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (bash scripts/system-deps.sh test)")
    url, manifest = write_run(tmp_path / "run")
    report = write_html_report(url, tmp_path / "out", manifest=manifest, higher_is_better=higher_is_better,
                               bootstrap=100)
    handler = functools.partial(_Quiet, directory=str(report.index.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield report, f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def test_report_renders_in_headless_chromium(served_report, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    report, address = served_report
    expected = sum(len(s.plots) for s in report.sections)
    errors: list[str] = []
    failed: list[str] = []
    requested: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("request", lambda r: requested.append(r.url))
            response = page.goto(address, wait_until="load")
            assert response is not None and response.ok
            boxes = page.eval_on_selector_all(
                "svg.plot", "els => els.map(e => { const r = e.getBoundingClientRect();"
                " return [e.dataset.plot, r.width, r.height]; })")
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert errors == [] and failed == []
    assert requested == [address]  # the page alone: no image, font, script or style fetched
    assert len(boxes) == expected >= 8
    assert all(w > 50 and h > 50 for _, w, h in boxes), boxes
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


def test_a_wide_table_keeps_its_first_column_in_view(served_report):
    # At 40 generators the overview table was 21,161 px wide: scrolled sideways, no row said which metric
    # it was. Its first column now stays (position: sticky).
    sync_api = pytest.importorskip("playwright.sync_api")
    _, address = served_report
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 420, "height": 900})
            page.goto(address, wait_until="load")
            found = page.evaluate(
                "() => { const t = [...document.querySelectorAll('table')].find("
                "x => x.scrollWidth > x.clientWidth + 100 && x.querySelector('tbody tr > :first-child'));"
                " if (!t) return null; t.scrollLeft = t.scrollWidth;"
                " const cell = t.querySelector('tbody tr > :first-child').getBoundingClientRect();"
                " return [cell.left - t.getBoundingClientRect().left, t.scrollLeft]; }")
        finally:
            browser.close()
    assert found is not None, "no table wider than the page"
    offset, scrolled = found
    assert scrolled > 100 and abs(offset) < 2


# Per table that scrolls sideways, scrolled to its end: for each row in the window, the cell drawn at the
# table's left edge (its index, tag, whether it is of that row, its background), and the column headers.
_LEFT_EDGE = """() => [...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.clientWidth + 40)
  .map(t => { t.scrollIntoView(); t.scrollLeft = t.scrollWidth; const x = t.getBoundingClientRect().left + 3;
    const rows = [...t.rows].filter(r => { const b = r.getBoundingClientRect();
      return b.top >= 0 && b.bottom <= innerHeight; });
    return [t.id, rows.map(r => { const b = r.getBoundingClientRect();
      const e = document.elementFromPoint(x, (b.top + b.bottom) / 2); const c = e && e.closest('th, td');
      return c ? [c.cellIndex, c.tagName, c.parentElement === r, getComputedStyle(c).backgroundColor]
               : null; }),
      [...t.tHead.rows[0].cells].map(c => c.textContent)]; })"""


def test_the_column_kept_in_view_is_the_row_header_drawn_over_the_cells_that_scroll(served_report):
    # The sticky cell was each row's first, a see-through <td> in the leaderboard: its rank, drawn over
    # the generator names that scrolled under it ("not rankebroken"), and no row said which generator
    # it was (audit reporthtml F1). The first row header stays now, opaque, and its column header too.
    sync_api = pytest.importorskip("playwright.sync_api")
    _, address = served_report
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 420, "height": 900})
            page.goto(address, wait_until="load")
            found = page.evaluate(_LEFT_EDGE)
        finally:
            browser.close()
    tables = {t: (cells, head) for t, cells, head in found}
    assert "table-leaderboard" in tables, list(tables)
    for t, (cells, _) in tables.items():
        assert len(cells) >= 2 and all(c is not None for c in cells), (t, cells)
        column = {c[0] for c in cells}
        assert len(column) == 1, (t, cells)  # one column, the header row's cell included
        assert all(tag == "TH" and own and colour not in ("rgba(0, 0, 0, 0)", "transparent")
                   for _, tag, own, colour in cells), (t, cells)
    cells, head = tables["table-leaderboard"]
    assert head[cells[0][0]] == "generator", head


# A4 at 96 px per inch less Chromium's default print margins: the width a printed page lays out in.
_A4_PRINT_WIDTH = 718


def _wide_page(tmp_path: Path) -> Path:
    """A page with a 40-column table and a heatmap too wide for the screen (``svg.plot.wide``)."""
    import numpy as np

    from robojudge.report import _plots
    from robojudge.report._sections import Section
    from robojudge.report._tables import Cell, Table, text

    names = [f"metric_with_a_long_name_{k:02d}" for k in range(30)]
    heat = _plots.correlation_heatmap(names, np.eye(len(names)), title="wide")
    table = Table("wide", "Forty generators", ["metric", *(f"generator_number_{g:02d}" for g in range(40))])
    for m in names[:5]:
        table.add([text(m), *(Cell(0.5, 0.25, 0.75) for _ in range(40))])
    page = render_page([Section("wide", "Wide", tables=[table], plots=[heat])], title="wide",
                       source="store x")
    path = tmp_path / "wide.html"
    path.write_text(page, encoding="utf-8")
    return path


# Per table: the header cells that lie outside the table's visible box or the page; per figure: whether
# its drawing is wider than its box or the page.
_CUT = """width => ({
  tables: [...document.querySelectorAll('table')].map(t => { const box = t.getBoundingClientRect();
    return [t.id, [...t.querySelectorAll('thead th')].filter(th => { const r = th.getBoundingClientRect();
      return r.right > Math.min(box.right, width) + 1 || r.left < box.left - 1; }).map(th => th.textContent),
      t.scrollWidth - t.clientWidth]; }),
  figures: [...document.querySelectorAll('figure')].map(f => { const svg = f.querySelector('svg');
    const s = svg.getBoundingClientRect();
    return [svg.dataset.plot, s.right > Math.min(f.getBoundingClientRect().right, width) + 1]; }),
  page: document.documentElement.scrollWidth })"""


def test_a_printed_report_keeps_every_column_and_figure(served_report, tmp_path):
    # Printed (or saved as PDF), tables and figures were scroll boxes cut at the page's edge: the judges
    # table lost its Overall columns, a wide heatmap half its width, and nothing said so.
    sync_api = pytest.importorskip("playwright.sync_api")
    _, address = served_report
    wide = _wide_page(tmp_path).as_uri()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": _A4_PRINT_WIDTH, "height": 1000})
            page.emulate_media(media="print")
            found = {}
            for where in (address, wide):
                page.goto(where, wait_until="load")
                found[where] = page.evaluate(_CUT, _A4_PRINT_WIDTH)
            pdf = page.pdf(format="A4")
        finally:
            browser.close()
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    for where, seen in found.items():
        assert len(seen["tables"]) >= 1 and len(seen["figures"]) >= 1, where
        assert all(cut == [] and hidden <= 1 for _, cut, hidden in seen["tables"]), (where, seen["tables"])
        assert not any(over for _, over in seen["figures"]), (where, seen["figures"])
        assert seen["page"] <= _A4_PRINT_WIDTH, where
    assert any(t == "table-judges" for t, _, _ in found[address]["tables"])


def _overview_page(tmp_path: Path, gens: list[str]) -> tuple[Path, list[str]]:
    """A page with the overview table of ``gens``: a mean per generator, then two counts per generator (95
    columns for 30), and its column names."""
    from robojudge.report._sections import Section
    from robojudge.report._tables import Cell, Table, text

    columns = ["metric", "range", "n", "failed", "unscored", *gens,
               *(f"{part} {g}" for g in gens for part in ("n", "failed"))]
    table = Table("summary", "Mean of every stored configuration per generator", columns)
    for m in range(8):
        table.add([text(f"flow_warp_error_{m}"), text("[0, inf)"), text(180), text(0), text(0),
                   *(Cell(2.37, 2.08, 2.67, digits=2) for _ in gens), *(text(6) for _ in gens for _ in "nf")])
    page = render_page([Section("overview", "Overview", tables=[table])], title="wide", source="store x")
    path = tmp_path / f"overview-{len(gens)}.html"
    path.write_text(page, encoding="utf-8")
    return path, columns


# The printed tables (those laid out): their column headers, and per number cell the lines it takes.
_PRINTED = """() => {
  const shown = [...document.querySelectorAll('table')].filter(t => t.offsetParent !== null);
  return { headers: shown.flatMap(t => [...t.tHead.rows[0].cells].map(c => c.textContent)),
    lines: shown.flatMap(t => [...t.querySelectorAll('td.num')].map(c => { const r = document.createRange();
      r.selectNodeContents(c); return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; })),
    tables: shown.length }; }"""


@pytest.mark.parametrize("gens", [[f"gen_{g:02d}" for g in range(30)],
                                  ["a_very_long_generator_name_" * 6 + str(g) for g in range(3)]],
                         ids=["30 generators", "3 long names"])
def test_a_printed_overview_of_30_generators_fits_the_page_with_readable_cells(tmp_path, gens):
    # Printed, the 95 columns laid out 1,093 px wide on a 718 px page: 33 column headers past the paper's
    # edge and every cell broken one character a line (audit reporthtml F4). The table prints in parts
    # (whose captions name no column: a 163-character name there widened a part to 952 px).
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (bash scripts/system-deps.sh test)")
    sync_api = pytest.importorskip("playwright.sync_api")
    path, columns = _overview_page(tmp_path, gens)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": _A4_PRINT_WIDTH, "height": 1000})
            page.emulate_media(media="print")
            page.goto(path.as_uri(), wait_until="load")
            seen = page.evaluate(_CUT, _A4_PRINT_WIDTH)
            printed = page.evaluate(_PRINTED)
            page.emulate_media(media="screen")
            screen = page.evaluate(_PRINTED)
        finally:
            browser.close()
    assert seen["page"] <= _A4_PRINT_WIDTH
    assert all(cut == [] and hidden <= 1 for _, cut, hidden in seen["tables"]), seen["tables"]
    assert set(printed["headers"]) == set(columns)  # every column printed, in some part
    assert printed["tables"] > 1 and printed["lines"] and max(printed["lines"]) == 1  # "2.37 [2.08, 2.67]"
    assert screen["tables"] == 1 and screen["headers"] == columns  # on the screen, the one table


def test_a_narrow_window_never_scrolls_the_page_sideways(served_report):
    # At 320 px (1280 px at 400% zoom) the store's path and the tables' file names could not wrap: the
    # whole page scrolled sideways (495 px).
    sync_api = pytest.importorskip("playwright.sync_api")
    report, address = served_report
    assert len(str(report.index)) > 40  # (the page names the store's path, one long word)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 320, "height": 900})
            page.goto(address, wait_until="load")
            width = page.evaluate("document.documentElement.scrollWidth")
            wide = page.evaluate("[...document.querySelectorAll('header p, p')]"
                                 ".filter(p => p.scrollWidth > p.clientWidth + 1).map(p => p.textContent)")
        finally:
            browser.close()
    assert wide == [] and width <= 320, (width, wide)


def test_only_a_table_that_scrolls_is_a_tab_stop(tmp_path):
    # Every table carried tabindex="0": Tab stopped on each, those that fit the window included. Chromium
    # makes a box that scrolls focusable by itself, so a table sets none.
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (bash scripts/system-deps.sh test)")
    sync_api = pytest.importorskip("playwright.sync_api")
    from robojudge.report._sections import Section
    from robojudge.report._tables import Cell, Table, text

    narrow = Table("narrow", "Two columns", ["generator", "n"])
    narrow.add([text("wan"), text(3)])
    wide = Table("wide", "Forty generators", ["metric", *(f"generator_number_{g:02d}" for g in range(40))])
    wide.add([text("ssim"), *(Cell(0.5, 0.25, 0.75) for _ in range(40))])
    path = tmp_path / "tabs.html"
    path.write_text(render_page([Section("s", "Tables", tables=[narrow, wide])], title="tabs", source="x"))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 900})
            page.goto(path.as_uri())
            stops = []
            for _ in range(3):
                page.keyboard.press("Tab")
                stops.append(page.evaluate("document.activeElement.id"))
        finally:
            browser.close()
    assert "table-wide" in stops and "table-narrow" not in stops, stops
