"""``robojudge demo``: build the embedded demo suite, score it, write a report ending in index.html."""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from robojudge.meta import Leaderboard
from robojudge.metric_info import direction, registry_range
from robojudge.metrics import expand_metric_ids
from robojudge.report import (
    GroupSummary,
    HtmlReport,
    JudgeRow,
    LabelAgreement,
    generator_board,
    judges_report,
    label_agreement,
    label_scores,
    report_suite,
    write_html_report,
    write_judges,
    write_label_agreement,
    write_leaderboard,
)
from robojudge.run import ProgressCallback, SuiteRun, score_suite
from robojudge.store import ResultStore
from robojudge.suite import load_suite
from robojudge.suite._demo import make_synthetic_suite

log = logging.getLogger(__name__)
SuiteKind = Literal["auto", "sim", "synthetic"]

# The 2D suite has no state files or simulator truth: only the video metrics apply to it.
SYNTHETIC_METRICS: tuple[str, ...] = (
    "pixel_frame_consistency",
    "flow_warp_error",
    "flow_motion_magnitude_farneback",
)
# On the simulator suite every weights-free metric applies (references and state files exist), and
# every model-backed one whose weights this machine has; BLEU is left out because the suite has no
# captions (they come from a captioning judge, `robojudge judge --rubric caption`).
SIM_METRICS: tuple[str, ...] = ("all",)
SIM_SKIP: frozenset[str] = frozenset({"sa_bleu"})


@dataclass
class DemoResult:
    suite_kind: str
    manifest: Path
    report_dir: Path
    run: SuiteRun
    summaries: list[GroupSummary]
    agreement: list[LabelAgreement]
    leaderboard: Leaderboard | None
    judges: list[JudgeRow]
    html: HtmlReport | None = None


def sim_available() -> bool:
    """Whether the simulator extra (MuJoCo, gymnasium-robotics) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("mujoco", "gymnasium_robotics"))


def build_demo_suite(folder: Path, kind: SuiteKind = "auto", *, seed: int = 0) -> tuple[str, Path]:
    """Build (once) the demo suite in ``folder``; ``auto`` means the simulator suite when installed.

    Returns the kind actually built and the manifest path. An existing manifest is reused as is.
    """
    manifest = folder / "suite.jsonl"
    marker = folder / "SUITE_KIND"
    if manifest.exists():
        return (marker.read_text().strip() if marker.exists() else "synthetic"), manifest
    if kind == "auto":
        kind = "sim" if sim_available() else "synthetic"
        if kind == "synthetic":
            log.warning("simulator extra not installed (pip install 'robojudge[sim]'): using the 2D suite")
    if kind == "sim":
        from robojudge.suite.sim import make_sim_suite

        make_sim_suite(folder, seed=seed)
    else:
        make_synthetic_suite(folder, seed=seed)
    marker.write_text(kind + "\n")
    return kind, manifest


def run_demo(
    out_dir: str | Path = "runs/demo",
    *,
    suite: SuiteKind = "auto",
    workers: int = 2,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> DemoResult:
    """Build the demo suite under ``out_dir/suite`` (once), score it, and report to ``out_dir/report``.

    Results go to ``out_dir/results.sqlite``; a second call reuses the suite and the stored results.
    """
    out = Path(out_dir)
    kind, manifest = build_demo_suite(out / "suite", suite, seed=seed)
    db = f"sqlite:///{(out / 'results.sqlite').resolve()}"
    metrics = ([m for m in expand_metric_ids(SIM_METRICS) if m not in SIM_SKIP] if kind == "sim"
               else list(SYNTHETIC_METRICS))
    run = score_suite(manifest, metrics, db=db, workers=workers, progress=progress)
    summaries = report_suite(manifest, db, out / "report", by="generator", title="robojudge demo",
                             native_range=registry_range)
    with ResultStore(db) as store:
        rows = store.rows()
    items = load_suite(manifest, strict=False).items
    labelled = [it for it in items if it.labels is not None]
    agreement = label_agreement(rows, items, direction, seed=seed)
    write_label_agreement(agreement, out / "report")
    board: Leaderboard | None = None
    judges: list[JudgeRow] = []
    if labelled:
        # The labels' own leaderboard: on the simulator suite it is the planted ranking, with CIs.
        board = generator_board(labelled, label_scores(labelled), seed=seed)
        write_leaderboard(board, out / "report", title="Generators by their planted labels")
        report, judges, _, _ = judges_report(rows, items, direction, seed=seed)
        write_judges(judges, report, out / "report", note="metric-calibrated: fit on the stored metrics, "
                     "scored out of fold (grouped by clip); no VLM involved")
    # Last: the self-contained HTML report over everything above (plots, CSV, Markdown, LaTeX tables).
    html = write_html_report(db, out / "report", manifest=manifest, higher_is_better=direction,
                             native_range=registry_range,
                             title=f"robojudge demo ({kind} suite)", seed=seed)
    return DemoResult(
        suite_kind=kind,
        manifest=manifest,
        report_dir=out / "report",
        run=run,
        summaries=summaries,
        agreement=agreement,
        leaderboard=board,
        judges=judges,
        html=html,
    )
