"""From stored rows and suite items to what the acceleration audit reads: matched scores and costs.

Matching key: an accelerated rollout is compared with the dense rollout of the same conditioning,
the item's ``clip_id`` (the source clip whose first frame and instruction both generators were
given); an item without one falls back to its ``initial_frame`` path, and an item with neither is not
matched (listed). Two items of one generator with one key are an error: the pairing would be a guess.

Manifest fields (an item's ``meta``, all optional): ``generation_seconds`` (wall time of the
rollout), ``denoising_steps`` (network evaluations), and on accelerated items ``accelerates`` (the
dense generator they speed up) and ``acceleration`` (the method's name). ``robojudge report`` finds
the audits to draw from ``accelerates``.

One configuration per metric: Q averages one retention per metric, so :func:`current_configs` picks
the one configuration of each stored metric that the audit reads (``robojudge audit acceleration``
and the report's acceleration section both call it); rows of the metric under another config hash or
version are left out, and a note says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from robojudge.meta._acceleration import GenerationCost

if TYPE_CHECKING:  # only the types: meta stays free of the store's and the manifest's imports
    from robojudge.store import ResultRow
    from robojudge.suite import Item

#: Item ``meta`` keys the audit reads.
SECONDS_KEY = "generation_seconds"
STEPS_KEY = "denoising_steps"
ACCELERATES_KEY = "accelerates"
METHOD_KEY = "acceleration"

StoreKey = tuple[str, str, str]
"""(metric id, config hash, version): one configuration of a metric in the store."""

ConfigKey = Callable[[str, Mapping[str, Any] | None], tuple[str, str]]
"""A metric id and config values (None: its default configuration) -> the ``(config hash, version)``
it is stored under now; ``KeyError`` for an id it does not know, ``ValueError`` for a value the metric
does not accept. meta does not load the metric registry: the caller passes this (``robojudge.audit``
builds it from :class:`robojudge.run.MetricRequest`)."""


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


def _key_text(config_hash: str, version: str) -> str:
    return f"config {config_hash[:8]}, version {version}"


def current_configs(
    rows: Sequence[ResultRow],
    item_ids: Collection[str],
    *,
    requested: Sequence[StoreKey] | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    config_key: ConfigKey | None = None,
) -> tuple[set[StoreKey], list[str]]:
    """The one configuration of each metric the audit reads, and notes on what it left out.

    Q averages one retention per metric, so a metric enters once: its rows under another config hash
    or version (another key of the store) are never mixed in. With ``requested`` (the metrics asked
    for, as scored), exactly their configurations. Without, each metric stored for ``item_ids``: the
    configuration ``configs`` gives it (``--set``); else the only one stored; else, stored under
    several, its default configuration at its current version (``config_key(metric, None)``), as
    ``robojudge score`` without ``--set`` computes it. Without ``requested`` or ``configs``, a
    configuration whose rows are all failures (or unscored) is chosen only where no other holds a value.
    A metric whose chosen configuration is not
    stored is left out, and so is one stored under several when its default is not known (an id
    ``config_key`` does not know, or no ``config_key``).

    Args:
        rows: Stored rows (superseded ones are ignored).
        item_ids: The audited generators' items.
        requested: The ``(metric, config hash, version)`` of the metrics asked for (None: none asked).
        configs: Per-metric config values (``--set``), named in the notes; they need ``config_key``.
        config_key: What configuration values are stored under (None: no default is known).

    Returns:
        The ``(metric, config hash, version)`` keys to read, and one note per metric that has rows
        left out (or is left out), saying which configuration was read.

    Raises:
        KeyError: ``configs`` names a metric ``config_key`` does not know (its error).
        ValueError: A config value the metric does not accept, or (without ``requested``) ``configs``
            without ``config_key``.
    """
    configs = configs or {}

    def asked(mid: str) -> tuple[str, str]:
        if config_key is None:
            raise ValueError(f"--set {mid}: which configuration the values are stored under is not known "
                             "here (no config_key)")
        return config_key(mid, configs[mid])  # an unknown id or a bad value is an error

    stored: dict[str, set[tuple[str, str]]] = {}
    valued: dict[str, set[tuple[str, str]]] = {}  # the configurations with at least one value
    for r in rows:
        if r.item_id in item_ids and r.superseded_at is None:
            stored.setdefault(r.metric, set()).add((r.config_hash, r.version))
            if r.status == "ok" and r.value is not None and not math.isnan(r.value):
                valued.setdefault(r.metric, set()).add((r.config_hash, r.version))
    # A configuration holding only failures (a metric scored where it cannot run, such as an external
    # one named with --metrics before this was refused) never displaces one with values.
    failed_only = {(mid, k) for mid, keys in stored.items() for k in keys - valued.get(mid, set())}
    chosen: dict[str, tuple[tuple[str, str], str]] = {}  # metric -> (key, which configuration it is)
    notes: list[str] = []
    if requested is not None:
        for mid, config_hash, version in requested:
            chosen[mid] = ((config_hash, version),
                           "the --set configuration" if mid in configs else "the default configuration")
    else:
        for mid in configs:
            if mid not in stored:
                asked(mid)
                notes.append(f"{mid}: --set given, but no result of it is stored for these generators' "
                             f"items; score it with --metrics {mid}")
        for mid, keys in sorted(stored.items()):
            if mid in configs:
                chosen[mid] = (asked(mid), "the --set configuration")
                continue
            narrowed = bool(valued.get(mid)) and valued[mid] != keys
            if narrowed:
                keys = valued[mid]
            default: tuple[str, str] | None = None
            if config_key is not None:
                try:
                    default = config_key(mid, None)
                except KeyError:  # a judge's or an unregistered id: no default to pick by
                    default = None
            if len(keys) == 1:
                only = next(iter(keys))
                chosen[mid] = (only, "its only configuration with values" if narrowed else
                               "its only stored configuration")
                if default is not None and only != default and (mid, default) not in failed_only:
                    notes.append(f"{mid}: audited its only stored configuration ({_key_text(*only)}), which "
                                 f"is not its default one ({_key_text(*default)})")
            elif default is None:
                why = ("it has no registered default to choose by" if config_key is not None else
                       "which of them is its default is not known here")
                notes.append(f"{mid}: left out: stored under {len(keys)} configurations or versions "
                             f"({'; '.join(_key_text(*k) for k in sorted(keys))}) and {why}")
            else:
                chosen[mid] = (default, "the default configuration")
    keep: set[StoreKey] = set()
    for mid, (key, which) in chosen.items():
        others = sorted(stored.get(mid, set()) - {key})
        candidates = stored.get(mid, set()) if mid in configs else valued.get(mid) or stored.get(mid, set())
        if key not in candidates and requested is None:
            fix = (f"score it with --metrics {mid}" if mid in configs else f"name the stored one with --set "
                   f"{mid}.KEY=VALUE, or score the default with --metrics {mid}")
            held = " (stored with failures only)" if (mid, key) in failed_only else ""
            notes.append(f"{mid}: left out: stored under {'; '.join(_key_text(*k) for k in others)}, not "
                         f"{which} ({_key_text(*key)}{held}); {fix}")
            continue
        keep.add((mid, *key))
        if others:
            said = [_key_text(*k) + (" (failures only)" if (mid, k) in failed_only else "") for k in others]
            notes.append(f"{mid}: audited {which} ({_key_text(*key)}); left out its rows under "
                         f"{'; '.join(said)}")
    return keep, notes


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
