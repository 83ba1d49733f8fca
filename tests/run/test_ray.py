"""``--executor ray`` on a local Ray head bound to 127.0.0.1 (one start for the whole module).

Exactly once: a worker killed in the middle of its task is replaced and the task retried; every
(item, metric) ends with one row holding the value a local run gives, and a second run adds none.
A task that raises is an error row, and so is one whose worker dies on every attempt.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import _toy_metrics  # noqa: F401
import pytest

from _ray_head import private_ray
from robojudge.run import build_requests, score_items, score_sets_into, score_suite
from robojudge.run._ray import RayExecutor
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

ray = pytest.importorskip("ray")

HERE = Path(__file__).parent
PLUGINS = "_toy_metrics,_ray_toy"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory, ray_toy: ModuleType) -> Iterator[None]:
    """A private Ray instance: 2 CPUs, no dashboard, 127.0.0.1 only; workers find the test metrics."""
    cache = tmp_path_factory.mktemp("worker-cache")
    env = {
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "ROBOJUDGE_PLUGINS": PLUGINS,
        "ROBOJUDGE_CACHE_DIR": str(cache),
    }
    with private_ray(env):
        yield


def _items(n: int, tag: str = "") -> list[Item]:
    return [Item(item_id=f"item{i:02d}{tag}", video="/nonexistent.mp4", instruction="x") for i in range(n)]


def _values(store: ResultStore) -> dict[tuple[str, str], float | None]:
    return {(r.item_id, r.metric): r.value for r in store.rows()}


def _all_rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return con.execute("select item_id, metric from robojudge_results").fetchall()


class _KillOnce:
    """Once ``after`` rows are stored, SIGKILLs the worker of an item that is in flight.

    It watches from a thread of its own, so the kill lands while the driver waits for results,
    not only between them (when an actor may be idle, waiting for its next task).
    """

    def __init__(self, marks: Path, after: int, fresh: float) -> None:
        self.marks, self.after, self.fresh = marks, after, fresh
        self.stored: set[str] = set()
        self.killed: tuple[str, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __call__(self, row: ResultRow, summary: object) -> None:
        self.stored.add(row.item_id)

    def __enter__(self) -> _KillOnce:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            if len(self.stored) < self.after:
                continue
            for mark in sorted(self.marks.iterdir()):
                item, pid = mark.name.rsplit(".", 1)
                # Only an item whose worker is surely still on it: its mark is younger than the metric's
                # sleep. An older unstored mark may be an item finished and in transit to the driver;
                # killing its worker then leaves nothing of that item to run again.
                try:
                    age = time.time() - mark.stat().st_mtime
                except FileNotFoundError:
                    continue
                if item not in self.stored and age < self.fresh:
                    os.kill(int(pid), signal.SIGKILL)
                    self.killed = (item, int(pid))
                    return


@pytest.mark.parametrize("metric", ["test_ray_cpu", "test_ray_model"], ids=["task", "actor"])
def test_a_killed_worker_costs_nothing_and_nothing_twice(head: None, tmp_path: Path, metric: str) -> None:
    items = _items(12)
    marks = tmp_path / "marks"
    marks.mkdir()
    (req,) = build_requests([metric], {metric: {"marks": str(marks), "seconds": 0.4}})
    with ResultStore(tmp_path / "local.sqlite") as local:
        score_items(items, build_requests([metric]), local)
        expected = {item: v for (item, _), v in _values(local).items()}
    killer = _KillOnce(marks, after=3, fresh=0.25)  # the metric sleeps 0.4 s after marking
    db = tmp_path / "ray.sqlite"
    ex = RayExecutor(max_retries=2)
    with ResultStore(db) as store:
        with killer:
            run = score_items(items, [req], store, executor=ex, progress=killer)
        assert killer.killed is not None, "no item was in flight to kill"
        item, pid = killer.killed
        tried = {int(m.name.rsplit(".", 1)[1]) for m in marks.glob(f"{item}.*")}
        assert pid in tried and len(tried) >= 2, "the killed item was not run again on another worker"
        assert (run.ok, run.failed) == (12, 0)
        assert {i: v for (i, _), v in _values(store).items()} == expected
        pids = [(r.details or {}).get("pid") for r in store.rows()]
        # Workers stay up between tasks (an actor for the model metric, while one CPU is left to
        # plain tasks), so what a process loaded serves several items.
        assert max(pids.count(p) for p in set(pids)) >= 3
        assert ex.actors_started == (1 if metric == "test_ray_model" else 0)
        again = score_items(items, [req], store, executor=RayExecutor())
        assert (again.ok, again.failed, again.skipped) == (0, 0, 12)
    rows = _all_rows(db)
    assert len(rows) == len(set(rows)) == 12  # one row per (item, metric), superseded ones included


def test_failures_are_error_rows_not_a_crashed_run(head: None, tmp_path: Path) -> None:
    items = _items(3) + _items(1, "boom") + _items(1, "crash")
    with ResultStore(tmp_path / "r.sqlite") as store:
        run = score_items(items, build_requests(["test_boom", "test_crash"]), store,
                          executor=RayExecutor(max_retries=0))
        errors = {(r.item_id, r.metric): r.error for r in store.rows() if r.status == "error"}
    assert run.failed == len(errors)
    assert "ZeroDivisionError" in errors[("item00boom", "test_boom")]
    # The crashing metric costs its own row: its task's other metric is computed again alone.
    assert errors[("item00crash", "test_crash")].startswith(
        "the Ray worker died while scoring this item (1 attempt)")
    assert set(errors) == {("item00boom", "test_boom"), ("item00crash", "test_crash")}
    assert run.ok + run.failed == 10


@pytest.mark.parametrize("crasher", ["test_crash", "test_ray_model_crash"], ids=["task", "actor"])
def test_a_metric_that_kills_its_worker_costs_only_its_own_rows(head: None, ray_toy: ModuleType,
                                                                tmp_path: Path, crasher: str) -> None:
    """A task whose worker dies on every attempt is computed again one metric per Ray task (an actor's
    too), so that the item's other metrics are stored, as with the local pool; before, each of them got
    "the Ray worker died" (audit "ray", F1)."""
    import numpy as np

    from robojudge.video import write_video

    items = []
    for name in ("crash03", "it01", "it02"):
        write_video(tmp_path / f"{name}.mp4", np.full((8, 32, 32, 3), 60, np.uint8), fps=4)
        items.append(Item(item_id=name, video=str(tmp_path / f"{name}.mp4"), instruction="x"))
    reqs = build_requests([crasher, "pixel_frame_consistency"])
    with ResultStore(tmp_path / "r.sqlite") as store:
        run = score_items(items, reqs, store, executor=RayExecutor(max_retries=0))
        status = {(r.item_id, r.metric): r.status for r in store.rows()}
        (error,) = [r.error for r in store.rows(status="error")]
        assert status[("crash03", "pixel_frame_consistency")] == "ok"
        assert {k for k, v in status.items() if v != "ok"} == {("crash03", crasher)}
        assert (run.ok, run.failed) == (5, 1)
        assert error == ("the Ray worker died while scoring this item (1 attempt); "
                         "--retry-errors tries it again")
        again = score_items(items, reqs, store, executor=RayExecutor(max_retries=0), retry_errors=True)
        assert (again.ok, again.failed, again.skipped) == (0, 1, 5)


def test_the_time_limit_holds_on_ray_workers(head: None, tmp_path: Path) -> None:
    # Soft (test_hang: Python that never returns) and hard (test_hang_native: the signal blocked, as
    # in a stuck system call; the worker is ended, and Ray reports a dead worker).
    items = _items(2) + _items(1, "hang")
    with ResultStore(tmp_path / "r.sqlite") as store:
        run = score_items(items, build_requests(["test_hang", "test_hang_native"]), store,
                          executor=RayExecutor(max_retries=0), timeout_s=0.5)
        errors = {(r.item_id, r.metric): r.error for r in store.rows() if r.status == "error"}
    assert run.ok == 4
    soft = errors[("item00hang", "test_hang")]
    hard = errors[("item00hang", "test_hang_native")]
    # test_hang_native ended the worker of the item's task; each metric then ran alone: test_hang was
    # stopped in a worker that lived on, test_hang_native ended its worker again
    assert soft.startswith("stopped after the time limit of 0.5 s")
    assert "the Ray worker died" in hard and "time limit (0.5 s, --timeout)" in hard
    # The soft stop alone: the worker lives on. Ray's own retries (the default) stay on here, so that a
    # task leased to the worker the hard stop above ended, before Ray has cleared it away, runs again
    # rather than failing as "the Ray worker died" (seen once on a loaded machine); a soft stop is no
    # worker death and is never retried.
    with ResultStore(tmp_path / "r2.sqlite") as store:
        run = score_items(items, build_requests(["test_hang"]), store, executor=RayExecutor(), timeout_s=0.5)
        errors = [(r.item_id, r.error) for r in store.rows() if r.status == "error"]
    assert [item for item, _ in errors] == ["item00hang"], errors
    assert run.ok == 2 and "stopped after the time limit of 0.5 s" in errors[0][1]


def test_an_exception_escaping_the_task_function_is_reported_per_task(head: None,
                                                                    ray_toy: ModuleType) -> None:
    ex = RayExecutor(max_retries=0)
    out = dict(ex.map_unordered(ray_toy.raises_on_two, range(4), lambda t, why: f"crashed: {why}"))
    ex.shutdown()
    assert out[0] == 0 and out[1] == 10 and out[3] == 30
    assert str(out[2]).startswith("crashed: Ray could not run this task") and "not caught" in str(out[2])
    assert ray.is_initialized()  # an executor that joined a running instance leaves it up


def test_a_metric_that_breaks_its_contract_costs_its_own_rows_on_ray(head: None, contract_toy: ModuleType,
                                                                     tmp_path: Path) -> None:
    """A metric that returns no Score, or a value outside its range, costs its own rows there as in a
    local run: the item's healthy metric is stored, and no row blames Ray."""
    items = [Item(item_id=n, video="/nonexistent.mp4", instruction="x") for n in ("mid", "high")]
    reqs = build_requests(["test_fine", "test_returns_float", "test_out_of_range"])
    with ResultStore(tmp_path / "r.sqlite") as store:
        run = score_items(items, reqs, store, executor=RayExecutor(max_retries=0))
        errors = {(r.item_id, r.metric): r.error for r in store.rows() if r.status == "error"}
        assert {(r.item_id, r.metric) for r in store.rows(status="ok")} == {
            ("mid", "test_fine"), ("high", "test_fine"), ("mid", "test_out_of_range")}
    assert (run.ok, run.failed) == (3, 3)
    assert set(errors) == {("mid", "test_returns_float"), ("high", "test_returns_float"),
                           ("high", "test_out_of_range")}
    assert errors[("mid", "test_returns_float")].startswith("metric 'test_returns_float' returned float 0.5")
    assert errors[("high", "test_out_of_range")].startswith("7.5 is outside the native range [0, 1]")
    assert not any("Ray" in e for e in errors.values())


