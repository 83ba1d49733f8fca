"""Figure labels: no matplotlib warnings on the terminal, long names cut, tied generators one label.

A CJK generator name made matplotlib warn that its font lacks the glyphs (the SVG keeps text as text,
so the browser draws them), a 255-character name ran off the figure and collapsed the constrained
layout (another warning), and generators at the same point of the PA-IA plane were printed on top of
each other. A long name keeps its start and end around an ellipsis, where configuration labels differ.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator

from robojudge.report._plots import MAX_LABEL, generator_plane, landscape

CJK = "\u65e5\u672c\u8a9e \u30e2\u30c7\u30eb"  # 日本語 モデル
LONG = "long_" + "x" * 250


Point = tuple[float, float, float, float, float, float]


@contextlib.contextmanager
def _shown() -> Iterator[list[warnings.WarningMessage]]:
    """Records every warning a terminal could show. The DeprecationWarnings of matplotlib's own modules
    are left out: Python shows none by default, and matplotlib 3.8.4 (the lowest allowed) beside pyparsing
    3.3 raises 13 for every figure."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"matplotlib\.")
        yield caught


def _plane(points: dict[str, Point]) -> tuple[str, list[warnings.WarningMessage]]:
    with _shown() as caught:
        svg = generator_plane(points)
    return svg, caught


def test_names_the_font_lacks_draw_without_a_warning() -> None:
    nan = math.nan
    svg, caught = _plane({CJK: (4.0, nan, nan, 3.0, nan, nan), "b": (2.0, nan, nan, 2.0, nan, nan)})
    assert [str(w.message) for w in caught] == []
    assert CJK in svg  # kept as text for the browser


def test_the_glyph_warning_of_every_allowed_matplotlib_is_kept_off_the_terminal() -> None:
    # matplotlib 3.8 (pyproject.toml allows 3.8.4) words it "missing from current font.", which the filter
    # let through: twelve warnings for one CJK name (lowdeps audit, finding 4). Other warnings still pass.
    from robojudge.report._plots import _plain_text

    said = ["Glyph 26085 (\\N{CJK UNIFIED IDEOGRAPH-65E5}) missing from current font.",  # 3.8
            "Glyph 26085 (\\N{CJK UNIFIED IDEOGRAPH-65E5}) missing from font(s) DejaVu Sans.",  # 3.9 on
            "Glyph 26085 is not a glyph warning"]

    @_plain_text
    def draw() -> str:
        for message in said:
            warnings.warn(message, UserWarning, stacklevel=1)
        return "<svg/>"

    with _shown() as caught:
        assert draw() == "<svg/>"
    assert [str(w.message) for w in caught] == [said[2]]


def test_a_long_name_is_cut_and_the_layout_holds() -> None:
    nan = math.nan
    svg, caught = _plane({LONG: (4.0, nan, nan, 3.0, nan, nan), "b": (2.0, nan, nan, 2.0, nan, nan)})
    assert [str(w.message) for w in caught] == []
    assert MAX_LABEL == 60
    assert "long_" + "x" * 25 + "\u2026" + "x" * 29 + "<" in svg and LONG not in svg  # 30 + 1 + 29 characters
    with _shown() as caught:
        svg = landscape({LONG: (0.5, nan, nan, 0.8, nan, nan)}, "overall")
    assert [str(w.message) for w in caught] == [] and LONG not in svg


def test_generators_at_one_point_share_one_label() -> None:
    nan = math.nan
    svg, _ = _plane({"alpha": (3.0, nan, nan, 2.0, nan, nan), "beta": (3.0, nan, nan, 2.0, nan, nan),
                     "gamma": (4.0, nan, nan, 4.0, nan, nan)})
    assert svg.count(">alpha, beta<") == 1
    assert ">alpha<" not in svg and ">beta<" not in svg and svg.count(">gamma<") == 1


def test_long_labels_never_shrink_the_plane_and_crowded_labels_are_cut(monkeypatch) -> None:
    # With three 60-character names the constrained layout made room for the point labels: the axes
    # were about 3 pt wide. Forty generators piled their full names on top of each other.
    from robojudge.report import _plots

    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    nan = math.nan
    names = [f"generator-{k}-" + "y" * 48 for k in range(3)]
    _plane({n: (1.5 + k, nan, nan, 2.0 + k, nan, nan) for k, n in enumerate(names)})
    (fig,) = figures
    (ax,) = fig.axes
    fig.canvas.draw()
    assert ax.get_position().width > 0.6  # of the figure's width
    many = {f"gen-{k:02d}-" + "z" * 30: (1 + k / 10, nan, nan, 5 - k / 10, nan, nan) for k in range(40)}
    svg, caught = _plane(many)
    assert [str(w.message) for w in caught] == []
    # Too close to be named beside their points, they are numbered, and the key names them in two
    # columns, cut to 28 characters.
    assert ">1  gen-00-zzzzzzz\u2026" + "z" * 13 + "<" in svg and "gen-00-" + "z" * 30 not in svg


