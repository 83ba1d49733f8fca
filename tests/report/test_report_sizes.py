"""The report warns when compared values were computed at different frame sizes (issue 14 item 6)."""

from __future__ import annotations

from robojudge.report._sections import ReportInput, overview_section
from robojudge.report._series import SeriesKey
from robojudge.report._size_section import sizes_section
from robojudge.report._sizes import UNKNOWN, mixed_size_note, mixed_sizes
from robojudge.store import ResultRow
from robojudge.suite import Item


def _row(item: str, metric: str, size: str | None, status: str = "ok", chash: str = "h") -> ResultRow:
    details = {"frame_size": size} if size else None
    return ResultRow(item, metric, chash, "1", status, 1.0 if status == "ok" else None, details=details)


ITEMS = [Item(item_id=i, video="v.mp4", generator=g) for i, g in
         (("a1", "hd"), ("a2", "hd"), ("b1", "sd"), ("b2", "sd"))]
GROUP = {it.item_id: it.generator or "" for it in ITEMS}


def test_mixed_sizes_per_generator():
    rows = [_row("a1", "m", "1280x720"), _row("a2", "m", "1280x720"), _row("b1", "m", "320x256"),
            _row("b2", "m", "640x360"), _row("a1", "same", "256x256"), _row("b1", "same", "256x256")]
    (mix,) = mixed_sizes(rows, GROUP)
    assert mix.key == SeriesKey("m", "h", "1")
    assert mix.by_group == {"hd": {"1280x720": 2}, "sd": {"320x256": 1, "640x360": 1}}
    assert mix.sizes == ["1280x720", "320x256", "640x360"]
    assert mix.describe() == "hd: 1280x720 (2); sd: 320x256 (1), 640x360 (1)"


def test_what_does_not_count():
    # failed rows, items outside the comparison, and configurations with no recorded size at all
    rows = [_row("a1", "m", "1280x720"), _row("b1", "m", "320x256", status="error"),
            _row("zz", "m", "64x64"), _row("a1", "old", None), _row("b1", "old", None)]
    assert mixed_sizes(rows, GROUP) == []
    # two configurations of one metric are two series, each at its own single size
    rows = [_row("a1", "m", "64x36", chash="x"), _row("b1", "m", "64x36", chash="x"),
            _row("a1", "m", "1280x720", chash="y"), _row("b1", "m", "320x256", chash="y")]
    assert [m.key.config_hash for m in mixed_sizes(rows, GROUP)] == ["y"]


def test_unscored_rows_do_not_count():
    # A video framed unlike its reference is unscored (NaN, no frame_size): it was counted as "not
    # recorded", and the report said the metric was computed at different sizes and advised --size.
    nan = ResultRow("b1", "m", "h", "1", "ok", float("nan"), details={"unscored_reason": "framing"})
    rows = [_row("a1", "m", "64x48"), _row("a2", "m", "64x48"), nan]
    assert mixed_sizes(rows, GROUP) == []


def test_partly_recorded_sizes_list_the_rest_as_unknown():
    rows = [_row("a1", "m", "1280x720"), _row("b1", "m", None)]
    (mix,) = mixed_sizes(rows, GROUP)
    assert mix.by_group == {"hd": {"1280x720": 1}, "sd": {UNKNOWN: 1}}


def test_note_names_only_the_metrics_asked_about():
    rows = [_row("a1", "m", "1280x720"), _row("b1", "m", "320x256")]
    mixed = mixed_sizes(rows, GROUP)
    assert "m was computed at different frame sizes" in mixed_size_note(mixed)
    assert mixed_size_note(mixed, ["other"]) == ""
    assert mixed_size_note([], None) == ""


def test_section_and_overview_warn_on_mixed_sizes():
    rows = [_row("a1", "m", "1280x720"), _row("a2", "m", "1280x720"), _row("b1", "m", "320x256"),
            _row("b2", "m", "320x256")]
    inp = ReportInput(rows, ITEMS, lambda m: True, bootstrap=0)
    sec = sizes_section(inp)
    assert sec.skipped is None
    assert [c.text for c in sec.tables[0].rows[0]][:2] == ["m", "1280x720, 320x256"]
    assert "--size N" in sec.intro
    assert "Warning: m was computed at different frame sizes" in overview_section(inp).intro


def test_section_skipped_when_sizes_agree_or_are_unknown():
    same = [_row(i, "m", "256x256") for i in GROUP]
    inp = ReportInput(same, ITEMS, lambda m: True, bootstrap=0)
    assert "one frame size" in (sizes_section(inp).skipped or "")
    assert "Warning" not in overview_section(inp).intro
    unknown = [_row(i, "m", None) for i in GROUP]
    assert "records the frame size" in (sizes_section(ReportInput(unknown, ITEMS, lambda m: True,
                                                                   bootstrap=0)).skipped or "")


def test_one_compared_size_from_videos_of_several_sizes_is_said():
    # The reference metrics resize every video to its reference's size, so every row of a metric says
    # one frame_size; the videos' own sizes (details.video_size) differed, and the section says so
    # rather than "each metric read every item's video at one frame size" (audit "sizes", F1).
    rows = [ResultRow(i, "iq1_psnr", "h", "3", "ok", 30.0,
                      details={"frame_size": "640x480", "video_size": native})
            for i, native in (("a1", "1280x960"), ("a2", "1280x960"), ("b1", "320x240"), ("b2", "640x480"))]
    skipped = sizes_section(ReportInput(rows, ITEMS, lambda m: True, bootstrap=0)).skipped or ""
    assert "one frame size" not in skipped
    assert skipped == ("each metric compared frames at one size, but the items' videos came in 3 sizes "
                       "(1280x960, 320x240, 640x480; details.video_size), resized to their references' size")
    # one native size: the old sentence holds
    same = [ResultRow(i, "iq1_psnr", "h", "3", "ok", 30.0,
                      details={"frame_size": "640x480", "video_size": "640x480"}) for i in GROUP]
    assert "one frame size" in (sizes_section(ReportInput(same, ITEMS, lambda m: True, bootstrap=0)).skipped
                                or "")
