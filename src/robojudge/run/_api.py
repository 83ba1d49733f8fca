"""Scoring a whole manifest: load, open the store, score, return what happened."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robojudge.metrics import (
    ALL_METRICS,
    FrameOptions,
    expand_metric_ids,
    fast_settings,
    frame_option_values,
    takes_frame_options,
)
from robojudge.run._executor import Executor, make_executor
from robojudge.run._score import MetricRequest, ProgressCallback, RunInterrupted, RunSummary, score_blocks
from robojudge.run._status import stale_rows
from robojudge.run._timelimit import check_limit
from robojudge.run._where import (
    claim_store,
    default_run_dir,
    raise_if_no_items,
    refuse_run_folder,
    suite_store_url,
)
from robojudge.store import ResultRow, ResultStore, default_db_url
from robojudge.suite import (
    Item,
    ManifestProblem,
    SameVideos,
    SkippedRowsWarning,
    Suite,
    iter_suite,
    load_suite,
    skipped_rows_line,
)

STREAM_BLOCK = 2_000
"""Manifest records read, planned and scheduled at a time by :func:`score_suite`."""


@dataclass
class SuiteRun:
    """The outcome of :func:`score_suite`: the run summary plus manifest rows that were left out."""

    summary: RunSummary
    db_url: str
    manifest_problems: list[ManifestProblem] = field(default_factory=list)
    #: The requested metrics that the run's :class:`FrameOptions` (``--size`` ...) applied to.
    frame_options_applied: list[str] = field(default_factory=list)
    #: Of those, the ones whose own settings (``configs``, ``--set``) replaced some of the options: per
    #: metric, each such option's name (``"size"``) with the value the metric uses instead.
    frame_options_overridden: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Under the fast profile, the settings of its own it gave each metric, as the metric's config has
    #: them (a value of the run's ``configs`` wins): ``{"flow_warp_error": {"iterations": 1}, ...}``.
    profile_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``(item id, earlier item id)`` for each item whose video is the very file of an earlier item's
    #: under the same instruction (:class:`robojudge.suite.SameVideos`): scored and counted twice.
    same_videos: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class SuiteResults:
    """A manifest's usable items and the current rows of its store (:func:`load_suite_results`)."""

    db_url: str
    items: list[Item]
    rows: list[ResultRow]
    #: Rows left out of ``rows`` because their inputs changed since (:func:`robojudge.run.stale_rows`).
    stale: list[ResultRow] = field(default_factory=list)
    #: Manifest rows left out because they do not validate.
    problems: list[ManifestProblem] = field(default_factory=list)


def load_suite_results(manifest: str | Path, db: str | None = None,
                       metrics: Callable[[Sequence[str]], Collection[str] | None] | None = None
                       ) -> SuiteResults:
    """Read a manifest and the current rows of its store (:func:`suite_store_url`), read-only. Rows
    whose inputs changed since they were computed are left out (``stale``; the next ``robojudge score``
    recomputes them), and so are the manifest rows that do not validate (``problems``).

    ``metrics``, given the store's metric ids (:meth:`ResultStore.metric_ids`), names those whose rows to
    read (None from it: all):
    a leaderboard by one judge reads and checks that judge's rows, not the whole store's
    (:func:`robojudge.report.source_metrics`).

    Raises:
        StoreError: No store (see :func:`suite_store_url`), or it cannot be read.
        ManifestError: The manifest cannot be read.
        ValueError: The manifest has no usable item.
    """
    refuse_run_folder(manifest, "robojudge.report.load_run_results(RUN, stale=robojudge.run.stale_rows)")
    url = suite_store_url(manifest, db)
    suite = load_suite(manifest, strict=False, files="optional")  # results are read, not files
    items = list(suite.items)
    with ResultStore(url, read_only=True) as store:
        rows = store.rows(metrics=None if metrics is None else metrics(store.metric_ids()))
    if not items:
        raise ValueError(f"{manifest}: no usable items (see `robojudge suite validate`)")
    stale = stale_rows(rows, items)
    if stale:
        gone = {id(r) for r in stale}
        rows = [r for r in rows if id(r) not in gone]
    return SuiteResults(url, items, rows, stale, [p for p in suite.problems if p.severity == "error"])


