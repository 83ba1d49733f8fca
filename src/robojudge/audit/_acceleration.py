"""``robojudge audit acceleration``: score (or read) a suite's generators and audit the accelerated ones.

The scores come from the result store (what ``robojudge score`` wrote); with ``metrics`` the
audited generators' items are scored first through :func:`robojudge.run.score_items` (stored
results are reused). Each metric is audited under one configuration, its current one
(:func:`robojudge.meta.current_configs`, which knows defaults through :func:`config_key`): a metric
stored under several configurations or versions is one metric of Q, not one per configuration. The
statistics are :func:`robojudge.meta.acceleration_audit`; the tables and the frontier plot are the
report's (:func:`robojudge.report.audit_section`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robojudge._files import replacing
from robojudge._json import json_ready
from robojudge.audit._timing import read_timing, timing_costs
from robojudge.meta import (
    AccelerationAudit,
    AuditScores,
    GenerationCost,
    acceleration_audit,
    audit_scores,
    current_configs,
    manifest_costs,
)
from robojudge.metric_info import NOT_VIDEO_QUALITY, direction, registry_config_key
from robojudge.metrics import ALL_METRICS, Provider
from robojudge.report import (
    audit_section,
    config_differences,
    frontier_table,
    render_page,
    retention_table,
    stale_note,
)
from robojudge.run import (
    MetricRequest,
    ProgressCallback,
    RunSummary,
    build_requests,
    default_run_dir,
    score_items,
    stale_rows,
    suite_store_url,
)
from robojudge.store import ResultRow, ResultStore, StoreError, default_db_url
from robojudge.suite import Item, load_suite


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
            audited and what was left out (:func:`robojudge.meta.current_configs`).
        stale: Stored rows left out because their inputs changed since they were computed
            (:func:`robojudge.run.stale_rows`), as the report and the leaderboards leave them out: those
            the audit would have read (of the audited metrics and configurations), not those of metrics
            it does not audit.
        not_quality_left_out: Metrics that say nothing about a video's quality
            (:data:`robojudge.metric_info.NOT_VIDEO_QUALITY`: the random baseline, the simulator's own
            record) found in the store or brought in by ``all``, and left out of the audit.
        not_quality_named: Such metrics named in ``metrics`` by their id, and audited as asked.
        audited: Per audited metric, the configuration it was read under (:func:`audited_configs`),
            stored or not beside another one.
    """

    audit: AccelerationAudit
    scores: AuditScores
    db_url: str
    skipped_metrics: list[str] = field(default_factory=list)
    scored: RunSummary | None = None
    written: list[Path] = field(default_factory=list)
    config_notes: list[str] = field(default_factory=list)
    stale: list[ResultRow] = field(default_factory=list)
    not_quality_left_out: list[str] = field(default_factory=list)
    not_quality_named: list[str] = field(default_factory=list)
    audited: list[dict[str, Any]] = field(default_factory=list)


config_key = registry_config_key
"""The ``(config hash, version)`` a registered metric's config values are stored under now
(:func:`robojudge.metric_info.registry_config_key`; the report is given the same)."""


