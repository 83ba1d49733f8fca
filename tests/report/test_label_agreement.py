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
