"""Where a generator leaderboard's per-item PA/IA scores come from (``leaderboard generators --scores``).

Each source is one entry of :data:`SCORE_SOURCES`, written ``name`` or, for a source that takes one,
``name:ARGUMENT`` (``judge:qwen``). Adding a source is adding an entry; the error for an unknown one
lists them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge.meta._agreement import FloatArray
from robojudge.report._judges import judge_scores
from robojudge.report._leaderboard import Direction, calibrated_scores, label_scores, metric_columns
from robojudge.report._series import JUDGE_PREFIX, split_judge_id
from robojudge.store import ResultRow
from robojudge.suite import Item

__all__ = ["SCORE_SOURCES", "ScoreRequest", "ScoreSource", "UnknownScoreSource", "leaderboard_scores",
           "metric_scores", "score_direction", "source_metrics"]


@dataclass(frozen=True)
class ScoreRequest:
    """What a score source may read: the stored rows, the items, and the calibrated judge's settings."""

    rows: Sequence[ResultRow]
    items: Sequence[Item]
    higher_is_better: Direction
    argument: str = ""
    n_folds: int = 5
    alpha: float = 1.0
    seed: int = DEFAULT_SEED
    prediction: str = "expected"


@dataclass(frozen=True)
class ScoreSource:
    """One way to score items: ``compute`` gives ``{"pa": ..., "ia": ...}`` (a metric: ``{id: ...}``) aligned
    with the items.

    Attributes:
        spelling: How a user writes it (``labels``, ``judge:NAME``).
        takes_argument: Whether it is written ``name:ARGUMENT``.
        compute: The scores.
        reads: Given its argument and the metric ids the store holds, those whose rows ``compute`` reads
            (:func:`source_metrics`); None: every row.
    """

    spelling: str
    takes_argument: bool
    compute: Callable[[ScoreRequest], dict[str, FloatArray]]
    reads: Callable[[str, Sequence[str]], frozenset[str]] | None = None


def _calibrated(req: ScoreRequest) -> dict[str, FloatArray]:
    from robojudge.metric_info import registry_config_key

    # (one version per metric, the installed one where stored: as leaderboard judges and the report read it)
    return calibrated_scores(req.rows, req.items, req.higher_is_better, n_folds=req.n_folds, alpha=req.alpha,
                             seed=req.seed, prediction=req.prediction, config_key=registry_config_key).scores


def _labels(req: ScoreRequest) -> dict[str, FloatArray]:
    scores = label_scores(req.items)
    if not any(np.isfinite(v).any() for v in scores.values()):
        raise ValueError("no item of the suite carries a PA or IA label (labels.pa, labels.ia in the "
                         "manifest), so there is nothing to rank by: give labels, or rank by a stored judge "
                         "(--scores judge:NAME)")
    return scores


def metric_scores(rows: Sequence[ResultRow], items: Sequence[Item], higher_is_better: Direction,
                  metric: str) -> dict[str, FloatArray]:
    """One stored metric's values on ``items`` as the one column ``{metric id: values}`` (NaN where an item
    has none), as stored: the caller ranks by the metric's direction.

    ``metric`` is a metric id stored under one configuration and version, or the label of one of its
    series (``pixel_frame_consistency [v4]``, as ``robojudge results status`` and the report name them).

    Raises:
        ValueError: No stored values of ``metric`` on the items (a set-level metric, one value per group,
            says so), or several series of it (naming them, the installed version's first).
    """
    from robojudge.metrics import SET_METRICS, SetOutput, UnknownMetricError, get_metric, is_set_metric

    columns = metric_columns(rows, items, higher_is_better)
    chosen = [f for f in columns if f.label == metric] or [f for f in columns if f.metric == metric]
    if not chosen:
        if is_set_metric(metric) and SET_METRICS.get(metric).output is SetOutput.group:
            raise ValueError(f"{metric} is a set-level metric (one value per group of items, `robojudge "
                             "metrics sets`), so it has no value per item and cannot rank generators item by "
                             "item; compare its group values in `robojudge metrics sets` or the report, or "
                             "rank by a per-item metric")
        stored = ", ".join(sorted({f.label for f in columns})) or "none"
        raise ValueError(f"no stored values of metric {metric!r} on the suite's items (stored metrics: "
                         f"{stored}); score it first (`robojudge score -m {metric}`), or import its values "
                         "(`robojudge results import`)")
    if len(chosen) > 1:
        try:
            installed: str | None = get_metric(chosen[0].metric).version
        except UnknownMetricError:
            installed = None
        # the installed version's series first: the one a user most likely means, and the example
        chosen.sort(key=lambda f: f.series.key.version != installed)
        raise ValueError(f"metric {metric!r} is stored as {len(chosen)} series, which are never merged: "
                         f"{', '.join(f.label for f in chosen)}; name one by its label, e.g. "
                         f"'metric:{chosen[0].label}'")
    return {chosen[0].metric: chosen[0].values}


