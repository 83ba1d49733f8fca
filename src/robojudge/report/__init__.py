"""Reports of stored results: summaries, CSV and Markdown."""

from robojudge.report._labels import LabelAgreement, label_agreement, write_label_agreement
from robojudge.report._suite import GROUP_FIELDS, group_by_field, report_suite
from robojudge.report._summary import GroupSummary, summarize, summary_markdown, write_report

__all__ = [
    "GROUP_FIELDS",
    "GroupSummary",
    "LabelAgreement",
    "group_by_field",
    "label_agreement",
    "report_suite",
    "summarize",
    "summary_markdown",
    "write_label_agreement",
    "write_report",
]
