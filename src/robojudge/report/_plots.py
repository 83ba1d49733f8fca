"""The report's figures, drawn with matplotlib (Agg, imported lazily) and returned as inline SVG text.

Every function takes plain numbers and returns one ``<svg>`` element, so the HTML page needs no
network, no script and no image files. Figures are built on :class:`matplotlib.figure.Figure`
directly (not pyplot), so nothing global is touched. Element ids are prefixed with the figure's
name, so two figures inlined in one page never share an id.

Every label is drawn as plain text: names come from users' manifests and stores, and matplotlib
would otherwise read ``$...$`` in a generator or judge name as mathtext (and fail on a bad one).
The SVG writer escapes ``<`` and ``&``, so a name like ``<script>`` stays text in the page. A name
longer than :data:`MAX_LABEL` characters loses its middle to an ellipsis (the tables keep it whole;
its start and its end, where configuration labels differ, stay), and
matplotlib's warnings about glyphs its font lacks are not printed: the SVG keeps text as text, drawn
by the browser in a font that has them.
"""

from __future__ import annotations

import functools
import html
import io
import math
import re
import textwrap
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec

import numpy as np

from robojudge import DEFAULT_SEED

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from robojudge.meta._agreement import FloatArray

_P = ParamSpec("_P")
_SCALE = (1, 5)
#: Names longer than this are cut in the figures (a 255-character generator name ran off the figure
#: and collapsed its axes).
MAX_LABEL = 60


def _plain_text(draw: Callable[_P, str]) -> Callable[_P, str]:
    """Build and save the figure with mathtext off, so every string is drawn as it is, and without
    matplotlib's warning about glyphs its own font lacks (the SVG keeps the text; the browser draws it).
    The warning reads "missing from font(s) DejaVu Sans." since matplotlib 3.9 and "missing from current
    font." in 3.8."""
    @functools.wraps(draw)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> str:
        import matplotlib

        with matplotlib.rc_context({"text.parse_math": False}), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from (current )?font",
                                    category=UserWarning)
            return draw(*args, **kwargs)

    return wrapper


def _short(name: str) -> str:
    """``name``, or when longer than :data:`MAX_LABEL` characters its start and end around an ellipsis,
    :data:`MAX_LABEL` characters in all (``flow [fps=2]`` and ``flow [fps=4]`` stay apart)."""
    return _clipped(name, MAX_LABEL)


def _clipped(name: str, n: int) -> str:
    """``name`` cut to ``n`` characters around an ellipsis, its start and end kept (checkpoints and sweeps
    differ at the end: ``...-step-1000``, ``...-step-2000``)."""
    if len(name) <= n:
        return name
    head = n // 2
    return name[:head] + "\u2026" + name[len(name) - (n - head - 1):]
_TARGET_TITLE = {"pa": "PA", "ia": "IA", "overall": "Overall"}


