"""The ``robojudge`` command line: argument parsing and printing over the Python API.

Each command lives in its own module and is imported only when it runs (``robojudge score`` never
loads pandas or the judge backends), which keeps start-up fast. ``robojudge --help`` imports them all.
"""

from __future__ import annotations

import contextlib
import errno
import faulthandler
import importlib
import logging
import os
import sys
from typing import Any

import typer

from robojudge import __version__, settings
from robojudge._activity import watch
from robojudge._lifeline import WORKERS_LOG_ALIKE, terminate_as_interrupt
from robojudge.cli._once import refuse_repeats

# command name -> (module in robojudge.cli, attribute, "group" for a sub-app or "command")
COMMANDS: dict[str, tuple[str, str, str]] = {
    "suite": ("_suite", "app", "group"),
    "score": ("_score", "score", "command"),
    "judge": ("_judge_app", "app", "group"),
    "report": ("_report", "report", "command"),
    "results": ("_results", "app", "group"),
    "metrics": ("_metrics", "app", "group"),
    "weights": ("_weights", "app", "group"),
    "meta": ("_meta", "app", "group"),
    "aggregate": ("_aggregate", "app", "group"),
    "leaderboard": ("_leaderboard", "app", "group"),
    "demo": ("_demo", "demo", "command"),
    "robots": ("_robots", "app", "group"),
    "kiva": ("_kiva", "app", "group"),
    "audit": ("_audit", "app", "group"),
    "annotate": ("_annotate", "app", "group"),
    "train": ("_train", "app", "group"),
    "select": ("_select", "app", "group"),
    "settings": ("_settings", "settings_cmd", "command"),
    "cache": ("_cache", "app", "group"),
}


#: Commands (a command, or a group and its subcommand) that only read what is stored or list what is
#: registered: a plugin that cannot be loaded is left out of them with a warning, so that a broken plugin
#: never stops a report or an export of results already stored. Every other command (which computes, or
#: may run a plugin's code) stops with one error line instead (docs/architecture.md, "Plugins").
READS_ONLY: frozenset[tuple[str, ...]] = frozenset({
    ("report",), ("results",), ("aggregate",), ("leaderboard", "generators"), ("leaderboard", "judges"),
    ("meta",), ("metrics", "list"), ("metrics", "info"),
})


def reads_only(args: list[str]) -> bool:
    """Whether the command line runs one of :data:`READS_ONLY`."""
    words = [a for a in args if not a.startswith("-")]
    return tuple(words[:1]) in READS_ONLY or tuple(words[:2]) in READS_ONLY


#: Loggers of other libraries kept at WARNING under ``-v``.
NOISY_LOGGERS = ("matplotlib", "PIL", "urllib3", "httpx", "httpcore", "asyncio", "numba")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"robojudge {__version__}")
        raise typer.Exit()


