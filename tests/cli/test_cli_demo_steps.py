"""``robojudge demo``'s progress: the scoring run's lines end when scoring ends; each later step (KIVA's
readers and scoring, the report) shows its own."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from robojudge.cli import _common, _demo
from robojudge.run import RunSummary
from robojudge.store import ResultRow

ROW = ResultRow(item_id="a", metric="m", config_hash="h", version="1", status="ok", value=1.0)


def _lines_until(out: io.StringIO, text: str) -> None:
    deadline = time.monotonic() + 10
    while text not in out.getvalue():
        assert time.monotonic() < deadline, out.getvalue()
        time.sleep(0.02)


def test_the_demo_stops_saying_scoring_once_it_moved_on(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()  # not a terminal: a line every `every` seconds, as in a log
    monkeypatch.setattr(_common, "err_console", Console(file=out, force_terminal=False, width=200))
    with _demo._Steps(True, 0.05) as steps:
        on_result = steps.scoring()
        assert on_result is not None
        done = RunSummary(total=2, ok=2)
        on_result(ROW, done)
        _lines_until(out, "scoring: 2/2 results (100%)")
        assert steps("KIVA: the fetch reader", False) is None  # training: time elapsed, no count
        _lines_until(out, "KIVA: the fetch reader: ")
        kiva = steps("KIVA (fetch)", True)
        assert kiva is not None
        kiva(ROW, RunSummary(total=3, ok=1))
        _lines_until(out, "KIVA (fetch): 1/3 results (33%)")
        steps("writing the report", False)
        _lines_until(out, "writing the report: ")
        time.sleep(0.2)
    lines = out.getvalue().splitlines()
    first_step = next(i for i, line in enumerate(lines) if line.startswith("KIVA"))
    assert not [line for line in lines[first_step:] if line.startswith("scoring")]
    report = next(i for i, line in enumerate(lines) if line.startswith("writing the report"))
    assert not [line for line in lines[report:] if line.startswith("KIVA")]
