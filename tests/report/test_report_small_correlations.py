"""Correlations on tiny samples: none over two items, and the small-n flag on metric correlations.

Through two points every line fits, so the Pearson r (and Spearman rho) of a metric with the labels
over two items is +-1 whatever the metric is worth; it was printed as 1.00 and marked best. Over three
items, x = 1, 2, 3 and labels 1, 2, 4: r = 3 / sqrt(2 * 14/3) = 0.98198 and rho = 1.

docs/report.md flags a value resting on fewer than 5 clips as small n; the metric correlation table
had no flag at all. Two metrics a = 1..n and b = a^2 have Spearman rho 1 over any items.
"""

from __future__ import annotations

import math

import pytest
from _report_data import higher_is_better

from robojudge.report import label_agreement
from robojudge.report._robophys import heatmap_section
from robojudge.report._sections import ReportInput
from robojudge.report._tables import SMALL_NOTE, Cell, Table
from robojudge.store import ResultRow
from robojudge.suite import Item


def _labelled(values: list[float], labels: list[int]) -> tuple[list[Item], list[ResultRow]]:
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id="c", generator="g", labels={"pa": y, "ia": y})
             for k, y in enumerate(labels)]
    rows = [ResultRow(f"i{k}", "iq1_psnr", "h", "1", "ok", v) for k, v in enumerate(values)]
    return items, rows


def test_two_items_give_no_correlation_and_three_do() -> None:
    items, rows = _labelled([1.0, 2.0], [1, 5])
    two = label_agreement(rows, items, higher_is_better, bootstrap=0)
    assert [(r.axis, r.n) for r in two] == [("pa", 2), ("ia", 2)]
    assert all(math.isnan(v) for r in two for v in (r.pearson, r.pearson_low, r.pearson_high, r.spearman))
    items, rows = _labelled([1.0, 2.0, 3.0], [1, 2, 4])
    three = label_agreement(rows, items, higher_is_better, bootstrap=0)
    assert [r.pearson for r in three] == pytest.approx([3 / math.sqrt(28 / 3)] * 2)
    assert [r.spearman for r in three] == pytest.approx([1.0, 1.0])


def _heatmap(n_items: int, n_clips: int):
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k % n_clips}", generator="g")
             for k in range(n_items)]
    rows = [ResultRow(f"i{k}", m, "h", "1", "ok", v) for k in range(n_items)
            for m, v in (("iq1_psnr", k + 1.0), ("iq1_ssim", (k + 1.0) ** 2))]
    section = heatmap_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    return section.tables[0]


def test_metric_correlations_carry_the_small_n_flag() -> None:
    small = _heatmap(6, 3)  # 6 items in 3 clips: small n
    big = _heatmap(10, 10)  # 10 items in 10 clips: not
    for table, flagged in ((small, True), (big, False)):
        assert table.columns == ["metric", "direction", "iq1_psnr", "iq1_ssim"]
        cells = [c for r in table.rows for c in r[2:]]
        assert [c.value for c in cells] == pytest.approx([1.0] * 4)
        assert [c.small for c in cells] == [flagged] * 4
    assert "small_n" in small.to_csv().splitlines()[0]
    assert small.to_csv().splitlines()[1].endswith("True")
    assert "\u2020" in small.to_markdown() and "\u2020" not in big.to_markdown()


def test_the_judge_detail_table_gives_no_kendall_over_two_items() -> None:
    """As r and rho: Kendall's tau of two items is +-1 whatever the judge is worth; over three it is
    given (x = 1, 2, 3 against labels 1, 2, 4: every pair concordant, tau = 1). The Overall pools the
    two axes' 4 (item, axis) pairs, two copies of the same two points: with no axis's tau defined it is
    not given either (robojudge.meta.overall); over three items it is (tau-b with the ties from pooling:
    1 too, as scipy gives)."""
    from robojudge.report._label_sections import judges_section

    def detail(n: int) -> dict[str, float]:
        items, _ = _labelled([0.0] * n, [1, 2, 4][:n])
        rows = [ResultRow(f"i{k}", f"judge:m:{a}", "h", "1", "ok", float(k + 1)) for k in range(n)
                for a in ("pa", "ia")]
        section, _ = judges_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
        table = next(t for t in section.tables if t.name == "judge_statistics")
        col = table.columns.index("kendall")
        return {r[1].text: r[col].value for r in table.rows}

    two = detail(2)
    assert math.isnan(two["PA"]) and math.isnan(two["IA"]) and math.isnan(two["Overall"])
    assert detail(3) == pytest.approx({"PA": 1.0, "IA": 1.0, "Overall": 1.0})


def test_the_small_n_key_speaks_of_intervals_only_under_a_table_that_shows_one() -> None:
    # The correlations table shows no interval, yet its key said "so the interval is rough".
    small = _heatmap(6, 3)
    for text in (small.to_markdown(), small.to_latex()):
        assert "small n: fewer than 10 items or 5 clips, so the value is rough." in text
        assert "interval" not in text
    table = Table("t", "t", ["x"])
    table.add([Cell(0.5, 0.25, 0.75, small=True)])
    assert SMALL_NOTE in table.to_markdown() and "interval is rough." in table.to_latex()
