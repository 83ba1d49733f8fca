"""Where a task runs on a Ray cluster: the CPUs, GPUs and memory its metrics declare.

Pure functions over the metric registry's :class:`~robojudge.metrics._registry.Resources`, kept
apart from :mod:`robojudge.run._ray` so they can be read and tested without Ray installed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from robojudge.metrics import MetricSpec, Provider


@dataclass(frozen=True)
class Placement:
    """What one Ray worker reserves for a task, and whether it is a long-lived actor.

    ``actor``: the task goes to an actor that stays up between tasks, so the networks a model
    metric loads (kept by :mod:`robojudge.models`' cache in the worker process) are loaded once per
    actor, not once per task. Tasks of equal placement share a pool of actors.
    """

    cpus: float = 1.0
    gpus: float = 0.0
    memory_mb: int = 0
    actor: bool = False

    def options(self) -> dict[str, Any]:
        """The placement as Ray ``.options()`` keywords."""
        out: dict[str, Any] = {"num_cpus": self.cpus, "num_gpus": self.gpus}
        if self.memory_mb:
            out["memory"] = self.memory_mb * 2**20
        return out

    def describe(self) -> str:
        mem = f", {self.memory_mb} MiB" if self.memory_mb else ""
        return f"{self.cpus:g} CPU, {self.gpus:g} GPU{mem}"


def model_backed(spec: MetricSpec[Any]) -> bool:
    """Whether a metric loads a network (it then runs in an actor that keeps it)."""
    return spec.provider is Provider.model or bool(spec.weights)


def metric_placement(spec: MetricSpec[Any], cluster_gpus: float) -> Placement:
    """A metric's declared resources, or the defaults: one CPU; a model metric one GPU when the
    cluster has any (the networks run on a visible GPU), else none."""
    actor = model_backed(spec)
    declared = spec.resources
    if declared is not None:
        return Placement(declared.cpus, declared.gpus, declared.memory_mb, actor)
    return Placement(gpus=1.0 if actor and cluster_gpus >= 1 else 0.0, actor=actor)


def combine(placements: Iterable[Placement]) -> Placement:
    """What a task running several metrics one after another needs: the most of each resource."""
    ps = list(placements)
    if not ps:
        return Placement()
    return Placement(
        cpus=max(p.cpus for p in ps),
        gpus=max(p.gpus for p in ps),
        memory_mb=max(p.memory_mb for p in ps),
        actor=any(p.actor for p in ps),
    )


def task_placement(task: object, cluster_gpus: float) -> Placement:
    """A task's placement: a scoring :class:`~robojudge.run._score.Task`'s metrics' combined
    resources, a set-metric task's metric's (it has a ``spec``); anything else one CPU."""
    spec = getattr(task, "spec", None)
    if isinstance(spec, MetricSpec):
        return metric_placement(spec, cluster_gpus)
    requests = getattr(task, "requests", None)
    if not requests:
        return Placement()
    return combine(metric_placement(r.spec, cluster_gpus) for r in requests)


def check_fits(placement: Placement, cluster: dict[str, float], what: str) -> None:
    """Raise ``ValueError`` when no node of the cluster could ever hold ``placement``: Ray would
    keep such a task pending for ever instead of failing it."""
    for name, need in (("CPU", placement.cpus), ("GPU", placement.gpus)):
        have = cluster.get(name, 0.0)
        if need > have:
            raise ValueError(f"{what} needs {need:g} {name} per worker, the Ray cluster has {have:g}")
    if placement.memory_mb and placement.memory_mb * 2**20 > cluster.get("memory", math.inf):
        raise ValueError(f"{what} needs {placement.memory_mb} MiB per worker, more than the Ray cluster has")
