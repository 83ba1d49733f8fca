"""Registering a metric under its RoboPhys-3D taxonomy id, with metadata read from the taxonomy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from robojudge.metrics._registry import Family, Input, NoConfig, Provider, TaxonomyPlace, metric
from robojudge.metrics._score import Score
from robojudge.suite._schema import Item
from robojudge.taxonomy import MetricSpec as TaxonomyEntry
from robojudge.taxonomy import load_taxonomy

ROBOPHYS = "RoboPhys-3D: A Comprehensive Embodied World Model Evaluation via 3D Reconstruction"

#: Appendix subsection that defines each sub-dimension's metrics.
SECTION: dict[str, str] = {
    "IQ-1": "B.1.1", "AQ": "B.1.2", "DS": "B.1.3", "MQ": "B.1.4", "CC": "B.1.5",
    "RBG": "B.2.1", "DC": "B.2.2", "CTG": "B.2.3", "RC": "B.2.4",
    "OL": "B.3.1", "TA": "B.3.2", "IQ-2": "B.3.3", "EAA": "B.3.4", "PLA": "B.3.5", "SA": "B.3.6",
    "IF": "B.4.1", "CS": "B.4.2", "TS": "B.4.3",
}

# Native ranges the paper prints (App. B.1-B.4) where they differ from what the normalization implies.
_NATIVE_OVERRIDES: dict[str, tuple[float | None, float | None]] = {
    "iq1_inception_score": (1.0, None),
    "aq_clip_ap": (0.0, 10.0),
    # robojudge stores the raw HPSv3 reward; the paper's [0, 1] comes after pool normalization.
    "aq_hpsv3": (None, None),
    "cc_style": (0.0, 1.0),
}


def native_range(entry: TaxonomyEntry) -> tuple[float | None, float | None]:
    """The raw value's range as App. B.1-B.4 states it.

    Bounded transforms (identity, ``1 - x``, Likert, ``x / 3``, ``x / 0.5``) are defined on
    ``[lower, upper]`` of the taxonomy. Anchored and affine metrics are unbounded above, from 0
    unless the paper says otherwise (Inception Score from 1, CLIP-AP on [0, 10], style on [0, 1]).
    """
    if entry.id in _NATIVE_OVERRIDES:
        return _NATIVE_OVERRIDES[entry.id]
    if entry.normalization in ("affine_clip", "psnr_anchor", "fvd_anchor"):
        return (0.0, None)
    return (entry.lower, entry.upper)


def place(entry: TaxonomyEntry) -> TaxonomyPlace:
    """The registry's copy of a taxonomy entry's place and normalization."""
    return TaxonomyPlace(
        name=entry.name,
        subdim=entry.subdim,
        subdim_name=entry.subdim_name,
        level=entry.level,
        level_name=entry.level_name,
        grounding=entry.grounding,
        normalization=entry.normalization,
    )


def citation(entry: TaxonomyEntry, note: str = "") -> str:
    """``<paper>, App. <section> (<metric name>)`` plus an optional note."""
    base = f"{ROBOPHYS}, App. {SECTION[entry.subdim]} ({entry.name})"
    return f"{base}; {note}" if note else base


def robophys_metric(
    metric_id: str,
    *,
    family: Family,
    inputs: set[Input],
    description: str,
    provider: Provider = Provider.computed,
    version: str = "1",
    config: type[BaseModel] = NoConfig,
    note: str = "",
    weights: tuple[str, ...] = (),
) -> Callable[[Callable[[Item, Any], Score]], Callable[[Item, Any], Score]]:
    """:func:`robojudge.metrics.metric` for a taxonomy id: direction, range and place come from the taxonomy.

    Raises:
        KeyError: When ``metric_id`` is not one of the 50 taxonomy ids.
    """
    entry = load_taxonomy()[metric_id]
    return metric(
        metric_id,
        family=family,
        inputs=frozenset(inputs),
        higher_is_better=entry.higher_is_better,
        native_range=native_range(entry),
        version=version,
        citation=citation(entry, note),
        description=description,
        config=config,
        provider=provider,
        taxonomy=place(entry),
        weights=weights,
    )
