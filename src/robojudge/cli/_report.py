"""``robojudge report``: the HTML report (plots, CSV, Markdown and LaTeX tables) of a run or a store."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from robojudge import DEFAULT_SEED
from robojudge._files import LinkedFolderError, PartlyReplacedError, refuse_linked_folders
from robojudge.cli._common import (
    E1_HELP,
    MANIFEST_STORE,
    check_out_folder,
    command_line,
    console,
    err_console,
    fail,
    print_manifest_problems,
    says_when_stopped,
    write_error,
)
from robojudge.cli._tables import add_column, print_table
from robojudge.metric_info import (
    direction,
    registry_config_key,
    registry_defaults,
    registry_networks,
    registry_range,
)
from robojudge.report import (
    GROUP_FIELDS,
    T_INTERVAL,
    GroupSummary,
    HtmlReport,
    gone_note,
    noted_manifests,
    report_suite,
    resolve_source,
    stale_note,
    write_html_report,
)
from robojudge.report._summary import CLIP_MEANS_NOTE, CONSTANT_NOTE
from robojudge.run import default_run_dir, remembered_stale, stale_rows, suite_store_url
from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.suite import SUFFIXES, ManifestError


def summary_table(summaries: list[GroupSummary], group_label: str, title: str) -> Table:
    """Summaries as a rich table: one row per (metric configuration, group), each configuration named
    by its label, as summary.md and the HTML report name it."""
    table = Table(title=title)
    for header in ("metric", group_label, "n", "failed", "unscored", "mean", T_INTERVAL):
        add_column(table, header, fold=header in ("metric", group_label))
    for s in summaries:
        ci = "n/a" if s.n_ok < 2 or math.isnan(s.ci_low) else f"[{s.ci_low:.2f}, {s.ci_high:.2f}]"
        ci += "*" if s.ci_clipped else ""
        ci += " \u2020" if s.small_n else ""
        mean = "n/a" if s.n_ok == 0 else f"{s.mean:.2f}"
        table.add_row(s.label or s.metric, s.group, str(s.n_ok), str(s.n_failed), str(s.n_unscored), mean, ci)
    if any(s.small_n for s in summaries) or any(s.ci_clipped for s in summaries):
        table.caption = ("* t-interval cut at the metric's native range; \u2020 fewer than 10 values or 5 "
                         "clips")
    for note, show in ((CLIP_MEANS_NOTE, any(s.ci_clips is not None for s in summaries)),
                       (CONSTANT_NOTE, any(s.constant for s in summaries))):
        if show:
            table.caption = f"{table.caption}; {note}" if table.caption else note
    return table


def _is_manifest(target: str) -> bool:
    path = Path(target)
    return "://" not in target and not path.is_dir() and path.suffix.lower() in SUFFIXES


def print_html_report(result: HtmlReport) -> None:
    """One line per section (shown or why not; on stderr) and where the report is (on stdout)."""
    for s in result.sections:
        if s.skipped is None:
            err_console.print(f"  {s.title}: {len(s.plots)} plots, {len(s.tables)} tables", highlight=False)
        else:
            err_console.print(f"  {s.title}: not shown ({s.skipped})", highlight=False)
    console.print(f"HTML report: {result.index}  (tables: {result.index.parent / 'tables'})", highlight=False)
    if result.removed_unlisted:
        gone = result.removed_unlisted
        err_console.print(f"removed {len(gone)} table file{'s' if len(gone) != 1 else ''} of the earlier "
                          "report in tables/, written before robojudge listed its tables and not written "
                          f"again: {', '.join(gone)}", highlight=False, markup=False)


@says_when_stopped("no file of the report was left half-written (each is replaced only once written "
                   "whole); rerun the same command to write it")
def report(
    target: str = typer.Argument(
        ..., metavar="RUN_OR_DB",
        help="A run folder (holding results.sqlite), a result store (file or database URL), or a suite "
        f"manifest (then the store is --db, else {MANIFEST_STORE})."),
    db: str | None = typer.Option(
        None, "--db", help=f"Store when RUN_OR_DB is a manifest \\[default: {MANIFEST_STORE}]."
    ),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite manifest of the results, for labels and generators \\[default: "
        "suite/suite.jsonl or suite.jsonl in the run folder, else the last manifest scored into the store]."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Report folder \\[default: RUN/report for a run folder, "
        "runs/<manifest>/report for a manifest, ./report (in the current folder) for a store file or URL]."),
    by: str = typer.Option("generator", "--by", help=f"Summary groups: {', '.join(GROUP_FIELDS)}, or "
                           "meta.KEY (a value of the items' meta, e.g. meta.rollout_depth)."),
    html: bool = typer.Option(True, "--html/--no-html", help="Write index.html and the tables too."),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help=E1_HELP),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap and the folds."),
    title: str | None = typer.Option(None, "--title", help="Page title."),
) -> None:
    """Write a self-contained HTML report (plots, CSV, Markdown and LaTeX tables) of stored results.

    With a suite manifest it also summarizes the results per group (mean, std, 95% t-interval) as
    before: summary.md, summary.csv, results.csv and errors.csv.
    """
    watch = _SummaryWatch()
    try:
        _report(watch, target, db, suite, out, by, html, bootstrap, seed, title)
    except KeyboardInterrupt:
        if watch.folder is None or _file_identity(watch.folder / "summary.csv") == watch.before:
            raise  # (nothing replaced yet, or all of it: says_when_stopped says so)
        raise _stopped_between(watch.folder) from None


@dataclass
class _SummaryWatch:
    """A manifest's report folder while its summary and its page are written, and its summary.csv before
    (:func:`_file_identity`): a stop in between leaves the new summary beside the old page."""

    folder: Path | None = None
    before: tuple[int, int] | None = None


def _report(watch: _SummaryWatch, target: str, db: str | None, suite: Path | None, out: Path | None, by: str,
            html: bool, bootstrap: int, seed: int, title: str | None) -> None:
    manifest: Path | None
    others: list[Path] = []  # more manifests scored into the store, whose items the report adds
    stale = remembered_stale(stale_rows)  # the summary and the HTML report check the same rows once
    summary: Table | None = None
    rows: list[ResultRow] | None = None  # a manifest's: read once for the summary, results.csv and the page
    if _is_manifest(target):
        manifest = Path(target)
        try:
            url = suite_store_url(manifest, db)
        except StoreError as exc:
            raise fail(str(exc)) from None
        folder = out or default_run_dir(manifest) / "report"
        check_out_folder(folder, "--out" if out else "report folder")
        if out is None:
            _refuse_linked_default(folder)
        # Two groups of files, each replaced whole: the summary's here, the page and its tables below. A
        # stop once the first is renamed into place (its store still closing, or the page being written)
        # leaves the new summary beside the old page, which the message then says.
        watch.folder, watch.before = folder, _file_identity(folder / "summary.csv")
        try:
            with ResultStore(url, read_only=True) as store:
                rows = store.rows()
            summaries = report_suite(manifest, url, folder, by=by, native_range=registry_range,
                                     stale=stale, named=out is not None, command=command_line(),
                                     defaults=registry_defaults, rows=rows)
        except (ManifestError, StoreError, ValueError) as exc:
            raise fail(str(exc)) from None
        except OSError as exc:  # a full disk, a file-size limit
            if not _written_into(folder, exc):
                raise
            whole = f"the summary in {folder} is as it was"
            raise fail(write_error(folder, exc, _kept(folder, exc, whole))) from None
        # printed once every file is written: a reader that stops early (`| head`) loses none of them
        summary = summary_table(summaries, by, f"results by {by}")
        if suite is not None:
            manifest = suite
    else:
        # a manifest's summary is what --by groups and what --no-html keeps: said, not silently ignored
        if by != "generator":
            raise fail(f"--by {by}: groups a manifest's summary (robojudge report MANIFEST); the report of a "
                       "run folder or store groups by generator")
        if not html:
            raise fail("--no-html leaves nothing to write for a run folder or store: only a manifest has a "
                       "summary without the HTML report")
        if db is not None:  # it was ignored without a word
            raise fail(f"--db {db}: {target} is a run folder or store, which is the store reported; --db "
                       "names the store of a manifest (robojudge report MANIFEST --db STORE)")
        try:
            url, manifest = resolve_source(target, manifest=suite)
        except FileNotFoundError as exc:
            raise fail(str(exc)) from None
        path = Path(target)
        folder = out or (path / "report" if path.is_dir() else Path("report"))
        check_out_folder(folder, "--out" if out else "report folder")
        if out is None and path.is_dir():  # (./report of a store file or URL is the user's own folder)
            _refuse_linked_default(folder)
        if manifest is None:
            err_console.print(f"no suite manifest found{gone_note(url)} (pass --suite): the report has no "
                          "labels or generators", highlight=False, markup=False)
        elif suite is None:
            err_console.print(f"suite manifest: {manifest} (pass --suite for another)", highlight=False)
            others = noted_manifests(url, besides=manifest)
    if not html:
        watch.folder = None  # (the summary is all it writes)
        _print_summary(summary, folder)
        if _is_manifest(target):  # the HTML report says it below; the summary alone says it here
            _print_invalid_rows(Path(target))
            _print_stale(url, Path(target))
            _print_same_videos(Path(target))
        return
    name = Path(manifest).name if manifest is not None else target
    try:
        result = write_html_report(url, folder, manifest=manifest, more_manifests=others,
                                   higher_is_better=direction,
                                   native_range=registry_range, title=title or f"robojudge report: {name}",
                                   bootstrap=bootstrap, seed=seed, stale=stale,
                                   config_key=registry_config_key, networks=registry_networks,
                                   named=out is not None, command=command_line(),
                                   defaults=registry_defaults, rows=rows)
    except (ManifestError, StoreError, ValueError, LinkedFolderError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:  # a full disk, a file-size limit: the page and its tables are replaced together
        if not _written_into(folder, exc):
            raise
        whole = f"index.html and tables/ in {folder} are as they were"
        if watch.folder is not None and _file_identity(folder / "summary.csv") != watch.before:
            whole = _mixed(folder, "free space and rerun the same command to write them all")
        raise fail(write_error(folder, exc, _kept(folder, exc, whole))) from None
    watch.folder = None  # both groups are written
    if summary is not None:
        _print_summary(summary, folder)
    if result.added_from:  # only the noted manifests that gave items (a copied run's own copy has them all)
        added = result.added_from
        plural = "s" if len(added) > 1 else ""
        err_console.print(f"and the items it lacks from {len(added)} more manifest{plural} scored into this "
                          "store: " + ", ".join(str(m) for m in added), highlight=False)
    print_manifest_problems(result.manifest_problems)
    print_html_report(result)
    gone = gone_note(url) if result.outside and suite is None else ""
    if gone:  # (two machines scoring halves into one store: the other half's items are not named)
        n = result.outside
        err_console.print(f"{n} stored result{'s are' if n != 1 else ' is'} of items none of the manifests "
                          f"read holds, so in no per-item table{gone}; the overview lists them",
                          highlight=False, markup=False)
    note = stale_note(result.stale)
    if note:
        err_console.print(f"[yellow]{escape(note)}[/]", markup=True, highlight=False)
    if manifest is not None:
        _print_same_videos(Path(manifest))


def _file_identity(path: Path) -> tuple[int, int] | None:
    """``path``'s inode and modification time (a file renamed into place has another), None if absent."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _stopped_between(folder: Path) -> typer.Exit:
    """Say what a report stopped between its two groups of files left in ``folder`` (the summary's new,
    the page and its tables the previous report's, or none), and the exit to raise."""
    err_console.print(f"interrupted: {_mixed(folder, 'rerun the same command to write them all')}",
                      markup=False, highlight=False)
    return typer.Exit(130)


