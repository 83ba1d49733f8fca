"""``run_coroutine``: ``asyncio.run`` that also works where an event loop runs (a Jupyter kernel), and
whose work stops on Ctrl-C there too."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from _loops import ctrl_c_once, in_a_running_loop
from robojudge._aio import run_coroutine

NAME: contextvars.ContextVar[str] = contextvars.ContextVar("NAME", default="unset")


async def where() -> tuple[str, str]:
    await asyncio.sleep(0)
    return threading.current_thread().name, NAME.get()


def test_outside_a_loop_it_is_asyncio_run_in_this_thread() -> None:
    token = NAME.set("caller")
    try:
        assert run_coroutine(where()) == (threading.current_thread().name, "caller")
    finally:
        NAME.reset(token)


def test_inside_a_running_loop_it_runs_on_a_thread_of_its_own() -> None:
    # Before: RuntimeError "asyncio.run() cannot be called from a running event loop".
    token = NAME.set("cell")
    try:
        thread, seen = in_a_running_loop(lambda: run_coroutine(where()))
    finally:
        NAME.reset(token)
    assert thread.startswith("robojudge-asyncio") and seen == "cell"  # the caller's context goes along
    with pytest.raises(ZeroDivisionError):  # its errors come back to the caller
        in_a_running_loop(lambda: run_coroutine(asyncio.sleep(0, 1 / 0)))


def test_ctrl_c_in_a_running_loop_cancels_the_work_and_reaches_the_caller() -> None:
    started, wound_down = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.05)  # a cleanup that awaits (a backend's close) still runs
            wound_down.set()

    t0 = time.monotonic()
    with ctrl_c_once(started), pytest.raises(KeyboardInterrupt):
        in_a_running_loop(lambda: run_coroutine(forever()))
    assert wound_down.is_set()  # cancelled and finished before the caller went on
    assert time.monotonic() - t0 < 30
    for thread in threading.enumerate():
        if thread.name.startswith("robojudge-asyncio"):
            thread.join(5)
            assert not thread.is_alive()
