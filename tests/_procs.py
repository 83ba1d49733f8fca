"""Reading the process tree from /proc, for the tests that kill a parent and look for orphans."""

from __future__ import annotations

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
