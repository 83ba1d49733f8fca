"""What a Best-of-N selection ranks by (``--by``), read from the stored results, and the labels it is
checked against.

``--by`` is written as one of:

* ``judge:NAME`` or ``judge:NAME:AXIS`` -- a stored VLM judge's PA, IA or Overall (``(PA + IA) / 2``,
  the default); ``judge:NAME:RUBRIC`` for any other scored rubric, read as a stored metric;
* ``calibrated`` or ``calibrated:AXIS`` -- the metric-calibrated judge (held-out predictions of an
  ordinal model fit on the stored metrics, :func:`robojudge.report.calibrated_scores`; it needs labels);
* ``labels`` or ``labels:AXIS`` -- the labels themselves (the oracle: a check of the arithmetic);
* anything else -- a stored metric, by its id or its series label (``flow_smoothness``), oriented by
  the metric's direction so that the pick is always the best-looking rollout; ``metric:ID`` as
  ``leaderboard generators --scores`` spells it is read the same.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge.report import CALIBRATED_TOLERANCE, StoredSeries, calibrated_scores, judge_scores, label_scores
from robojudge.select._bon import FloatArray
from robojudge.store import ResultRow
from robojudge.suite import Item

AXES = ("pa", "ia", "overall")
"""The label axes: PA, IA and their mean."""


@dataclass(frozen=True)
class SelectionScores:
    """Per-item scores to pick by, aligned with the items, higher is better.

    Attributes:
        by: The source as written.
        described: What the scores are, for the summary.
        scores: One value per item (NaN where there is none).
        axis: The label axis the source scores (None for a metric).
        sign: -1 for a metric better lower (``scores`` are its values negated), else 1.
        tolerance: Scores closer than this tie (the calibrated judge's carry fitting noise; else 0).
    """

    by: str
    described: str
    scores: FloatArray
    axis: str | None
    sign: float = 1.0
    tolerance: float = 0.0


def _on_axis(per_axis: dict[str, FloatArray], axis: str) -> FloatArray:
    if axis == "overall":  # a rollout missing either axis has no Overall
        out: FloatArray = (per_axis["pa"] + per_axis["ia"]) / 2.0
        return out
    return per_axis[axis]


def _axis(spec: str, text: str) -> str:
    if text not in AXES:
        raise ValueError(f"--by {spec!r}: the axis must be one of {', '.join(AXES)}, got {text!r}")
    return text


def label_values(items: Sequence[Item], axis: str) -> FloatArray:
    """The items' labels on ``axis`` (``pa``, ``ia`` or ``overall``: their mean); NaN where absent."""
    return _on_axis(label_scores(items), _axis(axis, axis))


def selection_scores(
    by: str,
    rows: Sequence[ResultRow],
    items: Sequence[Item],
    *,
    higher_is_better: Callable[[str], bool] | None = None,
    orient: bool | None = None,
    n_folds: int = 5,
    alpha: float = 1.0,
    seed: int = DEFAULT_SEED,
    prediction: str = "expected",
) -> SelectionScores:
    """The scores ``by`` names (see the module docstring), aligned with ``items``.

    Args:
        by: The source.
        rows: Stored result rows.
        items: The suite's items.
        higher_is_better: A metric's direction (default :func:`robojudge.metric_info.direction`).
        orient: The direction of a stored metric the registry does not know (True: higher is better);
            refused for any other source.
        n_folds: Folds of the calibrated judge's cross-validation (groups: clips).
        alpha: Its L2 penalty.
        seed: Its fold seed.
        prediction: Its score, ``expected`` or ``class``.

    Raises:
        ValueError: An unknown source, judge or metric, a metric of unknown direction without
            ``orient``, ``orient`` with a source whose direction is known, or a source with nothing to
            read.
    """
    if higher_is_better is None:
        from robojudge.metric_info import direction

        higher_is_better = direction
    head, _, rest = by.partition(":")
    if head in ("labels", "calibrated"):
        _no_orient(by, orient, head)
        axis = _axis(by, rest or "overall")
        if head == "labels":
            return SelectionScores(by, f"labels ({axis})", label_values(items, axis), axis)
        from robojudge.metric_info import registry_config_key

        cal = calibrated_scores(rows, items, higher_is_better, n_folds=n_folds, alpha=alpha, seed=seed,
                                prediction=prediction, config_key=registry_config_key)
        folds = cal.folds["pa" if axis == "overall" else axis].n_folds  # (capped at the clips)
        older = f"; left out: {', '.join(cal.left_out)}" if cal.left_out else ""
        described = (f"metric-calibrated judge ({axis}; {len(cal.metrics)} metric features, {folds}-fold; "
                     f"scores within {CALIBRATED_TOLERANCE:g} tie{older})")
        return SelectionScores(by, described, _on_axis(cal.scores, axis), axis,
                               tolerance=CALIBRATED_TOLERANCE)
    if head == "judge":
        name, _, tail = rest.rpartition(":") if rest.count(":") else (rest, "", "")
        if not name:
            raise ValueError(f"--by {by!r}: write judge:NAME or judge:NAME:AXIS")
        if not tail or tail in AXES:
            _no_orient(by, orient, "judge")
            axis = tail or "overall"
            per_axis = judge_scores(rows, items, name)
            missing = [a for a in ("pa", "ia") if not np.isfinite(per_axis[a]).any()]
            if axis == "overall" and len(missing) == 2:
                raise ValueError(f"--by {by!r}: judge {name!r} has no score on any item of this suite (its "
                                 "stored rows, if any, are for other items)")
            if axis == "overall" and missing:
                have = "ia" if missing == ["pa"] else "pa"
                raise ValueError(f"--by {by!r}: judge {name!r} has no {missing[0].upper()} score on this "
                                 f"suite, so no Overall; pick by judge:{name}:{have}")
            return SelectionScores(by, f"judge {name} ({axis})", _on_axis(per_axis, axis), axis)
    if head == "metric" and rest:  # `leaderboard generators --scores metric:ID` spells a metric so
        by = rest
    return _metric(by, rows, items, higher_is_better, orient)


def _flag(orient: bool) -> str:
    return "--higher-is-better" if orient else "--lower-is-better"


def _no_orient(by: str, orient: bool | None, source: str) -> None:
    """Refuse a direction given for a source that has its own (it was ignored without a word)."""
    if orient is not None:
        raise ValueError(f"--by {by!r}: {_flag(orient)} is only for a stored metric the registry does not "
                         f"know; {source} scores are always higher-is-better")


def _metric(by: str, rows: Sequence[ResultRow], items: Sequence[Item],
            higher_is_better: Callable[[str], bool], orient: bool | None) -> SelectionScores:
    every = StoredSeries.of(rows).series
    found = [s for s in every if s.label == by] or [s for s in every if s.metric == by]
    if not found:
        known = sorted({s.metric for s in every})
        raise ValueError(f"--by {by!r}: no stored results under that metric id or label; stored: "
                         f"{', '.join(known) or 'none'} (or judge:NAME, calibrated, labels)")
    if len(found) > 1:
        labels = "; ".join(shlex.quote(s.label) for s in found)  # (pasted back as they read)
        raise ValueError(f"--by {by!r}: stored under {len(found)} configurations, which are never merged; "
                         f"pick one of: {labels}")
    series = found[0]
    try:
        registered: bool | None = bool(higher_is_better(series.metric))
    except KeyError:
        registered = None
    if registered is not None and orient is not None:  # it reversed the metric without a word
        registered_as = "higher is better" if registered else "lower is better"
        raise ValueError(f"--by {by!r}: metric {series.metric!r} is registered as {registered_as}; "
                         f"{_flag(orient)} is only for a stored metric the registry does not know")
    up = registered if registered is not None else orient
    if up is None:
        raise ValueError(f"--by {by!r}: the direction of metric {series.metric!r} is unknown; say "
                         "whether higher is better (--higher-is-better / --lower-is-better)")
    values = np.array([series.values.get(it.item_id, math.nan) for it in items], dtype=np.float64)
    if not np.isfinite(values).any():
        raise ValueError(f"--by {by!r}: no scored value on this suite's items")
    direction = "higher is better" if up else "lower is better"
    return SelectionScores(by, f"{series.label} ({direction})", values if up else -values, None,
                           1.0 if up else -1.0)
