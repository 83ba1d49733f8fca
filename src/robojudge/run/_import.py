"""Importing metric values computed outside robojudge (``robojudge results import``).

Some RoboPhys-3D metrics come from pipelines robojudge does not run (IDM action replay and policy
training in a simulator: provider ``external`` in the metric registry). Their values arrive as a
file, one value per (item, metric), and are stored as ordinary ok rows, so ``results export``,
``report`` and ``aggregate`` read them exactly like computed ones.

Identity of an imported row: the metric's registered version and the hash of
``{"provider": "external", "source": SOURCE}`` (:func:`import_config`), where SOURCE names the
external pipeline (default ``"external"``). It does not depend on the file, so importing the same
values again changes nothing, and a corrected file meets the rows it corrects. Where each value came
from (file, its sha256, line, import time) is kept in the row's ``details["import"]``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from robojudge.metrics import MetricSpec, Provider, UnknownMetricError, get_metric
from robojudge.run._import_read import Record, UnreadableFileError, cell_value, read_records
from robojudge.store import (
    EXPORT_COLUMNS,
    PutOutcome,
    ResultRow,
    ResultStore,
    RowConflictError,
    put_rows,
    same_value,
)
from robojudge.store._store import dumps_json
from robojudge.suite import ManifestProblem, Suite, item_id_problem, load_suite

DEFAULT_SOURCE = "external"
"""The source label of imported rows when none is given."""

PROVENANCE_KEY = "import"
"""The key of ``ResultRow.details`` that holds where an imported value came from."""

_COLUMNS = ("item_id", "metric", "value")
#: Columns of a ``results export`` that describe the stored row rather than the value: a file with all
#: of them is read as an export (its extra fields come from its ``details`` column). ``fingerprint`` is
#: not required: exports written before result schema 2 have none.
_EXPORT_BOOKKEEPING = tuple(c for c in EXPORT_COLUMNS if c not in _COLUMNS and c != "fingerprint")
_MAX_LINES_SHOWN = 5


#: One thing wrong with an import file, located as precisely as the format allows: the same record
#: (file, line or row, item, field, message) and ``file:line: item 'x' field F: message`` rendering
#: that manifest problems use. ``field`` is the offending column (``value``, ``metric``, ``item_id``).
ImportProblem = ManifestProblem


class ResultImportError(ValueError):
    """An import was refused; nothing was written. ``problems`` lists every reason found."""

    def __init__(self, problems: Sequence[ImportProblem]) -> None:
        self.problems = list(problems)
        head = f"{self.problems[0].file}: " if self.problems else ""
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{head}{len(self.problems)} problem(s), nothing was imported:\n{lines}")


@dataclass
class MetricCounts:
    """Rows of one metric: newly stored, already stored with the same value, and replaced."""

    imported: int = 0
    unchanged: int = 0
    replaced: int = 0


@dataclass
class ImportReport:
    """What :func:`import_results` did (or, with ``dry_run``, would do).

    Attributes:
        file: The imported file.
        sha256: Its content hash.
        source: The source label of the rows.
        config_hash: The config hash the rows are stored under.
        dry_run: True when nothing was written.
        metrics: Counts per metric id.
        left_out: Records of other metrics left out because ``metric`` was given.
        skipped: Bad records left out with ``skip_invalid`` (empty otherwise).
        ignored_columns: Columns not kept because the file is a ``results export`` (its bookkeeping
            and item columns; the extra fields come from its ``details``), else empty.
    """

    file: Path
    sha256: str
    source: str
    config_hash: str
    dry_run: bool = False
    metrics: dict[str, MetricCounts] = field(default_factory=dict)
    left_out: int = 0
    skipped: list[ImportProblem] = field(default_factory=list)
    ignored_columns: list[str] = field(default_factory=list)

    @property
    def imported(self) -> int:
        return sum(c.imported for c in self.metrics.values())

    @property
    def unchanged(self) -> int:
        return sum(c.unchanged for c in self.metrics.values())

    @property
    def replaced(self) -> int:
        return sum(c.replaced for c in self.metrics.values())


def import_config(source: str | None = None) -> dict[str, str]:
    """The config stored with imported rows; its hash is their ``config_hash``."""
    return {"provider": Provider.external.value, "source": source or DEFAULT_SOURCE}


def import_config_hash(source: str | None = None) -> str:
    """The ``config_hash`` of rows imported with this source label (same recipe as metric configs)."""
    canon = json.dumps(import_config(source), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def import_results(
    store: ResultStore,
    path: str | os.PathLike[str],
    *,
    metric: str | None = None,
    suite: str | os.PathLike[str] | Suite | Sequence[str | os.PathLike[str] | Suite] | None = None,
    replace: bool = False,
    source: str | None = None,
    allow_computed: bool = False,
    skip_invalid: bool = False,
    dry_run: bool = False,
) -> ImportReport:
    """Store the values of a results file as ok rows of their metrics.

    The file is CSV, JSON Lines or Parquet (by suffix), either long (columns ``item_id``,
    ``metric``, ``value``) or for one metric (``item_id``, ``value`` and ``metric=...``). Any other
    column is kept per row in ``details``. Every record is checked before anything is written:
    the metric must be registered and, unless ``allow_computed``, provided by an external pipeline;
    the value a finite number inside the metric's native range; the item in ``suite`` when given;
    and each (item, metric) must appear once. All problems are reported together.

    The import is all-or-nothing: the rows are written in one transaction, and one bad record
    refuses the whole file. A partial import would leave a metric scored on some items only, and
    per-generator means, AFS and leaderboards would then silently average over a different subset
    of items per generator; refusing keeps the fix simple (correct the file, run again; rows that
    did land are never half-updated). ``skip_invalid`` lifts this for bad records only, when
    dropping them is what the user wants; a conflict with stored values still refuses everything.

    Args:
        store: Where the rows go.
        path: The results file.
        metric: The metric of a file without a ``metric`` column; with one, only that metric's
            records are imported (the rest are counted in ``ImportReport.left_out``).
        suite: A suite (or its manifest path) the item ids must belong to, or several (a store scored
            from one manifest per generator): an item id of any of them is accepted.
        replace: Replace stored imported values that differ; without it they refuse the import.
        source: Names the external pipeline; part of the rows' identity (see :func:`import_config`),
            so two pipelines' values of one metric can be stored side by side.
        allow_computed: Also import metrics robojudge produces itself (provider other than
            ``external``); their imported values sit next to computed ones under another config.
        skip_invalid: Leave bad records out (listed in ``ImportReport.skipped``) instead of refusing.
        dry_run: Check everything, report what would happen, write nothing.

    Returns:
        An :class:`ImportReport`.

    Raises:
        ResultImportError: The file cannot be imported; every problem is listed, nothing is written.
        ManifestError: The suite manifest cannot be read.
        StoreError: The store cannot be read or written.
    """
    file = Path(path)
    shown = os.fspath(path)
    try:
        columns, records = read_records(file)
    except UnreadableFileError as exc:
        raise ResultImportError([ImportProblem(shown, None, None, None, None, str(exc))]) from None
    if not records:
        raise ResultImportError([ImportProblem(shown, None, None, None, None, "no records in the file")])
    check = _Checker(shown, allow_computed, _suite_ids(suite))
    if columns:  # none when no JSON line parsed: the per-line errors say why
        check.columns(columns, metric)
        check.export = all(c in columns for c in _EXPORT_BOOKKEEPING)
    if check.problems:  # file-level: nothing else can be judged
        raise ResultImportError(check.problems)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    source = source or DEFAULT_SOURCE
    report = ImportReport(file, digest, source, import_config_hash(source), dry_run=dry_run)
    if check.export:
        report.ignored_columns = [c for c in columns if c not in _COLUMNS and c != "details"]
    provenance = {"provider": Provider.external.value, "source": source, "file": str(file.resolve()),
                  "sha256": digest, "imported_at": datetime.now(UTC).isoformat()}
    rows: list[ResultRow] = []
    where: dict[tuple[str, str, str, str], Record] = {}
    for rec in records:
        found = check.record(rec, metric)
        if found is None:
            continue
        spec, item_id, value, extras = found
        place = {"line": rec.line} if rec.line is not None else {"row": rec.row}
        row = ResultRow(item_id=item_id, metric=spec.id, config_hash=report.config_hash, version=spec.version,
                        status="ok", value=value, details={**extras, PROVENANCE_KEY: {**provenance, **place}},
                        config=import_config(source))
        rows.append(row)
        where[row.key] = rec
    problems = check.finish()
    if problems and not skip_invalid:
        raise ResultImportError(problems)
    report.skipped, report.left_out = problems, check.left_out
    rows = [r for r in rows if (r.item_id, r.metric) not in check.duplicates]
    if not rows:  # every record was bad (skip_invalid) or of another metric
        why = (f"no record of metric {metric!r} ({check.left_out} of other metrics)" if check.left_out
               else "no records to import")
        nothing = ImportProblem(shown, None, None, None, None, why)
        raise ResultImportError(problems or [nothing])
    try:
        outcome = put_rows(store, rows, replace=replace, same=_same_import, dry_run=dry_run)
    except RowConflictError as exc:
        raise ResultImportError([_conflict_problem(shown, where[new.key], new, old)
                                 for new, old in exc.conflicts]) from None
    _count(report, outcome)
    return report


def _extras(row: ResultRow) -> dict[str, Any]:
    """The extra fields of a row as stored (JSON round trip), without where it was imported from."""
    kept = {k: v for k, v in (row.details or {}).items() if k != PROVENANCE_KEY}
    loaded: dict[str, Any] = json.loads(dumps_json(kept))
    return loaded


def _same_import(new: ResultRow, old: ResultRow) -> bool:
    """Same value and same extra columns; where and when it was imported does not matter."""
    return same_value(new, old) and _extras(new) == _extras(old)


def _count(report: ImportReport, outcome: PutOutcome) -> None:
    for attr in ("imported", "unchanged", "replaced"):
        group = outcome.inserted if attr == "imported" else getattr(outcome, attr)
        for row in group:
            counts = report.metrics.setdefault(row.metric, MetricCounts())
            setattr(counts, attr, getattr(counts, attr) + 1)


def _conflict_problem(file: str, rec: Record, new: ResultRow, old: ResultRow) -> ImportProblem:
    came = (old.details or {}).get(PROVENANCE_KEY, {})
    origin = f" (imported from {came['file']} at {came['imported_at']})" if "file" in came else ""
    if not same_value(new, old):
        return ImportProblem(file, rec.line, rec.row, new.item_id, "value",
                             f"metric {new.metric!r}: the store holds {old.value!r}{origin}, the file has "
                             f"{new.value!r}; pass --replace (replace=True) to overwrite")
    was, now = _extras(old), _extras(new)
    differ = sorted(k for k in {*was, *now} if was.get(k, _ABSENT) != now.get(k, _ABSENT))
    shown = "; ".join(f"{k}: stored {_shown(was, k)}, file {_shown(now, k)}"
                      for k in differ[:_MAX_LINES_SHOWN])
    more = f"; and {len(differ) - _MAX_LINES_SHOWN} more" if len(differ) > _MAX_LINES_SHOWN else ""
    return ImportProblem(file, rec.line, rec.row, new.item_id, differ[0] if len(differ) == 1 else None,
                         f"metric {new.metric!r}: the value {new.value!r} is the one stored{origin}, but its "
                         f"extra fields differ ({shown}{more}); pass --replace (replace=True) to store the "
                         "file's fields")


_ABSENT = object()


def _shown(fields: dict[str, Any], key: str) -> str:
    return "(none)" if key not in fields else repr(fields[key])


def _suite_ids(
    suite: str | os.PathLike[str] | Suite | Sequence[str | os.PathLike[str] | Suite] | None,
) -> tuple[str, set[str]] | None:
    """``the suite NAME`` (or ``the suites A, B``) and every item id their manifests list (also of records
    that failed checks)."""
    if suite is None:
        return None
    suites = [suite] if isinstance(suite, str | os.PathLike | Suite) else list(suite)
    names, ids = [], set()
    for one in suites:
        loaded = one if isinstance(one, Suite) else load_suite(Path(one), strict=False)
        ids |= {it.item_id for it in loaded.items} | {p.item_id for p in loaded.problems if p.item_id}
        names.append(str(loaded.path))
    return (f"the suite {names[0]}" if len(names) == 1 else f"the suites {', '.join(names)}"), ids


def _version_cell(raw: Any) -> str | None:
    """An export's ``version`` cell as text (None when empty)."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, float) and raw.is_integer():  # (a Parquet or JSON reader may give 2.0)
        raw = int(raw)
    return str(raw)


