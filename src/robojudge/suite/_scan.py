"""A manifest from a folder of videos, without renaming anything: ``robojudge suite scan``.

The folder is read as ``ROOT/<generator>/<clip>.<suffix>``: the first folder under ``ROOT`` names the
generator, the rest of the path (without its suffix) names the clip, so the same clip made by two
generators is one cluster of the paired bootstrap. ``pattern`` replaces that rule with a regular
expression whose named groups give the fields. Instructions come from a ``.txt`` file beside each
video or from a table keyed by item, clip or video path; reference episodes from a second folder,
matched by clip. See docs/manifest.md, "A manifest from a folder".
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import hashlib
import json
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from robojudge._chars import unsafe_at
from robojudge._files import NAME_MAX, temp_beside
from robojudge.suite._check import LOCALE_FIX, describe_error
from robojudge.suite._load import validate_manifest
from robojudge.suite._problems import ManifestError, ManifestProblem
from robojudge.suite._read import SCAN_SUFFIXES, iter_records
from robojudge.suite._schema import CHECKLIST_ITEMS, Embodiment, Grid, Labels

__all__ = [
    "PATTERN_FIELDS", "SCAN_SUFFIXES", "ScanResult", "check_jsonl_name", "default_manifest_name",
    "parse_grid", "scan_folder", "write_manifest",
]


PATTERN_FIELDS = ("generator", "clip_id", "task", "regime", "source", "split", "prompt_variant", "view")
"""The named groups a ``pattern`` may set (``view``: the camera; files that differ only there are the
views of one item)."""

_DEFAULT_PATTERN = re.compile(r"(?:(?P<generator>[^/]+)/)?(?P<clip_id>.+)")
_KEY_COLUMNS = ("item_id", "clip_id", "video")


@dataclass
class ScanResult:
    """What :func:`scan_folder` found.

    Attributes:
        root: The scanned folder (absolute).
        items: Manifest records in path order; their paths are absolute (:func:`write_manifest` makes
            those inside the manifest's folder relative to it).
        skipped: Paths under ``root`` (POSIX, with suffix) of videos the pattern did not match.
        notes: What deserves a look, one line each: instructions or references that matched nothing,
            items without an instruction, folders of images left out.
        instruction_sources: ``item_id`` -> where its instruction came from: a ``.txt`` path, or the
            table's row (``prompts.csv:3``, ``prompts.parquet:row 2``, ``prompts.json: key 'ep07'``).
        reference_count: Reference videos found.
        absolute_paths: Paths :func:`write_manifest` wrote absolute (outside the manifest's folder).
        id_choices: ``video`` -> the item ids the item may take: its path without and with suffix
            (see :func:`_unique_ids`); :func:`write_manifest` gives them out again when it replaces a
            manifest, keeping the ids the old one gave.
        carried: ``item_id`` -> the fields :func:`write_manifest` kept from the manifest it replaces
            (fields added there by hand); one that no longer validates is dropped, not the item.
        video_views: ``video`` -> the view it is, for the items a ``view`` group made (the main view of
            an item with views, the only view of one written as a single-view item): the view whose
            reference is the item's.
    """

    root: Path
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instruction_sources: dict[str, str] = field(default_factory=dict)
    reference_count: int = 0
    absolute_paths: int = 0
    id_choices: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)
    carried: dict[str, list[str]] = field(default_factory=dict, repr=False)
    video_views: dict[str, str] = field(default_factory=dict, repr=False)

    def counts(self) -> dict[str, Any]:
        """Items, generators (with their item counts), clips, instructions and references found."""
        return {
            "items": len(self.items),
            "generators": dict(Counter(str(it.get("generator", "(none)")) for it in self.items)),
            "clips": len({it["clip_id"] for it in self.items if "clip_id" in it}),
            "with_instruction": sum("instruction" in it for it in self.items),
            "with_reference": sum("reference_video" in it for it in self.items),
            "with_views": sum("views" in it for it in self.items),
            "with_grid": sum("grid" in it for it in self.items),
            "references": self.reference_count,
            "skipped": len(self.skipped),
        }


def scan_folder(
    root: str | Path,
    *,
    pattern: str | None = None,
    instructions: str | Path | None = None,
    references: str | Path | None = None,
    reference_pattern: str | None = None,
    labels: str | Path | None = None,
    main_view: str | None = None,
    frame_folders: bool = False,
    fields: Mapping[str, str] | None = None,
    previous: str | Path | None = None,
    grid: Grid | Mapping[str, Any] | None = None,
) -> ScanResult:
    """Manifest records for every video under ``root``.

    Args:
        root: The folder to scan (recursively, following links to folders; hidden files and folders
            are skipped; a folder reached twice is scanned once).
        pattern: A regular expression matched against each video's path under ``root``, POSIX, without
            its suffix (``modelA/task1/ep07``); its named groups (:data:`PATTERN_FIELDS`) set those
            fields. Default: the first folder is the ``generator`` (none for a video directly in
            ``root``), the rest the ``clip_id``. A video it does not match is skipped and listed.
            Clip ids are composed (Unicode NFC), so one clip is one whatever the form of its folder
            names (macOS writes them decomposed); item ids and generators keep the path's spelling.
            The item id is that path, with the suffix where two videos would share it (``ep01.mp4``,
            ``ep01.webm``); a video whose path holds a control character is left out and noted.
            Videos whose paths differ only in the ``view`` group are one item with ``views``; its id
            is the path without the view (``wan/ep07_cam0`` -> ``wan/ep07``).
        instructions: A table (.csv, .jsonl, .json, .parquet) of rows with ``instruction`` and one
            key: ``item_id``, ``clip_id`` (every generator's video of that clip) or ``video`` (the path
            under ``root``, with or without suffix); or a .json object mapping such keys to
            instructions. Keys find the videos whether their characters are composed (NFC) or not. A
            row for the item wins over a row for its clip, and a table over a ``.txt`` file beside the
            video (same name, ``.txt`` suffix in any case, UTF-8), which is read otherwise. Two rows
            for one item (or one clip) that disagree are an error.
        references: A folder of reference (real) episodes, each keyed by its path under the folder
            without suffix: the one keyed by an item's ``clip_id`` becomes the item's
            ``reference_video``, else the only one keyed by the clip's last name (``ep07``). Videos of
            a reference folder inside ``root`` are not items.
        reference_pattern: A regular expression for the references' paths (as ``pattern``) whose
            ``clip_id`` group is the key instead; a video it does not match is not a reference.
            Needed when the references folder is ``root`` itself (``droid_real_(?P<clip_id>.+)``);
            videos taken as references are not items. A ``view`` group names the camera a reference
            shows: an item made from a ``view`` group then takes its clip's reference of its main view
            (none, with a note, when its clip has references of other views only).
        labels: A table of ratings, one row per video keyed by ``item_id`` or ``video``, its columns
            the label fields bare (``pa``, ``ia``, ``overall``, ``evidence``, ``rater``, the
            checklist items) or as a manifest writes them (``labels.pa``,
            ``labels.checklist.goal_completion``); checked as a manifest's labels are. A manifest
            holds one set of labels per item, so a second row for an item is an error. Written over
            a manifest (:func:`write_manifest`), they are merged field by field into its labels.
        main_view: With a ``view`` group: the view that is the item's ``video`` (default: the first
            name in sorted order); an item without it is left out and noted, a name no item has is
            an error. With ``grid``: the named cell that is the main view (default: the first).
        frame_folders: Read a folder holding images and no video as one video (a frame folder).
        fields: Values for every item (``embodiment``, ``source``, ``regime``, ``task``,
            ``split``), and ``generator`` for videos the layout gives none.
        previous: A manifest this scan will replace (ignored if there is none): a video it lists keeps
            its item id there, so results stored under that id stay the video's; new videos get ids
            unique against those. :func:`write_manifest` does the same when it replaces a manifest.
        grid: The layout every video of the folder stitches its views in (the manifest's ``grid``
            field: ``rows``, ``cols`` and the cells' ``views``; :func:`parse_grid` reads it from
            ``--grid`` and ``--grid-views``): each item gets it. Not with a ``view`` group, whose views
            are files of their own.

    Raises:
        ValueError: ``root`` or ``references`` is not a folder (or is ``root`` without a
            ``reference_pattern``), a pattern does not compile or names another group, ``main_view``
            is no view found, a field is unknown or its value invalid, ``grid`` is malformed or given
            with a ``view`` group, or an instructions or labels table (or a ``.txt`` file) is broken or
            disagrees with itself (file and line named).
    """
    base = _folder(root, "folder to scan")
    refs_dir = _folder(references, "references folder") if references is not None else None
    regex = _compile(pattern)
    ref_regex = None
    if reference_pattern is not None:
        ref_regex = _compile(reference_pattern, ("clip_id", "view"), "reference pattern")
    if ref_regex is not None and "clip_id" not in ref_regex.groupindex:
        raise ValueError(f"reference pattern {reference_pattern!r} needs a group named clip_id")
    if refs_dir == base and reference_pattern is None:
        raise ValueError(
            f"the references folder is the scanned folder {base}; a reference pattern "
            "(--reference-pattern) tells the references from the generated videos"
        )
    given = _check_fields(fields or {})
    layout = _check_grid(grid, regex, main_view)
    result = ScanResult(root=base)

    refs: dict[Path, tuple[str, str | None]] = {}
    if refs_dir is not None:
        refs = _find_references(refs_dir, frame_folders, ref_regex, result)
    # A reference folder inside the scanned one holds no items, nor does a video taken as a reference.
    excluded = (
        [refs_dir] if refs_dir is not None and refs_dir != base and refs_dir.is_relative_to(base) else []
    )
    walked = _walk(base, frame_folders, excluded)
    result.notes.extend(walked.notes("scanned"))
    videos = [v for v in walked.videos if v not in refs]
    image_dirs = walked.image_dirs
    if image_dirs and not frame_folders:
        result.notes.append(
            f"{len(image_dirs)} folder(s) of images left out (first: {image_dirs[0]}); "
            "--frames reads each as one video"
        )
    sidecars = _rows(base, videos, regex, given, None if layout else main_view, result)
    if result.items and not any("generator" in row for row in result.items):
        no_group = pattern is not None and "generator" not in regex.groupindex
        where = ("the pattern has no generator group" if no_group
                 else f"the videos lie directly in {base}, not in a folder per generator")
        result.notes.append(
            f"no generator: {where}; give --generator NAME (one generator for all), or --pattern with a "
            "generator group"
        )
    if layout is not None:
        for row in result.items:
            row["grid"] = layout.model_dump()
            if main_view is not None:
                row["main_view"] = main_view
    kept: dict[str, str] = {}
    by_view: dict[str, str] = {}
    if previous is not None and Path(previous).is_file():
        kept, old_rows, unread = _previous(Path(previous))
        if unread is not None:
            result.notes.append(f"item ids not kept from {previous}, it cannot be read: {unread}")
        by_view = _ids_by_view(old_rows, Path(previous))
    _assign_ids(result, kept, by_view)
    rows = result.items
    if refs_dir is not None:
        _attach_references(rows, refs, result)
    index = _Index(rows, base)
    _attach_instructions(rows, index, instructions, sidecars, result)
    if labels is not None:
        _attach_labels(index, Path(labels), result)
    _note_missing_instructions(result)
    _note_unicode_twins(result)
    return result


def _note_unicode_twins(result: ScanResult) -> None:
    """Note items whose ids differ only in how their characters are composed (``é`` as one character
    or as ``e`` and an accent: names written on macOS and elsewhere): they are two items that look
    alike in every table."""
    by_form: dict[str, list[str]] = {}
    for row in result.items:
        by_form.setdefault(unicodedata.normalize("NFC", row["item_id"]), []).append(row["item_id"])
    twins = [ids for ids in by_form.values() if len(ids) > 1]
    if twins:
        result.notes.append(
            f"{len(twins)} group(s) of items whose ids differ only in Unicode composition (first: "
            f"{', '.join(ascii(i) for i in twins[0])}): they look alike in every table; rename one of "
            "each to tell them apart")


_NO_INSTRUCTION = " item(s) have no instruction (first: "


def _note_missing_instructions(result: ScanResult) -> None:
    """Note (again, replacing an older count) the items without an instruction."""
    result.notes = [n for n in result.notes if _NO_INSTRUCTION not in n]
    missing = [r["item_id"] for r in result.items if "instruction" not in r]
    if missing:
        result.notes.append(
            f"{len(missing)} of {len(result.items)}{_NO_INSTRUCTION}{missing[0]}); "
            "the IA judge and instruction metrics need one"
        )


def check_jsonl_name(out: str | Path) -> Path:
    """``out`` as a path, when its name says JSON Lines (``.jsonl``, ``.ndjson``): every manifest robojudge
    writes is JSON Lines, and a ``.csv`` or ``.parquet`` name would be read back in that format and fail.

    Raises:
        ValueError: Another suffix, naming the path.
    """
    target = Path(out)
    if target.suffix.lower() not in (".jsonl", ".ndjson"):
        raise ValueError(f"{target}: the manifest is written as JSONL; name it .jsonl")
    return target


_MANIFEST_SUFFIX = ".jsonl"
_NAME_HASH_DIGITS = 8


def default_manifest_name(folder: str | Path) -> str:
    """The file name ``robojudge suite scan`` gives the manifest of ``folder`` when no ``--out`` is given:
    the folder's own name (resolved, so ``.`` is the current folder's) with ``.jsonl``.

    A folder whose name leaves no room for the suffix within :data:`~robojudge._files.NAME_MAX` bytes (a
    folder named after a long prompt) gets the start of its name, ``-``, the first 8 hex digits of the
    SHA-256 of the whole name, and ``.jsonl``: the same folder gets the same name on every scan (so
    ``--force`` finds the manifest it replaces), and two long names that share a start get two names.

    >>> default_manifest_name("/data/videos")
    'videos.jsonl'
    >>> name = default_manifest_name("/data/" + " ".join(["pick up the red block"] * 12))
    >>> len(name.encode()), name[:21], name[-15:]
    (255, 'pick up the red block', '-12c370db.jsonl')
    """
    name = Path(folder).resolve().name
    if len(os.fsencode(name + _MANIFEST_SUFFIX)) <= NAME_MAX:
        return name + _MANIFEST_SUFFIX
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:_NAME_HASH_DIGITS]
    tail = f"-{digest}{_MANIFEST_SUFFIX}"
    room = NAME_MAX - len(tail)
    head = ""
    for char in name:  # whole characters only: a cut one would leave a byte that is no character
        if len(os.fsencode(head + char)) > room:
            break
        head += char
    return head + tail


def write_manifest(
    result: ScanResult, out: str | Path, *, force: bool = False, drop_labelled: bool = False
) -> list[ManifestProblem]:
    """Write ``result.items`` as a JSONL manifest and validate it.

    Paths inside the manifest's folder (``video``, ``reference_video``, ``views``) are written relative
    to it, so the two can move together; others are written absolute, and counted in
    ``result.absolute_paths`` (validation would warn that each leads outside the manifest's folder:
    those warnings are not returned, as the count says it).

    The file is written next to ``out`` and renamed over it only when it validates without errors. An
    item whose record does not validate (a file name no item id may have) is left out and noted in
    ``result.notes``; the others are written. When ``out`` is replaced, a video it lists keeps its item
    id there (as ``scan_folder(previous=out)`` does), so results stored under that id stay the video's,
    and an item it lists with ``labels`` is never left out while its video is there: ``out`` is then not
    replaced (the labels would be lost), unless ``drop_labelled`` says to (to narrow a labelled manifest
    on purpose, with ``--pattern`` or a subfolder), and a note counts the labelled items dropped.

    Returns:
        The validation's other warnings (no media is opened; ``robojudge suite validate`` does that).

    Raises:
        FileExistsError: ``out`` exists and ``force`` is false.
        ValueError: There is nothing to write, or ``out`` lists a labelled item whose video is still there
            and that the new manifest would leave out, without ``drop_labelled`` (``out`` is as it was).
        ManifestError: No record validates (nothing is left at ``out``).
    """
    target = check_jsonl_name(out)
    if target.exists() and not force:
        raise FileExistsError(f"{target} exists; pass force=True (--force) to replace it")
    if not result.items:
        why = "".join(f"; {n}" for n in result.notes)  # folders of images, other containers, unreadable
        raise ValueError(f"no videos found under {result.root}; nothing to write{why}")
    old_rows: dict[str, dict[str, Any]] = {}
    if target.exists():
        old_ids, old_rows, unread = _previous(target)
        if unread is not None:
            result.notes.append(f"item ids not kept from {target}, it cannot be read: {unread}")
        before = [row["item_id"] for row in result.items]
        _assign_ids(result, old_ids, _ids_by_view(old_rows, target))
        carried = _carry_over(result, old_rows, target)
        if carried or [row["item_id"] for row in result.items] != before:
            _note_missing_instructions(result)
    target.parent.mkdir(parents=True, exist_ok=True)
    here = target.parent.resolve()
    tmp = temp_beside(target, ".part.jsonl")

    def render() -> tuple[list[str], set[tuple[str, str]]]:
        absolute: set[tuple[str, str]] = set()  # (item_id, field) of the paths written absolute
        lines: list[str] = []
        for row in result.items:
            written, fields = _relative(row, here)
            absolute.update((row["item_id"], f) for f in fields)
            lines.append(json.dumps(written, ensure_ascii=False) + "\n")
        return lines, absolute

    lines, absolute = render()
    try:
        tmp.write_text("".join(lines), encoding="utf-8")
        problems = validate_manifest(tmp, media="none")
        if _drop_failing_carried(result, problems, target):  # a kept field costs itself, not its item
            lines, absolute = render()
            tmp.write_text("".join(lines), encoding="utf-8")
            problems = validate_manifest(tmp, media="none")
        errors = [p for p in problems if p.is_error]
        bad = {p.line for p in errors if p.line is not None}
        result_rows = list(result.items)  # in line order, before any is left out
        if errors and (len(bad) < len(errors) or len(bad) == len(lines)):
            raise ManifestError(errors)  # a file-wide problem, or no record is valid: nothing to write
        if bad:  # one odd file name costs its own item only
            first = errors[0]
            video = result.items[first.line - 1]["video"] if first.line is not None else "?"
            result.notes.append(
                f"{len(bad)} item(s) left out, their records do not validate (first: item "
                f"{first.item_id!r}, video {video}, field {first.field}: {first.message})"
            )
            dropped = {result.items[n - 1]["item_id"] for n in bad}
            result.items = [row for i, row in enumerate(result.items, 1) if i not in bad]
            _note_missing_instructions(result)
            absolute = {a for a in absolute if a[0] not in dropped}
            tmp.write_text("".join(x for i, x in enumerate(lines, 1) if i not in bad), encoding="utf-8")
            problems = validate_manifest(tmp, media="none")
        if old_rows:
            _refuse_losing_labels(result, old_rows, target, {
                os.path.normpath(result_rows[p.line - 1]["video"]): p for p in errors if p.line is not None
            } if bad else {}, drop=drop_labelled)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    result.absolute_paths = len(absolute)
    kept = [p for p in problems if (p.item_id, p.field) not in absolute]
    return [dataclasses.replace(p, file=str(target)) for p in kept]


def _refuse_losing_labels(result: ScanResult, previous: dict[str, dict[str, Any]], target: Path,
                          invalid: Mapping[str, ManifestProblem], *, drop: bool = False) -> None:
    """Refuse to replace ``target`` when an item it lists with ``labels`` would be left out while its video
    is still there: the ratings were entered by hand (or imported) and nothing else holds them. The scan
    left the video out (a name with control characters, a ``--pattern`` it does not match, a folder it
    did not scan) or its record no longer validates (``invalid``, by video path). With ``drop``, a note
    counts those items instead.

    Raises:
        ValueError: Naming the item, its video and why it is left out; nothing is written.
    """
    written = set(_matched_previous(result, previous, target).values())
    lost = [(video, data) for video, data in previous.items()
            if data.get("labels") and video not in written and os.path.lexists(video)]
    if not lost:
        return
    video, data = lost[0]
    problem = invalid.get(video)
    rel = os.path.relpath(video, result.root)
    keep = "scan with a folder and --pattern that take it in"
    if problem is not None:
        why = f"its record does not validate (field {problem.field}: {problem.message})"
        keep = "rename the video"
    elif rel in result.skipped:
        why = "the pattern does not match its path"
    elif unsafe_at(rel) is not None:
        why = "its path holds a control character or a bidirectional control"
        keep = "rename the video"
    elif rel == os.pardir or rel.startswith(os.pardir + os.sep):
        why = "it lies outside the scanned folder"
    else:
        why = "the scan made no item of it"
    more = f" and {len(lost) - 1} more" if len(lost) > 1 else ""
    if drop:
        result.notes.append(
            f"{len(lost)} labelled item(s) of {target} dropped with their labels, as --drop-labelled asked "
            f"(first: {data.get('item_id')!r}, {rel} in {result.root}: {why})"
        )
        return
    raise ValueError(
        f"{target}: not replaced, the new manifest would leave out item {data.get('item_id')!r}{more}, whose "
        f"labels it holds, while the video is still there ({rel} in {result.root}: {why}); to keep its "
        f"labels {keep}, or write the scan to another --out and copy the labels over; to drop "
        f"{'them' if len(lost) > 1 else 'it'} with {'their' if len(lost) > 1 else 'its'} labels, pass "
        "--drop-labelled (drop_labelled=True)"
    )


def _folder(path: str | Path, what: str) -> Path:
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(f"{what} {folder} does not exist (or is not a folder)")
    return folder.resolve()


def _compile(
    pattern: str | None, groups: tuple[str, ...] = PATTERN_FIELDS, what: str = "pattern"
) -> re.Pattern[str]:
    if pattern is None:
        return _DEFAULT_PATTERN
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{what} {pattern!r} does not compile: {exc}") from None
    unknown = sorted(set(regex.groupindex) - set(groups))
    if unknown:
        raise ValueError(f"{what} group(s) {', '.join(unknown)} name no field; use {', '.join(groups)}")
    return regex


def _check_fields(fields: Mapping[str, str]) -> dict[str, str]:
    allowed = ("generator", "embodiment", "source", "regime", "task", "split")
    out: dict[str, str] = {}
    for name, value in fields.items():
        if value is None:
            continue
        if name not in allowed:
            raise ValueError(f"field {name!r} cannot be set for every item; use {', '.join(allowed)}")
        if not str(value).strip():
            raise ValueError(f"field {name} is empty")
        if name == "embodiment" and value not in {e.value for e in Embodiment}:
            choices = ", ".join(e.value for e in Embodiment)
            raise ValueError(f"unknown embodiment {value!r}; expected one of {choices}")
        out[name] = str(value)
    return out


_GRID_LAYOUT = re.compile(r"\s*(\d+)\s*[xX\u00d7]\s*(\d+)\s*")
_EMPTY_CELL = ("", "null")


def parse_grid(layout: str, views: str | None) -> dict[str, Any]:
    """The manifest's ``grid`` field from ``suite scan --grid ROWSxCOLS --grid-views NAMES``.

    ``views`` names the cells row by row, separated by commas; ``null`` or nothing (``front,,wrist``)
    marks a cell that holds no view, and trailing cells may be left out, as in the manifest.

    >>> parse_grid("2x2", "front,left,right,null")
    {'rows': 2, 'cols': 2, 'views': ['front', 'left', 'right', None]}

    Raises:
        ValueError: The layout is not ``ROWSxCOLS``, ``views`` is missing, or the grid is malformed
            (more names than cells, a repeated name, no name at all), naming the options.
    """
    found = _GRID_LAYOUT.fullmatch(layout)
    if found is None:
        raise ValueError(f"--grid {layout!r}: expected ROWSxCOLS, such as 2x2 or 1x3")
    if views is None:
        raise ValueError(f"--grid {layout} needs --grid-views, the view name of each cell row by row "
                         "(such as front,left,right,wrist; null or nothing for an empty cell)")
    names = [name.strip() for name in views.split(",")]
    data = {"rows": int(found[1]), "cols": int(found[2]),
            "views": [None if name.lower() in _EMPTY_CELL else name for name in names]}
    return _valid_grid(data, f"--grid {layout} --grid-views {views}").model_dump()


def _valid_grid(data: Grid | Mapping[str, Any], what: str) -> Grid:
    if isinstance(data, Grid):
        return data
    try:
        return Grid.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        error["loc"] = ("grid", *error["loc"])  # as a manifest's field names it
        field_name, message = describe_error(error)
        where = "" if field_name == "grid" else f"field {field_name}: "  # a layout-wide message names it
        raise ValueError(f"{what}: {where}{message}") from None


def _check_grid(
    grid: Grid | Mapping[str, Any] | None, regex: re.Pattern[str], main_view: str | None
) -> Grid | None:
    """The layout every scanned item gets, checked against the pattern and ``main_view``.

    Raises:
        ValueError: A malformed layout, a pattern with a ``view`` group (views as files of their own), or
            a ``main_view`` that names no cell.
    """
    if grid is None:
        return None
    layout = _valid_grid(grid, "grid")
    if "view" in regex.groupindex:
        raise ValueError("--grid and a --pattern with a group named view both give views: a grid video holds "
                         "its views in one file, a view group names a file per view; use one of them")
    cells = list(layout.cells())
    if main_view is not None and main_view not in cells:
        raise ValueError(f"--main-view {main_view!r} is not a view of the grid (its views: "
                         f"{', '.join(cells)})")
    return layout


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _walk(base: Path, frame_folders: bool, excluded: list[Path]) -> _Walked:
    """Videos under ``base`` (files, and frame folders when asked) in path order, and what to note.

    Folders behind symbolic links are followed, but only after every real folder: a folder reached both
    ways is scanned once, under its real path, and one reached again (``loop -> ..``, two links to one
    folder) is not scanned again.
    """
    from robojudge.video import (  # loads PyAV: not when the suite package is imported
        IMAGE_SUFFIXES,
        is_animated_webp,
    )

    walked = _Walked()
    skip = {_identity(p) for p in excluded}
    seen = {_identity(base)}
    pending = [base]

    def unreadable(exc: OSError) -> None:
        walked.unreadable.append(f"{exc.filename}: {exc.strerror}")

    while pending:
        links: list[Path] = []
        for folder, dirs, files in os.walk(pending.pop(0), onerror=unreadable):  # links: see below
            here = Path(folder)
            kept: list[str] = []
            for name in sorted(dirs):
                path = here / name
                ident = _identity(path)
                if _hidden(name) or ident in skip:
                    continue
                if path.is_symlink():
                    links.append(path)
                elif ident in seen:
                    walked.twice.append(path.relative_to(base).as_posix())
                else:
                    seen.add(ident)
                    kept.append(name)
            dirs[:] = kept
            visible = [f for f in files if not _hidden(f)]
            found = [here / f for f in visible if Path(f).suffix.lower() in SCAN_SUFFIXES
                     or (Path(f).suffix.lower() == ".webp" and is_animated_webp(here / f))]
            walked.other_videos.extend((here / f).relative_to(base).as_posix() for f in visible
                                       if Path(f).suffix.lower() in OTHER_VIDEO_SUFFIXES)
            has_images = any(Path(f).suffix.lower() in IMAGE_SUFFIXES for f in visible)
            if has_images and not found and here != base:
                if frame_folders:
                    walked.videos.append(here)
                    dirs[:] = []  # a frame folder's own subfolders are not videos of the suite
                    continue
                walked.image_dirs.append(here.relative_to(base).as_posix())
            walked.videos.extend(found)
        for link in sorted(links):
            ident = _identity(link)
            if ident in seen:
                walked.twice.append(f"{link.relative_to(base).as_posix()} -> {os.readlink(link)}")
            else:
                seen.add(ident)
                pending.append(link)
    walked.videos.sort(key=lambda p: p.relative_to(base).as_posix())
    walked.image_dirs.sort()
    walked.twice.sort()
    walked.other_videos.sort()
    return walked


#: Suffixes of video containers the scan does not take (MPEG-TS is as often TypeScript; the others are
#: rare in generated outputs), counted in a note so that none is dropped without a word.
OTHER_VIDEO_SUFFIXES = frozenset({".ts", ".m2ts", ".mts", ".3gp", ".3g2", ".qt", ".vob", ".f4v", ".asf",
                                  ".mxf", ".y4m", ".divx", ".rm", ".rmvb", ".dv"})


def other_videos_note(paths: list[str], what: str = "scanned") -> str:
    """The note on files the scan left out that may be videos of another container."""
    suffixes = ", ".join(sorted({Path(p).suffix.lower() for p in paths}))
    return (f"{len(paths)} {what} file(s) of other video containers left out (first: {paths[0]}; "
            f"{suffixes}): the scan takes {', '.join(sorted(SCAN_SUFFIXES))} and animated .webp; "
            "name them in a manifest by hand (`robojudge suite validate --deep` checks that they decode) or "
            "convert them")


@dataclass
class _Walked:
    """What :func:`_walk` found: videos, folders of images, folders reached a second time (not scanned
    again), folders it could not read."""

    videos: list[Path] = field(default_factory=list)
    image_dirs: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    other_videos: list[str] = field(default_factory=list)

    def notes(self, what: str) -> list[str]:
        out = []
        if self.other_videos:
            out.append(other_videos_note(self.other_videos, what))
        if self.twice:
            out.append(
                f"{len(self.twice)} {what} folder(s) reached a second time through a symbolic link, "
                f"not scanned again (first: {self.twice[0]})"
            )
        if self.unreadable:
            first = self.unreadable[0]
            out.append(f"{len(self.unreadable)} {what} folder(s) cannot be read (first: {first})")
        return out


def _identity(path: Path) -> tuple[int, int] | None:
    """The folder or file a path leads to (device and inode, links followed); ``None`` if it cannot be
    read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _misread(name: str) -> bool:
    """Whether a name read from the file system is not the text its bytes stand for: bytes the
    file-system encoding cannot decode (kept as surrogates, which no manifest can hold), or UTF-8 bytes
    read through another encoding (a name made under a UTF-8 locale, read under ``LC_ALL=C`` or a
    Latin-1 one, which would put garbled names into the manifest)."""
    if name.isascii():
        return False
    raw = os.fsencode(name)
    if any("\udc80" <= ch <= "\udcff" for ch in name):
        return True
    if codecs.lookup(sys.getfilesystemencoding()).name == "utf-8":
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False  # a name in the locale's own encoding (Latin-1 bytes under a Latin-1 locale)
    return True


