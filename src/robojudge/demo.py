"""``robojudge demo``: build the embedded demo suite, score it, write a report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from robojudge.report import GroupSummary, report_suite
from robojudge.run import ProgressCallback, SuiteRun, score_suite
from robojudge.suite._demo import make_synthetic_suite

DEMO_METRICS: tuple[str, ...] = (
    "pixel_frame_consistency",
    "flow_warp_error",
    "flow_motion_magnitude_farneback",
)


@dataclass
class DemoResult:
    manifest: Path
    report_dir: Path
    run: SuiteRun
    summaries: list[GroupSummary]


def run_demo(
    out_dir: str | Path = "runs/demo",
    *,
    workers: int = 2,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> DemoResult:
    """Build the demo suite under ``out_dir/suite`` (once), score it, and report to ``out_dir/report``.

    Results go to ``out_dir/results.sqlite``; a second call reuses the suite and the stored results.
    """
    out = Path(out_dir)
    manifest = out / "suite" / "suite.jsonl"
    if not manifest.exists():
        make_synthetic_suite(out / "suite", seed=seed)
    db = f"sqlite:///{(out / 'results.sqlite').resolve()}"
    run = score_suite(manifest, DEMO_METRICS, db=db, workers=workers, progress=progress)
    summaries = report_suite(manifest, db, out / "report", by="generator", title="robojudge demo")
    return DemoResult(manifest=manifest, report_dir=out / "report", run=run, summaries=summaries)
