"""A long generator name folds in the printed leaderboard; the numbers are never cut.

With a 255-character name the table was wider than the console, and Rich took the width from every
column alike: the scores came out as ``5.00…`` and the header as ``Over…``, so no interval was shown.
Generators: ``long`` (255 characters, PA 5 and IA 4 on each of 3 clips) and ``short`` (PA 2, IA 1).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore

runner = CliRunner()
LONG = "long_" + "x" * 250


def test_long_names_fold_and_scores_stay_whole(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"")
    # The long-named generator is rated one lower on the last clip, so its means vary across resamples (a
    # mean the same in every resample would have no interval to print).
    items = [{"item_id": f"{k}{c}", "video": "v.mp4", "clip_id": f"c{c}", "generator": g,
              "labels": {"pa": pa - (c == 2 and k == "l"), "ia": ia - (c == 2 and k == "l")}}
             for c in range(3) for k, g, pa, ia in (("l", LONG, 5, 4), ("s", "short", 2, 1))]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow(it["item_id"], "iq1_psnr", "h", "1", "ok", 1.0) for it in items])
    done = runner.invoke(build_app("leaderboard"), ["leaderboard", "generators", str(manifest), "--db",
                                                    str(tmp_path / "r.sqlite"), "--bootstrap", "50"])
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "\u2026" not in out  # nothing cut
    assert "Overall" in out and "P(rank)" in out and "rank range" in out
    first = next(ln for ln in out.splitlines() if ln.lstrip().startswith("1 "))
    # PA 14 / 3, IA 11 / 3 and Overall 25 / 6, each interval printed whole.
    shown = re.findall(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", first)
    assert [s.split(" [")[0] for s in shown] == ["4.67", "3.67", "4.17"]
    board = out.split("adjacent pairs")[0]
    assert LONG in "".join(re.findall(r"[a-z_]+", board))  # the whole name, folded onto more lines
