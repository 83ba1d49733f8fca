"""KIVA by generator (report/_kiva.py): the mean of video values and the pooled share of invalid segments."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from robojudge.report import ReportInput, kiva_groups
from robojudge.report._kiva import kiva_section
from robojudge.store import ResultRow
from robojudge.suite import Item


def _seg(invalid: bool | None, rig: bool | None, jerk: bool | None) -> dict[str, object]:
    return {"start": 0, "stop": 16, "invalid": invalid, "rigidity_invalid": rig, "jerk_invalid": jerk}


def _row(item: str, value: float, segs: list[dict[str, object]], robot: str = "fetch",
         **kw: object) -> ResultRow:
    return ResultRow(item, "kiva", "h-" + robot, "1", "ok", value, details={"robot": robot, "segments": segs},
                     **kw)  # type: ignore[arg-type]


def _item(item_id: str, gen: str, emb: str = "gripper") -> Item:
    return Item(item_id=item_id, video="v.mp4", clip_id=item_id[:2], source="s", generator=gen,
                embodiment=emb)


def test_mean_over_videos_and_share_over_segments() -> None:
    items = [_item("a1", "good"), _item("a2", "good"), _item("b1", "bad"),
             _item("h1", "good", "dexterous_hand")]
    rows = [
        # good: one video with 1 of 4 segments invalid (25%), one with 0 of 1 (0%).
        _row("a1", 25.0, [_seg(True, False, True), _seg(False, False, False), _seg(False, None, False),
                          _seg(False, False, False)]),
        _row("a2", 0.0, [_seg(False, False, False)]),
        # bad: 2 of 3 measured; one segment not measured at all (left out of every count).
        _row("b1", 200 / 3, [_seg(True, True, False), _seg(True, True, True), _seg(False, False, False),
                             _seg(None, None, None)]),
        # Another robot's reader: its own row, not mixed with the Fetch ones.
        _row("h1", 100.0, [_seg(True, None, True)], robot="adroit"),
        # Not counted: a superseded row, an unscored one, an error, another metric, an unknown item.
        _row("a2", 100.0, [_seg(True, True, True)], superseded_at=datetime.now(UTC)),
        _row("a2", math.nan, []),
        ResultRow("a1", "kiva", "h-fetch", "1", "error", None, error="boom"),
        ResultRow("a1", "kiva_jerk", "h-fetch", "1", "ok", 100.0, details={"robot": "fetch"}),
        _row("zz", 50.0, [_seg(True, True, True)]),
    ]
    groups = {(g.robot, g.group): g for g in kiva_groups(rows, items)}
    assert sorted(groups) == [("adroit", "good"), ("fetch", "bad"), ("fetch", "good")]
    good = groups[("fetch", "good")]
    assert (good.videos, good.segments, good.invalid) == (2, 5, 1)
    assert good.mean == pytest.approx(12.5)  # mean of 25 and 0
    assert good.share == pytest.approx(20.0)  # 1 of 5 segments: not the mean of the videos' shares
    assert (good.rigidity_judged, good.rigidity_invalid, good.rigidity_share) == (4, 0, 0.0)
    assert (good.jerk_judged, good.jerk_invalid) == (5, 1)
    bad = groups[("fetch", "bad")]
    assert (bad.videos, bad.segments, bad.invalid, bad.share) == (1, 3, 2, pytest.approx(200 / 3))
    assert bad.jerk_share == pytest.approx(100 / 3)
    hand = groups[("adroit", "good")]
    assert hand.rigidity_judged == 0 and math.isnan(hand.rigidity_share)


def test_section_shows_the_table_or_says_why_not() -> None:
    items = [_item("a1", "good"), _item("b1", "bad")]
    rows = [_row("a1", 0.0, [_seg(False, False, False)]), _row("b1", 100.0, [_seg(True, True, False)])]
    sec = kiva_section(ReportInput(rows, items, lambda m: False))
    assert sec.skipped is None and len(sec.tables) == 1
    table = sec.tables[0]
    assert table.columns[:4] == ["robot", "generator", "videos", "mean kiva"]
    by_gen = {r[1].text: r for r in table.rows}
    assert by_gen["bad"][5].value == 100.0 and by_gen["good"][5].value == 0.0
    empty = kiva_section(ReportInput([], items, lambda m: False))
    assert empty.skipped is not None and "no kiva value" in empty.skipped
    # Stored, and unscored on every video (a reader that does not recognise the robot): said so, with why.
    odd = "the reader does not recognise the robot in this video"
    lost = [ResultRow(i, "kiva", "h", "1", "ok", math.nan, details={"unscored_reason": odd})
            for i in ("a1", "b1")]
    lost.append(ResultRow("a1", "kiva", "h2", "1", "ok", math.nan, details={"unscored_reason": "frozen"}))
    sec = kiva_section(ReportInput(lost, items, lambda m: False))
    assert sec.skipped == f"kiva left every video unscored; the most common reason: {odd} (2 of 3 rows)"


def test_two_configurations_of_the_same_videos_are_counted_apart() -> None:
    # Two settings of one reader (or two metric versions after an upgrade) stored for the same videos:
    # they were pooled, 4 "videos" and 12 segments where the suite has 2 and 6, with a mixed mean.
    items = [_item("a1", "good"), _item("a2", "good")]
    rows = []
    for config, value in (("c-one", 0.0), ("c-two", 50.0)):
        rows += [ResultRow(i, "kiva", config, "12", "ok", value,
                           details={"robot": "fetch", "segments": [_seg(value > 0, False, value > 0),
                                                                   _seg(False, False, False)]})
                 for i in ("a1", "a2")]
    groups = kiva_groups(rows, items)
    assert [(g.config, g.videos, g.segments, g.mean) for g in groups] == [("c-one v12", 2, 4, 0.0),
                                                                           ("c-two v12", 2, 4, 50.0)]
    only = kiva_groups(rows, items, configs={("c-two", "12")})
    assert [(g.config, g.videos) for g in only] == [("c-two v12", 2)]
    (table,) = kiva_section(ReportInput(rows, items, lambda m: False)).tables
    assert table.columns[:3] == ["robot", "config", "generator"] and len(table.rows) == 2
    assert "each counted apart" in table.note
    (single,) = kiva_section(ReportInput(rows[:2], items, lambda m: False)).tables
    assert "config" not in single.columns


def test_rows_judged_by_a_reader_calibrated_for_an_older_measure_are_marked_and_kept_apart() -> None:
    # They were shown unmarked, pooled with current rows: a reader calibrated before measure version 8
    # judges pixel link lengths, centre jerk windows and every video, recognised or not.
    items = [_item("a1", "good"), _item("a2", "good"), _item("a3", "good")]
    segs = [_seg(False, False, False)]
    current = {"calibration_version": 8, "older_rules": []}
    older = {"calibration_version": 5, "older_rules": ["pixel link lengths", "centre jerk windows"]}
    # Stored before values named their calibration: told by the keys each measure version added.
    before = {"part_scales": True, "link_lengths": "pixel", "jerk_windows": "centre",
              "recognition": "not checked: the reader was calibrated before measure version 8"}
    rows = [_row("a1", 0.0, segs), _row("a2", 0.0, segs), _row("a3", 0.0, segs)]
    for row, extra in zip(rows, (current, older, before), strict=True):
        row.details.update(extra)  # type: ignore[union-attr]
    groups = kiva_groups(rows, items)
    assert [(g.calibration, g.videos) for g in groups] == [
        ("", 1),
        ("older than v8: pixel link lengths, centre jerk windows, recognition not checked", 1),
        ("v5: pixel link lengths, centre jerk windows", 1)]
    (table,) = kiva_section(ReportInput(rows, items, lambda m: False)).tables
    assert table.columns[:4] == ["robot", "generator", "calibration", "videos"]
    assert [r[2].text for r in table.rows] == ["current", groups[1].calibration, groups[2].calibration]
    assert "older rules named" in table.note and "robojudge kiva calibrate" in table.note
    (plain,) = kiva_section(ReportInput(rows[:1], items, lambda m: False)).tables
    assert "calibration" not in plain.columns  # every row current: no column
