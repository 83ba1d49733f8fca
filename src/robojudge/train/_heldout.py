"""Judging a trained judge on items it was not trained on, with the frames it was trained on.

A checkpoint's ``robojudge-train.json`` (:func:`robojudge.train.trained_from`) names the items it was
trained on (``train_items``, an earlier stage's included) and the frame sampling of its export
(``frames``, ``max_images``). ``robojudge judge`` and ``robojudge leaderboard judges`` read it:

* :func:`split_items` -- the items of one split of an export (``--split-of EXPORT:test``), to judge
  or compare a trained judge on its held-out items only;
* :func:`trained_on` -- which of the items about to be judged (or compared) the checkpoint was
  trained on: agreement with the labels there is no held-out measure;
* :func:`serving_differences` -- how a judge's frame settings differ from those its checkpoint was
  trained with.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robojudge._json import jsonl_records
from robojudge.judges import FrameSpec
from robojudge.train._export import EARLIER_SPLIT_PREFIX, EXPORT_FILE
from robojudge.train._request import ExportError
from robojudge.train._splits import SPLITS
from robojudge.train._trl import TRAIN_FILE, export_info, frame_options, trained_from, trained_items_of

_log = logging.getLogger(__name__)


def parse_split_of(text: str) -> tuple[Path, str]:
    """``EXPORT_DIR:SPLIT`` (``--split-of``) as the folder and the split (``val`` or ``test``; ``train``
    too, to look at what a judge was trained on).

    Raises:
        ExportError: No ``:SPLIT``, or an unknown split.
    """
    folder, sep, split = text.rpartition(":")
    if not sep or not folder or split not in SPLITS:
        raise ExportError(f"--split-of {text!r}: give EXPORT_DIR:SPLIT, SPLIT one of {', '.join(SPLITS)} "
                          "(e.g. runs/judge-data:test)")
    return Path(folder), split


def split_items(export: str | Path, split: str) -> frozenset[str]:
    """The ids of the items in one split of a ``robojudge train export`` folder (any format).

    Raises:
        ExportError: Not an export, an unknown split, a split the export left empty, or a record
            without ``item_id`` (named by file and line).
    """
    root = Path(export)
    if not (root / EXPORT_FILE).is_file():
        raise ExportError(f"{root}: no {EXPORT_FILE}; name a folder `robojudge train export` wrote")
    if split not in SPLITS:
        raise ExportError(f"{root}: unknown split {split!r}; use one of {', '.join(SPLITS)}")
    path = root / f"{split}.jsonl"
    if not path.is_file():
        counts = export_info(root).get("records", {})
        raise ExportError(f"{root}: the {split} split is empty (records per split: {counts}); export with "
                          f"--{split} above 0" if split != "train" else f"{root}: no train records")
    out = set()
    for line_no, rec in jsonl_records(path, ExportError):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str):
            raise ExportError(f"{path}, line {line_no}: field item_id is missing")
        out.add(rec["item_id"])
    return frozenset(out)


def trained_items(model: str) -> frozenset[str]:
    """The items the local checkpoint ``model`` was trained on, from its ``robojudge-train.json``
    (empty for a hub id, a folder without one, or a record that names none).

    A record written before ``train_items`` was recorded is read through its export: the
    ``train.jsonl`` of the export in that folder (or of an earlier one kept there in an
    ``earlier-split-*`` folder) with the digest the record names. A record written before exports
    had a digest (before 2026-12-06) cannot say which export it was trained on: every ``train.jsonl``
    of that folder and its ``earlier-split-*`` folders is taken, with a warning saying so.
    """
    info = trained_from(model)
    items = trained_items_of(info)
    if items or not info.get("data"):
        return frozenset(items)
    data = Path(str(info["data"]))
    exports = [data, *sorted(p for p in data.glob(f"{EARLIER_SPLIT_PREFIX}*") if p.is_dir())]
    digest = info.get("data_digest")
    if digest:
        same = [e for e in exports if export_info(e).get("digest") == digest]
        return _train_split(same[0]) if same else frozenset()
    found: set[str] = set()
    read = []
    for e in exports:
        if items_there := _train_split(e):
            found |= items_there
            read.append(str(e / "train.jsonl"))
    if found:
        _log.warning("%s: its %s was written before exports were fingerprinted and names the export %s "
                     "without saying which export that folder held then; taken as trained on the %d item(s) "
                     "of %s, which an export into that folder since may have changed", model, TRAIN_FILE,
                     data, len(found), ", ".join(read))
    return frozenset(found)


def _train_split(export: Path) -> frozenset[str]:
    """The items of ``export``'s train split (empty when it has none or cannot be read)."""
    try:
        return split_items(export, "train")
    except ExportError:
        return frozenset()


@dataclass(frozen=True)
class TrainedOn:
    """Items of an evaluation a judge's checkpoint was trained on."""

    judge: str
    model: str
    items: list[str]
    of: int

    def message(self) -> str:
        first = ", ".join(self.items[:3]) + (", ..." if len(self.items) > 3 else "")
        return (f"judge {self.judge!r} ({self.model}) was trained on {len(self.items)} of these {self.of} "
                f"items (its {TRAIN_FILE}; first: {first}): its agreement with their labels is no held-out "
                "measure; judge its export's held-out items only (--split-of EXPORT_DIR:test)")


def trained_on(judge: str, model: str | None, item_ids: Collection[str]) -> TrainedOn | None:
    """The items of ``item_ids`` that the checkpoint ``model`` (a judge's ``model``: a local folder
    with a ``robojudge-train.json``) was trained on; None when there are none or ``model`` names no
    trained checkpoint."""
    if not model:
        return None
    seen = trained_items(model)
    hit = sorted(i for i in item_ids if i in seen)
    return TrainedOn(judge, model, hit, len(item_ids)) if hit else None


def serving_differences(model: str | None, frames: FrameSpec, max_images: int) -> list[str]:
    """How ``frames`` and ``max_images`` (a judge run's) differ from the frame sampling the checkpoint
    ``model`` was trained with (its ``robojudge-train.json``: the export's ``frames``, ``max_images``);
    empty when they agree or nothing is recorded."""
    info = trained_from(model) if model else {}
    frames_info = info.get("frames")
    trained: Mapping[str, Any] = frames_info if isinstance(frames_info, dict) else {}
    if not trained:
        return []
    now = frames.as_dict()
    out = []
    for key in ("fps", "max_frames", "size", "grid_view"):
        want = trained.get(key, "main" if key == "grid_view" else None)
        got = now.get(key, "main" if key == "grid_view" else None)
        if isinstance(want, list):
            want = tuple(want)
        if want != got:
            out.append(f"{key} {got} (trained on {want})")
    want_images = info.get("max_images")
    if isinstance(want_images, int) and want_images != max_images:
        out.append(f"max_images {max_images} (trained on {want_images})")
    if out:
        out = [f"judged with {', '.join(out)}: the checkpoint is sent other frames than it was trained on; "
               f"pass {frame_options(trained)}"
               + (f" and set max_images = {want_images}" if isinstance(want_images, int) else "")]
    return out
