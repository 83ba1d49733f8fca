"""Where a project's suite and files are now, when they moved since ``init``.

``init`` records the manifest's absolute path and every file's. When the suite folder moves, or the
database is shared with a machine that holds the suite elsewhere, ``serve`` and ``export`` take the
suite at its new place (reading the files from there, the database unchanged) and ``relocate``
records the new place for good. A suite given in place of the recorded one is checked to be the same
suite, so that labels are never attached to other clips: the same item ids, each with the same
instruction, the same views and each file at the same place relative to the suite's folder (a file
outside that folder: the same file name). ``relocate`` also compares each clip's frame rate and length
with those read at ``init``. The project records no file digests, so a file edited in place is not
noticed.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from robojudge.annotate import _schema as s
from robojudge.annotate._db import Database, project_row
from robojudge.annotate._errors import AnnotateError
from robojudge.annotate._reads import audit

if TYPE_CHECKING:
    from robojudge.suite import Item, Suite

_SHOWN = 5  # problems named in one error


@dataclass(frozen=True)
class ClipInfo:
    """A clip's frame rate and length as read (``None`` where they cannot be read)."""

    fps: float | None
    duration_s: float | None


def probe_clip(path: str) -> ClipInfo:
    """The clip's rate and length from its header; a header without a length (a WebM recorded live) has
    the clip's packets' time stamps measured."""
    from robojudge.video import VideoError, measured_duration, probe_video

    try:
        info = probe_video(path)
    except (VideoError, OSError):
        return ClipInfo(None, None)
    duration = info.duration
    if duration is None and info.frame_count and info.fps:
        duration = info.frame_count / info.fps
    if duration is None:
        with contextlib.suppress(VideoError, OSError):
            duration = measured_duration(path)
    return ClipInfo(info.fps or None, duration)


def item_media(item: Item) -> list[dict[str, Any]]:
    """The files an item shows, as ``ann_media`` rows without ids: the main view first, then the other
    views, then the initial frame."""
    from robojudge.suite import main_view_name

    views: list[tuple[str | None, str]] = [(None, item.video)]
    if item.views:
        main = main_view_name(item)
        views = sorted(item.views.items(), key=lambda kv: kv[0] != main)
    media = [{"role": "video", "kind": "video", "view": v, "path": p} for v, p in views]
    if item.initial_frame:
        media.append({"role": "initial_frame", "kind": "image", "view": None, "path": item.initial_frame})
    return media


def _field(role: str, view: str | None) -> str:
    return "initial_frame" if role != "video" else f"views.{view}" if view else "video"


def same_place(recorded: str, here: str, folder: Path) -> bool:
    """Whether file ``here`` of the suite in ``folder`` is where ``recorded`` was in the recorded suite:
    the same path below the suite's folder, compared from the end (the recorded folder may have been
    reached through a link, and the recorded paths have links resolved), or the same file name for a
    file outside the folder."""
    try:
        below = Path(here).relative_to(folder.resolve()).parts
    except ValueError:
        below = (Path(here).name,)
    return Path(recorded).parts[-len(below):] == below


@dataclass(frozen=True)
class SuitePlace:
    """The project's suite where it is now.

    Attributes:
        suite: The manifest as loaded from its new place.
        moved: ``ann_media`` row id -> the file's path here, for each file not at its recorded path.
        n_items: The project's items.
    """

    suite: Suite
    moved: dict[int, str]
    n_items: int


def _load(path: str | os.PathLike[str]) -> Suite:
    from robojudge.suite import ManifestError, load_suite

    try:
        return load_suite(os.fspath(path), files="optional")  # a missing file is named by match_suite
    except (OSError, ValueError, ManifestError) as exc:
        raise AnnotateError(f"cannot read the suite {os.fspath(path)}: {exc}") from exc


def _named(what: str, ids: Sequence[str]) -> str:
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return f"{what}: {', '.join(map(repr, ids[:_SHOWN]))}{more}"


