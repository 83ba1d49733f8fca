"""Reports of stored results: summaries, leaderboards, CSV and Markdown."""

from robojudge.report._labels import LabelAgreement, label_agreement, write_label_agreement
from robojudge.report._leaderboard import (
    CALIBRATED,
    CalibratedJudge,
    JudgeRow,
    calibrated_scores,
    generator_board,
    judge_names,
    judge_scores,
    judge_table,
    judges_markdown,
    judges_report,
    label_scores,
    leaderboard_markdown,
    metric_features,
    write_judges,
    write_leaderboard,
)
from robojudge.report._suite import GROUP_FIELDS, group_by_field, report_suite
from robojudge.report._summary import GroupSummary, summarize, summary_markdown, write_report

__all__ = [
    "CALIBRATED",
    "GROUP_FIELDS",
    "CalibratedJudge",
    "GroupSummary",
    "JudgeRow",
    "LabelAgreement",
    "calibrated_scores",
    "generator_board",
    "group_by_field",
    "judge_names",
    "judge_scores",
    "judge_table",
    "judges_markdown",
    "judges_report",
    "label_agreement",
    "label_scores",
    "leaderboard_markdown",
    "metric_features",
    "report_suite",
    "summarize",
    "summary_markdown",
    "write_judges",
    "write_label_agreement",
    "write_leaderboard",
    "write_report",
]
