"""``AnnotationService``: everything the annotation web app asks of the database, with authorisation.

Every method takes the acting :class:`Annotator` and checks, inside the service, what that person may
see: their own assignments only; a cross-reviewer sees the primary label only once it is submitted;
an adjudicator sees both assessments once both are submitted; admins see everything. The web layer
can therefore not leak a label by forgetting a check.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import Row, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from robojudge.annotate import _schema as s
from robojudge.annotate._db import (
    KIND_ROLES,
    PRIVILEGED,
    Database,
    now,
    project_row,
    sessions_generation,
)
from robojudge.annotate._errors import Conflict, Forbidden, InvalidLabel, NotFound
from robojudge.annotate._passwords import dummy_hash, hash_password, needs_rehash, verify_password
from robojudge.annotate._place import given_suite, match_suite
from robojudge.annotate._protocol import IA_FIELDS, PA_FIELDS, LabelValues, changed_fields, draft_agreement
from robojudge.annotate._reads import (
    UPSTREAM,
    annotator_of,
    assignment_row,
    audit,
    label_versions,
    latest_version,
    project_info,
    submitted_kinds,
    task_page,
    token_hash,
)
from robojudge.annotate._types import (
    Annotator,
    AuditEvent,
    LabelVersion,
    ProjectInfo,
    QueueEntry,
    RoundInfo,
    TaskPage,
)

if TYPE_CHECKING:
    from robojudge.annotate._rounds import RoundFeedback


class AnnotationService:
    """The annotation database as the web app uses it. Thread-safe; one per process is enough.

    Args:
        url: A SQLAlchemy URL (SQLite or PostgreSQL) or a file path (SQLite). The ``ann_*`` tables are
            created when missing.
        create: Create a missing SQLite file; without it a missing file is :class:`NotFound`.
    """

    def __init__(self, url: str | os.PathLike[str], *, create: bool = True) -> None:
        self.db = Database(url, create=create)
        self._moved: dict[int, str] = {}  # ann_media id -> path, for suites served from a new place

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- projects ----------------------------------------------------------------------------------

    def projects(self) -> list[ProjectInfo]:
        with self.db.read() as conn:
            return [project_info(conn, r) for r in conn.execute(select(s.projects).order_by(s.projects.c.id))]

    def project(self, name: str) -> ProjectInfo:
        with self.db.read() as conn:
            return project_info(conn, project_row(conn, name))

    def project_for_suite(self, suite_path: str | os.PathLike[str]) -> ProjectInfo:
        """The one project created from this manifest.

        Raises:
            NotFound: No project was created from it (the message lists the database's projects and
                where their suites were).
            Conflict: Several were: pick one by name.
        """
        # as init stored it (load_suite's os.path.abspath): '..' folded, so `../suite.jsonl` matches
        path = os.path.abspath(Path(suite_path).expanduser())
        projects = self.projects()
        found = [p for p in projects if p.suite_path == path]
        if not found and not projects:
            raise NotFound(f"no annotation project was created from {path}, nor any other in {self.db.url} "
                           "(robojudge annotate init)")
        if not found:
            listed = "; ".join(
                f"{p.name!r} ({p.n_items} items) from {p.suite_path}"
                + ("" if os.path.exists(p.suite_path) else ", which is not on this machine")
                for p in projects
            )
            raise NotFound(
                f"no annotation project was created from {path}. Projects in {self.db.url}: {listed}. "
                "To use a project whose suite moved from the suite's new place, name it (--project NAME): "
                "the suite is then checked to be the project's. A new project: robojudge annotate init"
            )
        if len(found) > 1:
            names = ", ".join(p.name for p in found)
            raise Conflict(f"several annotation projects come from {path} ({names}): name one")
        return found[0]

    def use_suite(self, project: str, suite: str | os.PathLike[str]) -> ProjectInfo:
        """Serve the project's files from the suite at ``suite`` when that is not where it was made.

        The suite is checked to be the project's, every file there (see :mod:`._place`); the database is
        not changed (``robojudge annotate relocate`` records a new place for good).

        Raises:
            NotFound: No such project.
            AnnotateError: The manifest is not the project's suite, or a file is missing.
        """
        with self.db.read() as conn:
            prow = project_row(conn, project)
            given = given_suite(prow, suite)
            if given is not None:
                self._moved.update(match_suite(conn, prow, given, files=True).moved)
            return project_info(conn, prow)

    # -- people ------------------------------------------------------------------------------------

    def authenticate(self, username: str, password: str, *, remote: str | None = None) -> Annotator | None:
        """The annotator these credentials belong to, or ``None``; both outcomes go to the audit log."""
        with self.db.read() as conn:
            row = conn.execute(select(s.annotators).where(s.annotators.c.username == username)).first()
        if row is None or not row.active or row.password_hash is None:
            verify_password(dummy_hash(), password)  # same work as a real check: timing tells nothing
            self.record_event(None, "login_failed", {"username": username[:100]}, remote=remote)
            return None
        if not verify_password(row.password_hash, password):
            self.record_event(row.id, "login_failed", {"username": username[:100]}, remote=remote)
            return None
        if needs_rehash(row.password_hash):
            with self.db.write() as conn:
                conn.execute(
                    update(s.annotators)
                    .where(s.annotators.c.id == row.id)
                    .values(password_hash=hash_password(password))
                )
        self.record_event(row.id, "login", None, remote=remote)
        return annotator_of(row)

    def accept_invite(self, token: str, password: str, *, remote: str | None = None) -> Annotator:
        """Set the password of the annotator invited with ``token``; the token then stops working.

        Raises:
            NotFound: No pending invite has this token.
            ValueError: The password is too short.
        """
        hashed = hash_password(password)
        with self.db.write() as conn:
            row = conn.execute(
                select(s.annotators).where(s.annotators.c.invite_hash == token_hash(token))
            ).first()
            if row is None or not row.active:
                raise NotFound("this invite link is not valid (already used, or never issued)")
            conn.execute(
                update(s.annotators)
                .where(s.annotators.c.id == row.id)
                .values(password_hash=hashed, invite_hash=None)
            )
            audit(conn, row.id, "invite_accepted", None, remote)
        return annotator_of(row)

    def sessions_generation(self, annotator_id: int) -> int:
        """How many times the annotator's sessions were ended (switched off, new invite): a web session
        made at another generation is refused."""
        with self.db.read() as conn:
            return sessions_generation(conn, annotator_id)

    def annotator(self, annotator_id: int) -> Annotator:
        return self.annotator_and_generation(annotator_id)[0]

    def annotator_and_generation(self, annotator_id: int) -> tuple[Annotator, int]:
        """The active annotator and their session generation, in one read (every web request asks).

        Raises:
            NotFound: No active annotator has this id.
        """
        with self.db.read() as conn:
            row = conn.execute(select(s.annotators).where(s.annotators.c.id == annotator_id)).first()
            generation = sessions_generation(conn, annotator_id) if row is not None and row.active else 0
        if row is None or not row.active:
            raise NotFound(f"no active annotator with id {annotator_id}")
        return annotator_of(row), generation

    # -- queue and tasks ---------------------------------------------------------------------------

    def queue(self, actor: Annotator, project: str | None = None) -> list[QueueEntry]:
        """The actor's own assignments that are ready to work on (or done), in their randomised order."""
        a, i, p, r = s.assignments, s.items, s.projects, s.rounds
        query = (
            select(
                a.c.public_id,
                a.c.kind,
                a.c.position,
                a.c.status,
                a.c.item_id,
                i.c.public_id.label("item_public"),
                p.c.name.label("project"),
                r.c.name.label("round"),
            )
            .join(i, i.c.id == a.c.item_id)
            .join(p, p.c.id == a.c.project_id)
            .outerjoin(r, r.c.id == a.c.round_id)
            .where(a.c.annotator_id == actor.id)
            .order_by(p.c.id, a.c.position, a.c.id)
        )
        if project is not None:
            query = query.where(p.c.name == project)
        with self.db.read() as conn:
            rows = conn.execute(query).all()
            done = submitted_kinds(conn, {row.item_id for row in rows if row.kind in UPSTREAM})
        return [
            QueueEntry(
                row.public_id, row.kind, row.item_public, row.position, row.status, row.round, row.project
            )
            for row in rows
            if all(k in done.get(row.item_id, set()) for k in UPSTREAM.get(row.kind, ()))
        ]

    def task(self, actor: Annotator, assignment_id: str) -> TaskPage:
        """What the labelling page shows for one assignment.

        Raises:
            NotFound: No such assignment.
            Forbidden: Not the actor's (admins may look), or a review/adjudication whose inputs are not
                submitted yet.
        """
        with self._denials(actor, assignment_id), self.db.read() as conn:
            row = self._own(conn, actor, assignment_id, write=False)
            return task_page(conn, row)

    def reveal_instruction(self, actor: Annotator, assignment_id: str) -> TaskPage:
        """Move a label from the PA stage (video only) to the IA stage (instruction and initial frame).

        PA and its three checklist items must be saved first, and cannot change afterwards: PA is judged
        without the instruction (RoboJudge App. A.1).

        Raises:
            InvalidLabel: A PA field is not saved yet.
        """
        with self._denials(actor, assignment_id), self.db.write() as conn:
            row = self._own(conn, actor, assignment_id, write=True)
            if row.stage == "pa":
                current = latest_version(conn, row.id)
                flat = current.values.flat() if current else {}
                for name in PA_FIELDS:
                    if flat.get(name) is None:
                        raise InvalidLabel(
                            name, "save Physical Adherence and its checklist before the instruction is shown"
                        )
                conn.execute(update(s.assignments).where(s.assignments.c.id == row.id).values(stage="ia"))
                audit(conn, actor.id, "instruction_revealed", {"assignment": assignment_id}, None)
            row = assignment_row(conn, assignment_id)
            return task_page(conn, row)

    def save_draft(
        self, actor: Annotator, assignment_id: str, values: LabelValues, base_version: int
    ) -> LabelVersion:
        """Keep a new draft version (nothing new when the values did not change).

        Raises:
            Conflict: ``base_version`` is not the latest version, or the task is already submitted.
            InvalidLabel: A value is out of range, too many segments, or a locked PA field changed.
        """
        return self._write_label(actor, assignment_id, values, base_version, submit=False)

    def submit(
        self, actor: Annotator, assignment_id: str, values: LabelValues, base_version: int
    ) -> LabelVersion:
        """Submit the complete label; the assignment is then closed.

        Raises:
            InvalidLabel: A required field (PA, IA, all six checklist items, every segment) is missing.
            Conflict: Stale ``base_version`` or already submitted.
        """
        return self._write_label(actor, assignment_id, values, base_version, submit=True)

    def report_unplayable(self, actor: Annotator, assignment_id: str) -> None:
        """Record that the task's video does not play in the annotator's browser (a truncated or damaged
        file, a file gone since the project was made), instead of labels given on a blank player. The
        task stays open; ``annotate status`` lists the items reported, for the admin to mend or drop.

        Raises:
            Conflict: The task is already submitted.
        """
        with self._denials(actor, assignment_id), self.db.write() as conn:
            row = self._own(conn, actor, assignment_id, write=True)
            if row.status == "submitted":
                raise Conflict("this task is already submitted")
            audit(conn, actor.id, UNPLAYABLE_EVENT, {"assignment": assignment_id}, None)

    def history(self, actor: Annotator, assignment_id: str) -> list[LabelVersion]:
        """Every version of the actor's label on this assignment, oldest first. A task moved to the actor
        from another rater (``reassign``, ``reopen --to``) keeps that rater's versions, which only an
        admin sees here: the new holder starts afresh, without the earlier one's values."""
        with self._denials(actor, assignment_id), self.db.read() as conn:
            row = self._own(conn, actor, assignment_id, write=False)
            versions = label_versions(conn, row.id, row.kind)
        if actor.role in PRIVILEGED:
            return versions
        return [v for v in versions if v.author == actor.username]

    def rounds(self, actor: Annotator, project: str | None = None) -> list[RoundInfo]:
        """The training rounds the actor may open: all of them for reviewers, adjudicators and admins;
        those they train in for annotators. Oldest first."""
        r, p, a = s.rounds, s.projects, s.assignments
        query = select(p.c.name.label("project"), r.c.name, r.c.closed_at, r.c.threshold).join(
            p, p.c.id == r.c.project_id
        )
        if project is not None:
            query = query.where(p.c.name == project)
        if actor.role not in (*PRIVILEGED, "reviewer", "adjudicator"):
            mine = select(a.c.round_id).where(a.c.annotator_id == actor.id, a.c.round_id.is_not(None))
            query = query.where(r.c.id.in_(mine))
        with self.db.read() as conn:
            rows = conn.execute(query.order_by(r.c.id)).all()
        return [RoundInfo(x.project, x.name, x.closed_at is not None, x.threshold) for x in rows]

    def round_feedback(self, actor: Annotator, project: str, round_name: str) -> RoundFeedback:
        """A training round's agreement and its disagreements, as far as the actor may see them.

        Reviewers, adjudicators and admins see all pairs at any time; a trainee sees the round once it is
        closed, only their own disagreements, without the other trainee's name.

        Raises:
            NotFound: No such project or round.
            Forbidden: A trainee asking before the round is closed, or about a round they are not in.
        """
        from robojudge.annotate._rounds import round_feedback

        return round_feedback(self.db, actor, project, round_name)

    # -- media -------------------------------------------------------------------------------------

    def media_path(self, actor: Annotator, media_id: str) -> Path:
        """The file behind an opaque media id, for the server to stream. Never send it to the browser.

        Raises:
            NotFound: No such media id.
            Forbidden: The actor holds no open assignment on the item (nor any in the project of a
                reference example's video), or asks for the initial frame before the instruction was shown.
        """
        with self.db.read() as conn:
            m = conn.execute(select(s.media).where(s.media.c.public_id == media_id)).first()
            if m is None:
                raise NotFound("no such media")
            path = Path(self._moved.get(m.id, m.path))
            if actor.role in PRIVILEGED:
                return path
            stages = conn.execute(
                select(s.assignments.c.stage, s.assignments.c.kind).where(
                    s.assignments.c.item_id == m.item_id, s.assignments.c.annotator_id == actor.id
                )
            ).all()
            # A review or adjudication that has not opened yet gives no access either.
            done = submitted_kinds(conn, {m.item_id}).get(m.item_id, set())
            stages = [st for st in stages if all(k in done for k in UPSTREAM.get(st.kind, ()))]
            example = conn.execute(
                select(s.examples.c.id)
                .join(s.assignments, s.assignments.c.project_id == s.examples.c.project_id)
                .where(s.examples.c.item_id == m.item_id, s.assignments.c.annotator_id == actor.id)
                .limit(1)
            ).first()
        allowed = bool(stages) and (m.role != "initial_frame" or any(st.stage == "ia" for st in stages))
        # A reference example's videos are for everyone working on its project.
        allowed = allowed or (example is not None and m.role == "video")
        if not allowed:
            self.record_event(actor.id, "media_denied", {"media": media_id})
            raise Forbidden("this media belongs to no task of yours at its current stage")
        return path

    # -- audit -------------------------------------------------------------------------------------

    def record_event(
        self,
        actor_id: int | None,
        action: str,
        detail: Mapping[str, Any] | None = None,
        *,
        remote: str | None = None,
    ) -> None:
        with self.db.write() as conn:
            audit(conn, actor_id, action, detail, remote)

    def audit_events(self, actor: Annotator, limit: int = 200) -> list[AuditEvent]:
        """The newest audit events, newest first (admins only)."""
        if actor.role not in PRIVILEGED:
            raise Forbidden("only admins read the audit log")
        au, an = s.audit, s.annotators
        query = (
            select(au.c.at, an.c.username, au.c.action, au.c.detail, au.c.remote)
            .outerjoin(an, an.c.id == au.c.actor_id)
            .order_by(au.c.id.desc())
            .limit(limit)
        )
        with self.db.read() as conn:
            return [AuditEvent(r.at, r.username, r.action, r.detail, r.remote) for r in conn.execute(query)]

    # -- internals ---------------------------------------------------------------------------------

    @contextmanager
    def _denials(self, actor: Annotator, assignment_id: str) -> Iterator[None]:
        """Log every refused access to an assignment (after its transaction has ended)."""
        try:
            yield
        except Forbidden as exc:
            self.record_event(actor.id, "forbidden", {"assignment": assignment_id, "reason": str(exc)})
            raise

    def _own(self, conn: Connection, actor: Annotator, assignment_id: str, *, write: bool) -> Row[Any]:
        row = assignment_row(conn, assignment_id)
        if row.annotator_id != actor.id and (write or actor.role not in PRIVILEGED):
            raise Forbidden("this assignment is not yours")
        allowed = KIND_ROLES.get(row.kind)
        if allowed and actor.role not in allowed:  # a role lowered after the task was assigned
            raise Forbidden(f"a {row.kind} needs the role {' or '.join(allowed)}; yours is {actor.role} "
                            "(an admin moves it to someone else: robojudge annotate reassign)")
        missing = [
            k
            for k in UPSTREAM.get(row.kind, ())
            if k not in submitted_kinds(conn, {row.item_id}).get(row.item_id, set())
        ]
        if missing:
            raise Forbidden(f"this {row.kind} opens once the {' and '.join(missing)} is submitted")
        return row

    def _write_label(
        self, actor: Annotator, assignment_id: str, values: LabelValues, base_version: int, *, submit: bool
    ) -> LabelVersion:
        def work(conn: Connection) -> LabelVersion:
            row = self._own(conn, actor, assignment_id, write=True)
            repeated = _next_version_like(conn, row, actor, values, base_version,
                                          "submitted" if submit else "draft")
            if repeated is not None:
                return repeated
            base = base_version
            if submit and _next_version_like(conn, row, actor, values, base_version, "draft") is not None:
                # A refused submit sent again: the page kept its values as a draft, so the repeat names
                # the version before that draft. Checking it against the draft gives the same refusal
                # (the 422 reason) instead of a conflict; nothing else changed in between.
                base = row.version
            if row.status == "submitted":
                raise Conflict("this task is already submitted")
            if row.round_id is not None and conn.execute(
                select(s.rounds.c.closed_at).where(s.rounds.c.id == row.round_id)
            ).scalar() is not None:
                raise Conflict("this training round is closed: its practice items take no more labels")
            if row.version != base:
                raise Conflict(f"the label changed since version {base} (now {row.version}): reload")
            item = conn.execute(select(s.items).where(s.items.c.id == row.item_id)).one()
            if len(values.segments) > item.n_segments:
                raise InvalidLabel(f"segments.{item.n_segments}", f"this item has {item.n_segments} segments")
            current = latest_version(conn, row.id)
            if row.stage == "pa":
                flat = values.flat()
                for name in IA_FIELDS:
                    if flat.get(name) is not None:
                        raise InvalidLabel(
                            name, "Instruction Alignment is judged once the instruction is shown"
                        )
            if row.stage == "ia" and row.kind in ("label", "practice"):
                before = current.values.flat() if current else {}
                after = values.flat()
                for name in PA_FIELDS:
                    if after.get(name) != before.get(name):
                        raise InvalidLabel(
                            name, "Physical Adherence is locked once the instruction was shown"
                        )
            if submit:
                missing = values.missing(item.n_segments)
                if missing:
                    raise InvalidLabel(missing[0], f"required to submit (missing: {', '.join(missing)})")
            elif current is not None and current.values == values:
                return current
            version = row.version + 1
            stamp = now()
            done = conn.execute(
                update(s.assignments)
                .where(
                    s.assignments.c.id == row.id,
                    s.assignments.c.version == base,
                    s.assignments.c.status != "submitted",
                )
                .values(
                    version=version,
                    status="submitted" if submit else "draft",
                    submitted_at=stamp if submit else None,
                )
            ).rowcount
            if done != 1:
                raise Conflict("someone saved this task at the same moment: reload")
            draft = (
                LabelValues.from_json(item.model_draft) if item.model_draft and row.kind == "label" else None
            )
            changed = changed_fields(current.values if current else None, values)
            record = {
                "assignment_id": row.id,
                "version": version,
                "status": "submitted" if submit else "draft",
                "label_values": values.to_json(),
                "changed": list(changed),
                "from_draft": draft_agreement(draft, values) if draft else None,
                "author_id": actor.id,
                "created_at": stamp,
                "source": "app",
            }
            try:
                with conn.begin_nested():
                    conn.execute(s.labels.insert().values(**record))
            except IntegrityError:
                raise Conflict("someone saved this task at the same moment: reload") from None
            if submit:
                audit(conn, actor.id, "submitted", {"assignment": assignment_id, "version": version}, None)
            return LabelVersion(
                version,
                record["status"],
                values,
                actor.username,
                stamp,
                changed,
                record["from_draft"],
                row.kind,
            )

        with self._denials(actor, assignment_id):
            return self.db.retry(work)


UNPLAYABLE_EVENT = "media_unplayable"
"""The audit action of :meth:`AnnotationService.report_unplayable`."""


def _next_version_like(
    conn: Connection, row: Row[Any], actor: Annotator, values: LabelValues, base_version: int, status: str
) -> LabelVersion | None:
    """The latest version when it is the next one after ``base_version``, by the same person, with these
    values and ``status``, else ``None``: the write that made it, arriving again.

    A save or submit sent again after it was stored (its reply lost on the network, a closing save that
    landed after the page reloaded, a double click) names the version before it: it is answered with the
    stored version (``status`` as the write's own), where it was refused as a change made elsewhere, and
    nothing new is stored. A refused submit sent again finds the draft the web app kept of its values
    (``status`` "draft"): checked against that draft it gets the same refusal (the 422 reason), not a
    conflict.
    """
    if base_version != row.version - 1:
        return None
    current = latest_version(conn, row.id)
    if (current is None or current.version != row.version or current.author != actor.username
            or current.status != status or current.values != values):
        return None
    return current
