"""A manifest from a folder of videos, without renaming anything: ``robojudge suite scan``.

The folder is read as ``ROOT/<generator>/<clip>.<suffix>``: the first folder under ``ROOT`` names the
generator, the rest of the path (without its suffix) names the clip, so the same clip made by two
generators is one cluster of the paired bootstrap. ``pattern`` replaces that rule with a regular
expression whose named groups give the fields. Instructions come from a ``.txt`` file beside each
video or from a table keyed by item, clip or video path; reference episodes from a second folder,
matched by clip. See docs/manifest.md, "A manifest from a folder".
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from robojudge.suite._check import describe_error
from robojudge.suite._load import validate_manifest
from robojudge.suite._problems import ManifestError, ManifestProblem
from robojudge.suite._read import SCAN_SUFFIXES, iter_records
from robojudge.suite._schema import CHECKLIST_ITEMS, Embodiment, Labels

__all__ = ["PATTERN_FIELDS", "SCAN_SUFFIXES", "ScanResult", "scan_folder", "write_manifest"]


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
    """

    root: Path
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instruction_sources: dict[str, str] = field(default_factory=dict)
    reference_count: int = 0
    absolute_paths: int = 0

    def counts(self) -> dict[str, Any]:
        """Items, generators (with their item counts), clips, instructions and references found."""
        return {
            "items": len(self.items),
            "generators": dict(Counter(str(it.get("generator", "(none)")) for it in self.items)),
            "clips": len({it["clip_id"] for it in self.items if "clip_id" in it}),
            "with_instruction": sum("instruction" in it for it in self.items),
            "with_reference": sum("reference_video" in it for it in self.items),
            "with_views": sum("views" in it for it in self.items),
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
) -> ScanResult:
    """Manifest records for every video under ``root``.

    Args:
        root: The folder to scan (recursively; hidden files and folders are skipped).
        pattern: A regular expression matched against each video's path under ``root``, POSIX, without
            its suffix (``modelA/task1/ep07``); its named groups (:data:`PATTERN_FIELDS`) set those
            fields. Default: the first folder is the ``generator`` (none for a video directly in
            ``root``), the rest the ``clip_id``. A video it does not match is skipped and listed.
            Videos whose paths differ only in the ``view`` group are one item with ``views``; its id
            is the path without the view (``wan/ep07_cam0`` -> ``wan/ep07``).
        instructions: A table (.csv, .jsonl, .json, .parquet) of rows with ``instruction`` and one
            key: ``item_id``, ``clip_id`` (every generator's video of that clip) or ``video`` (the path
            under ``root``, with or without suffix); or a .json object mapping such keys to
            instructions. A row for the item wins over a row for its clip, and a table over a
            ``.txt`` file beside the video (same name, ``.txt`` suffix), which is read otherwise.
        references: A folder of reference (real) episodes, each keyed by its path under the folder
            without suffix: the one keyed by an item's ``clip_id`` becomes the item's
            ``reference_video``, else the only one keyed by the clip's last name (``ep07``). Videos of
            a reference folder inside ``root`` are not items.
        reference_pattern: A regular expression for the references' paths (as ``pattern``) whose
            ``clip_id`` group is the key instead; a video it does not match is not a reference.
            Needed when the references folder is ``root`` itself (``droid_real_(?P<clip_id>.+)``);
            videos taken as references are not items.
        labels: A table of ratings, one row per video keyed by ``item_id`` or ``video``, its columns
            the label fields bare (``pa``, ``ia``, ``overall``, ``evidence``, ``rater``, the
            checklist items) or as a manifest writes them (``labels.pa``,
            ``labels.checklist.goal_completion``); checked as a manifest's labels are. A manifest
            holds one set of labels per item, so a second row for an item is an error.
        main_view: With a ``view`` group: the view that is the item's ``video`` (default: the first
            name in sorted order); an item without it is left out and noted.
        frame_folders: Read a folder holding images and no video as one video (a frame folder).
        fields: Values for every item (``embodiment``, ``source``, ``regime``, ``task``,
            ``split``), and ``generator`` for videos the layout gives none.

    Raises:
        ValueError: ``root`` or ``references`` is not a folder (or is ``root`` without a
            ``reference_pattern``), a pattern does not compile or names another group, a field is
            unknown or its value invalid, or an instructions or labels table is broken (file and
            line named).
    """
    base = _folder(root, "folder to scan")
    refs_dir = _folder(references, "references folder") if references is not None else None
    regex = _compile(pattern)
    ref_regex = None
    if reference_pattern is not None:
        ref_regex = _compile(reference_pattern, ("clip_id",), "reference pattern")
    if ref_regex is not None and "clip_id" not in ref_regex.groupindex:
        raise ValueError(f"reference pattern {reference_pattern!r} needs a group named clip_id")
    if refs_dir == base and reference_pattern is None:
        raise ValueError(
            f"the references folder is the scanned folder {base}; a reference pattern "
            "(--reference-pattern) tells the references from the generated videos"
        )
    given = _check_fields(fields or {})
    result = ScanResult(root=base)

    refs: dict[Path, str] = {}
    if refs_dir is not None:
        refs = _find_references(refs_dir, frame_folders, ref_regex)
    # A reference folder inside the scanned one holds no items, nor does a video taken as a reference.
    excluded = (
        [refs_dir] if refs_dir is not None and refs_dir != base and refs_dir.is_relative_to(base) else []
    )
    videos, image_dirs = _walk(base, frame_folders, excluded)
    videos = [v for v in videos if v not in refs]
    if image_dirs and not frame_folders:
        result.notes.append(
            f"{len(image_dirs)} folder(s) of images left out (first: {image_dirs[0]}); "
            "--frames reads each as one video"
        )
    rows, sidecars = _rows(base, videos, regex, given, main_view, result)
    result.items = rows
    if refs_dir is not None:
        _attach_references(rows, refs, result)
    index = _Index(rows, base)
    _attach_instructions(rows, index, instructions, sidecars, result)
    if labels is not None:
        _attach_labels(index, Path(labels), result)
    missing = [r["item_id"] for r in rows if "instruction" not in r]
    if missing and rows:
        result.notes.append(
            f"{len(missing)} of {len(rows)} item(s) have no instruction (first: {missing[0]}); "
            "the IA judge and instruction metrics need one"
        )
    return result


