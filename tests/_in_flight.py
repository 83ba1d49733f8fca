"""Notes in flight (``ResultStore.note_in_flight``) written by other processes, for the crash-guard tests.

A note names the process that wrote it, and a run takes only the note of a process that has ended for a
crash or a kill: one written by the test process itself is a run still going on. These helpers write
notes from a child process that ends (a run killed while computing) or that keeps running until the
test is done with it (a run on this host still computing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

_NOTE = """
import json, sys
from robojudge.store import ResultStore
with ResultStore(sys.argv[1]) as store:
    for item_id, metrics in json.loads(sys.argv[2]).items():
        store.note_in_flight(item_id, metrics, queued=sys.argv[4] == "queued")
print("noted", flush=True)
if sys.argv[3] == "wait":
    sys.stdin.read()  # until the test closes stdin, or kills it
"""

Notes = Mapping[str, Sequence[str]]


def _command(url: str | os.PathLike[str], notes: Notes, wait: bool, queued: bool = False) -> list[str]:
    return [sys.executable, "-c", _NOTE, os.fspath(url), json.dumps({k: list(v) for k, v in notes.items()}),
            "wait" if wait else "end", "queued" if queued else "computed"]


def note_from_ended_process(url: str | os.PathLike[str], notes: Notes, *, queued: bool = False) -> None:
    """Note each item of ``notes`` (with its metrics) in the store at ``url`` from a child process that then
    ends, as a run killed while computing them leaves them (``queued``: as a pool's driver killed while
    its workers computed them leaves them)."""
    subprocess.run(_command(url, notes, wait=False, queued=queued), check=True, timeout=120,
                   capture_output=True)


@contextmanager
def noting_process(
    url: str | os.PathLike[str], notes: Notes, *, queued: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """A child process that notes ``notes`` in the store at ``url`` and runs on (a run computing them
    now; ``queued``: a pool run whose workers compute them) until it is killed (``proc.kill();
    proc.wait()``) or the block ends."""
    proc = subprocess.Popen(_command(url, notes, wait=True, queued=queued), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "noted", proc.stderr.read() if proc.stderr else line
        yield proc
    finally:
        proc.kill()
        proc.communicate(timeout=60)


def end(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` and wait for it (a reaped process: no longer in ``/proc``)."""
    proc.kill()
    proc.communicate(timeout=60)
