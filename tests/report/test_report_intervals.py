"""Intervals stay inside a metric's range, and cells resting on few items or clips are flagged."""

import csv
import math

import pytest
from scipy import stats

from robojudge.metric_info import registry_range
from robojudge.report import summarize, summary_markdown, write_html_report
from robojudge.report._sections import ReportInput, overview_section
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item


def _row(item, value, metric="sim_task_success", version="1"):
    return ResultRow(item_id=item, metric=metric, config_hash="h", version=version, status="ok", value=value)


def test_summary_t_interval_is_cut_at_the_native_range():
    rows = [_row("a", 0.0), _row("b", 1.0), _row("c", 1.0)]
    (s,) = summarize(rows, {"a": "g", "b": "g", "c": "g"}, native_range=lambda m: (0.0, 1.0))
    lo, hi = stats.t.interval(0.95, 2, loc=2 / 3, scale=stats.sem([0.0, 1.0, 1.0]))
    assert lo < 0 and hi > 1  # the bare t-interval leaves [0, 1]: [-0.77, 2.10]
    assert (s.ci_low, s.ci_high) == (0.0, 1.0) and s.ci_clipped and s.small_n
    (raw,) = summarize(rows, {"a": "g", "b": "g", "c": "g"}, native_range=lambda m: None)
    assert raw.ci_low == pytest.approx(lo) and raw.ci_high == pytest.approx(hi) and not raw.ci_clipped
    (half,) = summarize(rows, {"a": "g", "b": "g", "c": "g"}, native_range=lambda m: (0.0, None))
    assert half.ci_low == 0.0 and half.ci_high == pytest.approx(hi)
    md = summary_markdown([s])
    assert "(cut at the range) \u2020" in md and "fewer than 10 items" in md


def test_summary_small_n_counts_clips_and_versions_stay_apart():
    rows = [_row(f"i{k}", float(k % 2)) for k in range(12)] + [_row("i0", 0.5, version="2")]
    clips = {f"i{k}": f"c{k // 4}" for k in range(12)}
    v1, v2 = summarize(rows, dict.fromkeys(clips, "g"), cluster_of=clips)
    assert (v1.version, v1.n_ok, v1.small_n) == ("1", 12, True)  # 12 values, but 3 clips
    assert (v2.version, v2.n_ok, v2.mean) == ("2", 1, 0.5)
    (many,) = summarize(rows[:12], dict.fromkeys(clips, "g"), cluster_of={i: i for i in clips})
    assert not many.small_n


def test_overview_interval_inside_the_range_and_small_n_flagged():
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="few" if k < 3 else "many")
             for k in range(23)]
    values = [0.0, 1.0, 1.0] + [float(k % 3 == 0) for k in range(20)]
    rows = [_row(it.item_id, v) for it, v in zip(items, values, strict=True)]
    rows.append(_row("i0", 7.0, metric="custom"))  # unknown to the registry
    sec = overview_section(ReportInput(rows, items, lambda m: True, bootstrap=500, seed=0,
                                       native_range=registry_range))
    table = sec.tables[0]
    assert table.columns[:5] == ["metric", "range", "n", "failed", "unscored"]
    by = {r[0].text: dict(zip(table.columns, r, strict=True)) for r in table.rows}
    few, many = by["sim_task_success"]["few"], by["sim_task_success"]["many"]
    assert by["sim_task_success"]["range"].text == "[0, 1]" and by["custom"]["range"].text == "unknown"
    assert few.value == pytest.approx(2 / 3) and 0.0 <= few.low <= few.high <= 1.0 and few.small
    assert 0.0 <= many.low < many.value < many.high <= 1.0 and not many.small
    assert "\u2020 small n" in table.to_markdown() and "<sup" in table.to_html()
    assert math.isnan(by["custom"]["many"].value) or by["custom"]["many"].text == ""


def test_html_report_tables_carry_the_flag(tmp_path):
    items = [Item(item_id=f"i{k}", video="v.mp4", generator="g" if k % 2 else "h") for k in range(6)]
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(url) as store:
        # g (odd k) gets 0, 1, 0: values that differ, so resamples do too and an interval is shown.
        store.add([_row(it.item_id, float(k % 3 == 0)) for k, it in enumerate(items)])
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    rep = write_html_report(url, tmp_path / "out", manifest=manifest, bootstrap=200)
    with (rep.index.parent / "tables" / "summary.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    assert row["g_small_n"] == "True" and 0.0 <= float(row["g_low"]) <= float(row["g_high"]) <= 1.0
    assert "small n" in rep.index.read_text()


def test_summary_cut_never_inverts_the_interval_or_leaves_out_the_mean():
    # SSIM can come out below 0 (kept as computed) though its range is [0, 1]: values all below the
    # lower end must not give an interval whose low end lies above its high end.
    vals = [-0.1, -0.06, -0.02]
    rows = [_row(k, v, metric="iq1_ssim") for k, v in zip("abc", vals, strict=True)]
    group = dict.fromkeys("abc", "g")
    (s,) = summarize(rows, group, native_range=lambda m: (0.0, 1.0))
    lo, hi = stats.t.interval(0.95, 2, loc=-0.06, scale=stats.sem(vals))
    assert s.ci_low <= s.mean <= s.ci_high
    # Values past the lower end show that end does not bound them: that side is kept as computed.
    assert (s.ci_low, s.ci_high) == (pytest.approx(lo), pytest.approx(hi)) and not s.ci_clipped
    # One value past the upper end, the rest inside: only the lower end may be cut.
    mixed = [0.05, 0.9, 1.3]
    rows = [_row(k, v, metric="iq1_ssim") for k, v in zip("abc", mixed, strict=True)]
    (m,) = summarize(rows, group, native_range=lambda m: (0.0, 1.0))
    lo, hi = stats.t.interval(0.95, 2, loc=sum(mixed) / 3, scale=stats.sem(mixed))
    assert lo < 0 and hi > 1
    assert (m.ci_low, m.ci_high) == (0.0, pytest.approx(hi)) and m.ci_clipped


def test_overview_interval_of_values_outside_the_range_holds_the_mean():
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="g") for k in range(12)]
    values = [-0.05 + 0.01 * (k % 3 - 1) for k in range(12)]
    rows = [_row(it.item_id, v, metric="iq1_ssim") for it, v in zip(items, values, strict=True)]
    sec = overview_section(ReportInput(rows, items, lambda m: True, bootstrap=500, seed=0,
                                       native_range=lambda m: (0.0, 1.0)))
    (row,) = sec.tables[0].rows
    cell = row[sec.tables[0].columns.index("g")]  # (the n and failed columns of g follow)
    assert cell.value == pytest.approx(-0.05)
    # A bootstrap percentile interval lies within the observed values, never at the range's end.
    assert min(values) <= cell.low < cell.value < cell.high <= max(values) < 0