def _mixed(folder: Path, then: str) -> str:
    """What a manifest's report stopped between its two groups of files leaves in ``folder``."""
    return (f"summary.csv, summary.md, errors.csv, results.csv and provenance.json in {folder} are new, but "
            "index.html and tables/ are still those of the previous report (or absent), so the two may "
            f"disagree; {then}")


def _refuse_linked_default(folder: Path) -> None:
    """Refuse a default report folder (``report/`` of a run folder, which may have been downloaded) that is
    a link leading out of the folder holding it: the report would be written, and its old tables removed,
    wherever the link points. A folder given with --out is the user's choice and is followed. The rule is
    :func:`robojudge._files.refuse_linked_folders`'s, with the run folder as the root."""
    try:
        refuse_linked_folders(folder.parent, folder / "index.html")
    except LinkedFolderError as exc:
        raise fail(f"report folder {exc}; or pass --out for the report's folder") from None


def _print_summary(summary: Table | None, folder: Path) -> None:
    """A manifest's summary table and where its files are (nothing for a run folder or store)."""
    if summary is not None:
        print_table(summary)
        console.print(f"report: {folder}  (summary.md, summary.csv, results.csv, errors.csv, "
                      "provenance.json)", highlight=False)


def _kept(folder: Path, exc: OSError, whole: str) -> str:
    """What a report that could not be written left of the previous one in ``folder``: all of it
    (``whole`` says so), unless the renames that put the new files in place stopped part way
    (:class:`PartlyReplacedError`)."""
    if not isinstance(exc, PartlyReplacedError) or not exc.replaced:
        return whole
    names = ", ".join(p.relative_to(folder).as_posix() if p.is_relative_to(folder) else str(p)
                      for p in exc.replaced)
    return (f"{len(exc.replaced)} file(s) in {folder} are already the new report's (replaced or removed: "
            f"{names}); the other files are as they were: run the report again once the file can be "
            "written (on Windows, close the program that holds it open)")