def _figure(width: float, height: float, **subplots: Any) -> tuple[Figure, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(**subplots)


def _svg(fig: Figure, name: str, label: str, note: str = "") -> str:
    """The figure as an ``<svg>`` element (no XML prolog); text stays text, drawn in any sans-serif.

    ``label`` is its accessible name (what the figure shows, in words; ``name`` is only an id), and
    ``note``, when given, is printed under the figure (what it leaves out) and added to that name.
    """
    import matplotlib

    if note:
        fig.supxlabel(textwrap.fill(note, int(fig.get_figwidth() * 15)), fontsize=7, color="#444")
        label = f"{label}. {note}"
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": f"robojudge-{name}", "svg.fonttype": "none"}):
        # (dpi only sets the resolution of the parts drawn as images; the rest stays vector)
        fig.savefig(buf, format="svg", metadata={"Date": None}, dpi=RASTER_DPI)
    text = buf.getvalue()
    # Matplotlib's RDF metadata (Dublin Core and Creative Commons namespaces) is not valid HTML.
    svg = _scope_ids(_METADATA.sub("", text[text.index("<svg"):]), name)
    return svg.replace("<svg ", f'<svg class="plot" data-plot="{name}" role="img" '
                       f'aria-label="{html.escape(label, quote=True)}" ', 1)


_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def _scope_ids(svg: str, name: str) -> str:
    """Prefix every element id (and the references to it) with ``name``, and number the repeats of one id.

    Matplotlib numbers its groups the same way in every figure (``figure_1``, ``axes_1``...), so
    several figures inlined in one page would repeat ids and their ``#id`` references could cross.
    Within a figure it names an image after its content: two panels of the same matrix gave two
    ``<image>`` elements one id. The second and later get ``-2``, ``-3``...; references keep the first.
    """
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    pattern = re.compile(r'(\bid="|href="#|url\(#)(' + "|".join(map(re.escape, ids)) + r')(?=[")])')
    seen: dict[str, int] = {}

    def scoped(m: re.Match[str]) -> str:
        kind, old = m.group(1), m.group(2)
        if not kind.startswith("id"):
            return f"{kind}{name}-{old}"
        seen[old] = seen.get(old, 0) + 1
        return f"{kind}{name}-{old}" + (f"-{seen[old]}" if seen[old] > 1 else "")

    return pattern.sub(scoped, svg)


def _luminance(rgb: Sequence[float]) -> float:
    """WCAG relative luminance of an sRGB colour given as three numbers in [0, 1]."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: Sequence[float], b: Sequence[float]) -> float:
    """WCAG contrast ratio of two sRGB colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _ink(background: Sequence[float]) -> str:
    """Black or white, whichever stands out more on ``background``: at least 4.58:1 on any colour (a
    fixed cut on the scale put white counts on mid blue, 2.5:1)."""
    white = contrast((1.0, 1.0, 1.0), background) > contrast((0.0, 0.0, 0.0), background)
    return "white" if white else "black"


def _err(v: float, lo: float, hi: float) -> list[list[float]] | None:
    """Error-bar lengths below and above ``v``; a percentile interval need not contain its point
    estimate (small or degenerate samples), so a side that would be negative is drawn as zero."""
    if math.isnan(lo) or math.isnan(hi):
        return None
    return [[max(v - lo, 0.0)], [max(hi - v, 0.0)]]


def _title(target: str) -> str:
    return _TARGET_TITLE.get(target, target)


#: A scatter panel with more points than this draws them as one image, at :data:`RASTER_DPI`.
RASTER_POINTS = 500
RASTER_DPI = 200


@_plain_text
def judge_scatter(scores: Mapping[str, Mapping[str, FloatArray]], human: Mapping[str, FloatArray],
                  *, seed: int = DEFAULT_SEED, note: str = "") -> str:
    """Judge score against human score, one panel per (judge, axis); human scores jittered by +-0.15.
    ``note`` is printed under the panels (which judges have none)."""
    judges = list(scores)
    axes = list(human)
    fig, grid = _figure(3.0 * len(axes), 2.7 * len(judges), nrows=len(judges), ncols=len(axes),
                        squeeze=False)
    rng = np.random.default_rng(seed)
    for i, j in enumerate(judges):
        for k, a in enumerate(axes):
            ax = grid[i][k]
            x, y = np.asarray(human[a], float), np.asarray(scores[j][a], float)
            ok = np.isfinite(x) & np.isfinite(y)
            # Past RASTER_POINTS the points are one image (axes and text stay vector): as vector marks,
            # 30,000 items x 4 judges made a 38.6 MB figure that took a browser 15 s to load.
            ax.scatter(x[ok] + rng.uniform(-0.15, 0.15, ok.sum()), y[ok], s=12, alpha=0.6, color="#3465a4",
                       rasterized=bool(ok.sum() > RASTER_POINTS))
            ax.plot(_SCALE, _SCALE, color="#888", lw=0.8, ls="--")
            ax.set(xlim=(0.5, 5.5), ylim=(0.5, 5.5), xlabel=f"human {_title(a)}", ylabel=_short(j),
                   title=f"{_short(j)}: {_title(a)} (n={int(ok.sum())})")
            ax.title.set_fontsize(9)
    return _svg(fig, "judge-scatter", "Judge scores against human scores, one panel per judge and axis",
                note)


@_plain_text
def confusion_grid(confusions: Mapping[str, Mapping[str, Sequence[Sequence[int]]]], *, note: str = "") -> str:
    """Confusion matrices (rows human, columns rounded judge score), one panel per (judge, axis); a panel
    with no scored item says so. ``note`` is printed under the panels."""
    judges = list(confusions)
    axes = list(next(iter(confusions.values())))
    fig, grid = _figure(2.9 * len(axes), 2.7 * len(judges), nrows=len(judges), ncols=len(axes),
                        squeeze=False)
    for i, j in enumerate(judges):
        for k, a in enumerate(axes):
            ax = grid[i][k]
            m = np.asarray(confusions[j][a], dtype=float)
            im = ax.imshow(m, cmap="Blues", origin="upper")
            labels = [str(v) for v in range(_SCALE[0], _SCALE[0] + m.shape[0])]
            ax.set_xticks(range(m.shape[1]), labels)
            ax.set_yticks(range(m.shape[0]), labels)
            top = m.max() if m.size else 0
            for (r, c), v in np.ndenumerate(m):
                if v:
                    ax.text(c, r, str(int(v)), ha="center", va="center", fontsize=7,
                            color=_ink(im.cmap(im.norm(v))))
            if not top:  # (an axis the judge did not score was a blank matrix, read as a zero count)
                ax.text(0.5, 0.5, "n/a: no scored item", transform=ax.transAxes, ha="center", va="center",
                        fontsize=8, color="#444")
            ax.set(xlabel=f"{_short(j)} (rounded)", ylabel="human", title=f"{_short(j)}: {_title(a)}")
            ax.title.set_fontsize(9)
    return _svg(fig, "confusion", "Confusion matrices of rounded judge scores against human scores, one per "
                "judge and axis", note)


@_plain_text
def landscape(points: Mapping[str, tuple[float, float, float, float, float, float]], target: str,
              *, note: str = "") -> str:
    """Pearson r against MSE per judge with both CIs (RoboJudge Fig. 9); the top left is best.

    Args:
        points: judge -> ``(mse, mse_low, mse_high, r, r_low, r_high)``; a judge without either is not
            drawn (say which in ``note``).
        target: Axis or ``overall``, for the labels.
        note: Printed under the figure.
    """
    fig, ax = _figure(5.2, 4.0)
    for k, (j, (m, mlo, mhi, r, rlo, rhi)) in enumerate(points.items()):
        if math.isnan(m) or math.isnan(r):
            continue
        ax.errorbar([m], [r], xerr=_err(m, mlo, mhi), yerr=_err(r, rlo, rhi), fmt="o", capsize=3,
                    color=f"C{k % 10}", label=_short(j))
        ax.annotate(_short(j), (m, r), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set(xlabel=f"{_title(target)} MSE (lower is better)",
           ylabel=f"{_title(target)} Pearson r (higher is better)",
           title=f"Correlation vs. MSE ({_title(target)})")
    ax.grid(alpha=0.3)
    return _svg(fig, f"landscape-{target}", f"{_title(target)} Pearson r against {_title(target)} MSE per "
                "judge, with intervals", note)


@_plain_text
def bias_bars(bias: Mapping[str, Mapping[str, tuple[float, float, float]]]) -> str:
    """Mean signed error (judge minus human) with its CI, grouped by judge, one bar per axis."""
    judges = list(bias)
    axes = list(next(iter(bias.values())))
    # (at 4 in, one judge's title ran off the edge in a browser, whose sans-serif is wider than matplotlib's)
    fig, ax = _figure(max(5.0, 1.2 * len(judges) * len(axes)), 3.4)
    width = 0.8 / len(axes)
    missing: list[float] = []
    for k, a in enumerate(axes):
        xs = np.arange(len(judges)) + (k - (len(axes) - 1) / 2) * width
        vals = np.array([bias[j][a][0] for j in judges])
        lo = np.array([bias[j][a][1] for j in judges])
        hi = np.array([bias[j][a][2] for j in judges])
        err = np.where(np.isnan(lo), 0.0, np.clip(np.vstack([vals - lo, hi - vals]), 0.0, None))
        ax.bar(xs, vals, width, yerr=err, capsize=3, label=_title(a), color=f"C{k}")
        missing.extend(xs[np.isnan(vals)])
    ax.axhline(0, color="black", lw=0.8)
    # Every judge's slots inside the axes: an n/a of the last judge was written past the right edge,
    # where the axes autoscaled to the bars drawn.
    ax.set_xlim(-0.5, len(judges) - 0.5)
    low, high = ax.get_ylim()
    # (an axis without scores had no bar and no word; the word, in the axis' colour, was 2.5:1 in orange)
    at = min(max((0 - low) / (high - low), 0.02), 0.7)  # from the zero line up, kept inside the axes
    for x in missing:
        ax.text(x, at, "n/a", rotation=90, ha="center", va="bottom", fontsize=7, color="#444",
                transform=ax.get_xaxis_transform())
    ax.set_xticks(range(len(judges)), [_short(j) for j in judges], rotation=15, ha="right")
    ax.set(ylabel="mean signed error (judge - human)", title="Bias: over-scoring > 0 > under-scoring")
    ax.legend(fontsize=8)
    return _svg(fig, "bias", "Bias per judge and axis: mean signed error, judge minus human, with intervals")


@_plain_text
def forest(rows: Sequence[tuple[str, float, float, float]], *, xlabel: str, name: str, title: str) -> str:
    """Point estimates with horizontal CI bars, one line per ``(label, value, low, high)``; a line
    without a value reads n/a."""
    fig, ax = _figure(6.0, max(2.0, 0.32 * len(rows) + 1.0))
    ys = np.arange(len(rows))[::-1]
    for y, (_, v, lo, hi) in zip(ys, rows, strict=True):
        if math.isnan(v):
            ax.text(0.02, y, "n/a", ha="left", va="center", fontsize=7, color="#444")
            continue
        ax.errorbar([v], [y], xerr=_err(v, lo, hi), fmt="o", capsize=3, color="C0" if v >= 0 else "C3", ms=4)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(ys, [_short(r[0]) for r in rows], fontsize=8)
    ax.set(xlim=(-1.05, 1.05), xlabel=xlabel, title=title)
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, name, title)


#: More generators than this on the PA-IA plane: their labels are cut to :data:`_CROWDED_LABEL` characters.
_CROWDED = 12
_CROWDED_LABEL = 16


def _clipped_all(names: Sequence[str], n: int) -> list[str]:
    """:func:`_clipped` of each name, at a length where no two different names read alike (at most their
    full length)."""
    width, longest = n, max((len(x) for x in names), default=0)
    while True:
        out = [_clipped(x, width) for x in names]
        if len(set(out)) == len(set(names)) or width >= longest:
            return out
        width += 4


#: Where a point's label may go, in the order tried: (offset in points, horizontal alignment, vertical).
_BESIDE = (((5, 4), "left", "bottom"), ((-5, 4), "right", "bottom"), ((5, -4), "left", "top"),
           ((-5, -4), "right", "top"), ((0, 6), "center", "bottom"), ((0, -6), "center", "top"))
_BESIDE_LEFT_FIRST = (_BESIDE[1], _BESIDE[0], _BESIDE[3], _BESIDE[2], *_BESIDE[4:])
#: Points between two labels, so that neighbours do not read as one ("6" beside "18": "618").
_LABEL_GAP = 3


@_plain_text
def generator_plane(points: Mapping[str, tuple[float, float, float, float, float, float]]) -> str:
    """Generators on the PA-IA plane with their CIs.

    Each point is labelled with its generators' names (those at one point share one label), on the side
    of the point where the label fits inside the axes without covering another label. Where one does
    not fit, every point gets a number instead, and a key under the plot names the generators at each
    number: a label cut at the axes' edge lost the end that tells checkpoints apart.

    Args:
        points: generator -> ``(pa, pa_low, pa_high, ia, ia_low, ia_high)``.
    """
    fig, ax = _figure(5.2, 4.4)
    drawn = [(k, g) for k, (g, p) in enumerate(points.items()) if not (math.isnan(p[0]) or math.isnan(p[3]))]
    at: dict[tuple[float, float], list[int]] = {}  # generators at one point share one label
    for k, g in drawn:
        x, xlo, xhi, y, ylo, yhi = points[g]
        ax.errorbar([x], [y], xerr=_err(x, xlo, xhi), yerr=_err(y, ylo, yhi), fmt="o", capsize=3,
                    color=f"C{k % 10}")
        at.setdefault((x, y), []).append(k)
    ax.plot(_SCALE, _SCALE, color="#888", lw=0.8, ls="--")
    ax.set(xlim=(0.8, 5.2), ylim=(0.8, 5.2), xlabel="mean PA", ylabel="mean IA",
           title="Generators: physical adherence vs. instruction alignment")
    ax.title.set_fontsize(9)  # (over axes as wide as the figure, at 10 pt it ran past the edge)
    ax.grid(alpha=0.3)
    crowded = len(points) > _CROWDED
    names = dict(zip([k for k, _ in drawn], _clipped_all([g for _, g in drawn],
                                                         _CROWDED_LABEL if crowded else MAX_LABEL),
                     strict=True))
    labels = {xy: ", ".join(names[k] for k in ks) for xy, ks in at.items()}
    if _label_points(fig, ax, labels, fontsize=7 if crowded else 8, fallback=False):
        return _svg(fig, "generator-plane", "Generators by mean PA (x) and mean IA (y), with intervals")
    from matplotlib.lines import Line2D

    number = {xy: str(n) for n, xy in enumerate(at, 1)}
    ncol = 1 if len(drawn) <= _KEY_ROWS else 2
    cut = MAX_LABEL if ncol == 1 else _KEY_LABEL
    keyed = dict(zip([k for k, _ in drawn], _clipped_all([g for _, g in drawn], cut), strict=True))
    # (each entry in the colour its point shows: the last of the generators drawn there)
    entries = [(Line2D([], [], ls="", marker="o", ms=4, color=f"C{ks[-1] % 10}"), f"{number[xy]}  {keyed[k]}")
               for xy, ks in at.items() for k in ks]
    fig.set_figheight(4.4 + 0.17 * math.ceil(len(entries) / ncol))
    fig.legend([h for h, _ in entries], [t for _, t in entries], loc="outside lower center", ncol=ncol,
               fontsize=7, frameon=False, handletextpad=0.3, columnspacing=1.0)
    _label_points(fig, ax, number, fontsize=7, fallback=True)
    return _svg(fig, "generator-plane", "Generators by mean PA (x) and mean IA (y), with intervals; the "
                "points are numbered, and the key under the plot names the generators at each number")


#: Up to this many generators the PA-IA plane's key is one column of names up to :data:`MAX_LABEL`
#: characters; past it, two columns, the names cut to :data:`_KEY_LABEL`.
_KEY_ROWS = 10
_KEY_LABEL = 28


def _label_points(fig: Figure, ax: Any, labels: Mapping[tuple[float, float], str], *, fontsize: float,
                  fallback: bool) -> bool:
    """Write each label beside its point, at the first place of :data:`_BESIDE` where it lies inside the
    axes and covers no label placed before it, measured with matplotlib's renderer. Where a label has no
    such place: False, with every label taken off again, unless ``fallback``, which takes the first place
    inside the axes (else the first place) and goes on. Labels never shrink the axes (long names took
    all the room: axes 3 pt wide)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # (the axes' final place, which labels outside the layout keep)
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    inside = ax.get_window_extent(renderer)
    from matplotlib.transforms import Bbox

    # The other points' markers are in the way too: a label over one read as that point's.
    mark = renderer.points_to_pixels(4)
    markers = {}
    for xy in labels:
        cx, cy = ax.transData.transform(xy)
        markers[xy] = Bbox.from_extents(cx - mark, cy - mark, cx + mark, cy + mark)
    placed: list[Any] = []
    for (x, y), label in labels.items():
        # (on a light ground, so that an error bar crossing the label does not cross out its letters)
        note = ax.annotate(label, (x, y), xytext=_BESIDE[0][0], textcoords="offset points",
                           fontsize=fontsize, annotation_clip=False,
                           bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75})
        note.set_in_layout(False)
        others = [b for xy, b in markers.items() if xy != (x, y)]
        fits = []
        # (right of a point near the right edge, the label ran off the figure: there the left comes first)
        for offset, ha, va in _BESIDE_LEFT_FIRST if x > 3.6 else _BESIDE:
            note.xyann = offset
            note.set(ha=ha, va=va)
            box = note.get_window_extent(renderer)
            if inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1:
                fits.append((offset, ha, va))
                if not any(box.overlaps(other) for other in [*placed, *others]):  # (placed: padded)
                    break
        else:
            if not fallback:
                for drawn in list(ax.texts):
                    drawn.remove()
                return False
            offset, ha, va = fits[0] if fits else _BESIDE[0]
            note.xyann = offset
            note.set(ha=ha, va=va)
        placed.append(note.get_window_extent(renderer).padded(renderer.points_to_pixels(_LABEL_GAP)))
    return True


@_plain_text
def radar(scores: Mapping[str, Mapping[str, float]], *, title: str) -> str:
    """Sub-dimension scores per generator on a radar chart (axes = sub-dimensions, radius 0-1).

    A generator without a value on some sub-dimension (NaN) has its line broken there, no fill, and
    those sub-dimensions named n/a in the legend. Colour, marker and line style all change from one
    generator to the next (:func:`_radar_style`), so no two lines differ by colour alone.
    """
    groups = list(scores)
    dims = list(next(iter(scores.values())))
    angles = np.linspace(0, 2 * np.pi, len(dims), endpoint=False)
    closed = np.append(angles, angles[0])
    # The legend goes below the chart, in columns, and the figure grows with it: beside the chart it
    # covered it, and past about 30 generators it ran off the figure.
    ncol = min(3, max(1, math.ceil(len(groups) / 8)))
    rows = math.ceil(len(groups) / ncol)
    fig, ax = _figure(5.4 + 0.9 * (ncol - 1), 5.0 + 0.17 * rows, subplot_kw={"projection": "polar"})
    labels = _clipped_all(groups, 20) if ncol > 1 else [_short(g) for g in groups]
    for k, g in enumerate(groups):
        vals = np.array([scores[g][d] for d in dims], dtype=float)
        missing = [d for d, v in zip(dims, vals, strict=True) if math.isnan(v)]
        vals = np.append(vals, vals[0])
        style = _radar_style(k)
        label = labels[k] + (f" (n/a: {', '.join(missing)})" if missing else "")
        ax.plot(closed, vals, lw=1.4, ms=4, label=label, **style)
        if not missing:  # (a missing value was filled to 0, the worst score, where the table says n/a)
            ax.fill(closed, vals, color=style["color"], alpha=0.08)
    ax.set_xticks(angles, dims, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=10)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=ncol, fontsize=7,
               frameon=False)
    return _svg(fig, "radar", f"{title}, one line per generator")


_LINE_STYLES = ("-", "--", ":", "-.")
#: Filled markers only, so that a hollow one differs from its filled form.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _radar_style(k: int) -> dict[str, str]:
    """The colour, marker and line style of the radar's ``k``-th line: each changes with every generator
    (colour alone left gen02, gen03 and gen05 one olive under deuteranopia), and no two of the first 280
    generators share all three and the marker's fill (hollow from the 141st on)."""
    return {"color": f"C{k % 10}", "marker": _MARKERS[k % len(_MARKERS)],
            "ls": _LINE_STYLES[k % len(_LINE_STYLES)], "fillstyle": "none" if k // 140 % 2 else "full"}

#: Up to this many metrics the heatmap prints each value; past it, colours only (the values are in the
#: table), at a size the page shows unscaled, scrolling sideways.
HEATMAP_VALUES = 25
#: The heatmap's colour of a pair without a value, apart from every colour of the scale.
NO_VALUE_COLOUR = "#a0a0a0"


@_plain_text
def correlation_heatmap(names: Sequence[str], corr: FloatArray, *, title: str) -> str:
    """A symmetric correlation matrix as a diverging heatmap, with the values printed up to
    :data:`HEATMAP_VALUES` metrics. (At 62 metrics, printed values made a 36-inch figure the page drew at
    43%: labels 3 px tall, and 1.6 MB of the page.) A pair without a value (NaN) is grey, and reads n/a
    where values are printed."""
    import matplotlib

    n = len(names)
    values = n <= HEATMAP_VALUES
    size = max(4.0, (0.55 if values else 0.3) * n + 2.0)
    fig, ax = _figure(size + 1.0, size)
    # (NaN was left transparent: the white background, which is also how RdBu_r draws 0)
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad=NO_VALUE_COLOUR)
    im = ax.imshow(corr, cmap=cmap, vmin=-1, vmax=1)
    ax.set_xticks(range(n), [_short(m) for m in names], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(n), [_short(m) for m in names], fontsize=7)
    for (r, c), v in np.ndenumerate(corr):
        if values:
            ax.text(c, r, "n/a" if math.isnan(v) else f"{v:.2f}", ha="center", va="center", fontsize=6,
                    color=_ink(im.cmap(im.norm(v))))
    fig.colorbar(im, ax=ax, shrink=0.8)
    ax.set_title(title, fontsize=10)
    note = "Grey cells (n/a): no value for that pair." if np.isnan(corr).any() else ""
    svg = _svg(fig, "metric-heatmap", f"{title}, as a heatmap of {n} rows", note)
    return svg if values else svg.replace('class="plot"', 'class="plot wide"', 1)
