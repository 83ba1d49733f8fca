"""The manifests a store was scored or judged from, noted in it (``ResultStore.note_manifest``)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from robojudge.store import ResultStore, StoreError
from robojudge.store import _store as store_module


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


class _HourAhead(datetime):
    """The clock of a host that runs an hour ahead."""

    @classmethod
    def now(cls, tz=None):  # type: ignore[no-untyped-def, override]
        return datetime.now(tz) + timedelta(hours=1)


def test_the_manifest_noted_last_comes_first_whatever_the_hosts_clocks_said(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path.resolve() / "a.jsonl", tmp_path.resolve() / "b.jsonl"
    with ResultStore(store_url) as store:
        with monkeypatch.context() as fast:
            fast.setattr(store_module, "datetime", _HourAhead)
            store.note_manifest(first)
        with store.claim_manifest(second) as before:
            assert before == [first]
        noted = store.manifests()
        # Before: ordered by the notes' times, so the fast host's earlier note passed for the latest.
        assert [p for p, _ in noted] == [second, first] and noted[0][1] < noted[1][1]


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
                          "('manifest:naive', '{\"path\": \"y.jsonl\", \"at\": \"2026-01-01T00:00:00\"}'), "
                          # an older robojudge's note, without a count: after every counted one
                          "('manifest:old', '{\"path\": \"/z.jsonl\", \"at\": \"2099-01-01T00:00Z\"}')"))
    engine.dispose()
    with ResultStore(url) as store:
        assert [p for p, _ in store.manifests()] == [tmp_path / "good.jsonl", Path("/z.jsonl")]
