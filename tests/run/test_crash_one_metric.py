"""A metric that kills its process (as an out-of-memory kill does) costs only its own row on the item: the
item's other metrics are computed again alone, one per child, and stored (audit s69_hostile 10)."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from robojudge.run._score import CRASHED_AGAIN
from robojudge.store import ResultStore

HERE = Path(__file__).parent


def _score(tmp_path: Path, db: Path, workers: int) -> subprocess.CompletedProcess[str]:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": "v.mp4", "instruction": "x"}) + "\n"
                                for n in ("a", "crash", "b")))
    (tmp_path / "v.mp4").write_bytes(b"placeholder; the toy metrics never open it")
    env = {**os.environ, "ROBOJUDGE_PLUGINS": "_toy_metrics", "COLUMNS": "300",
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "robojudge", "score", str(manifest), "-m", "test_sigkill,test_slow",
           "--db", str(db), "--workers", str(workers), "--no-progress"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def _rows(db: Path) -> dict[tuple[str, str], tuple[str, str | None]]:
    with ResultStore(db) as store:
        return {(r.item_id, r.metric): (r.status, r.error) for r in store.rows()}


@pytest.mark.slow
def test_one_worker_retries_the_metrics_of_the_item_one_per_child(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    first = _score(tmp_path, db, 1)
    assert first.returncode == -signal.SIGKILL, first.stdout + first.stderr  # the score process itself
    second = _score(tmp_path, db, 1)
    assert second.returncode == 0, second.stdout + second.stderr
    rows = _rows(db)
    # Before, the child computing the whole item died and test_slow got the error row as well.
    assert rows[("crash", "test_slow")] == ("ok", None)
    status, error = rows[("crash", "test_sigkill")]
    assert status == "error" and error is not None and error.startswith(CRASHED_AGAIN)
    assert "(killed by SIGKILL, most often the kernel's out-of-memory killer)" in error
    assert error.endswith("; --retry-errors tries it again")
    assert {k: v[0] for k, v in rows.items() if k[0] != "crash"} == dict.fromkeys(
        [("a", "test_sigkill"), ("a", "test_slow"), ("b", "test_sigkill"), ("b", "test_slow")], "ok")
    assert "3 scored, 1 failed, 2 already stored" in second.stdout
    assert "1 crashed it again" in " ".join(second.stdout.split())


@pytest.mark.slow
def test_a_pool_says_how_its_worker_died(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    done = _score(tmp_path, db, 2)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(db)
    assert rows[("crash", "test_slow")] == ("ok", None)
    # Before, test_slow failed too, and the row said only "the worker process died while scoring this item".
    assert rows[("crash", "test_sigkill")] == ("error", "the worker process died while scoring this item "
                                               "(killed by SIGKILL, most often the kernel's out-of-memory "
                                               "killer); --retry-errors tries it again")
    assert "5 scored, 1 failed" in done.stdout


def test_how_a_worker_died_is_read_from_the_processes_taken_at_submit() -> None:
    # A busy CI machine once reported "a crash in a native library, or out of memory" for a worker killed
    # by SIGKILL: the reason is read from the pool's list of processes, which was found empty. The
    # processes taken when the task was submitted are read too.
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from robojudge.run._executor import how_it_died, workers_of

    pool = ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"))
    future = pool.submit(os.abort)
    workers = workers_of(pool)
    with pytest.raises(BrokenProcessPool):
        future.result()
    pool.shutdown(wait=True)  # (the pool's own list is gone now)
    assert how_it_died(pool) == "a crash in a native library, or out of memory"
    assert how_it_died(pool, workers) == "killed by SIGABRT: a crash in a native library"


def test_how_a_worker_died_waits_out_the_pool_reaping_it_too() -> None:
    # The cause of that report: the pool's own thread reaps the dead worker too, and a read between its
    # waitpid and its note of the status finds none (multiprocessing's poll() returns None on ECHILD).
    from concurrent.futures import ProcessPoolExecutor

    from robojudge.run._executor import how_it_died

    class Reaped:  # a worker whose status the other thread notes on the third read
        reads = 0

        def join(self, timeout: float | None = None) -> None:
            pass

        @property
        def exitcode(self) -> int | None:
            self.reads += 1
            return None if self.reads < 3 else -signal.SIGKILL

    pool = ProcessPoolExecutor(1)
    assert how_it_died(pool, [Reaped()]) == "killed by SIGKILL, most often the kernel's out-of-memory killer"
    pool.shutdown()
