import math
import re

import numpy as np
import pytest

from robojudge.report import _plots


def test_error_bars_clip_a_point_outside_its_interval():
    assert _plots._err(1.0, 0.5, 2.0) == [[0.5], [1.0]]
    # A percentile interval can miss its point estimate (here MSE 0 with interval [0.2, 0.4]).
    assert _plots._err(0.0, 0.2, 0.4) == [[0.0], [0.4]]
    assert _plots._err(1.0, math.nan, math.nan) is None


def test_figures_are_inline_svg_with_unique_names():
    land = _plots.landscape({"a": (0.0, 0.2, 0.4, 0.5, 0.4, 0.6), "b": (1.0, math.nan, math.nan, 0.2,
                                                                       math.nan, math.nan)}, "overall")
    heat = _plots.correlation_heatmap(["x", "y"], np.array([[1.0, -0.5], [-0.5, 1.0]]), title="t")
    for svg, name in ((land, "landscape-overall"), (heat, "metric-heatmap")):
        assert svg.startswith("<svg ") and svg.rstrip().endswith("</svg>")
        assert f'data-plot="{name}"' in svg and "<?xml" not in svg
    # Text stays text, so the labels can be found in the page.
    assert ">-0.50<" in heat
    ids_land = set(_ids(land))
    assert ids_land and not ids_land & set(_ids(heat))  # two figures in one page never share an id
    for svg in (land, heat):  # and every internal reference still points at an element of its figure
        refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', svg))
        assert refs and refs <= set(_ids(svg))


def _ids(svg: str) -> list[str]:
    return re.findall(r'id="([^"]+)"', svg)


@pytest.mark.parametrize("n_dims", [3, 5])
def test_radar_draws_one_polygon_per_group(n_dims):
    dims = [f"D{i}" for i in range(n_dims)]
    svg = _plots.radar({"g1": dict.fromkeys(dims, 0.5), "g2": dict.fromkeys(dims, 0.9)}, title="r")
    assert svg.count(">g1<") == 1 and svg.count(">g2<") == 1 and all(f">{d}<" in svg for d in dims)


@pytest.mark.parametrize("name", ["a$x^2$b", "c$x^$", "<script>alert(1)</script>", r"\frac{1}{2}$"])
def test_names_are_drawn_as_plain_escaped_text(name):
    figures = [
        _plots.generator_plane({name: (3.0, 2.5, 3.5, 3.0, 2.5, 3.5)}),
        _plots.landscape({name: (0.5, 0.4, 0.6, 0.5, 0.4, 0.6)}, "overall"),
        _plots.forest([(name, 0.5, 0.4, 0.6)], xlabel=name, name="f", title=name),
        _plots.bias_bars({name: {"pa": (0.1, 0.0, 0.2)}}),
        _plots.correlation_heatmap([name, "y"], np.array([[1.0, 0.5], [0.5, 1.0]]), title="t"),
    ]
    escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for svg in figures:
        assert "<script" not in svg
        assert re.search(r">\s*" + re.escape(escaped) + r"\s*</text>", svg), svg[:200]


def test_a_crowded_scatter_draws_its_points_as_one_image_and_keeps_its_text():
    # Every point was a vector mark (~165 bytes): 30,000 items x 4 judges made a 38.6 MB figure.
    rng = np.random.default_rng(0)
    n = 600  # (more than _plots.RASTER_POINTS)
    human = {"pa": rng.integers(1, 6, n).astype(float)}
    crowded = _plots.judge_scatter({"j": {"pa": human["pa"]}}, human)
    few = _plots.judge_scatter({"j": {"pa": human["pa"][:50]}}, {"pa": human["pa"][:50]})
    assert crowded.count("<image") == 1 and crowded.count("<use") < 40 and len(crowded) < 60_000
    assert few.count("<image") == 0 and few.count("<use") >= 50  # a few points stay vector marks
    for svg in (crowded, few):  # axes, ticks and labels stay text
        assert ">human PA</text>" in svg and re.search(r">j: PA \(n=\d+\)</text>", svg)


