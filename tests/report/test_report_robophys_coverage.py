"""RoboPhys-3D scores per generator when some clips could not be measured.

A generator whose other clips are blank (consistency metrics leave them unscored) was averaged over the
one clip it could be measured on, and marked best, with no word. Now such a (generator, metric) is named
under the table, and the generator is not compared for the best of the columns that metric enters.
"""

from __future__ import annotations

import math

import pytest
from _report_data import higher_is_better

from robojudge.aggregate import ROBOPHYSCORE_THRESHOLD, select_metrics
from robojudge.report._robophys import robophys_section, sensitivity_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item


def _row(item: str, metric: str, value: float | None) -> ResultRow:
    if value is None:  # unscored, as a blank clip is on a consistency metric
        return ResultRow(item, metric, "h", "1", "ok", float("nan"), details={"unscored_reason": "blank"})
    return ResultRow(item, metric, "h", "1", "ok", value)


def test_a_generator_measured_on_some_clips_is_named_and_not_marked_best() -> None:
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("good", "broken") for k in range(3)]
    rows = []
    for k in range(3):
        # good: three real clips, fair everywhere; broken: one clean clip (better than good's) and two
        # blank ones, unscored on the consistency metric and poor on the image one.
        rows += [_row(f"good{k}", "cc_photometric", 3.0 + k), _row(f"good{k}", "iq1_psnr", 30.0 + k)]
        rows += [_row(f"broken{k}", "cc_photometric", 9.0 if k == 0 else None),
                 _row(f"broken{k}", "iq1_psnr", 31.0 if k == 0 else 10.0)]
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    (table,) = sec.tables
    by = {r[0].text: r for r in table.rows}
    cc = table.columns.index("CC")
    # broken's CC rests on its one clean clip and is the higher one, yet it is not marked best.
    assert by["broken"][cc].value > by["good"][cc].value
    assert not by["broken"][cc].best and by["good"][cc].best
    assert not by["broken"][1].best and by["good"][1].best  # nor on the AFS, which CC enters
    assert "broken: cc_photometric 1 of 3" in table.note and "good:" not in table.note
    iq = table.columns.index("IQ-1")
    assert by["good"][iq].best  # a column broken is fully measured on is compared as before


def test_a_generator_without_any_value_on_a_covered_level_has_no_afs() -> None:
    # ol_average_precision (level 3) measures good but none of broken's clips: broken's level 3 is n/a,
    # and its AFS, which counted that level as 0, is n/a too.
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("good", "broken") for k in range(3)]
    rows = []
    for k in range(3):
        rows += [_row(f"good{k}", "iq1_psnr", 30.0 + k), _row(f"good{k}", "ol_average_precision", 0.5)]
        rows += [_row(f"broken{k}", "iq1_psnr", 40.0 + k), _row(f"broken{k}", "ol_average_precision", None)]
    (table,) = robophys_section(ReportInput(rows, items, higher_is_better)).tables
    by = {r[0].text: r for r in table.rows}
    level1, level3 = table.columns.index("level 1"), table.columns.index("level 3")
    assert by["good"][1].value == pytest.approx(by["good"][level1].value + by["good"][level3].value)
    assert math.isnan(by["broken"][level3].value) and math.isnan(by["broken"][1].value)
    assert by["good"][1].best


def test_raw_hpsv3_that_cannot_be_normalized_is_left_out_and_named() -> None:
    # One stored HPSv3 reward: its pool is degenerate, and raw rewards have no Table 13 bounds either.
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("a", "b") for k in range(2)]
    rows = [_row(it.item_id, "iq1_psnr", 30.0 + i) for i, it in enumerate(items)]
    rows.append(_row("a0", "aq_hpsv3", 6.3))
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    assert sec.skipped is None and len(sec.tables) == 1
    assert "Left out, because their values cannot be normalized here: aq_hpsv3" in sec.intro
    assert "aq_hpsv3" not in sec.tables[0].columns and "AQ" not in sec.tables[0].columns
    only = robophys_section(ReportInput([_row("a0", "aq_hpsv3", 6.3)], items, higher_is_better))
    assert only.skipped is not None and "cannot be normalized here: aq_hpsv3" in only.skipped


