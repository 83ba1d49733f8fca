import math
from dataclasses import replace

import pytest
from scipy import stats

from robojudge.report import summarize, summary_markdown, write_report
from robojudge.store import ResultRow, ResultStore


def _row(item, value, status="ok", metric="m"):
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status=status,
                     value=value, error=None if status == "ok" else "boom")


def test_summarize_groups_and_counts_failures_and_unscored_apart():
    rows = [_row("a1", 1.0), _row("a2", 3.0), _row("a3", None, "error"), _row("a4", math.nan),
            _row("a5", None), _row("b1", 10.0)]
    groups = {"a1": "A", "a2": "A", "a3": "A", "a4": "A", "a5": "A", "b1": "B"}
    a, b = summarize(rows, groups)
    # An error row failed; an ok row without a value ran and found nothing to measure (NaN with a reason).
    assert (a.group, a.n_ok, a.n_failed, a.n_unscored, a.mean) == ("A", 2, 1, 2, 2.0)
    lo, hi = stats.t.interval(0.95, 1, loc=2.0, scale=stats.sem([1.0, 3.0]))
    assert (a.ci_low, a.ci_high) == (pytest.approx(lo), pytest.approx(hi))
    assert (b.n_ok, b.n_failed, b.n_unscored, b.mean) == (1, 0, 0, 10.0) and math.isnan(b.ci_low)
    md = summary_markdown([a, b])
    assert "| metric | group | n | failed | unscored | mean |" in md
    assert "| m | A | 2 | 1 | 2 | 2.000 |" in md and "n/a" in md


def test_write_report_files(tmp_path):
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        store.add([_row("x", 1.0), _row("y", None, "error")])
        write_report(store, tmp_path / "rep", {"x": "g", "y": "g"})
    rep = tmp_path / "rep"
    assert {p.name for p in rep.iterdir()} == {"results.csv", "summary.csv", "summary.md", "errors.csv"}
    assert "y,m,h,boom" in (rep / "errors.csv").read_text()
    assert "2 results, 1 failed" in (rep / "summary.md").read_text()
    # One value: no interval, written as empty cells (it was "nan", which polars read as text).
    import csv

    (row,) = list(csv.DictReader((rep / "summary.csv").open()))
    assert (row["mean"], row["ci_low"], row["ci_high"]) == ("1.0", "", "")


def test_summary_md_names_a_metrics_configurations_by_what_differs(tmp_path):
    def row(item, value, chash, iterations):
        return ResultRow(item_id=item, metric="flow_warp_error", config_hash=chash, version="1", status="ok",
                         value=value, config={"iterations": iterations, "levels": 3})

    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        store.add([row("x", 1.0, "h3", 3), row("x", 1.1, "h1", 1)])
        write_report(store, tmp_path / "rep", {"x": "g"})
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "| flow_warp_error [iterations=1] | g |" in md and "| flow_warp_error [iterations=3] | g |" in md
    # summarize labels each summary, so the function alone names them so too; summaries made without a
    # label fall back to the config hash
    summaries = summarize([row("x", 1.0, "h3", 3), row("x", 1.1, "h1", 1)], {"x": "g"})
    assert "| flow_warp_error [iterations=1] | g |" in summary_markdown(summaries)
    assert "flow_warp_error [config h1, v1]" in summary_markdown([replace(s, label="") for s in summaries])


def test_rollouts_of_one_clip_give_a_t_interval_over_the_clip_means():
    # Three clips, two generators' rollouts each, one group (as --by task makes): 6 values, 3 clips.
    values = {"c1": (1.0, 2.0), "c2": (4.0, 4.0), "c3": (6.0, 7.0)}
    rows = [_row(f"{c}-{g}", v) for c, vs in values.items() for g, v in zip("xy", vs, strict=True)]
    clip = {r.item_id: r.item_id.split("-")[0] for r in rows}
    (s,) = summarize(rows, dict.fromkeys(clip, "T"), cluster_of=clip)
    means = [1.5, 4.0, 6.5]  # by hand
    lo, hi = stats.t.interval(0.95, 2, loc=4.0, scale=stats.sem(means))  # k - 1 = 2 degrees of freedom
    assert (s.ci_low, s.ci_high) == (pytest.approx(lo), pytest.approx(hi)) and s.ci_clips == 3
    half = 4.302653 * 2.5 / math.sqrt(3)  # t_{0.975, 2} * sd(means) / sqrt(3) = 6.2103
    assert (lo, hi) == (pytest.approx(4.0 - half), pytest.approx(4.0 + half))
    flat = stats.t.interval(0.95, 5, loc=4.0, scale=stats.sem([v for vs in values.values() for v in vs]))
    assert hi - lo > flat[1] - flat[0]  # the rows taken as independent: too narrow
    assert s.mean == pytest.approx(4.0) and s.n_ok == 6
    assert "taken over the clip means, with k - 1 degrees of freedom" in summary_markdown([s])


def test_one_value_per_clip_keeps_the_t_interval_over_the_values():
    rows = [_row(f"i{k}", v) for k, v in enumerate((1.0, 2.5, 4.0, 3.0))]
    clip = {r.item_id: f"c{r.item_id}" for r in rows}
    (s,) = summarize(rows, dict.fromkeys(clip, "G"), cluster_of=clip)
    lo, hi = stats.t.interval(0.95, 3, loc=2.625, scale=stats.sem([1.0, 2.5, 4.0, 3.0]))
    assert (s.ci_low, s.ci_high) == (pytest.approx(lo), pytest.approx(hi)) and s.ci_clips is None
    (again,) = summarize(rows, dict.fromkeys(clip, "G"))  # clips unknown: the same
    assert (again.ci_low, again.ci_high) == (s.ci_low, s.ci_high)
    assert "clip means" not in summary_markdown([s])
