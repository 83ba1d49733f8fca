"""Per-item extras of a project: reference examples pinned beside every task, and model drafts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlalchemy import select

from robojudge.annotate import _schema as s
from robojudge.annotate._admin import item_rows, open_service
from robojudge.annotate._db import now, project_row
from robojudge.annotate._errors import AnnotateError
from robojudge.annotate._protocol import AXES, SCORE_RANGE, LabelValues


def add_example(
    db: str | os.PathLike[str], project: str, item_id: str, axis: str, score: int, text: str
) -> None:
    """Pin an item beside every task of the project as a reference: the score it deserves on an axis, and why.

    The item is then never dealt as a task (its answer is shown to everyone).

    Raises:
        AnnotateError: Unknown item, bad axis or score, empty text, or the item already has tasks.
    """
    if axis not in AXES:
        raise AnnotateError(f"axis {axis!r} is not one of {', '.join(AXES)}")
    if not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
        raise AnnotateError(f"score {score} is outside {SCORE_RANGE[0]}-{SCORE_RANGE[1]}")
    if not text.strip():
        raise AnnotateError("say why the example deserves its score")
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        (item,) = item_rows(conn, prow.id, [item_id])
        if conn.execute(select(s.assignments.c.id).where(s.assignments.c.item_id == item.id)).first():
            raise AnnotateError(
                f"item {item_id!r} already has tasks: a reference example would show their answer"
            )
        ex = s.examples
        conn.execute(ex.delete().where(ex.c.item_id == item.id, ex.c.axis == axis))
        conn.execute(
            ex.insert().values(
                project_id=prow.id, item_id=item.id, axis=axis, score=score, text=text, created_at=now()
            )
        )


def import_drafts(db: str | os.PathLike[str], project: str, path: str | os.PathLike[str]) -> int:
    """Attach ``robojudge judge draft`` proposals to the project's items (their PA and IA labels).

    Returns:
        How many items got a draft.

    Raises:
        AnnotateError: A line is not JSON, or names an item the project does not hold; the message gives
            the file and line.
    """
    drafts: dict[str, dict[str, Any]] = {}
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise AnnotateError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for lineno, data in enumerate(raw.splitlines(), 1):
        where = f"{path}:{lineno}"
        try:
            line = data.decode("utf-8-sig" if lineno == 1 else "utf-8")  # a byte-order mark is no error
        except UnicodeDecodeError:
            raise AnnotateError(f"{where}: not UTF-8 text (the drafts are JSON Lines)") from None
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AnnotateError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str):
            raise AnnotateError(f"{where}: field item_id: missing")
        values: dict[str, Any] = {}
        for axis in ("pa", "ia"):
            part = rec.get(axis)
            if isinstance(part, dict) and part.get("label") is not None:
                values[axis] = part["label"]
        try:
            LabelValues.from_form(values)
        except AnnotateError as exc:
            raise AnnotateError(f"{where}: item {rec['item_id']!r}: {exc}") from None
        drafts[rec["item_id"]] = values
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        by_id = {
            r.item_id: r.id
            for r in conn.execute(
                select(s.items.c.id, s.items.c.item_id).where(s.items.c.project_id == prow.id)
            )
        }
        unknown = [i for i in drafts if i not in by_id]
        if unknown:
            raise AnnotateError(
                f"{path}: items not in project {project!r}: {', '.join(map(repr, unknown[:5]))}"
            )
        n = 0
        for item_id, values in drafts.items():
            if values:
                conn.execute(
                    s.items.update().where(s.items.c.id == by_id[item_id]).values(model_draft=values)
                )
                n += 1
        return n
