import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from robojudge.meta import clustered_mean_interval, mean_confidence_interval
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


def test_summary_md_intro_and_summary_csv_columns_are_documented(tmp_path):
    # Review rev6 F3: the intro said "the Student-t 95% interval of each mean" beside a clip-based
    # interval, and summary.csv's new ci_clips column was documented nowhere.
    import csv
    import re
    from pathlib import Path

    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        store.add([_row(f"i{k}", float(k)) for k in range(6)])
        write_report(store, tmp_path / "rep", {f"i{k}": "g" for k in range(6)},
                     cluster_of={f"i{k}": f"c{k // 2}" for k in range(6)})
    md = (tmp_path / "rep" / "summary.md").read_text()
    intro = next(line for line in md.splitlines() if line.startswith("Intervals:"))
    assert "cluster-robust t-interval around the mean with the clips as units" in intro
    header = next(csv.reader((tmp_path / "rep" / "summary.csv").open()))
    assert header[-2:] == ["ci_clips", "constant"]
    docs = (Path(__file__).parents[2] / "docs" / "report.md").read_text()
    listed = re.search(r"`summary.csv` has one row per metric configuration and group, with the columns "
                       r"\(in this order\)(.*?)\.", docs, re.S)
    assert listed is not None
    assert re.findall(r"`(\w+)`", listed.group(1)) == header


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
    assert "k - 1 degrees of freedom" in summary_markdown([s])


def test_clips_of_unequal_sizes_get_an_interval_around_the_mean_shown():
    # Review rev6 F2: c0 with 12 rollouts near 0.9 and 11 one-rollout clips near 0.25 showed mean 0.608
    # beside the clip means' interval [0.192, 0.440]. The cluster-robust (CR1) interval is centred on it.
    rows = [_row(f"a{s}", 0.9 + 0.005 * s) for s in range(12)] + [_row(f"b{c}", 0.2 + 0.01 * c)
                                                                   for c in range(1, 12)]
    clip = {r.item_id: ("c0" if r.item_id.startswith("a") else r.item_id) for r in rows}
    (s,) = summarize(rows, dict.fromkeys(clip, "T"), cluster_of=clip)
    assert s.ci_clips == 12 and s.ci_low < s.mean < s.ci_high
    assert s.ci_high - s.mean == pytest.approx(s.mean - s.ci_low)
    # By hand: se = sqrt(k / (k - 1) * sum over clips of (sum of x - mean)^2) / n, t with k - 1 df.
    x = np.array([r.value for r in rows])
    sums = [sum(v - x.mean() for r, v in zip(rows, x, strict=True) if clip[r.item_id] == c)
            for c in sorted(set(clip.values()))]
    se = math.sqrt(12 / 11 * sum(t * t for t in sums)) / 23
    assert s.ci_high == pytest.approx(x.mean() + stats.t.ppf(0.975, 11) * se)
    # A small case with round numbers: clips {1, 2, 3}, {4}, {6, 8}: mean 4, clip sums -6, 0, 6,
    # se = sqrt(3 / 2 * 72) / 6 = sqrt(3), t_{0.975, 2} = 4.302653.
    ci = clustered_mean_interval([[1.0, 2.0, 3.0], [4.0], [6.0, 8.0]])
    assert (ci.n, ci.mean) == (6, 4.0)
    half = 4.302653 * math.sqrt(3)
    assert (ci.low, ci.high) == (pytest.approx(4 - half), pytest.approx(4 + half))
    # One value per cluster: the ordinary t-interval.
    plain = mean_confidence_interval([1.0, 2.5, 4.0, 3.0])
    one = clustered_mean_interval([[1.0], [2.5], [4.0], [3.0]])
    assert (one.low, one.high) == (pytest.approx(plain.low), pytest.approx(plain.high))
    assert "centred on the mean shown" in summary_markdown([s])


def test_one_value_per_clip_keeps_the_t_interval_over_the_values():
    rows = [_row(f"i{k}", v) for k, v in enumerate((1.0, 2.5, 4.0, 3.0))]
    clip = {r.item_id: f"c{r.item_id}" for r in rows}
    (s,) = summarize(rows, dict.fromkeys(clip, "G"), cluster_of=clip)
    lo, hi = stats.t.interval(0.95, 3, loc=2.625, scale=stats.sem([1.0, 2.5, 4.0, 3.0]))
    assert (s.ci_low, s.ci_high) == (pytest.approx(lo), pytest.approx(hi)) and s.ci_clips is None
    (again,) = summarize(rows, dict.fromkeys(clip, "G"))  # clips unknown: the same
    assert (again.ci_low, again.ci_high) == (s.ci_low, s.ci_high)
    assert "clip means" not in summary_markdown([s])


def test_a_group_of_identical_values_gets_no_interval_and_says_why():
    # The demo's oracle scored ctg_camera_control 1.0 on all 10 clips, printed as [1.00, 1.00]: a t-interval
    # of no width reads as certainty about other videos. Withheld, as zero-width bootstrap intervals are.
    rows = [_row(f"a{k}", 1.0) for k in range(10)] + [_row(f"b{k}", 0.5 + k / 10) for k in range(3)]
    a, b = summarize(rows, {r.item_id: r.item_id[0] for r in rows})
    assert (a.n_ok, a.mean, a.std, a.constant) == (10, 1.0, 0.0, True)
    assert math.isnan(a.ci_low) and math.isnan(a.ci_high)
    assert not b.constant and b.ci_low < b.mean < b.ci_high
    md = summary_markdown([a, b])
    assert "| m | a | 10 | 0 | 0 | 1.000 | 0.000 | n/a |" in md
    assert "every value of the group is the same" in md
    assert "every value of the group is the same" not in summary_markdown([b])
    # clustered groups too: three clips of identical values
    clip = {f"c{k}-{g}": f"c{k}" for k in range(3) for g in "xy"}
    (c,) = summarize([_row(i, 2.0) for i in clip], dict.fromkeys(clip, "T"), cluster_of=clip)
    assert c.constant and c.ci_clips == 3 and math.isnan(c.ci_low)


def test_identical_values_whose_mean_rounds_off_them_are_still_constant():
    # 30 copies of this float sum to a mean an ulp above it, with a std of 2.3e-16: an exact test of
    # std == 0 printed the zero-width interval [0.95, 0.95].
    v = 0.9523526191711427
    (s,) = summarize([_row(f"i{k}", v) for k in range(30)], {f"i{k}": "G" for k in range(30)})
    assert s.mean != v and s.std > 0  # the rounding the test is about
    assert s.constant and math.isnan(s.ci_low) and math.isnan(s.ci_high)


@pytest.mark.parametrize("values", [
    [1e-13 * (k + 1) for k in range(9)],        # tiny values that differ
    [1e-11 * (1 + 0.01 * k) for k in range(5)],  # a 1% spread around 1e-11
    [2e12 + d for d in (-1.0, 0.0, 1.0, 0.0)],    # huge values 1 apart
])
def test_values_that_differ_however_small_or_large_keep_their_interval(values):
    # A relative and absolute tolerance of 1e-12 called these constant and withheld their interval
    # (review rev13 F2); only identical values are
    (s,) = summarize([_row(f"i{k}", v) for k, v in enumerate(values)],
                     {f"i{k}": "G" for k in range(len(values))})
    assert not s.constant and s.ci_low < s.mean < s.ci_high
