"""Where a manifest's paths may lead.

A manifest names files by path, and whoever scores or judges it reads those files (a judge even
uploads their frames to its server). Relative paths are taken against the manifest's folder;
absolute paths, ``..`` and symbolic links can lead anywhere. Paths are compared after resolving
``..`` and links:

* outside the manifest's folder: a warning (absolute paths to a shared data folder are common);
* outside a *confined* folder (``--confine DIR`` or ``$ROBOJUDGE_CONFINE``): an error, so the item is
  left out of the run and nothing of that file is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from robojudge import settings
from robojudge.settings import CONFINE_ENV
from robojudge.suite._check import path_targets

__all__ = ["CONFINE_ENV", "RUN_MANIFESTS", "Resolver", "confine_folder", "place_paths", "run_manifest"]

RUN_MANIFESTS = ("suite/suite.jsonl", "suite.jsonl", "suite/suite.csv", "suite.csv")
"""Where a run folder keeps its suite manifest, tried in order (the demo writes ``suite/suite.jsonl``)."""


def run_manifest(run_dir: str | Path) -> Path | None:
    """The suite manifest inside a run folder (the first of :data:`RUN_MANIFESTS` there), or None."""
    folder = Path(run_dir)
    return next((folder / c for c in RUN_MANIFESTS if (folder / c).is_file()), None)


def confine_folder(confine: str | Path | None) -> Path | None:
    """The resolved folder paths must stay in: ``confine``, else ``$ROBOJUDGE_CONFINE``, else None.

    Raises:
        ValueError: the folder does not exist (naming the variable when the folder came from it).
    """
    source = ""
    if confine is None:
        confine = settings.get().confine
        if confine is None:
            return None
        source = f"{settings.CONFINE_ENV}={confine}: "  # (the user may never have typed --confine)
    folder = Path(confine).expanduser()
    if not folder.is_dir():
        fix = f"; set {settings.CONFINE_ENV} to a folder, or unset it" if source else ""
        raise ValueError(f"{source}confine folder {folder} does not exist (or is not a folder){fix}")
    return folder.resolve()


class Resolver:
    """``Path.resolve()`` with each folder resolved once, for the paths of one manifest read.

    A manifest's items name files in a few folders, and resolving each path walked every folder on its
    way again: two thirds of the time of reading a manifest of 9,060 items (4 s of 6). A path is its
    resolved folder joined with its name, resolved again only where the name is itself a symbolic link
    (or ``..``), so the result is ``Path.resolve()``'s as long as the folders do not change while it is
    used: make one per read.
    """

    def __init__(self) -> None:
        self._folders: dict[Path, Path] = {}

    def folder(self, path: Path) -> Path:
        """``path.resolve()``, remembered."""
        done = self._folders.get(path)
        if done is None:
            done = self._folders[path] = path.resolve()
        return done

    def __call__(self, path: Path) -> Path:
        """``path.resolve()``; raises what it raises."""
        if path.name in ("", ".", ".."):
            return path.resolve()
        target = self.folder(path.parent) / path.name
        try:
            link = stat.S_ISLNK(os.lstat(target).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            link = False
        except (OSError, ValueError):  # a NUL, a folder it may not search: resolve() does as before
            link = True
        return target.resolve() if link else target


def place_paths(data: dict[str, Any], root: Path, confine: Path | None,
                resolve: Resolver | None = None) -> list[tuple[str, str, str]]:
    """``(dotted field, message, severity)`` for each path of a raw record that leaves its bounds.

    Args:
        data: the raw record.
        root: the manifest's folder (relative paths are taken against it).
        confine: a resolved folder every path must stay in, or None.
        resolve: the resolver of the manifest's read (a new one by default).
    """
    resolve = resolve or Resolver()
    out: list[tuple[str, str, str]] = []
    home = resolve.folder(root)
    for field, _, value in path_targets(data):
        if not value.strip():
            continue
        try:
            target = resolve(root / value)
        except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL: check_paths reports it
            continue
        if confine is not None:
            if not target.is_relative_to(confine):
                out.append((field, f"{target} is outside the confined folder {confine}", "error"))
        elif not target.is_relative_to(home):
            out.append((field, f"{target} is outside the manifest's folder {home}", "warning"))
    return out
