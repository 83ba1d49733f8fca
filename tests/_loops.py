"""Calling robojudge as a notebook does: from a running event loop, stopped by Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def in_a_running_loop(call: Callable[[], Any]) -> Any:
    """``call()`` made from a coroutine of a running loop that, like a Jupyter kernel's, leaves Ctrl-C to
    Python's own handler (``asyncio.run`` installs one that only cancels its task)."""

    async def cell() -> Any:
        return call()

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(cell())
    finally:
        loop.close()


@contextmanager
def ctrl_c_once(ready: threading.Event) -> Iterator[None]:
    """A SIGINT to the main thread once ``ready`` is set, as a terminal or Jupyter's "Interrupt kernel"
    sends it, with Python's own Ctrl-C handler in place meanwhile."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    main = threading.main_thread().ident
    assert main is not None

    def later() -> None:
        if ready.wait(30):
            signal.pthread_kill(main, signal.SIGINT)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=later, daemon=True).start()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