def write_manifest(result: ScanResult, out: str | Path, *, force: bool = False) -> list[ManifestProblem]:
    """Write ``result.items`` as a JSONL manifest and validate it.

    Paths inside the manifest's folder (``video``, ``reference_video``, ``views``) are written relative
    to it, so the two can move together; others are written absolute, and counted in
    ``result.absolute_paths`` (validation would warn that each leads outside the manifest's folder:
    those warnings are not returned, as the count says it).

    The file is written next to ``out`` and renamed over it only when it validates without errors. An
    item whose record does not validate (a file name no item id may have) is left out and noted in
    ``result.notes``; the others are written.

    Returns:
        The validation's other warnings (no media is opened; ``robojudge suite validate`` does that).

    Raises:
        FileExistsError: ``out`` exists and ``force`` is false.
        ValueError: There is nothing to write.
        ManifestError: No record validates (nothing is left at ``out``).
    """
    target = Path(out)
    if target.suffix.lower() not in (".jsonl", ".ndjson"):
        raise ValueError(f"{target}: the manifest is written as JSONL; name it .jsonl")
    if target.exists() and not force:
        raise FileExistsError(f"{target} exists; pass force=True (--force) to replace it")
    if not result.items:
        raise ValueError(f"no videos found under {result.root}; nothing to write")
    target.parent.mkdir(parents=True, exist_ok=True)
    here = target.parent.resolve()
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part.jsonl")
    absolute: set[tuple[str, str]] = set()  # (item_id, field) of the paths written absolute
    lines: list[str] = []
    for row in result.items:
        written, fields = _relative(row, here)
        absolute.update((row["item_id"], f) for f in fields)
        lines.append(json.dumps(written, ensure_ascii=False) + "\n")
    try:
        tmp.write_text("".join(lines), encoding="utf-8")
        problems = validate_manifest(tmp, media="none")
        errors = [p for p in problems if p.is_error]
        bad = {p.line for p in errors if p.line is not None}
        if errors and (len(bad) < len(errors) or len(bad) == len(lines)):
            raise ManifestError(errors)  # a file-wide problem, or no record is valid: nothing to write
        if bad:  # one odd file name costs its own item only
            first = errors[0]
            result.notes.append(
                f"{len(bad)} item(s) left out, their records do not validate (first: item "
                f"{first.item_id!r} field {first.field}: {first.message})"
            )
            dropped = {result.items[n - 1]["item_id"] for n in bad}
            result.items = [row for i, row in enumerate(result.items, 1) if i not in bad]
            absolute = {a for a in absolute if a[0] not in dropped}
            tmp.write_text("".join(x for i, x in enumerate(lines, 1) if i not in bad), encoding="utf-8")
            problems = validate_manifest(tmp, media="none")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    result.absolute_paths = len(absolute)
    kept = [p for p in problems if (p.item_id, p.field) not in absolute]
    return [dataclasses.replace(p, file=str(target)) for p in kept]


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


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _walk(base: Path, frame_folders: bool, excluded: list[Path]) -> tuple[list[Path], list[str]]:
    """Videos under ``base`` (files, and frame folders when asked) in path order; image folders seen."""
    from robojudge.video import IMAGE_SUFFIXES  # loads PyAV: not when the suite package is imported

    videos: list[Path] = []
    image_dirs: list[str] = []
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not _hidden(d) and here / d not in excluded)
        visible = [f for f in files if not _hidden(f)]
        found = [here / f for f in visible if Path(f).suffix.lower() in SCAN_SUFFIXES]
        has_images = any(Path(f).suffix.lower() in IMAGE_SUFFIXES for f in visible)
        if has_images and not found and here != base:
            if frame_folders:
                videos.append(here)
                dirs[:] = []  # a frame folder's own subfolders are not videos of the suite
                continue
            image_dirs.append(here.relative_to(base).as_posix())
        videos.extend(found)
    videos.sort(key=lambda p: p.relative_to(base).as_posix())
    return videos, image_dirs


