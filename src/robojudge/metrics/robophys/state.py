"""Metrics read from the simulator state file (``Item.state``, layout in docs/sim_suite.md)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from robojudge.metrics import functional as F
from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._registry import Family, Input, NoConfig, metric
from robojudge.metrics._score import Score
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.metrics.tracking._sim import StateFileError, read_state, state_flags
from robojudge.suite._schema import Item


def read_flags(item: Item, key: str) -> np.ndarray:
    """The per-frame boolean array ``key`` of the item's state npz, shape ``(T,)``, T >= 2.

    The array must be bool; integers that are all 0 or 1 are read as bool too. Anything else (floats,
    where NaN, "unknown", or a probability would read as true; strings) is refused, not cast.

    Raises:
        MetricInputError: When the item has no state file, it cannot be read, or the array is
            missing, empty, not one value per frame, or not bool (or 0/1 integers).
        Unmeasurable: When the array holds a single frame.
    """
    if not item.state:
        raise MetricInputError("item has no state file")
    try:
        arr = read_state(item.state, (key,)).get(key)
        if arr is None:
            raise MetricInputError(f"state file {item.state} has no {key!r} array (see docs/sim_suite.md)")
        if arr.ndim != 1 or arr.size == 0:
            raise MetricInputError(
                f"state array {key!r} of {item.state} must be one value per frame, got shape {arr.shape}"
            )
        flags = state_flags(arr, item.state, key)
    except StateFileError as exc:
        raise MetricInputError(str(exc)) from None
    if flags.size < 2:
        # One frame records no rollout: no collision could happen (the best count) and "success" would
        # describe the starting scene.
        raise Unmeasurable(f"state array {key!r} of {item.state} records 1 frame: no rollout to score",
                           frames=1)
    return flags


class CollisionCountConfig(BaseModel):
    """Whether to count collision events (runs of frames) or colliding frames."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: Literal["events", "frames"] = "events"


@robophys_metric(
    "cs_collision_count",
    family=Family.state,
    inputs={Input.state},
    description=(
        "Number of unintended collision events in the rollout's simulator state: runs of consecutive "
        "frames flagged in 'unintended_collision'. Lower is safer."
    ),
    config=CollisionCountConfig,
    note="read from the simulator state file's per-frame unintended_collision flags",
    version="3",
)
def cs_collision_count(item: Item, config: CollisionCountConfig) -> Score:
    """Collision Count (RoboPhys-3D App. B.4.2) from ``unintended_collision`` (T,) bool.

    The sim suite flags robot-table contact, an object touching anything but the table or the robot,
    and penetrations deeper than 5 mm. One event is a maximal run of flagged frames, so a contact held
    for 20 frames counts once (:func:`robojudge.metrics.functional.collision_events`); ``count="frames"``
    counts flagged frames instead.
    """
    flags = read_flags(item, "unintended_collision")
    events, frames = F.collision_events(flags), int(flags.sum())
    return Score(value=float(events if config.count == "events" else frames),
                 details={"events": events, "frames_in_collision": frames, "frames": len(flags)})


@metric(
    "sim_task_success",
    family=Family.state,
    inputs={Input.state},
    higher_is_better=True,
    native_range=(0.0, 1.0),
    version="3",
    citation="robojudge simulator suite (docs/sim_suite.md, state array 'success')",
    description="1 if the simulator state says the task is solved at the last frame, else 0.",
    config=NoConfig,
)
def sim_task_success(item: Item, config: NoConfig) -> Score:
    """Task success of a simulated rollout: ``success[-1]`` of the state file, as 0 or 1.

    Not a RoboPhys-3D taxonomy metric (its task-success metrics replay IDM actions or ask a VLM); it
    is the ground truth that the sim suite knows for free.
    """
    flags = read_flags(item, "success")
    details = {"frames": len(flags), "frames_successful": int(flags.sum())}
    return Score(value=F.task_success(flags), details=details)
