"""``terminate_as_interrupt``: SIGTERM and SIGHUP stop the main process as Ctrl-C does (SIGHUP not under
``nohup``)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

SCRIPT = """
import os, signal, time
from robojudge._lifeline import terminate_as_interrupt
terminate_as_interrupt()
try:
    os.kill(os.getpid(), signal.SIG{name})
    time.sleep(0.5)
    print("went on")
except KeyboardInterrupt:
    print("interrupted")
"""


def _ignore_hangup() -> None:  # what `nohup` does before it starts the command
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _default_hangup() -> None:  # as from a terminal, whether or not the tests themselves run under nohup
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize(("name", "nohup", "said"), [
    ("TERM", False, "interrupted"),
    ("HUP", False, "interrupted"),  # a closed terminal, a dropped ssh session
    ("HUP", True, "went on"),  # under nohup the run is meant to outlive its terminal
])
def test_stop_signals_raise_keyboard_interrupt(name: str, nohup: bool, said: str) -> None:
    res = subprocess.run([sys.executable, "-c", SCRIPT.format(name=name)], capture_output=True, text=True,
                         timeout=60, preexec_fn=_ignore_hangup if nohup else _default_hangup)
    # Before, SIGHUP killed the process outright (exit status -1): no summary, no "interrupted" line,
    # and the workers' semaphores leaked.
    assert (res.returncode, res.stdout.strip()) == (0, said), res.stderr