def test_actors_never_starve_plain_tasks(head: None, ray_toy: ModuleType) -> None:
    """Actors keep their CPUs for the whole run: with as many actors as CPUs, a task without a
    network would wait for ever. Even tasks here want an actor, odd ones a plain CPU task."""
    from robojudge.run._ray_place import Placement

    ex = RayExecutor(placement=lambda task, gpus: Placement(actor=task % 2 == 0))
    out: dict[int, int] = {}

    def run() -> None:
        out.update(dict(ex.map_unordered(ray_toy.pid_after, range(8), lambda t, why: (t, -1))))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=90)
    assert not worker.is_alive(), "the run stalled: plain tasks were starved by actors"
    ex.shutdown()
    assert sorted(out) == list(range(8)) and -1 not in {pid for _, pid in out.values()}
    assert ex.actors_started == 1  # one of the 2 CPUs is left to plain tasks


def test_score_suite_streams_blocks_through_ray(head: None, tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    rows = [{"item_id": f"i{i:03d}", "video": "v.mp4", "instruction": "x"} for i in range(23)]
    lines = [json.dumps(r) for r in rows]
    lines.insert(17, '{"item_id": "bad"')  # a broken record in the third block of 5
    manifest.write_text("\n".join(lines) + "\n")
    (tmp_path / "v.mp4").write_bytes(b"never opened")
    run = score_suite(manifest, ["test_ray_cpu"], db=str(tmp_path / "r.sqlite"), executor="ray",
                      address="auto", block=5)
    assert (run.summary.total, run.summary.ok) == (23, 23)
    assert [(p.line, "invalid JSON" in p.message) for p in run.manifest_problems] == [(18, True)]


def test_set_metric_groups_run_as_ray_tasks(head: None, tmp_path: Path) -> None:
    items = [Item(item_id=f"i{i}", video="/nonexistent.mp4", instruction="x", generator=f"g{i % 3}")
             for i in range(7)]
    with ResultStore(tmp_path / "r.sqlite") as store:
        run = score_sets_into(store, items, ["test_ray_set"], by="generator", executor=RayExecutor())
        assert run.computed == 3
        assert [(r.group, r.value) for r in run.rows] == [("g0", 3), ("g1", 2), ("g2", 2)]
        pids = {(r.details or {}).get("pid") for r in store.rows()}
        assert os.getpid() not in pids
        again = score_sets_into(store, items, ["test_ray_set"], by="generator", executor=RayExecutor())
        assert (again.computed, again.skipped) == (0, 3) and store.count(include_superseded=True) == 3


def test_two_drivers_doing_the_same_work_store_it_once(head: None, tmp_path: Path,
                                                       postgres_db_url: str) -> None:
    """The cluster setting: a PostgreSQL store, and the same pairs computed twice at once (two
    drivers started on the same suite). Each planned every pair before the other stored any, so
    every pair is computed twice; the store keeps one row per pair, and each driver counts as scored
    only the rows it stored (the others as duplicates, or, found stored by the other before it computed
    them, as stored by another run)."""
    items = _items(10)
    (req,) = build_requests(["test_ray_cpu"], {"test_ray_cpu": {"seconds": 0.05}})
    runs: list[object] = []
    with ResultStore(postgres_db_url) as store:
        store.count()  # the tables exist before the drivers race for them

    both_planned = threading.Barrier(2)

    class Together(RayExecutor):
        """Sends nothing until both drivers have planned (so neither sees the other's rows)."""

        def map_unordered(self, fn, tasks, on_crash, **kw):  # type: ignore[no-untyped-def]
            both_planned.wait(timeout=60)
            yield from super().map_unordered(fn, tasks, on_crash, **kw)

    def drive() -> None:
        with ResultStore(postgres_db_url) as own:
            runs.append(score_items(items, [req], own, executor=Together()))

    drivers = [threading.Thread(target=drive) for _ in range(2)]
    for d in drivers:
        d.start()
    for d in drivers:
        d.join(timeout=120)
    assert len(runs) == 2 and all(r.ok + r.duplicates + r.by_other_run == 10  # type: ignore[attr-defined]
                                  for r in runs)
    assert sum(r.ok for r in runs) == 10  # type: ignore[attr-defined]
    with ResultStore(postgres_db_url) as store:
        assert store.count(include_superseded=True) == 10
        assert {r.item_id for r in store.rows()} == {i.item_id for i in items}


def test_judging_on_ray_stores_what_a_local_run_stores(head: None, tmp_path: Path) -> None:
    import numpy as np

    from robojudge.judges import ResponseCache, get_rubric, make_judge
    from robojudge.run import judge_items
    from robojudge.video import write_video

    items = []
    for i in range(5):
        video = tmp_path / f"v{i}.mp4"
        write_video(video, np.full((8, 32, 32, 3), 40 * i, np.uint8), fps=4)
        items.append(Item(item_id=f"v{i}", video=str(video), instruction="pick it up"))
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "concurrency": 2,
                        "replies": ['{"reasoning": "fine", "instruction_alignment": 4}']})
    rubric = [get_rubric("ia")]
    with ResultStore(tmp_path / "local.sqlite") as local, ResponseCache(tmp_path / "cache") as cache:
        judge_items(items, judge, rubric, local, cache=cache, decode_workers=0)
        expected = {(r.item_id, r.metric, r.config_hash): r.value for r in local.rows()}
    with ResultStore(tmp_path / "ray.sqlite") as store:
        run = judge_items(items, judge, rubric, store, executor=RayExecutor())
        assert (run.scored, run.failed) == (5, 0) and run.stats.sent == 5
        assert {(r.item_id, r.metric, r.config_hash): r.value for r in store.rows()} == expected
        again = judge_items(items, judge, rubric, store, executor=RayExecutor())
        assert (again.skipped, again.computed) == (5, 0)


