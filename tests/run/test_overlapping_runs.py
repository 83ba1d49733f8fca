"""Runs that share a store at the same time, or one after another: two clashing manifests started at once,
``--retry-errors`` beside another manifest's failures, another run's items in flight, and results another
run stored first."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest

from _in_flight import note_from_ended_process, noting_process
from robojudge.cli._common import print_summary
from robojudge.metrics import METRICS, SET_METRICS
from robojudge.metrics import _sets as sets
from robojudge.metrics._score import Score
from robojudge.run import (
    LocalProcessExecutor,
    SerialExecutor,
    _score,
    build_requests,
    score_items,
    score_sets_into,
    score_suite,
)
from robojudge.run import _where as where
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


def _experiment(folder: Path, level: int, ids: tuple[str, ...]) -> Path:
    """``folder/videos.jsonl`` with one video per id, all of brightness ``level``."""
    rows = []
    for n, item_id in enumerate(ids):
        video = folder / "videos" / f"{n}.mp4"
        video.parent.mkdir(parents=True, exist_ok=True)
        frames = np.full((6, 24, 24, 3), level, np.uint8)
        frames[:, :, n % 24] = 255 - level
        write_video(video, frames, fps=4)
        rows.append({"item_id": item_id, "video": f"videos/{n}.mp4", "instruction": "x"})
    manifest = folder / "videos.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def _items(names: list[str], **fields: Any) -> list[Item]:
    return [Item(item_id=n, video="/nonexistent.mp4", instruction="do it", **fields) for n in names]


# -- 1. two clashing manifests started at once ---------------------------------------------------------


def test_two_clashing_manifests_started_at_once_are_not_both_accepted(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both runs are held until both have checked their manifest (a barrier after the check): had the
    check come before the note, neither would see the other, both would be accepted and their results
    replace each other's. The manifest noted first wins; the other is refused, and not noted."""
    ids = ("g/ep0", "g/ep1")
    exp1, exp2 = _experiment(tmp_path / "exp1", 40, ids), _experiment(tmp_path / "exp2", 200, ids)
    checked = threading.Barrier(2, timeout=60)
    check = where.SharedIds.check

    def check_then_wait(*args: Any, **kwargs: Any) -> None:
        try:
            check(*args, **kwargs)
        finally:  # refused or not: the other run goes on
            with contextlib.suppress(threading.BrokenBarrierError):
                checked.wait()

    monkeypatch.setattr(where.SharedIds, "check", check_then_wait)
    outcome: dict[Path, Any] = {}

    def run(manifest: Path) -> None:
        try:
            outcome[manifest] = score_suite(manifest, ["uniform_random"], db=store_url).summary.ok
        except ValueError as exc:
            outcome[manifest] = exc

    threads = [threading.Thread(target=run, args=(m,)) for m in (exp1, exp2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    refused = [m for m, got in outcome.items() if isinstance(got, ValueError)]
    assert len(outcome) == 2 and len(refused) == 1, outcome
    assert "holds results of another manifest" in str(outcome[refused[0]])
    (accepted,) = {exp1, exp2} - set(refused)
    assert outcome[accepted] == 2
    with ResultStore(store_url) as store:
        assert [p for p, _ in store.manifests()] == [accepted.resolve()]
        assert store.count(include_superseded=True) == 2


def test_score_judge_and_sets_check_a_manifest_once_it_is_noted(
    boom_set: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command that writes a manifest's results checks it against the others only once its own note
    is in the store (the note, then the check): a run started meanwhile then sees it."""
    from robojudge.judges import ResponseCache, get_rubric, make_judge
    from robojudge.run import _sets, judge_suite, score_set_suite

    manifest = _experiment(tmp_path / "exp", 40, ("g/ep0",))
    noted_at_check: list[tuple[str, bool]] = []

    def spy(name: str, check: Any) -> Any:
        def checked(store: ResultStore, manifest: Path, *args: Any, **kwargs: Any) -> None:
            noted_at_check.append((name, manifest.resolve() in [p for p, _ in store.manifests()]))
            check(store, manifest, *args, **kwargs)
        return checked

    check_ids = where.SharedIds.check

    def ids(self: Any, items: Any) -> None:
        noted = [p for p, _ in self._store.manifests()]
        noted_at_check.append(("ids", Path(self._manifest).resolve() in noted))
        check_ids(self, items)

    monkeypatch.setattr(where.SharedIds, "check", ids)
    monkeypatch.setattr(_sets, "refuse_partial_groups", spy("groups", _sets.refuse_partial_groups))
    # a store each, so that the manifest is new to every one
    score_suite(manifest, ["uniform_random"], db=str(tmp_path / "score.sqlite"))
    judge = make_judge({"name": "m", "backend": "mock", "model": "m",
                        "replies": [json.dumps({"reasoning": "r", "physical_adherence": 3})]})
    with ResponseCache(tmp_path / "cache") as cache:
        judge_suite(manifest, judge, [get_rubric("pa")], db=str(tmp_path / "judge.sqlite"), cache=cache,
                    decode_workers=0)
    score_set_suite(manifest, ["test_boom_set"], db=str(tmp_path / "sets.sqlite"))
    assert noted_at_check == [("ids", True)] * 3 + [("groups", True)]


def test_a_clash_past_the_first_block_is_refused_before_anything_is_stored(tmp_path: Path) -> None:
    """A manifest scored block by block is checked whole before its first block is scored: only the first
    block was, and two manifests of thousands of items replaced each other's results past it. (A check
    per block as it was scored refused mid-run: the blocks before were stored, the manifest stayed
    noted, and the first manifest was then refused in its own store.)"""
    import shutil

    ids = ("g/ep0", "g/ep1", "g/ep2")
    exp1 = _experiment(tmp_path / "exp1", 40, ids)
    exp2 = _experiment(tmp_path / "exp2", 200, ("n/a0", "n/a1", "n/a2", "n/a3", "g/ep2"))
    db = str(tmp_path / "shared.sqlite")
    assert score_suite(exp1, ["uniform_random"], db=db).summary.ok == 3
    with pytest.raises(ValueError, match="whose item 'g/ep2' has another video"):
        score_suite(exp2, ["uniform_random"], db=db, block=2)  # g/ep2 in the third block
    with ResultStore(db) as store:
        assert store.count(include_superseded=True) == 3  # nothing of exp2
        assert [p for p, _ in store.manifests()] == [exp1.resolve()]
    assert score_suite(exp1, ["uniform_random"], db=db).summary.skipped == 3  # exp1 goes on as before
    # the same videos in every block: accepted, and the shared ids already stored
    for n in range(len(ids)):
        shutil.copy(exp1.parent / "videos" / f"{n}.mp4", tmp_path / f"{n}.mp4")
    rows = [{"item_id": item, "video": str(tmp_path / f"{n}.mp4"), "instruction": "x"}
            for n, item in enumerate(ids)]
    same = tmp_path / "same.jsonl"
    same.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert score_suite(same, ["uniform_random"], db=db, block=1).summary.skipped == 3


# -- 2. --retry-errors clears the failures of the run's own items only ---------------------------------


def test_retry_errors_leaves_another_manifests_failures(store_url: str) -> None:
    reqs = build_requests(["test_boom"])
    with ResultStore(store_url) as store:
        score_items(_items(["a/boom", "a/ok"]), reqs, store)  # manifest A
        score_items(_items(["b/boom"]), reqs, store)  # manifest B, same store
        again = score_items(_items(["a/boom", "a/ok"]), reqs, store, retry_errors=True)
        assert (again.failed, again.skipped) == (1, 1)
        errors = {r.item_id: r.error for r in store.rows(status="error")}
        assert set(errors) == {"a/boom", "b/boom"} and "ZeroDivisionError" in (errors["b/boom"] or "")
        assert store.count(include_superseded=True) == 3


def test_retry_errors_retries_the_failures_of_every_block(tmp_path: Path) -> None:
    reqs = build_requests(["test_boom"])
    with ResultStore(tmp_path / "r.sqlite") as store:
        blocks = [_items(["a/boom", "a/ok"]), _items(["c/boom"])]
        _score.score_blocks(blocks, reqs, store)
        again = _score.score_blocks(blocks, reqs, store, retry_errors=True)
        assert (again.failed, again.skipped) == (2, 1)  # the second block's failure is tried again too


@pytest.fixture
def boom_set() -> Iterator[None]:
    """``test_boom_set``: a group metric that fails on a group named ``boom...``."""
    with METRICS.scratch(), SET_METRICS.scratch():

        @sets.set_metric("test_boom_set", output="group", family="features", inputs={"instruction"},
                         higher_is_better=True, native_range=(0.0, None), citation="robojudge test suite",
                         provider="computed", description="test-only: fails on a group named boom")
        def boom(group: sets.ItemGroup, config: object) -> sets.SetScores:
            if group.key.startswith("boom"):
                raise RuntimeError("boom")
            return sets.SetScores(group=Score(value=float(len(group.items))))

        yield


def test_sets_retry_errors_leaves_other_groups_failures(boom_set: None, store_url: str) -> None:
    with ResultStore(store_url) as store:
        score_sets_into(store, _items(["a1"], generator="boom1"), ["test_boom_set"])  # manifest A
        score_sets_into(store, _items(["b1"], generator="boom2"), ["test_boom_set"])  # manifest B
        again = score_sets_into(store, _items(["a1"], generator="boom1"), ["test_boom_set"],
                                retry_errors=True)
        assert again.computed == 1
        assert {r.item_id for r in store.rows(status="error")} == {"group:generator=boom1",
                                                                    "group:generator=boom2"}


# -- 3. another run's item in flight is not a crash -----------------------------------------------------


def test_an_item_another_running_run_is_computing_is_neither_isolated_nor_cleared(store_url: str) -> None:
    with noting_process(store_url, {"b": ["test_crash"]}), ResultStore(store_url) as store:
        s = score_items(_items(["a", "b", "c"]), build_requests(["test_crash"]), store,
                        executor=SerialExecutor())
        assert (s.ok, s.isolated) == (3, [])
        assert {r.item_id: r.details["pid"] for r in store.rows()} == dict.fromkeys("abc", os.getpid())
        assert store.in_flight() == {"b": ["test_crash"]}  # that run's note: it clears it itself


def test_a_group_another_running_run_is_computing_is_not_isolated(boom_set: None, tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    items = _items(["a1", "b1"], generator="b")
    with noting_process(db, {"group:generator=b": ["test_boom_set"]}), ResultStore(db) as store:
        s = score_sets_into(store, items, ["test_boom_set"])
        assert (s.computed, s.isolated) == (1, [])  # computed here, not in a child process
        assert [(r.item_id, r.value) for r in store.rows()] == [("group:generator=b", 2.0)]
        assert store.in_flight() == {"group:generator=b": ["test_boom_set"]}


# -- 4. results another run stored first ---------------------------------------------------------------


def test_results_another_run_stored_meanwhile_are_counted_apart(
    store_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another run (a second store in this process) stores b's result while this run computes b: this
    run's row is not stored, and the summary says so instead of counting it scored."""
    compute = _score.compute_task
    with ResultStore(store_url) as store, ResultStore(store_url) as other:

        def other_run_first(task: _score.Task) -> list[ResultRow]:
            rows = compute(task)
            if task.item.item_id == "b":
                other.add(rows)
            return rows

        monkeypatch.setattr(_score, "compute_task", other_run_first)
        s = score_items(_items(["a", "b"]), build_requests(["test_slow"]), store)
        assert (s.ok, s.failed, s.duplicates, s.computed, s.total) == (1, 0, 1, 2, 2)
        assert store.count(include_superseded=True) == 2
    print_summary(s)
    out = " ".join(capsys.readouterr().out.split())
    assert "2 tasks: 1 scored, 0 failed, 0 already stored" in out
    assert "1 computed by another run meanwhile, not stored" in out


def test_a_block_is_planned_from_the_rows_of_its_own_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Planning read every current row of each metric for each block: in a store shared with other
    manifests (or past the first blocks of a large one) the driver's memory grew with the store, 170 MB
    and 0.5-0.75 s a block at 410,000 rows. It reads the rows of the block's items only."""
    db = str(tmp_path / "shared.sqlite")
    (req,) = build_requests(["uniform_random"])
    other = [ResultRow(f"other{k}", "uniform_random", req.config_hash, req.spec.version, "ok", 0.5)
             for k in range(1200)]  # more than one IN list of ids (500)
    with ResultStore(db) as store:
        store.add(other)
    read: list[int] = []
    current = ResultStore.current_fingerprints

    def counted(self: ResultStore, *args: Any, **kwargs: Any) -> dict[str, str]:
        found = current(self, *args, **kwargs)
        read.append(len(found))
        return found

    monkeypatch.setattr(ResultStore, "current_fingerprints", counted)
    manifest = _experiment(tmp_path / "exp", 40, ("g/ep0", "g/ep1"))
    assert score_suite(manifest, ["uniform_random"], db=db).summary.ok == 2
    assert read and set(read) == {0}  # the plan's read, then each task's own look (another run meanwhile?)
    # and what an item of a block has stored is still found, past several IN lists
    with ResultStore(db) as store:
        ids = [f"other{k}" for k in (0, 499, 500, 1199)] + ["absent"]
        found = current(store, "uniform_random", req.config_hash, req.spec.version, item_ids=ids)
        assert set(found) == set(ids[:-1])


# -- 5. the same run launched twice: what the other has in flight is left to it ------------------------


def test_a_second_launch_leaves_to_the_first_the_item_it_is_computing(
    store_url: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live process notes b in flight (the first launch, computing it); once this run has computed c
    (after a; one worker keeps the order), that launch stores b and ends. Before, this run computed b
    too and the store threw its row away (each launch doubled the work, and said nothing); now b is put
    off, with a warning naming that run, found stored at the end and left to it."""
    reqs = build_requests(["test_slow"])
    with noting_process(store_url, {"b": ["test_slow"]}) as first, ResultStore(store_url) as store:
        def first_stores_b(row: ResultRow, summary: Any) -> None:
            if row.item_id == "c":  # the first launch ends, its result of b stored (here, in its stead)
                first.kill()
                first.communicate(timeout=60)
                with ResultStore(store_url) as theirs:
                    assert score_items(_items(["b"]), reqs, theirs, executor=SerialExecutor()).ok == 1

        with caplog.at_level("WARNING", logger="robojudge.run._score"):
            s = score_items(_items(["a", "b", "c"]), reqs, store, executor=SerialExecutor(),
                            progress=first_stores_b)
        assert (s.computed, s.ok, s.duplicates, s.by_other_run, s.skipped, s.total) == (2, 2, 0, 1, 1, 3)
        assert store.count() == 3
    warned = [r.getMessage() for r in caplog.records if "another run" in r.getMessage()]
    assert len(warned) == 1 and f"pid {first.pid}," in warned[0] and "checked again at the end" in warned[0]
    print_summary(s)
    out = " ".join(capsys.readouterr().out.split())
    assert "3 tasks: 2 scored, 0 failed, 1 already stored" in out
    assert "1 of those already stored were stored by another run while this one went on (host " in out
    assert f"pid {first.pid}): left to it" in out


def test_what_a_first_launch_had_in_flight_is_computed_if_it_dies(store_url: str) -> None:
    """The first launch is killed while it computes b: this run, having put b off, computes it at the end."""
    reqs = build_requests(["test_slow"])
    with noting_process(store_url, {"b": ["test_slow"]}) as first, ResultStore(store_url) as store:
        def killed(row: ResultRow, summary: Any) -> None:
            if first.poll() is None:
                first.kill()
                first.communicate(timeout=60)

        s = score_items(_items(["a", "b", "c"]), reqs, store, executor=SerialExecutor(), progress=killed)
        assert (s.ok, s.duplicates, s.by_other_run, s.isolated) == (3, 0, 0, [])
        assert sorted(r.item_id for r in store.rows()) == ["a", "b", "c"]
        assert store.in_flight() == {}  # the dead run's note on b is cleared once b is stored


def test_a_live_note_of_other_metrics_is_no_overlap(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A judge run beside this score run on one store notes its items in flight under its own metric ids:
    that is no second launch of this run, so nothing is put off and nothing is said (review rev16 F2)."""
    reqs = build_requests(["test_slow"])
    order: list[str] = []
    caplog.set_level("WARNING", logger="robojudge.run._score")
    with noting_process(store_url, {"a": ["judge:m:pa"]}), ResultStore(store_url) as store:
        s = score_items(_items(["a", "b"]), reqs, store, executor=SerialExecutor(),
                        progress=lambda row, summary: order.append(row.item_id))
    assert (s.ok, s.by_other_run) == (2, 0) and order == ["a", "b"]  # a not put off
    assert not [r for r in caplog.records if "another run" in r.getMessage()]


# -- 6. a pool run's items are noted too (audit concur: a -w N run wrote no notes) ---------------------


def test_a_pool_run_notes_the_items_its_workers_compute(store_url: str) -> None:
    """A run with worker processes notes each item as it hands it out (queued) and clears the note once the
    item's rows are stored: a second launch can see what it computes. Before, such a run noted nothing, and
    a second launch computed all of it again."""
    reqs = build_requests(["test_slow"])
    seen: list[tuple[str, dict[str, list[str]]]] = []
    with ResultStore(store_url) as store:
        def look(row: ResultRow, summary: Any) -> None:
            with ResultStore(store_url) as other:
                seen.append((row.item_id, other.in_flight()))

        s = score_items(_items([f"i{k}" for k in range(6)]), reqs, store, executor=LocalProcessExecutor(2),
                        progress=look)
        assert s.ok == 6
        assert store.in_flight() == {}  # every note cleared
    assert len(seen) == 6
    first, notes = seen[0]
    # 4 tasks handed out (2 workers, 2 each): the 3 whose rows are not back yet are noted, with their metric
    assert len(notes) == 3 and first not in notes and set(notes) < {"i0", "i1", "i2", "i3"}
    assert all(m == ["test_slow"] for m in notes.values())
    for item, notes in seen:  # an item's note is gone once its row is stored
        assert item not in notes


def test_a_second_launch_puts_off_what_a_pool_run_hands_its_workers(store_url: str) -> None:
    """A live pool run's note (queued) is an overlap as a serial run's is: the item is put off, then
    computed at the end if that run stored nothing meanwhile."""
    reqs = build_requests(["test_slow"])
    order: list[str] = []
    with noting_process(store_url, {"a": ["test_slow"]}, queued=True), ResultStore(store_url) as store:
        s = score_items(_items(["a", "b"]), reqs, store, executor=SerialExecutor(),
                        progress=lambda row, summary: order.append(row.item_id))
    assert order == ["b", "a"] and s.ok == 2  # a put off, computed last (the other run stored nothing)


def test_a_killed_pool_runs_notes_are_no_crash(store_url: str) -> None:
    """The notes a pool's driver leaves when it is killed name tasks its workers had, not a crash in this
    process: the next run computes them as usual (not alone in a child process), clears them, and `results
    status` does not list them as in flight."""
    from robojudge.run import results_status

    note_from_ended_process(store_url, {"a": ["test_slow"], "b": ["test_slow"]}, queued=True)
    with ResultStore(store_url) as store:
        assert set(store.in_flight(ended=True)) == {"a", "b"}
        assert store.in_flight(ended=True, queued=False) == {}
        status = results_status(store, None)
        assert (status.in_flight, status.in_flight_ended) == ({}, {})
        s = score_items(_items(["a", "b"]), build_requests(["test_slow"]), store, executor=SerialExecutor())
        assert (s.ok, s.isolated) == (2, [])
        assert store.in_flight() == {}


def test_status_lists_an_item_a_live_run_computes_beside_a_killed_pools_note(store_url: str) -> None:
    """A killed pool's note is left out of `results status`, not the note of a run computing the item now
    (review rev19 F2: the item was dropped from the list)."""
    from robojudge.run import results_status

    note_from_ended_process(store_url, {"a": ["test_slow"]}, queued=True)
    with noting_process(store_url, {"a": ["test_slow"]}), ResultStore(store_url) as store:
        status = results_status(store, None)
        assert (status.in_flight, status.in_flight_ended) == ({"a": ["test_slow"]}, {})