def audited_configs(rows: Sequence[ResultRow], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """Per metric of ``metrics``, the configuration its ``rows`` (one per metric) were computed under:
    ``metric``, ``version``, ``config_hash`` and ``non_default``, the ``key=value`` text of the values
    that differ from the installed default ("" for the default; None where no default is known: a
    judge, a metric this robojudge does not register, a row without its config)."""
    from robojudge.metric_info import registry_defaults

    first: dict[str, ResultRow] = {}
    for r in rows:
        first.setdefault(r.metric, r)
    out = []
    for mid in metrics:
        r = first[mid]
        non_default: str | None = None
        default = registry_defaults(mid)  # (the report's provenance reads the same defaults)
        if default is not None and r.config is not None:
            non_default = (config_differences([r.config, default]) or [""])[0]
        out.append({"metric": mid, "version": r.version, "config_hash": r.config_hash,
                    "non_default": non_default})
    return out


def audited_note(audited: Sequence[Mapping[str, Any]]) -> str:
    """The sentence naming each audited metric's version, config hash and non-default values."""
    if not audited:
        return ""
    parts = []
    for a in audited:
        settings = ("default values" if a["non_default"] == "" else "default not known"
                    if a["non_default"] is None else a["non_default"])
        parts.append(f"{a['metric']} [v{a['version']}, config {a['config_hash'][:8]}, {settings}]")
    return f"Audited configurations: {'; '.join(parts)}."


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
    retry_errors: bool = False,
) -> AccelerationRun:
    """Audit ``accelerated`` generators of a suite against ``dense``.

    Args:
        manifest: The suite manifest.
        dense: The dense generator.
        accelerated: The accelerated generators.
        metrics: Metric ids to score first and audit (None: audit every metric already stored for
            these generators' items). The metrics that say nothing about a video's quality
            (:data:`robojudge.metric_info.NOT_VIDEO_QUALITY`) are left out when they come from the
            store or from ``all`` (the run's ``not_quality_left_out``), and audited when named here by
            their id (``not_quality_named``). An external metric (provider ``external``) is not scored:
            its imported rows are read, as without ``metrics``.
        configs: Per-metric config values (as ``robojudge score --set``): what ``metrics`` are
            scored and audited with; without ``metrics``, which stored configuration of a metric is
            audited. Each metric is audited under one configuration
            (:func:`robojudge.meta.current_configs`; the run's ``config_notes`` say what was left out).
        timing: A timing file (docs/audit.md); generators it does not cover take their costs from
            the items' ``meta.generation_seconds`` / ``meta.denoising_steps``.
        db: The result store (default: the store of the run folder the manifest lies in, else
            ``runs/<manifest name>/results.sqlite``).
        level: The Q a method must reach for the "largest speedup" answer (the command's ``--min-q``).
        bootstrap, seed, ci: The paired clip bootstrap (replicates, seed, interval coverage: the
            command's ``--level``).
        workers: Scoring worker processes.
        out_dir: Where to write ``acceleration.json``, the tables (CSV, Markdown, LaTeX), the
            frontier plot ``frontier.svg`` and a one-section ``index.html`` (None: nothing written).
        higher_is_better: Direction of a stored metric id (``KeyError``: unknown, left out).
        progress: Called after each stored result while scoring (as for :func:`robojudge.run.score_items`).
        retry_errors: While scoring ``metrics``, compute the stored failures of these items again (as
            ``robojudge score --retry-errors``); without ``metrics`` nothing is scored, and it is refused.

    Stored rows whose inputs changed since they were computed (a video generated again) are left out
    (the run's ``stale``), as the report and the leaderboards leave them out; scoring ``metrics``
    computes those of ``metrics`` again first.

    Raises:
        ValueError: Bad generators (none of their items in the suite, dense among the accelerated,
            two rollouts of one generator for one clip), an external metric in ``metrics`` with no
            imported value stored for these generators, a ``level`` that is not finite,
            ``retry_errors`` without ``metrics``, or nothing to audit.
        robojudge.audit.TimingError: A bad timing file.
        robojudge.store.StoreError: No store to read.
    """
    if not accelerated:
        raise ValueError("name at least one accelerated generator")
    if retry_errors and not metrics:  # nothing is scored without metrics: the flag did nothing, silently
        raise ValueError("retry_errors (--retry-errors) recomputes stored failures while scoring: name the "
                         "metrics to score (--metrics); without them the audit only reads the store")
    if not math.isfinite(level):
        raise ValueError(f"level (the Q a method must reach) must be a finite number, got {level}")
    gens = [dense, *accelerated]
    if len(set(gens)) != len(gens):
        raise ValueError(f"generators repeat: dense {dense!r}, accelerated {list(accelerated)}")
    # The stored results are read, not the files: an item whose video is missing now keeps them (as in
    # the report); only the items whose files are here are scored.
    suite = load_suite(manifest, strict=False, files="optional")
    items = [it for it in suite.items if it.generator in gens]
    audit_scores([], items, gens)  # a generator no item has, two rollouts of one clip: refused before scoring
    scored = None
    wanted: list[str] | None = None
    requests: list[MetricRequest] | None = None
    left_out: set[str] = set()
    named: list[str] = []
    external: list[str] = []
    if metrics:
        requests = build_requests(list(metrics), configs)
        asked_by_id = {m for m in metrics if m != ALL_METRICS}
        named = [r.id for r in requests if r.id in NOT_VIDEO_QUALITY and r.id in asked_by_id]
        left_out = {r.id for r in requests if r.id in NOT_VIDEO_QUALITY and r.id not in asked_by_id}
        requests = [r for r in requests if r.id not in left_out]  # not even scored
        wanted = [r.id for r in requests]
        url = db or default_db_url(default_run_dir(manifest))
        # An external metric is not computed here: scoring it wrote one error row per item, and those rows
        # then hid its imported values. Its imported rows are read instead (refused when there are none).
        external = [r.id for r in requests if r.spec.provider is Provider.external]
        if external:
            _imported_or_refuse(url, external, items, gens)
            requests = [r for r in requests if r.id not in external]
        if requests:
            with ResultStore(url) as store:
                away = {w.item_id for w in suite.files_missing}
                scored = score_items([it for it in items if it.item_id not in away], requests, store,
                                     workers=workers, retry_errors=retry_errors, progress=progress)
    else:
        url = suite_store_url(manifest, db)
    with ResultStore(url, read_only=True) as store:
        rows = store.rows()
    stale = stale_rows(rows, items)
    if stale:
        gone = {id(r) for r in stale}
        rows = [r for r in rows if id(r) not in gone]
    if requests is None:  # every stored metric: less those that do not measure the video
        ids = {it.item_id for it in items}
        left_out = {r.metric for r in rows if r.metric in NOT_VIDEO_QUALITY and r.item_id in ids}
        rows = [r for r in rows if r.metric not in NOT_VIDEO_QUALITY]
        # a --set of a metric left out here is said by the left-out note alone (it is stored, not missing)
        configs = {m: v for m, v in (configs or {}).items() if m not in left_out}
    asked = None if requests is None else [(r.id, r.config_hash, r.spec.version) for r in requests]
    ids = {it.item_id for it in items}
    keep, notes = current_configs([r for r in rows if r.metric not in external], ids, requested=asked,
                                  configs={m: v for m, v in (configs or {}).items() if m not in external},
                                  config_key=config_key)
    if external:  # chosen among the stored configurations, as without --metrics
        more, said = current_configs([r for r in rows if r.metric in external], ids,
                                     configs={m: v for m, v in (configs or {}).items() if m in external},
                                     config_key=config_key)
        keep |= more
        notes += said
        asked = [*(asked or []), *sorted(k for k in more)]
    rows = [r for r in rows if (r.metric, r.config_hash, r.version) in keep]
    stale = _stale_read(stale, keep, asked, left_out)
    got = audit_scores(rows, items, gens, wanted)
    dirs, skipped = _directions(got.metric_ids, higher_is_better)
    if wanted:  # tables list the metrics in the order they were asked for
        order = {mid: k for k, mid in enumerate(wanted)}
        rank = {label: (order.get(mid, len(order)), label) for label, mid in got.metric_ids.items()}
        dirs = {label: dirs[label] for label in sorted(dirs, key=rank.__getitem__)}
    if not dirs:
        why = "".join(f"; {n}" for n in [*notes, stale_note(stale) or "", not_quality_note(left_out)] if n)
        raise ValueError(f"no stored metric with a known direction for generators {', '.join(gens)}; "
                         f"score some first (--metrics){why}")
    costs: dict[str, GenerationCost] = manifest_costs(items, gens)
    if timing is not None:
        known = sorted({it.generator for it in suite.items if it.generator})
        costs.update(timing_costs(read_timing(timing), items, gens, source=str(timing), known=known))
    audit = acceleration_audit(dense, got.scores, dirs, costs, list(accelerated), level=level,
                               strata=got.strata, bootstrap=bootstrap, seed=seed, ci=ci)
    audited = audited_configs(rows, [got.metric_ids[label] for label in dirs])
    run = AccelerationRun(audit, got, url, skipped, scored, config_notes=notes, stale=stale,
                          not_quality_left_out=sorted(left_out), not_quality_named=named, audited=audited)
    if out_dir is not None:
        run.written = write_acceleration(run, out_dir, source=str(manifest))
    return run


