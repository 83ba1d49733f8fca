"""A stopped run's summary on stdout says that it was stopped and how many tasks it did not run (audit
logging F7): before, "12 tasks: 4 scored, 0 failed, 0 already stored" alone, as for a whole run, the
interruption said on stderr only."""

from __future__ import annotations

import pytest

from robojudge.cli._common import print_summary
from robojudge.run import RunSummary


def test_a_stopped_summary_counts_the_tasks_not_run_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(RunSummary(total=12, ok=4, skipped=0, interrupted=True, seconds=1.4))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("12 tasks: 4 scored, 0 failed, 0 already stored")
    assert "stopped: 8 tasks not run (the same command resumes)" in out


def test_a_whole_run_says_nothing_of_it(capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(RunSummary(total=12, ok=12, seconds=1.4))
    assert "stopped" not in capsys.readouterr().out
