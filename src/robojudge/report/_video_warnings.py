"""Video warnings: what had to be assumed about the videos behind the values.

``robojudge score`` stores what it had to assume about an item's video in the row's
``details.video_warnings`` (``"<path>: <message>"``): frames that look like a grid of views tiled in
one picture (a GT/prediction mosaic that every single-view metric reads as one camera), a frame size
that changes mid-stream, damage a decoder concealed, an assumed frame rate, unusable time stamps. The
score run prints them once; without this section the report, read or passed on alone, ranked and
bolded generators whose clips are such mosaics and never said so. The section
(:mod:`robojudge.report._warnings_section`) lists the items whose current rows carry warnings, the
kinds, and the count per group, and :func:`tiling_note` puts a sentence under the tables that rank the
groups when a ranked group's items look tiled.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from robojudge.store import ResultRow

#: The kind a warning is counted under: the first whose words it holds; any other is ``other``.
TILED = "tiled (a grid of views read as one camera)"
#: A tiled ``reference_video``: the item's own video is one view; only the metrics that compare it with
#: its reference took the mosaic (counted apart, or the report called the generator's videos tiled).
REFERENCE_TILED = "reference tiled (compared with a mosaic)"
KINDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("the reference video: its frames look like",), REFERENCE_TILED),
    (("grid of views",), TILED),
    (("frame size changes",), "frame size changes (resized)"),
    (("damaged",), "damaged"),
    (("truncated",), "truncated"),
    (("non-square pixels",), "non-square pixels"),
    (("rate assumed", "assumed:", "fps above"), "frame rate assumed or lowered"),
    (("time stamps",), "time stamps not used"),
    (("quarter turn", "rotation"), "rotation"),
)
OTHER = "other"


def warning_kind(warning: str) -> str:
    """The kind of one ``details.video_warnings`` entry (:data:`KINDS`).

    >>> warning_kind("v.mp4: its frames look like a 2x3 grid of views (straight seams at x=320 ...)")
    'tiled (a grid of views read as one camera)'
    >>> warning_kind("v.mp4: damaged: 2 packets undecodable"), warning_kind("v.mp4: something new")
    ('damaged', 'other')
    >>> warning_kind("r.mp4: the reference video: its frames look like a 2x2 grid of views (...)")
    'reference tiled (compared with a mosaic)'
    """
    said = warning.lower()
    for words, kind in KINDS:
        if any(w in said for w in words):
            return kind
    return OTHER


@dataclass
class ItemWarnings:
    """The warnings of one item's current rows: each text once (in order met), and how many rows carry any."""

    texts: list[str] = field(default_factory=list)
    rows: int = 0

    @property
    def kinds(self) -> list[str]:
        """The kinds of its warnings, in :data:`KINDS` order."""
        found = {warning_kind(t) for t in self.texts}
        return [k for k in (*(kind for _, kind in KINDS), OTHER) if k in found]


def item_warnings(rows: Iterable[ResultRow]) -> dict[str, ItemWarnings]:
    """Per item id whose current rows carry ``details.video_warnings``, its :class:`ItemWarnings`."""
    out: dict[str, ItemWarnings] = {}
    for r in rows:
        found = (r.details or {}).get("video_warnings") if r.superseded_at is None else None
        if not isinstance(found, list) or not found:
            continue
        w = out.setdefault(r.item_id, ItemWarnings())
        w.rows += 1
        w.texts.extend(t for t in map(str, found) if t not in w.texts)
    return out


def tiled_groups(warned: Mapping[str, ItemWarnings], group_of: Mapping[str, str],
                 groups: Iterable[str]) -> dict[str, int]:
    """Of ``groups``, those with items whose videos look tiled, and how many such items each has."""
    wanted: set[str] = set(groups)
    out: dict[str, int] = defaultdict(int)
    for item, w in warned.items():
        g = group_of.get(item)
        if g in wanted and TILED in w.kinds:
            out[g] += 1
    return dict(sorted(out.items()))


def tiling_note(rows: Iterable[ResultRow], group_of: Mapping[str, str], groups: Iterable[str]) -> str:
    """A sentence for a table that ranks ``groups`` when items of some of them look tiled (``""`` else):
    ``rows`` the items' stored rows, ``group_of`` each item's group."""
    counts: dict[str, int] = defaultdict(int)
    for g in group_of.values():
        counts[g] += 1
    tiled = tiled_groups(item_warnings(rows), group_of, groups)
    if not tiled:
        return ""
    said = ", ".join(f"{g} ({n} of {counts[g]} items)" for g, n in tiled.items())
    return (f" Tiled videos in {said}: their frames look like a grid of views, which every single-view "
            "metric read as one camera, so their values measure the mosaic and its seams, not one view "
            "(section 'Video warnings').")
