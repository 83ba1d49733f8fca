"""Exporting a run's results, with item fields of the manifest as extra columns.

The store writes the table (:func:`robojudge.store.export_results`); this adds what only the run
layer knows: the manifest's items and the groups of set-level rows (see
:func:`robojudge.run._sets.group_column`), so that ``robojudge aggregate scores --by`` can read it.
With the manifest, every export also carries its ``generator``, ``source`` and ``clip_id``
(:data:`robojudge.store.MANIFEST_COLUMNS`) after the standard columns, then the columns marking rows
the manifest does not hold (``outside_suite``) and rows whose inputs changed (``stale``).
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from robojudge._chars import look_alike_pairs, look_alike_reason
from robojudge.metrics import LookAlikeGroupsWarning
from robojudge.metrics._sets import GROUP_BY_FIELDS, UNSET_KEY
from robojudge.run._sets import group_column
from robojudge.run._status import installed_version, stale_check
from robojudge.store import (
    MANIFEST_COLUMNS,
    OUTSIDE_COLUMN,
    STALE_COLUMN,
    ResultRow,
    ResultStore,
    export_results,
    item_columns,
    outside_column,
)
from robojudge.store._export import ExportFormat
from robojudge.suite import META_PREFIX, Item, load_suite, meta_key_problem, meta_text

Cell = Callable[[ResultRow], str | None]
"""An export column: the cell of each row (None: empty)."""


def export_run(
    db: str | os.PathLike[str],
    out: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    metric: str | None = None,
    raw: bool = False,
    by: str | Sequence[str] | None = None,
    suite: str | os.PathLike[str] | None = None,
    note: Callable[[str], None] | None = None,
    installed_versions: bool = False,
) -> int:
    """Write the current rows of the store at ``db`` to ``out`` (CSV or Parquet), read-only.

    Args:
        db: Result store URL or SQLite path; it must exist.
        out: Destination file.
        fmt: ``"csv"`` or ``"parquet"``; taken from the suffix of ``out`` when ``None``.
        metric: Only this metric.
        raw: CSV text cells exactly as stored (see :func:`robojudge.store.export_results`).
        by: Item fields (``generator``, ``task``...) to add as columns, read from ``suite``: one
            name, a comma-separated list (``"generator,meta.substrate,regime"``) or a sequence.
            ``meta.KEY`` is the value of ``KEY`` in the item's ``meta`` (:func:`robojudge.suite.meta_text`:
            a text as it is, a number as JSON), in a column named ``meta.KEY``. An item's row gets its
            item's value (``-`` when unset or the key is absent, the group ``aggregate scores`` calls
            so), a set-level row grouped by that field its group, one grouped by another field (or any
            set-level row in a ``meta.KEY`` column: set metrics group by item fields) an empty cell,
            and a row the suite does not hold (an item removed since, a group no item forms) an empty
            cell too. They come first after the standard columns, in the order given.
        suite: The manifest the items' fields are read from; with it the export ends with the
            columns :data:`robojudge.store.MANIFEST_COLUMNS` (``generator``, ``source``,
            ``clip_id``: empty when unset), except those that ``by`` already gives, then
            :data:`robojudge.store.OUTSIDE_COLUMN` (``outside`` for a row the suite does not hold:
            :func:`robojudge.store.outside_column`) and :data:`robojudge.store.STALE_COLUMN`.
        note: Receives remarks that are not errors (with ``suite``): how many rows are outside it
            and how many are stale (:func:`robojudge.run.stale_rows`); both are exported. And how many
            rows ``installed_versions`` left out.
        installed_versions: Leave out the rows of a metric stored under another version than this
            robojudge computes (an upgrade changed the metric, and the old rows stay current beside
            the new ones, which ``robojudge aggregate`` never averages together). Judges' rows, and
            those of metrics not registered here, are all kept.

    Returns:
        The number of rows written.

    Raises:
        ValueError: ``by`` without ``suite``; a field of ``by`` that is not an item field nor
            ``meta.KEY``, is named twice, or is the name of an export column (``item_id``...); an
            item whose value of a ``by`` field is ``-`` itself (it would be one group with the items
            without one); or ``metric`` has no row in the store (the message lists the store's
            metrics).
        StoreError: No store at ``db``, an unknown format, or ``out`` cannot be written.
        ManifestError: The manifest cannot be read.
    """
    fields = _by_fields(by)
    if fields and suite is None:
        raise ValueError("--by and --suite go together: the column is read from the suite (--suite alone "
                         "adds its generator, source and clip_id)")
    with ResultStore(db, read_only=True) as store:
        if metric is not None and store.count(metric=metric) == 0:
            raise ValueError(_unknown_metric(metric, store.metric_ids()))
        columns = None
        outside: list[str] = []
        stale = [0]
        if suite is not None:
            items = load_suite(Path(suite), strict=False, files="optional").items
            marker = outside_column(items)
            for f in fields:
                if clash := _dash_clash(items, f, suite) or meta_key_problem(items, f):
                    raise ValueError(clash)
            columns = {f: _inside_only(_by_column(items, f), marker) for f in fields}
            columns |= {k: v for k, v in item_columns(items, MANIFEST_COLUMNS).items() if k not in fields}
            columns[OUTSIDE_COLUMN] = _counted(marker, outside)
            # Checked as the rows are written (one pass; the rows come by item), and counted for the note.
            columns[STALE_COLUMN] = _stale_marked(stale_check(items, by_item=True), stale)
        left: dict[tuple[str, str], int] = {}
        keep = _installed_only(left) if installed_versions else None
        n = export_results(store, Path(out), cast(ExportFormat | None, fmt), metric=metric, raw=raw,
                           columns=columns, keep=keep)
    if left and note is not None:
        shown = "; ".join(f"{m} version {v} ({k})" for (m, v), k in sorted(left.items()))
        note(f"left out {sum(left.values())} rows of metric versions other than installed: {shown}")
    if stale[0] and note is not None:
        note(f"{stale[0]} of {n} rows are stale: their inputs (video, reference, instruction...) changed "
             f"since they were computed, so their values describe other files; the {STALE_COLUMN!r} column "
             "marks them, and `robojudge aggregate` leaves them out (`robojudge results status` lists them; "
             "the next `robojudge score` or `judge` computes them anew)")
    if outside and note is not None:
        shown = ", ".join(list(dict.fromkeys(outside))[:5])
        cell = (f" and their {fields[0]} cell is empty" if len(fields) == 1
                else f" and their {', '.join(fields)} cells are empty" if fields else "")
        note(f"{len(outside)} of {n} rows are of items (or groups) that are not in {suite} ({shown}...): "
             f"the {OUTSIDE_COLUMN!r} column marks them 'outside'{cell}, and `robojudge aggregate` leaves "
             "them out, as the report does")
    return n


def _by_fields(by: str | Sequence[str] | None) -> tuple[str, ...]:
    """The grouping columns of ``--by``: ``"generator,meta.substrate"`` (or a sequence) as names, checked.

    Each is an item field that holds a text (``generator``, ``regime``, ``split``...) or ``meta.KEY``.

    Raises:
        ValueError: An empty list, a name given twice, ``meta.`` without a key, or a name that is
            neither (the message lists the fields).
    """
    if by is None:
        return ()
    given = by.split(",") if isinstance(by, str) else list(by)
    fields = tuple(f.strip() for f in given)
    if not any(fields) or "" in fields:
        raise ValueError(f"--by {','.join(given)!r}: name item fields separated by commas, e.g. "
                         "generator,meta.substrate,regime (an empty name is none)")
    for f in fields:
        if f.startswith(META_PREFIX):
            if not f[len(META_PREFIX):].strip():
                raise ValueError(f"--by {f!r}: name the key of the items' meta, e.g. meta.substrate")
        elif f not in GROUP_BY_FIELDS:
            what = "holds a structure, not a text" if f in Item.model_fields else "is not an item field"
            raise ValueError(f"--by {f!r} {what}; use one of {', '.join(sorted(GROUP_BY_FIELDS))}, or "
                             "meta.KEY for a value of the items' meta")
    if twice := sorted(f for f in set(fields) if fields.count(f) > 1):
        raise ValueError(f"--by {','.join(fields)}: {twice[0]} is named twice")
    return fields


def _field_text(item: Item, field: str) -> str | None:
    if field.startswith(META_PREFIX):
        return meta_text(item, field[len(META_PREFIX):])
    value = getattr(item, field, None)
    return None if value is None else str(getattr(value, "value", value))


def _by_column(items: Sequence[Item], field: str) -> Cell:
    """The export column of ``--by field``: :func:`group_column` for an item field; for ``meta.KEY`` the
    item's value (``-``, :data:`UNSET_KEY`, when it has none), and an empty cell for a row of no item (a
    set-level group is one of an item field, never of a meta key)."""
    if not field.startswith(META_PREFIX):
        return group_column(items, field)
    keys = {it.item_id: _field_text(it, field) for it in items}
    for first, later in look_alike_pairs(v for v in keys.values() if v is not None):
        warnings.warn(f"--by {field}: two values of the {field} column, {ascii(first)} and {ascii(later)}, "
                      f"differ only {look_alike_reason(first, later, 'their')}: they print alike but are two "
                      f"groups; spell the {field} one way in the manifest", LookAlikeGroupsWarning,
                      stacklevel=2)

    def cell(row: ResultRow) -> str | None:
        if row.item_id not in keys:
            return None
        value = keys[row.item_id]
        return UNSET_KEY if value is None else value

    return cell


def _dash_clash(items: Sequence[Item], field: str, suite: str | os.PathLike[str]) -> str | None:
    """Why ``--by field`` cannot be written for ``items``: an item whose value is literally ``-``, the
    cell an item without the field gets, so that ``aggregate scores --by`` would average the two as one
    group; None when no item has it."""
    dashed = [it.item_id for it in items if _field_text(it, field) == UNSET_KEY]
    if not dashed:
        return None
    shown = ", ".join(dashed[:5]) + (f" and {len(dashed) - 5} more" if len(dashed) > 5 else "")
    return (f"--by {field}: {len(dashed)} item(s) of {suite} have the {field} {UNSET_KEY!r} ({shown}), which "
            f"is what --by writes for an item without a {field}; `aggregate scores` would take both for one "
            f"group. Give those items another {field} in the manifest")


def _installed(row: ResultRow, versions: dict[str, str | None]) -> bool:
    """Whether ``row`` is of the version of its metric this robojudge computes (or of a judge, or of a
    metric it does not know); ``versions`` remembers the versions looked up."""
    return installed_version(row.metric, versions) in (None, row.version)


def _installed_only(left: dict[tuple[str, str], int]) -> Callable[[ResultRow], bool]:
    """Whether a row is of the version of its metric this robojudge computes (or of a judge, or of a
    metric it does not know); the rows it refuses are counted in ``left`` by (metric, version)."""
    versions: dict[str, str | None] = {}

    def keep(row: ResultRow) -> bool:
        if _installed(row, versions):
            return True
        left[row.metric, row.version] = left.get((row.metric, row.version), 0) + 1
        return False

    return keep


def _unknown_metric(metric: str, stored: list[str]) -> str:
    if not stored:
        return f"--metric {metric!r}: the store holds no rows"
    close = difflib.get_close_matches(metric, stored, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"--metric {metric!r}: no rows of that metric in the store{hint}; its metrics: {', '.join(stored)}"


def _stale_marked(is_stale: Callable[[ResultRow], bool], count: list[int]) -> Cell:
    """The :data:`STALE_COLUMN` cell (``stale`` or empty), counting the rows it marks in ``count[0]``."""

    def cell(row: ResultRow) -> str | None:
        if not is_stale(row):
            return ""
        count[0] += 1
        return "stale"

    return cell


def _counted(marker: Cell, outside: list[str]) -> Cell:
    """``marker``, noting in ``outside`` the id of each row it marks."""

    def cell(row: ResultRow) -> str | None:
        mark = marker(row)
        if mark:
            outside.append(row.item_id)
        return mark

    return cell


def _inside_only(cell: Cell, marker: Cell) -> Cell:
    """``cell``, empty for a row ``marker`` marks as outside the suite: a set-level group no item forms
    any more (a generator renamed since) stands for no group of the suite, and a removed item's row
    must not join the group of the items without the field (``-``)."""
    return lambda row: None if marker(row) else cell(row)
