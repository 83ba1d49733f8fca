"""``robojudge cache info|clear``: the judge response cache and the file-hash cache, where they are, how
big, and emptying them (docs/judges.md, "Runner and cache")."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer

from robojudge import settings
from robojudge.cli._common import console, fail
from robojudge.run import CacheCleared, CacheFileError, CacheFileState, cache_states, clear_caches

app = typer.Typer(
    help="The judge response cache and the file-hash cache in the user cache folder: where, how big, clear.",
    no_args_is_help=True,
)

#: What removing each cache costs, by file name.
_COSTS = {
    "judge-cache.sqlite": "a judge run sends those requests again (paid, for a hosted judge) and decodes "
                          "those videos again",
    "file-hashes.sqlite": "the next run reads each input file once more to hash it",
}


def file_size(size: int) -> str:
    """A size on disk in words: ``2.50 MB`` (MB = 2**20 bytes, as ``annotate cache``), ``12 KB``."""
    if size >= 2**20:
        return f"{size / 2**20:.2f} MB"
    return f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"


def _day(when: float | None) -> str:
    return "?" if when is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(when))


#: What a table's rows are, in words.
_ROWS = {"replies": "replies", "frames": "videos' frame hashes", "digests": "file digests"}


def _entries(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {_ROWS.get(table, table)}" for table, n in counts.items()) or "no entries"


def _where(given: Path | None) -> str:
    if given is not None:
        return " (--cache-dir)"
    s = settings.get()
    return f" (${s.cache_dir_from})" if s.cache_dir_from else " (the default)"


_CACHE_DIR = typer.Option(
    None, "--cache-dir",
    help=f"The cache folder \\[default: ${settings.CACHE_DIR_ENV}, else ${settings.XDG_CACHE_ENV}/robojudge, "
    "else ~/.cache/robojudge]")


@app.command("info")
def info_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of lines."),
    cache_dir: Path | None = _CACHE_DIR,
) -> None:
    """Where each cache file is, its size and entries; changes nothing.

    The size on disk counts the file's -wal and -shm files; the entries are counted per table, with
    when the oldest and newest were written."""
    states = cache_states(cache_dir)
    folder = settings.get().cache_dir if cache_dir is None else cache_dir.expanduser()
    if as_json:
        typer.echo(json.dumps({"folder": str(folder),
                               "caches": [_state_json(s) for s in states]}, indent=2))
        return
    console.print(f"cache folder {folder}{_where(cache_dir)}", highlight=False, soft_wrap=True)
    for s in states:
        if not s.exists:
            console.print(f"{s.name}: {s.path}: none yet", highlight=False, soft_wrap=True)
            continue
        if s.problem is not None:
            what = f"entries not counted: {s.problem}"
        elif s.oldest is None:
            what = _entries(s.entries)
        else:
            what = f"{_entries(s.entries)}, written {_day(s.oldest)} to {_day(s.newest)}"
        console.print(f"{s.name}: {s.path}: {file_size(s.size)}, {what}", highlight=False, soft_wrap=True)
    media = folder / "annotate-media"
    if media.is_dir():
        console.print(f"annotation WebM cache: {media}: see `robojudge annotate cache`", highlight=False,
                      soft_wrap=True)
    console.print("Either file may be removed (`robojudge cache clear`): no stored result changes; without "
                  "the judge response cache a rerun sends its requests again.", highlight=False)


def _state_json(s: CacheFileState) -> dict[str, Any]:
    return {"name": s.name, "path": str(s.path), "exists": s.exists, "size_bytes": s.size,
            "entries": s.entries, "oldest": s.oldest, "newest": s.newest, "problem": s.problem}


@app.command("clear")
def clear_cmd(
    judge: bool = typer.Option(False, "--judge", help="Clear the judge response cache (judge-cache.sqlite)."),
    hashes: bool = typer.Option(False, "--hashes", help="Clear the file-hash cache (file-hashes.sqlite)."),
    older_than: float | None = typer.Option(
        None, "--older-than", metavar="DAYS", min=0.0,
        help="Remove only the entries written more than DAYS days ago (their age counts from when they "
             "were written, not from their last use), then rewrite the file smaller. \\[default: remove "
             "the whole file, which needs no free space]"),
    cache_dir: Path | None = _CACHE_DIR,
) -> None:
    """Remove the judge response cache and the file-hash cache (--judge, --hashes: only that one).

    No stored result changes: without the judge response cache a judge run sends its requests again
    (paid, for a hosted judge); without the file-hash cache the next run reads each input once more.
    Removing a whole file needs no free space and is safe while a run has it open (that run's later
    entries are lost to the next one)."""
    both = not (judge or hashes)
    try:
        done = clear_caches(cache_dir, judge=judge or both, hashes=hashes or both, older_than_days=older_than)
    except (CacheFileError, ValueError) as exc:
        raise fail(str(exc)) from None
    for c in done:
        _say_cleared(c)


def _say_cleared(c: CacheCleared) -> None:
    if not c.removed and c.size_before == 0:
        console.print(f"{c.name}: {c.path}: none, nothing to remove", highlight=False, soft_wrap=True)
        return
    cost = _COSTS.get(c.path.name, "")
    if c.whole_file:
        counted = f", {_entries(c.removed)}" if c.removed else ""
        line = f"{c.name}: removed {c.path} ({file_size(c.size_before)}{counted})"
    else:
        gone = ", ".join(f"{n} of {n + c.kept.get(t, 0)} {_ROWS.get(t, t)}"
                         for t, n in c.removed.items()) or "nothing"
        line = (f"{c.name}: removed {gone} from {c.path}; {file_size(c.size_before)} before, "
                f"{file_size(c.size_after)} now")
        if c.not_compacted is not None:
            line += (f" (the file could not be rewritten smaller: {c.not_compacted}; later entries reuse "
                     "the space)")
    if (c.whole_file or any(c.removed.values())) and cost:
        line += f"; {cost}"
    console.print(line, highlight=False, soft_wrap=True)
