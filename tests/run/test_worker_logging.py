"""Worker processes log as their parent does: ``robojudge -v`` means the same with any number of workers,
and a worker's WARNING keeps its level and logger name (audit logging F5)."""

from __future__ import annotations

import logging
import sys

import _toy_metrics  # tests/run is on sys.path
import pytest

from robojudge._lifeline import WORKERS_LOG_ALIKE
from robojudge.run import LocalProcessExecutor
from robojudge.run._executor import parent_log_setup


def test_workers_log_debug_records_with_level_and_name(capfd: pytest.CaptureFixture[str]) -> None:
    # The root logger as `robojudge -v` sets it up: a handler on stderr (here the one capfd captures, made
    # in the test itself: pytest gives a fixture another stderr) at DEBUG.
    root, level = logging.getLogger(), logging.getLogger().level
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    setattr(handler, WORKERS_LOG_ALIKE, True)  # (as the command line marks the handler it makes)
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


def test_a_python_caller_s_own_logging_is_not_copied_into_workers() -> None:
    # A caller's handler ({-style format, a colour formatter, a handler level, logging.disable) was copied
    # as a %-format and root level: a {-style format stopped the run with a misleading main-guard error,
    # a colour formatter printed 'Logging error' tracebacks (review rev14 F2). Only the command line's own
    # handler is copied; a caller's workers keep Python's defaults.
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("{levelname} {name}: {message}", style="{"))
    root.addHandler(handler)
    try:
        assert parent_log_setup() is None
        ex = LocalProcessExecutor(2)
        assert sorted(v for _, v in ex.map_unordered(_toy_metrics.log_in_worker, [1, 2], str)) == [1, 2]
        setattr(handler, WORKERS_LOG_ALIKE, True)
        assert parent_log_setup() is not None
        logging.disable(logging.CRITICAL)
        assert parent_log_setup() is None  # logging.disable in force: nothing to copy
    finally:
        logging.disable(logging.NOTSET)
        root.removeHandler(handler)
