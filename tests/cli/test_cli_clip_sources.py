"""A clip whose items disagree on ``source``.

The cluster bootstrap resamples a clip within its source corpus (RoboJudge App. E.1), so such a suite
cannot be bootstrapped. `suite validate` passed it; then the report lost three sections and both
leaderboard commands failed, naming items by their position in internal lists ("item 3" in one command,
"item 0" in the other, for the same item). Now validate warns on the item, naming the other, and the
report and leaderboards name both items and the field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report._leaderboard import strata_of
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item, validate_manifest

runner = CliRunner()


def _suite(tmp_path: Path) -> Path:
    (tmp_path / "v.mp4").write_bytes(b"")
    items = [{"item_id": f"{g}{c}", "video": "v.mp4", "clip_id": f"c{c}", "generator": g, "source": "sim",
              "labels": {"pa": 1 + c % 5, "ia": 2}, "instruction": f"task {g}{c}"}
             for c in range(4) for g in ("a", "b")]
    del items[3]["source"]  # b1: clip c1's second item, without a source
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow(it["item_id"], "iq1_psnr", "h", "1", "ok", 20.0 + k)
                   for k, it in enumerate(items)])
    return path


def test_validate_warns_on_the_item_naming_the_clip_mate(tmp_path: Path) -> None:
    problems = validate_manifest(_suite(tmp_path))
    (p,) = problems
    assert (p.item_id, p.field, p.severity, p.line) == ("b1", "source", "warning", 4)
    assert p.message.startswith("no source, and item 'a1' of the same clip 'c1' (line 3) has source 'sim'")


def test_strata_name_both_items_and_the_field() -> None:
    items = [Item(item_id="x", video="v.mp4", clip_id="c", source="s1"),
             Item(item_id="y", video="v.mp4", clip_id="c", source="s2"),
             Item(item_id="z", video="v.mp4", source="s3")]  # (no clip: its own cluster)
    with pytest.raises(ValueError, match="clip 'c' spans two sources: item 'x' has source 's1' and item 'y' "
                       "source 's2'"):
        strata_of(items)
    assert strata_of([items[0], items[2]]) == ["s1", "s3"]


@pytest.mark.parametrize("board", ["generators", "judges"])
def test_leaderboards_name_the_items(tmp_path: Path, board: str) -> None:
    manifest = _suite(tmp_path)
    res = runner.invoke(build_app("leaderboard"), ["leaderboard", board, str(manifest), "--db",
                                                   str(tmp_path / "r.sqlite"), "--bootstrap", "20"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "clip 'c1' spans two sources: item 'a1' has source 'sim' and item 'b1' no source" in said


def test_a_blank_source_and_none_are_one_source(tmp_path: Path) -> None:
    # validate warned "no source, and item 'a1' ... has no source"; the report takes them as one stratum.
    (tmp_path / "v.mp4").write_bytes(b"")
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps({"item_id": "a1", "video": "v.mp4", "clip_id": "c1", "source": ""}) + "\n"
                    + json.dumps({"item_id": "a2", "video": "v.mp4", "clip_id": "c1"}) + "\n")
    assert [p for p in validate_manifest(path) if p.field == "source"] == []
