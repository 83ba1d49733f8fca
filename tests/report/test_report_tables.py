import csv
import io
import math
import shutil
import subprocess
import unicodedata

import pytest

from robojudge.report import Cell, Table, latex_escape
from robojudge.report._tables import text


def _table() -> Table:
    t = Table("t_1", "Judges & 50% of {them}", ["judge", "r", "MSE"])
    t.add([text("a_b"), Cell(0.5, 0.4, 0.6), Cell(1.25)])
    t.add([text("c#d"), Cell(0.7, 0.6, 0.8), Cell(0.75, 0.5, 1.0)])
    t.add([text("e"), Cell(math.nan), Cell(0.75)])
    t.mark_best(1, higher=True)
    t.mark_best(2, higher=False)
    return t


def test_latex_escape_every_special_character():
    assert latex_escape(r"a_b & 50% $x$ #1 {y} ~ ^ \z") == (
        r"a\_b \& 50\% \$x\$ \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}z")
    assert latex_escape("plain text 1.0 [0.1, 0.2]") == "plain text 1.0 [0.1, 0.2]"
    # printed as other glyphs under the default font encoding: <b> as ¡b¿, pipe|name as pipe—name
    assert latex_escape("<b>|x") == r"\textless{}b\textgreater{}\textbar{}x"


def test_mark_best_higher_lower_and_ties():
    t = _table()
    assert [r[1].best for r in t.rows] == [False, True, False]  # 0.7 is the largest r; NaN never wins
    assert [r[2].best for r in t.rows] == [False, True, True]  # 0.75 twice: both marked


def test_latex_is_booktabs_with_bold_best_and_bracketed_ci():
    tex = _table().to_latex()
    lines = tex.splitlines()
    assert r"\begin{tabular}{lrr}" in lines and r"\toprule" in lines and r"\bottomrule" in lines
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"\caption{Judges \& 50\% of \{them\}}" in tex
    assert r"a\_b & 0.500 [0.400, 0.600] & 1.250 \\" in lines
    assert r"c\#d & \textbf{0.700 [0.600, 0.800]} & \textbf{0.750 [0.500, 1.000]} \\" in lines
    assert r"e & n/a & \textbf{0.750} \\" in lines


def test_csv_keeps_full_precision_and_interval_columns():
    t = Table("x", "x", ["name", "v"])
    t.add([text("a"), Cell(1 / 3, 0.25, 0.5)])
    t.add([text("b"), Cell(math.nan)])
    rows = list(csv.DictReader(io.StringIO(t.to_csv())))
    assert list(rows[0]) == ["name", "v", "v_low", "v_high", "v_best", "v_small_n"]
    assert float(rows[0]["v"]) == pytest.approx(1 / 3, abs=1e-15) and rows[0]["v_high"] == "0.5"
    assert rows[1]["v"] == "" and rows[1]["v_low"] == ""


def test_markdown_and_html_bold_best_and_escape():
    t = _table()
    md = t.to_markdown()
    assert "| c#d | **0.700 [0.600, 0.800]** | **0.750 [0.500, 1.000]** |" in md
    h = t.to_html()
    assert "<caption>Judges &amp; 50% of {them}</caption>" in h
    assert '<td class="num"><strong>0.700 [0.600, 0.800]</strong></td>' in h


def test_row_length_is_checked_and_write_makes_three_files(tmp_path):
    t = _table()
    with pytest.raises(ValueError, match="t_1.*2 cells for 3 columns"):
        t.add([text("x"), Cell(1.0)])
    paths = t.write(tmp_path)
    assert sorted(p.name for p in paths) == ["t_1.csv", "t_1.md", "t_1.tex"]


def test_csv_headers_never_repeat() -> None:
    # A generator named "a_low" beside a generator "a" (or one named "n") repeated a header: pandas read
    # df["a_low"] as a's lower bound, csv.DictReader dropped one of the two.
    import csv
    import io

    from robojudge.report._tables import Cell, Table, text

    t = Table("summary", "t", ["metric", "n", "a", "a_low", "n"])
    t.add([text("m"), text(3), Cell(1.0, 0.5, 1.5), Cell(2.0, 1.5, 2.5), Cell(4.0)])
    (row,) = list(csv.DictReader(io.StringIO(t.to_csv())))
    header = next(csv.reader(io.StringIO(t.to_csv())))
    assert len(header) == len(set(header))
    # The table's own columns keep their names (generator a_low's mean under a_low); a's derived lower
    # bound gives way (a_low#2); a second column named n is n#2.
    assert header[:3] == ["metric", "n", "a"] and "n#2" in header and "a_low#2" in header
    assert row["a_low"] == "2.0" and row["a_low#2"] == "0.5" and row["n#2"] == "4.0" and row["n"] == "3"


