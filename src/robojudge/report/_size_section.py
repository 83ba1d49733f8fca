"""The report's "Evaluation sizes" section (the functions behind it: :mod:`robojudge.report._sizes`)."""

from __future__ import annotations

from robojudge.report._sections import ReportInput, Section
from robojudge.report._sizes import native_sizes, row_size
from robojudge.report._tables import Table, text


def sizes_section(inp: ReportInput) -> Section:
    """The metric configurations whose compared values were computed at more than one frame size."""
    sec = Section("sizes", "Evaluation sizes")
    mixed = inp.mixed_sizes
    if not mixed:
        recorded = any(row_size(r) for r in inp.item_rows)
        native = native_sizes(inp.item_rows)
        if recorded and len(native) > 1:
            # One size compared at, from videos of several: the reference metrics resize every video to
            # its reference's size, so "one frame size" alone would hide that the videos differed.
            sec.skipped = (f"each metric compared frames at one size, but the items' videos came in "
                           f"{len(native)} sizes ({', '.join(native)}; details.video_size), resized to "
                           "their references' size")
        else:
            sec.skipped = ("each metric read every item's video at one frame size" if recorded else
                           "no stored row records the frame size it was computed at (rows stored before "
                           "robojudge recorded sizes, or no metric read frames)")
        return sec
    sec.intro = (f"{len(mixed)} metric configuration{'s' if len(mixed) != 1 else ''} read the items' videos "
                 "at different frame sizes (the size each row was computed at is stored as "
                 "details.frame_size). Values of such metrics depend on the size (optical flow in pixels, "
                 "detail lost to downscaling), so a ranking of generators by them compares resolutions "
                 "too. `robojudge score SUITE -m METRICS --size N` computes the metrics that read frames "
                 "at native size at one evaluation size (the longer side scaled to N px), in new rows.")
    table = Table("sizes", "Metrics computed at different frame sizes", ["metric", "sizes", "by generator"])
    for m in mixed:
        table.add([text(m.label), text(", ".join(m.sizes)), text(m.describe())])
    sec.tables.append(table)
    return sec
