"""Errors a metric raises for inputs it cannot score."""

from __future__ import annotations

from typing import Any


class MetricInputError(ValueError):
    """The item is valid but this metric cannot score it (too few frames, no reference, ...).

    The runner records it as a failed result with this message, like a decoding error.
    """


class Unmeasurable(MetricInputError):
    """The item's files are readable but give this metric nothing to measure.

    One frame, a video in which nothing moves, frames that show nothing of each other, a reference
    that covers too little of the video: a value computed anyway would be whatever an empty
    measurement happens to give (often the best one). :meth:`MetricSpec.compute
    <robojudge.metrics.MetricSpec.compute>` turns this into an unscored :class:`Score` (NaN) whose
    details hold ``unscored_reason`` (the message) and the coverage facts passed as ``details``.
    """

    def __init__(self, reason: str, **details: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.details = details


class MetricResultError(TypeError):
    """A metric's function returned something other than a :class:`~robojudge.metrics.Score` (a bare
    float, ``None``): a bug in the metric, which the runner records as a failed result with this
    message, as when the metric raises."""
