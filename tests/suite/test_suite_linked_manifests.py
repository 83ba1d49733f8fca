"""A manifest given through a symbolic link, or through ``..`` after a linked folder, reads the file the
system opens and takes its relative paths from the folder that really holds it (audit suiteio F2, F5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robojudge.suite import ManifestError, load_suite, validate_manifest


def _data(folder: Path, item_id: str = "e1") -> Path:
    """``folder/suite.jsonl`` naming ``videos/a.mp4`` relative to it, as ``suite scan`` and the demo write."""
    (folder / "videos").mkdir(parents=True)
    (folder / "videos" / "a.mp4").write_bytes(b"x")
    manifest = folder / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": item_id, "video": "videos/a.mp4"}) + "\n", encoding="utf-8")
    return manifest


def test_a_link_to_a_manifest_reads_its_paths_from_the_target_s_folder(tmp_path: Path) -> None:
    manifest = _data(tmp_path / "data")
    (tmp_path / "me").mkdir()
    link = tmp_path / "me" / "bench.jsonl"
    link.symlink_to("../data/suite.jsonl")  # a relative link, as `ln -s ../data/suite.jsonl` makes it
    suite = load_suite(link)
    assert [it.video for it in suite] == [str((tmp_path / "data" / "videos" / "a.mp4").resolve())]
    assert suite.path == link  # the link is the manifest's name (its store, its run folder)
    assert suite.root == manifest.parent.resolve()
    assert validate_manifest(link) == []


def test_a_path_found_only_beside_the_link_says_where_paths_are_read_from(tmp_path: Path) -> None:
    _data(tmp_path / "data")
    (tmp_path / "data" / "videos" / "a.mp4").unlink()
    (tmp_path / "me" / "videos").mkdir(parents=True)
    (tmp_path / "me" / "videos" / "a.mp4").write_bytes(b"x")
    link = tmp_path / "me" / "bench.jsonl"
    link.symlink_to(tmp_path / "data" / "suite.jsonl")
    with pytest.raises(ManifestError) as err:
        load_suite(link)
    (problem,) = err.value.problems
    target = (tmp_path / "data" / "suite.jsonl").resolve()
    assert problem.item_id == "e1" and problem.field == "video"
    assert problem.message.startswith("file not found: videos/a.mp4")
    assert problem.message.endswith(
        f"; the manifest is a link to {target}: relative paths are read from {target}'s folder; "
        f"videos/a.mp4 exists beside the link in {tmp_path / 'me'}")


def test_dot_dot_after_a_linked_folder_reads_the_file_the_system_opens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _data(tmp_path / "deep" / "a", "real")
    (tmp_path / "deep" / "a" / "b").mkdir()
    (tmp_path / "lnk").symlink_to("deep/a/b")
    _data(tmp_path, "decoy")  # what removing `lnk/..` as text would read: ./suite.jsonl
    monkeypatch.chdir(tmp_path)
    given = "lnk/../suite.jsonl"
    assert Path(given).read_text(encoding="utf-8") == real.read_text(encoding="utf-8")
    suite = load_suite(given)
    assert [it.item_id for it in suite] == ["real"]
    assert suite.path == real and suite.root == real.parent
    assert [it.video for it in suite] == [str(real.parent / "videos" / "a.mp4")]
    # with no decoy, the same path is found (it was "manifest file not found")
    (tmp_path / "suite.jsonl").unlink()
    assert [it.item_id for it in load_suite(given)] == ["real"]


def test_dot_dot_that_names_the_same_file_keeps_the_tidy_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = _data(tmp_path / "data")
    (tmp_path / "data" / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    suite = load_suite("data/sub/../suite.jsonl")
    assert suite.path == manifest and suite.root == manifest.parent
