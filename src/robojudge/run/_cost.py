"""What scoring an item costs: its size, how a large item's metrics are split into tasks, and how
long the rest of a run will take, from what the finished results measured.

An item's size is the frames x pixels of its main video, read from the container by
:func:`robojudge.video.probe_video` (no decoding). Metric time grows with it, from a fixed part, up
to what a metric reads (some read a capped number of frames), so a line per metric fitted on the
first items' seconds gives an estimate for the rest (:class:`CostModel`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel

from robojudge.suite import Item
from robojudge.video import VideoError, probe_video

SPLIT_ABOVE = 20.0
"""Millions of frame-pixels (a 4-second 720p clip at 16 fps is 59) above which an item's metrics
are split into one task per sampling, so that several workers share a long video."""

SETTLED_ROWS = 3
"""Items each outstanding metric is measured on (once it is measured at all) before a run's estimate
is shown. One item can mislead: on 67 real clips the first was a frozen copy, whose flow metrics took
a fraction of a moving clip's time, and the estimate made from it alone was half the run's time."""

# Config fields that decide which frames a metric decodes, and which optical flow it computes on
# them. Metrics that agree on all of these stay in one task, where they share one decode and one
# flow through the frame cache (and the flow memo that lives with it). A flow metric and a metric
# that reads the same frames without flow may land in different tasks: that costs a second decode,
# well under 1% of the set's time on the benchmark clips (0.1-0.3 s of decoding against 45-70 s
# of metrics), and keeps the expensive flow group from carrying the cheap metrics with it.
SAMPLING_FIELDS = ("fps", "max_frames", "size", "width", "height", "max_side", "spread", "gray", "stride",
                   "profile", "resample")
FLOW_FIELDS = ("estimator", "pyr_scale", "levels", "winsize", "iterations", "poly_n", "poly_sigma")


def item_size(item: Item) -> float | None:
    """Millions of frame-pixels of ``item``'s video; None when it has none or it cannot be probed
    (the metrics that read it will say why)."""
    if not item.video:
        return None
    try:
        info = probe_video(item.video)
    except (VideoError, OSError):
        return None
    frames = info.frames
    if not frames:
        return None
    return frames * info.width * info.height / 1e6


def sampling_key(config: BaseModel) -> str:
    """The sampling and flow fields of a metric config as one string (equal strings: the same
    decode and the same flow)."""
    values = config.model_dump(mode="json")
    return json.dumps({k: values[k] for k in (*SAMPLING_FIELDS, *FLOW_FIELDS) if k in values},
                      sort_keys=True)


def sampling_groups(configs: Sequence[BaseModel]) -> list[tuple[int, ...]]:
    """Indices of ``configs`` grouped by :func:`sampling_key`, groups in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, cfg in enumerate(configs):
        groups.setdefault(sampling_key(cfg), []).append(i)
    return [tuple(g) for g in groups.values()]


@dataclass
class _Rate:
    seconds: float = 0.0
    rows: int = 0
    # sums over the rows whose item had a size x (millions of frame-pixels) and took y seconds
    n: int = 0
    x: float = 0.0
    y: float = 0.0
    xx: float = 0.0
    xy: float = 0.0
    # the first MAX_POINTS sized rows, (size, seconds), to choose between the line and proportion
    points: list[tuple[float, float]] = field(default_factory=list)


MAX_POINTS = 1000
"""Sized rows a metric keeps to choose its cost's shape (the sums behind the line keep them all)."""


