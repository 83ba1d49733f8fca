"""The CPUs a process may use: its affinity capped by its control group's quota, not the machine's count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from robojudge._machine import cgroup_files, cpu_quota, usable_cpus


def test_cpu_quota_v2(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    root = tmp_path / "sys"
    proc.write_text("0::/docker/abc\n")
    (root / "docker" / "abc").mkdir(parents=True)
    (root / "docker" / "abc" / "cpu.max").write_text("250000 100000\n")  # docker --cpus=2.5
    assert cpu_quota(proc, root) == 2.5
    assert usable_cpus(proc, root) == min(3, len(os.sched_getaffinity(0)))
    (root / "docker" / "abc" / "cpu.max").write_text("max 100000\n")
    assert cpu_quota(proc, root) is None
    (root / "docker" / "abc" / "cpu.max").write_text("50000 100000\n")  # half a CPU: still one
    assert cpu_quota(proc, root) == 0.5 and usable_cpus(proc, root) == 1


def test_cpu_quota_v1_on_a_shared_mount(tmp_path: Path) -> None:
    # v1 mounts cpu and cpuacct together; the limit sits at the mount's root inside a container
    proc = tmp_path / "cgroup"
    root = tmp_path / "sys"
    proc.write_text("5:memory:/x\n4:cpu,cpuacct:/docker/abc\n")
    (root / "cpu,cpuacct").mkdir(parents=True)
    (root / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("100000\n")
    (root / "cpu,cpuacct" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu_quota(proc, root) == 1.0 and usable_cpus(proc, root) == 1
    (root / "cpu,cpuacct" / "cpu.cfs_quota_us").write_text("-1\n")  # v1's "no quota"
    assert cpu_quota(proc, root) is None
    assert cgroup_files("cpu", proc, root) == [
        ("v1", [root / "cpu,cpuacct" / "docker" / "abc", root / "cpu,cpuacct"])]


def test_nothing_readable_means_no_quota(tmp_path: Path) -> None:
    assert cpu_quota(tmp_path / "none", tmp_path) is None
    assert cgroup_files("cpu", tmp_path / "none", tmp_path) == []
    garbled = tmp_path / "cgroup"
    garbled.write_text("0::/\n")
    (tmp_path / "cpu.max").write_text("lots 100000\n")
    assert cpu_quota(garbled, tmp_path) is None
    assert usable_cpus(garbled, tmp_path) == len(os.sched_getaffinity(0))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin a process to one")
def test_a_process_pinned_to_one_cpu_sizes_its_threads_and_pools_to_it() -> None:
    # taskset or a SLURM cpuset: os.cpu_count() still counts the machine's CPUs
    code = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))});"
        "from robojudge._machine import usable_cpus;"
        "from robojudge.run._executor import cv_threads_per_worker;"
        "from robojudge.video._pool import default_decode_workers;"
        "print(os.cpu_count(), usable_cpus(), cv_threads_per_worker(1), default_decode_workers())"
    )
    env = {k: v for k, v in os.environ.items() if k != "ROBOJUDGE_DECODE_WORKERS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    machine, usable, threads, decoders = map(int, out.stdout.split())
    assert machine >= 2
    assert (usable, threads, decoders) == (1, 1, 1)