def test_eq3_in_the_report_leaves_out_a_generator_measured_on_some_items_only() -> None:
    # Five generators on a line of task success; e's ssim is measured on 1 of 3 clips, its best: with
    # that clip standing for e, ssim falls off the line and out of the selected set.
    succ = {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.2}
    ssim = {"a": 0.2, "b": 0.4, "c": 0.6, "d": 0.8, "e": 0.95}
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in succ for k in range(3)]
    rows = []
    for g in succ:
        for k in range(3):
            rows.append(_row(f"{g}{k}", "iq1_ssim", None if g == "e" and k > 0 else ssim[g]))
            rows.append(_row(f"{g}{k}", "sim_task_success", succ[g]))
    sec = sensitivity_section(ReportInput(rows, items, higher_is_better), thresholds=(0.7,))
    (table,) = sec.tables
    assert table.rows[0][2].text == "iq1_ssim"
    assert "left out of that metric's correlations" in sec.intro


def test_the_report_selects_at_eq3_s_default_threshold() -> None:
    # The report's eq. 3 column must use the threshold select_metrics defaults to (one constant, not a
    # literal of its own): iq1_ssim's r with task success, 0.61, passes 0.6 and fails 0.7.
    succ = {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.9}
    ssim = {"a": 0.3, "b": 0.6, "c": 0.2, "d": 0.8, "e": 0.7}
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in succ for k in range(2)]
    rows = []
    for it in items:
        g = it.generator or ""
        rows += [_row(it.item_id, "iq1_psnr", 15.0 + 20.0 * succ[g]), _row(it.item_id, "iq1_ssim", ssim[g]),
                 _row(it.item_id, "sim_task_success", succ[g])]
    means = {"iq1_psnr": [15.0 + 20.0 * v for v in succ.values()], "iq1_ssim": list(ssim.values()),
             "sim_task_success": list(succ.values())}
    assert select_metrics(means, ["sim_task_success"], 0.6).selected == ("iq1_psnr", "iq1_ssim")
    expected = select_metrics(means, ["sim_task_success"]).selected
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    assert (f"selects at threshold {ROBOPHYSCORE_THRESHOLD} against this run's task-success measures "
            f"({', '.join(expected)};") in sec.intro


def test_the_report_says_why_eq3_selects_nothing_when_no_correlation_is_defined() -> None:
    # Task success 1.0 for every generator: the report said "no metric passes 0.7".
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in "abcd" for k in range(3)]
    rows = []
    for i, it in enumerate(items):
        rows += [_row(it.item_id, "iq1_psnr", 20.0 + i), _row(it.item_id, "sim_task_success", 1.0)]
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    assert "Eq. 3 selects nothing here (sim_task_success is 1 for every configuration" in sec.intro
    sens = sensitivity_section(ReportInput(rows, items, higher_is_better), thresholds=(0.5, 0.7))
    assert "No metric can be selected at any threshold: sim_task_success is 1" in sens.intro


def test_a_metric_rescored_at_a_new_version_is_read_at_that_version() -> None:
    # After a version bump and a rescore the old version's rows stay current beside the new ones, and
    # the section left the metric out for good ("several configurations or versions").
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("a", "b", "c") for k in range(2)]
    rows = []
    for n, it in enumerate(items):
        rows.append(ResultRow(it.item_id, "iq1_psnr", "old", "1", "ok", 100.0 + n))  # version 1's scale
        rows.append(ResultRow(it.item_id, "iq1_psnr", "new", "2", "ok", 20.0 + n))

    def key(metric: str, values: object) -> tuple[str, str]:
        if metric != "iq1_psnr":
            raise KeyError(metric)
        return "new", "2"

    sec = robophys_section(ReportInput(rows, items, higher_is_better, config_key=key))
    assert sec.skipped is None
    assert "iq1_psnr v2 (not v1)" in sec.intro and "Left out" not in sec.intro
    (table,) = sec.tables
    afs = [r[1].value for r in table.rows]
    assert afs == sorted(afs)  # a < b < c on version 2's values, as on version 1's
    # Without knowing the installed version, or with two configurations of the current version (a
    # --set variant: the user's choice), the metric is still left out.
    assert robophys_section(ReportInput(rows, items, higher_is_better)).skipped is not None
    variant = rows + [ResultRow(it.item_id, "iq1_psnr", "set", "2", "ok", 1.0) for it in items]
    assert robophys_section(ReportInput(variant, items, higher_is_better, config_key=key)).skipped is not None


