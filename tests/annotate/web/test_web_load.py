"""A small load test: 8 annotators x 8 labels at once against uvicorn on 127.0.0.1, SQLite and PostgreSQL.

Every label the server acknowledged (303) is stored exactly once with the values sent, and of each
pair of simultaneous submits of one task exactly one is stored (the other is answered as its repeat,
303, or refused, 409).
benchmarks/bench_annotate_load.py runs the full 50 x 100.
"""

from __future__ import annotations

import asyncio

import pytest
from _load import run_load, setup_load_project, verify
from _web_data import PASSWORD, SECRET, cheap_passwords, running

from robojudge.annotate.web import create_app

N_ANNOTATORS = 8
PER_ANNOTATOR = 8


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def load_db(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'load.sqlite'}"
    return str(request.getfixturevalue("postgres_db_url"))


@pytest.mark.slow
def test_concurrent_annotators_lose_and_duplicate_nothing(load_db, tmp_path):
    with cheap_passwords():
        suite, users = setup_load_project(tmp_path / "suite", load_db, N_ANNOTATORS, PER_ANNOTATOR, PASSWORD)
        app = create_app(load_db, suite, SECRET)
        try:
            with running(app) as base:
                result = asyncio.run(run_load(base, users, PASSWORD, per_annotator=PER_ANNOTATOR,
                                              double_every=4, deadline_s=240))
        finally:
            app.state.ctx.service.close()
        verdict = verify(load_db, "load", "root", PASSWORD, result)
    assert not result.timed_out and result.unexpected == []
    assert len(result.sent) == N_ANNOTATORS * PER_ANNOTATOR
    assert result.double_pairs == N_ANNOTATORS * PER_ANNOTATOR // 4
    assert result.statuses["submit 409"] <= result.double_pairs  # a repeat is answered 303, not refused
    assert (verdict.lost, verdict.duplicated, verdict.altered, verdict.extra) == ([], [], [], [])
    assert verdict.stored == N_ANNOTATORS * PER_ANNOTATOR