def match_suite(
    conn: Connection, prow: Any, path: str | os.PathLike[str], *, files: bool, probe: bool = False,
    new_items: bool = False,
) -> SuitePlace:
    """Check that the manifest at ``path`` is the project's suite, and find each file's place there.

    Args:
        conn: An open connection.
        prow: The project's ``ann_projects`` row.
        path: The suite manifest where it is now.
        files: Every file must be there (serving, relocating), not only the manifest (exporting).
        probe: Compare each item's clip's frame rate and length with those read at ``init``.
        new_items: Let the manifest hold items the project lacks (``add-items``; their files are then
            checked too when ``files``).

    Raises:
        AnnotateError: The manifest cannot be read, or is not the project's suite (the differences,
            the first few by item and field, and how many in all).
    """
    suite = _load(path)
    items = conn.execute(select(s.items).where(s.items.c.project_id == prow.id).order_by(s.items.c.id)).all()
    media: dict[int, list[Any]] = {}
    for m in conn.execute(
        select(s.media)
        .join(s.items, s.items.c.id == s.media.c.item_id)
        .where(s.items.c.project_id == prow.id)
        .order_by(s.media.c.item_id, s.media.c.position)
    ):
        media.setdefault(m.item_id, []).append(m)
    here = {it.item_id: it for it in suite.items}
    known = {it.item_id for it in items}
    problems: list[str] = []
    lacking = [it.item_id for it in items if it.item_id not in here]
    if lacking:
        problems.append(_named("items of the project it lacks", lacking))
    extra = [i for i in here if i not in known]
    if extra and not new_items:
        problems.append(_named("items the project lacks", extra) + " (robojudge annotate add-items adds "
                        "them to the project)")
    for i in extra if new_items and files else ():
        problems += [f"item {i!r} field {_field(m['role'], m['view'])}: file not found: {m['path']}"
                     for m in item_media(here[i]) if not os.path.exists(m["path"])]
    folder = os.path.dirname(prow.suite_path)
    moved: dict[int, str] = {}
    for it in items:
        new = here.get(it.item_id)
        if new is None:
            continue
        where = f"item {it.item_id!r}"
        if (new.instruction or None) != (it.instruction or None):
            problems.append(f"{where} field instruction: {new.instruction!r}, recorded {it.instruction!r}")
            continue
        old = {(m.role, m.view): m for m in media.get(it.id, [])}
        now = {(m["role"], m["view"]): m["path"] for m in item_media(new)}
        if set(old) != set(now):
            problems.append(f"{where}: files {', '.join(sorted(_field(*k) for k in now))}, recorded "
                            f"{', '.join(sorted(_field(*k) for k in old))}")
            continue
        before = len(problems)
        for key, m in old.items():
            file = now[key]
            if not same_place(m.path, file, suite.root):
                problems.append(f"{where} field {_field(*key)}: {file} is not where the project's file was "
                                f"({m.path}, with the suite in {folder})")
            elif files and not os.path.exists(file):
                problems.append(f"{where} field {_field(*key)}: file not found: {file}")
            elif file != m.path:
                moved[m.id] = file
        if probe and len(problems) == before:
            problems += _clip_changed(where, it, new.video)
    if problems:
        more = f"; and {len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
        if str(suite.path) == prow.suite_path:
            raise AnnotateError(f"{suite.path}: the suite of project {prow.name!r} changed since the project "
                                f"was made, so its labels would go to other items: "
                                f"{'; '.join(problems[:_SHOWN])}{more}")
        raise AnnotateError(f"{suite.path} is not the suite of project {prow.name!r} (made from "
                            f"{prow.suite_path}): {'; '.join(problems[:_SHOWN])}{more}")
    return SuitePlace(suite, moved, len(items))


def _clip_changed(where: str, row: Any, path: str) -> list[str]:
    """How the clip at ``path`` differs from what ``init`` read of the item's clip."""
    clip = probe_clip(path)
    out = []
    for name, then, now in (("frame rate", row.fps, clip.fps), ("length", row.duration_s, clip.duration_s)):
        if then is not None and (now is None or not math.isclose(then, now, rel_tol=1e-3, abs_tol=1e-3)):
            found = "unreadable" if now is None else f"{now:g}"
            out.append(f"{where} field video: {name} {found} in {path}, {then:g} when the project was made")
    return out


def given_suite(prow: Any, suite: str | os.PathLike[str] | None) -> str | None:
    """``suite`` as an absolute path, or ``None`` when it is not given or is the recorded manifest."""
    if suite is None:
        return None
    given = os.path.abspath(Path(suite).expanduser())
    if given == prow.suite_path:
        return None
    try:
        return None if os.path.samefile(given, prow.suite_path) else given
    except OSError:
        return given


@dataclass(frozen=True)
class Relocation:
    """What :func:`relocate_project` changed: the manifest's recorded path and ``n_paths`` file paths."""

    project: str
    old_suite: str
    new_suite: str
    n_items: int
    n_paths: int


def relocate_project(db: str | os.PathLike[str], project: str, suite: str | os.PathLike[str]) -> Relocation:
    """Record the suite's new place, the manifest's and every file's, once it is checked to be the same suite.

    Items, labels and the opaque ids stay as they were. Besides the checks of :func:`match_suite`, every
    file must be there and every clip must have the frame rate and length read at ``init``.

    Raises:
        AnnotateError: No such project (or database file), or the manifest is not the project's suite.
    """
    database = Database(db, create=False)
    try:
        with database.write() as conn:
            prow = project_row(conn, project)
            place = match_suite(conn, prow, suite, files=True, probe=True)
            new_suite = str(place.suite.path)
            if place.moved:
                conn.execute(
                    s.media.update().where(s.media.c.id == bindparam("mid")).values(path=bindparam("to")),
                    [{"mid": mid, "to": path} for mid, path in place.moved.items()],
                )
            conn.execute(s.projects.update().where(s.projects.c.id == prow.id).values(suite_path=new_suite))
            detail = {"project": project, "from": prow.suite_path, "to": new_suite, "paths": len(place.moved)}
            audit(conn, None, "project_relocated", detail, None)
    finally:
        database.close()
    return Relocation(project, prow.suite_path, new_suite, place.n_items, len(place.moved))
