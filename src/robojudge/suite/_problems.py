"""Problems found in a manifest, and the exception that carries them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ManifestProblem:
    """One thing wrong with a manifest, located as precisely as the format allows.

    Exactly one of ``line`` and ``row`` is set for a problem that belongs to one record; both are
    ``None`` for a problem with the file as a whole (unreadable, unknown format, no items).

    A problem is an ``"error"`` (the record is left out of a run) or a ``"warning"`` (it is scored,
    but something deserves a look: a path outside the manifest's folder, a frame rate that had to
    be assumed, a video that a quick look could not decode).

    Attributes:
        file: The manifest path as it was given.
        line: 1-based physical line in a text manifest (JSONL, CSV; for CSV the header is line 1 and
            a record spanning several lines is reported at its first line).
        row: 0-based record index in a manifest without useful line numbers (Parquet, a JSON list).
        item_id: The record's ``item_id`` when it could be read, else ``None``.
        field: Dotted path of the offending field (``labels.pa``, ``views.front``), or ``None`` when
            the problem concerns the whole record.
        message: What is wrong, in plain words.
        severity: ``"error"`` or ``"warning"``.
    """

    file: str
    line: int | None
    row: int | None
    item_id: str | None
    field: str | None
    message: str
    severity: str = "error"

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"

    @property
    def location(self) -> str:
        """``"line 7"``, ``"row 3"`` or ``""`` for a file-level problem."""
        if self.line is not None:
            return f"line {self.line}"
        if self.row is not None:
            return f"row {self.row}"
        return ""

    def __str__(self) -> str:
        if self.line is not None:
            head = f"{self.file}:{self.line}:"
        elif self.row is not None:
            head = f"{self.file}:row {self.row}:"
        else:
            head = f"{self.file}:"
        parts = [head]
        if self.item_id is not None:
            parts.append(_shown_id(self.item_id))
        if self.field is not None:
            parts.append(f"field {self.field}")
        if len(parts) > 1:
            parts[-1] += ":"
        if self.severity == "warning":
            parts.append("warning:")
        parts.append(self.message)
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (all attributes, ``None`` kept)."""
        return asdict(self)


def skipped_rows(problems: Iterable[ManifestProblem]) -> dict[str, int]:
    """The manifest rows that ``problems`` left out (those with an error; a warning leaves its row in),
    each counted once, by the kind of its first error: the message's head before ``:`` (``file not
    found``), or ``invalid row`` when it has none short enough to name a kind.

    >>> p = [ManifestProblem("m.jsonl", 3, None, "a", "video", "file not found: a.mp4"),
    ...      ManifestProblem("m.jsonl", 3, None, "a", "reference_video", "file not found: r.mp4"),
    ...      ManifestProblem("m.jsonl", 4, None, "b", "fps", "fps must be positive, got -1"),
    ...      ManifestProblem("m.jsonl", 5, None, "c", "video", "odd frame rate", severity="warning")]
    >>> skipped_rows(p)
    {'file not found': 1, 'invalid row': 1}
    """
    kinds: dict[tuple[str, int | None, int | None], str] = {}
    for p in problems:
        if not p.is_error or (p.line is None and p.row is None):
            continue
        head, colon, _ = p.message.partition(":")
        kinds.setdefault((p.file, p.line, p.row), head if colon and len(head) <= 40 else "invalid row")
    counts: dict[str, int] = {}
    for kind in kinds.values():
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def skipped_rows_line(problems: Iterable[ManifestProblem]) -> str | None:
    """``"300 manifest rows skipped (file not found: 300)"``, or ``None`` when no row was left out."""
    counts = skipped_rows(problems)
    n = sum(counts.values())
    if not n:
        return None
    kinds = ", ".join(f"{kind}: {k}" for kind, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{n} manifest row{'s' if n != 1 else ''} skipped ({kinds})"


class SkippedRowsWarning(UserWarning):
    """Rows of a manifest were left out of a run because they do not validate (a video not found):
    :func:`robojudge.run.score_suite` warns once, with the count, so that a half-missing suite does not
    read as a complete one; the run's ``manifest_problems`` list them, as ``robojudge suite validate``
    does."""


def _shown_id(item_id: str) -> str:
    """``item 'ep07'``; an id longer than any a manifest accepts (refused for its length) by its start."""
    if len(item_id.encode("utf-8", "surrogatepass")) <= 1000:  # suite._schema.MAX_ITEM_ID_BYTES
        return f"item {item_id!r}"
    return f"item {item_id[:100]!r}... ({len(item_id):,} characters)"


class ManifestError(Exception):
    """A manifest could not be loaded; ``problems`` lists everything that was found wrong.

    ``str()`` gives a count line followed by one problem per line.
    """

    def __init__(self, problems: Iterable[ManifestProblem]) -> None:
        self.problems: list[ManifestProblem] = list(problems)
        super().__init__(self._render())

    def _render(self) -> str:
        n = len(self.problems)
        if n == 0:
            return "invalid manifest"
        head = f"{n} problem{'s' if n != 1 else ''} in {self.problems[0].file}:"
        return "\n".join([head, *(str(p) for p in self.problems)])

    def __str__(self) -> str:
        return self._render()