def test_eq3_says_when_no_candidate_has_an_r_because_generators_are_measured_in_part() -> None:
    # Each generator lacked one clip of each candidate: every candidate's r was undefined, and the page
    # said "no metric passes 0.7" (which reads as: the metrics disagree with task success).
    succ = {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7}
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in succ for k in range(4)]
    rows = []
    for g, y in succ.items():
        for k in range(4):
            rows.append(_row(f"{g}{k}", "iq1_ssim", None if k == 0 else y))  # one clip unscored each
            rows.append(_row(f"{g}{k}", "sim_task_success", y))
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    assert "no metric passes 0.7" not in sec.intro
    assert "no r with every target is defined for any of the 1 candidate(s)" in sec.intro
    assert "leaves 4 (generator, metric) pairs without one" in sec.intro
    sweep = sensitivity_section(ReportInput(rows, items, higher_is_better), thresholds=(0.7,))
    assert "No metric can be selected at any threshold: no r with every target is defined" in sweep.intro


def test_many_generators_measured_in_part_are_a_table_not_a_sentence() -> None:
    # 1,900 (generator, metric) pairs made the note a 56 KB sentence in front of the table.
    gens = [f"g{k:02d}" for k in range(8)]
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in gens for k in range(3)]
    rows = []
    for n, g in enumerate(gens):
        for k in range(3):
            for m in ("cc_photometric", "iq1_psnr"):
                rows.append(_row(f"{g}{k}", m, None if k == 0 else 10.0 + n + k))
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    main, coverage = sec.tables
    assert "16 (generator, metric) pairs of 8 generators, listed in the table below" in main.note
    # (the fixed sentences on intervals aside)
    assert len(main.note.split("The AFS and RoboPhyscore")[0]) < 400
    assert coverage.name == "robophys_coverage" and len(coverage.rows) == 16
    assert [c.formatted() for c in coverage.rows[0]] == ["g00", "cc_photometric", "2", "3"]


def test_the_scores_table_says_its_bold_is_no_test() -> None:
    # Two generators, one clip each way better: the bold marks the higher value, and the note under the
    # table says that it is not a test and how to get intervals (audit abcompare F5).
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("new", "old") for k in range(3)]
    rows = [_row(f"{g}{k}", "iq1_psnr", 30.0 + k + (1.0 if g == "new" else 0.0))
            for g in ("new", "old") for k in range(3)]
    (table,) = robophys_section(ReportInput(rows, items, higher_is_better)).tables
    assert any(c.best for r in table.rows for c in r)
    assert "not a significant difference" in table.note
    assert "aggregate scores" in table.note and "--bootstrap" in table.note and "--diff A,B" in table.note
    assert "--cluster clip_id" in table.note
    # without clip_id the command it gives must run: no --cluster clip_id (the export's cells are empty)
    bare = [it.model_copy(update={"clip_id": None}) for it in items]
    (table,) = robophys_section(ReportInput(rows, bare, higher_is_better)).tables
    assert "--bootstrap 1000 --diff A,B" in table.note and "--cluster" not in table.note
    assert "items (no clip_id: each item is its own cluster) resampled" in table.note


