"""``robojudge score``."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import typer
from rich.markup import escape

from robojudge.cli._common import (
    check_settings,
    console,
    fail,
    parse_settings,
    print_manifest_problems,
    print_plain,
    print_report_hint,
    print_rescored_libraries,
    print_skipped_rows,
    print_summary,
    print_untested_libraries,
    progress_every_option,
    progress_option,
    scoring_progress,
    store_failed,
)
from robojudge.metrics import (
    ALL_METRICS,
    FrameOptions,
    UnknownMetricError,
    inapplicable_summary,
    not_run_summary,
)
from robojudge.run import (
    EstimateOnce,
    ProgressCallback,
    RunInterrupted,
    RunStoppedError,
    RunSummary,
    SuiteRun,
    WorkerStartError,
    score_suite,
)
from robojudge.run._ray import RayUnavailableError
from robojudge.store import StoreError
from robojudge.suite import ManifestError, SkippedRowsWarning, same_videos_note


def score(
    suite: Path = typer.Argument(..., help="Suite manifest (.jsonl, .csv or .parquet)."),
    metrics: str = typer.Option(
        ..., "--metrics", "-m", help="Comma-separated metric ids; 'all' = every metric robojudge computes."
    ),
    db: str | None = typer.Option(
        None, "--db", help="Result store URL, SQLite path or run folder \\[default: RUN_DIR/results.sqlite]."
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir",
        help=("Run folder for the default store \\[default: the run folder holding the "
              "manifest, else runs/<manifest name>].")
    ),
    workers: int | None = typer.Option(
        None, "--workers", "-w", min=1, help="Worker processes \\[default: 1]; with --executor ray, tasks "
        "running at once \\[default: the cluster's CPUs]."
    ),
    executor: str = typer.Option(
        "local", "--executor", help="Where tasks run: 'local' (this machine) or 'ray' (a Ray cluster; "
        "needs pip install '.\\[ray]' in a robojudge checkout). See docs/ray.md."
    ),
    address: str | None = typer.Option(
        None, "--address", help="With --executor ray: 'auto' (the cluster this machine is in) \\[default], "
        "'local' (a private Ray instance here), ray://HOST:PORT (Ray Client) or HOST:PORT."
    ),
    settings: list[str] = typer.Option(
        [], "--set", help="Metric setting METRIC.KEY=VALUE (repeatable); a new setting makes new rows."
    ),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="Recompute stored failures."),
    rescore_unknown: bool = typer.Option(
        False, "--rescore-unknown", help="Recompute stored results that have no inputs fingerprint (stored "
        "by robojudge before result schema 2), or one of an older recipe (before the network weights, or "
        "what a metric reads of items that have it, were part of it); by default they are kept."
    ),
    rescore_libraries: bool = typer.Option(
        False, "--rescore-libraries", help="Recompute stored results computed with other versions of the "
        "libraries under them (OpenCV, FFmpeg, NumPy...; details.libraries) than installed; the old rows "
        "are kept, superseded. By default they are kept as they are."
    ),
    progress: bool = progress_option(),
    progress_every: float = progress_every_option(),
    confine: Path | None = typer.Option(
        None, "--confine", help="Refuse items with files outside this folder \\[default: $ROBOJUDGE_CONFINE]."
    ),
    size: int | None = typer.Option(
        None, "--size", min=1, help="Evaluation size: metrics that read frames at native size read every "
        "video scaled so its longer side has this many px (compare generators of different resolutions)."
    ),
    max_side: int | None = typer.Option(
        None, "--max-side", min=1, help="Scale down videos whose longer side exceeds this many px, for the "
        "metrics that read frames at native size (faster; sizes may still differ between videos)."
    ),
    max_frames: int | None = typer.Option(
        None, "--max-frames", min=2, help="Read at most this many frames of each video, from the start, "
        "in the metrics that read every frame (a cap on the cost of long videos)."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.001, help="Seconds one metric may take on one item (the frames the item's "
        "metrics share are read within the same limit); past it the metric is stopped, its row is an error "
        "saying so and the run goes on \\[default: no limit]. See docs/performance.md."
    ),
    fast: bool = typer.Option(
        False, "--fast", help="Fast evaluation profile for the metrics that read frames at native size: "
        "a 640 px longer side (unless --size/--max-side), DIS 'fast' flow, about 8 frame pairs per second, "
        "one Farneback iteration in the 8 fps 256x256 flow pair. Values differ from native ones and are "
        "stored apart (docs/metrics.md, 'The fast profile')."
    ),
) -> None:
    """Score every item of SUITE with the given metrics; rerun to resume after a crash."""
    check_settings(skip=("decode_workers",))  # (only judges decode in worker processes)
    ids = [m.strip() for m in metrics.split(",") if m.strip()]
    if not ids:
        raise fail("--metrics is empty")
    if ALL_METRICS in ids:
        for line in not_run_summary():
            console.print(f"[yellow]all:[/] {escape(line)}", markup=True, highlight=False)
    frames = FrameOptions(size=size, max_side=max_side, max_frames=max_frames,
                          profile="fast" if fast else "native")
    try:
        with _progress(progress, progress_every) as on_result, warnings.catch_warnings():
            warnings.simplefilter("ignore", SkippedRowsWarning)  # said below: the rows, then their count
            run = score_suite(
                suite,
                ids,
                db=db,
                run_dir=run_dir,
                configs=parse_settings(settings),
                workers=workers,
                executor=executor,
                address=address,
                retry_errors=retry_errors,
                progress=on_result,
                confine=confine,
                rescore_unknown=rescore_unknown,
                frames=frames,
                rescore_libraries=rescore_libraries,
                timeout_s=timeout,
            )
    except RunInterrupted as exc:  # what was done is stored: said below as for a whole run, then 130
        if not isinstance(exc.run, SuiteRun):
            raise
        run = exc.run
    except RunStoppedError as exc:  # after work started: what was done, then why it stopped
        if isinstance(exc.summary, RunSummary):
            print_summary(exc.summary)
        raise store_failed(str(exc), f"{exc.summary.stored} results", exc.url, exc.in_flight) from None
    except (UnknownMetricError, ManifestError, StoreError, ValueError, FileNotFoundError,
            RayUnavailableError, WorkerStartError) as exc:
        raise fail(str(exc)) from None
    print_manifest_problems(run.manifest_problems)
    print_frame_options(frames, run.frame_options_applied, run.profile_settings, run.frame_options_overridden)
    print_summary(run.summary)
    print_skipped_rows(run.manifest_problems)
    twice = same_videos_note(run.same_videos)
    if twice is not None:
        console.print(f"[yellow]{escape(twice)}[/]", markup=True, highlight=False)
    print_metric_time(run.summary)
    for line in inapplicable_summary(run.summary.not_applicable, run.summary.not_applicable_lacking):
        console.print(f"[yellow]all:[/] {escape(line)}", markup=True, highlight=False)
    print_input_changes(run.summary, rescore_unknown)
    print_rescored_libraries(run.summary.rescored_libraries)
    if run.summary.other_libraries:
        console.print(f"{run.summary.other_libraries} stored results kept were computed with other library "
                      "versions than installed here (OpenCV, FFmpeg, NumPy...; values can differ, "
                      "docs/report.md \"Library versions\"): `robojudge results status` lists them, "
                      "--rescore-libraries recomputes them", highlight=False, markup=False)
    for (metric, stored, installed), n in sorted(run.summary.other_versions.items()):
        console.print(f"{n} stored result{'s' if n != 1 else ''} of {metric} {'are' if n != 1 else 'is'} of "
                      f"version {stored} (this robojudge computes version {installed}): computed again "
                      "beside them, which are kept (`robojudge results status` lists them)",
                      highlight=False, markup=False)
    if run.summary.taken_over:
        console.print(f"{run.summary.taken_over} stored results of the same files named by other paths (a "
                      "moved project) were taken over under this configuration, not computed again",
                      highlight=False)
    print_video_warnings(run.summary)
    print_untested_libraries(run.summary.metric_seconds)
    console.print(f"results: {run.db_url}", highlight=False)
    print_report_hint(suite, run_dir, db)
    if run.summary.interrupted:
        raise typer.Exit(130)
    if run.summary.measured_nothing:
        console.print("[bold red]nothing was measured:[/] every task of this run that reads an input "
                      "failed (exit status 1)", markup=True, highlight=False)
        raise typer.Exit(1)


def _frame_flag(key: str, value: Any) -> str:
    """The option of the command line that gives a :class:`FrameOptions` value: ``--size 64``, ``--fast``
    (resample has no flag of its own: from the command line it comes with --fast)."""
    return "--fast" if key in ("profile", "resample") else f"--{key.replace('_', '-')} {value}"


def print_frame_options(frames: FrameOptions, applied: list[str],
                        own: dict[str, dict[str, Any]] | None = None,
                        overridden: dict[str, dict[str, Any]] | None = None) -> None:
    """Which metrics ``--size``, ``--max-side``, ``--max-frames`` and ``--fast`` applied to (none is worth a
    warning), and the settings of its own ``--fast`` gave (``own``, :attr:`SuiteRun.profile_settings`).
    A metric whose ``--set`` replaced some of them (``overridden``,
    :attr:`SuiteRun.frame_options_overridden`) is said apart, with the setting that won."""
    if not frames:
        return
    if own:
        console.print("--fast also set: " + "; ".join(
            f"{m} " + ", ".join(f"{k}={v}" for k, v in values.items()) for m, values in own.items()),
            highlight=False, markup=False)
        if not applied:
            return
    # resample has no flag of its own: from the command line it comes with --fast
    given = ", ".join("--fast" if k == "profile" else f"--{k.replace('_', '-')} {v}"
                      for k, v in frames.values().items() if k != "resample")
    if not applied:
        console.print(f"[yellow]{given} applied to no requested metric[/] (they apply to the metrics that "
                      "read frames at native size; the others read frames at their own settings)",
                      markup=True, highlight=False)
        return
    overridden = overridden or {}
    values = frames.values()
    won = "; ".join(
        f"for {m} " + ", ".join(f"--set {m}.{k}={v if isinstance(v, str) else json.dumps(v)} won over "
                                # (a size wins over a run-wide --max-side too)
                                + (_frame_flag(k, values[k]) if k in values else
                                   _frame_flag("max_side", values["max_side"]))
                                for k, v in keys.items())
        for m, keys in overridden.items())
    clean = [m for m in applied if m not in overridden]
    if not clean:
        console.print(f"{given} applied to no requested metric as given: {won}", highlight=False,
                      markup=False)
        return
    console.print(f"{given} applied to {', '.join(clean)}; " + (f"{won}; " if won else "")
                  + "the other metrics read frames at their own settings", highlight=False, markup=False)


@contextmanager
def _progress(enabled: bool, every: float) -> Iterator[ProgressCallback]:
    """:func:`scoring_progress`, and in every case one line estimating the time left once the first
    results are in."""
    with scoring_progress(enabled, every) as on_result:
        yield EstimateOnce(print_plain, on_result)


def print_metric_time(summary: RunSummary, *, top: int = 5) -> None:
    """Which metrics took the time: the largest worker-second totals of the run, with their share."""
    total = sum(summary.metric_seconds.values())
    if total <= 0:
        return
    parts = [f"{m} {s:.1f} s ({100 * s / total:.0f}%)" for m, s in summary.top_metrics(top)]
    more = len(summary.metric_seconds) - top
    console.print(f"time by metric ({total:.1f} worker-seconds): {', '.join(parts)}"
                  + (f", {more} more" if more > 0 else ""), highlight=False, markup=False)


class InputChanges(Protocol):
    """What a run found about its stored results' inputs (a :class:`RunSummary` or a judge's)."""

    stale: int
    unknown: int
    unavailable: int


def print_input_changes(summary: InputChanges, rescore_unknown: bool) -> None:
    """Stored results recomputed because their inputs changed, kept because their inputs cannot be
    read now, and results without a fingerprint (``robojudge score`` and ``robojudge judge``)."""
    if summary.unavailable:
        console.print(f"[yellow]{summary.unavailable} stored results were kept because their inputs cannot "
                      "be read now[/] (missing or unreadable files: a drive or share not mounted?); the "
                      "next run checks them again", markup=True, highlight=False)
    if summary.stale:
        console.print(f"{summary.stale} stored results were recomputed because their inputs changed "
                      "(the old rows are kept, superseded)", highlight=False)
    if summary.unknown and rescore_unknown:
        console.print(f"{summary.unknown} stored results without an inputs fingerprint were recomputed "
                      "(the old rows are kept, superseded)", highlight=False)
    elif summary.unknown:
        console.print(f"[yellow]{summary.unknown} stored results have no inputs fingerprint[/] (stored "
                      "before result schema 2), or one of an older recipe, and were kept: `robojudge results "
                      "status` lists them, --rescore-unknown recomputes them", markup=True, highlight=False)


class VideoWarned(Protocol):
    """Rows a run stored with video warnings, and those warnings by item (a :class:`RunSummary` or a
    judge's)."""

    warned: int
    video_warnings: dict[str, list[str]]


def print_video_warnings(summary: VideoWarned, *, limit: int = 20) -> None:
    """What had to be assumed about the videos (an assumed rate, unusable time stamps), per item
    (``robojudge score`` and ``robojudge judge``)."""
    if not summary.warned:
        return
    n, items = summary.warned, len(summary.video_warnings)
    rows, where = f"result{'s' if n != 1 else ''}", f"item{'s' if items != 1 else ''}"
    console.print(f"[yellow]{n} {rows} with video warnings ({items} {where}):[/]", markup=True,
                  highlight=False)
    lines = [f"  {item}: {w}" for item, found in summary.video_warnings.items() for w in found]
    for line in lines[:limit]:
        console.print(line, highlight=False, markup=False)
    if len(lines) > limit:
        more = len(lines) - limit
        console.print(f"  ... and {more} more (details.video_warnings in `robojudge results export`)")