def test_csv_quotes_line_breaks_in_names_and_reads_back() -> None:
    # Written with "\n" line ends, a name holding "\r" went out bare: every reader split its row there.
    import pandas as pd

    names = ["over\rwrite", "a\nb", "plain"]
    t = Table("t", "T", ["generator", "over\rwrite"])
    for k, name in enumerate(names):
        t.add([text(name), Cell(float(k))])
    body = t.to_csv()
    rows = list(csv.reader(io.StringIO(body, newline="")))
    assert [r[0] for r in rows] == ["generator", *names] and rows[0][1] == "over\rwrite"
    df = pd.read_csv(io.StringIO(body, newline=""), dtype=str, keep_default_na=False)
    assert list(df["generator"]) == names and list(df["over\rwrite"]) == ["0.0", "1.0", "2.0"]
    assert body.endswith("\nplain,2.0,,,False,False\n")  # rows without a line break are written as before


def test_latex_writes_control_characters_as_text() -> None:
    # The ESC byte went into the .tex file, and pdflatex stopped at it.
    assert latex_escape("\x1b[31mred\tx") == r"\textbackslash{}x1b[31mred x"
    # a line break or a tab (a multi-line error message) is a space, as in Markdown, not its code
    assert latex_escape("line one\r\nline\ttwo\n") == "line one line two "


LEADING = ["[ours] wan", "*baseline", " [v2] x"]  # the first cell of a row, as a generator's name


def _leading_table() -> Table:
    t = Table("gens", "Generators", ["generator", "PA"])
    t.add([text("first"), Cell(1.0)])
    for k, name in enumerate(LEADING):
        t.add([text(name), Cell(2.0 + k)])
    return t


def test_latex_rows_starting_with_a_bracket_or_a_star_are_their_own() -> None:
    # After the \\ of the row before, "[ours] wan" was read as \\'s optional length (pdflatex: "Missing
    # number, treated as zero") and "*baseline" as its star, so the row printed "baseline".
    lines = _leading_table().to_latex().splitlines()
    assert r"{}[ours] wan & 2.000 \\" in lines
    assert r"{}*baseline & 3.000 \\" in lines
    assert r"{} [v2] x & 4.000 \\" in lines
    assert r"first & 1.000 \\" in lines  # other rows as before
    # the header row follows \toprule, which takes an optional width too
    header = Table("h", "H", ["[a]", "b"]).to_latex().splitlines()
    assert header[header.index(r"\toprule") + 1] == r"{}[a] & b \\"


def test_latex_composes_decomposed_names() -> None:
    # A generator folder copied from macOS is named with e + U+0300; pdflatex stopped at the accent
    # ("Unicode character U+0300 not set up for use with LaTeX"), while the composed è prints.
    assert latex_escape("Mode\u0300le_1") == "Mod\u00e8le\\_1"
    t = Table("n", "Mode\u0300les", ["generator", "v"])
    t.add([text("Mode\u0300le"), Cell(1.0)])
    tex = t.to_latex()
    assert "\u0300" not in tex and "Mod\u00e8le & 1.000 \\\\" in tex.splitlines()


@pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("kpsewhich") is None,
                    reason="pdflatex (TeX Live) is not installed")
def test_latex_tables_compile_with_pdflatex(tmp_path) -> None:
    if subprocess.run(["kpsewhich", "booktabs.sty"], capture_output=True).returncode != 0:
        pytest.skip("booktabs is not installed")
    t = _noted_table()
    t.add([text("Mode\u0300le"), Cell(9.0)])
    (tmp_path / "t.tex").write_text(t.to_latex(), encoding="utf-8")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
                                      "\\input{t.tex}\n\\end{document}\n", encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                           "doc.tex"], cwd=tmp_path, capture_output=True, text=True, errors="replace",
                          timeout=120)
    assert done.returncode == 0, [line for line in done.stdout.splitlines() if line.startswith("!")]
    if shutil.which("pdftotext"):
        shown = subprocess.run(["pdftotext", "doc.pdf", "-"], cwd=tmp_path, capture_output=True,
                               text=True).stdout
        shown = unicodedata.normalize("NFC", shown)  # pdftotext gives the accented e of OT1 decomposed
        assert "*baseline" in shown and "[ours] wan" in shown and "Mod\u00e8le" in shown
        flat = " ".join(shown.split())  # (the note is wrapped over lines)
        assert "No interval for a&b <x> (4 clips; 50% need 5)" in flat and "--missing drop --diff A,B" in flat


NOTE = ("No interval for a&b <x> (4 clips; 50% need 5). Compare with `robojudge aggregate scores "
        "--missing drop --diff A,B` on #e|f ~^{}.")


def _noted_table() -> Table:
    t = _leading_table()
    t.note = NOTE
    t.add([text("small"), Cell(1.0, small=True)])
    return t


def test_latex_tables_carry_their_note() -> None:
    # The .md had the note (why no interval, why n/a, what a row is); the .tex had only the dagger key.
    lines = _noted_table().to_latex().splitlines()
    note = (r"\par\footnotesize No interval for a\&b \textless{}x\textgreater{} (4 clips; 50\% need 5). "
            r"Compare with \texttt{robojudge aggregate scores -{}-missing drop -{}-diff A,B} on "
            r"\#e\textbar{}f \textasciitilde{}\textasciicircum{}\{\}.")
    assert note in lines
    # under the tabular, before the dagger's key
    assert lines.index(r"\end{tabular}") < lines.index(note) < next(
        k for k, line in enumerate(lines) if line.startswith(r"\par\footnotesize\textsuperscript{\dag}"))
    plain = _leading_table().to_latex().splitlines()
    assert not any(line.startswith(r"\par\footnotesize ") for line in plain)


