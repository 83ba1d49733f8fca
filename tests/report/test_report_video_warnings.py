"""The report shows the video warnings stored with the rows (``details.video_warnings``).

``robojudge score`` printed "72 results with video warnings (8 items)" for a suite whose Ctrl-World
clips are 2x3 ground-truth/prediction mosaics, and the report then ranked and bolded that generator
without a word: no file of it mentioned the warnings (realvid audit F2). Now a "Video warnings" section
lists the items, the kinds and the count per generator, and the summary and RoboPhys-3D tables say when
a ranked generator's clips look tiled.
"""

from __future__ import annotations

from pathlib import Path

from _report_data import higher_is_better, stored_suite

from robojudge.report import write_html_report
from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput, overview_section
from robojudge.report._video_warnings import TILED, warning_kind
from robojudge.report._warnings_section import video_warnings_section
from robojudge.store import ResultRow
from robojudge.suite import Item

_TILED = ("{v}: its frames look like a 2x3 grid of views (straight seams at x=320, x=640, y=192 that stay "
          "put over the 6 frames read): metrics that read one camera's video, and judges, take the whole "
          "mosaic for one picture")
_DAMAGED = "{v}: damaged: 2 packets undecodable, 1 of 40 frames concealed"


def _suite() -> tuple[list[Item], list[ResultRow]]:
    items = [Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
             for g in ("mosaic", "single") for k in range(3)]
    rows = []
    for it in items:
        warnings = []
        if it.item_id in ("mosaic0", "mosaic1"):
            warnings.append(_TILED.format(v=f"/v/{it.item_id}.mp4"))
        if it.item_id == "single2":
            warnings.append(_DAMAGED.format(v="/v/single2.mp4"))
        k = int(it.item_id[-1])
        for metric, value in (("cc_photometric", 3.0 + k), ("iq1_psnr", 30.0 + k)):
            details = {"video_warnings": warnings} if warnings else None
            rows.append(ResultRow(it.item_id, metric, "h", "1", "ok", value, details=details))
    return items, rows


def test_warning_kinds() -> None:
    assert warning_kind(_TILED.format(v="a.mp4")) == TILED
    assert warning_kind(_DAMAGED.format(v="a.mp4")) == "damaged"
    assert warning_kind("a.mp4: no fps.txt in the frame folder; rate assumed to be 30 fps") == (
        "frame rate assumed or lowered")


def test_the_section_lists_the_warned_items_and_counts_them_per_generator() -> None:
    items, rows = _suite()
    sec = video_warnings_section(ReportInput(rows, items, higher_is_better))
    assert sec.skipped is None
    assert "6 stored results of 3 items carry warnings" in sec.intro
    by_group, listed = sec.tables
    assert by_group.columns == ["group", "items", "items with warnings", TILED, "damaged"]
    assert [[c.text for c in r] for r in by_group.rows] == [["mosaic", "3", "2", "2", "0"],
                                                           ["single", "3", "1", "0", "1"]]
    assert [(r[0].text, r[2].text, r[3].text) for r in listed.rows] == [
        ("mosaic0", TILED, "2"), ("mosaic1", TILED, "2"), ("single2", "damaged", "2")]
    assert "2x3 grid of views" in listed.rows[0][4].text
    clean = [ResultRow(r.item_id, r.metric, "h", "1", "ok", r.value) for r in rows]
    none = video_warnings_section(ReportInput(clean, items, higher_is_better))
    assert none.skipped is None and not none.tables and "No stored result carries a warning" in none.intro


def test_the_tables_that_rank_generators_name_those_with_tiled_clips() -> None:
    items, rows = _suite()
    inp = ReportInput(rows, items, higher_is_better, bootstrap=0)
    said = "Tiled videos in mosaic (2 of 3 items): their frames look like a grid of views"
    summary = overview_section(inp).tables[0]
    assert summary.name == "summary" and said in summary.note
    (robophys,) = robophys_section(inp).tables
    assert said in robophys.note and "single (" not in robophys.note
    clean = [ResultRow(r.item_id, r.metric, "h", "1", "ok", r.value) for r in rows]
    inp = ReportInput(clean, items, higher_is_better, bootstrap=0)
    assert "Tiled" not in overview_section(inp).tables[0].note
    assert "Tiled" not in robophys_section(inp).tables[0].note


def test_the_written_report_holds_the_section_and_its_tables(tmp_path: Path) -> None:
    items, rows = _suite()
    manifest, db = stored_suite(tmp_path, items, rows)
    out = tmp_path / "report"
    write_html_report(db, out, manifest=manifest, higher_is_better=higher_is_better, bootstrap=0)
    page = (out / "index.html").read_text()
    assert 'id="video_warnings"' in page and "Tiled videos in mosaic (2 of 3 items)" in page
    assert (out / "tables" / "video_warnings_by_group.csv").read_text().splitlines()[1:] == [
        "mosaic,3,2,2,0", "single,3,1,0,1"]
    assert "mosaic0" in (out / "tables" / "video_warnings.csv").read_text()


def test_a_tiled_reference_is_its_own_kind_and_no_tiled_video_of_the_generator() -> None:
    # Only the reference was a mosaic: the report called the generator's own videos tiled, in the
    # section and in the summary and RoboPhys-3D notes (review rev15 F1)
    from robojudge.report._video_warnings import REFERENCE_TILED, tiled_groups

    ref = ("/r/ref.mp4: the reference video: its frames look like a 2x2 grid of views (straight seams at "
           "x=160, y=120 ...): metrics that compare the item's video with its reference take the whole "
           "mosaic")
    assert warning_kind(ref) == REFERENCE_TILED
    items = [Item(item_id=f"a{k}", video="v.mp4", clip_id=f"c{k}", generator="A") for k in range(3)]
    rows = [ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", 30.0 + k, details={"video_warnings": [ref]})
            for k, it in enumerate(items)]
    inp = ReportInput(rows, items, higher_is_better)
    sec = video_warnings_section(inp)
    assert REFERENCE_TILED in sec.tables[0].columns and TILED not in sec.tables[0].columns
    assert "A tiled reference was compared whole" in sec.intro and "A tiled video looks like" not in sec.intro
    from robojudge.report._video_warnings import item_warnings

    assert not tiled_groups(item_warnings(rows), {it.item_id: "A" for it in items}, {"A"})


def test_the_intro_speaks_of_tiling_only_where_a_video_looks_tiled() -> None:
    # 40 frame folders without fps.txt: every row says the rate was assumed; the intro spoke of mosaics
    # and seams all the same (review rev15 F5)
    items = [Item(item_id=f"i{k}", video="v", generator="g") for k in range(4)]
    rows = [ResultRow(it.item_id, "pixel_frame_consistency", "h", "1", "ok", 1.0, details={
        "video_warnings": [f"/v/{it.item_id}: no fps.txt in the frame folder; rate assumed to be 30 fps"]})
        for it in items]
    sec = video_warnings_section(ReportInput(rows, items, higher_is_better))
    assert "4 stored results of 4 items carry warnings" in sec.intro
    assert "tiled" not in sec.intro.lower() and "mosaic" not in sec.intro