def _root(
    verbose: bool = typer.Option(
        False, "--verbose", "-v",
        help="Log debug messages on stderr: the result store opened and the run folder a manifest resolves "
             "to, the work planned and scheduled, the judge response cache's hits. Goes before the command "
             "(robojudge -v score ...)."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate generated robot-manipulation videos and the judges that score them.

    The docs/*.md files that help texts name are in the robojudge repository's docs/ folder; pip does not
    install them.
    """
    before = set(logging.getLogger().handlers)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    for handler in set(logging.getLogger().handlers) - before:  # (worker processes log as it does)
        setattr(handler, WORKERS_LOG_ALIKE, True)
    # Other libraries' debug lines would bury robojudge's: matplotlib's font manager writes hundreds.
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    if verbose:  # what the run uses, where it is not the default (robojudge settings lists every one)
        for var in settings.in_force():
            if var.source != "default":
                logging.getLogger("robojudge.settings").debug("%s=%s (%s)", var.name, var.value, var.source)


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app with every command, or with just ``only`` (what ``main`` uses to start fast)."""
    app = typer.Typer(
        name="robojudge",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.callback()(_root)
    for name, (module, attr, kind) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(f"robojudge.cli.{module}"), attr)
        if kind == "group":
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
    refuse_repeats(app)  # an option that takes one value, given twice, is an error (robojudge.cli._once)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # the full app, for documentation tools and tests
        return build_app()
    raise AttributeError(name)


def replace_unencodable() -> None:
    """Let standard output and error print a character their encoding lacks as ``?`` instead of failing.

    Under a locale that is not UTF-8 (``LC_ALL=C`` with ``PYTHONUTF8=0``, a Latin-1 terminal) a
    generator's name, a metric's description or the small-n dagger would otherwise end the command with
    a UnicodeEncodeError after part of its output. :func:`main` calls it once for every command. Files
    are always written as UTF-8; this is about the terminal only.
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
            except (ValueError, OSError):  # a stream that cannot change now: leave it as it is
                continue


def _say(line: str) -> None:
    from robojudge.cli._common import err_console

    err_console.print(line, highlight=False, markup=False)


# What write() and close() raise, without a file name, on a full disk, past a quota or a file-size limit.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _os_error_line(exc: OSError, args: list[str]) -> str | None:
    """The one line an ``OSError`` ends a command with, or None for one to show with its traceback (no
    file named and not a failed write: a bug more likely than the machine)."""
    reason = exc.strerror or str(exc)
    if exc.filename is not None:
        named = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
        return f"writing {named}: {reason}" if exc.errno in _WRITE_ERRNOS else f"{named}: {reason}"
    if exc.errno not in _WRITE_ERRNOS:
        return None
    out = _option_value(args, ("--out", "-o"))
    command = next((a for a in args if not a.startswith("-")), "")
    where = f"writing {out}" if out is not None else f"writing the output of `robojudge {command}`"
    return f"{where}: {reason}"


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    """The value given to the first of ``names`` in ``args`` (``--out X`` or ``--out=X``), or None."""
    for k, arg in enumerate(args):
        if arg in names and k + 1 < len(args):
            return args[k + 1]
        for name in names:
            if name.startswith("--") and arg.startswith(f"{name}="):
                return arg[len(name) + 1:]
    return None


CLOSED_STDOUT_STATUS = 141
"""Exit status of a command whose standard output was closed before it finished (``| head``), as a
shell reports a process that SIGPIPE ended: the command still finished its work and its files."""


class _ClosedPipeGuard:
    """Standard output that, once its reader has gone (``robojudge report ... | head``), sends the rest to
    ``os.devnull`` instead of raising: click turned the ``BrokenPipeError`` into a silent exit 1, in the
    middle of the command (a report without its index.html beside a new summary)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.closed_early = False

    def _gone(self) -> None:
        self.closed_early = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())  # what is still buffered goes there too, at exit
        finally:
            os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return int(self.stream.write(text))
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._gone()
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _guard_stdout() -> _ClosedPipeGuard | None:
    """Put :class:`_ClosedPipeGuard` over ``sys.stdout`` when it is a file (a pipe, a terminal); None
    when it has no descriptor (a test runner's capture)."""
    try:
        sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    guard = _ClosedPipeGuard(sys.stdout)
    sys.stdout = guard
    return guard


#: The unknown ``ROBOJUDGE_*`` variables already warned of in this process (one warning each).
_WARNED_VARIABLES: set[str] = set()


def warn_unknown_variables() -> None:
    """Say on stderr, once per process, each ``ROBOJUDGE_*`` variable that robojudge does not read, with
    the one meant when it looks like a misspelling: nothing reads it, so a ``ROBOJUDGE_CONFIN`` set as a
    safety measure would otherwise leave the confinement off without a word. Every command passes here
    (:func:`main`); a warning, not an error, so that a variable of another tool sharing the prefix never
    stops a run."""
    for name, meant in settings.unknown_variables():
        if name in _WARNED_VARIABLES:
            continue
        _WARNED_VARIABLES.add(name)
        hint = f" (did you mean {meant}?)" if meant else ""
        sys.stderr.write(f"warning: unknown variable {name}{hint}: robojudge does not read it; the variables "
                         "it reads are listed in README.md, \"Environment variables\"\n")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    # COLUMNS=0 made rich print every line at width 0 (nothing, errors and help included): unset it.
    settings.forget_unusable_columns()
    warn_unknown_variables()
    guard = _guard_stdout()
    # A character the terminal's encoding lacks prints as '?' in every command, not a traceback.
    replace_unencodable()
    # `kill PID` (SIGTERM) stops a run as Ctrl-C does: committed results stay, workers are stopped.
    terminate_as_interrupt()
    # A crash in a native library (a segfault in a decoder) prints the Python stack it happened under,
    # naming the metric, instead of a bare "Segmentation fault".
    with contextlib.suppress(ValueError, OSError):  # an stderr with no file behind it (a test runner's)
        faulthandler.enable()
    command = next((a for a in args if not a.startswith("-")), None)
    if command in COMMANDS:
        only: str | None = command
    elif command is None and args and "--help" not in args:
        only = ""  # root options only (--version): no command module needs loading
    else:
        only = None  # help, or an unknown command: the full app lists what exists
    try:
        app = build_app(only)
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load: nothing has started yet
        sys.stderr.write("interrupted before the command started\n")
        raise SystemExit(130) from None
    try:
        _run(app, args)
    except SystemExit as exc:  # (what a command ends with; an error's status is kept)
        if guard is not None and guard.closed_early and exc.code in (0, None):
            raise SystemExit(CLOSED_STDOUT_STATUS) from None
        raise
    finally:
        if guard is not None:
            sys.stdout = guard.stream
    if guard is not None and guard.closed_early:
        raise SystemExit(CLOSED_STDOUT_STATUS)


def _run(app: typer.Typer, args: list[str]) -> None:
    from robojudge._files import LinkedFolderError, LinkReplacedWarning
    from robojudge.cli._common import command_remembered, warnings_said_once
    from robojudge.registry import PluginError, PluginSkippedWarning, skipping_broken_plugins

    try:
        # Long reads and checks (a million stored results) say what they are doing after a few seconds.
        # A link in an output folder replaced instead of followed is one warning line, said once; so is
        # a broken plugin left out of a command that only reads.
        with contextlib.ExitStack() as stack:
            stack.enter_context(watch(_say))
            stack.enter_context(command_remembered(args))  # (what a report records as its command)
            stack.enter_context(warnings_said_once(LinkReplacedWarning))
            if reads_only(args):
                stack.enter_context(warnings_said_once(PluginSkippedWarning))
                stack.enter_context(skipping_broken_plugins())
            app(args)
    except PluginError as exc:  # (its message names the plugin, where it was declared and what to do)
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None
    except LinkedFolderError as exc:  # (its message names the folder, where it leads and what to do)
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(2) from None
    except OSError as exc:
        # A path that cannot be written or read (an --out under a file, a folder where a file goes), or a
        # write that fails (a full disk: write() names no file): one line saying where, not a traceback.
        line = _os_error_line(exc, args)
        if line is None:
            raise
        sys.stderr.write(f"error: {line}\n")
        raise SystemExit(2) from None
    except Exception as exc:
        # A stop that lands while Python runs a module's class body comes out wrapped (Python 3.11 raises
        # "RuntimeError: Error calling __set_name__ ..." from the KeyboardInterrupt): it is still a stop,
        # exit 130 as every stopped command does, not a traceback and 1 (which a scheduler reads as a crash).
        if not stopped_within(exc):
            raise
        sys.stderr.write("interrupted while the command was starting or loading a module; nothing it had "
                         "stored is lost; rerun the same command to go on\n")
        raise SystemExit(130) from None


def stopped_within(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by a stop: a KeyboardInterrupt (Ctrl-C, or SIGTERM/SIGHUP as robojudge
    turns them into one) among its causes or contexts."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, KeyboardInterrupt):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False
