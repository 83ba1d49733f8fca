"""Ray workers run OpenCV on the CPUs their task holds (1 for a plain task), not on every CPU."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from robojudge.run._ray import RayExecutor

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def head() -> Iterator[None]:
    env = {"PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": env}, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_a_ray_task_runs_opencv_on_its_cpu(head: None) -> None:
    from _cv_threads import opencv_threads

    ex = RayExecutor("local", workers=2)
    try:
        got = {r for _, r in ex.map_unordered(opencv_threads, range(4), lambda t, why: -1)}
    finally:
        ex.shutdown()
    assert got == {1}
