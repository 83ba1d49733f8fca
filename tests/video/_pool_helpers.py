"""Picklable functions for the decoder-pool tests (spawned workers import this module by name)."""

from __future__ import annotations

import os
import time


def pid_and(value: int) -> tuple[int, int]:
    """The worker's process id, and ``value`` doubled."""
    return os.getpid(), 2 * value


def crash_on(name: str, bad: str, delay: float = 0.0) -> str:
    """Kill the worker process outright (as a codec segfault would) when ``name == bad``."""
    time.sleep(delay)
    if name == bad:
        os._exit(3)
    return name.upper()


def raise_value_error(message: str) -> None:
    raise ValueError(message)
