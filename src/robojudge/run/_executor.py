"""Executors: where tasks run. The scoring loop only sees this interface, so a cluster backend
(Ray) can slot in beside the local ones without touching the loop."""

from __future__ import annotations

import contextlib
import errno
import faulthandler
import itertools
import logging
import multiprocessing as mp
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol, TypeVar

from robojudge import settings
from robojudge._lifeline import (
    WORKERS_LOG_ALIKE,
    WorkerStartError,
    exit_with_parent,
    stop_pool,
    worker_start_hint,
)
from robojudge._lifeline import alive as _alive
from robojudge._machine import usable_cpus
from robojudge.run._timelimit import allow_hard_limit

with contextlib.suppress(ImportError):  # (POSIX only) imported now: at the open-files limit no import works
    import resource

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` over tasks and yields ``(task, result)`` pairs as they finish, in any order.

    Implementations keep a bounded number of tasks in flight, so memory does not grow with the
    suite, and must never raise for an exception inside ``fn``: ``fn`` is expected to catch its own
    errors and return them as results. ``on_crash(task, reason)`` builds the result for a task whose
    worker died (a segfault in a decoder, an out-of-memory kill), or whose result did not come back from
    its worker (one that cannot be pickled: :func:`no_result`). ``in_process``: the tasks run in the
    caller's own process, so a crash in one ends the caller (:class:`SerialExecutor`).
    """

    workers: int
    in_process: bool

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        on_crash: Callable[[T, str], R],
    ) -> Iterator[tuple[T, R]]: ...

    def shutdown(self) -> None: ...


class SerialExecutor:
    """Runs tasks one by one in this process: simplest to debug, no start-up cost. A task that
    crashes the process (a segfault in a native library) ends the caller with it; the scoring loop
    guards against that happening twice (:func:`robojudge.run.score_items`)."""

    workers = 1
    in_process = True

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        on_crash: Callable[[T, str], R],
    ) -> Iterator[tuple[T, R]]:
        for task in tasks:
            yield task, fn(task)

    def shutdown(self) -> None:
        pass


def cv_threads_per_worker(workers: int, cpus: int | None = None) -> int:
    """OpenCV threads for each of ``workers`` processes: the CPUs shared out among them, at least 1.

    OpenCV starts a thread per CPU in every process by default; ``workers`` processes on as many
    CPUs then run ``workers`` times as many threads as there are CPUs, and its parallel loops (DIS
    flow, resizing, colour conversion) wait on each other (docs/performance.md, "The weights-free set on
    clips shaped like today's generators").

    >>> cv_threads_per_worker(2, 2), cv_threads_per_worker(2, 16), cv_threads_per_worker(8, 4)
    (1, 8, 1)
    """
    return max(1, (cpus if cpus is not None else usable_cpus()) // max(1, workers))


LogSetup = tuple[int, str | None, dict[str, int]]
"""What a worker needs to log as its parent does: the root logger's level, the format of its handler on
stderr, and the levels set on named loggers (the CLI holds noisy libraries at WARNING)."""


def parent_log_setup() -> LogSetup | None:
    """How this process logs to stderr when the command line set it up (``robojudge -v``:
    :func:`robojudge.cli._root` marks its handler, :data:`robojudge._lifeline.WORKERS_LOG_ALIKE`), for
    :func:`init_worker`; ``None`` otherwise: a Python caller's own logging (another format style, a
    colour formatter, a handler level, ``logging.disable``) cannot be copied faithfully into a spawned
    process, so their workers keep Python's defaults."""
    root = logging.getLogger()
    if logging.root.manager.disable:  # logging.disable(...) in force: workers say nothing more
        return None
    for handler in root.handlers:
        if (getattr(handler, WORKERS_LOG_ALIKE, False) and isinstance(handler, logging.StreamHandler)
                and handler.stream in (sys.stderr, sys.__stderr__)):
            fmt = handler.formatter._fmt if handler.formatter is not None else None
            levels = {name: lg.level for name, lg in logging.root.manager.loggerDict.items()
                      if isinstance(lg, logging.Logger) and lg.level != logging.NOTSET}
            return root.level, fmt, levels
    return None


def init_worker(cv_threads: int, memory_share: float = 1.0, parent: settings.Settings | None = None,
                log_setup: LogSetup | None = None) -> None:
    """A worker process's start: take the ``parent``'s settings (None: read this process's environment)
    so that the run sees one set of values in all its processes, end with the parent, print the Python
    stack of a native crash (a segfault names the metric it happened in), let a task's time limit end
    the process when its code does not come back to Python (:mod:`robojudge.run._timelimit`), run
    OpenCV on ``cv_threads`` threads (0: OpenCV's own default), hold decoded frames to ``memory_share``
    of the budget (one of several workers on the machine: :func:`robojudge.video.set_frame_memory_share`),
    and log to stderr as the parent does (``log_setup``, :func:`parent_log_setup`: ``robojudge -v`` means
    the same with any number of workers, and a record keeps its level and logger name)."""
    if parent is not None:
        settings.install(parent)
    exit_with_parent()
    faulthandler.enable()
    allow_hard_limit()
    if log_setup is not None:
        level, fmt, levels = log_setup
        logging.basicConfig(level=level, format=fmt if fmt is not None else logging.BASIC_FORMAT)
        for name, named in levels.items():
            logging.getLogger(name).setLevel(named)
    from robojudge.video import set_frame_memory_share

    set_frame_memory_share(memory_share)
    if cv_threads > 0:
        import cv2  # the core install's OpenCV; every video metric imports it in the worker anyway

        cv2.setNumThreads(cv_threads)


class LocalProcessExecutor:
    """A pool of worker processes on this machine.

    At most ``workers * prefetch`` tasks are submitted at a time. If a worker dies, the pool is
    rebuilt and the tasks that were in flight are run again one at a time, so only the task that
    really kills its worker is reported as crashed. Workers end by themselves if this process dies
    (:func:`robojudge._lifeline.exit_with_parent`), and are terminated, not waited for, when the
    caller stops consuming results early (Ctrl-C, SIGTERM, an exception): their in-flight tasks
    are abandoned, to be computed again by the next run.

    Each worker runs OpenCV on ``cv_threads`` threads: by default the machine's CPUs shared out among
    the workers (:func:`cv_threads_per_worker`: 1 each for 2 workers on 2 CPUs), so the workers do
    not oversubscribe the CPUs; 0 leaves OpenCV's default (a thread per CPU in every worker).
    """

    in_process = False

    def __init__(self, workers: int, *, prefetch: int = 2, start_method: str = "spawn",
                 cv_threads: int | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if cv_threads is not None and cv_threads < 0:
            raise ValueError(f"cv_threads must be 0 (OpenCV's default) or more, got {cv_threads}")
        self.workers = workers
        self.cv_threads = cv_threads_per_worker(workers) if cv_threads is None else cv_threads
        self._prefetch = max(1, prefetch)
        self._ctx = mp.get_context(start_method)
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=self._ctx, initializer=init_worker,
            initargs=(self.cv_threads, 1.0 / workers, settings.get(), parent_log_setup()),
        )
        return self._pool

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        on_crash: Callable[[T, str], R],
    ) -> Iterator[tuple[T, R]]:
        it = iter(tasks)
        limit = self.workers * self._prefetch
        in_flight: dict[Future[R], T] = {}
        suspects: list[T] = []
        exhausted = False
        finished = False
        try:
            pool = self._new_pool(self.workers)
            while True:
                broken = False
                while not exhausted and len(in_flight) < limit:
                    try:
                        task = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    try:
                        in_flight[pool.submit(fn, task)] = task
                    except BrokenProcessPool:
                        # A worker died while the caller held an earlier result. This task never
                        # ran: it goes to the next pool, after the tasks in flight are settled.
                        it = itertools.chain([task], it)
                        broken = True
                        break
                if not in_flight and not broken:
                    break
                # A broken pool fails every future it holds at once, so waiting for all is quick.
                done, _ = wait(in_flight, return_when=ALL_COMPLETED if broken else FIRST_COMPLETED)
                for fut in done:
                    task = in_flight.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        suspects.append(task)
                        continue
                    except Exception as exc:  # noqa: BLE001 - one task's, not the run's (see no_result)
                        result = on_crash(task, no_result(exc))
                    yield task, result
                if broken:
                    suspects.extend(in_flight.values())
                    in_flight.clear()
                    yield from self._isolate(fn, suspects, on_crash)
                    suspects.clear()
                    pool = self._new_pool(self.workers)
            finished = True
        except OSError as exc:
            # Each worker is started with pipes of its own: at a low `ulimit -n` os.pipe() fails.
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            raise WorkerStartError(open_files_hint(self.workers, exc)) from None
        finally:
            if finished:
                self.shutdown()
            else:
                self._terminate()

    def _isolate(
        self, fn: Callable[[T], R], tasks: list[T], on_crash: Callable[[T, str], R]
    ) -> Iterator[tuple[T, R]]:
        # A worker that cannot start blames no task: it would fail each of them alike.
        try:
            self._new_pool(1).submit(_alive).result()
        except BrokenProcessPool:
            raise WorkerStartError(worker_start_hint()) from None
        # One task per fresh single-worker pool: the task that crashes it is the culprit.
        for task in tasks:
            pool = self._new_pool(1)
            future = pool.submit(fn, task)
            workers = workers_of(pool)
            try:
                result = future.result()
            except BrokenProcessPool:
                died = f"the worker process died while scoring this item ({how_it_died(pool, workers)})"
                result = on_crash(task, died)
            except Exception as exc:  # noqa: BLE001 - as in map_unordered
                result = on_crash(task, no_result(exc))
            yield task, result

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _terminate(self) -> None:
        """Stop now: a graceful shutdown would let every worker finish its current task first (and
        the interpreter's exit waits for that), which with model metrics can take minutes."""
        pool, self._pool = self._pool, None
        if pool is not None:
            stop_pool(pool)


NO_RESULT = "no result came back from the worker process for this item"
"""How the error row of a task starts whose worker raised instead of returning its result."""


def no_result(exc: BaseException) -> str:
    """The reason for a task whose worker process raised instead of returning its result: most often a
    result that cannot be pickled to go back to this process (``TypeError: cannot pickle ...``), or one
    that cannot be unpickled here. The worker lives on; only this task's result is lost."""
    return f"{NO_RESULT} ({type(exc).__name__}: {exc})"


# Built from the names this platform's signal module has: Windows' lacks SIGBUS (and SIGKILL), and a
# module-level ``signal.SIGBUS`` there stops every robojudge command at import.
_NATIVE_CRASHES = frozenset(
    sig for name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE", "SIGILL")
    if (sig := getattr(signal, name, None)) is not None)


def workers_of(pool: ProcessPoolExecutor) -> list[Any]:
    """The worker processes of ``pool`` now (``_processes``, pid -> Process, as in
    :meth:`LocalProcessExecutor._terminate`): taken when a task is submitted, for :func:`how_it_died`."""
    return list((getattr(pool, "_processes", None) or {}).values())


def how_it_died(pool: ProcessPoolExecutor, workers: Sequence[Any] = ()) -> str:
    """How the worker of a one-worker ``pool`` that broke ended, and what that most often means.
    ``workers``: its processes as :func:`workers_of` took them when the task was submitted (the pool's
    own list may be gone by the time it is asked: a busy CI machine once found none)."""
    code = None
    for proc in {id(p): p for p in [*workers, *workers_of(pool)]}.values():
        proc.join(timeout=30)  # (dead already: the pool saw its end; the wait only reaps it)
        # The pool's own thread reaps it too; a read between its waitpid and its note of the status finds
        # none (ECHILD here): read again a moment later.
        for _ in range(40):
            if proc.exitcode is not None:
                break
            time.sleep(0.05)
        code = proc.exitcode if proc.exitcode else code
    if code is None:
        return "a crash in a native library, or out of memory"
    if code > 0:
        return f"exit status {code}"
    try:
        sig = signal.Signals(-code)
    except ValueError:
        return f"killed by signal {-code}"
    if sig == getattr(signal, "SIGKILL", None):  # (none on Windows)
        return "killed by SIGKILL, most often the kernel's out-of-memory killer"
    if sig in _NATIVE_CRASHES:
        return f"killed by {sig.name}: a crash in a native library"
    return f"killed by {sig.name}"


def open_files_limit() -> int | None:
    """This process's soft limit on open files (``ulimit -n``), or ``None`` when there is none."""
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (NameError, OSError, ValueError):  # (no such limit on this system)
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def open_files_hint(workers: int, exc: OSError) -> str:
    """What :class:`WorkerStartError` says when worker processes cannot be started for want of file
    descriptors (``exc``: EMFILE, this process's limit, or ENFILE, the system's)."""
    soft = open_files_limit()
    limit = f" ({soft}, `ulimit -n`)" if soft is not None else ""
    whose = "this process's limit on open files" + limit if exc.errno == errno.EMFILE else (
        "the system's limit on open files")
    return (f"cannot start {workers} worker processes: {whose} is reached ({exc.strerror}). Each worker "
            "holds pipes of its own: raise the limit (`ulimit -n 1024`) or pass fewer --workers "
            "(--workers 1 computes in this process). Results stored so far are kept")


class OpenFilesError(RuntimeError):
    """A run that needs more open files than this process may have (``ulimit -n``): refused before it
    starts, or stopped when the limit is met during the run (what finished is stored).

    Attributes:
        summary: The run's summary so far when it stopped during the run (a judge run's
            ``JudgeRunSummary``); ``None`` when it was refused before starting.
        rows: Rows that finished in the task that met the limit (an item's other rubrics), to store.
    """

    def __init__(self, message: str, summary: Any = None) -> None:
        super().__init__(message)
        self.summary = summary
        self.rows: list[Any] = []


def ensure_open_files(needed: int, what: str, fix: str) -> int | None:
    """Make sure this process may hold ``needed`` open files, raising its soft limit toward the hard one
    when that is lower (as many tools do; worker processes started later inherit it).

    Args:
        needed: Descriptors the run needs at its peak.
        what: What needs them, for the message ("--concurrency 256").
        fix: What to lower instead of raising the limit ("lower --concurrency").

    Returns:
        The soft limit it was raised from, or ``None`` when it was high enough (or the system has none).

    Raises:
        OpenFilesError: The hard limit is below ``needed`` (or the system refused to raise the soft one).
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (NameError, OSError, ValueError):  # (no such limit on this system)
        return None
    infinity = resource.RLIM_INFINITY
    if soft == infinity or soft >= needed:
        return None
    if hard == infinity or hard >= needed:
        # Some headroom above the estimate, within the hard limit (macOS refuses more than OPEN_MAX,
        # 10240, whatever its hard limit says).
        target = max(needed, min(4096, 2 * needed))
        target = target if hard == infinity else min(hard, target)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return int(soft)
    raise OpenFilesError(
        f"{what} needs about {needed} open files, and this process's limit is {soft} (`ulimit -n`; the "
        f"hard limit, {'unlimited' if hard == infinity else hard}, allows no more): {fix}, or raise the "
        f"limit (`ulimit -n {needed}` in the shell that starts the run). Nothing was started"
    )


def run_in_child(fn: Callable[[T], R], task: T, on_crash: Callable[[T, str], R], reason: str) -> R:
    """``fn(task)`` in a fresh child process, or ``on_crash(task, reason)`` if the child dies (``reason``
    followed by how it ended: :func:`how_it_died`).

    For a task suspected of crashing the process that runs it. The child runs OpenCV on every CPU,
    as this process would. Ctrl-C (or any exception here) stops the child at once.
    """
    ex = LocalProcessExecutor(1)
    pool = ex._new_pool(1)
    finished = False
    try:
        future = pool.submit(fn, task)
        workers = workers_of(pool)
        try:
            result = future.result()
        except BrokenProcessPool:
            result = on_crash(task, f"{reason} ({how_it_died(pool, workers)})")
        except Exception as exc:  # noqa: BLE001 - as in LocalProcessExecutor.map_unordered
            result = on_crash(task, no_result(exc))
        finished = True
        return result
    finally:
        if finished:
            ex.shutdown()
        else:
            ex._terminate()


def guarded_call(fn: Callable[[T], R], task: T, *, ran_before: bool, note: Callable[[], None],
                 clear: Callable[[], None], on_crash: Callable[[T, str], R], reason: str) -> R:
    """``fn(task)`` under the crash guard of a run that computes in its own process.

    A task an earlier run was computing when its process ended (``ran_before``: its note was left)
    runs alone in a child process (:func:`run_in_child`, ``on_crash(task, reason)`` if that dies too).
    Any other runs here, noted (``note``) while it runs; the note is cleared (``clear``) if ``fn``
    raises, Ctrl-C included (a stop, not a crash), and left by a crash for the next run to find. The
    caller clears it once the result is stored.
    """
    if ran_before:
        return run_in_child(fn, task, on_crash, reason)
    note()
    try:
        return fn(task)
    except BaseException:
        clear()
        raise


EXECUTORS = ("local", "ray")


def make_executor(workers: int | None, kind: str = "local", address: str | None = None) -> Executor:
    """An executor by kind: ``local`` for ``workers`` processes (1 or ``None`` runs in this
    process), ``ray`` on the Ray cluster at ``address`` (see :class:`robojudge.run._ray.RayExecutor`;
    ``workers`` then caps the tasks running at once, default the cluster's CPUs).

    Raises:
        ValueError: An unknown kind, or an address given for the local executor.
        RayUnavailableError: ``ray`` without Ray installed (the message names the extra), or no
            cluster at ``address``.
    """
    if kind == "ray":
        from robojudge.run._ray import RayExecutor

        return RayExecutor(address or "auto", workers=workers)
    if kind != "local":
        raise ValueError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTORS)}")
    if address is not None:
        raise ValueError("--address is for --executor ray; the local executor runs on this machine")
    workers = workers or 1
    return SerialExecutor() if workers <= 1 else LocalProcessExecutor(workers)
