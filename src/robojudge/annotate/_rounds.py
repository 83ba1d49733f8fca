"""Training rounds: agreement among trainees on a practice set, feedback on disagreements, pass or fail.

RoboJudge App. A.1 (Table 5) reports, per round, exact agreement, agreement within one point and the
mean absolute difference over every pair of annotators' primary PA and IA scores; this module computes
those with :func:`robojudge.meta.rater_agreement`, adds Krippendorff's ordinal alpha, and passes a
trainee whose scores fall within one point of the other trainees' at least ``threshold`` of the time.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Connection

from robojudge._json import json_ready
from robojudge.annotate import _schema as s
from robojudge.annotate._db import PRIVILEGED, Database, now, project_row
from robojudge.annotate._errors import AnnotateError, Forbidden, NotFound
from robojudge.annotate._protocol import AXES, DISAGREEMENT
from robojudge.annotate._types import Annotator

if TYPE_CHECKING:
    from robojudge.meta import RaterAgreement


@dataclass(frozen=True)
class Disagreement:
    item_id: str  # opaque
    axis: str
    a: str
    b: str
    score_a: int
    score_b: int
    evidence_a: str | None
    evidence_b: str | None


@dataclass(frozen=True)
class RoundAgreement:
    """Agreement of one round's submitted practice labels.

    Attributes:
        pooled: Table 5's three numbers over PA and IA together.
        per_axis: The same per axis.
        alpha: Krippendorff's ordinal alpha per axis and ``"pooled"`` (units = item x axis).
        per_annotator: Each trainee's pairs with every other trainee, PA and IA pooled.
        passed: Whether each trainee's within-one agreement reaches ``threshold``.
        per_pair: Each pair of trainees (key ``"a & b"``, names sorted), PA and IA pooled; left out of
            the view a trainee gets.
        coverage: How many of the round's ``n_items`` practice items each trainee submitted. A trainee
            passes only having labelled all of them (RoboJudge App. A.1: every trainee labels the same
            practice pool), so that a pass never rests on a few items.
    """

    round: str
    threshold: float
    annotators: tuple[str, ...]
    n_items: int
    pooled: RaterAgreement
    per_axis: dict[str, RaterAgreement]
    alpha: dict[str, float]
    per_annotator: dict[str, RaterAgreement]
    passed: dict[str, bool]
    per_pair: dict[str, RaterAgreement] = field(default_factory=dict)
    coverage: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return json_ready(asdict(self))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class RoundFeedback:
    agreement: RoundAgreement
    disagreements: list[Disagreement]


@dataclass(frozen=True)
class _Practice:
    """Submitted practice scores: ``scores[axis]`` is items x annotators with NaN where missing."""

    names: tuple[str, ...]
    items: tuple[str, ...]  # opaque ids
    scores: dict[str, np.ndarray]
    evidence: dict[tuple[int, int], str | None]


def _round_row(conn: Connection, project: str, name: str) -> Any:
    prow = project_row(conn, project)
    row = conn.execute(
        select(s.rounds).where(s.rounds.c.project_id == prow.id, s.rounds.c.name == name)
    ).first()
    if row is None:
        raise NotFound(f"project {project!r} has no training round named {name!r}")
    return row


def _practice(conn: Connection, round_id: int, until: Any = None) -> _Practice:
    """The round's submitted practice labels; with ``until`` (the round's closing time), only those
    submitted by then, so that a closed round reads as it was closed."""
    a, i, an, lb = s.assignments, s.items, s.annotators, s.labels
    tasks = conn.execute(
        select(a.c.id, a.c.status, a.c.submitted_at, i.c.public_id, an.c.username)
        .join(i, i.c.id == a.c.item_id)
        .join(an, an.c.id == a.c.annotator_id)
        .where(a.c.round_id == round_id, a.c.kind == "practice")
        .order_by(i.c.id, an.c.username)
    ).all()
    names = tuple(sorted({t.username for t in tasks}))
    items = tuple(dict.fromkeys(t.public_id for t in tasks))
    scores = {axis: np.full((len(items), len(names)), np.nan) for axis in AXES}
    evidence: dict[tuple[int, int], str | None] = {}
    submitted = {
        t.id: t for t in tasks
        if t.status == "submitted" and (until is None or t.submitted_at is None or t.submitted_at <= until)
    }
    if submitted:
        rows = conn.execute(
            select(lb.c.assignment_id, lb.c.label_values).where(
                lb.c.assignment_id.in_(list(submitted)), lb.c.status == "submitted"
            )
        )
        for r in rows:
            t = submitted[r.assignment_id]
            u, k = items.index(t.public_id), names.index(t.username)
            for axis in AXES:
                value = r.label_values.get(axis)
                scores[axis][u, k] = np.nan if value is None else float(value)
            evidence[(u, k)] = r.label_values.get("evidence")
    return _Practice(names, items, scores, evidence)


def agreement_of(practice: _Practice, round_name: str, threshold: float) -> RoundAgreement:
    """Table 5's numbers, alpha and pass/fail for a set of practice scores."""
    # robojudge.meta brings scipy; the web app should not pay for it at start-up.
    from robojudge.meta import RaterAgreement, krippendorff_alpha_ordinal, rater_agreement

    stacked = np.vstack([practice.scores[axis] for axis in AXES])
    per_annotator: dict[str, RaterAgreement] = {}
    for k, name in enumerate(practice.names):
        pairs = [stacked[:, [k, j]] for j in range(len(practice.names)) if j != k]
        per_annotator[name] = (
            rater_agreement(np.vstack(pairs)) if pairs else RaterAgreement(0, math.nan, math.nan, math.nan)
        )
    names = practice.names
    labelled = np.isfinite(practice.scores[AXES[0]]) | np.isfinite(practice.scores[AXES[1]])
    coverage = {name: int(labelled[:, k].sum()) for k, name in enumerate(names)}
    per_pair = {
        f"{names[x]} & {names[y]}": rater_agreement(stacked[:, [x, y]])
        for x in range(len(names))
        for y in range(x + 1, len(names))
    }
    return RoundAgreement(
        round=round_name,
        threshold=threshold,
        annotators=practice.names,
        n_items=len(practice.items),
        pooled=rater_agreement(stacked),
        per_axis={axis: rater_agreement(practice.scores[axis]) for axis in AXES},
        alpha={
            **{axis: krippendorff_alpha_ordinal(practice.scores[axis]) for axis in AXES},
            "pooled": krippendorff_alpha_ordinal(stacked),
        },
        per_annotator=per_annotator,
        passed={
            n: bool(per_annotator[n].n_pairs > 0 and per_annotator[n].within_one >= threshold
                    and coverage[n] == len(practice.items))
            for n in practice.names
        },
        per_pair=per_pair,
        coverage=coverage,
    )


