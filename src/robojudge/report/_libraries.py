"""Library versions: which compared values were computed with different versions of the libraries.

The runner records in every scored row the versions of the libraries its value came from
(``details["libraries"]``: NumPy, SciPy, scikit-image, OpenCV, PyAV and FFmpeg's decoder and scaler;
the network libraries for a model metric). A release of one of them can move values in their last
digits, enough to reorder values that lie close together (docs/sensitivity.md, "Library versions").
The versions are not part of a row's key, so a store that an upgrade interrupted holds both; when the
values of one metric configuration compared in a report come from different versions, the report
lists them (only the libraries that differ) and the sections that rank generators by metrics say so.

This module holds the pure functions; the report section is :mod:`robojudge.report._library_section`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from robojudge.report._series import SeriesKey
from robojudge.report._sizes import MixedCounts, mixed_warning
from robojudge.store import ResultRow, parse_libraries

#: What a row without recorded versions is listed as (stored before robojudge recorded them).
UNKNOWN = "not recorded"


def row_libraries(row: ResultRow) -> str | None:
    """The library versions a row was computed with, or None when they were not recorded."""
    found = (row.details or {}).get("libraries")
    return found if isinstance(found, str) and found else None


@dataclass(frozen=True)
class MixedLibraries(MixedCounts):
    """One metric configuration whose compared values were computed with different library versions.
    The settings of ``by_group`` are the versions of the libraries that differ (``"opencv 5.0.0"``;
    :data:`UNKNOWN` for rows without a record).

    Attributes:
        libraries: The libraries whose versions differ between its rows.
    """

    libraries: tuple[str, ...] = ()

    @property
    def versions(self) -> list[str]:
        """Every set of versions met, in order of first appearance."""
        return self.settings


def _differ(name: str, records: Iterable[Mapping[str, str]], *, frames: bool | None) -> bool:
    """Whether the records give ``name`` different versions, or name it in some and not in others.

    For a metric that reads no frames (``frames`` false) one of :data:`robojudge.run.FRAME_LIBRARIES` is
    no difference at all: its rows stored before 2026-12-06 recorded them, and those after do not. For
    one that reads frames, a frame library absent from a record is a difference (``robojudge-video``
    absent: read before the reader's fixes), as ``score`` and ``results status`` count it. For a metric
    not registered here (``None``: its plugin is not installed) only different versions are."""
    from robojudge.run import FRAME_LIBRARIES

    if frames is False and name in FRAME_LIBRARIES:
        return False
    records = list(records)
    versions = {v[name] for v in records if name in v}
    absent = any(name not in v for v in records) and (frames or name not in FRAME_LIBRARIES)
    return len(versions) > 1 or absent


def _reads_frames(metric: str) -> bool | None:
    """Whether ``metric`` reads frames; ``None`` for a metric not registered here."""
    from robojudge.metrics import UnknownMetricError, get_metric
    from robojudge.run import reads_frames

    try:
        return reads_frames(get_metric(metric))
    except UnknownMetricError:
        return None


def mixed_libraries(
    rows: Iterable[ResultRow], group_of: Mapping[str, str], labels: Mapping[SeriesKey, str] | None = None
) -> list[MixedLibraries]:
    """The metric configurations whose scored rows on the items of ``group_of`` (item id -> generator)
    were computed with at least two different recorded sets of library versions; rows of other items
    and failed rows do not count.

    Rows without a record do not make a configuration mixed on their own (nothing is known about
    them); when it is mixed they are listed as :data:`UNKNOWN`.
    """
    found: dict[SeriesKey, list[tuple[str, str | None]]] = defaultdict(list)
    for r in rows:
        if r.status == "ok" and r.item_id in group_of:
            key = SeriesKey(r.metric, r.config_hash, r.version)
            found[key].append((group_of[r.item_id], row_libraries(r)))
    out = []
    for key in sorted(found):
        recorded = {text: parse_libraries(text) for _, text in found[key] if text is not None}
        if len(recorded) < 2:
            continue
        names = {n for versions in recorded.values() for n in versions}
        frames = _reads_frames(key.metric)
        differ = tuple(sorted(n for n in names if _differ(n, recorded.values(), frames=frames)))
        if not differ:  # the same versions written differently
            continue
        counts: dict[str, dict[str, int]] = defaultdict(dict)
        for group, text in found[key]:
            if text is None:
                label = UNKNOWN
            else:
                versions = recorded[text]
                label = ", ".join(f"{n} {versions.get(n, 'absent')}" for n in differ)
            counts[group][label] = counts[group].get(label, 0) + 1
        out.append(MixedLibraries(key, (labels or {}).get(key, key.metric),
                                  {g: dict(c) for g, c in sorted(counts.items())}, differ))
    return out


def mixed_library_note(mixed: Sequence[MixedLibraries], metrics: Iterable[str] | None = None) -> str:
    """A sentence warning that ``metrics`` (default: all of ``mixed``) were computed with different
    library versions; empty when none was."""
    return mixed_warning(mixed, metrics, "computed with different library versions on the items compared "
                         "here (see Library versions), which can move values (OpenCV's flow by tens of "
                         "percent) and reorder close ones; `robojudge score --rescore-libraries` recomputes "
                         "them with the installed versions.")