def test_cut_labels_keep_their_ends_apart_and_edge_labels_stay_in_the_figure(monkeypatch) -> None:
    # Cut to their start, checkpoint names read alike ("openvla-7b-finetune..." nine times); the label of
    # a generator near PA 5, right of its point, ran off the figure ("openvla-7b-ft" read "open").
    from robojudge.report import _plots

    sweep = {f"genmodel-sweep-lr{k:02d}": (1 + k / 4, math.nan, math.nan, 2.0, math.nan, math.nan)
             for k in range(13)}
    svg, _ = _plane(sweep)
    assert all(f"ep-lr{k:02d}<" in svg for k in range(13))
    dims = ("IQ-1", "MQ", "CC")
    steps = {f"openvla-7b-finetune-step-{k}000": {d: k / 10 for d in dims} for k in range(1, 10)}
    radar = _plots.radar(steps, title="t")
    assert all(f"step-{k}000<" in radar for k in range(1, 10))
    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    _plane({"openvla-7b-ft": (4.9, math.nan, math.nan, 4.6, math.nan, math.nan),
            "baseline": (2.0, math.nan, math.nan, 2.5, math.nan, math.nan)})
    (fig,) = figures
    fig.canvas.draw()
    for text in fig.axes[0].texts:
        box = text.get_window_extent().transformed(fig.transFigure.inverted())
        assert box.x0 >= 0 and box.x1 <= 1, text.get_text()


def test_the_radar_legend_names_every_generator_below_the_chart(monkeypatch) -> None:
    # Beside the chart the legend covered it and, past about 30 generators, ran off the figure.
    from robojudge.report import _plots

    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    dims = ("IQ-1", "MQ", "CC", "TA")
    scores = {f"gen {k:02d} " + "w" * 20: {d: (k % 7) / 7 for d in dims} for k in range(40)}
    svg = _plots.radar(scores, title="t")
    assert all(f"gen {k:02d} w" in svg for k in range(40))
    (fig,) = figures
    fig.canvas.draw()
    (legend,) = fig.legends
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    assert box.x0 >= 0 and box.x1 <= 1 and box.y0 >= 0  # within the figure
    assert box.y1 <= fig.axes[0].get_position().y0 + 0.05  # below the chart


