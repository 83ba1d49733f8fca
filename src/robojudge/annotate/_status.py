"""Progress of a project: tasks per kind and per annotator, training rounds, final labels."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select

from robojudge.annotate import _schema as s
from robojudge.annotate._db import project_row
from robojudge.annotate._export import disputed_items
from robojudge.annotate._service import UNPLAYABLE_EVENT, AnnotationService


@dataclass(frozen=True)
class ProjectStatus:
    """Counts per task kind and per annotator: ``{"open": n, "draft": n, "submitted": n}``.

    Attributes:
        n_final: Items with a final label (adjudicated, or primary submitted and not disputed).
        n_disputed: Items awaiting an adjudication: a cross-review disputes their primary label (see
            :func:`robojudge.annotate.disputed_items`), so it is not final.
        rounds: Training rounds: name -> ``"open"`` or ``"closed"``.
        qualified: Annotators who passed a round of this project.
        inactive: Annotators switched off (``update-annotator --inactive``) who still hold open or draft
            tasks of the project (practice aside): username -> how many. Nobody can finish those until
            they are moved (``robojudge annotate reassign``).
        unplayable: Items whose video an annotator reported as not playing in the app (manifest ids,
            sorted): mend the file, or leave the item out of the suite. A report is cleared once the task
            it was made on is submitted.
    """

    project: str
    n_items: int
    by_kind: dict[str, dict[str, int]]
    by_annotator: dict[str, dict[str, int]]
    n_final: int
    rounds: dict[str, str] = field(default_factory=dict)
    qualified: tuple[str, ...] = ()
    n_disputed: int = 0
    inactive: dict[str, int] = field(default_factory=dict)
    unplayable: tuple[str, ...] = ()


def project_status(db: str | os.PathLike[str], project: str) -> ProjectStatus:
    """Where a project stands (read only)."""
    a, an = s.assignments, s.annotators
    with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        n_items = conn.execute(
            select(func.count()).select_from(s.items).where(s.items.c.project_id == prow.id)
        ).scalar_one()
        rows = conn.execute(
            select(a.c.kind, a.c.status, an.c.username, an.c.active, func.count().label("n"))
            .join(an, an.c.id == a.c.annotator_id)
            .where(a.c.project_id == prow.id)
            .group_by(a.c.kind, a.c.status, an.c.username, an.c.active)
        ).all()
        done = conn.execute(
            select(a.c.item_id)
            .where(
                a.c.project_id == prow.id, a.c.status == "submitted", a.c.kind.in_(("label", "adjudicate"))
            )
            .distinct()
        ).all()
        rounds = {
            r.name: ("closed" if r.closed_at else "open")
            for r in conn.execute(
                select(s.rounds).where(s.rounds.c.project_id == prow.id).order_by(s.rounds.c.id)
            )
        }
        qualified = tuple(
            sorted(
                r.username
                for r in conn.execute(
                    select(an.c.username)
                    .join(s.qualified, s.qualified.c.annotator_id == an.c.id)
                    .where(s.qualified.c.project_id == prow.id)
                )
            )
        )
        # The latest report per task; a label submitted on that task since then clears it (the file was
        # mended and played: a report can only be made on a task not submitted).
        reported: dict[str, datetime] = {}
        for r in conn.execute(
            select(s.audit.c.detail, s.audit.c.at).where(s.audit.c.action == UNPLAYABLE_EVENT)
        ):
            public = str((r.detail or {}).get("assignment"))
            reported[public] = max(r.at, reported.get(public, r.at))
        unplayable = tuple(sorted({
            r.item_id
            for r in conn.execute(
                select(s.items.c.item_id, a.c.public_id, func.max(s.labels.c.created_at).label("submitted"))
                .join(a, a.c.item_id == s.items.c.id)
                .outerjoin(s.labels,
                           (s.labels.c.assignment_id == a.c.id) & (s.labels.c.status == "submitted"))
                .where(a.c.project_id == prow.id, a.c.public_id.in_(sorted(reported)))
                .group_by(s.items.c.item_id, a.c.public_id)
            )
            if r.submitted is None or r.submitted < reported[r.public_id]
        })) if reported else ()
    disputed = disputed_items(db, project)  # among ``done``: submitted primary labels, not adjudicated
    by_kind: dict[str, dict[str, int]] = {}
    by_user: dict[str, dict[str, int]] = {}
    inactive: dict[str, int] = {}
    for r in rows:
        if not r.active and r.status != "submitted" and r.kind != "practice":
            inactive[r.username] = inactive.get(r.username, 0) + int(r.n)
        for table, key in ((by_kind, r.kind), (by_user, r.username)):
            counts = table.setdefault(key, dict.fromkeys(s.STATUSES, 0))
            counts[r.status] += int(r.n)
    return ProjectStatus(
        project, int(n_items), by_kind, dict(sorted(by_user.items())), len(done) - len(disputed), rounds,
        qualified, len(disputed), dict(sorted(inactive.items())), unplayable,
    )
