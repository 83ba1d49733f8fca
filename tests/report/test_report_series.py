"""Stored results are read per configuration (metric or judge, config hash, version), never merged."""

import numpy as np
import pytest
from scipy import stats

from robojudge.report import (
    CALIBRATED,
    calibrated_scores,
    judge_names,
    judge_scores,
    judge_series,
    judges_report,
    label_agreement,
    metric_series,
)
from robojudge.store import ResultRow
from robojudge.suite import Item


def _row(item, metric, value, chash="h", version="1", config=None, status="ok"):
    return ResultRow(item_id=item, metric=metric, config_hash=chash, version=version, status=status,
                     value=value if status == "ok" else None, config=config,
                     error=None if status == "ok" else "boom")


def _items(n=30):
    rng = np.random.default_rng(0)
    pa, ia = rng.integers(1, 6, n), rng.integers(1, 6, n)
    return [Item(item_id=f"i{k}", video="v", clip_id=f"c{k}", labels={"pa": int(pa[k]), "ia": int(ia[k])})
            for k in range(n)], pa.astype(float), ia.astype(float)


def test_metric_labels_name_what_differs():
    rows = [_row("a", "flow", 1.0, "h1", config={"fps": None, "size": 64}),
            _row("a", "flow", 2.0, "h2", config={"fps": 2, "size": 64}),
            _row("a", "ssim", 0.5, "s1", "1"), _row("a", "ssim", 0.6, "s1", "2"),
            _row("a", "psnr", 30.0, "p1aaaaaaaaaa"), _row("a", "psnr", 31.0, "p2bbbbbbbbbb"),
            _row("a", "solo", 3.0)]
    labels = sorted(s.label for s in metric_series(rows))
    assert labels == ["flow [fps=2]", "flow [fps=null]", "psnr [config p1aaaaaa]", "psnr [config p2bbbbbb]",
                      "solo", "ssim [v1]", "ssim [v2]"]


def test_long_values_that_share_a_beginning_are_told_apart_by_what_differs():
    # Two KIVA readers in one run folder: the paths differ only after a long common beginning, which
    # a cut from the start would print twice alike (and fall back to config hashes).
    base = "/data/runs/demo/kiva/"
    rows = [_row("a", "kiva", 1.0, "h1", config={"reader": base + "adroit-11aa/reader.pt"}),
            _row("a", "kiva", 2.0, "h2", config={"reader": base + "fetch-65c0/reader.pt"}),
            _row("a", "m", 1.0, "m1", config={"model": "x" * 30}),
            _row("a", "m", 2.0, "m2", config={"model": "y" * 30})]
    labels = sorted(s.label for s in metric_series(rows))
    assert labels == ["kiva [reader=...adroit-11aa/reader.pt]", "kiva [reader=...fetch-65c0/reader.pt]",
                      "m [model=" + "x" * 21 + "...]", "m [model=" + "y" * 21 + "...]"]


def test_newest_row_wins_only_within_one_configuration():
    """The old report kept the newest row per (item, metric) across configs: here both survive."""
    rows = [_row("a", "m", 1.0, "old"), _row("a", "m", 5.0, "new"), _row("b", "m", 2.0, "old")]
    by = {s.key.config_hash: s.values for s in metric_series(rows)}
    assert by == {"old": {"a": 1.0, "b": 2.0}, "new": {"a": 5.0}}


def _judge_rows(items, name, values_pa, values_ia, model, scoring="expected", chash=None):
    base = {"backend": "openai", "model": model, "scoring": scoring}
    out = []
    for it, p, i in zip(items, values_pa, values_ia, strict=True):
        for axis, v in (("pa", p), ("ia", i)):
            cfg = {**base, "rubric": {"id": axis, "version": "1"}}
            h = chash or f"{model}-{scoring}-{axis}"
            if not np.isnan(v):
                out.append(_row(it.item_id, f"judge:{name}:{axis}", float(v), h, config=cfg))
    return out


def test_two_models_under_one_inline_name_are_two_judges():
    items, pa, ia = _items()
    exact = _judge_rows(items, "qwen-7b", pa, ia, "orgA/qwen-7b")
    noisy = _judge_rows(items, "qwen-7b", np.clip(pa + 1, 1, 5), np.clip(ia - 1, 1, 5), "orgB/qwen-7b")
    rows = exact + noisy
    assert judge_names(rows) == ["qwen-7b [model=orgA/qwen-7b]", "qwen-7b [model=orgB/qwen-7b]"]
    report, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    a = report.cells["qwen-7b [model=orgA/qwen-7b]"]
    b = report.cells["qwen-7b [model=orgB/qwen-7b]"]
    assert a["pa"].stats["mse"].value == 0.0 and a["pa"].n == len(items)
    assert b["pa"].stats["mse"].value == pytest.approx(np.mean((np.clip(pa + 1, 1, 5) - pa) ** 2))
    with pytest.raises(ValueError, match="2 configurations.*never merged.*orgA"):
        judge_scores(rows, items, "qwen-7b")
    got = judge_scores(rows, items, "qwen-7b [model=orgB/qwen-7b]")
    np.testing.assert_array_equal(got["ia"], np.clip(ia - 1, 1, 5))


def test_argmax_fallback_rows_are_their_own_judge():
    items, pa, ia = _items()
    half = len(items) // 2
    expected = _judge_rows(items[:half], "vlm", pa[:half] + 0.4, ia[:half], "m")
    argmax = _judge_rows(items[half:], "vlm", pa[half:], ia[half:], "m", scoring="argmax")
    js = judge_series(expected + argmax)
    assert [j.label for j in js] == ["vlm [scoring=argmax]", "vlm [scoring=expected]"]
    assert [len(j.values("pa")) for j in js] == [len(items) - half, half]


def test_pa_and_ia_without_config_pair_up_by_name():
    items, pa, ia = _items(6)
    rows = [_row(it.item_id, "judge:j:pa", float(p), "hp") for it, p in zip(items, pa, strict=True)]
    rows += [_row(it.item_id, "judge:j:ia", float(i), "hi") for it, i in zip(items, ia, strict=True)]
    (j,) = judge_series(rows)
    assert j.label == "j" and set(j.axes) == {"pa", "ia"}


def test_label_agreement_and_calibrated_features_keep_configurations_apart():
    items, pa, ia = _items(40)
    rows = [_row(it.item_id, "flow", float(p), "h1", config={"fps": 1})
            for it, p in zip(items, pa, strict=True)]
    # The second configuration only on the first half, with other values: merged, it would replace
    # half of the first configuration's column.
    rows += [_row(it.item_id, "flow", float(6 - p), "h2", config={"fps": 2})
             for it, p in list(zip(items, pa, strict=True))[:20]]
    out = {(a.metric, a.axis): a for a in label_agreement(rows, items, lambda m: True, bootstrap=0)}
    assert out["flow [fps=1]", "pa"].pearson == pytest.approx(1.0) and out["flow [fps=1]", "pa"].n == 40
    assert out["flow [fps=2]", "pa"].pearson == pytest.approx(-1.0) and out["flow [fps=2]", "pa"].n == 20
    assert out["flow [fps=2]", "ia"].pearson == pytest.approx(
        stats.pearsonr(6 - pa[:20], ia[:20]).statistic)
    cal = calibrated_scores(rows, items, lambda m: True, n_folds=4)
    assert cal.metrics == ("flow [fps=1]", "flow [fps=2]")
    _, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0)
    assert [r.judge for r in table] == [CALIBRATED]