def _judge_reads(judge: str, stored: Sequence[str]) -> frozenset[str]:
    """The PA and IA series of the judges ``judge`` may name (a name, or a label ``NAME [...]``: the
    name's); every judge's when it names none, for the error that lists them."""
    axes = [(parts, m) for m in stored if (parts := split_judge_id(m)) is not None]  # (as judge_series reads)
    named = frozenset(m for (name, _), m in axes if judge == name or judge.startswith(f"{name} ["))
    return named or frozenset(m for _, m in axes)


def _metric_reads(metric: str, stored: Sequence[str]) -> frozenset[str]:
    """The series ``metric`` may name (an id, or a label ``ID [...]``: the id's); every metric's when it
    names none, for the error that lists them."""
    own = [m for m in stored if not m.startswith(JUDGE_PREFIX)]  # (as metric_series reads)
    named = frozenset(m for m in own if metric == m or metric.startswith(f"{m} ["))
    return named or frozenset(own)


SCORE_SOURCES: Mapping[str, ScoreSource] = MappingProxyType({
    "labels": ScoreSource("labels", False, _labels, reads=lambda _, __: frozenset()),
    "calibrated": ScoreSource("calibrated", False, _calibrated),
    "judge": ScoreSource("judge:NAME", True, lambda req: judge_scores(req.rows, req.items, req.argument),
                         reads=_judge_reads),
    "metric": ScoreSource("metric:ID", True,
                          lambda req: metric_scores(req.rows, req.items, req.higher_is_better, req.argument),
                          reads=_metric_reads),
})
"""The score sources by name: the suite's labels, the metric-calibrated judge, a stored VLM judge, a stored
metric (one column, as stored: ranked by its direction, :func:`score_direction`)."""


def score_direction(source: str, scores: Mapping[str, FloatArray], higher_is_better: Direction) -> bool:
    """Whether a higher score from ``source`` is the better: True for labels and judges; for
    ``metric:ID``, the metric's direction.

    Raises:
        ValueError: The metric's direction is not known (a metric no longer installed).
    """
    if not source.startswith("metric:"):
        return True
    metric = next(iter(scores))
    try:
        return higher_is_better(metric)
    except KeyError:
        raise ValueError(f"the direction of metric {metric!r} is not known (it is not in this robojudge's "
                         "registry), so its generators cannot be ranked; install the plugin that "
                         "declares it") from None


class UnknownScoreSource(ValueError):
    """A score source that is not in :data:`SCORE_SOURCES` (or is written without its argument)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.choices = choices_text()
        super().__init__(f"score source must be {self.choices}, got {source!r}")


def choices_text() -> str:
    """``labels, calibrated, judge:NAME or metric:ID``: every source as a user writes it."""
    spelled = [s.spelling for s in SCORE_SOURCES.values()]
    return f"{', '.join(spelled[:-1])} or {spelled[-1]}" if len(spelled) > 1 else spelled[0]


def source_metrics(source: str, stored: Sequence[str]) -> frozenset[str] | None:
    """The metric ids among ``stored`` (a store's, :meth:`robojudge.store.ResultStore.metric_ids`) whose
    rows :func:`leaderboard_scores` reads for ``source``: none for ``labels``, a judge's PA and IA series
    for ``judge:NAME``, a metric's series for ``metric:ID``; None (every row) for ``calibrated`` and for a
    source that is not one (:func:`leaderboard_scores` refuses it). Reading only these gives the same
    scores and errors as reading the whole store."""
    name, sep, argument = source.partition(":")
    entry = SCORE_SOURCES.get(name)
    if entry is None or entry.reads is None or bool(sep) != entry.takes_argument:
        return None
    return entry.reads(argument, stored)


def leaderboard_scores(
    source: str,
    rows: Sequence[ResultRow],
    items: Sequence[Item],
    higher_is_better: Direction,
    *,
    n_folds: int = 5,
    alpha: float = 1.0,
    seed: int = DEFAULT_SEED,
    prediction: str = "expected",
) -> dict[str, FloatArray]:
    """Per-item PA and IA scores from ``source`` (``labels``, ``calibrated`` or ``judge:NAME``), or one
    stored metric's column (``metric:ID``: :func:`metric_scores`).

    Raises:
        UnknownScoreSource: ``source`` names no source, or lacks or has an argument it should not.
        ValueError: The source cannot score these items (no labels, an unknown judge...).
    """
    name, sep, argument = source.partition(":")
    entry = SCORE_SOURCES.get(name)
    if entry is None or bool(sep) != entry.takes_argument or (entry.takes_argument and not argument):
        raise UnknownScoreSource(source)
    request = ScoreRequest(rows, items, higher_is_better, argument, n_folds, alpha, seed, prediction)
    return entry.compute(request)