def build_requests(
    metric_ids: Sequence[str] | str,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    frames: FrameOptions | None = None,
) -> list[MetricRequest]:
    """Metric requests for ids, with optional per-metric config values; unknown ids fail here. A string
    may name several ids, ``"iq1_psnr,iq1_ssim"``, as ``--metrics`` does.

    The id ``all`` expands to every metric robojudge can compute here (see
    :func:`robojudge.metrics.expand_metric_ids`); the metrics only it brings in run only on the
    items that have their inputs (``MetricRequest.applicable_only``), while an id named as well keeps
    its error rows on items that lack one, so whoever asked for it learns why it failed.

    ``frames`` (``--size``, ``--max-side``, ``--max-frames``, ``--fast``) go into the config of every
    metric that reads frames at native rate and size (:func:`robojudge.metrics.takes_frame_options`),
    under the metric's own values from ``configs``; the other metrics read frames at their own fixed
    settings. The fast profile also gives some metrics settings of their own
    (:func:`robojudge.metrics.frame_option_values`).

    Raises:
        TypeError: An id that is not a string (a metric's spec or function: pass its id).
    """
    if isinstance(metric_ids, str):
        metric_ids = [m.strip() for m in metric_ids.split(",") if m.strip()]
    odd = [m for m in metric_ids if not isinstance(m, str)]
    if odd:
        raise TypeError(f"metrics must be metric ids (str), got {type(odd[0]).__name__} {odd[0]!r}")
    named = {m for m in metric_ids if m != ALL_METRICS}
    selects = ALL_METRICS in metric_ids
    metric_ids = expand_metric_ids(metric_ids)
    configs = configs or {}
    unknown = set(configs) - set(metric_ids)
    if unknown:
        raise ValueError(f"config given for metrics that are not requested: {', '.join(sorted(unknown))}")
    seen: set[str] = set()
    out = []
    for mid in metric_ids:
        if mid in seen:
            continue
        seen.add(mid)
        values = dict(configs.get(mid, {}))
        values = {**frame_option_values(mid, frames), **values}
        out.append(MetricRequest.build(mid, values,
                                       applicable_only=selects and mid not in named))
    return out


