"""A broken CSV manifest is reported at its line: an unclosed quote, bytes that are not UTF-8; and a
long cell is no breakage."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from robojudge.suite import ManifestError, load_suite, validate_manifest


def test_an_unclosed_quote_is_reported_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.mp4").write_bytes(b"")
    path = tmp_path / "s.csv"
    path.write_text('item_id,video\nok,a.mp4\nx,"vid a.mp4\ny,a.mp4\nz,a.mp4\n')
    problems = validate_manifest(path, media="none")
    assert [(p.line, p.message) for p in problems if p.is_error] == [
        (3, "a quoted cell is never closed (unterminated quote): it runs to the end of the file")
    ]
    assert [it.item_id for it in load_suite(path, strict=False)] == ["ok"]


def test_quoted_cells_over_several_lines_still_read(tmp_path: Path) -> None:
    (tmp_path / "a.mp4").write_bytes(b"")
    path = tmp_path / "s.csv"
    path.write_text('item_id,video,instruction\nx,a.mp4,"open\nthe ""drawer"""\ny,"a.mp4",plain')
    suite = load_suite(path)
    assert [(it.item_id, it.instruction) for it in suite] == [("x", 'open\nthe "drawer"'), ("y", "plain")]


def test_bytes_that_are_not_utf8_are_reported_at_their_line(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"\xef\xbb\xbfitem_id,video,instruction\nx,a.mp4,ok\ny,a.mp4,caf\xe9\n")
    with pytest.raises(ManifestError) as info:
        load_suite(path)
    (problem,) = info.value.problems
    assert problem.line == 3
    assert problem.message == "not valid UTF-8: byte 0xe9 at column 12 (invalid continuation byte)"
    json_path = tmp_path / "s.json"
    json_path.write_bytes(b'[\n{"item_id": "x",\n "video": "caf\xe9.mp4"}]')
    with pytest.raises(ManifestError) as info:
        load_suite(json_path)
    assert info.value.problems[0].line == 3


def test_a_cell_longer_than_pythons_csv_limit_is_read(tmp_path: Path, default_csv_limit: None) -> None:
    # A per-frame trajectory in a meta cell, an instruction of 200,000 characters: over csv's default
    # limit, the reader stopped there and every later row was lost.
    (tmp_path / "a.mp4").write_bytes(b"")
    trajectory = [[i * 0.001, i * 0.002, i * 0.003] for i in range(10_000)]
    meta = json.dumps({"trajectory": trajectory})
    instruction = "pick up the cup " * 12_500
    assert len(meta) > 131_072 and len(instruction) > 131_072
    path = tmp_path / "s.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "video", "instruction", "meta"])
        writer.writerows([["e1", "a.mp4", "first", ""], ["e2", "a.mp4", "second", meta],
                          ["e3", "a.mp4", instruction, ""], ["e4", "a.mp4", "last", ""]])
    suite = load_suite(path)
    assert [it.item_id for it in suite] == ["e1", "e2", "e3", "e4"]
    assert suite.by_id("e2").meta == {"trajectory": trajectory}
    assert suite.by_id("e3").instruction == instruction
    assert validate_manifest(path, media="none") == []