def _disagreements(practice: _Practice) -> list[Disagreement]:
    out = []
    for axis in AXES:
        m = practice.scores[axis]
        for u, item in enumerate(practice.items):
            for x in range(len(practice.names)):
                for y in range(x + 1, len(practice.names)):
                    a, b = m[u, x], m[u, y]
                    if np.isfinite(a) and np.isfinite(b) and abs(a - b) >= DISAGREEMENT:
                        out.append(
                            Disagreement(
                                item,
                                axis,
                                practice.names[x],
                                practice.names[y],
                                int(a),
                                int(b),
                                practice.evidence.get((u, x)),
                                practice.evidence.get((u, y)),
                            )
                        )
    return out


@contextmanager
def _open(db: str | os.PathLike[str]) -> Iterator[Database]:
    base = Database(db, create=False)
    try:
        yield base
    finally:
        base.close()


def round_agreement(db: str | os.PathLike[str], project: str, name: str) -> RoundAgreement:
    """Agreement of a round's submitted practice labels so far (nothing is written).

    A closed round reads as it was closed: the labels submitted by then, and who passed as stored then
    (the qualifications it gave), whatever came later.
    """
    with _open(db) as base, base.read() as conn:
        row = _round_row(conn, project, name)
        return _as_closed(row, agreement_of(_practice(conn, row.id, row.closed_at), name, row.threshold))