def _imported_or_refuse(url: str, metrics: Sequence[str], items: Sequence[Item], gens: Sequence[str]) -> None:
    """Refuse external ``metrics`` of which no value is stored for ``items``, with the way to import them."""
    ids = {it.item_id for it in items}
    try:
        with ResultStore(url, read_only=True) as store:
            rows = store.rows()
    except StoreError:  # no store yet: nothing imported
        rows = []
    have = {r.metric for r in rows if r.item_id in ids and r.status == "ok" and r.value is not None
            and not math.isnan(r.value)}
    missing = [m for m in metrics if m not in have]
    if missing:
        raise ValueError(f"{', '.join(missing)}: provided by an external pipeline, not computed by "
                         f"robojudge, and no value of {'it' if len(missing) == 1 else 'them'} is stored in "
                         f"{url} for "
                         f"generators {', '.join(gens)}: bring the values in with `robojudge results import "
                         f"FILE --db {url}` (docs/external.md), then run the audit again")


def _stale_read(stale: Sequence[ResultRow], keep: set[tuple[str, str, str]],
                asked: Sequence[tuple[str, str, str]] | None, left_out: set[str]) -> list[ResultRow]:
    """The stale rows the audit would have read: of an audited metric's configuration, or (reading every
    stored metric) of a metric none of whose rows are current, so that it is not audited at all. Rows of
    metrics not audited (not asked for, left out of Q) or of a configuration not chosen are none of its
    business (counting them told the user to rescore what the audit never reads)."""
    if asked is not None:
        wanted = set(asked)
        return [r for r in stale if (r.metric, r.config_hash, r.version) in wanted]
    audited = {m for m, _, _ in keep}
    return [r for r in stale if r.metric not in NOT_VIDEO_QUALITY and r.metric not in left_out
            and ((r.metric, r.config_hash, r.version) in keep or r.metric not in audited)]


