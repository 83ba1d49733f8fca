"""The progress bar of ``robojudge score`` follows a total that grows as blocks are planned."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from robojudge.cli import _common
from robojudge.run import RunSummary
from robojudge.store import ResultRow


def test_the_bar_total_grows_with_the_planned_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=out, force_terminal=True, width=120))
    summary = RunSummary(total=2)
    row = ResultRow(item_id="a", metric="m", config_hash="h", version="1", status="ok", value=1.0)
    with _common.scoring_progress(True) as on_result:
        assert on_result is not None
        for done in range(1, 6):
            summary.ok = done
            summary.total = 2 if done <= 2 else 5  # the second block is planned after two results
            on_result(row, summary)
    final = out.getvalue().rsplit("\r", 1)[-1]
    assert "5/5" in final and "100%" in final
