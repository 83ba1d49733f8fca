"""What a long command is doing, said when it takes a while (robojudge._activity and the CLI's watcher)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from robojudge import _activity
from robojudge._activity import current, step, watch


def _until(lines: list[str], n: int, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while len(lines) < n and time.monotonic() < end:
        time.sleep(0.01)


def test_a_step_is_said_once_it_lasts_then_again_with_its_count() -> None:
    lines: list[str] = []
    with watch(lines.append, after_s=0.05, every_s=0.1), step("reading stored results", total=3,
                                                                unit="rows") as s:
        s.advance(2)
        _until(lines, 2)
    assert lines[0] == "reading stored results ..."
    assert lines[1].startswith("reading stored results: 2 of 3 rows (")
    # Without a total: a count so far; nothing done yet: the time only.
    assert _activity.Step("x", unit="items").line(first=False) == "x (0 s)"
    counted = _activity.Step("x", unit="items")
    counted.advance(1234)
    assert counted.line().startswith("x: 1,234 items so far (")


def test_a_quick_step_says_nothing() -> None:
    lines: list[str] = []
    with watch(lines.append, after_s=0.5, every_s=0.5):
        for _ in range(5):
            with step("quick"):
                time.sleep(0.01)
        time.sleep(0.2)
    assert lines == []


def test_the_newest_open_step_is_named_and_an_abandoned_generator_leaves_its_step() -> None:
    def rows() -> Iterator[int]:
        with step("inner"):
            yield from range(10)

    with step("outer"):
        it = rows()
        next(it)
        assert current() is not None and current().what == "inner"  # type: ignore[union-attr]
        it.close()  # (a reader that stopped half-way)
        assert current() is not None and current().what == "outer"  # type: ignore[union-attr]
    assert current() is None


def test_a_failing_say_stops_the_watching_not_the_work() -> None:
    def broken(line: str) -> None:
        raise OSError("stderr closed")

    with watch(broken, after_s=0.0, every_s=0.01), step("work") as s:
        time.sleep(0.1)
        s.advance()
    assert s.done == 1
    assert not [t for t in threading.enumerate() if t.name == "robojudge-activity"]


def test_results_status_says_it_is_reading_when_that_takes_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # At a million stored results, status, export, report and leaderboards printed nothing for minutes.
    from robojudge.cli import main
    from robojudge.store import ResultRow, ResultStore, _store

    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(f'{{"item_id": "i{n}", "video": "v{n}.mp4"}}\n' for n in range(40)))
    url = tmp_path / "results.sqlite"
    with ResultStore(url) as store:
        store.add([ResultRow(f"i{n}", "pixel_frame_consistency", "h", "1", "ok", 0.5) for n in range(40)])
    slow = _store._row_from_record

    def read_slowly(*args):  # type: ignore[no-untyped-def]
        time.sleep(0.01)  # a large store on a slow disk
        return slow(*args)

    monkeypatch.setattr(_store, "_row_from_record", read_slowly)
    monkeypatch.setattr(_activity, "AFTER_S", 0.05)
    monkeypatch.setattr(_activity, "EVERY_S", 0.1)
    with pytest.raises(SystemExit) as done:
        main(["results", "status", str(manifest), "--db", str(url)])
    assert done.value.code in (0, None)
    err = capsys.readouterr().err
    assert "reading stored results ..." in err
    assert "reading stored results: " in err and " rows so far (" in err
