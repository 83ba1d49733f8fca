"""From stored rows and suite items to what the acceleration audit reads: matched scores and costs.

Matching key: an accelerated rollout is compared with the dense rollout of the same conditioning,
the item's ``clip_id`` (the source clip whose first frame and instruction both generators were
given); an item without one falls back to its ``initial_frame`` path, and an item with neither is not
matched (listed). Two items of one generator with one key are an error: the pairing would be a guess.

Manifest fields (an item's ``meta``, all optional): ``generation_seconds`` (wall time of the
rollout), ``denoising_steps`` (network evaluations), and on accelerated items ``accelerates`` (the
dense generator they speed up) and ``acceleration`` (the method's name). ``robojudge report`` finds
the audits to draw from ``accelerates``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from robojudge.meta._acceleration import GenerationCost

if TYPE_CHECKING:  # only the types: meta stays free of the store's and the manifest's imports
    from robojudge.store import ResultRow
    from robojudge.suite import Item

#: Item ``meta`` keys the audit reads.
SECONDS_KEY = "generation_seconds"
STEPS_KEY = "denoising_steps"
ACCELERATES_KEY = "accelerates"
METHOD_KEY = "acceleration"


def match_key(item: Item) -> str | None:
    """The key that pairs ``item`` with the dense rollout of the same conditioning (None: none)."""
    return item.clip_id or item.initial_frame or None


@dataclass
class AuditScores:
    """Matched scores of some generators.

    Attributes:
        scores: Generator -> metric label -> clip key -> value (ok rows with a finite value).
        metric_ids: Metric label -> stored metric id (a metric stored under several configs has one
            label per configuration: ``metric [config/version]``).
        strata: Clip key -> the item's ``source`` (the bootstrap resamples clips within sources).
        unmatched: Items of these generators without a key.
        unscored: Generator -> metric label -> items whose row is missing, failed or NaN.
    """

    scores: dict[str, dict[str, dict[str, float]]]
    metric_ids: dict[str, str]
    strata: dict[str, str]
    unmatched: list[str] = field(default_factory=list)
    unscored: dict[str, dict[str, int]] = field(default_factory=dict)


def _labels(rows: Sequence[ResultRow]) -> dict[tuple[str, str, str], str]:
    by_metric: dict[str, set[tuple[str, str, str]]] = {}
    for r in rows:
        by_metric.setdefault(r.metric, set()).add((r.metric, r.config_hash, r.version))
    out = {}
    for metric, keys in by_metric.items():
        for key in keys:
            out[key] = metric if len(keys) == 1 else f"{metric} [{key[1][:8]}/{key[2]}]"
    return out


def audit_scores(rows: Sequence[ResultRow], items: Sequence[Item], generators: Sequence[str],
                 metrics: Sequence[str] | None = None) -> AuditScores:
    """The current rows of ``generators``' items as matched scores.

    Args:
        rows: Stored rows (superseded ones are ignored).
        items: Suite items.
        generators: The generators to read (dense and accelerated).
        metrics: Stored metric ids to keep (None: every metric stored for these items).

    Raises:
        ValueError: A generator has no item, or two of its items share a matching key.
    """
    wanted = set(generators)
    key_of: dict[str, tuple[str, str]] = {}
    seen: dict[tuple[str, str], str] = {}
    unmatched: list[str] = []
    strata: dict[str, str] = {}
    present: set[str | None] = set()
    for it in items:
        if it.generator not in wanted:
            continue
        present.add(it.generator)
        key = match_key(it)
        if key is None:
            unmatched.append(it.item_id)
            continue
        if (it.generator, key) in seen:
            raise ValueError(f"items {seen[(it.generator, key)]!r} and {it.item_id!r} of generator "
                             f"{it.generator!r} share the clip {key!r}: the audit pairs one rollout per clip")
        seen[(it.generator, key)] = it.item_id
        key_of[it.item_id] = (it.generator, key)
        strata.setdefault(key, it.source or "")
    absent = [g for g in generators if g not in present]
    if absent:
        raise ValueError(f"no suite item has generator {', '.join(map(repr, absent))}")
    keep = None if metrics is None else set(metrics)
    mine = [r for r in rows if r.item_id in key_of and r.superseded_at is None
            and (keep is None or r.metric in keep)]
    labels = _labels(mine)
    scores: dict[str, dict[str, dict[str, float]]] = {g: {} for g in generators}
    for r in mine:
        gen, key = key_of[r.item_id]
        label = labels[(r.metric, r.config_hash, r.version)]
        per = scores[gen].setdefault(label, {})
        if r.status == "ok" and r.value is not None and math.isfinite(r.value):
            per[key] = float(r.value)
    n_items = {g: sum(1 for k in key_of.values() if k[0] == g) for g in generators}
    unscored = {g: {m: n_items[g] - len(scores[g].get(m, {})) for m in sorted(set(labels.values()))}
                for g in generators}
    ids = {label: key[0] for key, label in labels.items()}
    return AuditScores(scores, dict(sorted(ids.items())), strata, unmatched, unscored)


def _mean(values: list[float]) -> float | None:
    vals = [v for v in values if math.isfinite(v)]
    return sum(vals) / len(vals) if vals else None


def manifest_costs(items: Sequence[Item], generators: Sequence[str]) -> dict[str, GenerationCost]:
    """Per generator, the mean ``generation_seconds`` and ``denoising_steps`` of its items' ``meta``.

    Raises:
        ValueError: A value that is not a non-negative number (naming the item and field).
    """
    acc: dict[str, tuple[list[float], list[float]]] = {g: ([], []) for g in generators}
    for it in items:
        if it.generator not in acc:
            continue
        for k, key in enumerate((SECONDS_KEY, STEPS_KEY)):
            v = it.meta.get(key)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise ValueError(f"item {it.item_id!r}: meta.{key} must be a non-negative number, got {v!r}")
            acc[it.generator][k].append(float(v))
    return {g: GenerationCost(_mean(s), _mean(t), "manifest") for g, (s, t) in acc.items()}


def declared_accelerations(items: Sequence[Item]) -> dict[str, list[str]]:
    """Dense generator -> the generators whose items name it in ``meta.accelerates`` (sorted)."""
    out: dict[str, set[str]] = {}
    for it in items:
        dense = it.meta.get(ACCELERATES_KEY)
        if isinstance(dense, str) and dense and it.generator and it.generator != dense:
            out.setdefault(dense, set()).add(it.generator)
    return {d: sorted(gs) for d, gs in sorted(out.items())}


def directions(metric_ids: Mapping[str, str], higher_is_better: Callable[[str], bool]) -> dict[str, bool]:
    """Label -> direction, looked up by stored metric id through ``higher_is_better``."""
    return {label: bool(higher_is_better(mid)) for label, mid in metric_ids.items()}