def _stem_path(path: Path, base: Path) -> str:
    """The path under ``base``, POSIX, without the suffix of a file (a frame folder keeps its name)."""
    rel = path.relative_to(base)
    return (rel if path.is_dir() else rel.with_suffix("")).as_posix()


def _without(stem: str, match: re.Match[str], group: str) -> str:
    """``stem`` with a group's text cut out and the separators around the cut merged: ``wan/ep07_cam0``
    -> ``wan/ep07``, ``wan/cam0/ep07`` -> ``wan/ep07``, ``ep07_cam0_wan`` -> ``ep07_wan``."""
    start, end = match.span(group)
    left, right = stem[:start], stem[end:]
    left_t, right_t = left.rstrip(_SEPARATORS), right.lstrip(_SEPARATORS)
    seps = left[len(left_t) :] + right[: len(right) - len(right_t)]
    sep = ("/" if "/" in seps else seps[:1]) if left_t and right_t else ""
    return left_t + sep + right_t


_SEPARATORS = "_-. /"


def _rows(
    base: Path,
    videos: list[Path],
    regex: re.Pattern[str],
    given: dict[str, str],
    main_view: str | None,
    result: ScanResult,
) -> dict[str, list[Path]]:
    """Fill ``result.items`` (without ids, see :func:`_assign_ids`); return for each item (by its
    ``video``) the ``.txt`` files that may hold its instruction, in order."""
    groups: dict[str, list[tuple[Path, str | None, re.Match[str]]]] = {}
    odd_names: list[str] = []
    misread: list[str] = []
    for video in videos:
        rel = video.relative_to(base).as_posix()
        if _misread(rel):  # before the control characters: read with the wrong encoding, it may show some
            misread.append(rel)
            continue
        if unsafe_at(rel) is not None:
            odd_names.append(rel)  # no item id may hold one, and printed they break lines
            continue
        stem = _stem_path(video, base)
        match = regex.fullmatch(stem)
        if match is None:
            result.skipped.append(rel)
            continue
        view = match.group("view") if "view" in regex.groupindex else None
        groups.setdefault(_without(stem, match, "view") if view else stem, []).append((video, view, match))
    if misread:
        encoding = sys.getfilesystemencoding()
        utf8 = codecs.lookup(encoding).name == "utf-8"
        why = ("their names are not UTF-8 (the manifest's encoding); rename them" if utf8 else
               f"their names are UTF-8, which the file-system encoding of this locale ({encoding}) cannot "
               f"read; {LOCALE_FIX}")
        first = os.fsencode(misread[0]).decode("utf-8", "replace")  # as a UTF-8 terminal would show it
        result.notes.append(f"{len(misread)} video(s) left out (first: {first!r}): {why}")
    if odd_names:
        result.notes.append(
            f"{len(odd_names)} video(s) left out, their names hold control characters or bidirectional "
            f"controls (first: {odd_names[0]!r}); rename them"
        )
    same = _same_files(videos, base)
    if same:
        result.notes.append(
            f"{len(same)} video(s) are the same file as another, through a link (first: {same[0]}): each "
            "is an item, so the clip is scored and counted twice; remove the link if it is not meant")
    _check_main_view(main_view, regex, groups)
    rows: list[dict[str, Any]] = []
    sidecars: dict[str, list[Path]] = {}
    problems: dict[str, list[str]] = {}
    written: dict[str, set[str]] = {}  # the views of each item written from a view group
    for key, members in groups.items():
        # A file without a view is an item of its own, even beside the views of another.
        for video, view, match in members:
            if view is None:
                row = _row(key, video, match, given)
                rows.append(row)
                result.id_choices[row["video"]] = (key, video.relative_to(base).as_posix())
                sidecars[row["video"]] = [_sidecar_base(video)]
        viewed = [m for m in members if m[1] is not None]
        if not viewed:
            continue
        views: dict[str, Path] = {}
        for video, view, _ in viewed:
            if view in views:
                problems.setdefault("have two files for one view, left out", []).append(key)
                break
            views[str(view)] = video
        else:
            main = main_view if main_view is not None else sorted(views)[0]
            if main not in views:
                problems.setdefault(f"have no view {main!r}, left out", []).append(key)
                continue
            match = next(m for v, _, m in viewed if v == views[main])
            row = _row(key, views[main], match, given)
            written[key] = set(views)
            result.video_views[row["video"]] = main
            if len(views) > 1:
                row["views"] = {name: str(views[name]) for name in sorted(views)}
                row["main_view"] = main
            else:
                problems.setdefault("have one view only, written as single-view items", []).append(key)
            rows.append(row)
            result.id_choices[row["video"]] = (key, key)
            sidecars[row["video"]] = [base / key, _sidecar_base(views[main])]
    for what, keys in problems.items():
        result.notes.append(f"{len(keys)} item(s) {what} (first: {keys[0]})")
    _note_view_names(groups, written, result)
    result.items = rows
    return sidecars


