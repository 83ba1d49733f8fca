"""Reports of a suite's stored results, grouped by a manifest field."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from robojudge._chars import look_alike_pairs, look_alike_reason
from robojudge.report._provenance import DefaultsOf, no_defaults, report_provenance
from robojudge.report._summary import GroupSummary, RangeOf, StaleFinder, write_report
from robojudge.report._unset import unset_name, unset_note
from robojudge.store import OUTSIDE_COLUMN, ResultRow, ResultStore, item_columns, outside_column
from robojudge.suite import META_PREFIX, Item, load_suite, meta_key_problem, meta_text

GROUP_FIELDS = ("generator", "embodiment", "source", "task", "regime", "split", "prompt_variant")


def group_by_field(items: Iterable[Item], field: str) -> dict[str, str]:
    """Map item ids to the value of a manifest field (``"(unset)"`` where it is empty, or another name
    when a real value is spelt so: :func:`robojudge.report._unset.unset_name`).

    ``field`` is one of :data:`GROUP_FIELDS` or ``meta.KEY``, a value of the item's ``meta``
    (:func:`robojudge.suite.meta_text`: a number as JSON; an item without the key is unset).
    """
    if "," in field:
        raise ValueError(f"report --by takes one field, got {field!r}; for a table by two fields, write "
                         "`robojudge results export --by a,b` and run `robojudge aggregate scores --by a,b` "
                         "on it")
    if field not in GROUP_FIELDS and not (field.startswith(META_PREFIX) and field[len(META_PREFIX):].strip()):
        raise ValueError(f"cannot group by {field!r}; choose one of {', '.join(GROUP_FIELDS)}, or meta.KEY "
                         "for a value of the items' meta (meta.rollout_depth)")
    items = list(items)
    if problem := meta_key_problem(items, field):
        raise ValueError(problem)
    values = {it.item_id: _field_text(it, field) for it in items}
    missing = unset_name(values.values())
    return {item_id: missing if v is None else v for item_id, v in values.items()}


def look_alike_note(groups: Iterable[str]) -> str:
    """A sentence (with a leading space) for each two groups that print alike but are apart (their
    names differ only in how their characters are composed, or in characters that print as nothing or
    as a space: :func:`robojudge._chars.look_alike_key`), naming both escaped; empty when none do."""
    out = ""
    for first, later in look_alike_pairs(groups):
        out += (f" The groups {ascii(first)} and {ascii(later)} differ only "
                f"{look_alike_reason(first, later, 'their')}: they print alike but are two groups; spell "
                "them one way in the manifest.")
    return out


def _text(value: object) -> str | None:
    return None if value is None else str(getattr(value, "value", value))


def _field_text(item: Item, field: str) -> str | None:
    if field.startswith(META_PREFIX):
        return meta_text(item, field[len(META_PREFIX):])
    return _text(getattr(item, field))


def report_suite(
    manifest: str | Path, db: str, out_dir: str | Path, *, by: str = "generator", title: str | None = None,
    native_range: RangeOf | None = None,
    stale: StaleFinder | None = None,
    named: bool = True,
    command: Sequence[str] | None = None,
    defaults: DefaultsOf = no_defaults,
    rows: Sequence[ResultRow] | None = None,
) -> list[GroupSummary]:
    """Write the report folder for the results of ``manifest`` stored at ``db``, grouped ``by`` a field.

    ``native_range``: see :func:`write_report` (the CLI passes the metric registry's). ``stale`` finds
    the rows whose inputs changed since they were computed (:func:`robojudge.run.stale_rows`, which
    the CLI passes); they are left out of the summary, which says so. ``named``: as
    :func:`robojudge.report.write_html_report`'s. The folder's ``provenance.json``
    (:mod:`robojudge.report._provenance`) names the manifest by its absolute path and digest, every
    stored configuration, and ``command`` (the command line, which the CLI passes); ``defaults``: as
    :func:`robojudge.report.write_html_report`'s.

    The store's rows are read once (or ``rows`` is that read, done by the caller, who passes the same
    rows to :func:`robojudge.report.write_html_report`): the summary, ``results.csv`` and
    ``provenance.json`` are of one snapshot, even while a run is writing the store.
    """
    suite = load_suite(manifest, strict=False, files="optional")  # results are read, not files
    group_of = group_by_field(suite.items, by)
    note = unset_note((_field_text(it, by) for it in suite.items), by) + look_alike_note(group_of.values())
    note = note.strip()
    with ResultStore(db, read_only=True) as store:
        heading = title or f"robojudge results: {Path(manifest).name}"
        clips = {it.item_id: it.clip_id or it.item_id for it in suite.items}
        rows = list(store.rows() if rows is None else rows)  # read once for every file of the folder
        left_out = stale(rows, suite.items) if stale is not None else []
        columns = {**item_columns(suite.items), OUTSIDE_COLUMN: outside_column(suite.items)}
        gone = {r.key for r in left_out}
        record = report_provenance([r for r in rows if r.key not in gone], store=store.url,
                                   manifests=[manifest], command=command, defaults=defaults)
        return write_report(store, out_dir, group_of, title=heading, group_label=by, cluster_of=clips,
                            native_range=native_range, columns=columns, stale=left_out, note=note, rows=rows,
                            named=named, provenance=record)