def not_quality_note(metrics: Sequence[str] | set[str]) -> str:
    """The line that names the metrics left out of Q because they do not measure the video ("" for none)."""
    if not metrics:
        return ""
    return (f"left out (they do not measure the video: a random baseline, the simulator's own record): "
            f"{', '.join(sorted(metrics))}; name one with --metrics to audit it")


def acceleration_json(run: AccelerationRun) -> dict[str, Any]:
    """The audit as JSON-ready data (NaN written as null).

    ``min_q`` is the Q a method must reach for ``best`` (the command's ``--min-q``; files written before
    it was named so called it ``level``); ``ci``, ``bootstrap`` and ``seed`` say what the intervals are
    (the command's ``--level``, ``--bootstrap`` and ``--seed``).
    """
    a = run.audit
    data: dict[str, Any] = json_ready({
        "dense": a.dense, "min_q": a.level, "ci": a.ci, "bootstrap": a.bootstrap, "seed": a.seed,
        "best": a.best, "frontier": list(a.frontier),
        "methods": [asdict(m) for m in a.methods], "unmatched_items": run.scores.unmatched,
        "unscored": run.scores.unscored, "skipped_metrics": run.skipped_metrics,
        "config_notes": run.config_notes, "audited": run.audited, "stale_left_out": len(run.stale),
        "not_quality_left_out": run.not_quality_left_out, "not_quality_named": run.not_quality_named,
        "store": run.db_url,
    })
    return data


def write_acceleration(run: AccelerationRun, out_dir: str | Path, *, source: str = "") -> list[Path]:
    """Write the JSON, the tables, the frontier plot and a one-section HTML page into ``out_dir``: all
    of them new, or (on an error) the old ones untouched, the page replaced last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sec = audit_section([run.audit])
    retention = retention_table(run.audit)
    if said := audited_note(run.audited):  # (one configuration stored or several: the page names it)
        sec.intro = f"{sec.intro} {said}"
        retention.note = f"{retention.note} {said}".strip()
        sec.tables = [retention if t.name == retention.name else t for t in sec.tables]
    with replacing(out, named=True) as files:  # (--out: the user's folder, links and all)
        written = [files.write_text(out / "acceleration.json", json.dumps(acceleration_json(run), indent=2)
                                    + "\n")]
        for table in (frontier_table(run.audit), retention):
            written += table.stage(files, out / "tables")
        written.append(files.write_text(out / "frontier.svg", sec.plots[0]))
        written.append(files.write_text(out / "index.html", render_page([sec], title="Acceleration audit",
                                                                          source=source)))
    return written