def test_an_empty_forest_is_not_drawn() -> None:
    # Two items: r is n/a for every metric, and the forest plots were empty axes with one label.
    from robojudge.report._label_sections import metrics_section
    from robojudge.report._sections import ReportInput
    from robojudge.store import ResultRow
    from robojudge.suite import Item

    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="g",
                  labels={"pa": 2 + k, "ia": 3}) for k in range(2)]
    rows = [ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", 30.0 + k) for k, it in enumerate(items)]
    sec = metrics_section(ReportInput(rows, items, lambda m: True, bootstrap=0))
    assert sec.tables and not any('data-plot="metric-forest' in p for p in sec.plots)


def test_a_large_heatmap_shows_colours_only_and_is_not_scaled_down() -> None:
    # 62 metrics: a 36-inch figure with every value printed, drawn at 43% (labels 3 px), 1.6 MB.
    import numpy as np

    from robojudge.report._plots import HEATMAP_VALUES, correlation_heatmap

    def corr(n: int) -> np.ndarray:
        return np.full((n, n), 0.37)  # a value no colour-bar tick prints

    small = correlation_heatmap([f"m{k}" for k in range(4)], corr(4), title="t")
    assert small.count(">0.37<") == 16 and 'class="plot"' in small
    n = HEATMAP_VALUES + 1
    big = correlation_heatmap([f"m{k}" for k in range(n)], corr(n), title="t")
    assert ">0.37<" not in big and 'class="plot wide"' in big
    assert len(big) < len(correlation_heatmap([f"m{k}" for k in range(n - 1)], corr(n - 1), title="t"))


def _labels_of(monkeypatch, points: dict[str, Point]) -> tuple[list, list[str], list[str]]:
    """The text boxes of the plane's point labels (in figure fractions) with the axes' box, the labels and
    the lines of the key under the plot."""
    from robojudge.report import _plots

    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    _plane(points)
    (fig,) = figures
    fig.canvas.draw()
    ax = fig.axes[0]
    to_fig = fig.transFigure.inverted()
    boxes = [t.get_window_extent().transformed(to_fig) for t in ax.texts]
    axes_box = ax.get_window_extent().transformed(to_fig)
    key = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    for legend in fig.legends:
        box = legend.get_window_extent().transformed(to_fig)
        assert box.x0 >= 0 and box.x1 <= 1 and box.y0 >= 0, box
    return [boxes, axes_box], [t.get_text() for t in ax.texts], key


def _inside_and_apart(boxes, axes_box) -> None:
    for k, box in enumerate(boxes):
        assert axes_box.x0 <= box.x0 and box.x1 <= axes_box.x1, box
        assert axes_box.y0 <= box.y0 and box.y1 <= axes_box.y1, box
        assert not any(box.overlaps(other) for other in boxes[:k]), box


def test_plane_labels_lie_inside_the_axes_and_keep_what_tells_generators_apart(monkeypatch) -> None:
    # Labels were cut at the axes' edge: three checkpoints of one model read alike, none showing its step,
    # and a label joining five generators at one point lost those past the edge (audit reporthtml F2).
    nan = math.nan
    ckpt = {f"cosmos_predict2_2b_video2world_480p_16fps_posttrain_step_00{k}000": (3.0 + k / 20, nan, nan,
                                                                                   3.0 + k / 20, nan, nan)
            for k in (1, 2, 3)}
    (boxes, axes_box), labels, key = _labels_of(monkeypatch, ckpt)
    _inside_and_apart(boxes, axes_box)
    shown = labels + key
    for k in (1, 2, 3):  # each step is read once, beside its point or in the key with the point's number
        assert sum(f"step_00{k}000" in t for t in shown) == 1, shown
    if key:
        assert sorted(labels) == ["1", "2", "3"] and [t.split()[0] for t in key] == ["1", "2", "3"]


def test_plane_numbers_generators_whose_names_do_not_fit_and_names_all_in_its_key(monkeypatch) -> None:
    nan = math.nan
    long = {"a_very_long_generator_name_" * 6 + str(k): (4.0 + k / 10, nan, nan, 2.0, nan, nan)
            for k in range(3)}
    (boxes, axes_box), labels, key = _labels_of(monkeypatch, long)
    _inside_and_apart(boxes, axes_box)
    assert sorted(labels) == ["1", "2", "3"]
    assert [t[:3] for t in key] == ["1  ", "2  ", "3  "] and [t[-2:] for t in key] == ["_0", "_1", "_2"]
    # Thirty generators, five at each of six points: one label (or number) per point, every name read once.
    tied = {f"gen_{k:02d} \u2020": (1.5 + k % 6 / 2, nan, nan, 1.5 + k % 6 / 2, nan, nan) for k in range(30)}
    (boxes, axes_box), labels, key = _labels_of(monkeypatch, tied)
    _inside_and_apart(boxes, axes_box)
    assert len(labels) == 6
    assert all(sum(name in t for t in labels + key) == 1 for name in tied), (labels, key)


def test_plane_labels_cover_no_other_point(monkeypatch) -> None:
    # Five points of six generators each, close together (the audit's 30 generators): the joined names
    # were written across the other points' markers, so a name read as that point's.
    from matplotlib.transforms import Bbox

    from robojudge.report import _plots

    nan = math.nan
    at = [(2.667, 2.667), (3.0, 3.167), (3.333, 2.833), (2.833, 3.333), (3.167, 3.0)]
    points = {f"gen_{k:02d} \u2020": (at[k % 5][0], nan, nan, at[k % 5][1], nan, nan) for k in range(30)}
    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    _plane(points)
    (fig,) = figures
    fig.canvas.draw()
    ax = fig.axes[0]
    r = fig.dpi * 3 / 72  # a marker's radius: 3 pt
    marks = [Bbox.from_extents(cx - r, cy - r, cx + r, cy + r) for cx, cy in (ax.transData.transform(xy)
                                                                             for xy in at)]
    for text in ax.texts:
        box = text.get_window_extent()
        assert sum(box.overlaps(m) for m in marks) == 0, text.get_text()
