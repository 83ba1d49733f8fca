"""A crash in the scoring process itself (one worker runs tasks in-process) costs one item, not the run.

The run notes each item in the store while it computes it; the next run computes an item whose note
was left (the process died) alone in a child process, and stores error rows if that dies too.
"""

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import pytest

from _in_flight import note_from_ended_process
from _store_full import fill_after
from robojudge.run import (
    LocalProcessExecutor,
    RunInterrupted,
    RunStoppedError,
    SerialExecutor,
    build_requests,
    score_items,
)
from robojudge.run._score import CRASHED_AGAIN
from robojudge.store import ResultStore
from robojudge.suite import Item

HERE = Path(__file__).parent

# Scores items n0, n1, crash, m0 with test_crash in this process; prints the summary as JSON.
SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {here!r})
    import _toy_metrics
    from robojudge.run import SerialExecutor, build_requests, score_items
    from robojudge.store import ResultStore
    from robojudge.suite import Item

    names = ("n0", "n1", "crash", "m0")
    items = [Item(item_id=n, video="/nonexistent.mp4", instruction="do it") for n in names]
    with ResultStore({db!r}) as store:
        s = score_items(items, build_requests(["test_crash"]), store, executor=SerialExecutor(),
                        timeout_s={timeout!r})
    print(json.dumps({{"ok": s.ok, "failed": s.failed, "skipped": s.skipped, "isolated": s.isolated,
                      "crashed_again": s.crashed_again}}))
