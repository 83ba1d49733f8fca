"""Non-ASCII file names under a locale whose file-system encoding is not UTF-8 (``LC_ALL=C`` without
UTF-8 mode): the problem is named, with the fix, instead of "a NUL character", "control characters" or a
codec error (audit s69_hostile 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import robojudge
from robojudge.suite import scan_folder, write_manifest

if sys.getfilesystemencoding() != "utf-8":
    pytest.skip("the test makes its UTF-8 file names from a UTF-8 locale", allow_module_level=True)

NAME = "v/g\u00e9n\u00e9rateur/\u00e9pisode_\u673a\u5668_0.mp4"  # générateur/épisode_机器_0.mp4


def _in_ascii_locale(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run Python as under a C locale of old: file names are encoded to ASCII."""
    src = str(Path(robojudge.__file__).parents[1])  # this checkout's, from any working folder
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTHONIOENCODING", None)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=120)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in (NAME, "v/g/ok.mp4"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"not opened")
    rows = [{"item_id": "uni", "video": NAME, "instruction": "x"},
            {"item_id": "ok", "video": "v/g/ok.mp4", "instruction": "x"}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def test_validate_names_the_locale(folder: Path) -> None:
    done = _in_ascii_locale("-m", "robojudge", "suite", "validate", "m.jsonl", "--no-media", cwd=folder)
    assert done.returncode == 1, done.stdout + done.stderr
    # Before: "... is not a usable path (it holds a NUL character)".
    assert "NUL" not in done.stderr
    assert "field video:" in done.stderr and "file-system encoding of this locale (ascii)" in done.stderr
    assert "LC_ALL=C.UTF-8" in done.stderr and "1 problem(s)" in done.stderr


def test_a_reader_keeps_the_item(folder: Path) -> None:
    # Reading stored results needs no file: before, resolving the name raised UnicodeEncodeError (report).
    code = ("import json, sys; from robojudge.suite import load_suite; "
            "s = load_suite('m.jsonl', strict=False, files='optional'); "
            "print(json.dumps([[i.item_id, i.video] for i in s.items]))")
    done = _in_ascii_locale("-c", code, cwd=folder)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["uni", str(folder / NAME)], ["ok", str(folder / "v/g/ok.mp4")]]


def test_scan_names_the_locale(folder: Path) -> None:
    done = _in_ascii_locale("-m", "robojudge", "suite", "scan", "v", "--out", "s.jsonl", cwd=folder)
    # Before: the manifest could not be written ("'utf-8' codec can't encode ...: surrogates not allowed").
    assert done.returncode == 0, done.stdout + done.stderr
    assert "control characters" not in done.stderr
    assert "1 video(s) left out" in done.stderr and "their names are UTF-8" in done.stderr
    assert "(ascii)" in done.stderr and "LC_ALL=C.UTF-8" in done.stderr
    rows = [json.loads(line) for line in (folder / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["video"] for r in rows] == ["v/g/ok.mp4"]


def test_scan_leaves_out_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path / "v")
    os.makedirs(root + b"/g")
    for name in (b"/g/ok.mp4", b"/g/caf\xe9.mp4"):  # Latin-1 bytes: no UTF-8 text, no manifest line
        Path(os.fsdecode(root + name)).write_bytes(b"x")
    result = scan_folder(tmp_path / "v")
    assert [r["item_id"] for r in result.items] == ["g/ok"]
    assert "1 video(s) left out (first: 'g/caf\ufffd.mp4'): their names are not UTF-8" in result.notes[0]
    write_manifest(result, tmp_path / "m.jsonl")  # before: UnicodeEncodeError (surrogates)
