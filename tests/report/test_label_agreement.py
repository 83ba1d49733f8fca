import numpy as np
import pytest
from scipy import stats

from robojudge.report import label_agreement, write_label_agreement
from robojudge.store import ResultRow
from robojudge.suite import Item


def _row(item, metric, value, status="ok"):
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status=status,
                     value=value if status == "ok" else None, error=None if status == "ok" else "x")


def test_orientation_and_values_match_scipy():
    rng = np.random.default_rng(0)
    pa = rng.integers(1, 6, 40)
    ia = rng.integers(1, 6, 40)
    items = [
        Item(item_id=f"i{k}", video="v", clip_id=f"c{k // 2}", labels={"pa": int(pa[k]), "ia": int(ia[k])})
        for k in range(40)
    ]
    items.append(Item(item_id="unlabelled", video="v"))
    noisy = pa + rng.normal(0, 1, 40)
    rows = [_row(f"i{k}", "lower_better", -noisy[k]) for k in range(40)]
    rows += [_row(f"i{k}", "higher_better", float(noisy[k])) for k in range(40)]
    rows += [_row("unlabelled", "higher_better", 99.0), _row("i0", "broken", None, "error")]
    rows += [_row("i0", "judge:qwen:pa", 3.0)]  # judges are compared in the judges table, not here
    out = label_agreement(rows, items, lambda m: m != "lower_better", bootstrap=300, seed=1)
    by = {(a.metric, a.axis): a for a in out}
    assert {m for m, _ in by} == {"lower_better", "higher_better"}  # failed-only metric dropped
    lo, hi = by[("lower_better", "pa")], by[("higher_better", "pa")]
    # Negating a lower-is-better metric makes it identical to the higher-is-better copy.
    assert lo.pearson == pytest.approx(hi.pearson) and lo.n == 40
    assert hi.pearson == pytest.approx(stats.pearsonr(noisy, pa).statistic)
    assert hi.spearman == pytest.approx(stats.spearmanr(noisy, pa).statistic)
    assert hi.pearson_low < hi.pearson < hi.pearson_high
    ia_cell = by[("higher_better", "ia")]
    assert ia_cell.pearson == pytest.approx(stats.pearsonr(noisy, ia).statistic)


def test_no_labels_means_nothing_to_report(tmp_path):
    items = [Item(item_id="a", video="v")]
    assert label_agreement([_row("a", "m", 1.0)], items, lambda m: True) == []
    write_label_agreement([], tmp_path)
    assert (tmp_path / "label_agreement.csv").read_text().startswith("metric,axis,n,")


def test_best_is_compared_only_on_the_same_items(tmp_path):
    """A metric scored on 4 of 12 labelled items, all agreeing, is not the best against metrics
    scored on all 12: its r rests on other rollouts. The table's bold marks only the shared group."""
    from robojudge.report._label_sections import metrics_section
    from robojudge.report._sections import ReportInput

    rng = np.random.default_rng(3)
    pa = rng.integers(1, 6, 12)
    items = [Item(item_id=f"i{k}", video="v", clip_id=f"c{k}", labels={"pa": int(pa[k]), "ia": int(pa[k])})
             for k in range(12)]
    rows = [_row(f"i{k}", "wide_a", float(pa[k] + rng.normal(0, 1))) for k in range(12)]
    rows += [_row(f"i{k}", "wide_b", float(pa[k] + rng.normal(0, 2))) for k in range(12)]
    few = np.argsort(pa)[[0, 4, 8, 11]]
    rows += [_row(f"i{k}", "few", float(pa[k])) for k in few]  # r = 1 on its four items
    out = label_agreement(rows, items, lambda m: True, bootstrap=100, seed=1)
    by = {(a.metric, a.axis): a for a in out}
    assert by[("few", "pa")].pearson > by[("wide_a", "pa")].pearson
    assert [by[(m, "pa")].compared for m in ("wide_a", "wide_b", "few")] == [True, True, False]
    sec = metrics_section(ReportInput(rows, items, lambda m: True, bootstrap=100, seed=1))
    (table,) = sec.tables
    bold = {row[0].text for row in table.rows if row[2].text == "PA" and row[4].best}
    assert bold == {"wide_a" if by[("wide_a", "pa")].pearson > by[("wide_b", "pa")].pearson else "wide_b"}
    assert "Not compared: few." in table.note


def test_written_files_follow_the_report_tables_conventions(tmp_path):
    # The demo's 4 clips: label_agreement.csv wrote NaN as "nan" (text to a spreadsheet), had no small-n
    # flag, and the .md neither marked small n nor said why no interval is shown (audit reportdata F4).
    import csv

    rng = np.random.default_rng(5)
    pa = rng.integers(1, 6, 20)
    items = [Item(item_id=f"i{k}", video="v", clip_id=f"c{k % 4}",
                  labels={"pa": int(pa[k]), "ia": int(pa[k])}) for k in range(20)]
    rows = [_row(f"i{k}", "flow", float(pa[k] + rng.normal(0, 1))) for k in range(20)]
    rows += [_row(f"i{k}", "two_items", float(k)) for k in range(2)]  # no correlation over 2 items
    out = label_agreement(rows, items, lambda m: True, bootstrap=50, seed=1)
    write_label_agreement(out, tmp_path)
    with (tmp_path / "label_agreement.csv").open() as f:
        got = {(r["metric"], r["axis"]): r for r in csv.DictReader(f)}
    flow, two = got["flow", "pa"], got["two_items", "pa"]
    assert float(flow["pearson"]) > 0 and flow["pearson_low"] == "" and flow["small_n"] == "True"
    assert two["pearson"] == two["spearman"] == "" and two["n"] == "2"
    assert "nan" not in (tmp_path / "label_agreement.csv").read_text()
    md = (tmp_path / "label_agreement.md").read_text()
    r = next(a for a in out if (a.metric, a.axis) == ("flow", "pa"))
    assert f"| flow | pa | 20 | {r.pearson:.2f} \u2020 | {r.spearman:.2f} \u2020 |" in md
    assert "\u2020 small n: fewer than 10 items or 5 clips" in md
    assert "No interval for flow PA, flow IA: scored items in 4 cluster(s); a correlation's interval needs " \
           "at least 5." in md
    assert "| two_items | pa | 2 | n/a \u2020 | n/a \u2020 |" in md  # (as in tables/metric_agreement.md)
