"""Exactly one row per key with several writer processes, and after a writer is SIGKILLed."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import time
from multiprocessing.synchronize import Event

import pytest
from sqlalchemy.engine import make_url

from robojudge.store import ResultRow, ResultStore

N_KEYS = 300


def _row(n: int, value: float) -> ResultRow:
    return ResultRow(f"item{n:04d}", "ssim", "cfg", "1", "ok", value, details={"writer": value})


def _writer(url: str, keys: list[int], batch: int, value: float, go: Event, out: mp.Queue) -> None:  # type: ignore[type-arg]
    go.wait(30)
    inserted = 0
    with ResultStore(url) as store:
        for i in range(0, len(keys), batch):
            inserted += store.add(_row(n, value) for n in keys[i : i + batch])
    out.put(inserted)


def _endless_writer(url: str, batch: int) -> None:
    with ResultStore(url) as store:
        for i in range(0, N_KEYS, batch):
            store.add(_row(n, 1.0) for n in range(i, i + batch))
            time.sleep(0.005)
    time.sleep(60)  # finished early: wait to be killed


@pytest.mark.slow
def test_concurrent_writers_store_each_key_once(store_url: str) -> None:
    ctx = mp.get_context("spawn")
    go = ctx.Event()  # the writers also race to create the schema in the empty database
    out: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    plans = [
        (list(range(0, 200)), 7, 1.0),
        (list(reversed(range(100, 300))), 5, 2.0),
        (list(range(0, N_KEYS, 2)), 11, 3.0),
    ]
    procs = [ctx.Process(target=_writer, args=(store_url, keys, b, v, go, out)) for keys, b, v in plans]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    inserted = sum(out.get(timeout=10) for _ in procs)
    with ResultStore(store_url) as store:
        rows = store.rows()
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys)) == N_KEYS
    assert inserted == N_KEYS
    for row in rows:
        assert row.details == {"writer": row.value}


@pytest.mark.slow
def test_sigkilled_writer_loses_nothing_committed_and_rerun_completes(store_url: str) -> None:
    batch = 10
    ctx = mp.get_context("spawn")
    ResultStore(store_url).close()
    proc = ctx.Process(target=_endless_writer, args=(store_url, batch))
    proc.start()
    with ResultStore(store_url) as store:
        deadline = time.monotonic() + 60
        while store.count() < N_KEYS // 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.kill()  # SIGKILL, in the middle of its stream of transactions
        proc.join(30)
        assert proc.exitcode == -9
        before = store.count()
        assert before % batch == 0  # each add() is all or nothing
        if make_url(store_url).get_backend_name() == "sqlite":
            with sqlite3.connect(make_url(store_url).database) as conn:  # type: ignore[arg-type]
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        # Rerunning the whole job only adds what is missing.
        assert store.add(_row(n, 2.0) for n in range(N_KEYS)) == N_KEYS - before
        rows = store.rows()
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys)) == N_KEYS
