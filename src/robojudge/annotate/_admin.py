"""Setting up annotation work: projects from suites, annotators, assignments and model drafts.

These are what the ``robojudge annotate`` commands call. Each opens the database, does one thing in one
transaction and closes it again.
"""

from __future__ import annotations

import math
import os
import random
import re
import secrets
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from robojudge.annotate import _schema as s
from robojudge.annotate._db import KIND_ROLES, end_sessions, now, project_row
from robojudge.annotate._errors import AnnotateError, NotFound, UnreadableClipWarning
from robojudge.annotate._passwords import hash_password
from robojudge.annotate._place import ClipInfo, item_media, probe_clip
from robojudge.annotate._protocol import LabelValues, changed_fields
from robojudge.annotate._reads import audit, latest_version, project_info, token_hash
from robojudge.annotate._service import AnnotationService
from robojudge.annotate._types import Invite, ProjectInfo

DEFAULT_PASS_THRESHOLD = 0.8
"""Share of a trainee's PA/IA scores within one point of the other trainees' needed to pass a round.

RoboJudge's annotators reached 92.1% within one in their fourth round (App. A.1, Table 5); 0.8 sits
between their first (76.2%) and last round."""

_USERNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")  # used with fullmatch: "$" lets "alice\n" in


def _check_name(what: str, name: str) -> None:
    """Refuse a project or round name longer than its column: PostgreSQL refused it with a bare "value
    too long", SQLite stored it."""
    if len(name) > s.NAME_LENGTH:
        raise AnnotateError(f"{what} name {name[:40]!r}... has {len(name)} characters; use at most "
                            f"{s.NAME_LENGTH}")


@contextmanager
def open_service(db: str | os.PathLike[str], *, create: bool = False) -> Iterator[AnnotationService]:
    """The service on ``db``; a missing SQLite file is created only with ``create``."""
    svc = AnnotationService(db, create=create)
    try:
        yield svc
    finally:
        svc.close()


def new_token() -> str:
    return secrets.token_urlsafe(16)


def segment_count(duration_s: float | None, segment_s: float) -> int:
    """How many ``segment_s`` pieces cover the clip; a shorter last piece counts (RoboWorM Fig. D1)."""
    if duration_s is None or duration_s <= 0:
        return 0
    return max(1, math.ceil(duration_s / segment_s - 1e-6))