def _note_view_names(groups: Mapping[str, list[tuple[Path, str | None, Any]]],
                     written: Mapping[str, set[str]], result: ScanResult) -> None:
    """Note view names that differ only in case (``C`` and ``c`` are two views to every reader), and the
    items written with fewer views than others have (the multi-view metrics then read fewer views of them,
    and their means mix items of two and three views)."""
    first_in: dict[str, str] = {}  # view name -> the first item (group key) with it
    for key, members in groups.items():
        for _, view, _ in members:
            if view is not None:
                first_in.setdefault(view, key)
    by_case: dict[str, list[str]] = {}
    for view in sorted(first_in):
        by_case.setdefault(view.casefold(), []).append(view)
    twins = [names for names in by_case.values() if len(names) > 1]
    if twins:
        shown = "; ".join(f"{v!r} in {first_in[v]}" for v in twins[0])
        result.notes.append(
            f"{len(twins)} group(s) of view names differ only in case (first: {shown}): each is a view of "
            "its own, and an item with one spelling has no view of the other's; rename the files if they are "
            "one camera")
    every = set().union(*written.values()) if written else set()
    lacking = [(key, sorted(every - views)) for key, views in written.items() if every - views]
    if lacking:
        key, missing = lacking[0]
        result.notes.append(
            f"{len(lacking)} of {len(written)} item(s) made from views lack view(s) other items have (first: "
            f"{key}, without {', '.join(missing)}; views found: {', '.join(sorted(every))}): the multi-view "
            "metrics read fewer views of them")


