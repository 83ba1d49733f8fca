"""Simultaneous writers lose nothing and duplicate nothing, on SQLite (WAL) and PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from _ann_data import SuiteFiles
from sqlalchemy import func, select

from robojudge.annotate import (
    AnnotationService,
    Conflict,
    LabelValues,
    add_annotator,
    create_round,
    init_project,
)
from robojudge.annotate import _schema as s

PW = "correct horse"
N_PEOPLE = 8
FULL = LabelValues.from_form(
    {
        "pa": 3,
        "ia": 4,
        "checklist.agent_consistency": 2,
        "checklist.scene_consistency": 2,
        "checklist.interaction_realism": 1,
        "checklist.agent_match": 2,
        "checklist.object_correctness": 2,
        "checklist.goal_completion": 1,
    }
)
PA = LabelValues(
    pa=3,
    checklist={
        k: FULL.checklist[k] for k in ("agent_consistency", "scene_consistency", "interaction_realism")
    },
)


def _setup(db: str, suite: SuiteFiles) -> list[str]:
    init_project(suite.manifest, db, "p")
    names = [f"a{k}" for k in range(N_PEOPLE)]
    for n in names:
        add_annotator(db, n, password=PW)
    create_round(db, "p", "r1", names, list(suite.item_ids))
    return names


def test_concurrent_submits_lose_and_duplicate_nothing(db_url: str, suite_files: SuiteFiles) -> None:
    names = _setup(db_url, suite_files)
    barrier = threading.Barrier(N_PEOPLE)
    with AnnotationService(db_url) as svc:
        people = {n: svc.authenticate(n, PW) for n in names}

        def work(name: str) -> int:
            who = people[name]
            assert who is not None
            barrier.wait()  # everyone starts writing at once
            done = 0
            for entry in svc.queue(who):
                aid = entry.assignment_id
                v = svc.save_draft(who, aid, PA, 0).version
                svc.reveal_instruction(who, aid)
                svc.submit(who, aid, FULL, v)
                done += 1
            return done

        with ThreadPoolExecutor(N_PEOPLE) as pool:
            counts = list(pool.map(work, names))
        assert counts == [len(suite_files.item_ids)] * N_PEOPLE
        lb, a = s.labels, s.assignments
        with svc.db.read() as conn:
            submitted = conn.execute(select(lb.c.assignment_id).where(lb.c.status == "submitted")).all()
            versions = conn.execute(select(lb.c.assignment_id, lb.c.version)).all()
            n_tasks = conn.execute(
                select(func.count()).select_from(a).where(a.c.status == "submitted")
            ).scalar()
    total = N_PEOPLE * len(suite_files.item_ids)
    assert n_tasks == total
    assert len(submitted) == total and len(set(submitted)) == total  # one submitted version each
    per_task = Counter(r.assignment_id for r in versions)
    assert set(per_task.values()) == {2}  # the draft and the submission, nothing more, nothing lost


def test_racing_writers_on_one_task_one_wins(db_url: str, suite_files: SuiteFiles) -> None:
    names = _setup(db_url, suite_files)
    n_threads = 8
    with AnnotationService(db_url) as svc:
        who = svc.authenticate(names[0], PW)
        assert who is not None
        aid = svc.queue(who)[0].assignment_id
        svc.save_draft(who, aid, PA, 0)
        svc.reveal_instruction(who, aid)
        barrier = threading.Barrier(n_threads)

        def race(k: int) -> str:
            barrier.wait()
            values = LabelValues.from_form({**FULL.to_json(), "evidence": f"tab {k}"})
            try:
                svc.submit(who, aid, values, 1)  # every tab read version 1
            except Conflict:
                return "conflict"
            return "ok"

        with ThreadPoolExecutor(n_threads) as pool:
            outcomes = Counter(pool.map(race, range(n_threads)))
        assert outcomes == {"ok": 1, "conflict": n_threads - 1}
        hist = svc.history(who, aid)
        assert [h.version for h in hist] == [1, 2] and hist[-1].status == "submitted"
