"""The one store lookup of a manifest's results (report and leaderboard commands share it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robojudge.run import default_run_dir, load_suite_results, suite_store_url
from robojudge.store import ResultRow, ResultStore, StoreError
from robojudge.suite import ManifestError


def _manifest(folder: Path, ids: list[str]) -> Path:
    (folder / "v.mp4").write_bytes(b"")
    path = folder / "suite.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4"}) + "\n" for i in ids))
    return path


def test_default_store_and_its_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path, ["a", "b"])
    with pytest.raises(StoreError, match=r"no result store at runs/suite/results\.sqlite; pass --db"):
        suite_store_url(manifest)
    with pytest.raises(StoreError, match="no result store"):
        load_suite_results(manifest)
    assert not (tmp_path / "runs").exists()  # looking does not create it
    url = suite_store_url(manifest, "sqlite:///elsewhere.sqlite")
    assert url == "sqlite:///elsewhere.sqlite"  # an explicit store is taken as given
    default_run_dir(manifest).mkdir(parents=True)
    with ResultStore(default_run_dir(manifest) / "results.sqlite") as store:
        store.add([ResultRow(item_id="a", metric="m", config_hash="h", version="1", status="ok", value=1.0)])
    found = load_suite_results(manifest)
    assert [it.item_id for it in found.items] == ["a", "b"]
    assert [(r.item_id, r.value) for r in found.rows] == [("a", 1.0)]
    assert found.db_url == suite_store_url(manifest)


def test_no_usable_items_names_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = _manifest(tmp_path, [])
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    ResultStore(db).close()
    with pytest.raises(ValueError, match=r"suite\.jsonl: no usable items \(see `robojudge suite validate`\)"):
        load_suite_results(manifest, db)
    with pytest.raises(ManifestError):
        load_suite_results(tmp_path / "absent.jsonl", db)
