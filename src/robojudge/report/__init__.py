"""Reports of stored results: summaries, CSV and Markdown."""

from robojudge.report._suite import GROUP_FIELDS, group_by_field, report_suite
from robojudge.report._summary import GroupSummary, summarize, summary_markdown, write_report

__all__ = [
    "GROUP_FIELDS",
    "GroupSummary",
    "group_by_field",
    "report_suite",
    "summarize",
    "summary_markdown",
    "write_report",
]
