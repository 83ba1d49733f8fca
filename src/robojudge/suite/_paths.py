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

from pathlib import Path
from typing import Any

from robojudge import settings
from robojudge.settings import CONFINE_ENV
from robojudge.suite._check import path_targets

__all__ = ["CONFINE_ENV", "RUN_MANIFESTS", "confine_folder", "place_paths", "run_manifest"]

RUN_MANIFESTS = ("suite/suite.jsonl", "suite.jsonl", "suite/suite.csv", "suite.csv")
"""Where a run folder keeps its suite manifest, tried in order (the demo writes ``suite/suite.jsonl``)."""


def run_manifest(run_dir: str | Path) -> Path | None:
    """The suite manifest inside a run folder (the first of :data:`RUN_MANIFESTS` there), or None."""
    folder = Path(run_dir)
    return next((folder / c for c in RUN_MANIFESTS if (folder / c).is_file()), None)


def confine_folder(confine: str | Path | None) -> Path | None:
    """The resolved folder paths must stay in: ``confine``, else ``$ROBOJUDGE_CONFINE``, else None.

    Raises:
        ValueError: the folder does not exist.
    """
    if confine is None:
        confine = settings.get().confine
        if confine is None:
            return None
    folder = Path(confine).expanduser()
    if not folder.is_dir():
        raise ValueError(f"confine folder {folder} does not exist (or is not a folder)")
    return folder.resolve()


def place_paths(data: dict[str, Any], root: Path, confine: Path | None) -> list[tuple[str, str, str]]:
    """``(dotted field, message, severity)`` for each path of a raw record that leaves its bounds.

    Args:
        data: the raw record.
        root: the manifest's folder (relative paths are taken against it).
        confine: a resolved folder every path must stay in, or None.
    """
    out: list[tuple[str, str, str]] = []
    home = root.resolve()
    for field, _, value in path_targets(data):
        if not value.strip():
            continue
        try:
            target = (root / value).resolve()
        except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL: check_paths reports it
            continue
        if confine is not None:
            if not target.is_relative_to(confine):
                out.append((field, f"{target} is outside the confined folder {confine}", "error"))
        elif not target.is_relative_to(home):
            out.append((field, f"{target} is outside the manifest's folder {home}", "warning"))
    return out
