"""A stop that lands while Python loads a module can come out wrapped in another exception (Python 3.11:
``RuntimeError: Error calling __set_name__ ...`` from the KeyboardInterrupt). It is still a stop: exit 130
with one line, as every stopped command ends, not a traceback and exit 1 (audit s75 signals 6c)."""

from __future__ import annotations

import pytest

import robojudge.cli as cli


def _app_raising(exc: BaseException):
    def app(args: list[str]) -> None:
        raise exc
    return lambda only: app


def _wrapped_stop() -> RuntimeError:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance 'taxonomy'") from stop
    except RuntimeError as exc:
        return exc


def test_a_stop_wrapped_by_an_import_exits_130_with_one_line(monkeypatch, capsys) -> None:
    monkeypatch.setattr(cli, "build_app", _app_raising(_wrapped_stop()))
    with pytest.raises(SystemExit) as ended:
        cli.main(["results", "export", "--db", "x"])
    assert ended.value.code == 130
    said = capsys.readouterr().err
    assert said.startswith("interrupted while the command was starting") and "Traceback" not in said


def test_an_error_with_a_stop_only_in_its_context_is_a_stop_too() -> None:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ValueError("cleanup failed while stopping")  # noqa: B904 (no cause; the stop is its context)
    except ValueError as exc:
        assert exc.__cause__ is None
        assert cli.stopped_within(exc) is True
    assert cli.stopped_within(ValueError("plain")) is False


def test_a_real_error_is_not_taken_for_a_stop(monkeypatch) -> None:
    monkeypatch.setattr(cli, "build_app", _app_raising(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["results", "export", "--db", "x"])
