"""What the report's figures do with missing values, many series and left-out entries.

A figure never draws a missing value as a number (0, white, the centre of a radar), never drops an
entry without saying so under it, and has an accessible name in words rather than its id.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from _report_data import build_items, build_rows, higher_is_better

from robojudge.report import _audit, _plots
from robojudge.report._label_sections import judges_section
from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list:
    """The matplotlib figures the plotting functions save, in order."""
    out: list = []
    for module in (_plots, _audit):
        real = module._svg
        monkeypatch.setattr(module, "_svg", lambda fig, *a, real=real: out.append(fig) or real(fig, *a))
    return out


def _aria(svg: str) -> str:
    found = re.search(r'aria-label="([^"]*)"', svg)
    assert found
    return found.group(1)


def _plot(plots: list[str], name: str) -> str:
    (svg,) = [p for p in plots if f'data-plot="{name}"' in p]
    return svg


def _judge_rows(items, judge: str, axes=("pa", "ia"), shift: float = 0.0) -> list[ResultRow]:
    return [ResultRow(it.item_id, f"judge:{judge}:{a}", "h", "1", "ok",
                      min(5.0, getattr(it.labels, a) + shift)) for it in items for a in axes]


def test_the_judge_panels_say_which_judges_they_leave_out_and_keep_the_calibrated_one() -> None:
    # Panels were cut to the first 8 judges without a word, and metric-calibrated, listed last, went first.
    items = build_items()
    rows = build_rows(items, judge=False)
    for k in range(9):
        rows += _judge_rows(items, f"j{k}", shift=k % 2)
    sec, _ = judges_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    for name in ("judge-scatter", "confusion"):
        svg = _plot(sec.plots, name)
        assert ">metric-calibrated: PA" in svg and ">j6: PA" in svg and ">j7: PA" not in svg
        assert "Panels for 8 of 10 judges; not drawn (see the tables): j7, j8." in _aria(svg)


def _one_axis_judge() -> tuple[list[str], list]:
    """The judges section of a run with a judge on both axes and ``mk`` on PA only."""
    items = build_items()
    rows = _judge_rows(items, "both") + _judge_rows(items, "mk", axes=("pa",), shift=1)
    sec, _ = judges_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    return sec.plots, sec.tables


def test_a_judge_scored_on_one_axis_is_named_under_the_figures() -> None:
    # It vanished from the correlation-vs-MSE figure without a word, and had no IA bar and a blank IA
    # confusion matrix, read as zero counts.
    plots, _ = _one_axis_judge()
    assert "Not drawn, no Overall r or MSE: mk (no scores on IA)." in _aria(_plot(plots, "landscape-overall"))
    assert ">n/a<" in _plot(plots, "bias")
    assert ">n/a: no scored item<" in _plot(plots, "confusion")


def test_a_judge_scored_on_one_axis_has_no_overall_kendall_tau() -> None:
    # Its Overall tau was its PA tau (the missing axis's pairs dropped), while every other Overall
    # statistic of it was n/a.
    _, tables = _one_axis_judge()
    detail = next(t for t in tables if "kendall" in t.columns)  # (the statistics table, by its columns)
    tau = detail.columns.index("kendall")
    cells = {(r[0].text, r[1].text): r[tau].value for r in detail.rows}
    assert cells["mk", "PA"] == pytest.approx(1.0) and math.isnan(cells["mk", "Overall"])
    assert not math.isnan(cells["both", "Overall"])


def test_a_landscape_with_no_point_is_a_sentence() -> None:
    # Every judge without an Overall drew an empty 0-1 frame, with no word why.
    items = build_items()
    sec, _ = judges_section(ReportInput(_judge_rows(items, "mk", axes=("pa",)), items, higher_is_better,
                                        bootstrap=0))
    assert not any('data-plot="landscape' in p for p in sec.plots) and sec.plots
    assert "no correlation-vs-MSE figure: mk (no scores on IA)" in sec.intro


def test_the_heatmap_draws_a_pair_without_value_apart_from_zero(figures) -> None:
    # NaN was transparent, the white background, which is also how the colour scale draws rho = 0.
    corr = np.array([[1.0, np.nan, 0.01], [np.nan, 1.0, 0.5], [0.01, 0.5, 1.0]])
    svg = _plots.correlation_heatmap(["a", "b", "c"], corr, title="t")
    (image,) = figures[0].axes[0].images
    assert image.cmap.get_bad()[3] == 1.0 and tuple(image.cmap.get_bad()) != tuple(image.cmap(0.5))
    assert svg.count(">n/a<") == 2 and svg.count(">0.01<") == 2
    assert "Grey cells (n/a)" in _aria(svg)


def test_the_radar_does_not_fill_a_missing_sub_dimension(figures) -> None:
    # A missing sub-dimension was filled down to 0, the worst score, where the table says n/a.
    dims = ("IQ-1", "MQ", "CC", "TA")
    svg = _plots.radar({"g1": dict.fromkeys(dims, 0.5), "g2": dict.fromkeys(dims, 0.7),
                        "g3": {"IQ-1": 0.55, "MQ": 0.2, "CC": 0.28, "TA": math.nan}}, title="t")
    ax = figures[0].axes[0]
    assert len(ax.patches) == 2  # fills of g1 and g2 only
    assert all(np.min(p.get_xy()[:, 1]) > 0 for p in ax.patches)
    assert ">g3 (n/a: TA)<" in svg


def test_radar_lines_past_ten_generators_look_different(figures) -> None:
    # From the 11th generator on the ten colours repeated with one line style: legend entries alike.
    dims = ("IQ-1", "MQ", "CC")
    _plots.radar({f"gen{k:02d}": dict.fromkeys(dims, k / 12) for k in range(12)}, title="t")
    looks = [(line.get_color(), line.get_linestyle(), line.get_marker()) for line in figures[0].axes[0].lines]
    assert len(looks) == 12 and len(set(looks)) == 12


def test_forest_and_bias_write_n_a_where_there_is_no_value() -> None:
    # A row without r kept its label with no marker and no word; an axis without bias had no bar.
    forest = _plots.forest([("m1", 0.5, 0.4, 0.6), ("m2", math.nan, math.nan, math.nan)], xlabel="r",
                           name="f", title="Metrics vs. PA")
    assert forest.count(">n/a<") == 1
    bias = _plots.bias_bars({"j": {"pa": (0.1, 0.0, 0.2), "ia": (math.nan, math.nan, math.nan)}})
    assert bias.count(">n/a<") == 1


def test_the_bias_n_a_of_the_last_judge_lies_inside_the_axes_in_readable_ink(figures) -> None:
    # A judge run with one rubric, listed last: its IA slot lay past the x-limits that matplotlib took from
    # the bars drawn, so its n/a was written beyond the right spine, in C1 orange, 2.5:1 on white (audit
    # reporthtml F3). Every bias below zero: the word is still inside the axes.
    from matplotlib.colors import to_rgb

    for pa in (0.1, -0.4):
        _plots.bias_bars({"vlm": {"pa": (pa, pa - 0.1, pa + 0.1), "ia": (0.2, 0.1, 0.3)},
                          "vlm2": {"pa": (pa, pa - 0.1, pa + 0.1), "ia": (math.nan, math.nan, math.nan)}})
        fig = figures[-1]
        fig.canvas.draw()
        (ax,) = fig.axes
        (word,) = [t for t in ax.texts if t.get_text() == "n/a"]
        box, inside = word.get_window_extent(), ax.get_window_extent()
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
        slot = ax.transData.transform((1.2, 0))[0]  # vlm2's IA slot: judge 1, right of its centre
        assert abs((box.x0 + box.x1) / 2 - slot) < 3
        assert _plots.contrast(to_rgb(word.get_color()), (1.0, 1.0, 1.0)) >= 4.5


def test_figures_have_an_accessible_name_in_words() -> None:
    # aria-label was the figure's id ("bias", "metric-heatmap").
    bias = _plots.bias_bars({"j": {"pa": (0.1, 0.0, 0.2)}})
    assert _aria(bias).startswith("Bias per judge and axis")
    heat = _plots.correlation_heatmap(["x", "y"], np.array([[1.0, 0.5], [0.5, 1.0]]), title="Spearman rho")
    assert _aria(heat) == "Spearman rho, as a heatmap of 2 rows"


def test_the_frontier_marks_a_lone_method_labels_its_speedups_and_names_the_unknown(figures) -> None:
    # A frontier of one method had no mark, 4x had no tick label, and a method of unknown speedup
    # vanished from the figure.
    from robojudge.meta import GenerationCost, acceleration_audit

    scores = {g: {"sharp": {"c1": 1.0, "c2": 2.0}} for g in ("dense", "fast", "nocost")}
    costs = {"dense": GenerationCost(seconds=4.0), "fast": GenerationCost(seconds=1.0)}
    audit = acceleration_audit("dense", scores, {"sharp": True}, costs, ["fast", "nocost"], bootstrap=0)
    assert list(audit.frontier) == ["fast"]
    svg = _audit.frontier_plot(audit)
    assert ">frontier<" in svg
    labels = [t.get_text() for t in figures[0].axes[0].get_xticklabels()]
    assert labels == ["1", "4"]
    assert "Not drawn: nocost (speedup unknown)." in _aria(svg)


def test_the_sample_size_axis_spans_only_the_n_with_data(figures) -> None:
    # An n past every generator's windows still got a tick, stretching the axis past the curves.
    from robojudge.meta import sample_size_sensitivity

    rng = np.random.default_rng(0)
    feats = {g: rng.normal(k, 1.0, (10, 3)) for k, g in enumerate(("a", "b"))}
    result = sample_size_sensitivity(feats, lambda x: float(np.abs(x.mean(axis=0)).sum()), [2, 4, 64],
                                     draws=5)
    svg = _audit.sample_size_plot(result)
    assert list(figures[0].axes[0].get_xticks()) == [2, 4]
    assert "No generator has n = 64 windows" in _aria(svg)


def test_taxonomy_metrics_stored_but_never_scored_are_not_called_missing() -> None:
    # The section said no taxonomy metric was stored, while the overview listed them, unscored.
    items = build_items()
    rows = [ResultRow(it.item_id, m, "h", "1", "ok", math.nan) for it in items
            for m in ("iq1_psnr", "mq_flow_score")]
    sec = robophys_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    assert sec.skipped is not None
    assert "(iq1_psnr, mq_flow_score) are unscored on every item" in sec.skipped


def test_close_speedups_share_one_tick_label(figures) -> None:
    # A review found a tick at every method's speedup running together ("11.0511.09", "44.29").
    _, ax = _plots._figure(4, 3)
    _audit._log_x(ax, [1.0, 1.053, 1.091, 1.154, 4.0, 4.286])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "1.15", "4"]
