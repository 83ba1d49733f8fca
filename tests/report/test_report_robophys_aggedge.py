"""The RoboPhys-3D and threshold sections say what their numbers rest on (audit aggedge F3-F7): the
generators behind each row of the threshold table, no AFS or RoboPhyscore over a set a generator lacks a
metric of, Table 13 bounds in place of a degenerate pool, out-of-range values, and the "so few
configurations" sentence only where they are few."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _report_data import higher_is_better
from scipy import stats

from robojudge.report._robophys import robophys_section, sensitivity_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item


def _ok(item: str, metric: str, value: float) -> ResultRow:
    return ResultRow(item, metric, "h", "1", "ok", value)


def _failed(item: str, metric: str) -> ResultRow:
    return ResultRow(item, metric, "h", "1", "error", None, error="boom")


def test_robophys_names_normalized_values_outside_the_unit_range() -> None:
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", generator=g)
             for g in "AB" for c in range(3)]
    rows = [_ok(it.item_id, "ts_action_planner", 1.0) for it in items]
    rows[0] = _ok("A0", "ts_action_planner", 1.5)  # raw value outside ts_action_planner's [0, 1]
    inp = ReportInput(rows, items, higher_is_better, bootstrap=0, native_range=lambda m: (0.0, 1.0))
    sec = robophys_section(inp)
    assert "Normalized values outside [0, 1]" in sec.intro
    assert "ts_action_planner (1, e.g. raw 1.5)" in sec.intro


def test_degenerate_pool_is_said_to_use_table_13_bounds() -> None:
    # One item: cs_collision_count's pool of one value has no percentiles; Table 13's [0, 68] serve.
    items = [Item(item_id="a", video="v.mp4", generator="g")]
    sec = robophys_section(ReportInput([_ok("a", "cs_collision_count", 2.0)], items, higher_is_better,
                                       bootstrap=0))
    (table,) = sec.tables
    assert table.rows[0][table.columns.index("CS")].value == pytest.approx((68 - 2) / 68)
    assert "Normalized with their Table 13 bounds instead" in sec.intro
    assert "cs_collision_count" in sec.intro.split("Table 13 bounds instead")[1]


def test_robophyscore_and_afs_na_for_a_generator_lacking_a_metric_everywhere() -> None:
    # Audit scenario n: R's ta_ndtw failed on all 4 items; PLA alone would give R 1.0 and the top row.
    items = [Item(item_id=f"{g}{c}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g)
             for g in "PQR" for c in range(4)]
    ndtw = {"P": 0.9, "Q": 0.5}
    pla = {"P": 2.0, "Q": 3.0, "R": 5.0}
    rows = []
    for g in "PQR":
        for c in range(4):
            rows.append(_ok(f"{g}{c}", "ta_ndtw", ndtw[g] + 0.01 * c) if g in ndtw
                        else _failed(f"{g}{c}", "ta_ndtw"))
            rows.append(_ok(f"{g}{c}", "pla_physical_commonsense", pla[g]))
    (table,) = robophys_section(ReportInput(rows, items, higher_is_better, bootstrap=0)).tables
    by = {r[0].text: r for r in table.rows}
    rps = table.columns.index("RoboPhyscore (2/8)")
    # By hand: P = mean(mean(0.90..0.93), (2 - 1) / 4) = mean(0.915, 0.25) = 0.5825.
    assert by["P"][rps].value == pytest.approx(0.5825)
    assert by["Q"][rps].value == pytest.approx(np.mean([0.515, 0.5]))
    for col in (rps, 1, table.columns.index("level 3"), table.columns.index("TA")):
        assert math.isnan(by["R"][col].value), table.columns[col]
    assert by["R"][table.columns.index("PLA")].value == pytest.approx(1.0)  # its own metric stands
    assert "R: ta_ndtw 0 of 4" in table.note and "n/a, for R: ta_ndtw" in table.note


def _sensitivity_rows(n_gens: int, partial: bool) -> tuple[list[ResultRow], list[Item]]:
    rng = np.random.default_rng(7)
    items, rows = [], []
    for k in range(n_gens):
        tsg = k / (n_gens - 1)
        for c in range(4):
            iid = f"m{k}-c{c}"
            items.append(Item(item_id=iid, video="v.mp4", clip_id=f"c{c}", source="s", generator=f"m{k}"))
            rows += [_ok(iid, "ts_action_planner", 1.0 if c < round(4 * tsg) else 0.0),
                     _ok(iid, "iq1_ssim", round(0.3 + 0.5 * tsg + rng.normal(0, 0.02), 4))]
            if not (partial and k == 2 and c == 0):
                rows.append(_ok(iid, "cs_collision_count", round(40 - 30 * tsg + rng.normal(0, 1), 2)))
    return rows, items


def test_threshold_rows_count_and_name_the_generators_they_leave_out() -> None:
    rows, items = _sensitivity_rows(6, partial=True)
    sec = sensitivity_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    (table,) = sec.tables
    n_col = table.columns.index("n")
    kept = {r[0].value: r for r in table.rows}
    both = [r for r in table.rows if "cs_collision_count" in (r[table.columns.index("metrics")].text or "")]
    assert both, "cs_collision_count is selected at some threshold"
    for r in both:
        assert r[n_col].text == "5"
    assert "over 5 of 6: m2 (lacks cs_collision_count)" in table.note
    # The row's r is over the 5: by hand, with m2 left out.
    r0 = both[0]
    sel = [m.strip() for m in r0[table.columns.index("metrics")].text.split(",")]
    per = {}
    for m in (*sel, "ts_action_planner"):
        vals = {}
        for row in rows:
            if row.metric == m:
                vals.setdefault(row.item_id.split("-")[0], []).append(row.value)
        per[m] = vals
    assert kept  # (the table is keyed by threshold)
    assert r0[table.columns.index("r vs ts_action_planner")].value == pytest.approx(
        _hand_r(per, sel, [f"m{k}" for k in range(6) if k != 2]), abs=1e-9)


def _hand_r(per: dict[str, dict[str, list[float]]], sel: list[str], gens: list[str]) -> float:
    """Pearson r of the kept set's mean of normalized per-generator means with task success, by scipy;
    normalized as the report does: SSIM as is, collisions (pool 1st-99th percentiles, lower is better)."""
    pool = np.array([v for g in per["cs_collision_count"] for v in per["cs_collision_count"][g]])
    lo, hi = np.percentile(pool, [1, 99])

    def norm(m: str, v: float) -> float:
        return float(np.clip((hi - v) / (hi - lo), 0, 1)) if m == "cs_collision_count" else v

    score = [np.mean([np.mean([norm(m, v) for v in per[m][g]]) for m in sel]) for g in gens]
    ts = [np.mean(per["ts_action_planner"][g]) for g in gens]
    return float(stats.pearsonr(score, ts).statistic)


def test_few_configurations_sentence_only_under_ten() -> None:
    rows, items = _sensitivity_rows(6, partial=False)
    few = sensitivity_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    assert ("With 6 configurations (fewer than 10) the correlations across generators (eq. 3's and those "
            "with the task-success measures) are very uncertain.") in few.intro
    rows, items = _sensitivity_rows(12, partial=False)
    many = sensitivity_section(ReportInput(rows, items, higher_is_better, bootstrap=0))
    assert many.tables and "very uncertain" not in many.intro
    assert "over " not in many.tables[0].note.split("MAE")[-1]  # every row over all 12
