"""Labels out of the annotation database: a labelled manifest, and score tables for ``meta agreement``.

The *final* label of an item is its adjudication when there is one, else its primary label (RoboJudge
Sec. 3.3: the expert's adjudication is the ground truth; without cross-review the first annotation is
all there is). A manifest holds one rater's labels per item, so ``export_manifest`` writes either the
final labels or one named annotator's; ``export_scores`` writes every annotator's scores in the long
layout ``meta agreement`` reads, with each annotator as a "judge" of the final labels.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from robojudge.annotate import _schema as s
from robojudge.annotate._db import project_row
from robojudge.annotate._errors import AnnotateError
from robojudge.annotate._protocol import AXES, LabelValues
from robojudge.annotate._service import AnnotationService

FINAL_PRIORITY = ("adjudicate", "label")


@dataclass(frozen=True)
class SubmittedLabel:
    """One submitted label as stored: manifest item id, who, which kind of task, the values."""

    item_id: str
    rater: str
    kind: str
    values: LabelValues
    round: str | None = None


def submitted_labels(db: str | os.PathLike[str], project: str) -> list[SubmittedLabel]:
    """Every submitted label of the project (primary, cross-review, adjudication, practice), by item."""
    with AnnotationService(db) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        a, i, an, lb, r = s.assignments, s.items, s.annotators, s.labels, s.rounds
        rows = conn.execute(
            select(i.c.item_id, an.c.username, a.c.kind, lb.c.label_values, r.c.name.label("round"))
            .join(a, a.c.id == lb.c.assignment_id)
            .join(i, i.c.id == a.c.item_id)
            .join(an, an.c.id == a.c.annotator_id)
            .outerjoin(r, r.c.id == a.c.round_id)
            .where(a.c.project_id == prow.id, lb.c.status == "submitted")
            .order_by(i.c.id, a.c.kind, an.c.username)
        ).all()
    return [
        SubmittedLabel(x.item_id, x.username, x.kind, LabelValues.from_json(x.label_values), x.round)
        for x in rows
    ]


def final_labels(db: str | os.PathLike[str], project: str) -> dict[str, SubmittedLabel]:
    """Each labelled item's final label: the adjudication, else the primary label."""
    best: dict[str, SubmittedLabel] = {}
    for lab in submitted_labels(db, project):
        if lab.kind not in FINAL_PRIORITY:
            continue
        held = best.get(lab.item_id)
        if held is None or FINAL_PRIORITY.index(lab.kind) < FINAL_PRIORITY.index(held.kind):
            best[lab.item_id] = lab
    return best


def _suite_items(db: str | os.PathLike[str], project: str) -> Iterator[Any]:
    from robojudge.suite import ManifestError, load_suite

    with AnnotationService(db) as svc:
        suite_path = svc.project(project).suite_path
    try:
        yield from load_suite(suite_path).items
    except (OSError, ValueError, ManifestError) as exc:
        raise AnnotateError(f"cannot read the project's suite {suite_path}: {exc}") from exc


def manifest_labels(lab: SubmittedLabel) -> dict[str, Any]:
    """A label as the manifest's ``labels`` object (segments and notes have no place there)."""
    v = lab.values
    checklist = {k: x for k, x in v.checklist.items() if x is not None}
    out: dict[str, Any] = {
        "pa": v.pa,
        "ia": v.ia,
        "checklist": checklist or None,
        "evidence": v.evidence,
        "rater": lab.rater,
    }
    return {k: x for k, x in out.items() if x is not None}


def export_manifest(
    db: str | os.PathLike[str], project: str, out: str | os.PathLike[str], *, rater: str | None = None
) -> int:
    """Write the project's suite as a JSON Lines manifest carrying labels.

    Args:
        rater: ``None`` for the final labels; a username for that annotator's submitted primary labels
            and cross-reviews.

    Returns:
        How many items carry a label. Paths are written absolute (the manifest may live anywhere).
        Segment verdicts, the label's task kind and any note go under ``meta.annotation``.
    """
    if rater is None:
        chosen = final_labels(db, project)
    else:
        chosen = {
            lab.item_id: lab
            for lab in submitted_labels(db, project)
            if lab.rater == rater and lab.kind in ("label", "review", "adjudicate")
        }
    n = 0
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for item in _suite_items(db, project):
            record = item.model_dump(mode="json", exclude_none=True, exclude={"labels"})
            lab = chosen.get(item.item_id)
            if lab is not None:
                n += 1
                record["labels"] = manifest_labels(lab)
                note = {"kind": lab.kind, "segments": list(lab.values.segments), "note": lab.values.note}
                record.setdefault("meta", {})["annotation"] = {
                    k: x for k, x in note.items() if x not in (None, [])
                }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return n


@dataclass(frozen=True)
class ScoreFiles:
    human: Path
    raters: Path
    n_items: int


def export_scores(db: str | os.PathLike[str], project: str, out_dir: str | os.PathLike[str]) -> ScoreFiles:
    """Write ``human.csv`` (final labels, with clip and source) and ``raters.csv`` (every annotator's
    primary labels and cross-reviews, ``judge`` = username) for ``robojudge meta agreement``.

    Only items with a final label appear, so every rater row has its human score.
    """
    final = final_labels(db, project)
    meta = {it.item_id: it for it in _suite_items(db, project) if it.item_id in final}
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    human, raters = folder / "human.csv", folder / "raters.csv"
    with open(human, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "axis", "score", "clip_id", "source"])
        for item_id, lab in final.items():
            it = meta.get(item_id)
            clip = (it.clip_id if it is not None else None) or item_id
            source = (it.source if it is not None else None) or "all"
            for axis in AXES:
                score = getattr(lab.values, axis)
                if score is not None:
                    w.writerow([item_id, axis, score, clip, source])
    with open(raters, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["judge", "item_id", "axis", "score"])
        for lab in submitted_labels(db, project):
            if lab.kind not in ("label", "review") or lab.item_id not in final:
                continue
            for axis in AXES:
                score = getattr(lab.values, axis)
                if score is not None and getattr(final[lab.item_id].values, axis) is not None:
                    w.writerow([lab.rater, lab.item_id, axis, score])
    return ScoreFiles(human, raters, len(final))
