"""Metrics for the Ray tests; Ray workers import this module through ROBOJUDGE_PLUGINS.

Each records, before it works, which process started on which item (a file ``ITEM.PID`` in its
``marks`` folder), so a test can kill the worker of an item that is in flight and check afterwards
that the item was tried again elsewhere.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from robojudge.metrics import Score, metric
from robojudge.metrics._registry import Resources
from robojudge.metrics._sets import SetScores, set_metric

COMMON = dict(
    inputs={"instruction"},
    higher_is_better=True,
    native_range=(None, None),
    version="1",
    citation="robojudge test suite",
    description="test-only metric",
)


class MarkConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    marks: str = ""
    seconds: float = 0.0


def _marked(item, config: MarkConfig) -> Score:
    if config.marks:
        Path(config.marks, f"{item.item_id}.{os.getpid()}").touch()
    time.sleep(config.seconds)
    # A value that depends on the item only, so a local run and a Ray run must agree.
    return Score(value=float(sum(map(ord, item.item_id)) % 97), details={"pid": os.getpid()})


@metric("test_ray_cpu", family="baseline", config=MarkConfig, **COMMON)
def ray_cpu(item, config: MarkConfig) -> Score:
    return _marked(item, config)


@metric("test_ray_model", family="baseline", config=MarkConfig, provider="model",
        resources=Resources(cpus=1, memory_mb=64), **COMMON)
def ray_model(item, config: MarkConfig) -> Score:
    return _marked(item, config)


@metric("test_ray_model_crash", family="baseline", provider="model",
        resources=Resources(cpus=1, memory_mb=64), **COMMON)
def ray_model_crash(item, config) -> Score:
    """A model-backed metric (it runs on an actor) that kills its worker on an item named ``crash...``."""
    if item.item_id.startswith("crash"):
        os._exit(3)
    return Score(value=1.0, details={"pid": os.getpid()})


def raises_on_two(task: int) -> int:
    """Executor test task: raises for 2 (an exception its own function does not catch)."""
    if task == 2:
        raise RuntimeError("not caught by its function")
    return task * 10


@set_metric("test_ray_set", output="group", family="baseline", inputs={"instruction"}, provider="computed",
            higher_is_better=True, native_range=(0, None), citation="robojudge test suite",
            description="test-only: the number of items in the group")
def ray_set(group, config) -> SetScores:
    return SetScores(group=Score(value=float(len(group.items)), details={"pid": os.getpid()}))


def pid_after(task: int) -> tuple[int, int]:
    """Executor test task: the task and the process that ran it, after a short wait."""
    time.sleep(0.2)
    return task, os.getpid()
