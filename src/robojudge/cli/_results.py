"""``robojudge results ...``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from robojudge.cli._common import console, err_console, fail, first_names, manifests_line, warnings_said_once
from robojudge.cli._tables import name_table, print_table
from robojudge.store import (
    SCHEMA_VERSION,
    NotAStoreError,
    ResultStore,
    StoreError,
    default_db_url,
    is_stream,
    parse_url,
)

if TYPE_CHECKING:
    from robojudge.suite import ManifestProblem

app = typer.Typer(help="Work with stored results.", no_args_is_help=True)


#: Suffixes of a file given where a store goes that is most likely a suite manifest (or a table).
MANIFEST_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json", ".csv", ".parquet"})


def _store_given(store: str | None, db: str | None, command: str) -> str | None:
    """The store a ``results`` command reads: its positional argument (a run folder, as ``robojudge
    score`` prints it for ``report``) or ``--db``, not both."""
    if store is not None and db is not None:
        raise fail(f"results {command}: give the store once, as {store} or as --db {db}, not both")
    if store is not None and Path(store).suffix.lower() in MANIFEST_SUFFIXES and Path(store).is_file():
        # (upgrade has no --suite: it reads the store alone)
        hint = f"a suite manifest is given as --suite {store}" if command != "upgrade" else (
            "give the run folder or the store the manifest was scored into")
        raise fail(f"results {command}: {store} is a file, not a run folder or store; {hint}")
    return store if store is not None else db


@app.command("export")
def export_cmd(
    store: str | None = typer.Argument(
        None, metavar="[RUN_OR_DB]", help="Run folder, SQLite path or store URL (as --db), e.g. the "
        "runs/NAME that `robojudge score` ends with."),
    db: str | None = typer.Option(
        None, "--db", help="Result store URL, SQLite path or run folder \\[default: --suite's store, as "
        "`robojudge score` finds it]."),
    out: Path = typer.Option(..., "--out", "-o", help="Output file; '-' (or /dev/stdout) writes CSV to "
                             "standard output."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="csv or parquet \\[default: from the --out suffix; csv for '-']."
    ),
    metric: str | None = typer.Option(None, "--metric", help="Only this metric."),
    raw: bool = typer.Option(False, "--raw", help="CSV: keep text cells starting with = + - @ as stored "
                             "(by default they get a leading ' so that spreadsheets do not run them)."),
    by: str | None = typer.Option(
        None, "--by", help="Add columns with these item fields from --suite, comma-separated (e.g. "
        "generator,meta.substrate,regime); meta.KEY is a value of the items' meta, '-' where an item has "
        "none, as for an unset field; set-level rows get their group. For `aggregate scores`."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite manifest: adds its generator, source and "
                                      "clip_id columns at the end (and --by's columns), then outside_suite "
                                      "(rows it does not hold) and stale."),
    installed_versions: bool = typer.Option(
        False, "--installed-versions", help="Leave out the rows of a metric stored under another version "
        "than this robojudge computes (after an upgrade changed a metric, the old rows stay current beside "
        "the new ones, and `aggregate` refuses to average the two)."),
) -> None:
    """Write stored results as long rows (one per item, metric and config; current rows only)."""
    from robojudge.metrics import LookAlikeGroupsWarning
    from robojudge.run import export_run, suite_store_url
    from robojudge.suite import ManifestError

    db = _store_given(store, db, "export")
    try:
        if db is None:
            if suite is None:
                raise fail("give the run folder (robojudge results export runs/NAME -o FILE), --db (a store "
                           "URL, file or run folder) or --suite (the manifest, whose store is found as "
                           "`robojudge score` finds it)")
            db = suite_store_url(suite)
        with warnings_said_once(LookAlikeGroupsWarning):  # --by values that print alike
            n = export_run(db, out, fmt, metric=metric, raw=raw, by=by, suite=suite,
                           note=lambda m: err_console.print(f"note: {m}", highlight=False, markup=False),
                           installed_versions=installed_versions)
    except (StoreError, ManifestError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: typer would exit 130 without a word
        err_console.print(f"[yellow]interrupted: {escape(str(out))} is as it was (an export replaces it "
                          "only once written whole); rerun the same command to export[/]", markup=True,
                          highlight=False)
        raise typer.Exit(130) from None
    # the data went to stdout: the count goes beside the notes
    where = "standard output" if str(out) == "-" else out
    (err_console if is_stream(out) else console).print(f"wrote {n} rows to {where}", highlight=False)


def _files_missing(manifests: list[Path], ids: set[str]) -> list[ManifestProblem]:
    """The missing or unreadable files of the items ``ids`` in ``manifests`` (a run folder's), each item
    once, as ``results status MANIFEST`` lists them."""
    from robojudge.suite import load_suite

    out: dict[str, ManifestProblem] = {}
    for manifest in manifests:
        for p in load_suite(manifest, strict=False, files="optional").files_missing:
            if p.item_id in ids:
                out.setdefault(p.item_id or "", p)
    return list(out.values())


@app.command("diff")
def diff_cmd(
    a: str = typer.Argument(..., help="Store A (URL, SQLite path or run folder): the \"before\"."),
    b: str | None = typer.Argument(None, help="Store B, the \"after\" \\[default: A again, with "
                                   "--versions]."),
    versions: str | None = typer.Option(
        None, "--versions", help="Two metric versions, e.g. v3,v4: version 3 of each configuration on A "
        "against version 4 of the same configuration on B (one store: two versions within it)."),
    metric: str | None = typer.Option(None, "--metric", help="Only this metric."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
) -> None:
    """Compare stored values item by item: two stores (or run folders), or two versions in one store.

    Per series (metric, config hash, version): the items with a value on both sides, their means, the mean
    change B - A, the largest change, the items with a value on one side only, and flags where the
    metric's versions or configurations differ between the stores or a shared item was computed with
    other library versions. Reads the stores without writing to them.
    """
    from robojudge.store import diff_stores, mask_text

    pair: tuple[str, str] | None = None
    if versions is not None:
        parts = [p.strip() for p in versions.split(",")]  # (a leading v is read by diff_results)
        if len(parts) != 2 or not all(parts):
            raise fail(f"--versions takes two versions, e.g. v3,v4; got {versions!r}")
        pair = (parts[0], parts[1])
    elif b is None:
        raise fail("give a second store B, or --versions VA,VB to compare two versions within A")
    try:
        diff = diff_stores(a, b, versions=pair, metric=metric)
    except (StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        # (a store's password never printed: as every other command shows a URL)
        typer.echo(json.dumps({"a": mask_text(a), "b": mask_text(b if b is not None else a),
                               **diff.to_dict()}, indent=2))
        return
    if not diff.series:
        console.print("no stored rows to compare" + (f" of metric {metric}" if metric else "")
                      + (f" at versions {pair[0]} and {pair[1]}" if pair else ""), highlight=False,
                      markup=False)
        return
    shown_a, shown_b = mask_text(a), mask_text(b if b is not None else a)
    table = name_table(f"B - A per series ({escape(shown_a)} -> {escape(shown_b)})", "metric",
                       "config", "version", "shared", "mean A", "mean B", "mean B - A", "max |B - A|",
                       "changed", "only A", "only B", "flags")
    for s in diff.series:
        version = (s.version_a or s.version_b or "") if s.version_a == s.version_b or None in (
            s.version_a, s.version_b) else f"{s.version_a} -> {s.version_b}"
        config = s.config_hash[:8] + (f" -> {s.config_hash_b[:8]}" if s.config_hash_b is not None else "")
        table.add_row(escape(s.metric), config, version, str(s.n_shared), _num(s.mean_a),
                      _num(s.mean_b), _num(s.mean_delta), _num(s.max_abs_delta), str(s.n_changed),
                      str(s.only_a), str(s.only_b), escape("; ".join(diff.flags(s))))
    print_table(table)
    for m, (va, vb) in diff.version_changes.items():
        console.print(f"{m}: versions differ: A has {', '.join(va)}, B has {', '.join(vb)}", highlight=False,
                      markup=False)
    for m, (ca, cb) in diff.config_changes.items():
        console.print(f"{m}: configurations differ: A has {', '.join(c[:8] for c in ca)}, B has "
                      f"{', '.join(c[:8] for c in cb)}", highlight=False, markup=False)
    ver_a, ver_b = diff.versions or ("?", "?")
    for m, differ in diff.unpaired_configs.items():
        console.print(f"{m}: no configuration is stored at both versions {ver_a} and {ver_b}, and their "
                      f"configurations differ in more than a setting one of them lacks, so none is paired: "
                      f"{'; '.join(differ)}", highlight=False, markup=False)
    for side, ids in (("A", diff.items_only_a), ("B", diff.items_only_b)):
        if ids:
            console.print(f"items only in {side}: {len(ids)} ({first_names(ids)})", highlight=False,
                          markup=False)


def _num(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.4g}"


@app.command("status")
def status_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest whose items' inputs the rows are checked with, or "
                                 "a run folder (its store, and the manifests in it or scored into it)."),
    db: str | None = typer.Option(
        None, "--db", help="Result store URL, SQLite path or run folder \\[default: RUN_DIR/results.sqlite]."
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir",
        help=("Run folder of the default store \\[default: the run folder holding the "
              "manifest, else runs/<manifest name>].")
    ),
    stale: bool = typer.Option(False, "--stale", help="List the stale rows, those whose inputs cannot be "
                               "read now and those without a fingerprint."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the table and its notes (with "
                                 "--stale, the rows listed under \"rows\")."),
) -> None:
    """Per metric: current rows, how many still match their inputs, stale rows, superseded rows, errors.

    A stale row's inputs (video, reference, instruction, ...) changed since it was computed: the next
    `robojudge score` (or judge, or metrics sets) recomputes it and keeps the old row as superseded.
    'other libraries' counts scored rows computed with other versions of OpenCV, FFmpeg, NumPy... than
    installed here (kept by reruns). The last two columns are the time the current rows took to compute
    (total and median per row), so the metrics that dominate a run's time stand out. Reads the store
    without writing to it.
    """
    from robojudge.run import StoreStatus, results_status, status_suite
    from robojudge.suite import ManifestError

    status: StoreStatus
    try:
        if suite.is_dir():  # a run folder: its store, checked with the items of every manifest behind it
            from robojudge.report import load_run_results

            run = load_run_results(suite, db)
            err_console.print(manifests_line(run.manifests), highlight=False)  # a note, as in report
            with ResultStore(run.db_url, read_only=True) as store:
                status = results_status(store, run.items)
            status.files_missing = _files_missing(run.manifests, {it.item_id for it in run.items})
        else:
            status = status_suite(suite, db=db, run_dir=run_dir)
    except (StoreError, ManifestError, FileNotFoundError, ValueError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(status.to_dict(rows=stale), indent=2))
        return
    table = name_table(status.db_url, "metric", "config", "version", "current", "up to date", "stale",
                       "inputs unavailable", "no fingerprint", "imported", "not checked", "no row", "errors",
                       "unscored", "superseded", "other libraries", "total s", "median s")
    for m in status.metrics:
        median = "-" if m.median_s is None else f"{m.median_s:.2f}"
        version = f"{m.version} (now {m.installed_version})" if m.old_version else m.version
        table.add_row(m.metric, m.config_hash, version, *(str(v) for v in (
            m.current, m.up_to_date, m.stale, m.unavailable, m.unknown, m.imported, m.not_checked, m.no_row,
            m.errors,
            m.unscored, m.superseded, m.other_libraries)), f"{m.seconds:.1f}", median)
    print_table(table)
    console.print("not checked: rows of ids not in this manifest, or of metrics this robojudge does not "
                  "know; no row: manifest items without a row of that metric configuration", highlight=False)
    for m in status.metrics:
        key = (m.metric, m.config_hash, m.version)
        if m.other_ids or m.no_row:
            parts = []
            if m.other_ids:
                parts.append(f"{m.other_ids} row(s) of ids not in the manifest "
                             f"({first_names(status.other_ids.get(key, []), 3)})")
            if m.no_row:
                parts.append(f"{m.no_row} manifest item(s) without a row "
                             f"({first_names(status.no_row.get(key, []), 3)})")
            command = "robojudge judge" if m.metric.startswith("judge:") else "robojudge score"
            older = any((o.metric, o.config_hash) == (m.metric, m.config_hash) and o.old_version and o.current
                        for o in status.metrics)
            what = ("new or renamed items, or items stored at an older version only" if older else
                    "new or renamed items")
            console.print(f"{m.metric} [{m.config_hash}]: " + "; ".join(parts) + f" ({what}: "
                          f"`{command}` computes them; or items it does not apply to)", highlight=False,
                          markup=False)
    # (the installed version's rows under any configuration: a version bump may change the config hash)
    installed = {m.metric for m in status.metrics if not m.old_version and m.current}
    for m in status.metrics:
        if not (m.old_version and m.current):
            continue
        if m.metric in installed:  # a run computes nothing more: the old rows stay beside the new ones
            console.print(f"{m.metric} [{m.config_hash}]: {m.current} row(s) of version {m.version} stay "
                          f"beside the version-{m.installed_version} rows; no run replaces them, and reports "
                          "show the versions apart", highlight=False, markup=False)
        else:
            console.print(f"{m.metric} [{m.config_hash}]: {m.current} row(s) of version {m.version}; this "
                          f"robojudge computes version {m.installed_version}, so the next `robojudge score` "
                          f"computes the metric again (its version-{m.version} rows stay)",
                          highlight=False, markup=False)
    n_stale, n_unknown, n_gone = len(status.stale), len(status.unknown), len(status.unavailable)
    console.print(f"{n_stale} stale (inputs changed; the next run recomputes them), {n_gone} with inputs "
                  "unavailable (files missing or unreadable now; kept until they are back), "
                  f"{n_unknown} without an inputs fingerprint, or with one of an older recipe (kept; "
                  "`robojudge score --rescore-unknown` recomputes them, `robojudge metrics sets "
                  "--rescore-unknown` the set-level ones)", highlight=False)
    for (metric, config_hash, _), served in status.served_models.items():
        if len(served) > 1:  # (the judge's identity has no endpoint: one configuration, several weights)
            counts = ", ".join(f"{m} in {n} rows" for m, n in sorted(served.items()))
            err_console.print(f"warning: {metric} [{config_hash}]: its current rows were answered by "
                              f"{len(served)} models as the server named them ({counts}); reports show them "
                              "as one judge although different weights may have answered", markup=False,
                              highlight=False)
    other = sum(m.other_libraries for m in status.metrics)
    if other:
        console.print(f"{other} scored rows were computed with other library versions than installed here "
                      "(details.libraries; kept by reruns; the report's 'Library versions' section lists "
                      "the metrics whose compared values mix versions)", highlight=False)
    def listed(notes: dict[str, list[str]]) -> str:
        noted = list(notes.items())
        shown = "; ".join(f"{item} ({', '.join(metrics)})" for item, metrics in noted[:5])
        return shown + (f" and {len(noted) - 5} more" if len(noted) > 5 else "")

    live = {k: v for k, v in status.in_flight.items() if k not in status.in_flight_ended}
    if live:  # a run alive on this host: the next run does not take them for a crash
        console.print(f"in flight (being computed now by a run on this machine): {listed(live)}",
                      highlight=False)
    if status.in_flight_ended:
        console.print("in flight when a run ended in a crash, a kill or a store that went away (or noted by "
                      f"a run on another machine): {listed(status.in_flight_ended)}; the next run computes "
                      "each alone in a child process", highlight=False)
    if status.manifest_problems:
        console.print(f"{len(status.manifest_problems)} manifest rows did not validate and were not checked "
                      "(`robojudge suite validate`)", highlight=False)
    if status.files_missing:
        from robojudge.suite import KEPT_WITHOUT_FILES

        p = status.files_missing[0]
        first = dataclasses.replace(p, severity="error", message=p.message.removesuffix(KEPT_WITHOUT_FILES))
        console.print(f"{len(status.files_missing)} manifest item(s) with files missing or unreadable now "
                      f"(first: {first}): "
                      "their stored results are kept; `robojudge score` leaves them out, and computes "
                      "what they lack, once the files are back", highlight=False, markup=False)
    if stale:
        for r in (*status.stale, *status.unavailable, *status.unknown):
            typer.echo(f"{r.item_id}\t{r.metric}\t{r.config_hash}\t{r.version}\t{r.reason}")


@app.command("upgrade")
def upgrade_cmd(
    run_or_db: str | None = typer.Argument(None, metavar="[RUN_OR_DB]",
                                           help="Run folder, SQLite path or store URL (as --db)."),
    db: str | None = typer.Option(None, "--db", help="Result store URL, SQLite path or run folder."),
) -> None:
    """Upgrade a store written by an older robojudge to the current schema (its rows are kept).

    The upgrade is one way: a robojudge that knows only the older schema can no longer open the
    store, so copy it first if one still needs it. Commands that write upgrade only a store that
    holds no results and refuse one that does; reading commands open stores read-only and cannot.
    """
    given = _store_given(run_or_db, db, "upgrade")
    if given is None:
        raise fail("results upgrade: give the store, a run folder, SQLite path or URL (robojudge results "
                   "upgrade runs/NAME, or --db)")
    db = given
    local = None if "://" in db else Path(db) / "results.sqlite" if Path(db).is_dir() else Path(db)
    if local is None:  # a URL: an SQLite one names a file, checked as a path is
        try:
            parsed = parse_url(db)
        except (StoreError, ValueError) as exc:
            raise fail(str(exc)) from None
        if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
            local = Path(parsed.database)
    if local is not None:
        path = local
        if not path.is_file():
            raise fail(f"no result store at {path}")
        if path.stat().st_size == 0:  # SQLite would make a new store of it
            raise fail(f"{path} is an empty file, not a result store")
        if not _holds_store(path):  # upgrading would add robojudge's tables to another program's database
            raise fail(f"{path} is not a robojudge result store (it has no robojudge_meta table); nothing "
                       "to upgrade")
    try:
        with ResultStore(db, read_only=True):
            pass  # already at the current schema
    except NotAStoreError as exc:  # no tables: opening it for writing would make a new store of it
        raise fail(f"{exc}; nothing to upgrade") from None
    except StoreError:
        pass  # an older schema (the upgrade's case), or unreachable: said by the opening below
    try:
        with ResultStore(db, upgrade=True) as store:
            where, had = store.url, store.opened_at_version
    except StoreError as exc:
        raise fail(str(exc)) from None
    if had is not None and had < SCHEMA_VERSION:
        console.print(f"{where}: upgraded from schema version {had} to {SCHEMA_VERSION}, every row kept; a "
                      f"robojudge that knows only version {had} can no longer open it", highlight=False)
    else:
        console.print(f"{where}: already at schema version {SCHEMA_VERSION}, nothing to upgrade",
                      highlight=False)


def _holds_store(path: Path) -> bool:
    """Whether the SQLite file at ``path`` has robojudge's tables (unreadable: True, the store says why)."""
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'robojudge_meta'").fetchone()
            return found is not None
    except sqlite3.Error:
        return True


_MAX_PROBLEMS_SHOWN = 50


@app.command("import")
def import_cmd(
    file: Path = typer.Argument(
        ..., metavar="FILE", help="Results file: .csv, .jsonl/.ndjson or .parquet, with columns item_id, "
        "metric, value (metric may come from --metric); other columns are kept as details."),
    db: str | None = typer.Option(None, "--db", help="Result store URL, SQLite path or run folder (a run "
                                  "folder is read as --run-dir is)."),
    run: Path | None = typer.Option(None, "--run-dir", "--run", help="Run folder: its results.sqlite, and "
                                    "its suite manifest (in it, else those scored into it) for checking item "
                                    "ids unless --suite is given."),
    suite: Path | None = typer.Option(None, "--suite", help="Suite manifest the item ids must belong to."),
    metric: str | None = typer.Option(None, "--metric", help="Metric of every line (a file without a "
                                      "metric column), or the only metric to take from a long file."),
    source: str | None = typer.Option(None, "--source", help="Name of the external pipeline; rows of "
                                      "different sources are kept apart (default: external)."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite stored imported values that differ."),
    allow_computed: bool = typer.Option(False, "--allow-computed", help="Also import metrics robojudge "
                                        "computes itself (stored beside the computed values)."),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Import the good lines and list the "
                                      "bad ones, instead of refusing the whole file."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check and report, write nothing."),
) -> None:
    """Import metric values computed by an external pipeline (e.g. simulator replay) into a store.

    The whole file is checked first and imported in one transaction: one bad line refuses it all
    (unless --skip-invalid). Importing the same file again changes nothing.
    """
    from robojudge.run._import import ResultImportError, import_results
    from robojudge.suite import ManifestError, run_manifest

    if db is not None and run is not None:
        raise fail("give one of --db and --run-dir, not both")
    if db is None and run is None:
        if suite is None:
            raise fail("give --db or --run-dir (the store to import into), or --suite (the manifest, whose "
                       "store is found as `robojudge score` finds it)")
        from robojudge.run import suite_store_url

        try:
            db = suite_store_url(suite)
        except StoreError as exc:
            raise fail(str(exc)) from None
    if db is not None and Path(db).is_dir():  # its items were not checked, as --run-dir checks them
        run, db = Path(db), None
    if run is not None:
        if not run.is_dir():
            raise fail(f"no run folder at {run}")
        db = default_db_url(run)
        if suite is None and (suite := run_manifest(run)) is not None:
            err_console.print(f"checking item ids against {suite}", highlight=False)
    suites: Path | list[Path] | None = suite
    if run is not None and suite is None:  # the manifests scored into the run's store, as `report` reads them
        from robojudge.report import noted_manifests

        noted = noted_manifests(default_db_url(run))
        if noted:
            suites = noted
            err_console.print(f"checking item ids against {', '.join(str(m) for m in noted)} (scored into "
                              "this store; --suite for another)", highlight=False)
    assert db is not None
    try:
        with ResultStore(db) as store:
            report = import_results(store, file, metric=metric, suite=suites, replace=replace, source=source,
                                    allow_computed=allow_computed, skip_invalid=skip_invalid, dry_run=dry_run)
            where = store.url
    except ResultImportError as exc:
        _print_problems(exc.problems, None)
        raise fail(f"{file}: {len(exc.problems)} problem(s), nothing was imported") from None
    except (StoreError, ManifestError) as exc:
        raise fail(str(exc)) from None
    if report.ignored_columns:
        err_console.print(f"note: {file} is a `results export`: the extra fields of each row come from its "
                          f"details column; {', '.join(report.ignored_columns)} describe the stored row and "
                          "are not kept", highlight=False, markup=False)
    if report.skipped:
        _print_problems(report.skipped, f"{len(report.skipped)} bad line(s) left out (--skip-invalid):")
    table = name_table(f"{'dry run, nothing written: ' if dry_run else ''}{file} -> {where}", "metric",
                       "imported", "unchanged", "replaced")
    for name, c in sorted(report.metrics.items()):
        table.add_row(name, str(c.imported), str(c.unchanged), str(c.replaced))
    print_table(table)
    console.print(f"source {report.source!r} (config hash {report.config_hash}), file sha256 "
                  f"{report.sha256[:12]}...: {report.imported} imported, {report.unchanged} unchanged, "
                  f"{report.replaced} replaced" + (f", {report.left_out} lines of other metrics left out"
                                                   if report.left_out else ""), highlight=False)


def _print_problems(problems: Sequence[object], header: str | None) -> None:
    if header is not None:
        err_console.print(header, highlight=False, markup=False)
    for p in problems[:_MAX_PROBLEMS_SHOWN]:
        err_console.print(f"  {p}", highlight=False, markup=False)
    if len(problems) > _MAX_PROBLEMS_SHOWN:
        err_console.print(f"  ... and {len(problems) - _MAX_PROBLEMS_SHOWN} more", highlight=False)
