"""The records the annotation service hands out: nothing in them names a file or a generator."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from robojudge.annotate._protocol import RUBRIC, LabelValues, Rubric


@dataclass(frozen=True)
class Annotator:
    id: int
    username: str
    role: str
    active: bool = True


@dataclass(frozen=True)
class Invite:
    """A new annotator; ``token`` is the one-time invite secret when no password was set."""

    username: str
    role: str
    token: str | None


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    name: str
    suite_path: str
    segment_s: float | None
    pass_threshold: float
    n_items: int


@dataclass(frozen=True)
class QueueEntry:
    assignment_id: str
    kind: str
    item_id: str
    position: int
    status: str
    round: str | None
    project: str


@dataclass(frozen=True)
class MediaRef:
    media_id: str
    view: str | None
    kind: str


@dataclass(frozen=True)
class SegmentSpan:
    index: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class ReferenceExample:
    """A rated example shown beside every task: its videos, the axis, the score it deserves and why."""

    axis: str
    score: int
    text: str
    media: list[MediaRef]


@dataclass(frozen=True)
class LabelVersion:
    version: int
    status: str
    values: LabelValues
    author: str
    created_at: datetime
    changed: tuple[str, ...]
    from_draft: Mapping[str, bool] | None = None
    kind: str = "label"


@dataclass(frozen=True)
class TaskPage:
    assignment_id: str
    kind: str
    project: str
    item_id: str
    stage: str
    instruction: str | None
    media: list[MediaRef]
    initial_frame: MediaRef | None
    fps: float | None
    duration_s: float | None
    segments: list[SegmentSpan]
    current: LabelVersion | None
    version: int
    submitted: bool
    model_draft: LabelValues | None
    others: list[LabelVersion] = field(default_factory=list)
    rubric: Rubric = RUBRIC
    examples: list[ReferenceExample] = field(default_factory=list)


@dataclass(frozen=True)
class RoundInfo:
    """A training round as listed for navigation."""

    project: str
    name: str
    closed: bool
    threshold: float


@dataclass(frozen=True)
class AuditEvent:
    at: datetime
    actor: str | None
    action: str
    detail: Mapping[str, Any] | None
    remote: str | None
