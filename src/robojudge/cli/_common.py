"""Printing helpers shared by the commands."""

from __future__ import annotations

import functools
import json
import math
import os
import shlex
import sys
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TextIO, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from robojudge import settings
from robojudge.run import (
    ProgressCallback,
    ProgressLines,
    RunSummary,
    default_run_dir,
    progress_line,
    unscored_lines,
)
from robojudge.store import ResultRow, StoreError, parse_url
from robojudge.suite import Item, ManifestProblem, skipped_rows_line

PIPED_WIDTH = 240
"""Columns of a table printed to a file or a pipe (a log, ``| tee``): Rich's 80 cut metric ids short."""

#: Where a command reading a manifest's results finds them without ``--db``
#: (:func:`robojudge.run.suite_store_url`).
MANIFEST_STORE = "the store of the run folder the manifest lies in, else runs/<manifest name>/results.sqlite"
#: The ``--db`` help of the commands that read a manifest's results.
DB_HELP = f"Result store URL, SQLite path or run folder \\[default: {MANIFEST_STORE}]."
#: The ``--cache-dir`` help of the commands that keep judge replies (the folder of
#: :attr:`robojudge.settings.Settings.cache_dir`).
CACHE_DIR_HELP = (f"Response cache folder \\[default: ${settings.CACHE_DIR_ENV}, else "
                  f"${settings.XDG_CACHE_ENV}/robojudge, else ~/.cache/robojudge].")


#: ``--bootstrap`` of the commands that draw 2,000 replicates by default, where App. E.1 draws 10,000.
E1_HELP = "Cluster-bootstrap replicates (0: none; RoboJudge App. E.1 uses 10000, the default takes 2000)."


def piped_width(stream: Any) -> int | None:
    """The width ``COLUMNS`` gives (a whole number >= 1; anything else counts as unset), else
    :data:`PIPED_WIDTH` for a stream that is not a terminal and None (the terminal's own width) for one."""
    try:
        terminal = bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        terminal = False
    current = settings.get()
    if current.columns is not None:
        return current.columns
    if terminal and current.columns_text is not None:  # COLUMNS=0, which rich would read as width 0
        try:
            return os.get_terminal_size(stream.fileno()).columns or None
        except (AttributeError, ValueError, OSError):
            return 80
    return None if terminal else PIPED_WIDTH


# Markup is off: what is printed is mostly paths, item ids and messages, in which Rich would read
# "[a]" or "robojudge[ray]" as tags (dropping them) and fail on "[/x]". A line that is styled on purpose
# passes markup=True and escapes what it interpolates. Emoji codes are off for the same reason: an id
# such as "wan:a:ep1" or "droid:100:3" would print as an emoji, naming an item the file does not hold.
console = Console(soft_wrap=True, markup=False, emoji=False, width=piped_width(sys.stdout))
# Error lines are never wrapped: users grep them and tests match them.
err_console = Console(stderr=True, soft_wrap=True, markup=False, emoji=False,
                      width=piped_width(sys.stderr))


def first_names(names: list[str], shown: int = 5) -> str:
    """``names`` joined, the first ``shown`` of them, and how many more there are."""
    n = len(names)
    return ", ".join(names[:shown]) + (f" and {n - shown} more" if n > shown else "")


@contextmanager
def warnings_said_once(kind: type[Warning]) -> Iterator[None]:
    """Within the block, each warning of ``kind`` (a :class:`robojudge.metrics.LookAlikeGroupsWarning`)
    is one ``warning:`` line on stderr, each text once however often it is raised (the groups are formed
    more than once in a run), when it is raised; other warnings show as Python shows them."""
    said: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("always", kind)
        python_shows = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: TextIO | None = None, line: str | None = None) -> None:
            if not issubclass(category, kind):
                python_shows(message, category, filename, lineno, file, line)
            elif str(message) not in said:
                said.add(str(message))
                err_console.print(f"[yellow]warning:[/] {escape(str(message))}", markup=True, highlight=False)

        warnings.showwarning = show
        yield


#: How many manifest problems a run prints (``robojudge suite validate`` lists them all).
SHOWN_PROBLEMS = 20


