"""Loading and validating a suite manifest."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from robojudge.suite._check import check_paths, describe_error
from robojudge.suite._problems import ManifestError, ManifestProblem
from robojudge.suite._read import RawRecord, file_problem, read_records
from robojudge.suite._schema import Item


@dataclass
class Suite:
    """The valid items of one manifest, with their paths made absolute.

    Attributes:
        path: The manifest file (absolute, ``..`` removed, symlinks kept).
        root: The folder relative manifest paths are taken against (``path.parent``).
        items: Valid items in file order; file fields are absolute (see :meth:`Item.resolve`).
        problems: Everything found wrong; empty when the suite was loaded with ``strict=True``.
    """

    path: Path
    root: Path
    items: list[Item]
    problems: list[ManifestProblem] = field(default_factory=list)
    _index: dict[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index = {it.item_id: it for it in self.items}

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @property
    def ok(self) -> bool:
        """True when the manifest had no problems at all."""
        return not self.problems

    def by_id(self, item_id: str) -> Item:
        """The item with this id.

        Raises:
            KeyError: No (valid) item has this id.
        """
        try:
            return self._index[item_id]
        except KeyError:
            raise KeyError(f"no item {item_id!r} in {self.path}") from None


def main_view_name(item: Item) -> str | None:
    """Name of the item's main view, or ``None`` when it has no ``views``.

    The main view is ``item.main_view`` when set, else the view whose path equals ``item.video``,
    else the first view listed.
    """
    if not item.views:
        return None
    if item.main_view is not None:
        return item.main_view
    for name, p in item.views.items():
        if p == item.video:
            return name
    return next(iter(item.views))


def _where(rec: RawRecord) -> str:
    return f"line {rec.line}" if rec.line is not None else f"row {rec.row}"


def _check_record(
    rec: RawRecord, shown: str, root: Path, first_seen: dict[str, str]
) -> tuple[Item | None, list[ManifestProblem]]:
    """Validate one record; ``first_seen`` maps ids met so far to their location (updated)."""
    data = rec.data
    raw_id = data.get("item_id") if data is not None else None
    item_id = raw_id if isinstance(raw_id, str) and raw_id else None
    found = [dataclasses.replace(p, item_id=item_id) for p in rec.problems]
    if data is None:
        return None, found

    def add(field_: str | None, message: str) -> None:
        found.append(ManifestProblem(shown, rec.line, rec.row, item_id, field_, message))

    if item_id is not None:
        if item_id in first_seen:
            add("item_id", f"duplicate item_id {item_id!r} (first used at {first_seen[item_id]})")
        else:
            first_seen[item_id] = _where(rec)
    item: Item | None = None
    try:
        item = Item.model_validate(data)
    except ValidationError as e:
        for err in e.errors():
            add(*describe_error(err))
    for field_, message in check_paths(data, root):
        add(field_, message)
    return item, found


def _collect(path: Path, shown: str, root: Path) -> tuple[list[Item], list[ManifestProblem]]:
    """Read and check every record; raise :class:`ManifestError` only for file-level problems."""
    records = read_records(path, shown)
    items: list[Item] = []
    problems: list[ManifestProblem] = []
    first_seen: dict[str, str] = {}

    for rec in records:
        item, found = _check_record(rec, shown, root, first_seen)
        problems.extend(found)
        if item is not None and not found:
            items.append(item.resolve(root))

    if not records:
        problems.append(file_problem(shown, "manifest has no items"))
    return items, problems


def _locate(path: str | Path) -> tuple[Path, str, Path]:
    # abspath, not resolve(): tidy ".." away but keep a symlinked manifest's own folder as the root.
    full = Path(os.path.abspath(Path(path).expanduser()))
    return full, str(path), full.parent


def load_suite(path: str | Path, *, strict: bool = True) -> Suite:
    """Load a suite manifest (JSONL, CSV, Parquet or a JSON list), one item per rollout.

    Args:
        path: The manifest file; the format is chosen by suffix (``.jsonl``/``.ndjson``, ``.csv``,
            ``.parquet``, ``.json``).
        strict: When true, any problem raises. When false, bad records are left out of
            ``Suite.items`` and listed in ``Suite.problems``, so one broken line does not stop a run.

    Returns:
        The suite, with relative paths resolved against the manifest's folder.

    Raises:
        ManifestError: With ``strict``, when anything is wrong (all problems at once). Always, when
            the file itself cannot be used (missing, unreadable, unknown format, no CSV header).
    """
    full, shown, root = _locate(path)
    items, problems = _collect(full, shown, root)
    if strict and problems:
        raise ManifestError(problems)
    return Suite(path=full, root=root, items=items, problems=problems)


def validate_manifest(path: str | Path) -> list[ManifestProblem]:
    """Every problem in a manifest, in file order; an empty list means the manifest is valid.

    Never raises for bad content: a file that cannot be read at all (missing, unknown format,
    unreadable) comes back as a single file-level problem (``line`` and ``row`` both ``None``).
    Media are not decoded; path fields are only checked for existence.
    """
    full, shown, root = _locate(path)
    try:
        _, problems = _collect(full, shown, root)
    except ManifestError as e:
        return e.problems
    return problems
