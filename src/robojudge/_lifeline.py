"""Worker processes that end when their parent does.

A ``spawn``-started worker of a process pool waits for work on a pipe whose write end it holds
itself, so it never sees end-of-file: when the parent is killed (SIGKILL, an out-of-memory kill,
a scheduler ending a job), the workers and the multiprocessing resource tracker would live on,
holding memory (and GPU memory, with model metrics) until someone kills them by hand.

:func:`exit_with_parent` is the pool initializer that prevents it: a daemon thread in the worker
waits on the parent's sentinel (a pipe the parent holds open while it lives; the operating system
closes it when the parent dies, however it dies) and ends the worker at once. The resource tracker
then sees its last writer go and exits too. Stdlib only, so every layer can use it.

Only ``spawn`` (and ``forkserver``) children get a sentinel of their own; under ``fork`` the write
end is inherited by every sibling, which keeps it open, so the pools here all use ``spawn``.

:class:`WorkerStartError` is what every pool raises when its workers die before they run anything (a
script without the ``__main__`` guard, most often), rather than a bare ``BrokenProcessPool``. Pools
whose functions all live in robojudge start their processes with :func:`spawn_without_main` instead,
so they never run a user's script again at all.
"""

from __future__ import annotations

import _thread
import contextlib
import multiprocessing as mp
import multiprocessing.spawn as mp_spawn
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import wait
from multiprocessing.context import BaseContext, SpawnContext, SpawnProcess
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

EXIT_CODE = 70
"""Exit status of a worker that ended because its parent died (EX_SOFTWARE: not a normal exit)."""

_watching = False


def exit_with_parent() -> None:
    """In a multiprocessing child: end this process as soon as its parent process is gone.

    Safe to call in any process: it does nothing in a process that multiprocessing did not start.
    Meant as (part of) a pool's ``initializer``.
    """
    global _watching
    parent = mp.parent_process()
    if _watching:
        return
    sentinel = getattr(parent, "sentinel", None) if parent is not None else None
    if sentinel is None:
        return

    def watch() -> None:
        wait([sentinel])
        os._exit(EXIT_CODE)  # no cleanup: the results this worker could send have nowhere to go

    threading.Thread(target=watch, name="robojudge-exit-with-parent", daemon=True).start()
    _watching = True


def quiet_worker() -> None:
    """A pool initializer for workers that the parent stops itself: end with the parent
    (:func:`exit_with_parent`) and ignore Ctrl-C.

    Ctrl-C at a terminal reaches the whole process group: an idle worker would print a
    ``KeyboardInterrupt`` traceback from its wait for work, and a busy one would die in the middle
    of its task. Only the parent handles it, and stops its workers (:func:`stop_pool`).
    """
    exit_with_parent()
    if mp.parent_process() is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_pool(pool: Any, wait: float = 5.0) -> None:
    """Stop a ``ProcessPoolExecutor`` now: cancel what has not started and terminate its workers.

    For a stop (Ctrl-C, SIGTERM) or an error: ``shutdown(wait=True)``, which leaving a ``with`` block
    runs, lets every worker finish its task first, and a second stop that breaks off that wait leaves
    workers that never get told to exit, which the interpreter's exit then waits for forever. Waits up
    to ``wait`` seconds for each worker to end.
    """
    # ProcessPoolExecutor has no public way to stop its workers; ``_processes`` has held them
    # (pid -> Process) in every CPython since 3.2.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # (shutdown drops the executor's reference)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.join(timeout=wait)
    join_manager(manager, wait)


