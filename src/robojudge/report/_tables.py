"""One table model written four ways: CSV, Markdown, LaTeX (booktabs) and HTML.

A :class:`Table` holds typed cells: text, or a number with an optional interval, a "best in its
column" mark and a "small n" flag. Each writer formats the same cells, so the CSV keeps full
precision (value, low, high, best and the flag in their own columns) while the printed forms round
and mark a small-n cell with a dagger.
"""

from __future__ import annotations

import dataclasses
import html
import io
import math
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robojudge._files import Staged, replace_text, replacing
from robojudge.meta._bootstrap import APPROXIMATE_CLUSTERS
from robojudge.store import SafeCsvWriter

#: LaTeX special characters and their escaped forms (the order matters for the backslash).
_LATEX_ESCAPES = (
    ("\\", r"\textbackslash{}"),
    ("&", r"\&"),
    ("%", r"\%"),
    ("$", r"\$"),
    ("#", r"\#"),
    ("_", r"\_"),
    ("{", r"\{"),
    ("}", r"\}"),
    ("~", r"\textasciitilde{}"),
    ("^", r"\textasciicircum{}"),
    # Under the default OT1 font encoding these print as other glyphs (<b> as ¡b¿, a|b as a—b).
    ("<", r"\textless{}"),
    (">", r"\textgreater{}"),
    ("|", r"\textbar{}"),
)


# Markdown punctuation that changes what a cell shows; an intraword "_" (between letters or digits) does not.
_MD_SPECIAL = re.compile(r"[`*|~$]|\](?=\()|(?<![^\W_])_|_(?![^\W_])")
# (the same, backticks left as code; robojudge's own notes quote no `$` inside code, where \$ would show)
_MD_PROSE = re.compile(r"[*|~$]|\](?=\()|(?<![^\W_])_|_(?![^\W_])")

#: A cell resting on fewer items than this is flagged as small n.
SMALL_N_ITEMS = 10
#: ... or on fewer clips (bootstrap clusters) than this.
SMALL_N_CLUSTERS = 5
#: The mark of a small-n cell, and the sentence that explains it under a table that shows intervals
#: (:func:`small_note`).
SMALL_MARK = "\u2020"
_SMALL_N = f"{SMALL_MARK} small n: fewer than {SMALL_N_ITEMS} items or {SMALL_N_CLUSTERS} clips"
SMALL_NOTE = f"{_SMALL_N}, so the interval is rough."
#: The milder mark of a cell that is not small-n but rests on fewer than APPROXIMATE_CLUSTERS clips: its
#: interval is shown, and reads as approximate (:func:`is_approximate`).
APPROX_MARK = "\u2021"
APPROX_NOTE = (f"{APPROX_MARK} fewer than {APPROXIMATE_CLUSTERS} clips, so the interval is approximate: in "
               "simulation, nominal 95% percentile cluster-bootstrap intervals held the true value 88-91% "
               "of the time at 10-20 clips for the median statistic, MSE and within-one only 79-87%, and "
               "MSE 65-78% over 10 clips of one item each (docs/meta.md, \"How far to trust an interval\").")


def small_note(intervals: bool) -> str:
    """The key to the small-n mark under a table: :data:`SMALL_NOTE` where a marked cell shows an
    interval, else the same without a word of intervals (a table of correlations without any, or a
    leaderboard whose every interval was withheld)."""
    return SMALL_NOTE if intervals else f"{_SMALL_N}, so the value is rough."


def is_small(n: int, clusters: int | None = None) -> bool:
    """Whether a value resting on ``n`` items in ``clusters`` clips (None: not known) is small-n."""
    return n < SMALL_N_ITEMS or (clusters is not None and clusters < SMALL_N_CLUSTERS)


def is_approximate(n: int, clusters: int | None = None) -> bool:
    """Whether a value that is not small-n (:func:`is_small`) rests on fewer than
    :data:`~robojudge.meta.APPROXIMATE_CLUSTERS` clips (None: not known, so each item counts as its own
    clip, as the bootstrap then resamples items): its interval gets the milder mark."""
    k = n if clusters is None else clusters
    return n > 0 and not is_small(n, clusters) and k < APPROXIMATE_CLUSTERS


