"""Reading the annotation tables into the service's records: task pages, label versions, upstream tasks.

Pure queries on an open connection, shared by :mod:`._service` and the admin functions; nothing here
checks who asks (the service does that before calling).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.engine import Connection

from robojudge.annotate import _schema as s
from robojudge.annotate._db import now
from robojudge.annotate._errors import NotFound
from robojudge.annotate._protocol import LabelValues
from robojudge.annotate._types import (
    Annotator,
    LabelVersion,
    MediaRef,
    ProjectInfo,
    ReferenceExample,
    SegmentSpan,
    TaskPage,
)

UPSTREAM = {"review": ("label",), "adjudicate": ("label", "review")}
"""Which submitted assignments of the same item a task needs before it opens, and then shows."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def project_info(conn: Connection, row: Row[Any]) -> ProjectInfo:
    n = conn.execute(
        select(func.count()).select_from(s.items).where(s.items.c.project_id == row.id)
    ).scalar_one()
    return ProjectInfo(row.id, row.name, row.suite_path, row.segment_s, row.pass_threshold, int(n))


def annotator_of(row: Row[Any]) -> Annotator:
    return Annotator(int(row.id), row.username, row.role, bool(row.active))


def assignment_row(conn: Connection, assignment_id: str) -> Row[Any]:
    row = conn.execute(select(s.assignments).where(s.assignments.c.public_id == assignment_id)).first()
    if row is None:
        raise NotFound("no such assignment")
    return row


_IN_CHUNK = 500  # ids per IN list, well under SQLite's and PostgreSQL's parameter limits


def submitted_kinds(conn: Connection, item_ids: set[int]) -> dict[int, set[str]]:
    """Which upstream tasks (primary label, cross-review) of these items are submitted."""
    a = s.assignments
    ids = sorted(item_ids)
    rows = [
        r
        for k in range(0, len(ids), _IN_CHUNK)
        for r in conn.execute(
            select(a.c.item_id, a.c.kind).where(
                a.c.item_id.in_(ids[k : k + _IN_CHUNK]),
                a.c.status == "submitted",
                a.c.kind.in_(("label", "review")),
            )
        )
    ]
    out: dict[int, set[str]] = {}
    for r in rows:
        out.setdefault(r.item_id, set()).add(r.kind)
    return out


def version_of(r: Row[Any], kind: str) -> LabelVersion:
    return LabelVersion(
        r.version,
        r.status,
        LabelValues.from_json(r.label_values),
        r.username,
        r.created_at,
        tuple(r.changed),
        r.from_draft,
        kind,
    )


def label_versions(
    conn: Connection, assignment_row_id: int, kind: str, *, latest: bool = False
) -> list[LabelVersion]:
    lb, an = s.labels, s.annotators
    query = (
        select(lb, an.c.username)
        .join(an, an.c.id == lb.c.author_id)
        .where(lb.c.assignment_id == assignment_row_id)
        .order_by(lb.c.version.desc() if latest else lb.c.version)
    )
    if latest:
        query = query.limit(1)
    return [version_of(r, kind) for r in conn.execute(query)]


def latest_version(conn: Connection, assignment_row_id: int, kind: str = "label") -> LabelVersion | None:
    found = label_versions(conn, assignment_row_id, kind, latest=True)
    return found[0] if found else None


def task_page(conn: Connection, row: Row[Any]) -> TaskPage:
    item = conn.execute(select(s.items).where(s.items.c.id == row.item_id)).one()
    project = conn.execute(
        select(s.projects.c.name, s.projects.c.segment_s).where(s.projects.c.id == row.project_id)
    ).one()
    refs = conn.execute(
        select(s.media).where(s.media.c.item_id == item.id).order_by(s.media.c.position)
    ).all()
    videos = [MediaRef(m.public_id, m.view, m.kind) for m in refs if m.role == "video"]
    frames = [MediaRef(m.public_id, None, m.kind) for m in refs if m.role == "initial_frame"]
    ia = row.stage == "ia"
    seg = project.segment_s
    spans = (
        [
            SegmentSpan(k, k * seg, min((k + 1) * seg, item.duration_s or (k + 1) * seg))
            for k in range(item.n_segments)
        ]
        if seg
        else []
    )
    others: list[LabelVersion] = []
    a = s.assignments
    for kind in UPSTREAM.get(row.kind, ()):
        up = conn.execute(
            select(a.c.id).where(a.c.item_id == item.id, a.c.kind == kind, a.c.status == "submitted")
        ).first()
        if up is not None:
            found = latest_version(conn, up.id, kind)
            if found is not None:
                others.append(found)
    return TaskPage(
        assignment_id=row.public_id,
        kind=row.kind,
        project=project.name,
        item_id=item.public_id,
        stage=row.stage,
        instruction=item.instruction if ia else None,
        media=videos,
        initial_frame=frames[0] if ia and frames else None,
        fps=item.fps,
        duration_s=item.duration_s,
        segments=spans,
        current=latest_version(conn, row.id, row.kind),
        version=row.version,
        submitted=row.status == "submitted",
        model_draft=LabelValues.from_json(item.model_draft)
        if item.model_draft and row.kind == "label"
        else None,
        others=others,
        examples=reference_examples(conn, row.project_id),
    )


def reference_examples(conn: Connection, project_id: int) -> list[ReferenceExample]:
    ex, m = s.examples, s.media
    rows = conn.execute(
        select(ex).where(ex.c.project_id == project_id).order_by(ex.c.axis, ex.c.score, ex.c.id)
    ).all()
    out = []
    for r in rows:
        refs = conn.execute(
            select(m.c.public_id, m.c.view, m.c.kind)
            .where(m.c.item_id == r.item_id, m.c.role == "video")
            .order_by(m.c.position)
        ).all()
        out.append(
            ReferenceExample(r.axis, r.score, r.text, [MediaRef(x.public_id, x.view, x.kind) for x in refs])
        )
    return out


#: The client address of the request being served (set by the web app for each request), written with
#: an audit event whose caller gives none: a refused access, a reveal, a submit are logged from the
#: service, which does not know the request.
REQUEST_REMOTE: ContextVar[str | None] = ContextVar("robojudge_annotate_remote", default=None)


def audit(
    conn: Connection, actor_id: int | None, action: str, detail: Mapping[str, Any] | None, remote: str | None
) -> None:
    remote = remote if remote is not None else REQUEST_REMOTE.get()
    conn.execute(
        s.audit.insert().values(
            at=now(),
            actor_id=actor_id,
            action=action[:64],
            detail=dict(detail) if detail else None,
            remote=remote[:200] if remote else None,
        )
    )