def join_manager(thread: Any, wait: float = 5.0) -> None:
    """Wait up to ``wait`` seconds for a stopped ``ProcessPoolExecutor``'s manager thread to end.

    Left running, it closes its wake-up pipe while the interpreter's exit (``_python_exit``) writes to
    it, and on Python 3.11 that race prints a traceback after the command's own last line (CI saw one
    after `suite make-demo`'s one-line error)."""
    if thread is not None and thread.is_alive():
        thread.join(timeout=wait)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """Hold off Ctrl-C, SIGTERM and SIGHUP while the block runs (a few renames that must all happen or
    none), then deliver the first that came, through the handlers set before.

    In the main thread only (elsewhere the block runs as it is); a signal that is ignored stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    names = ("SIGINT", "SIGTERM", "SIGHUP")  # (no SIGHUP on Windows)
    previous = {sig: signal.getsignal(sig) for sig in (getattr(signal, n, None) for n in names)
                if sig is not None}
    held = [sig for sig, handler in previous.items() if handler not in (signal.SIG_IGN, None)]
    for sig in held:
        signal.signal(sig, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        for sig in held:
            signal.signal(sig, previous[sig])
        if got:
            signal.raise_signal(got[0])


def terminate_as_interrupt() -> None:
    """Make SIGTERM and SIGHUP end this (main) process the way Ctrl-C does.

    The handler re-raises the signal as SIGINT, so whatever handles Ctrl-C (a ``KeyboardInterrupt``
    in plain code, asyncio's cancellation of the main task) handles a polite ``kill`` or a closed
    terminal (a dropped ssh session) as well: results in flight are committed or dropped as on
    Ctrl-C, workers are stopped, and the exit status is the same. SIGHUP is left alone where it is
    ignored (``nohup``: the run is meant to outlive its terminal). Call from the main thread;
    elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return

    in_hook = False  # the unraisable hook below runs: a stop raised in it would be dropped

    def resend(signum: signal.Signals) -> None:
        def later() -> None:
            time.sleep(0.01)
            while in_hook:  # the main thread not back out of the hook yet (a loaded machine)
                time.sleep(0.005)
            _signal_main(signum)

        threading.Thread(target=later, name="robojudge-stop-again", daemon=True).start()

    def on_term(signum: int, frame: FrameType | None) -> None:
        if in_hook:  # a stop while the hook sends one again: that one is on its way
            return
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
            # Started in the background by a shell, which ignores SIGINT there: raise directly.
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, on_term)
    hangup = getattr(signal, "SIGHUP", None)  # (POSIX only)
    if hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN:
        signal.signal(hangup, on_term)
    previous = sys.unraisablehook

    def interrupt_again(unraisable: UnraisableHookArgs) -> None:
        # A stop (Ctrl-C, or the above) that lands while a finalizer runs (a __del__, a weakref callback:
        # closing a database connection, a pool, a generator) is raised in it, where Python prints
        # "Exception ignored in ..." and drops it: the command went on. Deliver it again, through the
        # handlers above, from a thread a moment later: by then this hook has returned (raised here,
        # it would be dropped the same way; one that lands in another finalizer comes back here).
        # The re-send waits until this hook has returned (the main thread may not be scheduled again for
        # a while on a loaded machine; sent into the hook, the stop was raised here and dropped): the flag
        # is cleared as the hook's last step, after which no signal handler runs before it returns.
        nonlocal in_hook
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            in_hook = True
            try:
                resend(signal.SIGTERM if signal.getsignal(signal.SIGTERM) is on_term else signal.SIGINT)
            finally:
                in_hook = False
            return
        previous(unraisable)

    sys.unraisablehook = interrupt_again


def _signal_main(signum: signal.Signals) -> None:
    """Send ``signum`` to the main thread: a real signal, which also ends a wait it is blocked in (a
    sleep, a lock, a pipe), where ``_thread.interrupt_main`` is only seen once that wait returns."""
    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.main_thread().ident or 0, signum)
    else:  # (Windows)
        _thread.interrupt_main(signum)


class WorkerStartError(RuntimeError):
    """Worker processes die before they can run anything (a process that cannot even start one).

    The usual cause: a script that calls robojudge with several workers at its top level. Workers
    are started with ``spawn``, which imports the script again in each of them, so each one runs the
    script's own calls and dies; every task would be recorded as crashed. Also raised before a pool
    starts when its tasks need a function of a main module the workers cannot import (a metric
    defined in a notebook).
    """


