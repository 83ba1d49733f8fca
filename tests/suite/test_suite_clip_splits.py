"""A clip whose items lie in two splits: `suite validate` warns, naming the clip, its splits and a line of
each (RoboPhys-3D App. A.1, Table 8: all views and generated data of one episode stay in one split).

It printed ``ok`` for a clip with one item in ``train`` and three in ``test`` (audit gaps F10).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.suite import validate_manifest

runner = CliRunner()


def _suite(tmp_path: Path, splits: dict[str, tuple[str, str | None]]) -> Path:
    (tmp_path / "v.mp4").write_bytes(b"")
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "clip_id": c,
                                        **({"split": s} if s else {})}) + "\n"
                            for i, (c, s) in splits.items()), encoding="utf-8")
    return path


def test_a_clip_in_two_splits_is_a_warning_naming_each_split_and_its_line(tmp_path: Path) -> None:
    manifest = _suite(tmp_path, {"a": ("ep00", "train"), "b": ("ep00", "test"), "c": ("ep00", "test"),
                                 "d": ("ep01", "train"), "e": ("ep01", None),  # no split: in none
                                 "f": ("ep02", "test"), "g": ("ep00", "val")})
    (p,) = validate_manifest(manifest)
    assert (p.item_id, p.field, p.severity, p.line) == ("b", "split", "warning", 2)
    assert p.message.startswith("clip 'ep00' is in 3 splits: 'train' (item 'a', line 1), 'test' (item 'b', "
                                "line 2), 'val' (item 'g', line 7); all views and rollouts of one episode "
                                "belong in one split")


def test_validate_prints_the_warning_and_passes(tmp_path: Path) -> None:
    manifest = _suite(tmp_path, {"a": ("ep00", "train"), "b": ("ep00", "test")})
    done = runner.invoke(build_app("suite"), ["suite", "validate", str(manifest), "--no-media"])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "item 'b' field split: warning: clip 'ep00' is in 2 splits" in said


def test_clips_kept_in_one_split_are_quiet(tmp_path: Path) -> None:
    manifest = _suite(tmp_path, {"a": ("ep00", "train"), "b": ("ep00", "train"), "c": ("ep01", "test")})
    assert validate_manifest(manifest) == []
