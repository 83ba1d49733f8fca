"""A write that fails without naming a file (a full disk: ENOSPC, a quota, a file-size limit: EFBIG, all
from ``write()``) ends a command with one line saying what it was writing, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from _limits import file_size_limit
from robojudge.cli import main
from robojudge.store import ResultRow, ResultStore


def test_a_failed_write_names_the_out_it_was_writing(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "v.mp4").write_bytes(b"")  # the manifest only needs the files to exist
    lines, rows = [], []
    for k in range(400):  # 200 clips of two rollouts: about 70 kB of picks
        lines.append(f'{{"item_id": "i{k}", "video": "v.mp4", "clip_id": "c{k // 2}", '
                     f'"generator": "wm-{k % 2}", "labels": {{"pa": {1 + k % 5}, "ia": 3}}}}\n')
        rows += [ResultRow(f"i{k}", f"judge:qwen:{axis}", "h", "1", "ok", float(k % 3))
                 for axis in ("pa", "ia")]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(lines))
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add(rows)
        url = store.url
    out = tmp_path / "picks.json"
    with file_size_limit(40_000), pytest.raises(SystemExit) as done:
        main(["select", "best-of-n", str(manifest), "--db", url, "--by", "judge:qwen", "--bootstrap", "0",
              "--out", str(out)])
    # Before: the OSError, which names no file, went up as a traceback.
    assert done.value.code == 2
    assert capsys.readouterr().err == f"error: writing {out}: File too large\n"