def _as_closed(row: Any, result: RoundAgreement) -> RoundAgreement:
    """``result`` with who passed as stored when the round was closed (rounds closed by an earlier
    robojudge passed trainees on other rules); an open round's as it is."""
    stored = (row.result or {}).get("passed") if row.closed_at is not None else None
    if isinstance(stored, dict):
        result = replace(result, passed={n: bool(stored.get(n, False)) for n in result.annotators})
    return result


def close_round(db: str | os.PathLike[str], project: str, name: str) -> RoundAgreement:
    """Close a round: store its agreement and qualify the trainees who passed for production work.

    Raises:
        AnnotateError: The round is already closed, or no practice label was submitted.
    """
    with _open(db) as base, base.write() as conn:
        row = _round_row(conn, project, name)
        if row.closed_at is not None:
            raise AnnotateError(f"round {name!r} of {project!r} is already closed")
        result = agreement_of(_practice(conn, row.id), name, row.threshold)
        if result.pooled.n_pairs == 0:
            raise AnnotateError(f"round {name!r}: no two trainees submitted a label for the same item yet")
        stamp = now()
        conn.execute(
            s.rounds.update().where(s.rounds.c.id == row.id).values(closed_at=stamp, result=result.to_json())
        )
        ids = {
            r.username: r.id
            for r in conn.execute(
                select(s.annotators.c.id, s.annotators.c.username).where(
                    s.annotators.c.username.in_(result.annotators)
                )
            )
        }
        have = {
            r.annotator_id
            for r in conn.execute(
                select(s.qualified.c.annotator_id).where(s.qualified.c.project_id == row.project_id)
            )
        }
        for username, ok in result.passed.items():
            if ok and ids[username] not in have:
                conn.execute(
                    s.qualified.insert().values(
                        project_id=row.project_id, annotator_id=ids[username], round_id=row.id, at=stamp
                    )
                )
        return result


def round_feedback(base: Database, actor: Annotator, project: str, name: str) -> RoundFeedback:
    """Agreement and disagreements of a round, as the actor may see them.

    Reviewers, adjudicators and admins see everything at any time. A trainee sees the round once it is
    closed, and only the disagreements they are part of, with the other trainee's name withheld.
    """
    with base.read() as conn:
        row = _round_row(conn, project, name)
        practice = _practice(conn, row.id, row.closed_at)
    result = _as_closed(row, agreement_of(practice, name, row.threshold))
    found = _disagreements(practice)
    if actor.role in (*PRIVILEGED, "reviewer", "adjudicator"):
        return RoundFeedback(result, found)
    if actor.username not in practice.names or row.closed_at is None:
        raise Forbidden("round feedback is shown to its trainees once the round is closed")
    mine = []
    for d in found:
        if actor.username == d.b:
            d = Disagreement(d.item_id, d.axis, d.b, d.a, d.score_b, d.score_a, d.evidence_b, d.evidence_a)
        if actor.username == d.a:
            mine.append(
                Disagreement(
                    d.item_id,
                    d.axis,
                    d.a,
                    "another trainee",
                    d.score_a,
                    d.score_b,
                    d.evidence_a,
                    d.evidence_b,
                )
            )
    only_me = {actor.username: result.per_annotator[actor.username]}
    mine_result = RoundAgreement(
        result.round,
        result.threshold,
        (actor.username,),
        result.n_items,
        result.pooled,
        result.per_axis,
        result.alpha,
        only_me,
        {actor.username: result.passed[actor.username]},
        coverage={actor.username: result.coverage[actor.username]},
    )
    return RoundFeedback(mine_result, mine)
