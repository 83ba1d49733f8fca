"""Reports of stored results: summaries, CSV and Markdown."""

from robojudge.report._summary import GroupSummary, summarize, summary_markdown, write_report

__all__ = ["GroupSummary", "summarize", "summary_markdown", "write_report"]