def _same_files(videos: list[Path], base: Path) -> list[str]:
    """``"b/ep.mp4 = a/ep.mp4"`` for each video that is the file of an earlier one (a file link or a
    hard link; folders behind links are scanned once already)."""
    first: dict[tuple[int, int], Path] = {}
    out = []
    for video in videos:
        ident = _identity(video)
        if ident is None:
            continue
        seen = first.setdefault(ident, video)
        if seen != video:
            out.append(f"{video.relative_to(base).as_posix()} = {seen.relative_to(base).as_posix()}")
    return out


def _check_main_view(
    main_view: str | None, regex: re.Pattern[str], groups: dict[str, list[tuple[Path, str | None, Any]]]
) -> None:
    if main_view is None:
        return
    if "view" not in regex.groupindex:
        raise ValueError(f"--main-view {main_view!r} needs a --pattern with a group named view")
    found = sorted({view for members in groups.values() for _, view, _ in members if view is not None})
    if groups and main_view not in found:
        raise ValueError(
            f"--main-view {main_view!r} is not a view of any item (views found: {', '.join(found) or 'none'})"
        )


def _unique_ids(choices: list[tuple[str, str]], taken: set[str]) -> list[str]:
    """An id for each item, all distinct and none in ``taken``.

    Each item offers two: the short one (its path without suffix) and the full one (with it). An item
    takes the short one unless another item's id or a taken id is the same; then the full one. An id
    still shared after that (a views item's, which has no suffix) is kept by the first item in path
    order and given to the others with ``~2``, ``~3``...
    """
    full = [False] * len(choices)
    while True:  # each round moves items to their full ids only, so it ends
        ids = [c[1] if f else c[0] for c, f in zip(choices, full, strict=True)]
        counts = Counter(ids)
        moved = [
            i for i, (short, long) in enumerate(choices)
            if not full[i] and short != long and (counts[short] > 1 or short in taken)
        ]  # fmt: skip
        if not moved:
            break
        for i in moved:
            full[i] = True
    used = set(taken) | {name for name, n in counts.items() if n == 1}
    out: list[str] = []
    for name in ids:
        if counts[name] == 1 and name not in taken:
            out.append(name)
            continue
        if name in used:
            n = 2
            while f"{name}~{n}" in used:
                n += 1
            name = f"{name}~{n}"
        used.add(name)
        out.append(name)
    return out