def latex_escape(text: str) -> str:
    """Escape the characters LaTeX treats specially (``\\ & % $ # _ { } ~ ^``) in running text, and
    ``< > |``, which the default font encoding prints as other glyphs. A line break or a tab becomes a
    space (as in Markdown); another control character is written as its code, ``\\x1b`` (pdflatex
    stops at the raw byte). The text is composed first (Unicode NFC): a name copied from macOS, its
    ``è`` written as ``e`` and a combining accent, stopped pdflatex at the accent, where the one
    character ``è`` prints. Characters outside Latin-1 (Greek, CJK) pass through: they need a UTF-8
    engine (xelatex, lualatex) or packages of your own.

    >>> print(latex_escape("50% of a_b\\x1b[0m\\nnext"))
    50\\% of a\\_b\\textbackslash{}x1b[0m next
    >>> latex_escape("Mode\\u0300le") == "Mod\\xe8le"  # NFD, as macOS names files
    True
    """
    out = []
    text = unicodedata.normalize("NFC", text)
    for ch in text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " "):
        for special, escaped in _LATEX_ESCAPES:
            if ch == special:
                out.append(escaped)
                break
        else:
            out.append(rf"\textbackslash{{}}x{ord(ch):02x}" if unicodedata.category(ch) == "Cc" else ch)
    return "".join(out)


def latex_prose(text: str) -> str:
    r""":func:`latex_escape` for robojudge's own notes, which quote commands as Markdown code
    (`` `robojudge aggregate scores --missing drop` ``): a code span becomes ``\texttt``, where
    ``--`` stays two hyphens (in running text it is an en dash) and a backquote is no opening quote. A
    lone backquote is escaped with the rest.

    >>> print(latex_prose("run `robojudge report --bootstrap 10` on a_b"))
    run \texttt{robojudge report -{}-bootstrap 10} on a\_b
    """
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backquotes: no code span to trust
        return latex_escape(text).replace("`", r"\textasciigrave{}")
    return "".join(rf"\texttt{{{latex_escape(p).replace('--', '-{}-')}}}" if k % 2 else latex_escape(p)
                   for k, p in enumerate(parts))


def _right_to_left(text: str) -> bool:
    """Whether ``text`` holds a right-to-left letter (Arabic, Hebrew, ...): its HTML cell then isolates
    it in a ``<bdi>``, so that its punctuation lands at its own end, not the page's."""
    return any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text)


def _html_text(text: str) -> str:
    """``text`` escaped for HTML, in a ``<bdi>`` where it holds a right-to-left letter
    (:func:`_right_to_left`): laid out in its own direction, not the page's."""
    escaped = html.escape(text)
    return f"<bdi>{escaped}</bdi>" if _right_to_left(text) else escaped


def _latex_row(cells: Sequence[str]) -> str:
    """One ``tabular`` row of escaped cells, ending in ``\\\\``; ``{}`` first when the row starts with
    ``[`` or ``*``, which the command before it (``\\\\``, ``\\midrule``) would take as its own."""
    row = " & ".join(cells)
    return ("{}" if row.lstrip().startswith(("[", "*")) else "") + row + r" \\"


@dataclass(frozen=True)
class Cell:
    """One cell: ``text``, or a number ``value`` with an optional interval ``[low, high]``.

    Attributes:
        value: The number (NaN prints as ``n/a``); ignored when ``text`` is set.
        low: Lower interval end (NaN: no interval).
        high: Upper interval end.
        best: Best value of its column (bold in Markdown, LaTeX and HTML).
        text: Literal text instead of a number.
        digits: Decimals printed.
        small: Rests on few items or clips (:func:`is_small`): printed with a dagger.
        approximate: Rests on fewer than 30 clips but is not small (:func:`is_approximate`): an interval
            it shows is printed with a double dagger.
    """

    value: float = math.nan
    low: float = math.nan
    high: float = math.nan
    best: bool = False
    text: str | None = None
    digits: int = 3
    small: bool = False
    approximate: bool = False

    @property
    def is_number(self) -> bool:
        return self.text is None

    def marked(self) -> str:
        """:meth:`formatted` with the small-n dagger, or the double dagger of an approximate interval,
        where it applies."""
        if self.small and self.is_number:
            return f"{self.formatted()} {SMALL_MARK}"
        return self.formatted() + (f" {APPROX_MARK}" if self.shows_approximate else "")

    @property
    def shows_approximate(self) -> bool:
        """Whether this cell prints the double dagger: approximate, not small, and showing an interval."""
        return (self.approximate and not self.small and self.is_number
                and not (math.isnan(self.value) or math.isnan(self.low) or math.isnan(self.high)))

    def formatted(self) -> str:
        """The printed form: ``text``, ``n/a``, ``v`` or ``v [lo, hi]``."""
        if self.text is not None:
            return self.text
        if math.isnan(self.value):
            return "n/a"
        v = f"{self.value:.{self.digits}f}"
        if math.isnan(self.low) or math.isnan(self.high):
            return v
        return f"{v} [{self.low:.{self.digits}f}, {self.high:.{self.digits}f}]"


