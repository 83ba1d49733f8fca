"""Figure labels: no matplotlib warnings on the terminal, long names cut, tied generators one label.

A CJK generator name made matplotlib warn that its font lacks the glyphs (the SVG keeps text as text,
so the browser draws them), a 255-character name ran off the figure and collapsed the constrained
layout (another warning), and generators at the same point of the PA-IA plane were printed on top of
each other. A long name keeps its start and end around an ellipsis, where configuration labels differ.
"""

from __future__ import annotations

import math
import warnings

from robojudge.report._plots import MAX_LABEL, generator_plane, landscape

CJK = "\u65e5\u672c\u8a9e \u30e2\u30c7\u30eb"  # 日本語 モデル
LONG = "long_" + "x" * 250


Point = tuple[float, float, float, float, float, float]


def _plane(points: dict[str, Point]) -> tuple[str, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg = generator_plane(points)
    return svg, caught


def test_names_the_font_lacks_draw_without_a_warning() -> None:
    nan = math.nan
    svg, caught = _plane({CJK: (4.0, nan, nan, 3.0, nan, nan), "b": (2.0, nan, nan, 2.0, nan, nan)})
    assert [str(w.message) for w in caught] == []
    assert CJK in svg  # kept as text for the browser


def test_a_long_name_is_cut_and_the_layout_holds() -> None:
    nan = math.nan
    svg, caught = _plane({LONG: (4.0, nan, nan, 3.0, nan, nan), "b": (2.0, nan, nan, 2.0, nan, nan)})
    assert [str(w.message) for w in caught] == []
    assert MAX_LABEL == 60
    assert "long_" + "x" * 25 + "\u2026" + "x" * 29 + "<" in svg and LONG not in svg  # 30 + 1 + 29 characters
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg = landscape({LONG: (0.5, nan, nan, 0.8, nan, nan)}, "overall")
    assert [str(w.message) for w in caught] == [] and LONG not in svg


def test_generators_at_one_point_share_one_label() -> None:
    nan = math.nan
    svg, _ = _plane({"alpha": (3.0, nan, nan, 2.0, nan, nan), "beta": (3.0, nan, nan, 2.0, nan, nan),
                     "gamma": (4.0, nan, nan, 4.0, nan, nan)})
    assert svg.count(">alpha, beta<") == 1
    assert ">alpha<" not in svg and ">beta<" not in svg and svg.count(">gamma<") == 1