def _assign_ids(
    result: ScanResult, kept: Mapping[str, str], by_view: Mapping[str, str] | None = None
) -> None:
    """Give every item its id: the one ``kept`` (a video path -> item id, from the manifest being
    replaced) gives its video, else a fresh one from :func:`_unique_ids`, unique against those kept.
    An id not claimed that way goes to an item whose main video was a view of that id's item
    (``by_view``, from :func:`_ids_by_view`): another ``--main-view`` keeps the ids. Items are sorted
    by id; ``instruction_sources`` follows; what differs from a fresh scan is noted."""
    items = result.items
    before: list[str] = [str(row.get("item_id")) for row in items]
    choices = [result.id_choices.get(row["video"]) or (row["item_id"], row["item_id"]) for row in items]
    old = [kept.get(os.path.normpath(row["video"])) for row in items]
    claimed: dict[str, int] = {}
    for i, name in enumerate(old):
        if name is not None:
            claimed.setdefault(name, i)
    for i, row in enumerate(items):
        name = (by_view or {}).get(os.path.normpath(row["video"]))
        if old[i] is None and name is not None and name not in claimed:
            old[i] = name
            claimed[name] = i
    keep = set(claimed.values())
    rest = [i for i in range(len(items)) if i not in keep]
    ids = dict(zip(rest, _unique_ids([choices[i] for i in rest], set(claimed)), strict=True))
    ids |= {i: name for name, i in claimed.items()}
    changed = [(str(old[i]), ids[i]) for i in rest if old[i] is not None]
    fresh = _unique_ids(choices, set())
    differ = [(ids[i], fresh[i]) for i in keep if ids[i] != fresh[i]]
    sources = dict(result.instruction_sources)
    result.instruction_sources = {}
    for i, row in enumerate(items):
        row["item_id"] = ids[i]
        source = sources.get(before[i])
        if source is not None:
            result.instruction_sources[ids[i]] = source
    items.sort(key=lambda r: r["item_id"])
    result.notes = [n for n in result.notes if not n.endswith(_ID_NOTES)]  # a second pass says it again
    if differ:
        result.notes.append(
            f"{len(differ)} item id(s) kept from the manifest being replaced, where a fresh scan names "
            f"them otherwise (first: {differ[0][0]!r}, fresh {differ[0][1]!r}){_ID_NOTES[0]}"
        )
    if changed:
        result.notes.append(
            f"{len(changed)} item id(s) of the manifest being replaced change, another video keeps them "
            f"(first: {changed[0][0]!r} is now {changed[0][1]!r}){_ID_NOTES[1]}"
        )


_ID_NOTES = (
    "; results stored under them stay the videos'",
    "; results stored under the old id are not this video's",
)


def _previous(manifest: Path) -> tuple[dict[str, str], dict[str, dict[str, Any]], str | None]:
    """Video path (absolute, normalised) -> item id, and -> the whole record, in an existing manifest;
    or why it cannot be read."""
    here = manifest.parent.resolve()
    found: dict[str, str] = {}
    rows: dict[str, dict[str, Any]] = {}
    try:
        for rec in iter_records(manifest, str(manifest)):
            data = rec.data or {}
            item_id, video = data.get("item_id"), data.get("video")
            if isinstance(item_id, str) and item_id and isinstance(video, str) and video:
                key = os.path.normpath(here / video)
                found.setdefault(key, item_id)
                rows.setdefault(key, data)
    except ManifestError as exc:
        return {}, {}, str(exc)
    return found, rows, None


def _ids_by_view(previous: Mapping[str, dict[str, Any]], manifest: Path) -> dict[str, str]:
    """Each file of the records ``previous`` (:func:`_previous`), views too -> its item id."""
    here = manifest.parent.resolve()
    out: dict[str, str] = {}
    for data in previous.values():
        for path in _view_paths(data, here):
            out.setdefault(path, str(data["item_id"]))
    return out


def _view_paths(row: Mapping[str, Any], here: Path | None = None) -> set[str]:
    """The row's files, main video and views, as normalised paths (relative ones taken from ``here``)."""
    paths = [row.get("video")]
    views = row.get("views")
    if isinstance(views, dict):
        paths.extend(views.values())
    return {os.path.normpath(here / p if here is not None else p) for p in paths if isinstance(p, str) and p}