def text(value: object) -> Cell:
    """A text cell."""
    return Cell(text=str(value))


NAME_COLUMNS = frozenset({"generator", "judge", "metric", "method", "item", "configuration"})
"""Column names that say what a table row is about: its row headers in HTML (:meth:`Table.row_headers`)."""


@dataclass
class Table:
    """A titled table of cells; ``name`` is the file stem of its CSV, Markdown and LaTeX forms.

    Attributes:
        name: File stem (``tables/<name>.csv`` and so on).
        title: Caption.
        columns: Column headers.
        rows: Rows of cells, each as long as ``columns``.
        note: A sentence printed under the caption (how the numbers were made).
        labels: The headers of the columns naming what each row is about (its row headers), each the
            first column of that header; ``None``: the columns whose header is in :data:`NAME_COLUMNS`.
            A table whose other headers come from the data (a column per generator) declares them, so
            that a generator named ``judge`` is not taken for a row header.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    labels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        missing = [c for c in self.labels or () if c not in self.columns]
        if missing:
            raise ValueError(f"table {self.name!r}: label column(s) {missing} not among its columns")

    def add(self, cells: Sequence[Cell]) -> None:
        """Append a row; it must have one cell per column."""
        if len(cells) != len(self.columns):
            raise ValueError(f"table {self.name!r}: row has {len(cells)} cells for "
                             f"{len(self.columns)} columns")
        self.rows.append(list(cells))

    def mark_best(self, column: int, *, higher: bool, among: Collection[int] | None = None) -> None:
        """Mark the best finite number of ``column`` (largest if ``higher``, else smallest; ties all),
        among the rows of index ``among`` only when given."""
        rows = [r for i, r in enumerate(self.rows) if among is None or i in among]
        vals = [r[column].value for r in rows if r[column].is_number and not math.isnan(r[column].value)]
        if not vals:
            return
        top = max(vals) if higher else min(vals)
        for r in rows:
            c = r[column]
            if c.is_number and not math.isnan(c.value) and math.isclose(c.value, top, abs_tol=1e-12):
                r[column] = dataclasses.replace(c, best=True)

    # --- writers ------------------------------------------------------------------------------------

    @property
    def has_small(self) -> bool:
        """Whether some number cell is flagged small-n."""
        return any(c.small and c.is_number for r in self.rows for c in r)

    def small_key(self) -> str:
        """The small-n key this table needs ("" for none): it speaks of intervals only where a marked
        cell shows one."""
        small = [c for r in self.rows for c in r if c.small and c.is_number]
        if not small:
            return ""
        return small_note(any(not (math.isnan(c.low) or math.isnan(c.high) or math.isnan(c.value))
                              for c in small))

    def notes(self) -> list[str]:
        """The sentences printed under the caption: the table's note and the small-n and approximate keys
        where needed."""
        approx = APPROX_NOTE if any(c.shows_approximate for r in self.rows for c in r) else ""
        return [n for n in (self.note, self.small_key(), approx) if n]

    def to_csv(self) -> str:
        """CSV at full precision: numeric column ``c`` becomes ``c``, ``c_low``, ``c_high``, ``c_best``
        and ``c_small_n``. Headers never repeat: a column of the table keeps its name (a generator named
        ``a_low`` beside a generator ``a``), a derived header that would take it gets ``#2`` (``a_low#2``),
        and a column named as an earlier one gets ``#2``, ``#3``... in order (readers that key columns by
        name kept one of two alike, ``csv.DictReader``, or renamed it their own way, pandas)."""
        numeric = [any(r[k].is_number for r in self.rows) for k in range(len(self.columns))]
        own = _unique(self.columns)  # the table's own columns keep their names; derived ones give way
        taken = set(own)
        header: list[str] = []
        for name, num in zip(own, numeric, strict=True):
            header.append(name)
            if num:
                header += [_free(f"{name}_{part}", taken) for part in ("low", "high", "best", "small_n")]
        buf = io.StringIO()
        # Names come from users' manifests and stores: neutralise formula-like text for spreadsheets.
        w = SafeCsvWriter(buf, lineterminator="\n")
        w.writerow(header)
        for r in self.rows:
            out: list[object] = []
            for c, num in zip(r, numeric, strict=True):
                if not num:
                    out.append(c.formatted())
                elif c.text is not None:
                    out += [c.text, "", "", "", ""]
                else:
                    out += [_num(c.value), _num(c.low), _num(c.high), c.best, c.small]
            w.writerow(out)
        return buf.getvalue()

    def to_markdown(self) -> str:
        """A GitHub Markdown table under a level-2 heading; best cells bold."""
        lines = [f"## {md_prose(self.title)}", ""]
        for note in self.notes():
            lines += [md_prose(note), ""]
        lines.append("| " + " | ".join(_md(c) for c in self.columns) + " |")
        lines.append("| " + " | ".join("---" for _ in self.columns) + " |")
        for r in self.rows:
            # A number's own text (digits, "[lo, hi]", "n/a") is no Markdown: written as it is.
            cells = [c.marked() if c.is_number else _md(c.marked()) for c in r]
            cells = [f"**{t}**" if c.best else t for c, t in zip(r, cells, strict=True)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``tabular`` in a ``table`` float: best per column in bold, CIs as ``[lo, hi]``; the
        table's note under it in small type, then the keys to the daggers.

        A row whose first cell starts with ``[`` or ``*`` starts with ``{}``: the ``\\\\`` ending the row
        before (or ``\\toprule``, ``\\midrule``) would read ``[ours] wan`` as its optional length
        (pdflatex stopped: "Missing number") and ``*baseline`` as its star (the star was lost).
        """
        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_escape(self.title)}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 _latex_row([latex_escape(c) for c in self.columns]), r"\midrule"]
        for r in self.rows:
            cells = [latex_escape(c.formatted()) for c in r]
            cells = [rf"\textbf{{{t}}}" if c.best else t for c, t in zip(r, cells, strict=True)]
            cells = [t + r"\textsuperscript{\dag}" if c.small and c.is_number
                     else t + r"\textsuperscript{\ddag}" if c.shows_approximate else t
                     for c, t in zip(r, cells, strict=True)]
            lines.append(_latex_row(cells))
        lines += [r"\bottomrule", r"\end{tabular}"]
        if self.note.strip():  # (why an interval or a value is missing, what a row is: dropped before)
            lines.append(r"\par\footnotesize " + latex_prose(self.note.strip()))
        if self.has_small:
            lines.append(r"\par\footnotesize\textsuperscript{\dag}" + latex_escape(self.small_key()[1:]))
        if any(c.shows_approximate for r in self.rows for c in r):
            lines.append(r"\par\footnotesize\textsuperscript{\ddag}" + latex_escape(APPROX_NOTE[1:]))
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def row_headers(self) -> set[int]:
        """The columns whose cells head their rows: those naming what the row is about (the declared
        :attr:`labels`, as the summary declares its ``metric`` alone, its generators being columns of
        values; else those of :data:`NAME_COLUMNS`: a leaderboard's ``generator``, not its ``rank``), else
        the first."""
        if self.labels is not None:
            named = {self.columns.index(c) for c in self.labels}
        else:
            named = {k for k, c in enumerate(self.columns) if c in NAME_COLUMNS}
        return named or {0}

    def to_html(self) -> str:
        """An HTML ``<table>`` with a caption; best cells in ``<strong>``. The cells of
        :meth:`row_headers` are row headers (``<th scope="row">``), so a screen reader names the row (the
        metric, judge or generator) with each value. The table sets no ``tabindex``: a browser that makes
        scroll boxes focusable (Chromium, Firefox) stops on the tables that scroll, and only on them. A
        text cell or column header holding right-to-left letters (an Arabic generator name, a column of
        the summary table) is a ``<bdi>``, laid out in its own direction. The caption is robojudge's
        own sentence (a judge name in it is ASCII) and stays as it is. The column header over the first
        row header is of class ``key``: the page keeps that column (a leaderboard's generator, not its
        rank) in view when the table scrolls sideways."""
        headers = self.row_headers()
        key = min(headers)
        head = "".join(('<th scope="col" class="key">' if k == key else '<th scope="col">')
                       + f"{_html_text(c)}</th>" for k, c in enumerate(self.columns))
        body = []
        for r in self.rows:
            tds = []
            for k, c in enumerate(r):
                t = html.escape(c.formatted()) if c.is_number else _html_text(c.formatted())
                if c.best:
                    t = f"<strong>{t}</strong>"
                if c.small and c.is_number:
                    t += f'<sup title="small n">{SMALL_MARK}</sup>'
                elif c.shows_approximate:
                    t += f'<sup title="approximate interval">{APPROX_MARK}</sup>'
                cls = ' class="num"' if c.is_number else ""
                tds.append(f'<th scope="row"{cls}>{t}</th>' if k in headers else f"<td{cls}>{t}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
        return (f'<table id="table-{html.escape(self.name)}"><caption>{html.escape(self.title)}'
                f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def write(self, folder: str | Path) -> list[Path]:
        """Write ``<name>.csv``, ``<name>.md`` and ``<name>.tex`` into ``folder``: the three new files, or
        (on an error) the old ones untouched (:func:`robojudge._files.replacing`)."""
        with replacing(folder, named=True) as files:  # (the user's --out: their links are followed)
            return self.stage(files, folder)

    def stage(self, files: Staged, folder: str | Path) -> list[Path]:
        """:meth:`write` as part of a larger set of files renamed into place together."""
        out = Path(folder)
        forms = (("csv", self.to_csv()), ("md", self.to_markdown()), ("tex", self.to_latex()))
        return [files.write_text(out / f"{self.name}.{ext}", body) for ext, body in forms]


def _num(v: float) -> str:
    return "" if math.isnan(v) else repr(float(v))


def md_escape(s: str) -> str:
    r"""Text safe inside a Markdown table cell, so that a name stays one plain cell: backslashes doubled,
    HTML escaped (renderers pass raw HTML through), ``` ` * _ | ~ $``` escaped (code, emphasis, columns,
    strikethrough, math where the renderer reads ``$...$`` as TeX, as GitHub's does), a ``]`` before
    ``(`` escaped (an inline link or image; brackets alone are text, as in a label ``flow [fps=2]``, and
    no report defines link references) and line breaks flattened. An ``_`` between two letters or
    digits is left as it is: it cannot start or end emphasis.

    >>> print(md_escape("a\\|b *x* ![i](u) <b> cosmos_predict2 _v_ [fps=2] $h$"))
    a\\\|b \*x\* ![i\](u) &lt;b&gt; cosmos_predict2 \_v\_ [fps=2] \$h\$
    """
    return _md_escaped(s, _MD_SPECIAL)


def _md_escaped(s: str, special: re.Pattern[str]) -> str:
    s = html.escape(s.replace("\\", "\\\\"), quote=False)
    return special.sub(r"\\\g<0>", s).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


_md = md_escape


def md_prose(s: str) -> str:
    """:func:`md_escape` for robojudge's own notes and titles, which quote commands as code
    (`` `robojudge results export` ``): backticks are left as they are. A name inside one may then start
    a code span, but no link, image or column break gets through.

    >>> print(md_prose("see `robojudge results export` for ![i](u)"))
    see `robojudge results export` for ![i\\](u)
    """
    return _md_escaped(s, _MD_PROSE)


def write_between_markers(path: Path, text: str, begin: str, end: str) -> None:
    """Put ``text`` between the ``begin`` and ``end`` marker lines of the file at ``path``, keeping the rest
    of it; write ``text`` as the whole file when the file or either marker is missing.

    The validation scripts regenerate their measured tables inside hand-written docs this way."""
    if path.exists():
        current = path.read_text(encoding="utf-8")
        if begin in current and end in current:
            head, _, rest = current.partition(begin)
            _, _, tail = rest.partition(end)
            replace_text(path, f"{head}{begin}\n{text}{end}{tail}")  # a cut write would lose the rest
            return
    replace_text(path, text)


def _unique(names: Sequence[str]) -> list[str]:
    """``names`` with each repeat of an earlier name suffixed ``#2``, ``#3``... (:func:`_free`)."""
    taken: set[str] = set()
    return [_free(name, taken) for name in names]


def _free(name: str, taken: set[str]) -> str:
    """``name``, or ``name#2``, ``name#3``... the first not in ``taken``; added to it."""
    new, k = name, 1
    while new in taken:
        k += 1
        new = f"{name}#{k}"
    taken.add(new)
    return new