class _Checker:
    """Checks columns and records, collecting problems; metric-wide ones are reported once."""

    def __init__(self, file: str, allow_computed: bool, suite: tuple[str, set[str]] | None) -> None:
        self.file = file
        self.allow_computed = allow_computed
        self.suite = suite
        self.problems: list[ImportProblem] = []
        self.left_out = 0
        self.duplicates: set[tuple[str, str]] = set()
        self._specs: dict[str, MetricSpec[Any] | str] = {}  # metric id -> spec, or why it is refused
        self._metric_lines: dict[str, list[Record]] = defaultdict(list)
        # (metric, version) -> the export's records of a version other than the installed one
        self._version_lines: dict[tuple[str, str], list[Record]] = defaultdict(list)
        self._seen: dict[tuple[str, str], Record] = {}
        self.export = False  # the file is a `results export`: extra fields come from its details

    def _add(self, rec: Record | None, item: str | None, fld: str | None, msg: str) -> None:
        line, row = (rec.line, rec.row) if rec is not None else (None, None)
        self.problems.append(ImportProblem(self.file, line, row, item, fld, msg))

    def columns(self, columns: list[str], metric: str | None) -> None:
        missing = [c for c in ("item_id", "value") if c not in columns]
        if missing:
            self._add(None, None, None, f"no column(s) {', '.join(missing)}; columns are "
                      f"{', '.join(columns) or '(none)'} (expected item_id, metric, value)")
        if PROVENANCE_KEY in columns:
            self._add(None, None, PROVENANCE_KEY, f"the column name {PROVENANCE_KEY!r} is reserved for "
                      "provenance; rename it")
        if metric is None and "metric" not in columns:
            self._add(None, None, "metric", "no metric column: add one, or name the metric of every "
                      "line with --metric (metric=...)")
        if metric is not None and isinstance(self._spec(metric), str):
            self._add(None, None, "metric", str(self._specs[metric]))

    def _spec(self, metric_id: str) -> MetricSpec[Any] | str:
        if metric_id not in self._specs:
            try:
                spec = get_metric(metric_id)
            except UnknownMetricError as exc:
                self._specs[metric_id] = str(exc)
            else:
                ok = spec.provider is Provider.external or self.allow_computed
                self._specs[metric_id] = spec if ok else (
                    f"metric {metric_id!r} is provided by '{spec.provider.value}', not by an external "
                    "pipeline: robojudge produces its values itself and imported ones would mix with "
                    "them; pass --allow-computed (allow_computed=True) to import it anyway")
        return self._specs[metric_id]

    def record(
        self, rec: Record, metric: str | None
    ) -> tuple[MetricSpec[Any], str, float, dict[str, Any]] | None:
        """The checked ``(spec, item id, value, extra cells)`` of a record, or None (problem or left out)."""
        if rec.error is not None:
            named = rec.cells.get("item_id")
            self._add(rec, named if isinstance(named, str) else None, rec.field, rec.error)
            return None
        cells = rec.cells
        item_id = self._item_id(rec, cells.get("item_id"))
        mid = cells.get("metric")
        if mid is None:
            mid = metric
        elif metric is not None and str(mid) != metric:
            self.left_out += 1
            return None
        if not isinstance(mid, str) or not mid.strip():
            why = "no metric id: add a metric column or pass --metric" if mid is None else \
                f"metric id {mid!r} is empty or not text"
            self._add(rec, item_id, "metric", why)
            return None
        spec = self._spec(mid)
        if isinstance(spec, str):
            self._metric_lines[mid].append(rec)
            return None
        value = self._value(rec, item_id, cells.get("value"), spec)
        if item_id is None or value is None:
            return None
        first = self._seen.setdefault((item_id, mid), rec)
        if first is not rec:
            self.duplicates.add((item_id, mid))
            self._add(rec, item_id, None, f"duplicate: a second value for metric {mid!r} (the first is at "
                      f"{first.location}); neither is imported")
            return None
        if self.export and (made := _version_cell(cells.get("version"))) not in (None, spec.version):
            self._version_lines[(mid, str(made))].append(rec)  # said once per metric and version
            return None
        if self.export:
            extras = self._export_extras(rec, item_id, cells.get("details"))
            if extras is None:
                return None
        else:
            extras = {k: cell_value(v) for k, v in cells.items() if k not in _COLUMNS and v is not None}
        return spec, item_id, value, extras

    def _export_extras(self, rec: Record, item_id: str, raw: Any) -> dict[str, Any] | None:
        """An export row's extra fields: its ``details`` as stored, without the old provenance."""
        if raw is None or raw == "":
            return {}
        try:
            details = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as exc:
            self._add(rec, item_id, "details", f"not valid JSON ({exc.msg} at column {exc.colno})")
            return None
        if not isinstance(details, dict):
            self._add(rec, item_id, "details", f"expected a JSON object, got {type(details).__name__}")
            return None
        return {k: v for k, v in details.items() if k != PROVENANCE_KEY}

    def _item_id(self, rec: Record, raw: Any) -> str | None:
        if isinstance(raw, int) and not isinstance(raw, bool):
            raw = str(raw)
        if not isinstance(raw, str) or not raw:
            self._add(rec, None, "item_id", f"missing or non-text item id {raw!r}")
            return None
        if raw != raw.strip():
            self._add(rec, raw, "item_id", "item id has leading or trailing whitespace")
            return None
        problem = item_id_problem(raw)  # what a manifest refuses: no manifest could list such an item
        if problem is not None:
            self._add(rec, raw, "item_id", problem)
            return None
        if self.suite is not None and raw not in self.suite[1]:
            self._add(rec, raw, "item_id", f"item {raw!r} is not in {self.suite[0]}")
            return None
        return raw

    def _value(self, rec: Record, item_id: str | None, raw: Any, spec: MetricSpec[Any]) -> float | None:
        value: float | None = None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = float(raw)
        elif isinstance(raw, str):
            try:
                value = float(raw)
            except ValueError:
                value = None
        if value is None:
            what = "missing" if raw is None else f"{raw!r} is not a finite number"
            self._add(rec, item_id, "value", f"value {what} (metric {spec.id!r})")
            return None
        problem = spec.value_problem(value, repr(raw))  # as `robojudge score` checks a computed value
        if problem is not None:
            self._add(rec, item_id, "value", problem)
            return None
        return value

    def finish(self) -> list[ImportProblem]:
        """All problems in file order; a refused metric is one problem, at its first record."""
        for mid, recs in self._metric_lines.items():
            shown = ", ".join(r.location for r in recs[:_MAX_LINES_SHOWN])
            more = f" and {len(recs) - _MAX_LINES_SHOWN} more" if len(recs) > _MAX_LINES_SHOWN else ""
            item = recs[0].cells.get("item_id")
            self._add(recs[0], item if isinstance(item, str) else None, "metric",
                      f"{self._specs[mid]} ({len(recs)} record(s): {shown}{more})")
        for (mid, made), recs in self._version_lines.items():
            shown = ", ".join(r.location for r in recs[:_MAX_LINES_SHOWN])
            more = f" and {len(recs) - _MAX_LINES_SHOWN} more" if len(recs) > _MAX_LINES_SHOWN else ""
            item = recs[0].cells.get("item_id")
            installed = cast("MetricSpec[Any]", self._specs[mid]).version
            self._add(recs[0], item if isinstance(item, str) else None, "version",
                      f"metric {mid!r}: {len(recs)} record(s) of the export were computed by its version "
                      f"{made} ({shown}{more}), and this robojudge's {mid} is version {installed}: imported, "
                      f"their values would be stored and reported as version {installed}'s. Export the rows "
                      "of the installed versions only (`robojudge results export --installed-versions`), or "
                      "pass --skip-invalid to leave these out")
        return sorted(self.problems, key=lambda p: (p.line or 0, p.row or 0))
