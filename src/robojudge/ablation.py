"""Frame-rate ablation runner (RoboJudge Table 9): the same judge at several sampling rates.

A top-level module, like :mod:`robojudge.demo`, because it wires two layers that must not import each
other: :mod:`robojudge.run` judges the items, :mod:`robojudge.report` tabulates agreement per rate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from robojudge import DEFAULT_SEED
from robojudge.judges import Backend, FrameSpec, JudgeConfig, ResponseCache, Rubric
from robojudge.report import FpsAblation, NoRateScoredError, fps_judge_name, tabulate_fps_ablation
from robojudge.run import JudgeRunSummary, default_run_dir, judge_items
from robojudge.store import ResultStore, default_db_url
from robojudge.suite import Item, load_suite

__all__ = ["NoRateScoredError", "NothingJudgedError", "fps_ablation_suite", "run_fps_ablation"]


class NothingJudgedError(ValueError):
    """Every rate's run failed without one reply (a server down, a wrong key) and nothing is stored to
    tabulate; ``runs`` holds each rate's summary."""

    def __init__(self, runs: dict[str, JudgeRunSummary]) -> None:
        super().__init__("nothing was judged: every request failed at every frame rate")
        self.runs = runs


def run_fps_ablation(
    items: Sequence[Item],
    judge: JudgeConfig,
    rubrics: Sequence[Rubric],
    rates: Sequence[float | None],
    store: ResultStore,
    *,
    max_frames: int | None = 32,
    size: int | tuple[int, int] | None = None,
    cache: ResponseCache | None = None,
    backend: Callable[[JudgeConfig], Backend] | None = None,
    bootstrap: int = 2000,
    seed: int = DEFAULT_SEED,
    **judge_kwargs: Any,
) -> FpsAblation:
    """Judge ``items`` once per sampling rate, then tabulate each rate's agreement with the labels.

    Args:
        items: Items with absolute paths (see :meth:`Item.resolve`); labelled ones enter the table.
        judge: The judge; each rate runs as a copy named :func:`fps_judge_name`.
        rubrics: Rubrics (``pa`` and ``ia`` for the table).
        rates: Sampling rates in frames per second (None: every decoded frame).
        store: Where the judgments go; stored ones are reused (the runs resume).
        max_frames: Frame cap at every rate (RoboJudge: 32).
        size: Frame resizing, as :class:`robojudge.judges.FrameSpec`.
        cache: Response cache (default: the user cache folder).
        backend: Builds the backend of each rate's judge (tests pass a scripted mock); default from config.
        bootstrap: Cluster-bootstrap replicates.
        seed: Bootstrap seed.
        **judge_kwargs: Passed to :func:`robojudge.run.judge_items` (scoring, samples, retry_errors...).

    Returns:
        A :class:`FpsAblation`; a rate none of whose judgments is scored (every reply unparsable) is
        left out of its table and named in ``left_out``.

    Raises:
        NothingJudgedError: Not one reply at any rate, and no stored judgment to tabulate.
        NoRateScoredError: Replies came, but no rate has a scored judgment (every reply unparsable).
    """
    if not rates:
        raise ValueError("give at least one frame rate")
    if len(set(rates)) != len(rates):
        raise ValueError(f"frame rates must be distinct, got {list(rates)}")
    runs: dict[str, JudgeRunSummary] = {}
    for rate in rates:
        cfg = judge.model_copy(update={"name": fps_judge_name(judge.name, rate)})
        spec = FrameSpec(fps=rate, max_frames=max_frames, size=size)
        be = backend(cfg) if backend is not None else None
        runs[cfg.name] = judge_items(items, cfg, rubrics, store, frames=spec, cache=cache, backend=be,
                                     **judge_kwargs)
    try:
        return tabulate_fps_ablation(store, items, judge.name, rates, bootstrap=bootstrap, seed=seed,
                                     runs=runs)
    except ValueError as exc:
        if all(s.judged_nothing for s in runs.values()):
            raise NothingJudgedError(runs) from None
        if isinstance(exc, NoRateScoredError):
            exc.runs = runs
        raise


def fps_ablation_suite(
    manifest: str | Path,
    judge: JudgeConfig,
    rubrics: Sequence[Rubric],
    rates: Sequence[float | None],
    *,
    db: str | None = None,
    **kwargs: Any,
) -> FpsAblation:
    """:func:`run_fps_ablation` over a manifest's usable items, into the store at ``db`` (default: the
    store of the run folder the manifest lies in, else ``runs/<manifest name>/results.sqlite``, created
    when missing); ``kwargs`` go to it.

    Raises:
        ManifestError: The manifest cannot be read.
        StoreError: The store cannot be opened, or stopped taking rows during a rate's run
            (:class:`robojudge.run.RunStoppedError`).
        ValueError: Bad rates (see :func:`run_fps_ablation`).
    """
    items = list(load_suite(manifest, strict=False).items)
    with ResultStore(db or default_db_url(default_run_dir(manifest))) as store:
        return run_fps_ablation(items, judge, rubrics, rates, store, **kwargs)