def test_radar_lines_differ_by_more_than_colour(monkeypatch):
    # Generators 0-9 differed by colour alone: under deuteranopia gen02, gen03 and gen05 were one olive.
    figures = []
    real = _plots._svg
    monkeypatch.setattr(_plots, "_svg", lambda fig, *a: figures.append(fig) or real(fig, *a))
    dims = ("IQ-1", "MQ", "CC")
    _plots.radar({f"g{k}": dict.fromkeys(dims, 0.5) for k in range(12)}, title="r")
    lines = figures[0].axes[0].get_lines()
    shapes = [(ln.get_marker(), ln.get_linestyle()) for ln in lines]
    assert len(shapes) == 12 and len(set(shapes)) == 12  # no two alike but for their colour
    looks = {(_plots._radar_style(k)["color"], _plots._radar_style(k)["marker"], _plots._radar_style(k)["ls"],
              _plots._radar_style(k)["fillstyle"]) for k in range(280)}
    assert len(looks) == 280


def _contrast(a, b) -> float:
    """WCAG 2 contrast ratio of two sRGB colours."""
    def lum(rgb):
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3])
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _ink_on_cells(svg: str, values: dict[str, float], colour) -> list[tuple[str, float]]:
    """The contrast of each printed cell value in ``svg`` against its cell's colour."""
    from matplotlib.colors import to_rgb

    out = []
    for style, label in re.findall(r'<text style="([^"]*)"[^>]*>([^<]+)</text>', svg):
        if label in values:
            fill = re.search(r"fill: (#[0-9a-f]{6})", style)
            ink = to_rgb(fill.group(1) if fill else "#000000")
            out.append((label, _contrast(ink, colour(values[label]))))
    return out


def test_cell_values_stand_out_from_their_cells():
    # White counts on mid blue were 2.5:1, white heatmap values at |rho| just above 0.6 3.4:1 (WCAG: 4.5).
    import matplotlib

    m = np.array([[100, 55, 48], [45, 30, 12], [0, 70, 62]])
    conf = _plots.confusion_grid({"j": {"pa": m.tolist()}})
    blues = matplotlib.colormaps["Blues"]
    seen = _ink_on_cells(conf, {str(v): v for v in m.flat if v}, lambda v: blues(v / m.max()))
    assert len(seen) == 8 and all(ratio >= 4.5 for _, ratio in seen), seen
    corr = np.array([[0.95, 0.62, -0.65], [0.62, 0.95, 0.3], [-0.65, 0.3, 0.95]])
    heat = _plots.correlation_heatmap(["a", "b", "c"], corr, title="t")
    rdbu = matplotlib.colormaps["RdBu_r"]
    seen = _ink_on_cells(heat, {f"{v:.2f}": v for v in corr.flat}, lambda v: rdbu((v + 1) / 2))
    assert len(seen) == 9 and all(ratio >= 4.5 for _, ratio in seen), seen
    assert _contrast((1, 1, 1), (0, 0, 0)) == pytest.approx(21) == _plots.contrast((0, 0, 0), (1, 1, 1))


def test_figures_hold_valid_html_and_no_repeated_id():
    # The HTML checker refused every figure: matplotlib's RDF metadata (xmlns:dc, xmlns:cc, rdf:RDF), and
    # two panels of one matrix repeated an image's id.
    same = [[3, 1, 0], [0, 2, 1], [0, 0, 4]]
    conf = _plots.confusion_grid({"a": {"pa": same, "ia": same}, "b": {"pa": same, "ia": [[1]]}})
    heat = _plots.correlation_heatmap(["x", "y"], np.array([[1.0, -0.5], [-0.5, 1.0]]), title="t")
    for svg in (conf, heat):
        assert not any(bad in svg for bad in ("<metadata", "rdf:", "xmlns:dc", "xmlns:cc"))
        ids = _ids(svg)
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
        refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', svg))
        assert refs <= set(ids)
    assert conf.count("<image") == 4
