"""Worker processes log as their parent does: ``robojudge -v`` means the same with any number of workers,
and a worker's WARNING keeps its level and logger name (audit logging F5)."""

from __future__ import annotations

import logging
import sys

import _toy_metrics  # tests/run is on sys.path
import pytest

from robojudge.run import LocalProcessExecutor


def test_workers_log_debug_records_with_level_and_name(capfd: pytest.CaptureFixture[str]) -> None:
    # The root logger as `robojudge -v` sets it up: a handler on stderr (here the one capfd captures, made
    # in the test itself: pytest gives a fixture another stderr) at DEBUG.
    root, level = logging.getLogger(), logging.getLogger().level
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        ex = LocalProcessExecutor(2)
        assert sorted(v for _, v in ex.map_unordered(_toy_metrics.log_in_worker, [1, 2], str)) == [1, 2]
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    err = capfd.readouterr().err
    # Before: no DEBUG line at all, and "WARNLINE 1" alone (Python's last-resort handler).
    for value in (1, 2):
        assert f"DEBUG robojudge.test_worker: DEBUGLINE {value}" in err, err
        assert f"WARNING robojudge.test_worker: WARNLINE {value}" in err, err