def _stem_path(path: Path, base: Path) -> str:
    """The path under ``base``, POSIX, without the suffix of a file."""
    rel = path.relative_to(base)
    return (rel.with_suffix("") if path.is_file() else rel).as_posix()


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
) -> tuple[list[dict[str, Any]], dict[str, list[Path]]]:
    """The items, and for each the ``.txt`` files that may hold its instruction, in order."""
    groups: dict[str, list[tuple[Path, str | None, re.Match[str]]]] = {}
    for video in videos:
        stem = _stem_path(video, base)
        match = regex.fullmatch(stem)
        if match is None:
            result.skipped.append(video.relative_to(base).as_posix())
            continue
        view = match.group("view") if "view" in regex.groupindex else None
        groups.setdefault(_without(stem, match, "view") if view else stem, []).append((video, view, match))
    rows: list[dict[str, Any]] = []
    sidecars: dict[str, list[Path]] = {}
    problems: dict[str, list[str]] = {}
    for key, members in groups.items():
        viewed = [m for m in members if m[1] is not None]
        if not viewed:  # single-view files; two that differ only in their suffix keep it in their ids
            for video, _, match in members:
                item_id = key if len(members) == 1 else video.relative_to(base).as_posix()
                rows.append(_row(item_id, video, match, given))
                sidecars[item_id] = [_sidecar(video)]
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
            if len(views) > 1:
                row["views"] = {name: str(views[name]) for name in sorted(views)}
                row["main_view"] = main
            else:
                problems.setdefault("have one view only, written as single-view items", []).append(key)
            rows.append(row)
            sidecars[key] = [base / f"{key}.txt", _sidecar(views[main])]
    for what, keys in problems.items():
        result.notes.append(f"{len(keys)} item(s) {what} (first: {keys[0]})")
    rows.sort(key=lambda r: r["item_id"])
    return rows, sidecars