def test_markdown_names_render_as_their_text() -> None:
    # Only | < > & were escaped: a\|b lost its backslash, *x* became emphasis, ![..](..) a remote image.
    from markdown_it import MarkdownIt

    names = ["a\\|b", "*bold* `code`", "[click](javascript:alert(1))", "![img](http://127.0.0.1:9/p.png)",
             "~~gone~~", "<script>x</script> &amp;", "_v_ __w__", "cosmos_predict2"]
    t = Table("t", "T", ["generator", "PA"])
    for name in names:
        t.add([text(name), Cell(1.0)])
    md = t.to_markdown()
    assert "| cosmos_predict2 |" in md  # an intraword underscore is left readable
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(md)
    cells = [tok for tok in tokens if tok.type == "inline"][1:]  # the heading first
    shown = []
    for cell in cells:
        assert cell.children is not None and {c.type for c in cell.children} == {"text"}, cell.children
        shown.append("".join(c.content for c in cell.children))
    assert shown == ["generator", "PA", *(x for name in names for x in (name, "1.000"))]


def test_notes_keep_their_code_spans() -> None:
    # A review: escaping every backtick turned robojudge's own `command` quotes in notes into literal
    # backticks; a name's link or image in a note is still kept from rendering.
    t = Table("t", "T `x`", ["generator", "PA"], note="`robojudge results export` has ![i](http://h/p.png)")
    t.add([text("g"), Cell(1.0)])
    md = t.to_markdown()
    assert md.startswith("## T `x`\n\n`robojudge results export` has ![i\\](http://h/p.png)\n")


def test_html_rows_are_named_by_their_first_cell():
    # Every body cell was a <td>: a screen reader moving along a row read "0.83" without its metric.
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[list[tuple[str, str | None]]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "tr":
                self.rows.append([])
            elif tag in ("th", "td"):
                self.rows[-1].append((tag, dict(attrs).get("scope")))

    cells = Cells()
    cells.feed(_table().to_html())
    head, *body = cells.rows
    assert head == [("th", "col")] * 3
    assert body and all(r[0] == ("th", "row") and all(c == ("td", None) for c in r[1:]) for r in body)


def test_html_row_headers_are_the_name_columns_and_tables_set_no_tabindex() -> None:
    # The leaderboard's row headers were its ranks (a screen reader read "1" for the generator), and every
    # table was a tab stop, those that fit the window included.
    board = Table("leaderboard", "Generators", ["rank", "generator", "Overall"])
    board.add([text(1), text("wan"), Cell(3.5, 3.0, 4.0)])
    page = board.to_html()
    assert '<td>1</td><th scope="row">wan</th>' in page and "tabindex" not in page
    # The column kept in view when the table scrolls is the first row header's (the page's CSS: th.key).
    assert '<th scope="col">rank</th><th scope="col" class="key">generator</th>' in page
    summary = Table("summary", "Means", ["metric", "generator", "n"])
    summary.add([text("ssim"), text("wan"), text(3)])
    assert '<th scope="row">ssim</th><th scope="row">wan</th><td' in summary.to_html()
    plain = Table("threshold_sensitivity", "Thresholds", ["threshold", "selected"])
    plain.add([text("0.5"), text(4)])
    assert plain.to_html().count('<th scope="row"') == 1  # no name column: the first cell heads the row


def test_html_isolates_right_to_left_names() -> None:
    # An Arabic generator name ending in a full stop or "(v2)" was laid out in the page's left-to-right
    # direction: its punctuation landed at the start of the name for a reader of it.
    t = Table("g", "Generators", ["generator", "PA"])
    t.add([text("\u0646\u0645\u0648\u0630\u062c (v2)"), Cell(1.0)])
    t.add([text("\u05de\u05d5\u05d3\u05dc."), Cell(2.0)])
    t.add([text("wan"), Cell(3.0)])
    page = t.to_html()
    assert '<th scope="row"><bdi>\u0646\u0645\u0648\u0630\u062c (v2)</bdi></th>' in page
    assert '<th scope="row"><bdi>\u05de\u05d5\u05d3\u05dc.</bdi></th>' in page
    assert '<th scope="row">wan</th><td class="num">3.000</td>' in page  # left-to-right text as before


def test_html_isolates_right_to_left_column_headers() -> None:
    # Before: only body cells were isolated; the summary table, whose columns are the generators, drew an
    # Arabic name's full stop at its start in the column header.
    arabic = "\u0646\u0645\u0648\u0630\u062c (v2)."
    t = Table("summary", "Means", ["metric", arabic, "wan"])
    t.add([text("ssim"), Cell(1.0), Cell(2.0)])
    page = t.to_html()
    assert f'<th scope="col"><bdi>{arabic}</bdi></th><th scope="col">wan</th>' in page
    assert '<th scope="col" class="key">metric</th>' in page  # left-to-right headers as before