def _won_over(config: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a metric's ``config`` that replaced the run's frame options ``given``: a key set
    otherwise, and a ``size`` under a run-wide ``max_side`` (a size wins over a cap: frames were read at
    120 px under ``--max-side 64`` while the run said the cap applied)."""
    won = {k: getattr(config, k) for k, v in given.items() if getattr(config, k, v) != v}
    if "max_side" in given and "size" not in given and getattr(config, "size", None) is not None:
        won["size"] = config.size
    return won


def score_suite(
    manifest: str | Path,
    metrics: Sequence[str] | str,
    *,
    db: str | None = None,
    run_dir: str | Path | None = None,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    workers: int | None = 1,
    executor: Executor | str | None = None,
    address: str | None = None,
    retry_errors: bool = False,
    progress: ProgressCallback | None = None,
    confine: str | Path | None = None,
    rescore_unknown: bool = False,
    frames: FrameOptions | None = None,
    block: int = STREAM_BLOCK,
    rescore_libraries: bool = False,
    timeout_s: float | None = None,
) -> SuiteRun:
    """Score the items of ``manifest`` with ``metrics`` (ids, or one string ``"a,b"``) into the store ``db``.

    ``db`` defaults to ``results.sqlite`` in ``run_dir``, which defaults to the run folder the manifest
    lies in, else ``runs/<manifest name>`` under the current folder (the manifest's own folder may be
    read-only). Rows of the manifest that do not validate are skipped and returned in
    ``manifest_problems``, and the call warns once with their count (a
    :class:`~robojudge.suite.SkippedRowsWarning`); the rest are scored. Rerunning with
    the same arguments resumes: stored results are skipped, unless their inputs changed since (they
    are recomputed and the stored rows kept as superseded); stored results without an inputs
    fingerprint (schema version 1) are kept unless ``rescore_unknown``, and those computed with other
    library versions than installed unless ``rescore_libraries`` (:func:`score_items`). ``confine`` (default
    ``$ROBOJUDGE_CONFINE``) refuses items whose files resolve outside that folder, see
    :func:`robojudge.suite.load_suite`. ``frames``: see :func:`build_requests`.

    ``executor``: an executor, or its kind (``local``, ``ray``) with ``address`` and ``workers``
    (see :func:`robojudge.run.make_executor`); default the local one with ``workers`` processes.

    The manifest is read and planned ``block`` records at a time while earlier blocks are scored
    (:func:`robojudge.suite.iter_suite`, :func:`robojudge.run._score.score_blocks`), so memory
    stays flat in the number of items.

    ``timeout_s``: the most seconds one metric may take on one item (None: no limit); a metric
    past it becomes an error row and the run goes on (:func:`robojudge.run.score_items`).

    Ctrl-C raises :class:`~robojudge.run.RunInterrupted` once what finished is stored and the workers
    are stopped; its ``run`` is this call's outcome so far.
    """
    check_limit(timeout_s)
    requests = build_requests(metrics, configs, frames)
    applied = [r.id for r in requests if frames and takes_frame_options(r.id)]
    given = frames.values() if frames else {}
    overridden = {r.id: won for r in requests if r.id in applied and (won := _won_over(r.config, given))}
    fast = frames is not None and frames.profile == "fast"
    own = {r.id: {k: getattr(r.config, k) for k in keys} for r in requests
           if fast and (keys := fast_settings(type(r.config)))}
    suites = iter_suite(manifest, block=block, confine=confine)
    head = [next(suites)]  # a manifest that cannot be read fails here, before a store is made
    while not head[-1].items:  # ... and one of which no row validates, once that is known
        more = next(suites, None)
        if more is None:
            raise_if_no_items(head)
            break
        head.append(more)
    problems: list[ManifestProblem] = []
    twins = SameVideos()
    url = db or default_db_url(Path(run_dir) if run_dir else default_run_dir(manifest))
    ex: Executor | None
    if isinstance(executor, str) or (executor is None and address is not None):
        ex = make_executor(workers, executor or "local", address)
    else:
        ex = executor
    with ResultStore(url) as store:
        # The blocks after the first are read once more for the check where the store holds another
        # manifest: only the first was checked, and two manifests of thousands of items replaced each
        # other's results past it (a check per block as it is scored refused mid-run, the manifest noted).
        claim_store(store, manifest, [it for suite in head for it in suite.items],
                    rest=lambda: (s.items for s in iter_suite(manifest, block=block, confine=confine)))
        try:
            summary = score_blocks(
                _items(itertools.chain(head, suites), problems, twins),
                requests,
                store,
                workers=workers or 1,
                executor=ex,
                retry_errors=retry_errors,
                rescore_unknown=rescore_unknown,
                rescore_libraries=rescore_libraries,
                progress=progress,
                timeout_s=timeout_s,
            )
        except RunInterrupted as stop:  # the caller learns the store and the rows left out too
            if isinstance(stop.summary, RunSummary):
                stop.run = SuiteRun(summary=stop.summary, db_url=store.url, manifest_problems=problems,
                                    frame_options_applied=applied, profile_settings=own,
                                    frame_options_overridden=overridden, same_videos=twins.pairs)
            raise
        skipped = skipped_rows_line(problems)
        if skipped is not None:  # the summary counts the items scored; these never were
            warnings.warn(f"{manifest}: {skipped}; SuiteRun.manifest_problems (or `robojudge suite "
                          "validate`) lists them", SkippedRowsWarning, stacklevel=2)
        return SuiteRun(summary=summary, db_url=store.url, manifest_problems=problems,
                        frame_options_applied=applied, profile_settings=own,
                        frame_options_overridden=overridden, same_videos=twins.pairs)


def _items(suites: Iterator[Suite], problems: list[ManifestProblem],
           twins: SameVideos | None = None) -> Iterator[list[Item]]:
    """Each block's items, collecting its problems into ``problems`` as it is read, and its items whose
    video is an earlier item's file into ``twins``."""
    for suite in suites:
        problems.extend(suite.problems)
        if twins is not None:
            for item in suite.items:
                twins.see(item)
        yield suite.items
