"""Label Studio JSON: export a project's items and submitted labels, import annotations made there.

A task is one item: ``data`` holds the manifest item id, the video path, the instruction and the frame
rate; each submitted label is one entry of ``annotations`` whose ``result`` uses the control names of
:func:`labelstudio_config` (``pa``/``ia`` ratings, ``checklist_<item>`` choices ``0``-``2``,
``evidence``/``note`` text areas, ``segments`` timeline labels in frames). Who labelled and in which
task kind go in the annotation's ``meta`` (``robojudge_rater``, ``robojudge_kind``, ``robojudge_round``);
an annotation made in Label Studio without them names its rater by ``completed_by.email`` (or a
``completed_by`` string), and is a primary label. Label Studio's integer user ids (``"completed_by": 1``)
name no robojudge annotator and are refused. Segment *k* is the frame range :func:`segment_frames` gives,
both ways.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from robojudge.annotate import _schema as s
from robojudge.annotate._admin import new_token
from robojudge.annotate._db import KIND_ROLES, now, project_row
from robojudge.annotate._errors import AnnotateError
from robojudge.annotate._export import check_out, project_suite, suite_paths, write_atomic
from robojudge.annotate._protocol import CHECKLIST_RANGE, LabelValues, changed_fields
from robojudge.annotate._service import AnnotationService
from robojudge.suite import CHECKLIST_ITEMS

_TO = "video"
_KINDS = ("label", "review", "adjudicate", "practice")


def labelstudio_config() -> str:
    """A Label Studio labelling config whose control names match the exported results."""
    lo, hi = CHECKLIST_RANGE
    levels = "".join(f'<Choice value="{v}"/>' for v in range(lo, hi + 1))
    checklist = "\n".join(
        f'  <Header value="{c}"/>'
        f'<Choices name="checklist_{c}" toName="{_TO}" choice="single">{levels}</Choices>'
        for c in CHECKLIST_ITEMS
    )
    return (
        "<View>\n"
        f'  <Video name="{_TO}" value="$video" framerate="$fps"/>\n'
        '  <Header value="$instruction"/>\n'
        f'  <Rating name="pa" toName="{_TO}" maxRating="5"/>\n'
        f'  <Rating name="ia" toName="{_TO}" maxRating="5"/>\n'
        f"{checklist}\n"
        f'  <TextArea name="evidence" toName="{_TO}"/>\n'
        f'  <TextArea name="note" toName="{_TO}"/>\n'
        f'  <TimelineLabels name="segments" toName="{_TO}"><Label value="bad"/><Label value="medium"/>'
        '<Label value="good"/></TimelineLabels>\n'
        "</View>\n"
    )


def segment_frames(k: int, fps: float | None, segment_s: float | None) -> tuple[int, int]:
    """First and last frame (counted from 1, as Label Studio does) of segment ``k`` of a clip."""
    rate, seg = fps or 1.0, segment_s or 1.0
    return int(round(k * seg * rate)) + 1, int(round((k + 1) * seg * rate))


def _results(values: LabelValues, fps: float | None, segment_s: float | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for axis in ("pa", "ia"):
        score = getattr(values, axis)
        if score is not None:
            out.append({"from_name": axis, "to_name": _TO, "type": "rating", "value": {"rating": score}})
    for name, score in values.checklist.items():
        if score is not None:
            out.append(
                {
                    "from_name": f"checklist_{name}",
                    "to_name": _TO,
                    "type": "choices",
                    "value": {"choices": [str(score)]},
                }
            )
    for name in ("evidence", "note"):
        text = getattr(values, name)
        if text is not None:
            out.append({"from_name": name, "to_name": _TO, "type": "textarea", "value": {"text": [text]}})
    for k, verdict in enumerate(values.segments):
        if verdict is None:
            continue
        start, end = segment_frames(k, fps, segment_s)
        out.append(
            {
                "from_name": "segments",
                "to_name": _TO,
                "type": "timelinelabels",
                "value": {"ranges": [{"start": start, "end": end}], "timelinelabels": [verdict]},
            }
        )
    return out


def export_labelstudio(
    db: str | os.PathLike[str],
    project: str,
    out: str | os.PathLike[str],
    *,
    media_url: str | None = None,
    suite: str | os.PathLike[str] | None = None,
) -> int:
    """Write the project as Label Studio tasks (every item; submitted labels as annotations).

    Args:
        media_url: Where the suite's folder is served (``https://host/suite``): ``data.video`` becomes that
            URL plus the video's path below the manifest's folder. Default: the video's absolute path.
        suite: The project's suite where it is now, when it moved since ``init`` (checked to be the
            project's suite, its videos there); default: the recorded manifest.

    Returns:
        The number of annotations written.
    """
    a, i, an, lb, r = s.assignments, s.items, s.annotators, s.labels, s.rounds
    for manifest in suite_paths(db, project, suite):
        check_out(Path(out), manifest)
    with AnnotationService(db, create=False) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        item_rows = conn.execute(select(i).where(i.c.project_id == prow.id).order_by(i.c.id)).all()
        labels = conn.execute(
            select(
                a.c.item_id,
                a.c.kind,
                an.c.username,
                lb.c.label_values,
                lb.c.created_at,
                r.c.name.label("round"),
            )
            .join(a, a.c.id == lb.c.assignment_id)
            .join(an, an.c.id == a.c.annotator_id)
            .outerjoin(r, r.c.id == a.c.round_id)
            .where(a.c.project_id == prow.id, lb.c.status == "submitted",
                   # the task's current label: a reopened adjudication's earlier submission is history
                   a.c.status == "submitted", lb.c.version == a.c.version)
            .order_by(a.c.item_id, a.c.kind, an.c.username)
        ).all()
    here = project_suite(db, project, suite, files="required")
    videos = {it.item_id: _video_ref(it.video, here.root, media_url) for it in here.items}
    by_item: dict[int, list[Any]] = {}
    for row in labels:
        by_item.setdefault(row.item_id, []).append(row)
    tasks = []
    n = 0
    for k, item in enumerate(item_rows, 1):
        anns = []
        for row in by_item.get(item.id, []):
            meta = {"robojudge_rater": row.username, "robojudge_kind": row.kind}
            if row.round:
                meta["robojudge_round"] = row.round
            anns.append(
                {
                    "result": _results(LabelValues.from_json(row.label_values), item.fps, prow.segment_s),
                    "created_at": row.created_at.isoformat(),
                    "meta": meta,
                }
            )
        n += len(anns)
        data = {
            "item_id": item.item_id,
            "video": videos.get(item.item_id),
            "instruction": item.instruction,
            "fps": item.fps,
        }
        tasks.append({"id": k, "data": data, "annotations": anns})
    write_atomic(Path(out), json.dumps(tasks, ensure_ascii=False, indent=1))
    return n


def _video_ref(video: str, root: Path, media_url: str | None) -> str:
    if media_url is None:
        return video
    try:
        below = Path(video).relative_to(root.resolve())
    except ValueError:
        raise AnnotateError(f"{video} is outside the suite's folder {root}: not under {media_url}") from None
    return f"{media_url.rstrip('/')}/{quote(below.as_posix())}"


def _values(result: Any, where: str, item: Any, segment_s: float | None) -> LabelValues:
    if not isinstance(result, list):
        raise AnnotateError(f"{where}: field result: must be a list")
    form: dict[str, Any] = {}
    segments: dict[int, str] = {}
    for j, entry in enumerate(result):
        here = f"{where} result {j}"
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), dict):
            raise AnnotateError(f"{here}: needs from_name and a value object")
        name, value = entry.get("from_name"), entry["value"]
        try:
            if name in ("pa", "ia"):
                form[name] = value.get("rating")
            elif isinstance(name, str) and name.startswith("checklist_"):
                form[f"checklist.{name.removeprefix('checklist_')}"] = (value.get("choices") or [None])[0]
            elif name in ("evidence", "note"):
                form[name] = "\n".join(value.get("text") or []) or None
            elif name == "segments":
                ranges, verdicts = value.get("ranges"), value.get("timelinelabels")
                if not isinstance(ranges, list) or not ranges:
                    raise AnnotateError(f"{here}: field segments: a segment needs a list of ranges")
                if not isinstance(verdicts, list) or len(verdicts) != 1 or not isinstance(verdicts[0], str):
                    raise AnnotateError(
                        f"{here}: field segments: timelinelabels must be one verdict "
                        f"(bad, medium or good), got {verdicts!r}"
                    )
                for span in ranges:
                    k = _segment_index(span, here, item, segment_s)
                    if k in segments:
                        first, last = segment_frames(k, item.fps, segment_s)
                        raise AnnotateError(
                            f"{here}: field segments: two ranges in segment {k} (frames {first}-{last}): "
                            "give one verdict per segment"
                        )
                    segments[k] = verdicts[0].lower()
            else:
                raise AnnotateError(f"{here}: unknown control {name!r} (see labelstudio_config())")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, AnnotateError):
                raise
            raise AnnotateError(f"{here} ({name}): malformed value {value!r}") from None
    form.update({f"segments.{k}": verdict for k, verdict in segments.items()})
    try:
        values = LabelValues.from_form(form)
    except AnnotateError as exc:
        raise AnnotateError(f"{where}: {exc}") from None
    if values.pa is None and values.ia is None:
        raise AnnotateError(
            f"{where}: field result: no pa or ia rating: an annotation without a score is not a label"
        )
    return values


def _segment_index(span: Any, where: str, item: Any, segment_s: float | None) -> int:
    """The segment a timeline range covers: its first frame is the segment's, and so is its last.

    The last segment may end at the clip's last frame (it is shorter when the clip's length is not a
    multiple of the segment length).
    """
    start = span.get("start") if isinstance(span, dict) else None
    end = span.get("end") if isinstance(span, dict) else None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
        raise AnnotateError(f"{where}: field segments: range {span!r}: start and end must be frame numbers")
    start, end = int(start), int(end)  # type: ignore[arg-type]
    n = item.n_segments
    if n == 0:
        raise AnnotateError(f"{where}: field segments: item {item.item_id!r} is not split into segments")
    bounds = [segment_frames(k, item.fps, segment_s) for k in range(n)]
    for k, (first, last) in enumerate(bounds):
        if start != first:
            continue
        ends = {last}
        if k == n - 1 and item.duration_s:
            clip_end = int(round(item.duration_s * (item.fps or 1.0)))
            ends |= set(range(max(first, min(clip_end, last)), last + 1))
        if end in ends:
            return k
        raise AnnotateError(
            f"{where}: field segments: range {start}-{end} does not line up with segment {k} "
            f"(frames {first}-{last})"
        )
    starts = ", ".join(str(first) for first, _ in bounds[:6]) + (", ..." if n > 6 else "")
    raise AnnotateError(
        f"{where}: field segments: range {start}-{end} does not start on a segment's first frame "
        f"({n} segments of {segment_s or 0:g} s, starting at frames {starts})"
    )


def _rater(ann: dict[str, Any], where: str) -> str:
    meta = ann.get("meta") if isinstance(ann.get("meta"), dict) else {}
    who = meta.get("robojudge_rater") if meta else None
    by = ann.get("completed_by")
    if who is None and isinstance(by, dict):
        who = by.get("email")
    if who is None and isinstance(by, str):
        who = by
    if who is None and isinstance(by, int) and not isinstance(by, bool):
        raise AnnotateError(
            f"{where}: field completed_by: {by} is a Label Studio user id, which robojudge cannot map to "
            "one of its annotators: give the annotator's robojudge name in the annotation's "
            'meta.robojudge_rater (e.g. "meta": {"robojudge_rater": "alice"}) or as completed_by.email'
        )
    if not isinstance(who, str) or not who:
        raise AnnotateError(
            f"{where}: cannot tell who annotated: give meta.robojudge_rater or completed_by.email"
        )
    return who


def _name(entry: Any, position: int, what: str) -> str:
    """``task 7`` by its Label Studio id; ``task [0]`` by its place in the list (from 0) when it has none."""
    ident = entry.get("id") if isinstance(entry, dict) else None
    if isinstance(ident, int | str) and not isinstance(ident, bool):
        return f"{what} {ident}"
    return f"{what} [{position}]"


def import_labelstudio(db: str | os.PathLike[str], project: str, path: str | os.PathLike[str]) -> int:
    """Store the submitted annotations of a Label Studio JSON export, all in one transaction.

    An annotation identical to one already stored is skipped, so importing twice changes nothing. Its
    rater must be an active annotator of the database; its task kind takes the same slot the app would
    (one primary label, one cross-review, one adjudication per item) under the same rules as
    :func:`~robojudge.annotate.assign`: a cross-review needs the reviewer, adjudicator or admin role and an
    adjudication the adjudicator or admin role; one person holds at most one of an item's three tasks;
    practice labels come only from the round's trainees. Each annotation needs a PA or IA score; each
    segment range must cover one segment, as the export writes them.

    Returns:
        The number of labels stored.

    Raises:
        AnnotateError: Bad JSON, unknown item or annotator, a bad value, a rule above broken, or a label
            that differs from the one stored for the same task; the message names the file, the task (by
            its id), the annotation and the field.
    """
    try:
        tasks = json.loads(Path(path).read_text(encoding="utf-8-sig"))  # a BOM, as Windows tools write
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnnotateError(f"{path}: cannot read Label Studio JSON: {exc}") from None
    if not isinstance(tasks, list):
        raise AnnotateError(f"{path}: a Label Studio export is a list of tasks")
    n = 0
    with AnnotationService(db, create=False) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        items = {r.item_id: r for r in conn.execute(select(s.items).where(s.items.c.project_id == prow.id))}
        people = {r.username: r for r in conn.execute(select(s.annotators))}
        rounds = {r.name: r for r in conn.execute(select(s.rounds).where(s.rounds.c.project_id == prow.id))}
        for t, task in enumerate(tasks):
            where = f"{path}: {_name(task, t, 'task')}"
            if not isinstance(task, dict):
                raise AnnotateError(f"{where}: a task must be an object, got {type(task).__name__}")
            data = task.get("data")
            item_id = data.get("item_id") if isinstance(data, dict) else None
            if not isinstance(item_id, str) or item_id not in items:
                raise AnnotateError(
                    f"{where}: field data.item_id: {item_id!r} is not an item of project {project!r}"
                )
            item = items[item_id]
            anns = task.get("annotations", [])
            if not isinstance(anns, list):
                raise AnnotateError(
                    f"{where}: field annotations: must be a list of annotations, got {type(anns).__name__}"
                )
            for k, ann in enumerate(anns):
                here = f"{where} (item {item_id!r}) {_name(ann, k, 'annotation')}"
                if not isinstance(ann, dict):
                    raise AnnotateError(f"{here}: an annotation must be an object, got {type(ann).__name__}")
                if ann.get("was_cancelled"):
                    continue
                username = _rater(ann, here)
                if username not in people:
                    raise AnnotateError(
                        f"{here}: annotator {username!r} is not in the database (add-annotator)"
                    )
                person = people[username]
                meta = ann.get("meta") if isinstance(ann.get("meta"), dict) else {}
                kind = (meta or {}).get("robojudge_kind", "label")
                if kind not in _KINDS:
                    raise AnnotateError(
                        f"{here}: field meta.robojudge_kind: {kind!r} is not one of {', '.join(_KINDS)}"
                    )
                round_row = None
                if kind == "practice":
                    round_name = (meta or {}).get("robojudge_round")
                    if not isinstance(round_name, str) or round_name not in rounds:
                        raise AnnotateError(f"{here}: field meta.robojudge_round: no round {round_name!r}")
                    round_row = rounds[round_name]
                values = _values(ann.get("result"), here, item, prow.segment_s)
                if len(values.segments) > item.n_segments:
                    raise AnnotateError(
                        f"{here}: {len(values.segments)} segments, the item has {item.n_segments}"
                    )
                n += _store(conn, prow, item, person, kind, round_row, values, here)
    return n


def _check_person(conn: Connection, item: Any, person: Any, kind: str, round_row: Any, where: str) -> None:
    """The rules :func:`~robojudge.annotate.assign` and :func:`~robojudge.annotate.create_round` apply."""
    name = person.username
    if not person.active:
        raise AnnotateError(
            f"{where}: field meta.robojudge_rater: annotator {name!r} is inactive "
            "(update-annotator --active first to take their labels)"
        )
    allowed = KIND_ROLES.get(kind)
    if allowed and person.role not in allowed:
        raise AnnotateError(
            f"{where}: field meta.robojudge_kind: {name!r} ({person.role}) may not {kind}: that needs the "
            f"role {' or '.join(allowed)}"
        )
    a = s.assignments
    if round_row is not None:
        if round_row.closed_at is not None:
            raise AnnotateError(
                f"{where}: field meta.robojudge_round: round {round_row.name!r} is closed; its result and "
                "the qualifications it gave stand"
            )
        held = conn.execute(
            select(a.c.annotator_id).where(a.c.round_id == round_row.id, a.c.kind == "practice")
        ).all()
        if person.id not in {r.annotator_id for r in held}:
            raise AnnotateError(
                f"{where}: field meta.robojudge_rater: {name!r} is not a trainee of round {round_row.name!r}"
            )
        return
    other = conn.execute(
        select(a.c.kind).where(
            a.c.item_id == item.id,
            a.c.annotator_id == person.id,
            a.c.kind.in_([x for x in ("label", "review", "adjudicate") if x != kind]),
        )
    ).first()
    if other is not None:
        raise AnnotateError(
            f"{where}: field meta.robojudge_rater: {name!r} holds the {other.kind} of this item: its "
            f"{kind} must come from someone else"
        )


def _store(
    conn: Connection,
    prow: Any,
    item: Any,
    person: Any,
    kind: str,
    round_row: Any,
    values: LabelValues,
    where: str,
) -> int:
    """Store one label in its task (made when missing); 0 when the same label is already submitted."""
    a, lb = s.assignments, s.labels
    round_id = round_row.id if round_row is not None else None
    same_task = (a.c.item_id == item.id) & (a.c.kind == kind)
    if kind == "practice":
        same_task &= (a.c.round_id == round_id) & (a.c.annotator_id == person.id)
    row = conn.execute(select(a).where(same_task)).first()
    if row is not None and row.annotator_id != person.id:
        hint = ("; an item has one primary label: give a second rater's annotation "
                '"meta": {"robojudge_kind": "review"} to import it as the cross-review'
                if kind == "label" else "")
        raise AnnotateError(f"{where}: the {kind} of this item is already assigned to someone else{hint}")
    before = _latest(conn, row.id) if row is not None else None
    if row is not None and row.status == "submitted":
        if before == values:
            return 0  # checked when it was stored; its author may have left or changed role since
        was, now_ = (before.flat() if before else {}), values.flat()
        diff = "; ".join(
            f"field {k}: {was.get(k)!r} stored, {now_.get(k)!r} here" for k in changed_fields(before, values)
        )
        raise AnnotateError(f"{where}: this item's {kind} is already submitted with different values: {diff}")
    _check_person(conn, item, person, kind, round_row, where)
    if row is None:
        last = conn.execute(
            select(func.max(a.c.position)).where(a.c.project_id == prow.id, a.c.annotator_id == person.id)
        ).scalar()
        aid = conn.execute(
            a.insert().values(
                public_id=new_token(),
                project_id=prow.id,
                item_id=item.id,
                annotator_id=person.id,
                kind=kind,
                round_id=round_id,
                position=0 if last is None else int(last) + 1,
                stage="ia",
                status="open",
                version=0,
                created_at=now(),
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        row = conn.execute(select(a).where(a.c.id == aid)).one()
    stamp = now()
    version = row.version + 1
    conn.execute(
        lb.insert().values(
            assignment_id=row.id,
            version=version,
            status="submitted",
            label_values=values.to_json(),
            changed=list(changed_fields(before, values)),
            from_draft=None,
            author_id=person.id,
            created_at=stamp,
            source="labelstudio",
        )
    )
    conn.execute(
        a.update().where(a.c.id == row.id).values(version=version, status="submitted", submitted_at=stamp)
    )
    return 1


def _latest(conn: Connection, assignment_id: int) -> LabelValues | None:
    lb = s.labels
    found = conn.execute(
        select(lb.c.label_values)
        .where(lb.c.assignment_id == assignment_id)
        .order_by(lb.c.version.desc())
        .limit(1)
    ).first()
    return LabelValues.from_json(found.label_values) if found else None
