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


def test_a_run_stopped_before_its_last_block_was_planned_says_at_least(
        capsys: pytest.CaptureFixture[str]) -> None:
    # A manifest read 2,000 rows at a time: the total counts the blocks planned before the stop, so the
    # figure is a floor (review rev14 F6: "1988 tasks not run" where 4,488 were)
    print_summary(RunSummary(total=2000, ok=12, interrupted=True, all_planned=False, seconds=11.2))
    assert "stopped: at least 1988 tasks not run (the same command resumes)" in capsys.readouterr().out
