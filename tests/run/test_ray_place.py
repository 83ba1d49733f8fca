"""What a task reserves on a Ray cluster: the metrics' declared resources or the defaults (no Ray needed)."""

from __future__ import annotations

import _toy_metrics  # noqa: F401
import pytest

from robojudge.metrics import get_metric
from robojudge.metrics._registry import Resources
from robojudge.run import build_requests
from robojudge.run._ray_place import Placement, check_fits, combine, metric_placement, task_placement
from robojudge.run._score import Task
from robojudge.suite import Item

pytestmark = pytest.mark.usefixtures("ray_toy")  # its metrics, registered for this module only


def test_a_declared_metric_gets_what_it_declares_and_runs_in_an_actor() -> None:
    p = metric_placement(get_metric("test_ray_model"), cluster_gpus=4)
    assert p == Placement(cpus=1, gpus=0, memory_mb=64, actor=True)
    assert p.options() == {"num_cpus": 1, "num_gpus": 0, "memory": 64 * 2**20}


def test_defaults_one_cpu_and_a_gpu_for_a_model_metric_only_where_there_is_one() -> None:
    cpu = get_metric("test_slow")
    model = get_metric("aq_clip_iqa")  # a built-in model metric without a declaration
    assert model.resources is None and model.weights
    assert metric_placement(cpu, cluster_gpus=2) == Placement()
    assert metric_placement(model, cluster_gpus=2) == Placement(gpus=1, actor=True)
    assert metric_placement(model, cluster_gpus=0) == Placement(actor=True)


def test_a_task_reserves_the_most_its_metrics_need() -> None:
    assert combine([Placement(cpus=2), Placement(gpus=0.5, memory_mb=100, actor=True)]) == Placement(
        cpus=2, gpus=0.5, memory_mb=100, actor=True)
    item = Item(item_id="a", video="/v.mp4", instruction="x")
    task = Task(item, tuple(build_requests(["test_slow", "test_ray_model"])))
    assert task_placement(task, 0) == Placement(memory_mb=64, actor=True)
    assert task_placement(("not", "a task"), 0) == Placement()


def test_a_task_no_node_can_hold_fails_instead_of_waiting_for_ever() -> None:
    check_fits(Placement(cpus=2, gpus=1), {"CPU": 2, "GPU": 1}, "metric m")
    with pytest.raises(ValueError, match="metric m needs 1 GPU per worker, the Ray cluster has 0"):
        check_fits(Placement(gpus=1), {"CPU": 8}, "metric m")
    with pytest.raises(ValueError, match="needs 4096 MiB"):
        check_fits(Placement(memory_mb=4096), {"CPU": 8, "memory": 2**30}, "metric m")


def test_resources_are_checked_when_a_metric_registers() -> None:
    with pytest.raises(ValueError):
        Resources(cpus=0)
    with pytest.raises(ValueError):
        Resources(gpus=-1)
