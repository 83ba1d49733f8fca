"""Evaluation sizes: which compared values were computed from frames of different sizes.

The runner records in every row the size at which its metric read the item's main video
(``details["frame_size"]``, ``"WxH"``). Many metrics depend on it: the same clip gives
``cc_photometric`` 1.16 at 1280x720 and 1.77 at 320x180 (docs/metrics.md, "Native size"). When the
values of one metric configuration were computed at several sizes, a table that sets generators side
by side compares their resolutions as much as their videos. The report lists such metrics, with the
sizes per generator, and the sections that rank generators by metrics say so; ``robojudge score
--size N`` recomputes them at one size.

This module holds the pure functions; the report section is :mod:`robojudge.report._size_section`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from robojudge.report._series import SeriesKey
from robojudge.store import ResultRow

#: What a row without a recorded size is listed as (stored before sizes were recorded, or a metric
#: that reads no frames of the main video).
UNKNOWN = "not recorded"


@dataclass(frozen=True)
class MixedCounts:
    """One metric configuration whose compared values were computed under more than one setting (a
    frame size, a set of library versions).

    Attributes:
        key: The series (metric, config hash, version).
        label: Its display label in the report.
        by_group: Per generator (or ``all``), the number of items per setting.
    """

    key: SeriesKey
    label: str
    by_group: dict[str, dict[str, int]]

    @property
    def settings(self) -> list[str]:
        """Every setting met, in order of first appearance."""
        out: list[str] = []
        for counts in self.by_group.values():
            out.extend(k for k in counts if k not in out)
        return out

    def describe(self) -> str:
        """``gen_a: 1280x720 (20); gen_b: 320x256 (12), 640x360 (8)``."""
        parts = (", ".join(f"{k} ({n})" for k, n in counts.items()) for counts in self.by_group.values())
        return "; ".join(f"{g}: {p}" for g, p in zip(self.by_group, parts, strict=True))


def mixed_warning(mixed: Sequence[MixedCounts], metrics: Iterable[str] | None, what: str) -> str:
    """`` Warning: m1, m2 were {what}`` for the configurations of ``mixed`` whose metric is in ``metrics``
    (default: all); empty when there is none."""
    wanted = None if metrics is None else set(metrics)
    hit = [m.label for m in mixed if wanted is None or m.key.metric in wanted]
    if not hit:
        return ""
    return f" Warning: {', '.join(hit)} {'was' if len(hit) == 1 else 'were'} {what}"


@dataclass(frozen=True)
class MixedSizes(MixedCounts):
    """One metric configuration whose values were computed at more than one frame size (the settings of
    ``by_group`` are sizes, ``"WxH"``)."""

    @property
    def sizes(self) -> list[str]:
        """Every size met, in order of first appearance."""
        return self.settings


def row_size(row: ResultRow) -> str | None:
    """The frame size a row was computed at, or None when it was not recorded."""
    size = (row.details or {}).get("frame_size")
    return size if isinstance(size, str) and size else None


def native_sizes(rows: Iterable[ResultRow]) -> list[str]:
    """The generated videos' own sizes (``details["video_size"]``, ``"WxH"``: recorded by metrics that
    resize a video before reading it, such as the reference comparisons) among ``rows``, in order of
    first appearance."""
    out: list[str] = []
    for r in rows:
        size = (r.details or {}).get("video_size")
        if isinstance(size, str) and size and size not in out:
            out.append(size)
    return out


def mixed_sizes(
    rows: Iterable[ResultRow], group_of: Mapping[str, str], labels: Mapping[SeriesKey, str] | None = None
) -> list[MixedSizes]:
    """The metric configurations whose scored rows on the items of ``group_of`` (item id -> generator)
    were computed at more than one recorded size; rows of other items, failed rows and unscored ones (a
    NaN value: no size was compared, as for a video framed unlike its reference) do not count.

    A configuration with no recorded size at all is not listed (nothing is known); one with some
    sizes recorded and some not lists the others as :data:`UNKNOWN`.
    """
    found: dict[SeriesKey, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    recorded: set[SeriesKey] = set()
    for r in rows:
        if r.status != "ok" or r.item_id not in group_of or r.value is None or math.isnan(r.value):
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
    return mixed_warning(mixed, metrics, "computed at different frame sizes on the items compared here "
                         "(see Evaluation sizes), so differences between generators mix resolution with "
                         "quality; `robojudge score --size N` recomputes at one size.")