def main_importable() -> bool:
    """Whether ``spawn``-started processes can import the main module again, and so unpickle what it
    defines: a module run with ``-m`` or a script file can be; a notebook, ``python -c`` and a script
    read from standard input cannot."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", None):
        return True
    script = getattr(main, "__file__", None)
    return script is not None and Path(script).is_file()


def worker_start_hint() -> str:
    """What :class:`WorkerStartError` says: the ``__main__`` guard when the main module is a user's
    script (spawned workers import it again), the workers' own error output otherwise (the CLI)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    script = getattr(main, "__file__", None)
    cli = (spec is not None and spec.name.startswith("robojudge")) or (
        script is not None and Path(script).name == "robojudge")
    if cli or script is None:
        why = "their error is printed above (a library that fails to import, memory, a limit on processes)"
    elif not main_importable():
        why = (f"worker processes import the main script again (the 'spawn' start method), and {script} is "
               "no file they can import (a script read from standard input): save the script to a file "
               "and run that, or use workers=1")
    else:
        why = ("worker processes import the main script again (the 'spawn' start method): a script that "
               f"calls robojudge at its top level ({script}) must do so under `if __name__ == \"__main__\":`")
    return (f"worker processes die as they start, before running anything: {why}. The tasks in flight "
            "were not recorded as crashed")


_MAINLESS_HERE = threading.local()  # set while this thread starts a process without the main module
_INSTALLING = threading.Lock()


def _mainless_preparation() -> None:
    """Wrap ``multiprocessing.spawn.get_preparation_data`` (once) so that the data a child gets leaves
    out the main module's name and path while :data:`_MAINLESS_HERE` is set, in this thread only: the
    main module stays what it is for every other thread (swapping it in ``sys.modules`` for the start,
    as before, broke the pickling of a script's functions in threads that ran meanwhile)."""
    with _INSTALLING:
        if getattr(mp_spawn.get_preparation_data, "_robojudge", False):
            return
        plain = mp_spawn.get_preparation_data

        def preparation_data(name: str) -> dict[str, Any]:
            data = plain(name)
            if getattr(_MAINLESS_HERE, "on", False):
                data.pop("init_main_from_name", None)
                data.pop("init_main_from_path", None)
            return data

        preparation_data._robojudge = True  # type: ignore[attr-defined]
        mp_spawn.get_preparation_data = preparation_data


class _MainlessProcess(SpawnProcess):
    @staticmethod
    def _Popen(process_obj: BaseProcess) -> Any:
        # spawn sends the child the main module's name or path, to import it again before anything
        # else (runpy reruns an unguarded script whole); this child gets neither.
        _mainless_preparation()
        _MAINLESS_HERE.on = True
        try:
            return SpawnProcess._Popen(process_obj)
        finally:
            _MAINLESS_HERE.on = False


class _MainlessContext(SpawnContext):
    Process = _MainlessProcess


_MAINLESS = _MainlessContext()


def spawn_without_main() -> BaseContext:
    """A ``spawn`` context whose processes do not import the main module.

    For pools whose functions and arguments all live in robojudge (decoding, simulator builds): a
    plain ``spawn`` child imports the caller's script again first, which runs an unguarded script's
    own top-level calls (a judge run, sending every request again) before the child fails.
    """
    return _MAINLESS


def alive() -> bool:
    """What a worker runs to show that it can start at all."""
    return True


WORKERS_LOG_ALIKE = "robojudge_workers_log_alike"
"""The attribute the command line sets on the stderr handler it makes (``robojudge -v``): worker processes
log as that handler does (:func:`robojudge.run._executor.parent_log_setup`). A handler a Python caller
set up is left alone: its formatter, style, filters and levels cannot be copied faithfully into a
spawned process (a ``{``-style format or a colour formatter broke the workers' logging), so their
workers keep Python's defaults."""