def _matched_previous(
    result: ScanResult, previous: Mapping[str, dict[str, Any]], target: Path
) -> dict[str, str]:
    """Item id of each new row -> the key in ``previous`` (the old main video) of the record it replaces:
    the old record of the same item id when the two share a file (the main view changed, a view came or
    went), else the one of the same main video. An id alone is not enough: a new video may take the id
    of a deleted one, and must not take its labels."""
    here = target.parent.resolve()
    by_id: dict[str, str] = {}
    for key, data in previous.items():
        by_id.setdefault(str(data.get("item_id")), key)
    out: dict[str, str] = {}
    for row in result.items:
        same = by_id.get(row["item_id"])
        if same is not None and _view_paths(row) & _view_paths(previous[same], here):
            out[row["item_id"]] = same
        elif os.path.normpath(row["video"]) in previous:
            out[row["item_id"]] = os.path.normpath(row["video"])
    return out


def _drop_failing_carried(result: ScanResult, problems: list[ManifestProblem], target: Path) -> bool:
    """Take out of their items the fields kept from the replaced manifest that do not validate now (a
    reference moved away, an old grid beside newly scanned views), with a note; whether any was."""
    bad: dict[str, set[str]] = {}
    for p in problems:
        kept = result.carried.get(p.item_id or "", [])
        root = (p.field or "").split(".", 1)[0].split("[", 1)[0]
        if p.is_error and root in kept:
            bad.setdefault(str(p.item_id), set()).add(root)
    if not bad:
        return False
    for row in result.items:
        for key in bad.get(row["item_id"], ()):
            row.pop(key, None)
    first = next(iter(bad))
    why = next(p for p in problems if p.item_id == first and p.is_error)
    n = sum(map(len, bad.values()))
    result.notes.append(f"{n} field(s) of {len(bad)} item(s) kept from {target} left out, they no longer "
                        f"validate (first: item {first!r} field {why.field}: {why.message})")
    return True


def _carry_over(result: ScanResult, previous: dict[str, dict[str, Any]], target: Path) -> int:
    """Fields a user added to the manifest a rescan replaces (an instruction, labels, an embodiment, a
    state file...) are kept on the items of the same video: the scan cannot find them, and the rewrite
    lost them without a word. What the scan finds now (its regex's fields, sidecar instructions, a
    labels file) wins over the old record, labels field by field (:class:`_LabelMerge`); the old
    record's relative paths are relative to the same folder, so they are written as they were. Returns
    the number of items that kept a field."""
    carried: dict[str, int] = {}
    items = 0
    here = target.parent.resolve()

    def placed(value: Any) -> Any:
        # The paths the writer makes relative itself are given to it absolute, as the scan's own are.
        if isinstance(value, str) and value and not Path(value).is_absolute():
            return os.path.normpath(here / value)
        return value

    labels = _LabelMerge()
    matched = _matched_previous(result, previous, target)
    for row in result.items:
        key = matched.get(row["item_id"])
        old = previous[key] if key is not None else None
        if not old:
            continue
        if "labels" in row and "labels" in old:
            labels.merge(row, old["labels"])
        added = [k for k in old if k not in row]
        for k in added:
            value = old[k]
            if k == "reference_video":
                value = placed(value)
            elif k == "views" and isinstance(value, dict):
                value = {name: placed(v) for name, v in value.items()}
            row[k] = value
            carried[k] = carried.get(k, 0) + 1
        if added:
            result.carried[row["item_id"]] = added
        items += bool(added)
    if carried:
        fields = ", ".join(f"{k} ({n})" for k, n in sorted(carried.items()))
        result.notes.append(f"kept from {target}, where the scan finds no value: fields of {items} item(s) "
                            f"that were added to it ({fields})")
    result.notes.extend(labels.notes(target))
    return items + labels.items


class _LabelMerge:
    """Labels from ``--labels`` merged field by field into those of the manifest a rescan replaces: a
    table of PA ratings must not drop the IA, checklist or evidence a first pass (or a hand) gave the
    item. The table's value wins a field both give; a different value it replaces is counted."""

    def __init__(self) -> None:
        self.items = 0  # items that kept a label field of the old manifest
        self.kept: Counter[str] = Counter()
        self.replaced: Counter[str] = Counter()
        self.first: str | None = None  # the first replaced value, for the note
        self.invalid: list[str] = []  # items whose old labels do not validate

    def merge(self, row: dict[str, Any], old: Any) -> None:
        new = row["labels"]
        if not isinstance(old, dict) or not old:
            return
        try:  # as the table's are, so that "4" and 4 are one value
            old = Labels.model_validate(old).model_dump(mode="json", exclude_none=True)
        except ValidationError:  # an old value edited out of range: the table's labels alone
            self.invalid.append(row["item_id"])
            return
        merged: dict[str, Any] = dict(old)
        kept = [k for k in old if k not in new]
        replaced: list[tuple[str, Any, Any]] = []
        for key, value in new.items():
            if key == "checklist" and isinstance(old.get(key), dict):
                checklist = dict(old[key])
                kept += [f"checklist.{k}" for k in old[key] if k not in value]
                replaced += [(f"checklist.{k}", checklist[k], v) for k, v in value.items()
                             if k in checklist and checklist[k] != v]
                merged[key] = checklist | value
            else:
                if key in old and old[key] != value:
                    replaced.append((key, old[key], value))
                merged[key] = value
        row["labels"] = Labels.model_validate(merged).model_dump(mode="json", exclude_none=True)
        self.items += bool(kept)
        self.kept.update(kept)
        self.replaced.update(name for name, _, _ in replaced)
        if replaced and self.first is None:
            name, was, now = replaced[0]
            self.first = f"item {row['item_id']!r} {name} {was!r} -> {now!r}"

    def notes(self, target: Path) -> list[str]:
        said: list[str] = []
        if self.kept:
            fields = ", ".join(f"{k} ({n})" for k, n in sorted(self.kept.items()))
            said.append(f"labels of {self.items} item(s) merged field by field with those in {target}, "
                        f"the labels table giving no value for: {fields}")
        if self.replaced:
            fields = ", ".join(f"{k} ({n})" for k, n in sorted(self.replaced.items()))
            said.append(f"{sum(self.replaced.values())} label value(s) in {target} replaced by a different "
                        f"value from the labels table: {fields} (first: {self.first})")
        if self.invalid:
            said.append(f"labels of {len(self.invalid)} item(s) in {target} not merged, they do not "
                        f"validate; the labels table's alone are written (first: item {self.invalid[0]!r})")
        return said


