"""Ctrl-C during a run raises :class:`RunInterrupted` from the API, after what finished is stored, so a
notebook cell or a caller's loop stops there. Before, the call returned with ``summary.interrupted`` set
and the caller went on as if the run were whole (audit s70_notebook 2, 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers test_interrupt; tests/run is on sys.path)
import pytest

from robojudge.metrics import METRICS, SET_METRICS, Score
from robojudge.metrics import _sets as sets
from robojudge.run import RunInterrupted, SuiteRun, score_sets_into, score_suite
from robojudge.store import ResultStore
from robojudge.suite import Item


def _manifest(tmp_path: Path, names: list[str]) -> Path:
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_interrupt never opens it")
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps({"item_id": n, "video": "v.mp4", "instruction": "x"}) + "\n"
                            for n in names))
    return path


def test_an_interrupted_score_suite_raises_with_its_summary_and_keeps_its_rows(tmp_path: Path) -> None:
    # Before: score_suite returned, and a loop over runs went on to the next one.
    manifest, db = _manifest(tmp_path, ["a", "stop", "c"]), str(tmp_path / "r.sqlite")
    ran = []
    with pytest.raises(RunInterrupted) as stop:
        for metrics in (["test_interrupt"], ["test_slow"]):  # a notebook cell's loop over runs
            score_suite(manifest, metrics, db=db)
            ran.append(metrics)
    assert ran == []  # the loop stopped with the first run
    assert isinstance(stop.value, KeyboardInterrupt)
    summary, run = stop.value.summary, stop.value.run
    assert summary.interrupted and (summary.ok, summary.failed) == (1, 0)
    assert isinstance(run, SuiteRun) and run.summary is summary and run.db_url.endswith("r.sqlite")
    with ResultStore(db) as store:
        assert [r.item_id for r in store.rows()] == ["a"]
        assert store.in_flight() == {}


@pytest.fixture
def stop_set() -> Iterator[None]:
    """``test_stop_set``: a group metric that Ctrl-C stops on a group named ``stop``."""
    with METRICS.scratch(), SET_METRICS.scratch():

        @sets.set_metric("test_stop_set", output="group", family="features", inputs={"instruction"},
                         higher_is_better=True, native_range=(0.0, None), citation="robojudge test suite",
                         provider="computed", description="test-only: Ctrl-C on a group named stop")
        def stop(group: sets.ItemGroup, config: object) -> sets.SetScores:
            if group.key == "stop":
                raise KeyboardInterrupt
            return sets.SetScores(group=Score(value=float(len(group.items))))

        yield


def test_an_interrupted_set_run_raises_with_its_summary(stop_set: None, tmp_path: Path) -> None:
    # Before: a bare KeyboardInterrupt, without what was computed.
    items = [Item(item_id=g, video="/nonexistent.mp4", instruction="x", generator=g) for g in ("a", "stop")]
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(RunInterrupted) as stop:
            score_sets_into(store, items, ["test_stop_set"])
        assert stop.value.summary.computed == 1 and stop.value.run is None
        assert [r.item_id for r in store.rows()] == ["group:generator=a"]
