"""``robojudge demo`` stopped by ``kill`` (SIGTERM) while it scores stops there: exit status 130, no KIVA
training, no report. Before, it went on to write the report from the partial results and exited 0
(audit s70_notebook 2)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from _procs import stopped

pytestmark = pytest.mark.slow


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute("select count(*) from robojudge_results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_a_demo_stopped_while_scoring_exits_130_without_a_report(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    args = ["demo", "--suite", "synthetic", "--out", str(out), "--no-progress", "--workers", "1"]
    status, said = stopped(args, lambda pid: _stored(out / "results.sqlite") > 0)
    assert status == 130, said
    assert "interrupted: stored results are kept; rerun the same command to resume." in said
    assert "tasks:" in said  # the summary of what was scored
    assert "demo summary" not in said and "HTML report" not in said
    assert not (out / "report").exists()
    assert 0 < _stored(out / "results.sqlite") < 63  # stopped mid-run; what was scored is kept