@dataclass
class CostModel:
    """Each metric's seconds per row as ``fixed + per_size x size`` (millions of frame-pixels),
    fitted on finished rows.

    A metric's time does not always grow with the whole video: one that reads at most 16 frames, or
    a few per second up to a cap, costs about the same on a 3-second and a 90-second clip, and every
    metric has a fixed part (opening the file, a model's first call). Scaling the first, short
    items' seconds per frame-pixel up to the long ones predicted hours for a half-hour run. So once
    a metric has rows of at least two sizes, its cost is the least-squares line through them, kept
    non-negative (a negative slope means size does not matter there: the mean; a negative fixed part
    means the cost is proportional: the line through the origin). With one size seen, the cost is
    taken as proportional to size. A pair whose item has no size costs its metric's mean seconds per
    row; a metric not measured yet costs the mean line of the measured ones.

    A few cheap outliers bend that line: a frozen clip is large, and its flow metrics cost almost
    nothing (optical flow between equal frames), so on real clips whose cost was proportional to
    size, two frozen copies among the first items tipped the slope negative and the estimate was
    twice the time left. So from three sizes on, the line competes with proportion at the median of
    the rows' seconds per million frame-pixels, and the one whose median relative error on the
    measured rows is smaller is used.
    """

    rates: dict[str, _Rate] = field(default_factory=dict)

    def add(self, metric: str, size: float | None, seconds: float) -> None:
        rate = self.rates.setdefault(metric, _Rate())
        rate.seconds += seconds
        rate.rows += 1
        if size:
            rate.n += 1
            rate.x += size
            rate.y += seconds
            rate.xx += size * size
            rate.xy += size * seconds
            if len(rate.points) < MAX_POINTS:
                rate.points.append((size, seconds))

    @staticmethod
    def _line(rate: _Rate) -> tuple[float, float] | None:
        """``(fixed seconds, seconds per million frame-pixels)`` of a metric's sized rows."""
        if rate.n == 0 or rate.x <= 0:
            return None
        mx, my = rate.x / rate.n, rate.y / rate.n
        var = rate.xx / rate.n - mx * mx
        if rate.n < 2 or var <= 1e-9 * mx * mx:  # one size: proportional
            return 0.0, rate.y / rate.x
        slope = (rate.xy / rate.n - mx * my) / var
        if slope <= 0:
            line = my, 0.0
        else:
            fixed = my - slope * mx
            line = (0.0, rate.xy / rate.xx) if fixed < 0 else (fixed, slope)
        if rate.n < 3:
            return line
        size = np.array([p[0] for p in rate.points])
        secs = np.array([p[1] for p in rate.points])
        ratio = (0.0, float(np.median(secs / size)))

        def error(fit: tuple[float, float]) -> float:
            return float(np.median(np.abs(fit[0] + fit[1] * size - secs) / np.maximum(secs, 1e-3)))

        return ratio if error(ratio) < error(line) else line

    def _fit(self, metric: str) -> tuple[float, float] | None:
        rate = self.rates.get(metric)
        if rate is not None:
            return self._line(rate)
        lines = [line for r in self.rates.values() if (line := self._line(r)) is not None]
        if not lines:
            return None
        return sum(a for a, _ in lines) / len(lines), sum(b for _, b in lines) / len(lines)

    def _per_row(self, metric: str) -> float | None:
        rate = self.rates.get(metric)
        if rate is not None:
            return rate.seconds / rate.rows
        measured = [r.seconds / r.rows for r in self.rates.values() if r.rows]
        return sum(measured) / len(measured) if measured else None

    def seconds(self, metric: str, size: float | None) -> float | None:
        """Expected worker seconds of ``metric`` on an item of ``size``; None before any measurement."""
        fit = self._fit(metric) if size else None
        if fit is not None and size:
            return fit[0] + fit[1] * size
        return self._per_row(metric)

    def settled(self, left: Outstanding, rows: int = SETTLED_ROWS) -> bool:
        """Whether every measured metric with outstanding pairs was measured on ``rows`` results (on
        all of its results, when the run has fewer). A metric not measured at all does not hold the
        estimate back: it is counted at the others' mean line and named (:meth:`unmeasured`), as the
        rows that would measure it may come last. False while nothing is measured."""
        if left.by_metric and not self.rates:
            return False
        for metric, (_, sized, unsized) in left.by_metric.items():
            rate = self.rates.get(metric)
            if rate is not None and rate.rows < min(rows, rate.rows + sized + unsized):
                return False
        return True

    def unmeasured(self, left: Outstanding) -> list[str]:
        """The metrics with outstanding pairs and no measured row, sorted."""
        return sorted(m for m in left.by_metric if m not in self.rates)

    def remaining(self, left: Outstanding, workers: int, overhead_s: float = 0.0) -> float | None:
        """Wall seconds the outstanding pairs still need on ``workers`` busy workers (None: nothing
        measured yet), with ``overhead_s`` more wall seconds per pair (:meth:`RunPace.overhead`)."""
        total = 0.0
        pairs = 0
        for metric, (size, sized, unsized) in left.by_metric.items():
            fit, per_row = self._fit(metric), self._per_row(metric)
            if per_row is None:
                return None
            total += fit[0] * sized + fit[1] * size if fit is not None else per_row * sized
            total += per_row * unsized
            pairs += sized + unsized
        return total / max(1, workers) + overhead_s * pairs


