"""Turning schema errors and missing files into readable :class:`ManifestProblem` messages."""

from __future__ import annotations

import difflib
import errno
import functools
import os
import re
import stat
import sys
import unicodedata
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from robojudge.suite._read import SCAN_SUFFIXES
from robojudge.suite._schema import CHECKLIST_ITEMS, ROBOT_FILE_KINDS, Checklist, Grid, Item, Labels

# Path fields at the top level of an item; ``views`` values are checked as well.
_PATH_FIELDS: tuple[str, ...] = ("video", "initial_frame", "reference_video", "state", *ROBOT_FILE_KINDS)
# Fields that may name a folder (a video given as a folder of frames); the rest must be files or
# folders as the consumer sees fit, except ``initial_frame``, which is one image.
_FOLDER_OK: frozenset[str] = frozenset({"video", "reference_video", "views", "state"})


def _bounds(model: type[BaseModel], prefix: str) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for name, info in model.model_fields.items():
        lo = hi = None
        for m in info.metadata:
            if isinstance(m, annotated_types.Ge):
                lo = m.ge
            elif isinstance(m, annotated_types.Le):
                hi = m.le
        if lo is not None or hi is not None:
            out[f"{prefix}{name}"] = (lo, hi)
    return out


# Allowed ranges read off the schema, keyed by dotted field path (``labels.pa`` -> (1, 5)).
RANGES: dict[str, tuple[Any, Any]] = {
    **_bounds(Labels, "labels."),
    **_bounds(Checklist, "labels.checklist."),
    **_bounds(Grid, "grid."),
}

_KNOWN_KEYS: dict[tuple[str, ...], list[str]] = {
    (): list(Item.model_fields),
    ("labels",): list(Labels.model_fields),
    ("labels", "checklist"): list(CHECKLIST_ITEMS),
    ("grid",): list(Grid.model_fields),
}
# Dotted column names a CSV or Parquet header may use, for did-you-mean on unknown columns.
_DOTTED_KEYS: list[str] = [
    *(f"labels.{k}" for k in Labels.model_fields),
    *(f"labels.checklist.{k}" for k in CHECKLIST_ITEMS),
]


def did_you_mean(key: str, parent: tuple[str, ...] = ()) -> str | None:
    """The closest known field name to ``key`` under ``parent``, if one is close enough."""
    candidates = list(_KNOWN_KEYS.get(parent, []))
    if not parent and "." in key:
        candidates += _DOTTED_KEYS
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    return match[0] if match else None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {value!r}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _range_text(lo: Any, hi: Any) -> str:
    if lo is not None and hi is not None:
        return f"{lo}-{hi}"
    return f">= {lo}" if lo is not None else f"<= {hi}"


def describe_error(err: ErrorDetails) -> tuple[str | None, str]:
    """Map one pydantic error to ``(dotted field, message)``."""
    loc = tuple(str(p) for p in err["loc"])
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    field: str | None = ".".join(loc) if loc else None
    leaf = loc[-1] if loc else ""

    if kind == "extra_forbidden":
        msg = f"unknown field {leaf!r}"
        guess = did_you_mean(leaf, loc[:-1])
        if guess is not None:
            msg += f" (did you mean {guess!r}?)"
        return field, msg
    if kind == "missing":
        return field, "required field is missing"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        # The value parsed as a number before the range check; show "7", not "'7'", for a CSV cell.
        shown = str(value).strip() if isinstance(value, str) else repr(value)
        if field in RANGES:
            return field, f"value {shown} is out of range {_range_text(*RANGES[field])}"
        return field, f"value {shown} is out of range ({err['msg'].lower()})"
    if kind == "enum":
        allowed = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return field, f"unknown {leaf} {value!r}; expected one of {', '.join(allowed)}"
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return field, f"expected a whole number, got {_kind(value)}"
    if kind in ("float_parsing", "float_type"):
        return field, f"expected a number, got {_kind(value)}"
    if kind == "finite_number":
        return field, f"expected a finite number, got {_kind(value)}"
    if kind == "string_type":
        return field, f"expected a string, got {_kind(value)}"
    if kind == "string_too_short":
        return field, "must not be empty"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return field, f"expected an object, got {_kind(value)}"
    if kind == "value_error":
        text = str(ctx.get("error", err["msg"]))
        if field is None:
            # Model-level checks name their field first ("main_view 'x' is not one of the views").
            head = text.split(" ", 1)[0]
            if head in Item.model_fields:
                field = head
        return field, text
    return field, err["msg"]


