"""Reports of stored results: summaries, leaderboards, the HTML report with plots, CSV, Markdown and LaTeX."""

from robojudge.report._ablation import FpsAblation, fps_judge_name, tabulate_fps_ablation
from robojudge.report._audit import (
    audit_section,
    frontier_table,
    retention_table,
    sample_size_section,
    sample_size_table,
)
from robojudge.report._html import HtmlReport, noted_manifest, render_page, resolve_source, write_html_report
from robojudge.report._judges import (
    Coverage,
    JudgeRow,
    JudgesResult,
    judge_coverage,
    judge_names,
    judge_scores,
    judge_table,
    judges_markdown,
    judges_report,
    write_judges,
)
from robojudge.report._kiva import KivaGroup, kiva_groups, kiva_table
from robojudge.report._labels import LabelAgreement, label_agreement, write_label_agreement
from robojudge.report._leaderboard import (
    CALIBRATED,
    CalibratedJudge,
    Feature,
    calibrated_scores,
    generator_board,
    label_scores,
    leaderboard_markdown,
    metric_columns,
    write_leaderboard,
)
from robojudge.report._libraries import MixedLibraries, mixed_libraries, mixed_library_note, parse_libraries
from robojudge.report._score_sources import (
    SCORE_SOURCES,
    ScoreRequest,
    ScoreSource,
    UnknownScoreSource,
    leaderboard_scores,
)
from robojudge.report._sections import ReportInput, Section
from robojudge.report._series import (
    JudgeSeries,
    Series,
    SeriesKey,
    StoredSeries,
    judge_series,
    metric_series,
)
from robojudge.report._sizes import MixedSizes, mixed_size_note, mixed_sizes
from robojudge.report._suite import GROUP_FIELDS, group_by_field, report_suite
from robojudge.report._summary import GroupSummary, summarize, summary_markdown, write_report
from robojudge.report._tables import Cell, Table, latex_escape

__all__ = [
    "CALIBRATED",
    "GROUP_FIELDS",
    "SCORE_SOURCES",
    "CalibratedJudge",
    "Cell",
    "Coverage",
    "Feature",
    "FpsAblation",
    "GroupSummary",
    "HtmlReport",
    "JudgeRow",
    "KivaGroup",
    "MixedLibraries",
    "MixedSizes",
    "JudgeSeries",
    "JudgesResult",
    "LabelAgreement",
    "ReportInput",
    "ScoreRequest",
    "ScoreSource",
    "Section",
    "Series",
    "SeriesKey",
    "StoredSeries",
    "Table",
    "UnknownScoreSource",
    "audit_section",
    "calibrated_scores",
    "fps_judge_name",
    "frontier_table",
    "generator_board",
    "group_by_field",
    "judge_coverage",
    "judge_names",
    "judge_scores",
    "judge_series",
    "judge_table",
    "judges_markdown",
    "judges_report",
    "kiva_groups",
    "kiva_table",
    "label_agreement",
    "label_scores",
    "latex_escape",
    "leaderboard_markdown",
    "mixed_libraries",
    "mixed_library_note",
    "mixed_size_note",
    "mixed_sizes",
    "parse_libraries",
    "leaderboard_scores",
    "metric_columns",
    "metric_series",
    "noted_manifest",
    "render_page",
    "report_suite",
    "resolve_source",
    "retention_table",
    "sample_size_section",
    "sample_size_table",
    "summarize",
    "summary_markdown",
    "tabulate_fps_ablation",
    "write_judges",
    "write_label_agreement",
    "write_html_report",
    "write_leaderboard",
    "write_report",
]
