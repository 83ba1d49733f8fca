"""The report's "Library versions" section (the functions behind it: :mod:`robojudge.report._libraries`)."""

from __future__ import annotations

from collections.abc import Iterable

from robojudge.report._libraries import row_libraries
from robojudge.report._sections import ReportInput, Section
from robojudge.report._tables import Table, text
from robojudge.store import parse_libraries


def untested_note(records: Iterable[tuple[str, str]]) -> str:
    """What the report says of the frame libraries that ``records`` (``(metric, details.libraries)`` of
    rows) name in another minor release than robojudge's published numbers were computed with
    (:func:`robojudge.run.untested_libraries`), each version once with the metrics whose values it computed;
    empty when every one is tested."""
    from robojudge._tested import untested_libraries

    metrics: dict[str, set[str]] = {}
    for metric, record in records:
        for line in untested_libraries(parse_libraries(record)):
            metrics.setdefault(line, set()).add(metric)
    if not metrics:
        return ""
    said = []
    for line, ms in metrics.items():
        names = sorted(ms)
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        said.append(f"{line} (the values of {shown})")
    return ("Untested libraries: values were computed with " + "; ".join(said) + ". They can differ from "
            "the numbers of robojudge's README and docs, computed with the versions of its constraints.txt.")


def libraries_section(inp: ReportInput) -> Section:
    """The metric configurations whose compared values were computed with different library versions, and
    the frame libraries of those values in another release than tested (:func:`untested_note`)."""
    sec = Section("libraries", "Library versions")
    mixed = inp.mixed_libraries
    pairs = {(r.metric, v) for r in [*inp.item_rows, *inp.group_rows] if (v := row_libraries(r))}
    recorded = {v for _, v in pairs}
    untested = untested_note(sorted(pairs))
    if not mixed:
        same = ("every compared value of each metric was computed with the same library versions"
                if recorded else "no stored row records the library versions it was computed with "
                "(rows stored before robojudge recorded them, or imported values)")
        if untested:
            sec.intro = f"{untested} Otherwise {same}."
        else:
            sec.skipped = same
        return sec
    plural = "s" if len(mixed) != 1 else ""
    sec.intro = (f"{len(mixed)} metric configuration{plural} hold values computed with different"
                 " versions of the libraries they are computed through (stored with each row as "
                 "details.libraries: NumPy, SciPy, scikit-image, OpenCV, PyAV and FFmpeg, and the network "
                 "libraries of model metrics). A new release can move values, mostly in their last digits, "
                 "enough "
                 "to reorder values that lie close together. The table names only the libraries that "
                 "differ. `robojudge score SUITE -m METRICS --rescore-libraries` recomputes the values "
                 "computed with other versions than installed (the old rows are kept, superseded); "
                 "`robojudge metrics sets SUITE -m METRICS --rescore-libraries` the set-level ones."
                 + (f" {untested}" if untested else ""))
    table = Table("libraries", "Metrics computed with different library versions",
                  ["metric", "libraries that differ", "by generator"])
    for m in mixed:
        table.add([text(m.label), text(", ".join(m.libraries)), text(m.describe())])
    sec.tables.append(table)
    return sec
