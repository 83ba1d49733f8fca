"""Paths that cannot even be looked at (a loop of links, a folder this user may not search, a name too
long for the file system, a NUL) are a problem of their record, with line, item and field; the rest of
the manifest is read and scored (audit s67_names F2, F3)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import load_suite, validate_manifest


def _write(folder: Path, rows: list[dict]) -> Path:
    path = folder / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "ok.mp4").write_bytes(b"x")
    os.symlink("b.mp4", tmp_path / "v" / "a.mp4")  # a.mp4 -> b.mp4 -> a.mp4
    os.symlink("a.mp4", tmp_path / "v" / "b.mp4")
    return tmp_path


def test_loops_long_names_and_nul_are_problems_of_their_rows(folder: Path):
    manifest = _write(folder, [
        {"item_id": "ok", "video": "v/ok.mp4"},
        {"item_id": "loop", "video": "v/a.mp4"},
        {"item_id": "long", "video": "v/" + "x" * 300 + ".mp4"},
        {"item_id": "nul", "video": "v/o\u0000k.mp4"},
    ])
    problems = validate_manifest(manifest)
    got = {(p.line, p.item_id, p.field): p.message for p in problems if p.severity == "error"}
    assert set(got) == {(2, "loop", "video"), (3, "long", "video"), (4, "nul", "video")}
    assert "loop of symbolic links" in got[(2, "loop", "video")]
    assert "too long" in got[(3, "long", "video")]
    assert "NUL" in got[(4, "nul", "video")]
    suite = load_suite(manifest, strict=False)
    assert [it.item_id for it in suite.items] == ["ok"]


def test_a_folder_that_cannot_be_searched(folder: Path, monkeypatch: pytest.MonkeyPatch):
    # Tests run as root, which searches every folder: the refusal an ordinary user gets is played here.
    locked = folder / "locked"
    real_stat = os.stat

    def stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).startswith(str(locked)):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    manifest = _write(folder, [{"item_id": "ok", "video": "v/ok.mp4"},
                               {"item_id": "locked", "video": "locked/x.mp4"}])
    (problem,) = validate_manifest(manifest)
    assert (problem.line, problem.item_id, problem.field) == (2, "locked", "video")
    assert "permission denied" in problem.message and "locked/x.mp4" in problem.message
    assert [it.item_id for it in load_suite(manifest, strict=False).items] == ["ok"]


def test_scan_leaves_a_loop_out_with_a_note(folder: Path):
    out = folder / "scan.jsonl"
    res = CliRunner().invoke(build_app("suite"), ["suite", "scan", str(folder / "v"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "loop of symbolic links" in res.output
    assert [json.loads(line)["item_id"] for line in out.read_text().splitlines()] == ["ok"]