def _written_into(folder: Path, exc: OSError) -> bool:
    """Whether ``exc`` is a failed write of a report file: it names a file in ``folder``, or none (what
    ``write()`` on a full disk raises)."""
    if exc.filename is None:
        return True
    return isinstance(exc.filename, str) and Path(exc.filename).resolve().is_relative_to(folder.resolve())


def _print_invalid_rows(manifest: Path) -> None:
    """The manifest rows the summary left out as invalid, one line each (as ``score`` prints them)."""
    from robojudge.suite import load_suite

    try:
        problems = load_suite(manifest, strict=False, files="optional").problems
    except ManifestError:
        return
    print_manifest_problems(p for p in problems if p.is_error)


def _print_same_videos(manifest: Path) -> None:
    """The note of ``score`` on items whose video is an earlier item's file: their groups' means count
    one clip twice (the report's tables and intervals do, as they read the stored rows)."""
    from robojudge.suite import SameVideos, load_suite, same_videos_note

    try:
        items = load_suite(manifest, strict=False, files="optional").items
    except ManifestError:
        return
    twins = SameVideos()
    for item in items:
        twins.see(item)
    note = same_videos_note(twins.pairs)
    if note is not None:
        err_console.print(f"[yellow]note:[/] {escape(note)}", markup=True, highlight=False)


def _print_stale(url: str, manifest: Path) -> None:
    from robojudge.run import load_suite_results

    try:
        note = stale_note(load_suite_results(manifest, url).stale)
    except (ManifestError, StoreError, ValueError):
        return
    if note:
        err_console.print(f"[yellow]{escape(note)}[/]", markup=True, highlight=False)