def print_manifest_problems(problems: Iterable[object], shown: int = SHOWN_PROBLEMS) -> None:
    """One yellow line per problem of a manifest row left out, on stderr, the first ``shown`` of them and
    a count of the rest; the row's own text is escaped, never read as markup."""
    n = 0
    for problem in problems:
        n += 1
        if n <= shown:
            err_console.print(f"[yellow]skipped manifest row:[/] {escape(str(problem))}", markup=True,
                              highlight=False)
    if n > shown:
        err_console.print(f"[yellow]skipped manifest row:[/] ... and {n - shown} more: `robojudge suite "
                          "validate` lists them all", markup=True, highlight=False)


def print_skipped_rows(problems: Iterable[ManifestProblem]) -> None:
    """The count of the manifest rows left out, one line with the run's summary on stdout (the rows
    themselves are on stderr, :func:`print_manifest_problems`): nothing when none was."""
    line = skipped_rows_line(problems)
    if line is not None:
        console.print(f"[yellow]{line}[/]", markup=True, highlight=False)


def print_untested_libraries(metrics: Iterable[str]) -> None:
    """On stderr, once per run of ``score`` and ``demo``: the installed frame libraries in another minor
    release than robojudge's published numbers were computed with (:func:`robojudge.run.untested_libraries`),
    the metrics known to move with each and the ``pip install`` of the tested ones. Only when one of
    ``metrics`` (those the run computed) reads frames: a metric that reads none records no frame library
    (:func:`robojudge.run.library_versions`), so its values cannot differ by them; nothing when all match."""
    from robojudge.metrics import UnknownMetricError, get_metric
    from robojudge.run import install_tested, library_versions, reads_frames, untested_libraries
    from robojudge.store import parse_libraries

    def frames_read(metric: str) -> bool:
        try:
            return reads_frames(get_metric(metric))
        except UnknownMetricError:  # not a registered metric (a judge's): it reads frames
            return True

    if not any(frames_read(m) for m in metrics):
        return
    installed = parse_libraries(library_versions())
    lines = untested_libraries(installed)
    if not lines:
        return
    for line in lines:
        err_console.print(f"[yellow]untested library:[/] {escape(line)}", markup=True, highlight=False)
    pip = install_tested(installed)
    how = (f"{pip} computes with the tested versions" if pip is not None else
           "PyAV is the tested release but was built with another FFmpeg (a conda or source build): PyAV's "
           "own wheel from PyPI carries the tested one")
    err_console.print(f"values can differ from the README's and docs' numbers; {how} (docs/report.md, "
                      "\"Library versions\", in the robojudge repository)", highlight=False, markup=False)


def print_rescored_libraries(n: int, what: str = "results") -> None:
    """The line of ``--rescore-libraries`` (``score``, ``metrics sets``): how many stored ``what`` computed
    with other library versions were recomputed; nothing when none was."""
    if n:
        console.print(f"{n} stored {what} computed with other library versions were recomputed (the old "
                      "rows are kept, superseded)", highlight=False)


