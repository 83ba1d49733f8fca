"""Evaluation sizes: which compared values were computed from frames of different sizes.

The runner records in every row the size at which its metric read the item's main video
(``details["frame_size"]``, ``"WxH"``). Many metrics depend on it: the same clip gives
``cc_photometric`` 0.81 at 1280x720 and 4.34 at 320x180. When the values of one metric configuration
were computed at several sizes, a table that sets generators side by side compares their resolutions
as much as their videos. The report lists such metrics, with the sizes per generator, and the sections
that rank generators by metrics say so; ``robojudge score --size N`` recomputes them at one size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from robojudge.report._sections import ReportInput, Section
from robojudge.report._series import SeriesKey
from robojudge.report._tables import Table, text
from robojudge.store import ResultRow

#: What a row without a recorded size is listed as (stored before sizes were recorded, or a metric
#: that reads no frames of the main video).
UNKNOWN = "not recorded"


@dataclass(frozen=True)
class MixedSizes:
    """One metric configuration whose values were computed at more than one frame size.

    Attributes:
        key: The series (metric, config hash, version).
        label: Its display label in the report.
        by_group: Per generator (or ``all``), the number of items per size.
    """

    key: SeriesKey
    label: str
    by_group: dict[str, dict[str, int]]

    @property
    def sizes(self) -> list[str]:
        """Every size met, in order of first appearance."""
        out: list[str] = []
        for counts in self.by_group.values():
            out.extend(s for s in counts if s not in out)
        return out

    def describe(self) -> str:
        """``gen_a: 1280x720 (20); gen_b: 320x256 (12), 640x360 (8)``."""
        parts = (", ".join(f"{s} ({n})" for s, n in counts.items()) for counts in self.by_group.values())
        return "; ".join(f"{g}: {p}" for g, p in zip(self.by_group, parts, strict=True))


def row_size(row: ResultRow) -> str | None:
    """The frame size a row was computed at, or None when it was not recorded."""
    size = (row.details or {}).get("frame_size")
    return size if isinstance(size, str) and size else None


def mixed_sizes(
    rows: Iterable[ResultRow], group_of: Mapping[str, str], labels: Mapping[SeriesKey, str] | None = None
) -> list[MixedSizes]:
    """The metric configurations whose scored rows on the items of ``group_of`` (item id -> generator)
    were computed at more than one recorded size; rows of other items and failed rows do not count.

    A configuration with no recorded size at all is not listed (nothing is known); one with some
    sizes recorded and some not lists the others as :data:`UNKNOWN`.
    """
    found: dict[SeriesKey, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    recorded: set[SeriesKey] = set()
    for r in rows:
        if r.status != "ok" or r.item_id not in group_of:
            continue
        key = SeriesKey(r.metric, r.config_hash, r.version)
        size = row_size(r)
        if size is not None:
            recorded.add(key)
        counts = found[key][group_of[r.item_id]]
        counts[size or UNKNOWN] = counts.get(size or UNKNOWN, 0) + 1
    out = []
    for key in sorted(found):
        groups = found[key]
        distinct = {s for counts in groups.values() for s in counts}
        if key in recorded and len(distinct) > 1:
            label = (labels or {}).get(key, key.metric)
            out.append(MixedSizes(key, label, {g: dict(c) for g, c in sorted(groups.items())}))
    return out


def mixed_size_note(mixed: Sequence[MixedSizes], metrics: Iterable[str] | None = None) -> str:
    """A sentence warning that ``metrics`` (default: all of ``mixed``) were computed at several sizes;
    empty when none was."""
    wanted = None if metrics is None else set(metrics)
    hit = [m.label for m in mixed if wanted is None or m.key.metric in wanted]
    if not hit:
        return ""
    return (f" Warning: {', '.join(hit)} {'was' if len(hit) == 1 else 'were'} computed at different frame "
            "sizes on the items compared here (see Evaluation sizes), so differences between generators "
            "mix resolution with quality; `robojudge score --size N` recomputes at one size.")


def report_mixed_sizes(inp: ReportInput) -> list[MixedSizes]:
    """:func:`mixed_sizes` of the report's per-item rows, grouped by generator (``all`` without one)."""
    group_of = {it.item_id: (it.generator or "(unset)") if inp.items else "all" for it in inp.scope}
    labels = {s.key: s.label for s in inp.stored.series}
    return mixed_sizes(inp.item_rows, group_of, labels)


def sizes_section(inp: ReportInput) -> Section:
    """The metric configurations whose compared values were computed at more than one frame size."""
    sec = Section("sizes", "Evaluation sizes")
    mixed = report_mixed_sizes(inp)
    if not mixed:
        recorded = any(row_size(r) for r in inp.item_rows)
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