def test_a_metric_stored_at_an_older_version_only_is_named_with_its_version() -> None:
    # An upgrade audit: a store upgraded but not rescored holds iq1_psnr version 1 only, this robojudge
    # computes version 2; the section and robophys.md/.csv/.tex read those rows without naming the version.
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("a", "b", "c") for k in range(2)]
    rows = [ResultRow(it.item_id, "iq1_psnr", "old", "1", "ok", 20.0 + n) for n, it in enumerate(items)]

    def key(metric: str, values: object) -> tuple[str, str]:
        if metric != "iq1_psnr":
            raise KeyError(metric)
        return "new", "2"

    sec = robophys_section(ReportInput(rows, items, higher_is_better, config_key=key))
    said = "iq1_psnr v1 (this robojudge computes v2)"
    (table,) = sec.tables
    assert said in sec.intro and said in table.note and "`robojudge score` adds" in table.note
    assert table.title.endswith("(read at other versions than this robojudge computes: iq1_psnr v1)")
    assert r"iq1\_psnr v1)}" in table.to_latex()  # in the caption
    # At the installed version, nothing is said.
    current = [ResultRow(r.item_id, r.metric, "new", "2", "ok", r.value) for r in rows]
    sec = robophys_section(ReportInput(current, items, higher_is_better, config_key=key))
    assert "older version" not in sec.intro and "older version" not in sec.tables[0].note
    assert sec.tables[0].title == "RoboPhys-3D scores per generator"


def test_the_radar_shows_n_a_where_the_table_does() -> None:
    # broken's iq1_ssim is unscored on every clip: the table's IQ-1 is n/a for it (the mean of its psnr
    # alone would be a score of another set), and the radar drew that psnr-only mean with no n/a in its
    # legend (audit reportdata F1).
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("good", "broken") for k in range(3)]
    rows = []
    for g in ("good", "broken"):
        for k in range(3):
            rows += [_row(f"{g}{k}", "iq1_psnr", 30.0 + k), _row(f"{g}{k}", "mq_dynamic_degree", 0.5),
                     _row(f"{g}{k}", "cc_photometric", 3.0 + k),
                     _row(f"{g}{k}", "iq1_ssim", None if g == "broken" else 0.8)]
    sec = robophys_section(ReportInput(rows, items, higher_is_better))
    table = sec.tables[0]
    by = {r[0].text: r for r in table.rows}
    assert math.isnan(by["broken"][table.columns.index("IQ-1")].value)
    (svg,) = sec.plots
    assert "broken (n/a: IQ-1)" in svg and "good (n/a" not in svg


def test_the_note_says_where_its_comparison_command_gives_a_value_the_table_withholds() -> None:
    # The note's `aggregate scores --missing drop` was "the same quantity", but drop averages broken's
    # psnr alone into IQ-1 where the table shows n/a (audit reportdata F6): the note now names broken.
    import pandas as pd

    from robojudge.aggregate import scores_from_table

    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("good", "broken") for k in range(3)]
    values = {"iq1_psnr": lambda k: 30.0 + k, "mq_dynamic_degree": lambda k: 0.5,
              "cc_photometric": lambda k: 3.0 + k, "iq1_ssim": lambda k: 0.8}
    rows = [_row(it.item_id, m, None if (m == "iq1_ssim" and it.generator == "broken") else f(k))
            for it in items for m, f in values.items() for k in [int(it.item_id[-1])]]
    (table, *_) = robophys_section(ReportInput(rows, items, higher_is_better)).tables
    assert "--missing drop --bootstrap" in table.note
    wide = pd.DataFrame([{"item_id": it.item_id, "generator": it.generator,
                          **{r.metric: r.value for r in rows if r.item_id == it.item_id}} for it in items])
    drop = scores_from_table(wide, by=["generator"], strategy="percentile", missing="drop")
    drop = drop.set_index("generator")
    by = {r[0].text: r for r in table.rows}
    # The command gives broken an IQ-1 the table withholds, and the note says so, naming it.
    assert math.isnan(by["broken"][table.columns.index("IQ-1")].value)
    assert math.isfinite(drop.loc["broken", "subdim_IQ-1"])
    assert "that command still gives one" in table.note
    assert "not comparable with the others, for broken." in table.note