#: Results per worker a run finishes before :class:`RunPace` counts its wall time beyond the metrics.
PACE_RESULTS = 3


@dataclass
class RunPace:
    """The wall time a run spends beyond what its metrics measure, per finished result.

    A metric's ``duration_s`` leaves out starting worker processes, a pool rebuilt after a crash and the
    crashed item computed again alone in child processes (about 12 s a crash on a busy 2-core machine),
    sending tasks and storing rows. A run spending its time there printed "about 0 s left" for 6 minutes,
    and a healthy run of a cheap metric was estimated at a fifth of the time it had left. So the estimate
    adds, per result left, the wall seconds each finished result took beyond its metrics' seconds shared
    among the workers (the wall-clock throughput that progress bars use, less what the cost model already
    predicts per item size).

    The clock starts at the first finished task (:meth:`first`), not when the run starts: starting the
    worker processes is paid once, and counted per result over the first few results it made a run of
    4,000 results look hours long with minutes left (review rev9). Nor does it count before
    :data:`PACE_RESULTS` results per worker are in, whose wall time says little.

    Args:
        started: When the clock started (:meth:`first`), on the clock the caller passes to
            :meth:`overhead`; None until then.
    """

    started: float | None = None
    results: int = 0
    metric_seconds: float = 0.0

    def first(self, now: float) -> bool:
        """Start the clock at ``now`` if it has not started; whether it did (the caller's task, whose time
        the start-up holds, is then not counted)."""
        if self.started is not None:
            return False
        self.started = now
        return True

    def add(self, results: int, metric_seconds: float) -> None:
        """Count finished results and the seconds their metrics measured."""
        self.results += results
        self.metric_seconds += metric_seconds

    def overhead(self, now: float, workers: int) -> float:
        """Wall seconds per finished result beyond its metrics' share of ``workers`` (0 before
        :data:`PACE_RESULTS` results per worker)."""
        if self.started is None or self.results < PACE_RESULTS * max(1, workers):
            return 0.0
        beyond = (now - self.started) - self.metric_seconds / max(1, workers)
        return max(0.0, beyond) / self.results


@dataclass
class Outstanding:
    """The (metric, item size) pairs not finished yet, summed per metric: total size of the sized
    ones, how many are sized, how many are not."""

    by_metric: dict[str, tuple[float, int, int]] = field(default_factory=dict)

    def add(self, metric: str, size: float | None, sign: int = 1) -> None:
        total, sized, unsized = self.by_metric.get(metric, (0.0, 0, 0))
        if size:
            total, sized = total + sign * size, sized + sign
        else:
            unsized += sign
        if sized or unsized:
            self.by_metric[metric] = (max(0.0, total) if sized else 0.0, sized, unsized)
        else:
            self.by_metric.pop(metric, None)

    def remove(self, metric: str, size: float | None) -> None:
        self.add(metric, size, -1)


def top_seconds(seconds: dict[str, float], n: int = 5) -> list[tuple[str, float]]:
    """The ``n`` largest entries of a metric -> seconds map, largest first (ties by name)."""
    return sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def describe(value: Any) -> str:
    """Seconds as a short human duration: 42 s, 3.5 min, 2.1 h."""
    s = float(value)
    if s < 90:
        return f"{s:.0f} s"
    if s < 90 * 60:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"
