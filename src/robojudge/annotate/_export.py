"""Labels out of the annotation database: a labelled manifest, and score tables for ``meta agreement``.

The *final* label of an item is its adjudication when there is one, else its primary label (RoboJudge
Sec. 3.3 and App. A.1: an expert adjudicates the primary label and the cross-review, and that decides
the ground truth; without cross-review the first annotation is all there is). A primary label whose
cross-review is off by :data:`DISAGREEMENT` points or more on PA or IA is *disputed*: it is not final
until adjudicated, so the exports leave its item out unless asked to include it (marked). A manifest
holds one rater's labels per item, so ``export_manifest`` writes either the final labels or one named
annotator's; ``export_scores`` writes every annotator's scores in the long layout ``meta agreement``
reads, with each annotator as a "judge" of the final labels.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from robojudge._files import temp_beside
from robojudge._lifeline import stops_deferred
from robojudge.annotate import _schema as s
from robojudge.annotate._db import project_row
from robojudge.annotate._errors import AnnotateError
from robojudge.annotate._place import given_suite, match_suite
from robojudge.annotate._protocol import AXES, DISAGREEMENT, LabelValues
from robojudge.annotate._service import AnnotationService
from robojudge.store import SafeCsvWriter

if TYPE_CHECKING:
    from robojudge.suite import Suite

FINAL_PRIORITY = ("adjudicate", "label")


@dataclass(frozen=True)
class SubmittedLabel:
    """One submitted label as stored: manifest item id, who, which kind of task, the values."""

    item_id: str
    rater: str
    kind: str
    values: LabelValues
    round: str | None = None
    #: Scores of a final adjudication taken from the primary label (``pa``, ``ia``, ``checklist.<item>``),
    #: and that label's rater: see :func:`final_labels`.
    filled: tuple[str, ...] = ()
    filled_from: str | None = None
    #: Who wrote ``values.evidence`` when that is not ``rater`` (an adjudication that kept the primary
    #: label's scores and wrote no evidence of its own carries the primary rater's): see :func:`_filled`.
    evidence_from: str | None = None
    #: The axes on which the cross-review disputes this primary label (see :func:`disputed_items`); set
    #: on a final label only when the disputed items are asked for.
    disputed: tuple[str, ...] = ()


def submitted_labels(db: str | os.PathLike[str], project: str) -> list[SubmittedLabel]:
    """Every submitted label of the project (primary, cross-review, adjudication, practice), by item, then
    kind, then username in code point order (``Bob`` before ``alice``) on every backend."""
    with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        a, i, an, lb, r = s.assignments, s.items, s.annotators, s.labels, s.rounds
        # Usernames in code point order, as SQLite and Python sort them: PostgreSQL sorts text by the
        # database's collation, and one made with an ICU or en_US locale put "alice" before "Bob".
        who = an.c.username.collate("C") if conn.dialect.name == "postgresql" else an.c.username
        rows = conn.execute(
            select(i.c.item_id, an.c.username, a.c.kind, lb.c.label_values, r.c.name.label("round"))
            .join(a, a.c.id == lb.c.assignment_id)
            .join(i, i.c.id == a.c.item_id)
            .join(an, an.c.id == a.c.annotator_id)
            .outerjoin(r, r.c.id == a.c.round_id)
            .where(a.c.project_id == prow.id, lb.c.status == "submitted",
                   # the task's current label: a reopened adjudication's earlier submission is history
                   a.c.status == "submitted", lb.c.version == a.c.version)
            .order_by(i.c.id, a.c.kind, who)
        ).all()
    return [
        SubmittedLabel(x.item_id, x.username, x.kind, LabelValues.from_json(x.label_values), x.round)
        for x in rows
    ]


def final_labels(
    db: str | os.PathLike[str], project: str, *, disputed: bool = False
) -> dict[str, SubmittedLabel]:
    """Each labelled item's final label: the adjudication, else the primary label unless its
    cross-review disputes it (see :func:`disputed_items`); ``disputed=True`` takes those primary labels
    too, with the axes in ``SubmittedLabel.disputed``."""
    return _finals(submitted_labels(db, project), disputed=disputed)


def disputed_items(db: str | os.PathLike[str], project: str) -> dict[str, tuple[str, ...]]:
    """Items awaiting an adjudication: item id -> the axes (``pa``, ``ia``) on which a submitted
    cross-review differs from the submitted primary label by :data:`DISAGREEMENT` points or more, for
    the items nobody has adjudicated yet. Their primary label is not final (RoboJudge App. A.1: "An
    expert then adjudicates the two assessments and determines the final label")."""
    return _disputes(submitted_labels(db, project))


def _disputes(labels: list[SubmittedLabel]) -> dict[str, tuple[str, ...]]:
    primary: dict[str, SubmittedLabel] = {}
    review: dict[str, SubmittedLabel] = {}
    settled: set[str] = set()
    for lab in labels:
        if lab.kind == "label":
            primary.setdefault(lab.item_id, lab)
        elif lab.kind == "review":
            review.setdefault(lab.item_id, lab)
        elif lab.kind == "adjudicate":
            settled.add(lab.item_id)
    out: dict[str, tuple[str, ...]] = {}
    for item_id, first in primary.items():
        seen = review.get(item_id)
        if seen is None or item_id in settled:
            continue
        axes = []
        for axis in AXES:
            mine, theirs = getattr(first.values, axis), getattr(seen.values, axis)
            if mine is not None and theirs is not None and abs(mine - theirs) >= DISAGREEMENT:
                axes.append(axis)
        if axes:
            out[item_id] = tuple(axes)
    return out


def _finals(labels: list[SubmittedLabel], *, disputed: bool = False) -> dict[str, SubmittedLabel]:
    """Each item's final label: its adjudication, else its primary label where no cross-review disputes
    it (:func:`disputed_items`); with ``disputed``, a disputed primary label too, its axes marked.

    An adjudication that leaves a score unset (one settling PA alone, as a Label Studio import may)
    takes it from the primary label where nobody disputed it: the cross-review gave the same value, or
    there was no cross-review. A disputed score the adjudication left unset stays unset. The segments
    are taken from the primary label when the adjudication has none. So is the evidence, but only where
    the adjudication kept the primary PA and IA (its rater then in ``evidence_from``); where it changed
    either, the evidence is the adjudication's own, else its note, else none. The scores taken are
    listed in ``filled`` (their rater in ``filled_from``), so agreement tables do not compare the
    primary rater with their own value.
    """
    best: dict[str, SubmittedLabel] = {}
    primary: dict[str, SubmittedLabel] = {}
    review: dict[str, SubmittedLabel] = {}
    for lab in labels:
        if lab.kind == "label":
            primary.setdefault(lab.item_id, lab)
        elif lab.kind == "review":
            review.setdefault(lab.item_id, lab)
        if lab.kind not in FINAL_PRIORITY:
            continue
        held = best.get(lab.item_id)
        if held is None or FINAL_PRIORITY.index(lab.kind) < FINAL_PRIORITY.index(held.kind):
            best[lab.item_id] = lab
    for item_id, lab in best.items():
        first = primary.get(item_id)
        if lab.kind == "adjudicate" and first is not None:
            best[item_id] = _filled(lab, first, review.get(item_id))
    for item_id, axes in _disputes(labels).items():
        if disputed:
            best[item_id] = replace(best[item_id], disputed=axes)
        else:
            del best[item_id]
    return best


def _filled(
    adjudication: SubmittedLabel, first: SubmittedLabel, review: SubmittedLabel | None
) -> SubmittedLabel:
    """The adjudication with each score it leaves unset taken from ``first`` where ``review`` agrees."""
    values, given = adjudication.values, first.values
    seen = review.values if review is not None else None

    def undisputed(mine: int | None, theirs: int | None, reviewed: int | None) -> bool:
        return mine is None and theirs is not None and (seen is None or reviewed == theirs)

    filled: list[str] = []
    scores: dict[str, int | None] = {}
    for axis in ("pa", "ia"):
        mine, theirs = getattr(values, axis), getattr(given, axis)
        if undisputed(mine, theirs, getattr(seen, axis) if seen is not None else None):
            scores[axis] = theirs
            filled.append(axis)
    checklist = dict(values.checklist)
    for name, mine in values.checklist.items():
        theirs = given.checklist.get(name)
        if undisputed(mine, theirs, seen.checklist.get(name) if seen is not None else None):
            checklist[name] = theirs
            filled.append(f"checklist.{name}")
    segments = values.segments if any(v is not None for v in values.segments) else given.segments
    pa, ia = scores.get("pa", values.pa), scores.get("ia", values.ia)
    # The primary rater's evidence argues for their scores: it goes with the final label only where the
    # adjudication kept them. Where it overrode PA or IA the evidence is the adjudicator's (their
    # evidence, else their note), or none: never text that supports the score it replaced.
    overrode = any(mine is not None and mine != theirs for mine, theirs in ((pa, given.pa), (ia, given.ia)))
    evidence, evidence_from = values.evidence, None
    if not evidence and overrode:
        evidence = values.note
    elif not evidence and given.evidence:
        evidence, evidence_from = given.evidence, first.rater
    if not filled and evidence == values.evidence and segments == values.segments:
        return adjudication
    merged = replace(values, pa=pa, ia=ia, checklist=checklist, evidence=evidence, segments=segments)
    return replace(adjudication, values=merged, filled=tuple(filled), filled_from=first.rater,
                   evidence_from=evidence_from)


def evidence_author(lab: SubmittedLabel) -> str | None:
    """Who wrote the label's evidence: ``None`` when it has none."""
    if not lab.values.evidence:
        return None
    return lab.evidence_from or lab.rater


def project_suite(
    db: str | os.PathLike[str],
    project: str,
    suite: str | os.PathLike[str] | None = None,
    *,
    files: str = "optional",
) -> Suite:
    """The project's suite as an export reads it: ``suite`` where it is now, else the recorded manifest.

    The manifest read, the recorded one as much as a ``suite`` given in its place, is checked to be the
    project's suite (see :mod:`._place`): an item removed or added, an instruction or a file changed
    since ``init`` is an error naming the manifest, the item and the field. With ``files="required"``
    its files must be there too.

    Raises:
        AnnotateError: No such project; the recorded manifest is gone and no ``suite`` was given; the
            manifest cannot be read, or is not the project's suite.
    """
    with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        given = given_suite(prow, suite)
        if given is not None:
            return match_suite(conn, prow, given, files=files == "required").suite
        recorded = prow.suite_path
        if not os.path.exists(recorded):
            raise AnnotateError(
                f"cannot read the project's suite {recorded}: not found (a suite moved, or a database "
                "shared with another machine?): give the suite where it is now (--suite), or record its "
                "new place with robojudge annotate relocate"
            )
        # The recorded manifest may have been edited since init: an item removed, an instruction or a
        # video changed. Labels given to the old item must not go out as the new item's.
        return match_suite(conn, prow, recorded, files=files == "required").suite


def suite_paths(db: str | os.PathLike[str], project: str, suite: str | os.PathLike[str] | None) -> list[str]:
    """The manifests an export must not overwrite: the recorded one and ``suite`` (absolute)."""
    with AnnotationService(db, create=False) as svc:
        recorded = svc.project(project).suite_path
    return [recorded] if suite is None else [recorded, os.path.abspath(Path(suite).expanduser())]


def check_out(out: Path, suite_path: str) -> None:
    """Refuse an export file that is a folder, or the project's own suite manifest.

    Raises:
        AnnotateError: ``out`` is a folder, or the suite file (by path, through a link, or a hard link).
    """
    if out.is_dir():
        raise AnnotateError(f"{out} is a folder: give a file name")
    suite = Path(suite_path)
    same = out.resolve() == suite.resolve()
    with contextlib.suppress(OSError):
        same = same or (out.exists() and suite.exists() and os.path.samefile(out, suite))
    if same:
        raise AnnotateError(
            f"{out} is the project's suite manifest: writing the export there would replace it; "
            "choose another file"
        )


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` beside ``path``, then rename it over ``path``: see :func:`write_files`."""
    write_files({path: text})


def write_files(files: Mapping[Path, str]) -> None:
    """Write each text to a new file beside its path, and once all are written rename them into place.

    Readers see an old file or a whole new one, and a failure leaves every path as it was (short of a
    rename itself failing).

    Raises:
        AnnotateError: A path is a folder, or a file cannot be written.
    """
    for path in files:
        if path.is_dir():
            raise AnnotateError(f"{path} is a folder: give a file name")
    tmps = {path: temp_beside(path) for path in files}
    path = next(iter(files), Path())
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmps[path], "x", encoding="utf-8", newline="") as fh:
                fh.write(text)
        with stops_deferred():  # (a stop between two renames would leave a mixed set)
            for path, tmp in tmps.items():
                os.replace(tmp, path)
    except OSError as exc:
        raise AnnotateError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        for tmp in tmps.values():
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


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
    db: str | os.PathLike[str],
    project: str,
    out: str | os.PathLike[str],
    *,
    rater: str | None = None,
    suite: str | os.PathLike[str] | None = None,
    disputed: bool = False,
) -> int:
    """Write the project's suite as a JSON Lines manifest carrying labels.

    Everything is read before anything is written, and the file is replaced in one step, so a failed
    export leaves ``out`` as it was.

    Args:
        rater: ``None`` for the final labels; a username for that annotator's submitted primary labels
            and cross-reviews.
        suite: The project's suite where it is now, when it moved since ``init`` (see
            :func:`project_suite`); default: the recorded manifest.
        disputed: Also label the items awaiting an adjudication (:func:`disputed_items`) with their
            primary label, the disputed axes listed in ``meta.annotation.disputed``; by default they
            are written without labels.

    Returns:
        How many items carry a label. Paths are written absolute (the manifest may live anywhere).
        Segment verdicts (with the project's segment length in seconds, ``segment_s``), the label's
        task kind and any note go under ``meta.annotation``.

    Raises:
        AnnotateError: ``out`` is the project's suite, ``rater`` is no annotator, the suite cannot be
            read, or the file cannot be written.
    """
    from robojudge.suite import check_jsonl_name

    path = Path(out)
    for manifest in suite_paths(db, project, suite):
        check_out(path, manifest)
    try:
        check_jsonl_name(path)  # read back as what its name says
    except ValueError as exc:
        raise AnnotateError(str(exc)) from None
    labels = submitted_labels(db, project)
    with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
        segment_s = project_row(conn, project).segment_s
    if rater is None:
        chosen = _finals(labels, disputed=disputed)
    else:
        with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
            known = conn.execute(select(s.annotators.c.id).where(s.annotators.c.username == rater)).first()
        if known is None:
            raise AnnotateError(
                f"rater {rater!r}: no annotator of that name (robojudge annotate add-annotator)"
            )
        chosen = {
            lab.item_id: lab for lab in labels if lab.rater == rater and lab.kind in ("label", "review")
        }
    n = 0
    lines = []
    for item in project_suite(db, project, suite).items:
        record = item.model_dump(mode="json", exclude_none=True, exclude={"labels"})
        lab = chosen.get(item.item_id)
        # The suite's 10-point overall score (RoboPhys-3D's human score, collected outside the app, which
        # records none) stays with its item: the export replaces PA, IA and the checklist only.
        kept = item.labels
        overall = kept.overall if kept is not None else None
        if lab is None and kept is not None and overall is not None:
            record["labels"] = {"overall": overall, **({"rater": kept.rater} if kept.rater else {})}
        if lab is not None:
            n += 1
            record["labels"] = manifest_labels(lab) | ({"overall": overall} if overall is not None else {})
            segments = list(lab.values.segments)
            # The segment length goes with the verdicts: segment k covers [k * segment_s, (k + 1) *
            # segment_s) seconds of the clip (``meta segments-table`` lines them up with a metric's).
            note = {"kind": lab.kind, "segments": segments, "segment_s": segment_s if segments else None,
                    "note": lab.values.note, "evidence_from": evidence_author(lab),
                    "disputed": list(lab.disputed)}
            record.setdefault("meta", {})["annotation"] = {
                k: x for k, x in note.items() if x not in (None, [])
            }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    write_atomic(path, "".join(lines))
    return n


@dataclass(frozen=True)
class ScoreFiles:
    """What :func:`export_scores` wrote.

    Attributes:
        n_self: Rows left out of ``raters.csv`` because the item's final label is that rater's own (a
            primary label with no adjudication): the rater would be compared with themselves.
        n_disputed: Items awaiting an adjudication (:func:`disputed_items`): written with their
            primary label, marked in ``human.csv``'s ``disputed`` column (counted in ``n_items`` too).
        n_adjudicated: Items whose final label is an adjudication: the only items on which a primary
            annotator has rows (``role`` ``primary``) in ``raters.csv``.
    """

    human: Path
    raters: Path
    n_items: int
    n_self: int = 0
    n_disputed: int = 0
    n_adjudicated: int = 0


def export_scores(
    db: str | os.PathLike[str],
    project: str,
    out_dir: str | os.PathLike[str],
    *,
    suite: str | os.PathLike[str] | None = None,
) -> ScoreFiles:
    """Write ``human.csv`` (final labels, with clip and source) and ``raters.csv`` (every annotator's
    primary labels and cross-reviews, ``judge`` = username, ``role`` = ``primary`` or ``review``) for
    ``robojudge meta agreement``.

    The tables measure the raters, so every item with a submitted primary label appears. An item
    awaiting an adjudication (:func:`disputed_items`, counted in ``ScoreFiles.n_disputed``) is written
    with its primary label, its disputed axes in ``human.csv``'s ``disputed`` column (``pa;ia``; empty
    for a final label): leaving it out would keep, of a cross-reviewer's rows, only those within one
    point of the primary label, and score the reviewer on a sample picked by their own values. A
    rater's row on an item whose final label is their own (a primary label that was not adjudicated)
    is left out: it would compare them with themselves (``ScoreFiles.n_self`` counts those rows), so a
    primary annotator is scored on the adjudicated items alone (``ScoreFiles.n_adjudicated``), a
    cross-reviewer on every item they reviewed; the ``role`` column tells the two kinds of row apart. Each
    file is replaced in one step once everything is read. ``suite``: as for :func:`export_manifest`.
    """
    folder = Path(out_dir)
    manifests = suite_paths(db, project, suite)
    if folder.exists() and not folder.is_dir():
        raise AnnotateError(f"{folder} is a file: the score tables go in a folder")
    human, raters = folder / "human.csv", folder / "raters.csv"
    for path in (human, raters):
        for manifest in manifests:
            check_out(path, manifest)
    labels = submitted_labels(db, project)
    final = _finals(labels, disputed=True)
    n_disputed = len(_disputes(labels))
    meta = {it.item_id: it for it in project_suite(db, project, suite).items if it.item_id in final}
    buf = io.StringIO()
    w = SafeCsvWriter(buf)
    w.writerow(["item_id", "axis", "score", "clip_id", "source", "disputed"])
    for item_id, lab in final.items():
        it = meta.get(item_id)
        clip = (it.clip_id if it is not None else None) or item_id
        source = (it.source if it is not None else None) or "all"
        for axis in AXES:
            score = getattr(lab.values, axis)
            if score is not None:
                w.writerow([item_id, axis, score, clip, source, ";".join(lab.disputed)])
    human_text = buf.getvalue()
    buf = io.StringIO()
    w = SafeCsvWriter(buf)
    w.writerow(["judge", "item_id", "axis", "score", "role"])
    n_self = 0
    for lab in labels:
        if lab.kind not in ("label", "review") or lab.item_id not in final:
            continue
        chosen = final[lab.item_id]
        for axis in AXES:
            score = getattr(lab.values, axis)
            # a rater against their own value: the final label is theirs, or this score was taken from them
            own = chosen.rater == lab.rater or (axis in chosen.filled and chosen.filled_from == lab.rater)
            if score is not None and getattr(chosen.values, axis) is not None:
                if own:
                    n_self += 1
                else:
                    w.writerow([lab.rater, lab.item_id, axis, score, _ROLE[lab.kind]])
    write_files({human: human_text, raters: buf.getvalue()})
    n_adjudicated = sum(lab.kind == "adjudicate" for lab in final.values())
    return ScoreFiles(human, raters, len(final), n_self, n_disputed, n_adjudicated)


_ROLE = {"label": "primary", "review": "review"}
"""``raters.csv``'s ``role`` column: which of the rater's tasks a row comes from."""