def _row(item_id: str, video: Path, match: re.Match[str], given: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {"item_id": item_id, "video": str(video)}
    row.update({k: v for k, v in given.items() if k != "generator"})
    for name, value in match.groupdict().items():
        if value and name != "view":
            row[name] = value
    if "generator" not in row and "generator" in given:
        row["generator"] = given["generator"]
    return row


def _sidecar(video: Path) -> Path:
    """The ``.txt`` beside a video file (beside a frame folder: the folder's name plus ``.txt``)."""
    return Path(f"{video}.txt") if video.is_dir() else video.with_suffix(".txt")


def _find_references(refs_dir: Path, frame_folders: bool, regex: re.Pattern[str] | None) -> dict[Path, str]:
    """Reference video -> its clip key: its path under ``refs_dir`` without suffix, or the pattern's."""
    refs, _ = _walk(refs_dir, frame_folders, [])
    found: dict[Path, str] = {}
    for ref in refs:
        stem = _stem_path(ref, refs_dir)
        if regex is None:
            found[ref] = stem
        elif (match := regex.fullmatch(stem)) is not None:
            found[ref] = match.group("clip_id")
    return found


def _attach_references(rows: list[dict[str, Any]], refs: dict[Path, str], result: ScanResult) -> None:
    result.reference_count = len(refs)
    by_key: dict[str, list[Path]] = {}
    by_name: dict[str, list[Path]] = {}
    for ref, key in refs.items():
        by_key.setdefault(key, []).append(ref)
        by_name.setdefault(Path(key).name, []).append(ref)
    used: set[Path] = set()
    unmatched: list[str] = []
    ambiguous: list[str] = []
    for row in rows:
        clip = row.get("clip_id")
        if clip is None:
            continue
        # The reference keyed by the clip itself, else the only one keyed by the clip's last name.
        candidates = by_key.get(clip) or by_name.get(Path(clip).name, [])
        if len(candidates) != 1:
            (ambiguous if candidates else unmatched).append(clip)
            continue
        row["reference_video"] = str(candidates[0])
        used.add(candidates[0])
    for clips, what in ((unmatched, "have no reference video"), (ambiguous, "have several reference videos")):
        if clips:
            first = sorted(set(clips))
            result.notes.append(f"{len(first)} clip(s) {what}, none is taken (first: {first[0]})")
    unused = sorted(str(r) for r in refs if r not in used)
    if unused:
        result.notes.append(f"{len(unused)} reference video(s) match no clip (first: {unused[0]})")


@dataclass
class _Entry:
    """One row of a side table: its key (and the column it came from), its other fields, where it is."""

    key: str
    column: str
    data: dict[str, Any]
    where: str


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
    for rec in records:
        where = f"{shown}:{rec.line}" if rec.line is not None else f"{shown}:row {rec.row}"
        if rec.problems or rec.data is None:
            raise ValueError(f"{where}: {rec.problems[0].message if rec.problems else 'unreadable'}")
        keys = [c for c in key_columns if rec.data.get(c) not in (None, "")]
        if len(keys) != 1:
            raise ValueError(
                f"{where}: a row needs exactly one of {', '.join(key_columns)}; got {keys or 'none'}"
            )
        data = {k: v for k, v in rec.data.items() if k not in key_columns}
        entries.append(_Entry(str(rec.data[keys[0]]), keys[0], data, where))
    return entries


def _read_instructions(path: Path) -> list[_Entry]:
    if path.suffix.lower() == ".json" and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
        if isinstance(data, dict) and "items" not in data:
            bad = [k for k, v in data.items() if not isinstance(v, str)]
            if bad:
                raise ValueError(f"{path}: key {bad[0]!r}: the instruction is not a string")
            return [_Entry(str(k), "", {"instruction": v}, f"{path}: key {k!r}") for k, v in data.items()]
    entries = _read_table(path, "instructions", _KEY_COLUMNS)
    for entry in entries:
        text = entry.data.get("instruction")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{entry.where}: field instruction: missing or empty")
        entry.data["instruction"] = text.strip()
    return entries


class _Index:
    """The scanned rows by item id, by video path under the root (with and without suffix), by clip."""

    def __init__(self, rows: list[dict[str, Any]], base: Path) -> None:
        self.by_item = {r["item_id"]: r for r in rows}
        self.by_video: dict[str, dict[str, Any]] = {}
        self.by_clip: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            self.by_video[Path(r["video"]).relative_to(base).as_posix()] = r
            self.by_video.setdefault(_stem_path(Path(r["video"]), base), r)
            if "clip_id" in r:
                self.by_clip.setdefault(r["clip_id"], []).append(r)

    def find(self, entry: _Entry) -> list[dict[str, Any]]:
        """The rows an entry's key names; a key without a column (a JSON object's) is read as an item
        id, then a video path, then a clip id."""
        if entry.column == "item_id":
            return [self.by_item[entry.key]] if entry.key in self.by_item else []
        if entry.column == "clip_id":
            return self.by_clip.get(entry.key, [])
        if entry.column == "video":
            hit = self.by_video.get(entry.key.strip("/"))
            return [hit] if hit is not None else []
        one = self.by_item.get(entry.key) or self.by_video.get(entry.key)
        return [one] if one is not None else self.by_clip.get(entry.key, [])


def _attach_instructions(
    rows: list[dict[str, Any]],
    index: _Index,
    instructions: str | Path | None,
    sidecars: dict[str, list[Path]],
    result: ScanResult,
) -> None:
    for row in rows:  # a .txt beside the video: the first that holds text
        for sidecar in sidecars.get(row["item_id"], []):
            text = sidecar.read_text(encoding="utf-8", errors="replace").strip() if sidecar.is_file() else ""
            if text:
                row["instruction"] = text
                result.instruction_sources[row["item_id"]] = str(sidecar)
                break
    if instructions is None:
        return
    # Clip rows first, so a row for the item itself (written after) wins.
    entries = sorted(_read_instructions(Path(instructions)), key=lambda e: e.column != "clip_id")
    unmatched: list[str] = []
    for entry in entries:
        targets = index.find(entry)
        if not targets:
            unmatched.append(entry.where)
        for row in targets:
            row["instruction"] = entry.data["instruction"]
            result.instruction_sources[row["item_id"]] = entry.where
    if unmatched:
        result.notes.append(f"{len(unmatched)} instruction(s) match no video (first: {unmatched[0]})")


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
    unmatched: list[str] = []
    for entry in _read_table(path, "labels", ("item_id", "video")):
        labels = _label_fields(entry)
        targets = index.find(entry)
        if not targets:
            unmatched.append(entry.where)
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
        result.notes.append(f"{len(unmatched)} label row(s) match no video (first: {unmatched[0]})")


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
