"""Training rounds: Table 5's pairwise numbers and Krippendorff's alpha, by hand and against the
``krippendorff`` package; the pass threshold gates production work; feedback shows disagreements."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from _ann_data import SQLITE_ONLY, SuiteFiles

from robojudge.annotate import (
    AnnotateError,
    AnnotationService,
    Forbidden,
    LabelValues,
    add_annotator,
    assign,
    close_round,
    create_round,
    init_project,
    round_agreement,
)

PW = "correct horse"
CHECKS = {
    f"checklist.{c}": 1
    for c in (
        "agent_consistency",
        "scene_consistency",
        "interaction_realism",
        "agent_match",
        "object_correctness",
        "goal_completion",
    )
}


def _submit_round(db: str, scores: dict[str, dict[str, list[int]]], items: list[str]) -> None:
    """Each trainee submits PA/IA ``scores[name][axis][k]`` for ``items[k]`` (evidence names the score)."""
    with AnnotationService(db) as svc:
        for name, axes in scores.items():
            who = svc.authenticate(name, PW)
            assert who is not None
            page_of = {}
            for entry in svc.queue(who):
                page_of[entry.item_id] = entry.assignment_id
            with svc.db.read() as conn:
                from robojudge.annotate import _schema as s

                public = dict(
                    conn.execute(
                        s.items.select().with_only_columns(s.items.c.item_id, s.items.c.public_id)
                    ).all()
                )
            for k, item in enumerate(items):
                aid = page_of[public[item]]
                pa_only = {
                    "pa": axes["pa"][k],
                    **{
                        c: v
                        for c, v in CHECKS.items()
                        if c
                        in (
                            "checklist.agent_consistency",
                            "checklist.scene_consistency",
                            "checklist.interaction_realism",
                        )
                    },
                }
                v = svc.save_draft(who, aid, LabelValues.from_form(pa_only), 0).version
                svc.reveal_instruction(who, aid)
                full = {
                    "pa": axes["pa"][k],
                    "ia": axes["ia"][k],
                    **CHECKS,
                    "evidence": f"{name} says {axes['ia'][k]}",
                }
                svc.submit(who, aid, LabelValues.from_form(full), v)


@pytest.fixture
def project(db_url: str, suite_files: SuiteFiles) -> str:
    init_project(suite_files.manifest, db_url, "p", pass_threshold=0.8)
    for name in ("a", "b", "c"):
        add_annotator(db_url, name, password=PW)
    add_annotator(db_url, "rev", "reviewer", password=PW)
    return db_url


@SQLITE_ONLY
def test_two_trainees_by_hand(project: str, suite_files: SuiteFiles) -> None:
    items = list(suite_files.item_ids[:5])
    create_round(project, "p", "r1", ["a", "b"], items)
    _submit_round(
        project,
        {
            "a": {"pa": [1, 1, 2, 2, 3], "ia": [5, 4, 3, 2, 1]},
            "b": {"pa": [1, 2, 2, 3, 3], "ia": [5, 2, 3, 2, 4]},
        },
        items,
    )
    res = round_agreement(project, "p", "r1")
    # |differences|: PA 0,1,0,1,0 and IA 0,2,0,0,3 -> exact 6/10, within one 8/10, mean 7/10.
    assert res.pooled.n_pairs == 10
    assert (res.pooled.exact, res.pooled.within_one, res.pooled.mean_abs_diff) == pytest.approx(
        (0.6, 0.8, 0.7)
    )
    assert (res.per_axis["pa"].exact, res.per_axis["ia"].mean_abs_diff) == pytest.approx((0.6, 1.0))
    # The PA matrix is tests/meta's hand-worked example: coincidences [[2,1,0],[1,2,1],[0,1,2]], alpha 0.7.
    assert res.alpha["pa"] == pytest.approx(0.7)
    assert res.passed == {"a": True, "b": True}  # 0.8 within one meets the 0.8 threshold


def test_three_trainees_match_the_package_and_gate_production(project: str, suite_files: SuiteFiles) -> None:
    items = list(suite_files.item_ids[:4])
    scores = {
        "a": {"pa": [1, 2, 3, 4], "ia": [5, 4, 3, 2]},
        "b": {"pa": [1, 3, 3, 5], "ia": [4, 4, 3, 1]},
        "c": {"pa": [2, 2, 5, 4], "ia": [5, 2, 3, 2]},
    }
    create_round(project, "p", "r1", ["a", "b", "c"], items)
    _submit_round(project, scores, items)
    with pytest.raises(AnnotateError, match="passed no training round"):
        assign(project, "p", ["a"])  # the round exists: nobody is qualified before it closes
    res = close_round(project, "p", "r1")
    # Hand: 24 pairwise differences, 10 zero, 4 of them 2 (none larger), sum 18.
    assert (
        res.pooled.n_pairs,
        res.pooled.exact,
        res.pooled.within_one,
        res.pooled.mean_abs_diff,
    ) == pytest.approx((24, 10 / 24, 20 / 24, 0.75))
    # Per trainee, with the two others: a and b have 2 of 16 differences of 2, c has 4.
    assert {n: r.within_one for n, r in res.per_annotator.items()} == pytest.approx(
        {"a": 14 / 16, "b": 14 / 16, "c": 12 / 16}
    )
    assert res.passed == {"a": True, "b": True, "c": False}
    # Each pair over its 8 differences: a-b 0,1,0,1 / 1,0,0,1; a-c 1,0,2,0 / 0,2,0,0; b-c 1,1,2,1 / 1,2,0,1.
    got = {k: (r.n_pairs, r.exact, r.within_one, r.mean_abs_diff) for k, r in res.per_pair.items()}
    want = {
        "a & b": (8, 4 / 8, 1.0, 4 / 8),
        "a & c": (8, 5 / 8, 6 / 8, 5 / 8),
        "b & c": (8, 1 / 8, 6 / 8, 9 / 8),
    }
    assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in want)
    for axis in ("pa", "ia"):
        m = np.array([scores[n][axis] for n in ("a", "b", "c")], dtype=float)  # raters x units
        assert res.alpha[axis] == pytest.approx(
            krippendorff.alpha(reliability_data=m, level_of_measurement="ordinal")
        )
    pooled = np.hstack(
        [np.array([scores[n][axis] for n in ("a", "b", "c")], dtype=float) for axis in ("pa", "ia")]
    )
    assert res.alpha["pooled"] == pytest.approx(
        krippendorff.alpha(reliability_data=pooled, level_of_measurement="ordinal")
    )

    assert assign(project, "p", ["a", "b"]) == 6
    with pytest.raises(AnnotateError, match="c passed no training round"):
        assign(project, "p", ["c"], kind="label", items=[suite_files.item_ids[0]])
    with pytest.raises(AnnotateError, match="already closed"):
        close_round(project, "p", "r1")


@SQLITE_ONLY
def test_feedback_visibility(project: str, suite_files: SuiteFiles) -> None:
    items = list(suite_files.item_ids[:4])
    create_round(project, "p", "r1", ["a", "b", "c"], items)
    _submit_round(
        project,
        {
            "a": {"pa": [1, 2, 3, 4], "ia": [5, 4, 3, 2]},
            "b": {"pa": [1, 3, 3, 5], "ia": [4, 4, 3, 1]},
            "c": {"pa": [2, 2, 5, 4], "ia": [5, 2, 3, 2]},
        },
        items,
    )
    with AnnotationService(project) as svc:
        a, rev = svc.authenticate("a", PW), svc.authenticate("rev", PW)
        assert a is not None and rev is not None
        with pytest.raises(Forbidden):
            svc.round_feedback(a, "p", "r1")  # open round: trainees see nothing yet
        assert [(x.name, x.closed) for x in svc.rounds(a)] == [("r1", False)]
        assert svc.rounds(rev, "p") == svc.rounds(a) and svc.rounds(rev, "other") == []
        add_annotator(project, "d", password=PW)
        outsider = svc.authenticate("d", PW)
        assert outsider is not None and svc.rounds(outsider) == []  # trains in no round
        full = svc.round_feedback(rev, "p", "r1")
        # Gaps of 2 or more: PA a-c, PA b-c, IA a-c, IA b-c.
        assert sorted((d.axis, d.a, d.b) for d in full.disagreements) == [
            ("ia", "a", "c"),
            ("ia", "b", "c"),
            ("pa", "a", "c"),
            ("pa", "b", "c"),
        ]
        close_round(project, "p", "r1")
        mine = svc.round_feedback(a, "p", "r1")
        assert sorted((d.axis, d.a, d.b) for d in mine.disagreements) == [
            ("ia", "a", "another trainee"),
            ("pa", "a", "another trainee"),
        ]
        assert list(mine.agreement.per_annotator) == ["a"] and list(mine.agreement.passed) == ["a"]
        assert mine.agreement.per_pair == {} and set(full.agreement.per_pair) == {"a & b", "a & c", "b & c"}
        # The trainee reads the other's reasoning, not who wrote it (the evidence text here names them only
        # because the test wrote it so).
        assert {(d.evidence_a or "")[:6] for d in mine.disagreements} == {"a says"}


@SQLITE_ONLY
def test_round_threshold_and_trainees_are_checked(project: str, suite_files: SuiteFiles) -> None:
    """``init --pass-threshold`` was range-checked, a round's own threshold was not (80 was taken)."""
    from robojudge.annotate import update_annotator

    items = list(suite_files.item_ids[:2])
    for bad in (80.0, -1.0, 1.01, float("nan")):
        with pytest.raises(AnnotateError, match=r"pass threshold must be within 0-1, got"):
            create_round(project, "p", "r1", ["a", "b"], items, threshold=bad)
    update_annotator(project, "c", active=False)
    with pytest.raises(AnnotateError, match=r"'c': inactive"):
        create_round(project, "p", "r1", ["a", "c"], items)
    with pytest.raises(AnnotateError, match=r"'c': inactive"):
        assign(project, "p", ["a", "c"])
    assert create_round(project, "p", "r1", ["a", "b"], items, threshold=1.0) == 4


