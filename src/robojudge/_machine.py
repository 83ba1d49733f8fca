"""What this process may use of the machine: its CPUs and its control group's limits.

``os.cpu_count()`` counts the machine's CPUs, not the ones a process may run on. A SLURM job given
4 of a node's 128 cores (a cpuset), ``taskset``, or a container started with ``--cpus=2`` (a CPU
quota) all leave it at 128; a pool sized from it, or OpenCV told to start a thread per CPU, then
runs tens of threads on a few cores, which wait on each other. :func:`usable_cpus` counts what the
process may use: its CPU affinity, capped by the quota of its control group (v1 or v2).

:func:`cgroup_files` finds a controller's files for this process, for the memory room of
:mod:`robojudge.video._memory` as for the CPU quota here. Stdlib only, so every layer can use it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = ["cgroup_files", "cpu_quota", "usable_cpus"]

PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_files(v1_controller: str, proc_cgroup: Path = PROC_CGROUP,
                 root: Path = CGROUP_ROOT) -> list[tuple[str, list[Path]]]:
    """The folders that may hold this process's control-group files, for each hierarchy it is in:
    ``("v2", [...])`` for the unified hierarchy, ``("v1", [...])`` for the v1 hierarchy of
    ``v1_controller`` (``"memory"``, ``"cpu"``). The process's own group comes first, then the
    mount's root, which in a container is often the process's group itself. Empty when
    ``proc_cgroup`` cannot be read (not Linux)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, where = parts
        relative = where.lstrip("/")
        if controllers == "":  # v2: one unified hierarchy
            found.append(("v2", [root / relative, root]))
        elif v1_controller in controllers.split(","):
            mount = root / controllers  # v1 mounts e.g. cpu,cpuacct together (with cpu a link to it)
            base = mount if mount.exists() else root / v1_controller
            found.append(("v1", [base / relative, base]))
    return found


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cpu_quota(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> float | None:
    """CPUs' worth of time this process's control group may use (``docker --cpus=2``: 2.0), the
    smallest over its hierarchies; None without a quota or where none can be read."""
    quotas = []
    for version, folders in cgroup_files("cpu", proc_cgroup, root):
        for folder in folders:
            if version == "v2":
                text = _read(folder / "cpu.max")  # "max 100000" or "200000 100000"
                if text is None:
                    continue
                parts = text.split()
                if len(parts) == 2 and parts[0] != "max":
                    try:
                        quota, period = int(parts[0]), int(parts[1])
                    except ValueError:
                        break
                    if quota > 0 and period > 0:
                        quotas.append(quota / period)
                break
            quota_text, period_text = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
            if quota_text is None or period_text is None:
                continue
            try:
                quota, period = int(quota_text), int(period_text)
            except ValueError:
                break
            if quota > 0 and period > 0:  # -1: no quota
                quotas.append(quota / period)
            break
    return min(quotas) if quotas else None


def usable_cpus(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> int:
    """CPUs this process may keep busy: those it may run on (its affinity), capped by its control
    group's CPU quota rounded up; at least 1.

    >>> 1 <= usable_cpus() <= (os.cpu_count() or 1)
    True
    """
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        n = os.cpu_count() or 1
    quota = cpu_quota(proc_cgroup, root)
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)