def test_a_ray_task_runs_opencv_on_its_cpu(head: None) -> None:
    # Ray workers run OpenCV on the CPUs their task holds (1 for a plain task), not on every CPU.
    from _cv_threads import frame_memory_share, opencv_threads

    ex = RayExecutor("local", workers=2)
    try:
        got = {r for _, r in ex.map_unordered(opencv_threads, range(4), lambda t, why: -1)}
        # ... and hold decoded frames to their CPU's share of the node's budget
        shares = {r for _, r in ex.map_unordered(frame_memory_share, range(4), lambda t, why: -1.0)}
    finally:
        ex.shutdown()
    assert got == {1}
    assert shares == {1 / 2}  # one CPU of the node's 2 (ray.init(num_cpus=2))


def test_the_parts_of_a_task_that_died_go_once(head: None, tmp_path: Path) -> None:
    """A task whose worker died on every attempt goes again one part at a time, each part once: its
    attempts ruled out a passing fault. With the executor's retries for each part, a fault every part
    meets (a video that crashes the decoder) cost (parts + 1) times the attempts (review rev17 F1)."""
    from _toy_metrics import note_then_exit

    marker = tmp_path / "attempts.txt"
    task = ((1, 2, 3), str(marker))

    def split(t: tuple[tuple[int, ...], str]) -> list[tuple[tuple[int, ...], str]]:
        return [((v,), t[1]) for v in t[0]]

    ex = RayExecutor(max_retries=1)
    done = list(ex.map_unordered(note_then_exit, [task], lambda t, why: why, split=split))
    assert sorted(t[0] for t, _ in done) == [(1,), (2,), (3,)]
    assert all("the Ray worker died" in why for _, why in done)
    lines = marker.read_text().splitlines()
    assert lines.count("(1, 2, 3)") == 2 and len(lines) == 2 + 3, lines  # 2 attempts, then each part once