""")


def _items(names: list[str]) -> list[Item]:
    return [Item(item_id=n, video="/nonexistent.mp4", instruction="do it") for n in names]


def _run(script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("timeout", [None, 120.0], ids=["no-limit", "timeout"])
def test_an_item_that_crashes_the_process_is_isolated_on_the_next_run(tmp_path: Path,
                                                                      timeout: float | None) -> None:
    # With --timeout the crash reason names the time limit's hard guard too: still a repeat crash.
    db = tmp_path / "r.sqlite"
    script = tmp_path / "score.py"
    script.write_text(SCRIPT.format(here=str(HERE), db=str(db), timeout=timeout))

    first = _run(script)
    assert first.returncode == 3, first.stderr  # the crash ends the process, as a segfault would
    with ResultStore(db) as store:
        assert {r.item_id for r in store.rows()} == {"n0", "n1"}  # what finished before it is kept
        assert store.in_flight() == {"crash": ["test_crash"]}

    second = _run(script)
    assert second.returncode == 0, second.stderr
    got = json.loads(second.stdout.strip().splitlines()[-1])
    assert got == {"ok": 1, "failed": 1, "skipped": 2, "isolated": ["crash"], "crashed_again": ["crash"]}
    with ResultStore(db) as store:
        rows = {r.item_id: r for r in store.rows()}
        assert set(rows) == {"n0", "n1", "crash", "m0"}
        assert rows["crash"].status == "error" and rows["crash"].error.startswith(CRASHED_AGAIN)
        assert ("time limit" in rows["crash"].error) == (timeout is not None)
        assert rows["crash"].error.endswith("; --retry-errors tries it again")
        assert store.in_flight() == {}

    third = _run(script)  # nothing left: the error row is kept, nothing runs in a child
    assert third.returncode == 0, third.stderr
    got = json.loads(third.stdout.strip().splitlines()[-1])
    assert got == {"ok": 0, "failed": 0, "skipped": 4, "isolated": [], "crashed_again": []}


def test_an_item_left_by_a_kill_is_computed_in_a_child_and_stored(tmp_path: Path) -> None:
    note_from_ended_process(tmp_path / "r.sqlite", {"b": ["test_crash"]})  # killed while computing b
    with ResultStore(tmp_path / "r.sqlite") as store:
        s = score_items(_items(["a", "b", "c"]), build_requests(["test_crash"]), store,
                        executor=SerialExecutor())
        assert (s.ok, s.failed, s.isolated, s.crashed_again) == (3, 0, ["b"], [])
        pids = {r.item_id: r.details["pid"] for r in store.rows()}
        assert pids["a"] == pids["c"] == os.getpid() and pids["b"] != os.getpid()
        assert store.in_flight() == {}


def test_ctrl_c_while_computing_leaves_no_note(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(RunInterrupted) as stop:
            score_items(_items(["a", "stop", "c"]), build_requests(["test_interrupt"]), store)
        assert stop.value.summary.interrupted and stop.value.summary.ok == 1
        assert store.in_flight() == {}  # a stop is not a crash: the next run computes it here
        again = score_items(_items(["a", "c"]), build_requests(["test_interrupt"]), store)
        assert (again.ok, again.isolated) == (1, [])


def test_notes_are_kept_for_other_items_and_cleared_for_stored_ones(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        reqs = build_requests(["test_crash"])
        score_items(_items(["a", "b"]), reqs, store)
        # "a" out of date (its result is stored), "elsewhere" an item of another manifest
        note_from_ended_process(tmp_path / "r.sqlite", {"a": ["test_crash"], "elsewhere": ["test_crash"]})
        s = score_items(_items(["a", "b"]), reqs, store)
        assert (s.skipped, s.isolated) == (2, [])
        assert store.in_flight() == {"elsewhere": ["test_crash"]}


@pytest.mark.parametrize("executor", [lambda: LocalProcessExecutor(2)], ids=["pool"])
def test_a_pool_clears_the_note_of_an_item_it_computes(tmp_path: Path, executor) -> None:
    # Worker processes isolate a crash themselves: nothing runs in an extra child, the note goes.
    note_from_ended_process(tmp_path / "r.sqlite", {"b": ["test_crash"]})
    with ResultStore(tmp_path / "r.sqlite") as store:
        s = score_items(_items(["a", "b"]), build_requests(["test_crash"]), store, executor=executor())
        assert (s.ok, s.isolated) == (2, [])
        assert store.in_flight() == {}


def test_the_cli_says_which_items_ran_alone(tmp_path: Path) -> None:
    manifest, db = tmp_path / "suite.jsonl", tmp_path / "r.sqlite"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": "v.mp4", "instruction": "x"}) + "\n"
                                for n in ("a", "crash[1]", "b")))
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_crash never opens it")
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_metrics", "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "robojudge", "score", str(manifest), "-m", "test_crash", "--db", str(db),
           "--no-progress"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 3, first.stderr
    status = subprocess.run([sys.executable, "-m", "robojudge", "results", "status", str(manifest), "--db",
                             str(db)], env=env, capture_output=True, text=True, timeout=300)
    assert status.returncode == 0, status.stderr
    said = " ".join(status.stdout.split())
    assert ("in flight when a run ended in a crash, a kill or a store that went away (or noted by a run on "
            "another machine): crash[1] (test_crash); the next run computes each alone in a child "
            "process") in said
    assert "being computed now" not in said
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    out = " ".join(second.stdout.split())
    assert "1 item an earlier run was computing when it ended (a crash, a kill or a store that went away; " \
           "or a run on another machine sharing the store, whose state cannot be checked from here) ran " \
           "alone in a child process: crash[1]; 1 crashed it again and got error rows" in out
    assert "crash[1] / test_crash: the process died while computing this item" in out


def test_a_segfault_prints_the_python_stack_and_the_rerun_isolates_it(tmp_path: Path) -> None:
    manifest, db = tmp_path / "suite.jsonl", tmp_path / "r.sqlite"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": "v.mp4", "instruction": "x"}) + "\n"
                                for n in ("a", "crash", "b")))
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_segfault never opens it")
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_metrics",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "robojudge", "score", str(manifest), "-m", "test_segfault", "--db", str(db),
           "--no-progress"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == -11, first.stderr  # SIGSEGV
    # faulthandler: the stack names the metric's function, for a bug report
    assert "Fatal Python error: Segmentation fault" in first.stderr and "in segfault" in first.stderr
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert "in segfault" in second.stderr  # the child's stack, as it dies again
    with ResultStore(db) as store:
        assert {r.item_id: r.status for r in store.rows()} == {"a": "ok", "crash": "error", "b": "ok"}


def test_a_set_metric_that_crashes_the_process_costs_its_group(tmp_path: Path) -> None:
    # `metrics sets` computes groups in its own process: the same guard, per (metric, group)
    manifest, db = tmp_path / "suite.jsonl", tmp_path / "r.sqlite"
    lines = [{"item_id": n, "video": "v.mp4", "instruction": "x", "generator": g}
             for n, g in (("a1", "a"), ("a2", "a"), ("c1", "crash"), ("b1", "b"))]
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "v.mp4").write_bytes(b"placeholder; test_set_segfault never opens it")
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_set_metrics", "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "robojudge", "metrics", "sets", str(manifest), "-m", "test_set_segfault",
           "--db", str(db)]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == -11, first.stdout + first.stderr
    with ResultStore(db) as store:
        assert {r.item_id for r in store.rows()} == {"group:generator=a"}  # groups run in manifest order
        assert store.in_flight() == {"group:generator=crash": ["test_set_segfault"]}
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout + second.stderr
    out = " ".join(second.stdout.split())
    assert ("1 group an earlier run was computing when it ended (a crash or a kill; or a run on another "
            "machine sharing the store, whose state cannot be checked from here) ran alone in a child "
            "process: test_set_segfault on crash; 1 crashed it again and got error rows") in out
    with ResultStore(db) as store:
        rows = {r.item_id: r for r in store.rows()}
        assert {i: (r.status, r.value) for i, r in rows.items()} == {
            "group:generator=a": ("ok", 2.0), "group:generator=b": ("ok", 1.0),
            "group:generator=crash": ("error", None)}
        assert "in an earlier run and again in a child process" in (rows["group:generator=crash"].error or "")
        assert rows["group:generator=b"].details["pid"] != rows["group:generator=a"].details["pid"]
        assert store.in_flight() == {}
    third = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0 and "ran alone in a child process" not in third.stdout
    assert "0 computed" in third.stdout


def test_a_set_group_left_by_a_kill_is_computed_in_a_child(tmp_path: Path) -> None:
    import _toy_set_metrics  # noqa: F401  (registers test_set_segfault in this process)

    from robojudge.run import score_sets_into

    items = [Item(item_id=n, video="/nonexistent.mp4", instruction="x", generator=g)
             for n, g in (("a1", "a"), ("b1", "b"))]
    note_from_ended_process(tmp_path / "r.sqlite", {
        "group:generator=b": ["test_set_segfault"],  # killed while computing b
        "group:generator=a": ["another_set_metric"],  # not this metric's note
    })
    with ResultStore(tmp_path / "r.sqlite") as store:
        s = score_sets_into(store, items, ["test_set_segfault"])
        assert (s.computed, s.isolated, s.crashed_again) == (2, [("test_set_segfault", "b")], [])
        pids = {r.item_id: r.details["pid"] for r in store.rows()}
        assert pids["group:generator=a"] == os.getpid() != pids["group:generator=b"]
        assert store.in_flight() == {}


def test_a_run_the_store_stops_clears_the_note_of_the_item_it_was_storing(tmp_path: Path) -> None:
    # Before, the note stayed and the next run called the item "a crash or a kill" and ran it alone.
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)  # b's row is refused, as by a full disk or a server gone
    with ResultStore(db) as store:
        with pytest.raises(RunStoppedError) as stop:
            score_items(_items(["a", "b", "c"]), build_requests(["test_crash"]), store,
                        executor=SerialExecutor())
        assert stop.value.summary.ok == 1 and stop.value.in_flight == []
        assert store.in_flight() == {}


def test_a_set_run_the_store_stops_clears_the_note_of_the_group_it_was_storing(tmp_path: Path) -> None:
    # Before, a set-level run left the note of the group whose rows the store refused, and the next run
    # called that group "a crash or a kill" and computed it alone in a child; per-item runs cleared it.
    import _toy_set_metrics  # noqa: F401  (registers test_set_segfault in this process)

    from robojudge.run import score_sets_into
    from robojudge.store import StoreError

    items = [Item(item_id=n, video="/nonexistent.mp4", instruction="x", generator=g)
             for n, g in (("a1", "a"), ("b1", "b"), ("c1", "c"))]
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)  # group b's row is refused, as by a full disk or a server gone
    with ResultStore(db) as store:
        with pytest.raises(StoreError, match="database or disk is full"):
            score_sets_into(store, items, ["test_set_segfault"])
        assert [r.item_id for r in store.rows()] == ["group:generator=a"]
        assert store.in_flight() == {}
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER disk_full")
    with ResultStore(db) as store:  # the next run computes b and c here, as groups never started
        s = score_sets_into(store, items, ["test_set_segfault"])
        assert (s.computed, s.skipped, s.isolated) == (2, 1, [])


def _keep_notes_of(db: Path, item_id: str) -> None:
    """Make the SQLite store refuse to remove the in-flight note of ``item_id``, as a store taking no
    writes at all does by then."""
    with sqlite3.connect(db) as con:
        con.execute(f"CREATE TRIGGER keep_note BEFORE DELETE ON robojudge_meta WHEN OLD.value LIKE "
                    f"'%\"item_id\": \"{item_id}\"%' "
                    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")


def test_a_run_whose_store_takes_no_writes_names_the_item_it_leaves_noted(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)
    _keep_notes_of(db, "b")
    with ResultStore(db) as store:
        with pytest.raises(RunStoppedError) as stop:
            score_items(_items(["a", "b"]), build_requests(["test_crash"]), store, executor=SerialExecutor())
        assert stop.value.in_flight == ["b"]  # not stored, and noted: the next run computes it alone
        assert store.in_flight() == {"b": ["test_crash"]}


def test_an_item_stored_before_the_store_stopped_is_not_named(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    ResultStore(db).close()
    _keep_notes_of(db, "a")  # a's rows are stored, then its note cannot be removed
    with ResultStore(db) as store:
        with pytest.raises(RunStoppedError) as stop:
            score_items(_items(["a", "b"]), build_requests(["test_crash"]), store, executor=SerialExecutor())
        assert stop.value.in_flight == []  # the next run finds a's rows and clears its note
        assert [r.item_id for r in store.rows()] == ["a"]


def test_a_pool_run_whose_store_takes_no_writes_names_no_item_for_a_lone_rerun(tmp_path: Path) -> None:
    """A pool's notes are of tasks handed to its workers: the next run does not compute them alone, so the
    stop does not say it will (review rev24 F1: it named them, one of them never noted)."""
    db = tmp_path / "r.sqlite"
    fill_after(db, 1)
    _keep_notes_of(db, "b")
    with ResultStore(db) as store:
        with pytest.raises(RunStoppedError) as stop:
            score_items(_items(["a", "b", "c"]), build_requests(["test_crash"]), store,
                        executor=LocalProcessExecutor(2))
        assert stop.value.in_flight == []