def _row(item_id: str, video: Path, match: re.Match[str], given: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {"item_id": item_id, "video": str(video)}
    row.update({k: v for k, v in given.items() if k != "generator"})
    for name, value in match.groupdict().items():
        if value and name != "view":
            row[name] = _nfc(value) if name == "clip_id" else value
    if "generator" not in row and "generator" in given:
        row["generator"] = given["generator"]
    return row


def _sidecar_base(video: Path) -> Path:
    """Where the ``.txt`` beside a video is, less the ``.txt``: the file without its suffix (a frame
    folder: the folder itself)."""
    return video if video.is_dir() else video.with_suffix("")


class _TextFiles:
    """The ``.txt`` files of each folder by name without the suffix (in any case), each folder listed
    once."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, list[Path]]] = {}

    def at(self, stem: Path) -> list[Path]:
        folder = self._folders.get(stem.parent)
        if folder is None:
            folder = self._folders[stem.parent] = {}
            try:
                names = sorted(os.listdir(stem.parent))
            except OSError:
                names = []
            for name in names:
                if name[-4:].lower() == ".txt" and (stem.parent / name).is_file():
                    folder.setdefault(name[:-4], []).append(stem.parent / name)
        return folder.get(stem.name, [])


def _read_sidecar(stem: Path, video: str, texts: _TextFiles) -> tuple[Path, str] | None:
    """The ``.txt`` file at ``stem`` (its suffix in any case) and its text, stripped; ``None`` if there
    is none.

    Raises:
        ValueError: Two such files (``ep.txt`` and ``ep.TXT``), or one that is not UTF-8.
    """
    found = texts.at(stem)
    if not found:
        return None
    if len(found) > 1:
        raise ValueError(f"{found[0]} and {found[1].name} are both instruction files of {video}; keep one")
    raw = found[0].read_bytes()
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(f"{found[0]}:{line}: not valid UTF-8 ({exc.reason}); save it as UTF-8") from None
    return found[0], text.strip()


def _find_references(
    refs_dir: Path, frame_folders: bool, regex: re.Pattern[str] | None, result: ScanResult
) -> dict[Path, tuple[str, str | None]]:
    """Reference video -> its clip key (its path under ``refs_dir`` without suffix, or the pattern's;
    composed, as clip ids are) and the view the pattern's ``view`` group names (None without one)."""
    walked = _walk(refs_dir, frame_folders, [])
    result.notes.extend(walked.notes("reference"))
    found: dict[Path, tuple[str, str | None]] = {}
    for ref in walked.videos:
        stem = _stem_path(ref, refs_dir)
        if regex is None:
            found[ref] = _nfc(stem), None
        elif (match := regex.fullmatch(stem)) is not None:
            found[ref] = _nfc(match.group("clip_id")), match.groupdict().get("view")
    return found


def _attach_references(
    rows: list[dict[str, Any]], refs: dict[Path, tuple[str, str | None]], result: ScanResult
) -> None:
    result.reference_count = len(refs)
    by_key: dict[str, list[Path]] = {}
    by_name: dict[str, list[Path]] = {}
    for ref, (key, _) in refs.items():
        by_key.setdefault(key, []).append(ref)
        by_name.setdefault(Path(key).name, []).append(ref)
    used: set[Path] = set()
    set_aside: set[Path] = set()  # references of an item's clip, of another view than its main view
    unmatched: list[str] = []
    ambiguous: list[str] = []
    other_views: list[tuple[str, str, list[str]]] = []  # (item, main view, views its clip's references show)
    unviewed: list[tuple[str, str]] = []  # (item with views, its main view): its reference names no view
    for row in rows:
        clip = row.get("clip_id")
        if clip is None:
            continue
        # The reference keyed by the clip itself, else the only one keyed by the clip's last name.
        candidates = by_key.get(clip) or by_name.get(Path(clip).name, [])
        view = result.video_views.get(row["video"])
        shown = sorted({v for c in candidates if (v := refs[c][1]) is not None})
        if view is not None and shown:
            # References that name their view: the item's is the one of the view its video is.
            set_aside.update(c for c in candidates if refs[c][1] not in (view, None))
            candidates = [c for c in candidates if refs[c][1] in (view, None)]
            if not candidates:
                other_views.append((row["item_id"], view, shown))
                continue
        if len(candidates) != 1:
            (ambiguous if candidates else unmatched).append(clip)
            continue
        row["reference_video"] = str(candidates[0])
        used.add(candidates[0])
        if "views" in row and view is not None and refs[candidates[0]][1] is None:
            unviewed.append((row["item_id"], view))
    for clips, what in ((unmatched, "have no reference video"), (ambiguous, "have several reference videos")):
        if clips:
            first = sorted(set(clips))
            result.notes.append(f"{len(first)} clip(s) {what}, none is taken (first: {first[0]})")
    if other_views:
        item, view, shown = other_views[0]
        result.notes.append(
            f"{len(other_views)} item(s) have references of their clip in other views only, none is taken "
            f"(first: {item}, main view {view!r}; its references show {', '.join(shown)})")
    if unviewed:
        item, view = unviewed[0]
        result.notes.append(
            f"{len(unviewed)} item(s) with views were given a reference video that names no view (first: "
            f"{item}, main view {view!r}): the metrics take it to show the main view, as they take the state "
            "file's view; a --reference-pattern with a group named view matches each item to the reference "
            "of its main view")
    # A reference of a matched clip but of another view matched: it is only not needed (each item takes
    # the reference of its main view), which says nothing against the reference pattern.
    unused = sorted(str(r) for r in refs if r not in used and r not in set_aside)
    if unused:
        result.notes.append(f"{len(unused)} reference video(s) match no clip (first: {unused[0]})")
    spare = sorted(str(r) for r in set_aside - used)
    if spare:
        result.notes.append(f"{len(spare)} reference video(s) of a clip's other views than its items' main "
                            f"view are not used (first: {spare[0]})")


@dataclass
class _Entry:
    """One row of a side table: its key (and the column it came from), its other fields, where it is."""

    key: str
    column: str
    data: dict[str, Any]
    where: str
    columns: dict[str, None] = field(default_factory=dict)  # the table's


def _read_table(path: Path, what: str, key_columns: tuple[str, ...]) -> list[_Entry]:
    """The rows of a side table (.csv, .jsonl, .json list, .parquet), each with exactly one key.

    Raises:
        ValueError: The file is missing or unreadable, or a row is broken or has no single key
            (file and line named).
    """
    shown = str(path)
    if not path.is_file():
        raise ValueError(f"{what} file {path} does not exist")
    try:
        records: Iterable[Any] = list(iter_records(path, shown))
    except ManifestError as exc:
        raise ValueError(str(exc)) from None
    entries: list[_Entry] = []
    columns = _table_columns(path, records)
    for rec in records:
        where = f"{shown}:{rec.line}" if rec.line is not None else f"{shown}:row {rec.row}"
        if rec.problems or rec.data is None:
            raise ValueError(f"{where}: {rec.problems[0].message if rec.problems else 'unreadable'}")
        keys = [c for c in key_columns if rec.data.get(c) not in (None, "")]
        if not set(key_columns) & set(columns):  # a header problem, not this row's
            raise ValueError(
                f"{where}: no key column: the {what} table needs a column named "
                f"{', '.join(key_columns[:-1])} or {key_columns[-1]}; columns found: {_columns(columns)}"
            )
        if len(keys) != 1:
            raise ValueError(
                f"{where}: a row needs exactly one of {', '.join(key_columns)}; got {keys or 'none'}"
            )
        data = {k: v for k, v in rec.data.items() if k not in key_columns}
        entries.append(_Entry(str(rec.data[keys[0]]), keys[0], data, where, columns))
    return entries


def _table_columns(path: Path, records: Iterable[Any]) -> dict[str, None]:
    """A side table's columns, in order, as their rows' top-level fields (``labels.pa`` is ``labels``):
    a CSV file's header (its rows leave their empty cells out), else the fields of every row together."""
    if path.suffix.lower() == ".csv":
        try:
            with path.open(encoding="utf-8-sig", newline="") as f:
                header = next(csv.reader(f), [])
        except (OSError, UnicodeDecodeError, csv.Error):
            header = []
        return {name.strip().split(".")[0]: None for name in header if name.strip()}
    return {c: None for rec in records if rec.data is not None for c in rec.data}


def _columns(data: Mapping[str, Any]) -> str:
    return ", ".join(repr(c) for c in data) or "none"


class _Pairs(dict[str, Any]):
    """A JSON object that remembers its pairs, a repeated key's too."""

    pairs: list[tuple[str, Any]]


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    out = _Pairs(pairs)
    out.pairs = pairs
    return out


def _read_instructions(path: Path) -> list[_Entry]:
    if path.suffix.lower() == ".json" and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=_pairs)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        except RecursionError:
            raise ValueError(f"{path}: not valid JSON (nested too deeply)") from None
        if isinstance(data, _Pairs) and "items" not in data:
            repeated = [k for k, v in data.pairs if data[k] != v]
            if repeated:
                raise ValueError(f"{path}: key {repeated[0]!r} is given twice, with different instructions")
            bad = [k for k, v in data.items() if not isinstance(v, str)]
            if bad:
                raise ValueError(f"{path}: key {bad[0]!r}: the instruction is not a string")
            return [
                _Entry(str(k), "", {"instruction": v.strip()}, f"{path}: key {k!r}") for k, v in data.items()
            ]
    entries = _read_table(path, "instructions", _KEY_COLUMNS)
    if entries and "instruction" not in entries[0].columns:  # a header problem: `video,prompt`
        raise ValueError(f"{entries[0].where}: no instruction column: an instructions table needs one beside "
                         f"its key; columns found: {_columns(entries[0].columns)}")
    for entry in entries:
        text = entry.data.get("instruction")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{entry.where}: field instruction: missing or empty")
        entry.data["instruction"] = text.strip()
    return entries


def _nfc(name: str) -> str:
    """``name`` composed (NFC): ``é`` as one character, not as ``e`` and an accent. macOS writes file
    names decomposed (NFD), while a name typed into a table is composed, so the scan compares them so."""
    return unicodedata.normalize("NFC", name)


class _Names:
    """Rows by a name compared on its composed form (``café`` in a table finds a video ``cafe\u0301``);
    where two rows' names differ only in composition, a name finds the row it spells exactly."""

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}

    def add(self, name: str, row: dict[str, Any]) -> None:
        """Add ``row`` under ``name``, unless a row has that very name already."""
        self._rows.setdefault(_nfc(name), {}).setdefault(name, row)

    def get(self, name: str) -> dict[str, Any] | None:
        found = self._rows.get(_nfc(name), {})
        if name in found:
            return found[name]
        return next(iter(found.values())) if len(found) == 1 else None


