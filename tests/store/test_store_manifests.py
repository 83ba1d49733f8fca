"""The manifests a store was scored or judged from, noted in it (``ResultStore.note_manifest``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from robojudge.store import ResultStore, StoreError


def test_noted_manifests_come_latest_first_once_each(store_url: str, tmp_path: Path) -> None:
    tmp_path = tmp_path.resolve()
    first, second = tmp_path / "a" / "suite.jsonl", tmp_path / "b.jsonl"
    with ResultStore(store_url) as store:
        assert store.manifests() == []
        assert store.note_manifest(first) == first.resolve()
        time.sleep(0.01)
        store.note_manifest(tmp_path / "." / "b.jsonl")  # the same file however it is written
        assert [p for p, _ in store.manifests()] == [second, first]
        time.sleep(0.01)
        store.note_manifest(first)  # noted again: its time moves, it is not listed twice
        noted = store.manifests()
        assert [p for p, _ in noted] == [first, second] and noted[0][1] > noted[1][1]
        assert store.count() == 0  # results are untouched
    with ResultStore(store_url, read_only=True) as store:
        assert [p for p, _ in store.manifests()] == [first, second]
        with pytest.raises(StoreError, match="read-only"):
            store.note_manifest(second)


def test_a_relative_manifest_is_noted_absolute(store_url: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with ResultStore(store_url) as store:
        store.note_manifest("lists/mine.jsonl")
        assert store.manifests()[0][0] == tmp_path.resolve() / "lists" / "mine.jsonl"


def test_a_meta_value_robojudge_did_not_write_is_passed_over(tmp_path: Path) -> None:
    tmp_path = tmp_path.resolve()
    url = f"sqlite:///{tmp_path / 'results.sqlite'}"
    with ResultStore(url) as store:
        store.note_manifest(tmp_path / "good.jsonl")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO robojudge_meta (key, value) VALUES ('manifest:broken', 'not json'), "
                          "('manifest:partial', '{\"path\": \"x.jsonl\"}'), "
                          "('manifest:naive', '{\"path\": \"y.jsonl\", \"at\": \"2026-01-01T00:00:00\"}')"))
    engine.dispose()
    with ResultStore(url) as store:
        assert [p for p, _ in store.manifests()] == [tmp_path / "good.jsonl"]
