"""Reading the process tree from /proc, for the tests that kill a parent and look for orphans; a command
stopped by SIGTERM once it gets somewhere."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

HAVE_PROC = Path("/proc/self/stat").exists()


def _stat_fields(pid: int | str) -> list[str] | None:
    """Fields 3 onward of /proc/PID/stat (state, ppid, ...), or None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    return stat[stat.rindex(")") + 2 :].split()


def alive(pids: set[int]) -> set[int]:
    """The processes of ``pids`` that still run (zombies are dead, merely not reaped yet)."""
    return {p for p in pids if (f := _stat_fields(p)) is not None and f[0] != "Z"}


def descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid``."""
    parent_of: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (f := _stat_fields(entry.name)) is not None and f[0] != "Z":
            parent_of[int(entry.name)] = int(f[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parent_of.items() if pp in frontier} - found
        found |= frontier
    return found


def stopped(args: list[str], ready: Callable[[int], bool]) -> tuple[int, str]:
    """Run ``robojudge args``, send it SIGTERM once ``ready(pid)``, and return its status and output."""
    status, out, _ = _stop(args, ready, apart=False)
    return status, out


def stopped_apart(args: list[str], ready: Callable[[int], bool]) -> tuple[int, str, str]:
    """As :func:`stopped`, with what the command printed on stdout and on stderr apart."""
    return _stop(args, ready, apart=True)


def _stop(args: list[str], ready: Callable[[int], bool], apart: bool) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "robojudge", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE if apart else subprocess.STDOUT, text=True)
    lines: list[str] = []
    errors: list[str] = []
    readers = [threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)]
    if apart:
        readers.append(threading.Thread(target=lambda: errors.extend(proc.stderr or ()), daemon=True))
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + 120
    while not ready(proc.pid):
        assert proc.poll() is None, f"it ended first: {''.join(lines + errors)}"
        assert time.monotonic() < deadline, "never got there"
        time.sleep(0.01)
    # Again each second until it says so, as a user presses Ctrl-C again: a KeyboardInterrupt raised while
    # Python runs a finalizer or a weakref callback (SQLAlchemy has some) is printed as ignored, and the
    # work goes on. Not once it has: a signal while the interpreter shuts down ends it by the signal.
    while proc.poll() is None and time.monotonic() < deadline:
        if not any("interrupted" in line for line in lines + errors):
            proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
    proc.kill()
    proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    return proc.returncode, "".join(lines), "".join(errors)
