"""Several processes superseding the same rows at once: one current row per key, nothing lost."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.synchronize import Event

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from robojudge.store import ResultRow, ResultStore

N_KEYS = 200


def _row(n: int, fingerprint: str) -> ResultRow:
    return ResultRow(f"item{n:04d}", "ssim", "cfg", "1", "ok", float(n), fingerprint=fingerprint,
                     details={"fp": fingerprint})


def _writer(url: str, fingerprint: str, batch: int, go: Event) -> None:
    go.wait(30)
    with ResultStore(url) as store:
        for i in range(0, N_KEYS, batch):
            store.add(_row(n, fingerprint) for n in range(i, min(i + batch, N_KEYS)))


@pytest.mark.slow
def test_concurrent_supersede_keeps_one_current_row_per_key(store_url: str) -> None:
    with ResultStore(store_url) as store:
        store.add(_row(n, "old") for n in range(N_KEYS))
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    plans = [("new-a", 7), ("new-a", 11), ("new-b", 5)]
    procs = [ctx.Process(target=_writer, args=(store_url, fp, batch, go)) for fp, batch in plans]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with ResultStore(store_url) as store:
        current = store.rows()
        every = store.rows(include_superseded=True)
    keys = [r.key for r in current]
    assert len(keys) == len(set(keys)) == N_KEYS
    assert all(r.fingerprint in ("new-a", "new-b") and r.details == {"fp": r.fingerprint} for r in current)
    old = [r for r in every if r.fingerprint == "old"]
    assert len(old) == N_KEYS and not any(r.current for r in old)  # every original kept, superseded
    # Each key's history starts with the original and changes fingerprint at every step: a writer only
    # supersedes a row whose inputs differ from its own (old -> new-a -> new-b -> new-a is possible).
    engine = create_engine(make_url(store_url))
    try:
        with engine.connect() as conn:  # ids follow the order rows of one key were stored in
            query = "SELECT item_id, fingerprint FROM robojudge_results ORDER BY item_id, id"
            stored = conn.execute(text(query))
            history: dict[str, list[str]] = {}
            for item_id, fingerprint in stored:
                history.setdefault(item_id, []).append(fingerprint)
    finally:
        engine.dispose()
    assert len(history) == N_KEYS
    for steps in history.values():
        assert steps[0] == "old" and all(a != b for a, b in zip(steps, steps[1:], strict=False)), steps
