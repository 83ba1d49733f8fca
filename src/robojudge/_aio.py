"""Running a coroutine to its end from synchronous code, with or without an event loop in this thread.

``asyncio.run`` refuses to start where an event loop already runs in the calling thread, and one always
runs in a Jupyter kernel's main thread: a notebook cell calling ``judge_suite`` failed with "asyncio.run()
cannot be called from a running event loop". :func:`run_coroutine` calls ``asyncio.run`` where it can and
otherwise runs it on a thread of its own while the caller waits (the caller's loop is blocked meanwhile, as
by any long synchronous call). A Ctrl-C that reaches the waiting caller cancels the coroutine in that
thread, waits for it to wind down (its ``finally`` blocks: closing a backend, flushing a cache) and is then
raised in the caller, as ``asyncio.run`` does with a Ctrl-C in the main thread. Stdlib only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, also where an event loop runs in this thread (see the module doc)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop here: the plain way
        return asyncio.run(coro)
    return _on_own_thread(coro)


def _on_own_thread(coro: Coroutine[Any, Any, T]) -> T:
    started = threading.Event()
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    outcome: Future[T] = Future()

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None
        running.append((asyncio.get_running_loop(), task))
        started.set()
        return await coro

    def work() -> None:
        try:
            outcome.set_result(context.run(asyncio.run, main()))
        except BaseException as exc:  # handed to the caller
            outcome.set_exception(exc)

    context = contextvars.copy_context()  # the caller's context variables, as asyncio.run would see them
    worker = threading.Thread(target=work, name="robojudge-asyncio", daemon=True)
    try:
        worker.start()
        return outcome.result()
    except KeyboardInterrupt:
        while worker.is_alive() and not started.wait(0.05):  # (not started at all: nothing to stop)
            pass
        if running and not outcome.done():
            loop, task = running[0]
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: nothing left to stop
                loop.call_soon_threadsafe(task.cancel)
        worker.join()  # a second Ctrl-C here leaves it winding down on its thread
        raise