def print_report_hint(manifest: Path, run_dir: Path | None, db: str | None) -> None:
    """The command that reports a run scored into its run folder (the store there notes the manifest)."""
    if db is None:
        console.print(f"report: robojudge report {shlex.quote(str(run_dir or default_run_dir(manifest)))}",
                      highlight=False)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` (plain text: nothing in it is read as markup) and the exit to raise."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False)
    return typer.Exit(code)


_FULL_DISK_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded",
                    "is full (")


def store_failed(error: str, stored: str, db_url: str, in_flight: Sequence[str] = (),
                 apart: str = "computes {} again alone in a child process") -> typer.Exit:
    """Print why the store stopped taking rows during a run (``error``), what it holds (``stored``, such
    as "40 results") and how to go on; the exit (status 2) to raise once the run's summary is printed.
    ``in_flight``: items whose in-flight note the run could not clear (``RunStoppedError.in_flight``),
    which the next run handles as if they had crashed it: ``apart`` says how, ``{}`` their names.

    An SQLite store stopped by a full disk whose ``-wal`` file still holds rows once the run closed it
    (SQLite cannot fold it into the main file without room) is said to be two files: the main file alone
    reads as "malformed", and deleting the ``-wal`` file to make room deletes those results."""
    then = "rerun the same command once the store can be written again: it resumes"
    try:
        url = parse_url(db_url)
    except StoreError:
        url = None
    database = url.database if url is not None and url.get_backend_name() == "sqlite" else None
    if database in ("", ":memory:") or (database or "").startswith("file:"):
        database = None
    # SQLite's and the OS's words, and the store's own note (not "full" alone: a path such as
    # /data/full-runs/r.sqlite in the message made any stop a full disk's)
    full = any(words in error.lower() for words in _FULL_DISK_WORDS)
    if full:
        where = f"in {Path(database).expanduser().absolute().parent}" if database else "for the store"
        then = f"free space {where} and rerun the same command: it resumes"
    if in_flight:
        notes = "its in-flight note" if len(in_flight) == 1 else "their in-flight notes"
        names = first_names(list(in_flight))
        then += f", and {apart.format(names)}, as after a crash ({notes} could not be cleared)"
    # Only after a full disk: a -wal file with rows is usual while another process has the store open.
    if full and database and _has_rows_in_wal(Path(database).expanduser().resolve()):
        name = Path(database).name
        then += (f". The store is two files now: {name} and {name}-wal beside it, which holds results not "
                 f"yet in {name}; keep them together (move or copy both, or the whole folder) and do not "
                 f"delete {name}-wal: the next run that writes the store with space folds it into {name}")
    return fail(f"{error}; {stored} are stored; {then}")


def _has_rows_in_wal(path: Path) -> bool:
    try:
        return path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        return False


P = ParamSpec("P")
R = TypeVar("R")


def says_when_stopped(kept: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A command that Ctrl-C or ``kill`` (SIGTERM, SIGHUP) stops prints ``interrupted: <kept>`` (what is
    left as it was) and exits 130; without it typer exits 130 without a word."""
    def decorate(command: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(command)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return command(*args, **kwargs)
            except KeyboardInterrupt:
                err_console.print(f"[yellow]interrupted: {escape(kept)}[/]", markup=True, highlight=False)
                raise typer.Exit(130) from None
        return run
    return decorate


def write_error(path: object, exc: OSError, kept: str) -> str:
    """The message of a file that could not be written: which (``exc``'s file, else ``path``), why, and
    what was ``kept`` as it was."""
    return f"cannot write {exc.filename or path}: {exc.strerror or exc}; {kept}"


def check_out_folder(path: Path, flag: str = "--out") -> None:
    """Refuse, before long work, a folder that cannot be made or written: a file's name, a path under a
    file, a folder without write permission (the work was done, then lost at the write)."""
    if path.exists() and not path.is_dir():
        raise fail(f"{flag} {path}: a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise fail(f"{flag} {path}: {existing} is a file, so no folder can be made under it")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise fail(f"{flag} {path}: {existing} is not writable")


def check_out_file(path: Path, flag: str = "--out") -> None:
    """Refuse, before long work, a file path that cannot be written: a folder's name, a path under a
    file, a folder without write permission."""
    if path.is_dir():
        raise fail(f"{flag} {path}: a folder, not a file")
    if path.exists():
        if not os.access(path, os.W_OK):
            raise fail(f"{flag} {path}: the file is not writable")
        # Written beside it and renamed onto it (robojudge._files.replacing; a link's target is
        # replaced): the folder must take a new file too.
        folder = Path(os.path.realpath(path)).parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise fail(f"{flag} {path}: its folder {folder} is not writable (the file is written beside its "
                       "name, then renamed onto it)")
        return
    check_out_folder(path.parent, flag=f"{flag} {path}: its folder")


def check_settings(skip: tuple[str, ...] = ()) -> None:
    """Refuse a bad ``ROBOJUDGE_*`` variable (frame memory, network cache, decode workers) before any
    work: read on use, it turned every task of a run into an error row, kept on the next run. ``skip``:
    the settings the command does not use, or whose variable one of its options replaces
    (:meth:`robojudge.settings.Settings.check`): a bad value of those does not stop it."""
    try:
        settings.get().check(skip)
    except ValueError as exc:
        raise fail(str(exc)) from None


def parse_settings(values: list[str]) -> dict[str, dict[str, Any]]:
    """``metric.key=value`` strings to ``{metric: {key: value}}``; values parse as JSON when they can.
    ``Infinity`` and ``NaN`` are refused: a stored configuration cannot say them (JSON writes null)."""
    out: dict[str, dict[str, Any]] = {}
    for raw in values:
        key, sep, val = raw.partition("=")
        metric, dot, name = key.rpartition(".")
        if not sep or not dot or not metric or not name:
            raise fail(f"--set expects METRIC.KEY=VALUE, got {raw!r}")
        try:
            parsed: Any = json.loads(val)
        except json.JSONDecodeError:
            parsed = val
        if isinstance(parsed, float) and not math.isfinite(parsed):
            raise fail(f"--set {key}={val}: the value must be a finite number")
        out.setdefault(metric, {})[name] = parsed
    return out


def progress_option(what: str = "") -> Any:
    """``--progress/--no-progress``, the same on every command that shows one."""
    return typer.Option(True, "--progress/--no-progress", help=f"Show a progress bar{what} (plain lines "
                        "every --progress-every seconds when stderr is not an interactive terminal).")


def progress_every_option() -> Any:
    """``--progress-every``, the same on every command that shows progress."""
    return typer.Option(30.0, "--progress-every", min=0.1, max=86400.0,
                        help="Seconds between plain progress lines (logs, CI, nohup, TERM=dumb).")


def print_plain(line: str) -> None:
    """A line on stderr, printed as it is (progress lines, estimates)."""
    err_console.print(line, highlight=False, markup=False)


@contextmanager
def live_progress(enabled: bool, every: float, bar: Callable[[], AbstractContextManager[Any]],
                  line: Callable[[Any, float, float], str]) -> Iterator[Any]:
    """The progress of a run, as every command shows it: ``bar()`` (a context manager giving the
    callback) on an interactive terminal; elsewhere (a log, a pipe, CI, ``TERM=dumb``, where a bar is
    drawn once, at the end) a plain ``line`` on stderr every ``every`` seconds; None when disabled."""
    if not enabled:
        yield None
    elif err_console.is_interactive:
        with bar() as on_event:
            yield on_event
    else:
        with ProgressLines(print_plain, every, line) as lines:
            yield lines


def building_progress(enabled: bool, every: float, what: str) -> AbstractContextManager[Any]:
    """The progress of a build that counts nothing (``what``, such as "building the demo suite"): a
    spinner with the time elapsed on an interactive terminal, else ``<what>: 40 s elapsed`` every
    ``every`` seconds (not a scoring line: nothing is scored yet)."""
    from robojudge.run._cost import describe

    @contextmanager
    def spinner() -> Iterator[None]:
        bar = Progress(SpinnerColumn(), TextColumn(escape(what)), TimeElapsedColumn(), console=err_console,
                       transient=True)
        bar.add_task(what, total=None)
        with bar:
            yield None

    return live_progress(enabled, every, spinner, lambda _summary, elapsed, _since: (
        f"{what}: {describe(elapsed)} elapsed"))


@contextmanager
def _scoring_bar(label: str = "scoring") -> Iterator[ProgressCallback]:
    progress = Progress(
        TextColumn(f"[bold]{escape(label)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]} items/s"),
        TextColumn("[red]{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )
    state: dict[str, Any] = {"task": None}

    def on_result(row: ResultRow, summary: RunSummary) -> None:
        if state["task"] is None:
            state["task"] = progress.add_task(
                "score", total=summary.total - summary.skipped, rate="-", errors=0
            )
        task = state["task"]
        progress.advance(task)
        elapsed = progress.tasks[task].elapsed or 0.0
        rate = f"{summary.computed / elapsed:.1f}" if elapsed > 0 else "-"
        # A large manifest is planned in blocks while it is scored: the total grows as they come.
        progress.update(task, total=summary.total - summary.skipped, rate=rate, errors=summary.failed)

    with progress:
        yield on_result


def scoring_progress(enabled: bool = True, every: float = 30.0,
                     label: str = "scoring") -> AbstractContextManager[ProgressCallback | None]:
    """A scoring run's progress (:func:`live_progress`): a bar with items/s, ETA and the running error
    count, or :func:`robojudge.run.progress_line` every ``every`` seconds; ``label`` replaces its leading
    ``scoring`` (``KIVA (fetch): 40/126 results ...``)."""
    if label == "scoring":
        return live_progress(enabled, every, _scoring_bar, progress_line)
    return live_progress(enabled, every, lambda: _scoring_bar(label), lambda summary, elapsed, since: (
        label + progress_line(summary, elapsed, since).removeprefix("scoring")))


def manifests_line(manifests: Iterable[Path]) -> str:
    """``suite manifests: A, B``: what a command given a run folder read its items from."""
    names = [str(m) for m in manifests]
    return f"suite manifest{'s' if len(names) > 1 else ''}: {', '.join(names)}"


def load_results(suite: Path, db: str | None, metrics: Callable[[Sequence[str]], Collection[str] | None]
                 | None = None) -> tuple[list[ResultRow], list[Item]]:
    """A manifest's items and the current rows of its store, or a run folder's (its store, and every
    manifest behind it), for the commands that rank or pick from them (``leaderboard``, ``select``).
    What is left out is said on stderr: manifest rows that do not validate, and stored results whose
    inputs changed since they were computed (their values describe other files). ``metrics``: given the
    store's metric ids, those whose rows to read and check (None from it: all), as
    :func:`robojudge.run.load_suite_results` takes it.

    Raises:
        typer.Exit: (2) with the reason, when nothing can be read.
    """
    from robojudge.report import load_run_results, stale_note
    from robojudge.run import load_suite_results, stale_rows
    from robojudge.store import StoreError
    from robojudge.suite import ManifestError

    try:
        if suite.is_dir():
            run = load_run_results(suite, db, stale=stale_rows, metrics=metrics)
            err_console.print(manifests_line(run.manifests), highlight=False)
            rows, items, stale, problems = run.rows, run.items, run.stale, []
        else:
            found = load_suite_results(suite, db, metrics)
            rows, items, stale, problems = found.rows, found.items, found.stale, found.problems
    except (ManifestError, StoreError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    for problem in problems:
        err_console.print(f"[yellow]left out manifest row:[/] {escape(str(problem))}", markup=True,
                          highlight=False)
    note = stale_note(stale)
    if note:
        err_console.print(f"[yellow]{escape(note)}[/]", markup=True, highlight=False)
    return rows, items


def print_kept_failures(skipped: int, failures: int, verb: str) -> None:
    """The line under a run's counts that says how many of the ``skipped`` pairs (already stored) are
    failures of an earlier run: a rerun after fixing what failed (a limit, a missing file) otherwise
    said "0 failed" and did nothing, the failures kept as they were."""
    if not failures:
        return
    them = "all of them" if failures == skipped else f"{failures} of them"
    console.print(f"[yellow]{skipped} already stored, {them} failures of an earlier run, kept:[/] "
                  f"--retry-errors {verb} them again", markup=True, highlight=False)


def print_summary(summary: RunSummary, *, max_errors: int = 20) -> None:
    """The end-of-run report: counts, then the failures grouped by item."""
    unscored = f"[yellow]{summary.unscored} unscored[/] (nothing to measure), " if summary.unscored else ""
    console.print(
        f"{summary.total} tasks: [green]{summary.ok - summary.unscored} scored[/], {unscored}"
        f"[red]{summary.failed} failed[/], {summary.skipped} already stored ({summary.seconds:.1f} s)",
        markup=True,
        highlight=False,
    )
    print_kept_failures(summary.skipped, summary.skipped_errors, "computes")
    if summary.duplicates:
        console.print(f"[yellow]{summary.duplicates} computed by another run meanwhile, not stored[/] (runs "
                      "of the same items overlapped; the store keeps the result stored first, or a value "
                      "over an error)", markup=True,
                      highlight=False)
    if summary.by_other_run:
        runs = ", ".join("host {} pid {}".format(*who.rsplit(' ', 1)) for who in summary.other_runs)
        console.print(f"[yellow]{summary.by_other_run} of those already stored were stored by another run "
                      f"while this one went on[/] ({escape(runs) or 'a run of the same items'}): left to it, "
                      "not computed here", markup=True, highlight=False)
    if summary.changed_inputs:
        names = first_names(summary.changed_items)
        console.print(f"[yellow]{summary.changed_inputs} results not stored: their inputs changed while "
                      f"they were computed[/] ({escape(names)}); rerun to score them", markup=True,
                      highlight=False)
    if summary.unscored_reasons:
        console.print("unscored: " + "; ".join(unscored_lines(summary.unscored_reasons)), highlight=False,
                      markup=False)
    for notice, n in sorted(summary.notices.items()):
        console.print(f"[yellow]note:[/] {escape(notice)} ({n} result{'s' if n != 1 else ''})", markup=True,
                      highlight=False)
    if not summary.all_planned:
        console.print("(the counts are of the manifest's items planned before the stop; its later items "
                      "were not reached)", highlight=False, markup=False)
    if summary.errors:
        console.print("[bold red]failures:[/]", markup=True)
        for row in summary.errors[:max_errors]:
            console.print(f"  {row.item_id} / {row.metric}: {row.error}", highlight=False)
        # (a score run keeps the first 1,000 error rows and counts them all in failed)
        total = max(len(summary.errors), summary.failed)
        if total > max_errors:
            more = total - max_errors
            console.print(f"  ... and {more} more (see `robojudge results export`)")
    if summary.isolated:
        n, again = len(summary.isolated), len(summary.crashed_again)
        names = first_names(summary.isolated)
        console.print(
            f"[yellow]{n} item{'s' if n != 1 else ''} an earlier run was computing when it ended (a crash, "
            f"a kill or a store that went away; or a run on another machine sharing the store, whose state "
            f"cannot be checked from here) ran alone in a child process:[/] {escape(names)}; "
            + (f"{again} crashed it again and got error rows" if again else "none crashed it"),
            markup=True, highlight=False,
        )
    if summary.interrupted:
        # (on stdout too: `score ... > file` kept "12 tasks: 4 scored, 0 failed" alone, as of a whole run)
        left = summary.total - summary.skipped - summary.computed
        # (a manifest read block by block: only the blocks planned before the stop are counted)
        least = "" if summary.all_planned else "at least "
        console.print(f"[yellow]stopped: {least}{left} task{'s' if left != 1 else ''} not run[/] (the same "
                      "command resumes)", markup=True, highlight=False)
        print_run_interrupted()


RUN_INTERRUPTED = "interrupted: stored results are kept; rerun the same command to resume."


def print_run_interrupted() -> None:
    """The line of a ``score`` or ``judge`` run that was stopped: a note, on stderr with the progress, so
    that ``CMD > file`` keeps the summary alone."""
    err_console.print(RUN_INTERRUPTED, style="yellow", highlight=False, markup=False)


#: The arguments of the ``robojudge`` command running (set by :func:`command_remembered`; None under a
#: test runner that calls the app itself).
_ARGUMENTS: list[str] | None = None


@contextmanager
def command_remembered(args: Sequence[str]) -> Iterator[None]:
    """Keep the arguments of the ``robojudge`` command for :func:`command_line` while it runs."""
    global _ARGUMENTS  # noqa: PLW0603 (one command at a time: robojudge.cli.main runs it)
    before, _ARGUMENTS = _ARGUMENTS, list(args)
    try:
        yield
    finally:
        _ARGUMENTS = before


def command_line() -> list[str] | None:
    """The command this process runs (``["robojudge", "report", ...]``), a password in a URL among its
    arguments written as ``***`` (:func:`robojudge.store.mask_text`); None when not started by
    :func:`robojudge.cli.main`. What a report records as the command that made it."""
    if _ARGUMENTS is None:
        return None
    from robojudge.store import mask_text

    return ["robojudge", *(mask_text(a) for a in _ARGUMENTS)]
