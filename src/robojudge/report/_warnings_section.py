"""The report's "Video warnings" section (:mod:`robojudge.report._video_warnings`)."""

from __future__ import annotations

from collections import defaultdict

from robojudge.report._sections import ReportInput, Section
from robojudge.report._tables import Table, text
from robojudge.report._video_warnings import KINDS, OTHER, REFERENCE_TILED, TILED, item_warnings

#: Items listed at most (the counts cover them all).
MAX_LISTED = 200


def video_warnings_section(inp: ReportInput) -> Section:
    """The items whose current rows carry video warnings: their kinds per group, and the items."""
    sec = Section("video_warnings", "Video warnings")
    warned = item_warnings(inp.all_item_rows)
    if not warned:  # said, not skipped: that the videos needed no assumption is worth knowing
        sec.intro = ("No stored result carries a warning about its video (details.video_warnings, where "
                     "`robojudge score` records a video that looks tiled, damaged or truncated, or whose "
                     "frame rate it had to assume).")
        return sec
    group_of = inp.group_of
    kinds = [k for k in (*(kind for _, kind in KINDS), OTHER) if any(k in w.kinds for w in warned.values())]
    sizes: dict[str, int] = defaultdict(int)
    for g in group_of.values():
        sizes[g] += 1
    n_rows = sum(w.rows for w in warned.values())
    sec.intro = (f"{n_rows} stored results of {len(warned)} items carry warnings about their videos "
                 "(details.video_warnings, which `robojudge score` prints at the end of its run): what "
                 "had to be assumed to read them.")
    if TILED in kinds:  # (said only where a video looks tiled: not under 40 items of 'rate assumed')
        sec.intro += (" A tiled video looks like several views in one frame (a ground-truth/prediction "
                      "mosaic): metrics that read one camera's video, and judges, take the whole mosaic for "
                      "one picture, so its values measure the seams and several cameras. Declare such a "
                      "video's grid in the manifest (with its main_view, whose cell those metrics then "
                      "read) or split its views into files (docs/manifest.md).")
    if REFERENCE_TILED in kinds:
        sec.intro += (" A tiled reference was compared whole with a video of one view: give such an item a "
                      "reference of the view its video shows.")
    by_group = Table("video_warnings_by_group", "Items with video warnings per group",
                     ["group", "items", "items with warnings", *kinds],
                     note="Items per group whose current rows carry a warning of each kind (an item may "
                     "have several kinds).")
    groups = sorted({group_of.get(i, "all") for i in warned})
    for g in groups:
        ids = [i for i in warned if group_of.get(i, "all") == g]
        by_group.add([text(g), text(sizes.get(g, len(ids))), text(len(ids)),
                      *(text(sum(k in warned[i].kinds for i in ids)) for k in kinds)])
    listed = sorted(warned, key=lambda i: (group_of.get(i, "all"), i))
    shown = listed[:MAX_LISTED]
    note = "Each item's warnings as stored, each text once; 'results' counts its rows that carry any."
    if len(listed) > len(shown):
        note += f" The first {len(shown)} of {len(listed)}."
    items = Table("video_warnings", "Items with video warnings",
                  ["item", "group", "kinds", "results", "warnings"], note=note)
    for i in shown:
        w = warned[i]
        items.add([text(i), text(group_of.get(i, "all")), text("; ".join(w.kinds)), text(w.rows),
                   text(" | ".join(w.texts))])
    sec.tables += [by_group, items]
    return sec
