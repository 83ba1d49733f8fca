"""Running metrics over a suite: executors, resume, progress; the state and export of a run's results."""

from robojudge._lifeline import WorkerStartError
from robojudge._tested import TESTED, install_tested, untested_libraries
from robojudge.judges import judge_metric_id
from robojudge.run._api import (
    SuiteResults,
    SuiteRun,
    build_requests,
    load_suite_results,
    score_suite,
)
from robojudge.run._executor import (
    Executor,
    LocalProcessExecutor,
    SerialExecutor,
    make_executor,
)
from robojudge.run._export import export_run
from robojudge.run._import import (
    ImportProblem,
    ImportReport,
    MetricCounts,
    ResultImportError,
    import_config,
    import_config_hash,
    import_results,
)
from robojudge.run._judge import (
    JudgeSuiteRun,
    draft_from_store,
    judge_items,
    judge_suite,
    judge_texts,
    plan_judgments,
    with_model_files,
    write_drafts,
    write_judge_texts,
)
from robojudge.run._judge_rows import JudgePlan, JudgeProgress, JudgeRunSummary
from robojudge.run._libraries import FRAME_LIBRARIES, library_versions, reads_frames
from robojudge.run._progress import EstimateOnce, ProgressLines, judging_line, progress_line
from robojudge.run._score import (
    MetricRequest,
    ProgressCallback,
    RunInterrupted,
    RunStoppedError,
    RunSummary,
    Task,
    compute_metric,
    compute_task,
    plan_tasks,
    score_items,
)
from robojudge.run._sets import SetRunSummary, score_set_suite, score_sets_into
from robojudge.run._status import (
    MetricStatus,
    StaleResult,
    StoreStatus,
    remembered_stale,
    results_status,
    stale_rows,
    status_suite,
)
from robojudge.run._where import default_run_dir, suite_store_url

__all__ = [
    "ImportProblem",
    "ImportReport",
    "MetricCounts",
    "ResultImportError",
    "import_config",
    "import_config_hash",
    "import_results",
    "JudgePlan",
    "JudgeProgress",
    "JudgeRunSummary",
    "JudgeSuiteRun",
    "draft_from_store",
    "judge_items",
    "judge_metric_id",
    "judge_suite",
    "judge_texts",
    "plan_judgments",
    "with_model_files",
    "write_drafts",
    "write_judge_texts",
    "Executor",
    "LocalProcessExecutor",
    "WorkerStartError",
    "MetricStatus",
    "MetricRequest",
    "ProgressCallback",
    "EstimateOnce",
    "ProgressLines",
    "judging_line",
    "progress_line",
    "RunInterrupted",
    "RunStoppedError",
    "RunSummary",
    "SerialExecutor",
    "SetRunSummary",
    "StaleResult",
    "StoreStatus",
    "SuiteResults",
    "SuiteRun",
    "Task",
    "build_requests",
    "compute_metric",
    "default_run_dir",
    "compute_task",
    "export_run",
    "FRAME_LIBRARIES",
    "library_versions",
    "reads_frames",
    "TESTED",
    "install_tested",
    "untested_libraries",
    "load_suite_results",
    "make_executor",
    "plan_tasks",
    "remembered_stale",
    "results_status",
    "stale_rows",
    "score_items",
    "score_set_suite",
    "score_sets_into",
    "score_suite",
    "status_suite",
    "suite_store_url",
]
