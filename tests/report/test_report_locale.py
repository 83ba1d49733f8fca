"""Under a locale that is not UTF-8 the report still writes UTF-8 files, and the commands that print
names do not die on a character the terminal lacks.

``Path.write_text`` without an encoding writes in the locale's: under ``LC_ALL=C`` with
``PYTHONUTF8=0`` that is ASCII, and the report stopped part-way with a codec error (``index.html``
declares ``<meta charset="utf-8">`` and every small-n cell carries a dagger). Rich printed the names
to an ASCII terminal and ended with a UnicodeEncodeError traceback. Each command runs in a
subprocess with that locale and ``PYTHONIOENCODING=ascii``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robojudge.store import ResultRow, ResultStore

NAME = "\u65e5\u672c\u8a9e \u30e2\u30c7\u30eb \u2713"  # 日本語 モデル ✓
ASCII_ENV = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
             "PYTHONIOENCODING": "ascii"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder: 2 generators (one named in Japanese) x 3 clips, labels and iq1_psnr."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "v.mp4").write_bytes(b"")
    items, rows = [], []
    for c in range(3):
        for g, value in ((NAME, 30.0 + c), ("plain", 20.0 + c)):
            item_id = f"{'j' if g == NAME else 'p'}{c}"
            items.append({"item_id": item_id, "video": "v.mp4", "clip_id": f"c{c}", "generator": g,
                          "labels": {"pa": 4 if g == NAME else 2, "ia": 3}})
            rows.append(ResultRow(item_id, "iq1_psnr", "h", "1", "ok", value))
    (folder / "suite.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    with ResultStore(f"sqlite:///{folder / 'results.sqlite'}") as store:
        store.add(rows)
    return folder


def _robojudge(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **ASCII_ENV}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "robojudge", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=300, check=False)


def test_the_subprocess_really_has_an_ascii_locale(run: Path) -> None:
    code = "import locale, sys; print(locale.getpreferredencoding(False), sys.stdout.encoding)"
    probe = subprocess.run([sys.executable, "-c", code], env={**os.environ, **ASCII_ENV}, capture_output=True,
                           check=True)
    assert probe.stdout.decode().split() == ["ANSI_X3.4-1968", "ascii"]


def test_the_report_writes_utf8_under_an_ascii_locale(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = _robojudge("report", str(run), "--out", str(out), "--bootstrap", "20", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"Traceback" not in done.stderr
    page = (out / "index.html").read_text(encoding="utf-8")
    assert NAME in page and '<meta charset="utf-8">' in page
    summary = (out / "tables" / "summary.md").read_text(encoding="utf-8")
    assert NAME in summary and "\u2020" in summary  # 3 clips: small n, marked with the dagger
    assert NAME in (out / "tables" / "leaderboard.csv").read_text(encoding="utf-8")


def test_the_commands_print_under_an_ascii_locale(run: Path, tmp_path: Path) -> None:
    board = _robojudge("leaderboard", "generators", str(run), "--bootstrap", "20", "--out", "lb",
                       cwd=tmp_path)
    assert board.returncode == 0, board.stderr.decode("ascii", "replace")
    assert b"UnicodeEncodeError" not in board.stderr
    lines = board.stdout.decode("ascii").splitlines()  # ASCII indeed: the name's characters became '?'
    assert any("plain" in ln for ln in lines) and any("??? ???" in ln for ln in lines)
    assert NAME in (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")
    picks = _robojudge("select", "best-of-n", str(run), "--group", "clip_id", "--by", "iq1_psnr",
                       "--bootstrap", "20", "--out", "picks.csv", cwd=tmp_path)
    assert picks.returncode == 0, picks.stderr.decode("ascii", "replace")
    assert b"UnicodeEncodeError" not in picks.stderr
    assert "Picks per generator: ??? ??? ? 3." in picks.stdout.decode("ascii")
    assert NAME in (tmp_path / "picks.csv").read_text(encoding="utf-8")
