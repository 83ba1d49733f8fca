"""``robojudge audit acceleration``: score (or read) a suite's generators and audit the accelerated ones.

The scores come from the result store (what ``robojudge score`` wrote); with ``metrics`` the
audited generators' items are scored first through :func:`robojudge.run.score_items` (stored
results are reused). Each metric is audited under one configuration, its current one
(:func:`current_configs`): a metric stored under several configurations or versions is one metric
of Q, not one per configuration. The statistics are :func:`robojudge.meta.acceleration_audit`; the
tables and the frontier plot are the report's (:func:`robojudge.report.audit_section`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robojudge.audit._json import json_ready
from robojudge.audit._timing import read_timing, timing_costs
from robojudge.meta import (
    AccelerationAudit,
    AuditScores,
    GenerationCost,
    acceleration_audit,
    audit_scores,
    manifest_costs,
)
from robojudge.metric_info import direction
from robojudge.metrics import UnknownMetricError
from robojudge.report import audit_section, frontier_table, render_page, retention_table
from robojudge.run import (
    MetricRequest,
    ProgressCallback,
    RunSummary,
    build_requests,
    default_run_dir,
    score_items,
    suite_store_url,
)
from robojudge.store import ResultRow, ResultStore, default_db_url
from robojudge.suite import load_suite


@dataclass
class AccelerationRun:
    """What :func:`audit_acceleration` did.

    Attributes:
        audit: The audit (speedups, retentions, Q, frontier, the best method).
        scores: The matched scores it rests on (with unmatched items and unscored counts).
        db_url: The result store read.
        skipped_metrics: Stored metrics left out because their direction is unknown.
        scored: What scoring did, when metrics were given.
        written: Files written (with ``out_dir``).
        config_notes: Per metric stored under more than one configuration or version, which one was
            audited and what was left out (:func:`current_configs`).
    """

    audit: AccelerationAudit
    scores: AuditScores
    db_url: str
    skipped_metrics: list[str] = field(default_factory=list)
    scored: RunSummary | None = None
    written: list[Path] = field(default_factory=list)
    config_notes: list[str] = field(default_factory=list)


StoreKey = tuple[str, str, str]
"""(metric id, config hash, version): one configuration of a metric in the store."""


def _key_text(config_hash: str, version: str) -> str:
    return f"config {config_hash[:8]}, version {version}"


def current_configs(
    rows: Sequence[ResultRow],
    item_ids: Collection[str],
    requests: Sequence[MetricRequest] | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[set[StoreKey], list[str]]:
    """The one configuration of each metric the audit reads, and notes on what it left out.

    Q averages one retention per metric, so a metric enters once: its rows under another config hash
    or version (another key of the store) are never mixed in. With ``requests`` (the metrics asked
    for, as scored), exactly their configurations. Without, each metric stored for ``item_ids``: the
    configuration ``configs`` gives it (``--set``); else the only one stored; else, stored under
    several, its default configuration at its current version, as ``robojudge score`` without
    ``--set`` computes it. A metric whose chosen configuration is not stored is left out.

    Returns:
        The ``(metric, config hash, version)`` keys to read, and one note per metric that has rows
        left out (or is left out), saying which configuration was read.

    Raises:
        robojudge.metrics.UnknownMetricError: ``configs`` names a metric that is not registered.
        ValueError: A config value the metric does not accept.
    """
    configs = configs or {}
    stored: dict[str, set[tuple[str, str]]] = {}
    for r in rows:
        if r.item_id in item_ids and r.superseded_at is None:
            stored.setdefault(r.metric, set()).add((r.config_hash, r.version))
    chosen: dict[str, tuple[tuple[str, str], str]] = {}  # metric -> (key, which configuration it is)
    notes: list[str] = []
    if requests is not None:
        for req in requests:
            chosen[req.id] = ((req.config_hash, req.spec.version),
                              "the --set configuration" if req.id in configs else "the default configuration")
    else:
        for mid in configs:
            if mid not in stored:
                MetricRequest.build(mid, dict(configs[mid]))  # an unknown id or a bad value is an error
                notes.append(f"{mid}: --set given, but no result of it is stored for these generators' "
                             f"items; score it with --metrics {mid}")
        for mid, keys in sorted(stored.items()):
            if mid in configs:
                asked = MetricRequest.build(mid, dict(configs[mid]))
                chosen[mid] = ((asked.config_hash, asked.spec.version), "the --set configuration")
                continue
            try:
                req = MetricRequest.build(mid)
            except UnknownMetricError:  # a judge's or an unregistered id: no default to pick by
                req = None
            default = None if req is None else (req.config_hash, req.spec.version)
            if len(keys) == 1:
                only = next(iter(keys))
                chosen[mid] = (only, "its only stored configuration")
                if default is not None and only != default:
                    notes.append(f"{mid}: audited its only stored configuration ({_key_text(*only)}), which "
                                 f"is not its default one ({_key_text(*default)})")
            elif default is None:
                notes.append(f"{mid}: left out: stored under {len(keys)} configurations or versions "
                             f"({'; '.join(_key_text(*k) for k in sorted(keys))}) and it has no registered "
                             "default to choose by")
            else:
                chosen[mid] = (default, "the default configuration")
    keep: set[StoreKey] = set()
    for mid, (key, which) in chosen.items():
        others = sorted(stored.get(mid, set()) - {key})
        if key not in stored.get(mid, set()) and requests is None:
            fix = (f"score it with --metrics {mid}" if mid in configs else f"name the stored one with --set "
                   f"{mid}.KEY=VALUE, or score the default with --metrics {mid}")
            notes.append(f"{mid}: left out: stored under {'; '.join(_key_text(*k) for k in others)}, not "
                         f"{which} ({_key_text(*key)}); {fix}")
            continue
        keep.add((mid, *key))
        if others:
            notes.append(f"{mid}: audited {which} ({_key_text(*key)}); left out its rows under "
                         f"{'; '.join(_key_text(*k) for k in others)}")
    return keep, notes


def _directions(metric_ids: Mapping[str, str], higher_is_better: Callable[[str], bool]
                ) -> tuple[dict[str, bool], list[str]]:
    known, skipped = {}, []
    for label, mid in metric_ids.items():
        try:
            known[label] = bool(higher_is_better(mid))
        except KeyError:
            skipped.append(label)
    return known, skipped


def audit_acceleration(
    manifest: str | Path,
    dense: str,
    accelerated: Sequence[str],
    *,
    metrics: Sequence[str] | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    timing: str | Path | None = None,
    db: str | None = None,
    level: float = 0.95,
    bootstrap: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
    workers: int = 1,
    out_dir: str | Path | None = None,
    higher_is_better: Callable[[str], bool] = direction,
    progress: ProgressCallback | None = None,
) -> AccelerationRun:
    """Audit ``accelerated`` generators of a suite against ``dense``.

    Args:
        manifest: The suite manifest.
        dense: The dense generator.
        accelerated: The accelerated generators.
        metrics: Metric ids to score first and audit (None: audit every metric already stored for
            these generators' items).
        configs: Per-metric config values (as ``robojudge score --set``): what ``metrics`` are
            scored and audited with; without ``metrics``, which stored configuration of a metric is
            audited. Each metric is audited under one configuration (:func:`current_configs`; the
            run's ``config_notes`` say what was left out).
        timing: A timing file (docs/audit.md); generators it does not cover take their costs from
            the items' ``meta.generation_seconds`` / ``meta.denoising_steps``.
        db: The result store (default: ``runs/<manifest name>/results.sqlite``).
        level: The Q a method must reach for the "largest speedup" answer.
        bootstrap, seed, ci: The paired clip bootstrap (replicates, seed, interval coverage).
        workers: Scoring worker processes.
        out_dir: Where to write ``acceleration.json``, the tables (CSV, Markdown, LaTeX), the
            frontier plot ``frontier.svg`` and a one-section ``index.html`` (None: nothing written).
        higher_is_better: Direction of a stored metric id (``KeyError``: unknown, left out).
        progress: Called after each stored result while scoring (as for :func:`robojudge.run.score_items`).

    Raises:
        ValueError: Bad generators (none of their items in the suite, dense among the accelerated,
            two rollouts of one generator for one clip), a ``level`` that is not finite, or nothing to
            audit.
        robojudge.audit.TimingError: A bad timing file.
        robojudge.store.StoreError: No store to read.
    """
    if not accelerated:
        raise ValueError("name at least one accelerated generator")
    if not math.isfinite(level):
        raise ValueError(f"level (the Q a method must reach) must be a finite number, got {level}")
    gens = [dense, *accelerated]
    if len(set(gens)) != len(gens):
        raise ValueError(f"generators repeat: dense {dense!r}, accelerated {list(accelerated)}")
    suite = load_suite(manifest, strict=False)
    items = [it for it in suite.items if it.generator in gens]
    scored = None
    wanted: list[str] | None = None
    requests: list[MetricRequest] | None = None
    if metrics:
        requests = build_requests(list(metrics), configs)
        wanted = [r.id for r in requests]
        url = db or default_db_url(default_run_dir(manifest))
        with ResultStore(url) as store:
            scored = score_items(items, requests, store, workers=workers, progress=progress)
    else:
        url = suite_store_url(manifest, db)
    with ResultStore(url, read_only=True) as store:
        rows = store.rows()
    keep, notes = current_configs(rows, {it.item_id for it in items}, requests, configs)
    rows = [r for r in rows if (r.metric, r.config_hash, r.version) in keep]
    got = audit_scores(rows, items, gens, wanted)
    dirs, skipped = _directions(got.metric_ids, higher_is_better)
    if wanted:  # tables list the metrics in the order they were asked for
        order = {mid: k for k, mid in enumerate(wanted)}
        rank = {label: (order.get(mid, len(order)), label) for label, mid in got.metric_ids.items()}
        dirs = {label: dirs[label] for label in sorted(dirs, key=rank.__getitem__)}
    if not dirs:
        why = "".join(f"; {n}" for n in notes)
        raise ValueError(f"no stored metric with a known direction for generators {', '.join(gens)}; "
                         f"score some first (--metrics){why}")
    costs: dict[str, GenerationCost] = manifest_costs(items, gens)
    if timing is not None:
        known = sorted({it.generator for it in suite.items if it.generator})
        costs.update(timing_costs(read_timing(timing), items, gens, source=str(timing), known=known))
    audit = acceleration_audit(dense, got.scores, dirs, costs, list(accelerated), level=level,
                               strata=got.strata, bootstrap=bootstrap, seed=seed, ci=ci)
    run = AccelerationRun(audit, got, url, skipped, scored, config_notes=notes)
    if out_dir is not None:
        run.written = write_acceleration(run, out_dir, source=str(manifest))
    return run


def acceleration_json(run: AccelerationRun) -> dict[str, Any]:
    """The audit as JSON-ready data (NaN written as null)."""
    a = run.audit
    data: dict[str, Any] = json_ready({
        "dense": a.dense, "level": a.level, "best": a.best, "frontier": list(a.frontier),
        "methods": [asdict(m) for m in a.methods], "unmatched_items": run.scores.unmatched,
        "unscored": run.scores.unscored, "skipped_metrics": run.skipped_metrics,
        "config_notes": run.config_notes, "store": run.db_url,
    })
    return data


def write_acceleration(run: AccelerationRun, out_dir: str | Path, *, source: str = "") -> list[Path]:
    """Write the JSON, the tables, the frontier plot and a one-section HTML page into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "acceleration.json"]
    written[0].write_text(json.dumps(acceleration_json(run), indent=2) + "\n", encoding="utf-8")
    for table in (frontier_table(run.audit), retention_table(run.audit)):
        written += table.write(out / "tables")
    sec = audit_section([run.audit])
    (out / "frontier.svg").write_text(sec.plots[0], encoding="utf-8")
    (out / "index.html").write_text(render_page([sec], title="Acceleration audit", source=source),
                                    encoding="utf-8")
    return [*written, out / "frontier.svg", out / "index.html"]
