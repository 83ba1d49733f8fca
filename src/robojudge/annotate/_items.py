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
from robojudge.annotate._protocol import AXES, SCORE_RANGE


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

    Each line is ``{"item_id": ..., "pa": {"label": 4, ...}, "ia": {"label": 3, ...}}``, as ``judge draft``
    writes it; a ``label`` is a whole number 1-5 or ``null`` (no proposal). Other keys are left alone.

    Returns:
        How many items got a draft.

    Raises:
        AnnotateError: A line is not JSON, lacks the shape above, holds a label that is not a whole
            number 1-5, repeats an earlier line's item, or names an item the project does not hold; the
            message gives the file and line.
    """
    drafts: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
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
        item_id = rec["item_id"]
        if item_id in lines:
            raise AnnotateError(
                f"{where}: item {item_id!r}: a second draft for it (the first is on line {lines[item_id]})"
            )
        if not any(axis in rec for axis in AXES):  # a suite manifest given by mistake, say
            raise AnnotateError(f"{where}: item {item_id!r}: no {' and no '.join(AXES)} field: not a draft "
                                "as robojudge judge draft writes it")
        values: dict[str, Any] = {}
        for axis in AXES:
            if axis not in rec:
                continue
            part = rec[axis]
            if not isinstance(part, dict):
                raise AnnotateError(
                    f"{where}: item {item_id!r} field {axis}: expected an object holding the proposal "
                    f'in "label", as robojudge judge draft writes ({{"{axis}": {{"label": 4, ...}}}}), '
                    f"got {part!r}"
                )
            label = part.get("label")
            if label is None:
                continue
            lo, hi = SCORE_RANGE
            if isinstance(label, bool) or not isinstance(label, int) or not lo <= label <= hi:
                raise AnnotateError(
                    f"{where}: item {item_id!r} field {axis}.label: must be a whole number {lo}-{hi}, "
                    f"got {label!r}"
                )
            values[axis] = label
        drafts[item_id] = values
        lines[item_id] = lineno
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
            first = unknown[0]
            more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
            raise AnnotateError(
                f"{path}:{lines[first]}: field item_id: {first!r} is not an item of project {project!r}{more}"
            )
        n = 0
        for item_id, values in drafts.items():
            if values:
                conn.execute(
                    s.items.update().where(s.items.c.id == by_id[item_id]).values(model_draft=values)
                )
                n += 1
        return n