class _Index:
    """The scanned rows by item id, by video path under the root (with and without suffix), by clip; a
    table's key finds them whether its characters are composed or not (:class:`_Names`)."""

    def __init__(self, rows: list[dict[str, Any]], base: Path) -> None:
        self.base = base
        #: A video path as a key gives it, for the note on keys that match nothing.
        self.example = Path(rows[0]["video"]).relative_to(base).as_posix() if rows else None
        self.by_item = _Names()
        self.by_video = _Names()
        self.by_clip: dict[str, list[dict[str, Any]]] = {}  # the scan's clip ids are composed
        stems: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            self.by_item.add(r["item_id"], r)
            self.by_video.add(Path(r["video"]).relative_to(base).as_posix(), r)
            stems.setdefault(_stem_path(Path(r["video"]), base), []).append(r)
            if "clip_id" in r:
                self.by_clip.setdefault(_nfc(r["clip_id"]), []).append(r)
        # A path without suffix that two videos share (ep01.mp4, ep01.webm) names neither.
        self.shared = {_nfc(stem): found for stem, found in stems.items() if len(found) > 1}
        for stem, found in stems.items():
            if len(found) == 1:
                self.by_video.add(stem, found[0])

    def under_base(self, key: str, table_dir: Path | None) -> list[str]:
        """``key`` as paths under the scanned folder, POSIX, where it is one read as an absolute path, from
        ``table_dir`` (the table's folder) or from the current folder, in that order: the paths a manifest
        writes (``videos/output.mp4``, relative to the manifest) and absolute ones."""
        path = Path(key).expanduser()
        tries = [path] if path.is_absolute() else [
            *([table_dir / path] if table_dir is not None else []), Path.cwd() / path]
        found: list[str] = []
        for tried in tries:
            for full in (Path(os.path.abspath(tried)), tried.resolve()):  # a link's own path, then its target
                if full.is_relative_to(self.base) and full != self.base:
                    found.append(full.relative_to(self.base).as_posix())
        return found

    def find(self, entry: _Entry, table_dir: Path | None = None) -> tuple[list[dict[str, Any]], bool]:
        """The rows an entry's key names, and whether it names them as a clip (else as items); a key
        without a column (a JSON object's) is read as an item id, then a video path under the scanned
        folder, then a clip id, then a path from elsewhere. A video path is first read under the scanned
        folder, then as an absolute path, a path from
        ``table_dir`` or from the current folder (:meth:`under_base`), the first that names a video.

        Raises:
            ValueError: The key is a video path without suffix that names several videos.
        """
        if entry.column == "item_id":
            one = self.by_item.get(entry.key)
            return ([one] if one is not None else []), False
        if entry.column == "clip_id":
            return self.by_clip.get(_nfc(entry.key), []), True
        key = entry.key.strip("/") if entry.column == "video" else entry.key
        one = self.by_item.get(key) if entry.column == "" else None
        one = one or self.by_video.get(key)
        clip = self.by_clip.get(_nfc(key)) if entry.column == "" and _nfc(key) not in self.shared else None
        if one is None and clip:
            return clip, True  # a clip id before a path from elsewhere: every generator's
        if one is None and _nfc(key) not in self.shared and entry.column in ("video", ""):
            # The first reading that names a video: one merely under the scanned folder (a key read from
            # the current folder inside another generator's, a clip id read as a path) names nothing, and
            # the key stays as given for the clip ids below.
            for under in self.under_base(entry.key, table_dir):
                one = self.by_video.get(under)
                if one is not None or _nfc(under) in self.shared:  # (several videos: refused below)
                    key = under
                    break
        if one is None and _nfc(key) in self.shared:
            names = ", ".join(Path(r["video"]).name for r in self.shared[_nfc(key)])
            raise ValueError(f"{entry.where}: video {key!r} names several videos ({names}); give the suffix")
        if one is not None or entry.column == "video":
            return ([one] if one is not None else []), False
        return self.by_clip.get(_nfc(key), []), True


def _no_match(what: str, unmatched: list[_Entry], index: _Index, keys: str) -> str:
    """The note on a table's rows that match no video: the first, its key, and what a key may be."""
    first = unmatched[0]
    example = f", e.g. {index.example!r}" if index.example else ""
    return (f"{what} match no video (first: {first.where}, {first.column or 'key'} {first.key!r}); a key is "
            f"{keys} (under {index.base}{example}; or from the current folder, from the table's folder, or "
            "absolute)")


def _attach_instructions(
    rows: list[dict[str, Any]],
    index: _Index,
    instructions: str | Path | None,
    sidecars: dict[str, list[Path]],
    result: ScanResult,
) -> None:
    texts = _TextFiles()
    for row in rows:  # a .txt beside the video: the first that holds text
        for stem in sidecars.get(row["video"], []):
            found = _read_sidecar(stem, row["video"], texts)
            if found is not None and found[1]:
                row["instruction"] = found[1]
                result.instruction_sources[row["item_id"]] = str(found[0])
                break
    if instructions is None:
        return
    # A row for the item itself wins over a row for its clip; two rows of one kind must agree.
    chosen: dict[tuple[str, bool], _Entry] = {}  # (item_id, by clip) -> the row
    unmatched: list[_Entry] = []
    for entry in _read_instructions(Path(instructions)):
        targets, by_clip = index.find(entry, Path(instructions).parent)
        if not targets:
            unmatched.append(entry)
        text = entry.data["instruction"]
        for row in targets:
            before = chosen.setdefault((row["item_id"], by_clip), entry)
            if before.data["instruction"] != text:
                who = f"clip {row['clip_id']!r}" if by_clip else f"item {row['item_id']!r}"
                raise ValueError(
                    f"{entry.where}: {who} already has an instruction from {before.where} "
                    f"({before.data['instruction']!r}, here {text!r}); rows for one item or one clip "
                    "must agree"
                )
    for row in rows:
        won = chosen.get((row["item_id"], False)) or chosen.get((row["item_id"], True))
        if won is not None:
            row["instruction"] = won.data["instruction"]
            result.instruction_sources[row["item_id"]] = won.where
    if unmatched:
        result.notes.append(_no_match(f"{len(unmatched)} instruction(s)", unmatched, index,
                                      "an item id, a clip id or a video path"))


_LABEL_COLUMNS = ("pa", "ia", "overall", "evidence", "rater")


def _label_fields(entry: _Entry) -> dict[str, Any]:
    """An entry's label fields, as bare columns (``pa``, ``goal_completion``) or as the manifest
    writes them (``labels.pa``, ``labels.checklist.goal_completion``), validated."""
    raw = entry.data
    fields: dict[str, Any] = dict(raw.pop("labels", None) or {})
    checklist: dict[str, Any] = dict(fields.pop("checklist", None) or {})
    for name, value in raw.items():
        if value in (None, ""):
            continue
        if name in _LABEL_COLUMNS:
            target = fields
        elif name in CHECKLIST_ITEMS:
            target = checklist
        else:
            raise ValueError(
                f"{entry.where}: unknown column {name!r}; expected {', '.join(_LABEL_COLUMNS)}, the "
                "checklist items, or labels.* columns as in a manifest"
            )
        if name in target:
            raise ValueError(f"{entry.where}: {name} is given twice")
        target[name] = value
    if checklist:
        fields["checklist"] = checklist
    if not fields:
        raise ValueError(f"{entry.where}: the row holds no label")
    try:
        labels = Labels.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        error["loc"] = ("labels", *error["loc"])  # as in a manifest, whose messages know its ranges
        field_name, message = describe_error(error)
        raise ValueError(f"{entry.where}: field {field_name}: {message}") from None
    return labels.model_dump(mode="json", exclude_none=True)


def _attach_labels(index: _Index, path: Path, result: ScanResult) -> None:
    given: dict[str, str] = {}
    unmatched: list[_Entry] = []
    for entry in _read_table(path, "labels", ("item_id", "video")):
        labels = _label_fields(entry)
        targets, _ = index.find(entry, path.parent)
        if not targets:
            unmatched.append(entry)
            continue
        row = targets[0]
        if row["item_id"] in given:
            raise ValueError(
                f"{entry.where}: item {row['item_id']!r} already has labels from {given[row['item_id']]}; "
                "a manifest holds one set of labels per item (adjudicate the raters first)"
            )
        given[row["item_id"]] = entry.where
        row["labels"] = labels
    if unmatched:
        result.notes.append(_no_match(f"{len(unmatched)} label row(s)", unmatched, index,
                                      "an item id or a video path"))


_ORDER = ("item_id", "video", "instruction", "reference_video", "generator", "clip_id")


def _relative(row: dict[str, Any], here: Path) -> tuple[dict[str, Any], list[str]]:
    """The row in a readable field order with its paths under the manifest's folder ``here`` made
    relative to it, and the (dotted) fields whose paths stay absolute."""
    out = {k: row[k] for k in _ORDER if k in row}
    out |= {k: v for k, v in row.items() if k not in _ORDER and k != "labels"}
    if "labels" in row:
        out["labels"] = row["labels"]
    absolute: list[str] = []

    def place(value: str, field: str) -> str:
        path = Path(value)
        if path.is_relative_to(here):
            return path.relative_to(here).as_posix()
        absolute.append(field)  # '../../../data/x.mp4' would help nobody
        return value

    for key in ("video", "reference_video"):
        if key in out:
            out[key] = place(out[key], key)
    if "views" in out:
        out["views"] = {name: place(path, f"views.{name}") for name, path in out["views"].items()}
    return out, absolute
