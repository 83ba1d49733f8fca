"""Loading and validating a suite manifest."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from robojudge._activity import step
from robojudge._chars import look_alike_key, look_alike_reason
from robojudge.suite._check import check_paths, describe_error, path_targets
from robojudge.suite._media import MEDIA_MODES, check_media, state_problems
from robojudge.suite._paths import Resolver, confine_folder, place_paths
from robojudge.suite._problems import ManifestError, ManifestProblem
from robojudge.suite._read import RawRecord, file_problem, iter_records
from robojudge.suite._schema import Item

if TYPE_CHECKING:
    from robojudge.video import VideoInfo

#: What ends the warning of an item kept although a file of it is missing (``files="optional"``).
KEPT_WITHOUT_FILES = " (the item is kept: its stored results are read without its files)"


@dataclass
class Suite:
    """The valid items of one manifest, with their paths made absolute.

    Attributes:
        path: The manifest file (absolute, symlinks kept; ``..`` removed where that names the same file,
            else the folder resolved as the system reads it: ``lnk/../m.jsonl`` is the file ``cat`` reads).
        root: The folder relative manifest paths are taken against: ``path.parent``, or, when ``path``
            is a symbolic link, the folder of the file it leads to.
        items: Valid items in file order; file fields are absolute (see :meth:`Item.resolve`).
        problems: Errors found (their records are left out); empty when loaded with ``strict=True``.
        warnings: Things worth a look that did not stop an item (paths outside the manifest's folder).
    """

    path: Path
    root: Path
    items: list[Item]
    problems: list[ManifestProblem] = field(default_factory=list)
    warnings: list[ManifestProblem] = field(default_factory=list)
    _index: dict[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index = {it.item_id: it for it in self.items}

    @property
    def files_missing(self) -> list[ManifestProblem]:
        """Loaded with ``files="optional"``: the warnings of the items kept although a file of theirs is
        missing or cannot be looked at now (``robojudge score`` leaves such items out)."""
        return [w for w in self.warnings if w.message.endswith(KEPT_WITHOUT_FILES)]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @property
    def ok(self) -> bool:
        """True when the manifest had no errors (warnings allowed)."""
        return not self.problems

    def by_id(self, item_id: str) -> Item:
        """The item with this id.

        Raises:
            KeyError: No (valid) item has this id.
        """
        try:
            return self._index[item_id]
        except KeyError:
            raise KeyError(f"no item {item_id!r} in {self.path}") from None


def main_view_name(item: Item) -> str | None:
    """Name of the item's main view, or ``None`` when it has no ``views`` (or ``grid``).

    The main view is ``item.main_view`` when set, else the view whose file ``item.video`` is
    (:func:`video_view_name`), else the first view listed (for a grid video, its first named cell). Every
    component that asks which view is the main one (tracking's state-file view, KIVA's training labels
    and 3D reading, the annotation app, the network RIGIS) asks this function. A loaded manifest holds
    no item on which the rules disagree: :func:`main_video_problem` makes ``video`` the main view's file
    there.
    """
    if item.grid is not None:
        return item.main_view or item.view_names()[0]
    if not item.views:
        return None
    if item.main_view is not None:
        return item.main_view
    return video_view_name(item) or next(iter(item.views))


def same_file(a: str | Path, b: str | Path) -> bool:
    """True when the paths ``a`` and ``b`` name one file: equal once normalised (``./a.mp4`` and
    ``a.mp4``), or, when both exist, one file on disk (a hard link, a symlink, a bind mount of it)."""
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False  # one is missing (or not a path the system takes): only the names could tell


def video_view_name(item: Item) -> str | None:
    """Name of the view whose file ``item.video`` is (:func:`same_file`), or ``None`` when it is none of
    them (or the item has no ``views``). A grid item's ``video`` is the grid: ``None``."""
    if item.grid is not None or not item.views:
        return None
    if item.main_view is not None and item.main_view in item.views \
            and same_file(item.views[item.main_view], item.video):
        return item.main_view
    return next((name for name, p in item.views.items() if same_file(p, item.video)), None)


def main_video_problem(written: Item, resolved: Item) -> tuple[str, str] | None:
    """``(field, message)`` when an item with ``views`` has a ``video`` that is not its main view's file.

    Single-view metrics, tracking and judges read ``video``, while tracking's state-file view, KIVA's
    keypoint labels and the reference are taken in the main view: when the two are different views, one
    camera's frames are scored against another camera's truth. So ``video`` must be the file of one of
    the views, and of ``main_view`` when that is given. Paths are compared resolved (``resolved``, as
    :meth:`Item.resolve` gives them: ``./a.mp4`` and ``a.mp4`` are one file), and, when both exist, as
    files (:func:`same_file`: a hard link to the view's file is that file); messages quote them as written
    (``written``). A grid item's ``video`` is the grid itself: nothing to compare.
    """
    if not written.views or resolved.views is None:
        return None
    shown = [v for v, p in resolved.views.items() if same_file(p, resolved.video)]
    if not shown:
        main = written.main_view or next(iter(written.views))
        return "video", (
            f"video {written.video!r} is the file of none of the views {sorted(written.views)}; with views, "
            f"video is the main view's file (the one single-view metrics, tracking and judges read): set "
            f"it to views.{main} ({written.views[main]!r}), or declare a stitched video of the views with "
            "grid instead of views")
    if written.main_view is not None and written.main_view not in shown:
        return "main_view", (
            f"main_view {written.main_view!r} is not the view that video shows: video {written.video!r} is "
            f"views.{shown[0]}, and single-view metrics, tracking and judges read video while the "
            f"state-file view and the reference are taken in the main view; set main_view to {shown[0]!r}, "
            f"or video to views.{written.main_view} ({written.views[written.main_view]!r})")
    return None


def _where(rec: RawRecord) -> str:
    return f"line {rec.line}" if rec.line is not None else f"row {rec.row}"


def _check_record(
    rec: RawRecord, shown: str, root: Path, first_seen: dict[str, str], confine: Path | None,
    files: str = "required", resolve: Resolver | None = None, link: Path | None = None,
) -> tuple[Item | None, list[ManifestProblem]]:
    """Validate one record; ``first_seen`` maps ids met so far to their location (updated).
    ``files="optional"``: a file that is missing or cannot be looked at is a warning, not an error.

    Returns the item (None when it cannot be built) and its problems, errors and warnings.
    """
    data = rec.data
    raw_id = data.get("item_id") if data is not None else None
    item_id = raw_id if isinstance(raw_id, str) and raw_id else None
    found = [dataclasses.replace(p, item_id=item_id or p.item_id) for p in rec.problems]
    if data is None:
        return None, found

    def add(field_: str | None, message: str, severity: str = "error") -> None:
        found.append(ManifestProblem(shown, rec.line, rec.row, item_id, field_, message, severity))

    if item_id is not None:
        if item_id in first_seen:
            add("item_id", f"duplicate item_id {item_id!r} (first used at {first_seen[item_id]})")
        else:
            first_seen[item_id] = _where(rec)
    item: Item | None = None
    try:
        item = Item.model_validate(data)
    except ValidationError as e:
        for err in e.errors():
            add(*describe_error(err))
    # A path holding a NUL names no file on any system: an error even for a reader of stored results.
    unnamable = {f for f, _, value in path_targets(data) if "\0" in value}
    for field_, message in check_paths(data, root, link):
        if files == "optional" and field_ not in unnamable:
            add(field_, message + KEPT_WITHOUT_FILES, "warning")
        else:
            add(field_, message)
    for field_, message, severity in place_paths(data, root, confine, resolve):
        add(field_, message, severity)
    return item, found


@dataclass
class _Checked:
    """One record after checking: where it is, its resolved item when it has no errors, its problems."""

    line: int | None
    row: int | None
    item: Item | None
    problems: list[ManifestProblem]


def _iter_checked(path: Path, shown: str, root: Path, confine: Path | None,
                  files: str = "required", link: Path | None = None) -> Iterator[_Checked]:
    """Read and check the records one by one; raise :class:`ManifestError` only for file-level
    problems. Only the ids seen so far are kept (to find duplicates), not the records. ``link``: the
    symbolic link the manifest was given by (its not-found messages say where the link lies)."""
    first_seen: dict[str, str] = {}
    resolve = Resolver()  # each folder resolved once in this read
    empty = True
    for rec in iter_records(path, shown):
        if empty and rec.data is None and _json_list_as_lines(path):
            raise ManifestError([file_problem(
                shown, "this file looks like a JSON list (one JSON value over many lines), not JSON Lines "
                       "(one record a line): name it .json")])
        empty = False
        item, found = _check_record(rec, shown, root, first_seen, confine, files, resolve, link)
        usable = item is not None and not any(p.is_error for p in found)
        resolved = item.resolve(root, resolve) if usable and item is not None else None
        if resolved is not None and item is not None:
            wrong = main_video_problem(item, resolved)
            if wrong is not None:
                found.append(ManifestProblem(shown, rec.line, rec.row, item.item_id, *wrong))
                resolved = None
        yield _Checked(rec.line, rec.row, resolved, found)
    if empty:
        yield _Checked(None, None, None, [file_problem(shown, "manifest has no items")])


def _json_list_as_lines(path: Path) -> bool:
    """Whether a ``.jsonl`` (``.ndjson``) file is a JSON list, as ``json.dump(records, indent=2)`` writes
    it: each of its lines fails as a record, and one file-level problem says what it is instead."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        return False
    try:
        with path.open("rb") as f:
            head = f.read(64).decode("utf-8-sig", errors="replace").lstrip()
            if not head.startswith("["):
                return False
            f.seek(0)
            return isinstance(json.loads(f.read().decode("utf-8-sig")), list)
    except (OSError, ValueError, RecursionError):
        return False


def _collect(path: Path, shown: str, root: Path, confine: Path | None,
             files: str = "required", link: Path | None = None) -> list[_Checked]:
    with step(f"reading the manifest {shown}", unit="items") as read:
        out = []
        for checked in _iter_checked(path, shown, root, confine, files, link):
            read.advance()
            out.append(checked)
        return out


@dataclass(frozen=True)
class _Located:
    """Where a manifest is: ``full`` (absolute, as :attr:`Suite.path`), ``shown`` (as given), ``root``
    (the folder its relative paths are read from) and ``link`` (the path given, when it is a symbolic
    link to the manifest: its relative paths are read from the target's folder, not the link's)."""

    full: Path
    shown: str
    root: Path
    link: Path | None


def _locate(path: str | Path) -> _Located:
    given = Path(path).expanduser()
    opened = given.absolute()  # what the system opens: ".." after a linked folder leaves the link's target
    full = Path(os.path.abspath(given))  # ".." removed as text: kept only where it names the same file
    if full != opened and os.path.realpath(full) != os.path.realpath(opened):
        full = Path(os.path.realpath(opened.parent)) / opened.name
    if os.path.islink(full):
        # A link to a manifest: its paths are read from the folder that holds the file, as the store
        # lookup follows the link (README: a link to a run folder's manifest), so a suite folder moved or
        # shared as a whole still finds its videos through a link from anywhere.
        return _Located(full, str(path), Path(os.path.realpath(full)).parent, full)
    return _Located(full, str(path), full.parent, None)


FILES = ("required", "optional")
"""How :func:`load_suite` treats an item whose files are missing or cannot be looked at now: as an error
(``required``: the item is left out, as for scoring) or as a warning (``optional``: the item is kept,
for the readers of stored results, whose items keep their results while a drive is not mounted)."""


def load_suite(path: str | Path, *, strict: bool = True, confine: str | Path | None = None,
               files: str = "required") -> Suite:
    """Load a suite manifest (JSONL, CSV, Parquet or a JSON list), one item per rollout.

    Args:
        path: The manifest file; the format is chosen by suffix (``.jsonl``/``.ndjson``, ``.csv``,
            ``.parquet``, ``.json``).
        strict: When true, any error raises. When false, bad records are left out of
            ``Suite.items`` and listed in ``Suite.problems``, so one broken line does not stop a run.
        confine: A folder every path of an item must stay in (after resolving ``..`` and symbolic
            links); an item reaching outside it is an error. ``None`` reads ``$ROBOJUDGE_CONFINE``;
            unset means no confinement (paths outside the manifest's folder are then warnings).
        files: ``required`` (default): an item whose file is missing or cannot be looked at is an
            error (left out, or raised with ``strict``). ``optional``: it is a warning and the item
            is kept, for the readers of stored results (report, status, export, leaderboards).

    Returns:
        The suite, with relative paths resolved against the manifest's folder.

    Raises:
        ManifestError: With ``strict``, when anything is wrong (all problems at once). Always, when
            the file itself cannot be used (missing, unreadable, unknown format, no CSV header).
        ValueError: The confine folder does not exist, or ``files`` is not one of :data:`FILES`.
    """
    if files not in FILES:
        raise ValueError(f"files must be one of {', '.join(FILES)}, got {files!r}")
    at = _locate(path)
    full, shown, root = at.full, at.shown, at.root
    checked = _collect(full, shown, root, confine_folder(confine), files, at.link)
    problems = [p for c in checked for p in c.problems if p.is_error]
    if strict and problems:
        raise ManifestError(problems)
    items = [c.item for c in checked if c.item is not None]
    warnings = [p for c in checked for p in c.problems if not p.is_error]
    return Suite(path=full, root=root, items=items, problems=problems, warnings=warnings)


def iter_suite(
    path: str | Path, *, block: int = 10_000, confine: str | Path | None = None
) -> Iterator[Suite]:
    """:func:`load_suite` (not strict) in blocks of at most ``block`` records, read as consumed.

    Each block is a :class:`Suite` of its records' valid items, errors and warnings, with the
    same checks as a whole load (a duplicate id is found across blocks too), so memory holds one
    block, not the manifest. A manifest with no records yields one block holding that problem.

    Raises:
        ManifestError: The file itself cannot be used (missing, unreadable, unknown format), when
            the first block is read.
        ValueError: ``block`` below 1, or the confine folder does not exist.
    """
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}")
    at = _locate(path)
    full, shown, root = at.full, at.shown, at.root
    folder = confine_folder(confine)

    def suite(checked: list[_Checked]) -> Suite:
        problems = [p for c in checked for p in c.problems if p.is_error]
        warnings = [p for c in checked for p in c.problems if not p.is_error]
        items = [c.item for c in checked if c.item is not None]
        return Suite(path=full, root=root, items=items, problems=problems, warnings=warnings)

    chunk: list[_Checked] = []
    for c in _iter_checked(full, shown, root, folder, link=at.link):
        chunk.append(c)
        if len(chunk) >= block:
            yield suite(chunk)
            chunk = []
    if chunk:
        yield suite(chunk)


def validate_manifest(
    path: str | Path,
    *,
    confine: str | Path | None = None,
    media: str = "none",
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[ManifestProblem]:
    """Every problem in a manifest, errors and warnings, in file order.

    The manifest is valid when no problem is an error (``problem.is_error``); warnings flag what
    deserves a look without stopping an item. Never raises for bad content: a file that cannot be
    read at all (missing, unknown format, unreadable) comes back as a single file-level problem
    (``line`` and ``row`` both ``None``).

    Args:
        path: The manifest file.
        confine: See :func:`load_suite`; without one, paths outside the manifest's folder warn.
        media: How hard to look at the videos of valid items (``video``, ``reference_video``,
            ``views``): ``"none"`` checks only that they exist; ``"open"`` opens each and decodes
            its first frame, reporting what fails as a warning; ``"deep"`` decodes every frame as
            scoring would, reporting what fails (undecodable, truncated) as an error, and damage
            inside a stream (packets the decoder rejects, frames it conceals) as a ``damaged: ...``
            warning, which ``"open"`` cannot see past the first frame. Both report
            what sampling would have to assume (a frame rate, unusable time stamps) as warnings.
            Both also read an item's ``robot``, ``joint_states`` and ``calibration`` files
            (:func:`robojudge.robots.check_episode_files`; a calibration must also have a camera for
            every view of the item, :func:`_uncalibrated_views`, for frames of that view's aspect
            ratio); what fails there is an error (a camera of no view of the item is a warning: a rig
            file shared by episodes). And both
            check that an item's views agree in frame count and rate, and that a grid video cuts
            evenly into its cells (:func:`robojudge.suite._views.check_views`; errors), and warn when
            the ``video`` of an item without a ``grid`` looks like several views tiled in one frame
            (:mod:`robojudge.suite._tiling`).
        progress: Called with ``(videos checked, videos to check)`` as media checks finish.
        workers: Threads checking media (default: up to 8, one per core).

    Raises:
        ValueError: unknown ``media`` mode, or the confine folder does not exist.
    """
    if media not in MEDIA_MODES:
        raise ValueError(f"media must be one of {', '.join(MEDIA_MODES)}, got {media!r}")
    at = _locate(path)
    full, shown, root = at.full, at.shown, at.root
    try:
        checked = _collect(full, shown, root, confine_folder(confine), link=at.link)
    except ManifestError as e:
        return e.problems
    _clip_sources(checked, shown)
    _clip_splits(checked, shown)
    _look_alike_twins(checked, shown)
    if media != "none":
        items = [c.item for c in checked]
        # The media check's probes, reused by the size and frame-count checks below (one probe a file).
        probes: dict[str, VideoInfo] = {}
        found = check_media(items, deep=media == "deep", progress=progress, workers=workers, probes=probes)
        for c, extra in zip(checked, found, strict=True):
            if c.item is not None:
                item_id = c.item.item_id
                c.problems.extend(ManifestProblem(shown, c.line, c.row, item_id, *f) for f in extra)
        _same_videos(checked, shown)
        # A state file that is no npz archive fails every metric that reads it: said here, up front.
        for c in checked:
            if c.item is not None:
                c.problems.extend(ManifestProblem(shown, c.line, c.row, c.item.item_id, *f)
                                  for f in state_problems(c.item))
        # The files forward kinematics reads are opened with the media: a robot spec loads its model.
        from robojudge.robots import check_episode_files

        for c in checked:
            it = c.item
            if it is not None and (it.robot or it.joint_states or it.calibration):
                view_sizes, video_size = _frame_sizes(it, probes) if it.calibration else ({}, None)
                found_files = check_episode_files(it.robot, it.joint_states, it.calibration,
                                                  it.view_names() or None, _declared_frames(it.video, probes),
                                                  view_sizes, video_size)
                found_files += _uncalibrated_views(it, found_files)
                c.problems.extend(ManifestProblem(shown, c.line, c.row, it.item_id, *f) for f in found_files)
        # Views of one rollout must be taken at the same instants; a grid must cut evenly.
        from robojudge.suite._views import check_views

        for c in checked:
            it = c.item
            if it is not None and (it.grid is not None or len(it.views or {}) > 1):
                found_views = check_views(it, deep=media == "deep")
                c.problems.extend(ManifestProblem(shown, c.line, c.row, it.item_id, *f) for f in found_views)
    return [p for c in checked for p in c.problems]


def clip_source_conflicts(items: Sequence[Item]) -> list[tuple[Item, Item]]:
    """``(first, other)`` for each item whose ``source`` differs from that of the first item of its clip
    (blank and unset are one source). The paired cluster bootstrap (RoboJudge App. E.1) resamples a clip
    within its source corpus, so such a suite cannot be bootstrapped: ``suite validate`` warns on each,
    and the report's strata refuse it (:func:`robojudge.report.strata_of`)."""
    first: dict[str, Item] = {}
    out = []
    for it in items:
        if it.clip_id:
            seen = first.setdefault(it.clip_id, it)
            if (seen.source or "") != (it.source or ""):
                out.append((seen, it))
    return out


def source_text(source: str | None) -> str:
    """An item's source as the messages about clips spanning sources name it."""
    return f"source {source!r}" if source else "no source"


def _clip_sources(checked: list[_Checked], shown: str) -> None:
    """A warning on each item of :func:`clip_source_conflicts`, naming the first item of its clip."""
    row_of = {id(c.item): c for c in checked if c.item is not None}
    for seen, it in clip_source_conflicts([c.item for c in checked if c.item is not None]):
        c, first = row_of[id(it)], row_of[id(seen)]
        where = f"line {first.line}" if first.line is not None else f"row {first.row}"
        c.problems.append(ManifestProblem(
            shown, c.line, c.row, it.item_id, "source",
            f"{source_text(it.source)}, and item {seen.item_id!r} of the same clip {it.clip_id!r} ({where}) "
            f"has {source_text(seen.source)}: a clip is resampled within one source, so the report's "
            "intervals and the leaderboards refuse the suite; give every item of a clip the same source",
            "warning"))


def clip_split_conflicts(items: Sequence[Item]) -> dict[str, dict[str, Item]]:
    """``{clip_id: {split: first item of the clip in it}}`` for each clip whose items lie in two or more
    splits (items without a split are in none). All views and rollouts of one episode belong in one
    split (RoboPhys-3D App. A.1, Table 8; RoboJudge Sec. 4.1): a judge trained on one rollout of a clip
    and tested on another has seen the test clip. ``suite validate`` warns on each."""
    splits: dict[str, dict[str, Item]] = {}
    for it in items:
        if it.clip_id and it.split:
            splits.setdefault(it.clip_id, {}).setdefault(it.split, it)
    return {clip: found for clip, found in splits.items() if len(found) > 1}


def _clip_splits(checked: list[_Checked], shown: str) -> None:
    """A warning for each clip of :func:`clip_split_conflicts`, on its first item in a later split, naming
    each split with the line (row) of the clip's first item there."""
    row_of = {id(c.item): c for c in checked if c.item is not None}
    for clip, found in clip_split_conflicts([c.item for c in checked if c.item is not None]).items():
        firsts = list(found.values())
        c = row_of[id(firsts[1])]

        def where(it: Item) -> str:
            at = row_of[id(it)]
            return f"line {at.line}" if at.line is not None else f"row {at.row}"

        listed = ", ".join(f"{split!r} (item {it.item_id!r}, {where(it)})" for split, it in found.items())
        c.problems.append(ManifestProblem(
            shown, c.line, c.row, firsts[1].item_id, "split",
            f"clip {clip!r} is in {len(found)} splits: {listed}; all views and rollouts of one episode "
            "belong in one split (RoboPhys-3D App. A.1), or a judge trained on the one is tested on a clip "
            "it has seen; give the clip's items one split", "warning"))


def _name_values(item: Item, name: str) -> list[str]:
    """The values of the name field ``name`` of ``item`` (several for ``views``; none when unset)."""
    if name == "views":
        return item.view_names()
    if name == "labels.rater":
        rater = item.labels.rater if item.labels is not None else None
        return [rater] if rater else []
    value = getattr(item, name)
    return [value] if value else []


#: The fields whose values name something a table shows or a group gathers: field -> (what one value
#: is called, what two of them are).
_TWINS = {
    "generator": ("generator", "two generators"),
    "clip_id": ("clip id", "two clips (two clusters of the paired bootstrap)"),
    "item_id": ("item id", "two items"),
    "instruction": ("instruction", "two instructions (two groups of `--by instruction`)"),
    "task": ("task", "two tasks (two groups of `--by task`)"),
    "source": ("source", "two sources (two strata of the paired bootstrap)"),
    "regime": ("regime", "two regimes"),
    "split": ("split", "two splits"),
    "prompt_variant": ("prompt variant", "two prompt variants"),
    "labels.rater": ("rater", "two raters"),
    "views": ("view name", "two views"),
}


def _look_alike_twins(checked: list[_Checked], shown: str) -> None:
    """A warning on the first item of each value of a :data:`_TWINS` field that equals an earlier one
    only once both are composed (NFC: ``é`` one character, or ``e`` and an accent, as macOS writes file
    names) and stripped of what prints as nothing or as a space (:func:`robojudge._chars.look_alike_key`:
    a zero-width space, a byte-order mark, a no-break space): the two look alike in every table, and
    nothing else would say they are apart."""
    for name, (what, apart) in _TWINS.items():
        key_of: dict[str, str] = {}  # each spelling met -> its look-alike key
        first: dict[str, tuple[str, _Checked, str]] = {}  # key -> first spelling, its record, its item
        for c in checked:
            if c.item is None:
                continue
            for value in _name_values(c.item, name):
                if value in key_of:
                    continue
                key = key_of[value] = look_alike_key(value)
                seen = first.setdefault(key, (value, c, c.item.item_id))
                if seen[0] == value:
                    continue
                other, record, item = seen
                where = f"line {record.line}" if record.line is not None else f"row {record.row}"
                if name != "item_id":
                    where = f"item {item!r}, {where}"
                c.problems.append(ManifestProblem(
                    shown, c.line, c.row, c.item.item_id, name,
                    f"{what} {ascii(value)} differs from {what} {ascii(other)} ({where}) only "
                    f"{look_alike_reason(value, other)}: they look alike in every table but are {apart}; "
                    "spell them one way", "warning"))


class SameVideos:
    """Finds the items whose video is the very file of an earlier item's (a link, a hard link, two
    spellings of one path: one ``(st_dev, st_ino)``) under the same instruction and prompt variant: such
    an item is scored twice and counted twice in its groups' means, or stands for two generators at
    once. One clip under several instructions (an instruction-alignment study) is a design, not a slip;
    several items may share a reference; only ``video`` is looked at. One ``stat`` an item, so a run
    that reads its manifest in blocks feeds each block's items as it goes.

    Attributes:
        pairs: ``(item id, id of the earlier item with the same video)`` for each such item, in order.
    """

    def __init__(self) -> None:
        self._first: dict[tuple[int, int, str | None, str | None], str] = {}
        self.pairs: list[tuple[str, str]] = []

    def see(self, item: Item) -> str | None:
        """The id of the earlier item whose video is ``item``'s very file (noted in :attr:`pairs`), or
        None. A video that cannot be looked at is left to the checks that read it."""
        if not item.video:
            return None
        try:
            st = os.stat(item.video)
        except (OSError, ValueError):
            return None
        seen = self._first.setdefault((st.st_dev, st.st_ino, item.instruction, item.prompt_variant),
                                      item.item_id)
        if seen == item.item_id:
            return None
        self.pairs.append((item.item_id, seen))
        return seen


def same_videos_note(pairs: Sequence[tuple[str, str]]) -> str | None:
    """One sentence on the ``(item id, earlier item id)`` pairs of :class:`SameVideos` for a run's
    summary (``robojudge score``, ``robojudge report``), or None when there are none."""
    if not pairs:
        return None
    n = len(pairs)
    shown = ", ".join(f"{item!r} repeats {first!r}" for item, first in pairs[:3])
    more = f" and {n - 3} more" if n > 3 else ""
    return (f"{n} item{'s have' if n != 1 else ' has'} the same video file as an earlier item under the "
            f"same instruction ({shown}{more}): each is scored twice and counted twice in its groups' "
            "means; `robojudge suite validate` names them")


def _same_videos(checked: list[_Checked], shown: str) -> None:
    """A warning on each item of :class:`SameVideos`, naming the earlier item and its line (row)."""
    found = SameVideos()
    row_of: dict[str, _Checked] = {}
    for c in checked:
        it = c.item
        if it is None:
            continue
        row_of.setdefault(it.item_id, c)
        first = found.see(it)
        if first is None:
            continue
        at = row_of[first]
        where = f"line {at.line}" if at.line is not None else f"row {at.row}"
        c.problems.append(ManifestProblem(
            shown, c.line, c.row, it.item_id, "video",
            f"the same file as the video of item {first!r} ({where}): it is scored twice and counted "
            "twice in its groups' means", "warning"))


def _uncalibrated_views(item: Item, found: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The problem of a calibration that loads but has no camera for one of the item's views (the
    multi-view metrics refuse such an item with an error row); nothing when ``found`` already has an
    error on the calibration, or the item has no views."""
    views = item.view_names()
    if not item.calibration or not views or any(f == "calibration" and s == "error" for f, _, s in found):
        return []
    from robojudge.robots import load_calibration

    try:
        cams = load_calibration(item.calibration)
    except ValueError:  # reported with the other files' problems
        return []
    missing = [v for v in views if v not in cams]
    if not missing:
        return []
    return [("calibration", f"{item.calibration}: no camera for view(s) {missing} (it has {sorted(cams)}); "
                            "the calibration needs one camera per view", "error")]


def _probe(path: str, probes: dict[str, VideoInfo] | None) -> VideoInfo | None:
    """``path``'s probe: the one in ``probes`` (the media check's) when there, else a new one; None when
    the video cannot be read (the media check reports it)."""
    if probes is not None and path in probes:
        return probes[path]
    from robojudge.video import VideoError, probe_video

    try:
        info = probe_video(path)
    except (VideoError, OSError, ValueError):
        return None
    if probes is not None:
        probes[path] = info
    return info


def _frame_sizes(item: Item, probes: dict[str, VideoInfo] | None = None
                 ) -> tuple[dict[str, tuple[int, int]], tuple[int, int] | None]:
    """``(width, height)`` of each view's frames (a grid's cells by name), and of the video of an item
    without views: what its calibration's sizes are checked against. A video that cannot be read, or a
    grid that does not divide it, is left out (the media and view checks report those). Probes are taken
    from ``probes`` where there (:func:`_probe`)."""
    from robojudge.suite._views import GridError, cell_size, view_sources

    def size(path: str) -> tuple[int, int] | None:
        info = _probe(path, probes)
        return (info.width, info.height) if info is not None else None

    sources = view_sources(item)
    if not sources:
        return {}, size(item.video) if item.video else None
    if item.grid is not None:
        whole = size(item.video)
        try:
            cell = cell_size(item.grid, *whole) if whole is not None else None
        except GridError:
            cell = None
        return ({n: cell for n in sources} if cell is not None else {}), None
    sizes = {n: size(src.path) for n, src in sources.items()}
    return {n: s for n, s in sizes.items() if s is not None}, None


def _declared_frames(video: str | None, probes: dict[str, VideoInfo] | None = None) -> int | None:
    """The frame count ``video``'s container declares (None: no video, unreadable, or not told; a count
    estimated from the duration is not trusted to the frame): what a joint-state file is checked with.
    A video that cannot be read is reported by the media check."""
    info = _probe(video, probes) if video else None
    return (info.frame_count or None) if info is not None else None