def init_project(
    suite: str | os.PathLike[str],
    db: str | os.PathLike[str],
    name: str,
    *,
    seed: int = 0,
    segment_s: float | None = None,
    pass_threshold: float = DEFAULT_PASS_THRESHOLD,
) -> ProjectInfo:
    """Create a project holding every item of a suite, each under a new random opaque id.

    Args:
        suite: The manifest.
        db: Database URL or SQLite path.
        name: Project name (unique in the database).
        seed: Seed of the per-annotator random orders of this project's assignments.
        segment_s: Split every single-view clip into segments of this many seconds for per-segment
            verdicts (RoboWorM uses 3; its multi-view items get video-level scores only); ``None``: none.
        pass_threshold: Within-one agreement a trainee needs to pass a training round.

    Raises:
        AnnotateError: The name is taken or longer than 200 characters, the manifest has errors, or
            segments were asked for and a clip's length cannot be read.
    """
    from robojudge.suite import ManifestError, load_suite

    _check_name("project", name)
    if segment_s is not None and not segment_s > 0:
        raise AnnotateError(f"segment length must be positive, got {segment_s}")
    if not 0 <= pass_threshold <= 1:
        raise AnnotateError(f"pass threshold must be within 0-1, got {pass_threshold}")
    try:
        loaded = load_suite(os.fspath(suite))
    except (OSError, ValueError, ManifestError) as exc:
        raise AnnotateError(f"cannot read the suite: {exc}") from exc
    rows = _item_rows(loaded.path, loaded.items, segment_s)
    with open_service(db, create=True) as svc, svc.db.write() as conn:
        if conn.execute(select(s.projects.c.id).where(s.projects.c.name == name)).first() is not None:
            raise AnnotateError(f"an annotation project named {name!r} already exists in {svc.db.url}")
        pid = conn.execute(
            s.projects.insert().values(
                name=name,
                suite_path=str(loaded.path),
                seed=seed,
                segment_s=segment_s,
                pass_threshold=pass_threshold,
                created_at=now(),
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        _insert_items(conn, pid, rows)
        return project_info(conn, project_row(conn, name))


_NO_HEADER = ClipInfo(None, None)


def _item_rows(path: Any, items: Sequence[Any], segment_s: float | None) -> list[dict[str, Any]]:
    """``ann_items`` rows (with their media under ``"media"``) for suite items, each clip probed (the main
    view for the rate and length; a warning names every item with a view whose header cannot be read)."""
    rows: list[dict[str, Any]] = []
    unreadable: list[str] = []
    for item in items:
        probed = probe_clip(item.video)
        media = item_media(item)
        # The main view gives the rate and length; every view is checked, since the app cannot play a
        # task with one view damaged either (a truncated side view passed without a word).
        bad = [m["view"] for m in media if m["kind"] == "video" and (
            probed if m["path"] == item.video else probe_clip(m["path"])) == _NO_HEADER]
        if bad or probed == _NO_HEADER:
            views = ", ".join(repr(v) for v in bad if v is not None)
            unreadable.append(repr(item.item_id) + (f" (view {views})" if views else ""))
        n_segments = 0
        # RoboWorM splits single-camera physics clips; multi-view items are scored as a whole (Fig. D1).
        if segment_s is not None and len(item.views or {}) < 2:
            n_segments = segment_count(probed.duration_s, segment_s)
            if n_segments == 0:
                raise AnnotateError(
                    f"{path}: item {item.item_id!r} field video: cannot read the clip's length "
                    "to split it into segments"
                )
        rows.append(
            {
                "public_id": new_token(),
                "item_id": item.item_id,
                "instruction": item.instruction,
                "fps": probed.fps,
                "duration_s": probed.duration_s,
                "n_segments": n_segments,
                "media": media,
            }
        )
    if unreadable:
        shown = ", ".join(unreadable[:5]) + (
            f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else "")
        warnings.warn(
            f"{path}: {len(unreadable)} item(s) whose clip's header cannot be read (no frame rate, no "
            f"length; a truncated or damaged file), which annotators' browsers will likely not play "
            f"either: {shown}. Check them with robojudge suite validate; the app tells annotators when a "
            "video cannot be played and lets them report it (annotate status lists the reports)",
            UnreadableClipWarning,
            stacklevel=3,
        )
    return rows


def _insert_items(conn: Connection, project_id: int, rows: Sequence[dict[str, Any]]) -> None:
    for row in rows:
        values = {k: v for k, v in row.items() if k != "media"}
        iid = conn.execute(s.items.insert().values(project_id=project_id, **values)).inserted_primary_key[0]  # type: ignore[index]
        conn.execute(
            s.media.insert(),
            [{"public_id": new_token(), "item_id": iid, "position": k, **m}
             for k, m in enumerate(row["media"])],
        )


def add_items(db: str | os.PathLike[str], project: str) -> list[str]:
    """Add the items appended to the project's suite manifest since ``init``, each under a new random id.

    The manifest is first checked to be the project's suite in every item the project holds (see
    :func:`robojudge.annotate.relocate_project`): only new items may differ. Each new item's clip is
    read as at ``init`` (segments, when the project splits clips). :func:`assign` then deals them.

    Returns:
        The manifest ids of the items added (none when there is nothing new).

    Raises:
        AnnotateError: No such project; the manifest cannot be read, has a file missing, or changed
            in an item the project holds; a new clip's length cannot be read for its segments.
    """
    from robojudge.annotate._place import match_suite

    with open_service(db) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        place = match_suite(conn, prow, prow.suite_path, files=True, new_items=True)
        known = {r.item_id for r in item_rows(conn, prow.id, None)}
    new = [it for it in place.suite.items if it.item_id not in known]
    rows = _item_rows(place.suite.path, new, prow.segment_s)  # clips read outside the transaction
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        taken = {r.item_id for r in item_rows(conn, prow.id, None)}
        rows = [r for r in rows if r["item_id"] not in taken]  # added meanwhile by another add-items
        _insert_items(conn, prow.id, rows)
        if rows:
            added = [r["item_id"] for r in rows]
            audit(conn, None, "items_added", {"project": project, "items": added}, None)
    return [r["item_id"] for r in rows]


def add_annotator(
    db: str | os.PathLike[str], username: str, role: str = "annotator", *, password: str | None = None
) -> Invite:
    """Add an annotator with a password, or with a one-time invite token (returned, stored only hashed).

    Raises:
        AnnotateError: Bad username or role, a taken username, or a password shorter than 8 characters.
    """
    if not _USERNAME.fullmatch(username):
        raise AnnotateError(f"username {username!r}: use 1-100 ASCII letters (A-Z, a-z), digits, '.', '_', "
                            "'@' or '-', starting with a letter or a digit")
    if role not in s.ROLES:
        raise AnnotateError(f"role {role!r} is not one of {', '.join(s.ROLES)}")
    token = None if password is not None else secrets.token_urlsafe(24)
    try:
        hashed = hash_password(password) if password is not None else None
    except ValueError as exc:
        raise AnnotateError(str(exc)) from None
    with open_service(db, create=True) as svc, svc.db.write() as conn:
        if conn.execute(select(s.annotators.c.id).where(s.annotators.c.username == username)).first():
            raise AnnotateError(f"annotator {username!r} already exists")
        conn.execute(
            s.annotators.insert().values(
                username=username,
                role=role,
                password_hash=hashed,
                invite_hash=token_hash(token) if token else None,
                active=True,
                created_at=now(),
            )
        )
    return Invite(username, role, token)


def update_annotator(
    db: str | os.PathLike[str],
    username: str,
    *,
    role: str | None = None,
    active: bool | None = None,
    new_invite: bool = False,
) -> Invite:
    """Change an annotator's role, switch them off or on, or issue a new invite (which clears the password).

    An inactive annotator cannot log in and their sessions stop working (``AnnotationService.annotator``
    refuses them); their labels stay. Switching an annotator off or issuing a new invite ends the
    sessions issued before it for good (switched on again, they log in again).

    Raises:
        AnnotateError: Unknown annotator or role.
    """
    if role is not None and role not in s.ROLES:
        raise AnnotateError(f"role {role!r} is not one of {', '.join(s.ROLES)}")
    token = secrets.token_urlsafe(24) if new_invite else None
    with open_service(db) as svc, svc.db.write() as conn:
        (row,) = _annotator_rows(conn, [username])
        values: dict[str, Any] = {}
        if role is not None:
            values["role"] = role
        if active is not None:
            values["active"] = active
        if token is not None:
            values.update(password_hash=None, invite_hash=token_hash(token))
        if values:
            conn.execute(s.annotators.update().where(s.annotators.c.id == row.id).values(**values))
        if active is False or token is not None:  # end every session made so far
            end_sessions(conn, row.id)
        return Invite(username, role or row.role, token)


def _annotator_rows(conn: Connection, usernames: Sequence[str]) -> list[Any]:
    rows = {
        r.username: r
        for r in conn.execute(select(s.annotators).where(s.annotators.c.username.in_(usernames)))
    }
    missing = [u for u in usernames if u not in rows]
    if missing:
        raise NotFound(
            f"no annotator named {', '.join(map(repr, missing))} (robojudge annotate add-annotator)"
        )
    return [rows[u] for u in usernames]


def _refuse_inactive(people: Sequence[Any]) -> None:
    off = [p.username for p in people if not p.active]
    if off:
        raise AnnotateError(
            f"{', '.join(map(repr, off))}: inactive (robojudge annotate update-annotator --active first)"
        )


def item_rows(conn: Connection, project_id: int, item_ids: Sequence[str] | None) -> list[Any]:
    rows = conn.execute(
        select(s.items).where(s.items.c.project_id == project_id).order_by(s.items.c.id)
    ).all()
    if item_ids is None:
        return list(rows)
    by_id = {r.item_id: r for r in rows}
    missing = [i for i in item_ids if i not in by_id]
    if missing:
        raise NotFound(f"items not in the project: {', '.join(map(repr, missing[:5]))}")
    return [by_id[i] for i in item_ids]


def _next_positions(conn: Connection, project_id: int, annotator_id: int) -> int:
    a = s.assignments
    found = conn.execute(
        select(func.max(a.c.position)).where(a.c.project_id == project_id, a.c.annotator_id == annotator_id)
    ).scalar()
    return 0 if found is None else int(found) + 1


def _insert_tasks(
    conn: Connection,
    project: Any,
    per_user: dict[int, list[Any]],
    users: dict[int, str],
    kind: str,
    round_id: int | None,
    seed: int,
) -> int:
    """Insert each user's tasks in a random order drawn from (project seed, user, kind), and keep it."""
    n = 0
    stamp = now()
    for uid, its in per_user.items():
        order = list(its)
        random.Random(f"{seed}:{project.name}:{users[uid]}:{kind}:{round_id}").shuffle(order)
        start = _next_positions(conn, project.id, uid)
        stage = "ia" if kind in ("review", "adjudicate") else "pa"
        if not order:
            continue
        conn.execute(
            s.assignments.insert(),
            [
                {
                    "public_id": new_token(),
                    "project_id": project.id,
                    "item_id": it.id,
                    "annotator_id": uid,
                    "kind": kind,
                    "round_id": round_id,
                    "position": start + k,
                    "stage": stage,
                    "status": "open",
                    "version": 0,
                    "created_at": stamp,
                }
                for k, it in enumerate(order)
            ],
        )
        n += len(order)
    return n


def assign(
    db: str | os.PathLike[str],
    project: str,
    usernames: Sequence[str],
    *,
    kind: str = "label",
    items: Sequence[str] | None = None,
    seed: int | None = None,
    require_training: bool = True,
) -> int:
    """Deal items to annotators: each item gets one task of ``kind``; items already holding one are skipped.

    Items are dealt round-robin after a seeded shuffle, so the load is even; each annotator's tasks get
    a seeded random order, stored with them. A ``review`` never goes to the item's primary annotator
    and an ``adjudicate`` to neither of its two annotators.

    Args:
        db: Database URL or path.
        project: Project name.
        usernames: Who gets the tasks.
        kind: ``label``, ``review`` or ``adjudicate``.
        items: Manifest item ids (default: every item).
        seed: Seed of the dealing and the orders (default: the project's seed).
        require_training: When the project has training rounds, only annotators who passed one get
            ``label`` and ``review`` tasks.

    Returns:
        The number of tasks created.

    Raises:
        AnnotateError: Unknown kind, user or item; an inactive annotator; a role that may not do ``kind``;
            untrained annotators; a named item that is a reference example; or no eligible annotator for
            some item.
    """
    if kind not in ("label", "review", "adjudicate"):
        raise AnnotateError(f"kind {kind!r} is not one of label, review, adjudicate (practice: create_round)")
    if not usernames:
        raise AnnotateError("name at least one annotator")
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        seed = prow.seed if seed is None else seed
        people = _annotator_rows(conn, list(dict.fromkeys(usernames)))
        _refuse_inactive(people)
        allowed = KIND_ROLES.get(kind)
        wrong = [p.username for p in people if allowed and p.role not in allowed]
        if wrong:
            raise AnnotateError(
                f"{', '.join(wrong)} may not {kind}: that needs the role {' or '.join(allowed or ())}"
            )
        if require_training and kind in ("label", "review") and _has_rounds(conn, prow.id):
            ok = {
                r.annotator_id
                for r in conn.execute(select(s.qualified).where(s.qualified.c.project_id == prow.id))
            }
            untrained = [p.username for p in people if p.id not in ok and p.role != "admin"]
            if untrained:
                raise AnnotateError(f"{', '.join(untrained)} passed no training round of {project!r} yet")
        a = s.assignments
        held: dict[int, dict[str, int]] = {}
        for r in conn.execute(
            select(a.c.item_id, a.c.kind, a.c.annotator_id).where(
                a.c.project_id == prow.id, a.c.kind != "practice"
            )
        ):
            held.setdefault(r.item_id, {})[r.kind] = r.annotator_id
        pinned = {
            r.item_id
            for r in conn.execute(select(s.examples.c.item_id).where(s.examples.c.project_id == prow.id))
        }
        wanted = item_rows(conn, prow.id, items)
        shown = [it.item_id for it in wanted if it.id in pinned]
        if items is not None and shown:
            raise AnnotateError(
                f"{', '.join(map(repr, shown))}: reference example(s) of {project!r}, never dealt as tasks "
                "(their scores are shown beside every task)"
            )
        # In the project's order (items) and by name (people), whatever order they were named in: the
        # deal depends on the seed, the people and the items, not on how the command line listed them.
        people = sorted(people, key=lambda p: p.username)
        todo = sorted((it for it in wanted if kind not in held.get(it.id, {}) and it.id not in pinned),
                      key=lambda it: it.id)
        random.Random(f"{seed}:{project}:deal:{kind}").shuffle(todo)
        per_user: dict[int, list[Any]] = {p.id: [] for p in people}
        for it in todo:
            taken = set(held.get(it.id, {}).values())
            choices = [p for p in people if p.id not in taken]
            if not choices:
                raise AnnotateError(
                    f"item {it.item_id!r}: no annotator left for its {kind} (all already worked on it)"
                )
            target = min(choices, key=lambda p: len(per_user[p.id]))
            per_user[target.id].append(it)
        return _insert_tasks(conn, prow, per_user, {p.id: p.username for p in people}, kind, None, seed)


def _has_rounds(conn: Connection, project_id: int) -> bool:
    return conn.execute(select(s.rounds.c.id).where(s.rounds.c.project_id == project_id)).first() is not None


def create_round(
    db: str | os.PathLike[str],
    project: str,
    name: str,
    usernames: Sequence[str],
    items: Sequence[str],
    *,
    threshold: float | None = None,
) -> int:
    """A training round: every named annotator labels every practice item (RoboJudge App. A.1).

    Args:
        threshold: Within-one agreement needed to pass, 0-1 (default: the project's).

    Returns:
        The number of practice tasks created.

    Raises:
        AnnotateError: A threshold outside 0-1, fewer than two annotators, no items, a round name taken,
            longer than 200 characters, ``.`` or ``..``, an unknown or inactive annotator, an unknown item,
            or a reference example among the items.
    """
    _check_name("round", name)
    if name in (".", ".."):
        # its page would be /rounds/. or /rounds/..: a browser resolves those to another address
        raise AnnotateError(f"a round cannot be named {name!r}: its page address would be {name!r}")
    if threshold is not None and not 0 <= threshold <= 1:
        raise AnnotateError(f"pass threshold must be within 0-1, got {threshold}")
    if len(set(usernames)) < 2:
        raise AnnotateError("a training round needs at least two annotators to compare")
    if not items:
        raise AnnotateError("a training round needs practice items")
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        if conn.execute(
            select(s.rounds.c.id).where(s.rounds.c.project_id == prow.id, s.rounds.c.name == name)
        ).first():
            raise AnnotateError(f"project {project!r} already has a round named {name!r}")
        rid = conn.execute(
            s.rounds.insert().values(
                project_id=prow.id,
                name=name,
                threshold=prow.pass_threshold if threshold is None else threshold,
                created_at=now(),
            )
        ).inserted_primary_key[0]  # type: ignore[index]
        people = _annotator_rows(conn, list(dict.fromkeys(usernames)))
        _refuse_inactive(people)
        its = item_rows(conn, prow.id, list(dict.fromkeys(items)))
        pinned = {
            r.item_id
            for r in conn.execute(select(s.examples.c.item_id).where(s.examples.c.project_id == prow.id))
        }
        shown = [it.item_id for it in its if it.id in pinned]
        if shown:
            raise AnnotateError(
                f"{', '.join(map(repr, shown))} are reference examples: their scores are shown to all"
            )
        per_user = {p.id: list(its) for p in people}
        return _insert_tasks(
            conn, prow, per_user, {p.id: p.username for p in people}, "practice", rid, prow.seed
        )


@dataclass(frozen=True)
class MovedTask:
    """One task :func:`reassign` moved: the manifest item, the kind, from whom to whom, and whether the
    old holder's draft was set aside (kept in the label's history, the new holder starting afresh)."""

    item_id: str
    kind: str
    from_user: str
    to_user: str
    draft_set_aside: bool


def _set_aside(conn: Connection, row: Any, author_id: int, source: str, values: Any) -> None:
    """Insert a new draft version of an assignment holding ``values`` (every earlier version is kept)."""
    current = latest_version(conn, row.id, row.kind)
    version = row.version + 1
    stamp = now()
    conn.execute(
        s.labels.insert().values(
            assignment_id=row.id,
            version=version,
            status="draft",
            label_values=values.to_json(),
            changed=list(changed_fields(current.values if current else None, values)),
            from_draft=None,
            author_id=author_id,
            created_at=stamp,
            source=source,
        )
    )
    conn.execute(
        s.assignments.update()
        .where(s.assignments.c.id == row.id)
        .values(version=version, status="draft", submitted_at=None)
    )


def reassign(
    db: str | os.PathLike[str],
    project: str,
    from_user: str,
    usernames: Sequence[str],
    *,
    kind: str | None = None,
    items: Sequence[str] | None = None,
    require_training: bool = True,
) -> list[MovedTask]:
    """Move the open and draft tasks of one annotator (one who left, say) to others, dealt evenly.

    Submitted tasks stay where they are (:func:`reopen_adjudication` redoes an adjudication). A task
    moves only to someone who may do it as :func:`assign` deals it: active, of a role allowed the kind,
    qualified when the project has training rounds (``label`` and ``review``), and holding no other
    task of the item. A draft is not handed on: its versions stay in the label's history under its
    author, and a new empty version starts the new holder afresh (a primary label back in the PA stage,
    the instruction hidden again), so nobody submits PA fixed by someone else. Practice tasks never move.

    Args:
        from_user: Whose tasks move (may be inactive).
        usernames: Who receive them.
        kind: Only tasks of this kind (``label``, ``review``, ``adjudicate``); default: all three.
        items: Only the tasks of these manifest item ids.
        require_training: As for :func:`assign`.

    Returns:
        The tasks moved.

    Raises:
        AnnotateError: Unknown kind, user or item; a receiver who is ``from_user``, inactive, of the
            wrong role or untrained; a task nobody named can take.
    """
    kinds = ("label", "review", "adjudicate") if kind is None else (kind,)
    if kind is not None and kind not in ("label", "review", "adjudicate"):
        raise AnnotateError(f"kind {kind!r} is not one of label, review, adjudicate (practice tasks stay)")
    if not usernames:
        raise AnnotateError("name at least one annotator to receive the tasks (--to)")
    if from_user in usernames:
        raise AnnotateError(f"{from_user!r} is both the one whose tasks move and a receiver")
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        (old,) = _annotator_rows(conn, [from_user])
        people = sorted(_annotator_rows(conn, list(dict.fromkeys(usernames))), key=lambda p: p.username)
        _refuse_inactive(people)
        trained = None
        if require_training and _has_rounds(conn, prow.id):
            trained = {
                r.annotator_id
                for r in conn.execute(select(s.qualified).where(s.qualified.c.project_id == prow.id))
            }
        a = s.assignments
        query = select(a).where(
            a.c.project_id == prow.id,
            a.c.annotator_id == old.id,
            a.c.kind.in_(kinds),
            a.c.status != "submitted",
        )
        if items is not None:
            query = query.where(a.c.item_id.in_([it.id for it in item_rows(conn, prow.id, items)]))
        tasks = conn.execute(query.order_by(a.c.position)).all()
        names = {r.id: r.item_id for r in item_rows(conn, prow.id, None)}
        holders: dict[int, set[int]] = {}
        for r in conn.execute(select(a.c.item_id, a.c.annotator_id).where(
            a.c.project_id == prow.id, a.c.kind != "practice"
        )):
            holders.setdefault(r.item_id, set()).add(r.annotator_id)
        load = {p.id: 0 for p in people}
        moved: list[MovedTask] = []
        for task in tasks:
            where = f"item {names[task.item_id]!r}, {task.kind} task of {from_user!r}"
            allowed = KIND_ROLES.get(task.kind)
            fit = [
                p for p in people
                if (not allowed or p.role in allowed)
                and (trained is None or task.kind == "adjudicate" or p.role == "admin" or p.id in trained)
                and p.id not in holders.get(task.item_id, set())
            ]
            if not fit:
                raise AnnotateError(
                    f"{where}: nobody named can take it (each holds another task of the item, lacks the "
                    f"role {' or '.join(allowed or ('annotator',))}, or passed no training round)"
                )
            target = min(fit, key=lambda p: load[p.id])
            load[target.id] += 1
            reset = task.status == "draft"
            conn.execute(
                a.update()
                .where(a.c.id == task.id)
                .values(
                    annotator_id=target.id,
                    position=_next_positions(conn, prow.id, target.id),
                    stage="pa" if task.kind == "label" else task.stage,
                )
            )
            if reset:
                _set_aside(conn, task, target.id, "reassigned", LabelValues())
            holders.setdefault(task.item_id, set()).add(target.id)
            moved.append(MovedTask(names[task.item_id], task.kind, from_user, target.username, reset))
        if moved:
            done = [[m.item_id, m.kind, m.to_user] for m in moved]
            detail = {"project": project, "from": from_user, "tasks": done}
            audit(conn, None, "tasks_reassigned", detail, None)
        return moved


def reopen_adjudication(
    db: str | os.PathLike[str], project: str, item: str, *, to: str | None = None
) -> MovedTask | None:
    """Reopen an item's submitted adjudication so that it can be redone.

    The submitted version stays in the label's history; a new draft version holding its values opens
    the task again for its adjudicator (or, with ``to``, for another adjudicator, who starts afresh, as
    :func:`reassign` has it). Until it is submitted again the item has no adjudication: its primary
    label is final again unless a cross-review disputes it.

    Returns:
        The move to ``to``, or ``None`` without one.

    Raises:
        AnnotateError: Unknown item; the item has no submitted adjudication; ``to`` cannot adjudicate it.
    """
    with open_service(db) as svc, svc.db.write() as conn:
        prow = project_row(conn, project)
        (it,) = item_rows(conn, prow.id, [item])
        a = s.assignments
        row = conn.execute(select(a).where(a.c.item_id == it.id, a.c.kind == "adjudicate")).first()
        if row is None or row.status != "submitted":
            state = "no adjudication task" if row is None else f"an adjudication still {row.status}"
            raise AnnotateError(f"item {item!r} of {project!r} has {state}: nothing to reopen")
        current = latest_version(conn, row.id, row.kind)
        (holder,) = conn.execute(select(s.annotators).where(s.annotators.c.id == row.annotator_id)).all()
        _set_aside(conn, row, row.annotator_id, "reopened", current.values if current else LabelValues())
        audit(conn, None, "adjudication_reopened",
              {"project": project, "item": item, "by": holder.username, "version": row.version}, None)
    if to is None:
        return None
    (moved,) = reassign(db, project, holder.username, [to], kind="adjudicate", items=[item])
    return moved


def nothing_dealt(
    db: str | os.PathLike[str], project: str, kind: str = "label", items: Sequence[str] | None = None
) -> str:
    """Why :func:`assign` dealt no ``kind`` task of these items: who holds the tasks they already have
    (open, draft, submitted; inactive holders marked, with the command that moves their tasks), the
    reference examples among them, and items of the suite manifest the project does not hold yet."""
    with open_service(db) as svc, svc.db.read() as conn:
        prow = project_row(conn, project)
        wanted = {it.id for it in item_rows(conn, prow.id, items)}
        a, an = s.assignments, s.annotators
        held: dict[tuple[str, bool, str], int] = {}
        for r in conn.execute(
            select(a.c.item_id, a.c.status, an.c.username, an.c.active)
            .join(an, an.c.id == a.c.annotator_id)
            .where(a.c.project_id == prow.id, a.c.kind == kind)
        ):
            if r.item_id in wanted:
                key = (r.username, bool(r.active), r.status)
                held[key] = held.get(key, 0) + 1
        pinned = sum(
            r.item_id in wanted
            for r in conn.execute(select(s.examples.c.item_id).where(s.examples.c.project_id == prow.id))
        )
        known = {r.item_id for r in item_rows(conn, prow.id, None)}
        suite_path = prow.suite_path
    parts = []
    if held:
        shown = ", ".join(
            f"{n} {status} held by {user}{'' if active else ' (inactive)'}"
            for (user, active, status), n in sorted(held.items())
        )
        parts.append(f"every item named already holds a {kind} task ({shown})")
    if pinned:
        parts.append(f"{pinned} are reference examples, never dealt")
    gone = sorted({user for (user, active, status) in held if not active and status != "submitted"})
    if gone:
        parts.append(f"move the open tasks of {', '.join(gone)} with robojudge annotate reassign --from "
                     f"{gone[0]} --to NAME")
    if items is None:
        new = _new_in_manifest(suite_path, known)
        if new:
            parts.append(f"{suite_path} holds {len(new)} item(s) the project lacks ({', '.join(new[:3])}"
                         f"{', ...' if len(new) > 3 else ''}): robojudge annotate add-items adds them")
    return "; ".join(parts) or f"the project holds no item to deal a {kind} task for"


def _new_in_manifest(suite_path: str, known: set[str]) -> list[str]:
    """Item ids of the manifest at ``suite_path`` that are not in ``known`` (none when it cannot be read)."""
    from robojudge.suite import ManifestError, load_suite

    try:
        loaded = load_suite(suite_path, files="optional")
    except (OSError, ValueError, ManifestError):
        return []
    return [it.item_id for it in loaded.items if it.item_id not in known]
