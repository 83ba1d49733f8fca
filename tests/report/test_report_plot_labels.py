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
    assert "gen-00-z\u2026" + "z" * 7 in svg and "gen-00-" + "z" * 30 not in svg  # 16 characters


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
