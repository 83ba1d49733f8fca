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
    (tmp_path / "a.mp4").write_bytes(b"")
    path = tmp_path / "s.csv"
    path.write_bytes(b"\xef\xbb\xbfitem_id,video,instruction\nx,a.mp4,ok\ny,a.mp4,caf\xe9\n")
    with pytest.raises(ManifestError) as info:
        load_suite(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.item_id) == (3, None)
    assert problem.message == "not valid UTF-8: byte 0xe9 at column 12 (invalid continuation byte)"
    json_path = tmp_path / "s.json"
    json_path.write_bytes(b'[\n{"item_id": "x",\n "video": "caf\xe9.mp4"}]')
    with pytest.raises(ManifestError) as info:
        load_suite(json_path)
    assert info.value.problems[0].line == 3


def test_a_byte_that_is_not_utf8_costs_only_its_record(tmp_path: Path) -> None:
    # One cp1252 "\xe9" pasted into a spreadsheet export loaded nothing, even with strict=False; the rows
    # before and after it are read, as JSON Lines loses only its bad line (and says it the same way).
    (tmp_path / "a.mp4").write_bytes(b"")
    path = tmp_path / "s.csv"
    path.write_bytes(b"item_id,video,instruction\r\n"
                     b"e1,a.mp4,pick\r\n"
                     b"e2,a.mp4,caf\xe9 table\r\n"
                     b'e3,a.mp4,"two\r\nlines, caf\xe9"\r\n'  # the bad byte on the second line of its record
                     b"e4,a.mp4,close\r\n")
    suite = load_suite(path, strict=False)
    assert [it.item_id for it in suite] == ["e1", "e4"]
    assert [(p.line, p.message) for p in suite.problems] == [
        (3, "not valid UTF-8: byte 0xe9 at column 13 (invalid continuation byte)"),
        (5, "not valid UTF-8: byte 0xe9 at column 11 (invalid continuation byte)"),
    ]
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b'{"item_id": "e1", "video": "a.mp4", "instruction": "caf\xe9"}\n')
    assert [str(p) for p in validate_manifest(jsonl, media="none")] == [
        f"{jsonl}:1: not valid UTF-8: byte 0xe9 at column 56 (invalid continuation byte)"
    ]


def test_a_header_that_is_not_utf8_refuses_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"item_id,vid\xe9o\nx,a.mp4\n")
    with pytest.raises(ManifestError) as info:
        load_suite(path, strict=False)
    assert [(p.line, p.message) for p in info.value.problems] == [
        (1, "not valid UTF-8: byte 0xe9 at column 12 (invalid continuation byte)")
    ]


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