def test_project_and_round_names_longer_than_their_column_are_refused(
    project: str, suite_files: SuiteFiles
) -> None:
    # Before, SQLite stored such a name and PostgreSQL refused it with a bare "value too long".
    items = list(suite_files.item_ids[:2])
    with pytest.raises(AnnotateError, match=r"project name 'p+'\.\.\. has 201 characters; use at most 200"):
        init_project(suite_files.manifest, project, "p" * 201)
    with pytest.raises(AnnotateError, match=r"round name 'r+'\.\.\. has 201 characters; use at most 200"):
        create_round(project, "p", "r" * 201, ["a", "b"], items)
    # The limit counts characters, not bytes, as PostgreSQL's column does.
    assert init_project(suite_files.manifest, project, "é" * 200).name == "é" * 200
    assert create_round(project, "p", "é" * 200, ["a", "b"], items) == 4


def test_a_round_named_dot_or_dot_dot_is_refused(project: str, suite_files: SuiteFiles) -> None:
    # Its page, /rounds/. or /rounds/.., is an address a browser turns into another one before sending it.
    items = list(suite_files.item_ids[:2])
    for name in (".", ".."):
        with pytest.raises(AnnotateError, match=r"a round cannot be named '\.+'"):
            create_round(project, "p", name, ["a", "b"], items)
    assert create_round(project, "p", "v1/..", ["a", "b"], items) == 4  # its link encodes the "/"
