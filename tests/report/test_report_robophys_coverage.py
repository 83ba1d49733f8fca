"""RoboPhys-3D scores per generator when some clips could not be measured.

A generator whose other clips are blank (consistency metrics leave them unscored) was averaged over the
one clip it could be measured on, and marked best, with no word. Now such a (generator, metric) is named
under the table, and the generator is not compared for the best of the columns that metric enters.
"""

from __future__ import annotations

from _report_data import higher_is_better

from robojudge.report._robophys import robophys_section
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