def path_targets(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(dotted field, kind, value)`` for every string path in a raw record (kind: ``views`` for views)."""
    targets: list[tuple[str, str, str]] = []
    for name in _PATH_FIELDS:
        v = data.get(name)
        if isinstance(v, str):
            targets.append((name, name, v))
    views = data.get("views")
    if isinstance(views, dict):
        for k, v in views.items():
            if isinstance(v, str):
                targets.append((f"views.{k}", "views", v))
    return targets


def _unusable(value: str, full: Path, exc: OSError) -> str:
    """Why the path ``value`` (at ``full``) cannot be checked, from the error of looking at it."""
    if exc.errno == errno.ELOOP:
        return f"{value} is a loop of symbolic links (a link that leads back to itself)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (f"cannot check {value}: permission denied (a folder on the way to {full} is not "
                "readable or searchable by this user)")
    if exc.errno == errno.ENAMETOOLONG:
        return f"cannot check {value}: the name is too long for the file system"
    return f"cannot check {value}: {exc.strerror or exc}"


LOCALE_FIX = "run with LC_ALL=C.UTF-8 (or PYTHONUTF8=1)"
"""What makes a non-ASCII file name usable when the locale's file-system encoding is not UTF-8."""


def unwritable_name(value: str) -> str | None:
    """Why ``value`` cannot name a file under this process's locale (its file-system encoding, ASCII
    under ``LC_ALL=C`` without UTF-8 mode, has no bytes for a character of it), or None when it can."""
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        return (f"{value!r} cannot be written in the file-system encoding of this locale "
                f"({sys.getfilesystemencoding()}), so it names no file here; {LOCALE_FIX}")
    return None


def _backslash_hint(value: str, root: Path) -> str:
    """What to add to "file not found" for a path written with ``\\`` (a manifest made on Windows with
    ``str(path)``) where ``\\`` separates no folders, as on Linux and macOS: the ``/`` form when that
    exists."""
    if "\\" not in value or os.sep == "\\":
        return ""
    slashed = value.replace("\\", "/")
    there = Path(slashed) if Path(slashed).is_absolute() else root / slashed
    try:
        exists = there.exists()
    except (OSError, ValueError):
        exists = False
    if exists:
        return f"; a Windows path: use / between folders ({slashed} exists)"
    return "; \\ separates no folders here: use /"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _composed_twin(full: Path) -> Path | None:
    """The file that ``full`` names once each of its names is compared in one Unicode normalization
    (NFC): a file copied from macOS has its accents as separate characters (``e`` and U+0301), a name
    typed on another system has them composed (``é``); the two print alike. ``None`` when there is none
    (or ``full`` is ASCII: nothing to compose)."""
    if full.as_posix().isascii():
        return None
    here = Path(full.anchor)
    for name in full.parts[1:]:
        if os.path.lexists(here / name):
            here = here / name
            continue
        if name.isascii():  # an ASCII name has one form: no twin (a folder above may still be accented)
            return None
        try:
            names = _composed_names(str(here), os.stat(here).st_mtime_ns)
        except OSError:
            return None
        twin = names.get(unicodedata.normalize("NFC", name))
        if twin is None:
            return None
        here = here / twin
    return here


@functools.lru_cache(maxsize=32)
def _composed_names(folder: str, mtime_ns: int) -> dict[str, str]:
    """A folder's entries by their NFC form, listed once per folder and modification (a manifest of
    thousands of missing accented files in one folder lists it once, not once per file: review rev28 F1).
    """
    return {unicodedata.normalize("NFC", e): e for e in os.listdir(folder)}


def _not_found_hint(value: str, root: Path, full: Path, link: Path | None) -> str:
    """What to add to "file not found: ``value``" (at ``full``) that says why: a Windows path, a name in
    another Unicode normalization, a ``~`` or a URL (neither is read), a path that exists beside the link
    the manifest was given by (``link``) but not beside the file it leads to."""
    if _URL.match(value):
        return "; URLs are not read: download the file"
    if value.startswith("~"):
        return "; `~` is not expanded in manifests: write the full path"
    hint = _backslash_hint(value, root)
    if hint:
        return hint
    twin = _composed_twin(full)
    if twin is not None:
        return (f"; a file whose name differs only in Unicode normalization exists: {ascii(str(twin))} "
                f"against {ascii(str(full))} (an accent as a separate character, as macOS writes names): "
                "write the name as it is on disk, or rename the file")
    if link is not None and not Path(value).is_absolute() and os.path.lexists(link.parent / value):
        target = os.path.realpath(link)
        return (f"; the manifest is a link to {target}: relative paths are read from {target}'s folder; "
                f"{value} exists beside the link in {link.parent}")
    return ""


#: A folder given as a video holds no frame images but these: a video or frames of another format.
_NOT_FRAMES = frozenset({*SCAN_SUFFIXES, ".ts", ".m2ts", ".mts", ".3gp", ".mxf", ".y4m"})


def _folder_problem(value: str, full: Path) -> str | None:
    """Why the folder ``full``, given as a video (a folder of frames), can never be read: it is empty,
    or holds no frame images (it holds videos, or ``.tif`` frames); None when it holds an image (what
    the frames are like is the media check's). Stops at the first image."""
    from robojudge.video import IMAGE_SUFFIXES  # loads PyAV: only for a folder given as a video

    videos = others = 0
    suffixes: set[str] = set()
    for entry in os.scandir(full):
        if entry.name.startswith("."):
            continue
        suffix = os.path.splitext(entry.name)[1].lower()
        if suffix in IMAGE_SUFFIXES:
            return None
        if suffix in _NOT_FRAMES:
            videos += 1
        else:
            others += 1
            if suffix:
                suffixes.add(suffix)
    if not videos and not others:
        return f"frame folder {value} is empty"
    images = "/".join(sorted(IMAGE_SUFFIXES))
    if videos:
        return (f"{value} is a folder that holds {videos} video file(s) and no images "
                f"({images}): name one video file (or list them with `robojudge suite scan`)")
    kinds = f" ({', '.join(sorted(suffixes))})" if suffixes else ""
    return (f"{value} is a folder that holds {others} file(s){kinds} and no frame images ({images}): "
            "convert the frames to PNG, or name a video file")


def check_paths(data: dict[str, Any], root: Path, link: Path | None = None) -> list[tuple[str, str]]:
    """Check that every path a raw record names exists, without opening anything.

    Only string values are checked (wrong types are left to schema validation). Relative paths are
    taken against ``root``. A path that cannot even be looked at (a loop of links, a folder on its
    way this user may not search, a name too long) is a problem of its record, never an exception.
    A folder given as a video must hold a frame image. ``link``: the symbolic link the manifest was
    given by (``root`` is then the folder of its target), named by a not-found message where the path
    exists beside the link.

    Returns:
        ``(dotted field, message)`` for each missing or unusable path; a file that several fields name (a
        one-view item's ``video`` and ``views.cam0``) is one problem, under the first of them, the
        message naming the others.
    """
    out: list[tuple[str, str]] = []
    missing: dict[str, int] = {}  # a path not found -> its problem in out
    for field, kind, value in path_targets(data):
        if value in missing:
            at = missing[value]
            out[at] = (out[at][0], f"{out[at][1]} (also named by field {field})")
            continue
        if not value.strip():
            if field != "video":  # the schema already rejects an empty video
                out.append((field, "path is empty"))
            continue
        unwritable = unwritable_name(value)
        if unwritable is not None:
            out.append((field, unwritable))
            continue
        given = Path(value)
        full = given if given.is_absolute() else root / given
        try:
            mode = os.stat(full).st_mode
        except (FileNotFoundError, NotADirectoryError):
            where = "" if given.is_absolute() or _URL.match(value) else f" (looked for {full})"
            missing[value] = len(out)
            out.append((field, f"file not found: {value}{where}{_not_found_hint(value, root, full, link)}"))
            continue
        except OSError as exc:
            out.append((field, _unusable(value, full, exc)))
            continue
        except ValueError:  # a NUL byte in the text
            out.append((field, f"{value!r} is not a usable path (it holds a NUL character)"))
            continue
        if stat.S_ISDIR(mode):
            if kind not in _FOLDER_OK:
                what = "an image file" if kind == "initial_frame" else "a file"
                out.append((field, f"{value} is a folder; expected {what}"))
                continue
            if kind == "state":
                continue
            try:
                unreadable = _folder_problem(value, full)
            except OSError as exc:
                out.append((field, _unusable(value, full, exc)))
                continue
            if unreadable is not None:
                out.append((field, unreadable))
    return out
