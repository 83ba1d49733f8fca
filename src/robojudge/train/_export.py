"""``robojudge train export``: labelled items to judge-training records (RoboJudge Sec. 4.1).

Each (item, rubric) with a human score becomes one record: the judge's exact first-turn request
(:mod:`._request`) as chat messages, and the reply a trained judge should give. The frames the judge
would see (sampled by its :class:`~robojudge.judges.FrameSpec`, thinned to its ``max_images``) are
written once per item as PNG files (lossless, so the pixels are the judge's own) and referenced
from the records by paths relative to the output folder.

Formats:

* ``trl``: ``prompt``/``completion`` conversations with typed content blocks; the video block holds
  the frame paths, the first-frame image block (IA) the first frame's path. ``robojudge train
  sft|grpo`` read this.
* ``sharegpt``: ``conversations`` (``from``/``value``) with ``<image>``/``<video>`` placeholders in
  the human turn, ``system``, ``images`` and ``videos`` (one list of frame paths per video).
* ``llamafactory``: the ``sharegpt`` records plus the ``dataset_info.json`` LLaMA-Factory reads.

Every record also carries ``item_id``, ``clip_id``, ``source``, ``generator``, ``rubric``, ``score``
and ``split``; the output folder gets a dataset card (``README.md``) and ``export.json``.

An export into a folder holding an earlier export whose items fall into other splits (another seed or
share, other items, or an export by an older robojudge, which split otherwise) is refused unless
forced: the earlier ``train.jsonl`` may be the only record of what a checkpoint was trained on. Forced,
the earlier split files and ``export.json`` are kept in ``earlier-split-<UTC time>/`` beside the new
export (:data:`EARLIER_SPLIT_PREFIX`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from robojudge._json import jsonl_records
from robojudge.judges import (
    FrameSpec,
    JudgeConfig,
    Rubric,
    chat_messages,
    decode_frames,
    get_rubric,
    judged_input,
    make_judge,
    shown_rate,
    thinned,
)
from robojudge.registry import UnknownNameError
from robojudge.report import md_escape
from robojudge.suite import Item, load_suite
from robojudge.train._request import ExportError, judge_request, label_score, target_reply
from robojudge.train._splits import SPLITS, assign_splits, clip_key, source_key
from robojudge.video import SampledFrames, VideoError

Format = Literal["trl", "sharegpt", "llamafactory"]
FORMATS: tuple[str, ...] = ("trl", "sharegpt", "llamafactory")
DEFAULT_FRACTIONS: dict[str, float] = {"train": 0.9, "val": 0.1, "test": 0.0}
EXPORT_FILE = "export.json"
EARLIER_SPLIT_PREFIX = "earlier-split-"
"""Folders (``earlier-split-<UTC time>``) in an export folder that keep the split files and
``export.json`` of an earlier export a forced export with another split replaced."""


@dataclass(frozen=True)
class ExportSummary:
    """What :func:`export_training_data` wrote.

    Attributes:
        out: The output folder.
        records: Records per split.
        skipped: Items of the manifest per rubric left out because they lack that rubric's score
            (items with no label at all included, not those in ``disputed``).
        left_out: Their ids, per rubric.
        files: The record files (one JSONL per non-empty split).
        counts: ``counts[split][(kind, value)]``: records per source, generator and score.
        notes: What the user should know about the split (items without a clip, a manifest ``split``
            that is not used) and the labels (items awaiting an adjudication).
        digest: SHA-256 of the records and frames written (``export.json``'s ``digest``; a checkpoint
            trained on the export records it).
    """

    out: Path
    records: dict[str, int]
    skipped: dict[str, int]
    files: list[Path]
    counts: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict)
    left_out: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    digest: str = ""
    disputed: list[str] = field(default_factory=list)
    """The items left out because they await an adjudication (a cross-review 2 or more points off their
    primary label; see :func:`robojudge.annotate.disputed_items`): with ``project``, those the database
    names; from a manifest, those whose ``meta.annotation.disputed`` lists an axis. Empty with
    ``include_disputed``."""
    excluded: list[str] = field(default_factory=list)
    """With ``exclude_clips_of``: the labelled items left out because the benchmark manifest holds their
    clip."""
    resplit: list[str] = field(default_factory=list)
    """The items the earlier export in the output folder had in another split (only with ``force``)."""
    earlier_split: Path | None = None
    """Where that earlier export's split files and ``export.json`` were kept (with ``resplit``)."""


def _safe_name(item_id: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", item_id)[:48].strip("._") or "item"
    return f"{stem}-{hashlib.sha256(item_id.encode()).hexdigest()[:8]}"


def write_frames(frames: npt.NDArray[np.uint8], folder: Path) -> list[Path]:
    """Write RGB frames as ``0000.png, 0001.png, ...`` into ``folder`` (replacing the PNGs a former
    export left there); returns the paths."""
    import cv2

    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    paths = []
    for i, frame in enumerate(frames):
        path = folder / f"{i:04d}.png"
        if not cv2.imwrite(str(path), np.ascontiguousarray(frame[..., ::-1])):
            raise OSError(f"cannot write {path}")
        paths.append(path)
    return paths


def read_frames(paths: Sequence[str | Path]) -> npt.NDArray[np.uint8]:
    """The RGB frames of :func:`write_frames`, stacked ``(T, H, W, 3)``."""
    import cv2

    out = []
    for p in paths:
        bgr = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if bgr is None:
            raise OSError(f"cannot read frame {p}")
        out.append(bgr[..., ::-1])
    return np.ascontiguousarray(np.stack(out))


def _human_turn(messages: list[dict[str, Any]]) -> str:
    """The user message as one string, with ``<image>``/``<video>`` where the media go."""
    user = next(m for m in messages if m["role"] == "user")
    marks = {"image": "<image>", "video": "<video>"}
    return "".join(c["text"] if c["type"] == "text" else marks[c["type"]] for c in user["content"])


def make_record(fmt: str, prompt: list[dict[str, Any]], reply: str, frame_paths: list[str],
                meta: Mapping[str, Any]) -> dict[str, Any]:
    """One exported record in ``fmt`` from the trl-style prompt messages and the target reply."""
    if fmt == "trl":
        completion = [{"role": "assistant", "content": [{"type": "text", "text": reply}]}]
        return {**meta, "prompt": prompt, "completion": completion, "frames": frame_paths}
    system = next((m["content"][0]["text"] for m in prompt if m["role"] == "system"), "")
    has_image = any(c["type"] == "image" for m in prompt for c in m["content"])
    return {
        **meta,
        "system": system,
        "conversations": [{"from": "human", "value": _human_turn(prompt)}, {"from": "gpt", "value": reply}],
        "images": [frame_paths[0]] if has_image else [],
        "videos": [frame_paths],
    }


def _card(summary: ExportSummary, rubrics: Sequence[Rubric], fmt: str, spec: FrameSpec, max_images: int,
          source: Path, seed: int, fractions: Mapping[str, float]) -> str:
    splits = [s for s in SPLITS if summary.records.get(s)]
    names = ", ".join(f"`{r.id}` v{r.version}" for r in rubrics)
    lines = [
        "# Judge-training data", "",
        f"Exported by `robojudge train export` from `{source}` in the `{fmt}` format: one record per "
        f"labelled (item, rubric) for the rubric(s) {names}. Each "
        "prompt is the judge's own first-turn request; the reply is the human score as the judge's JSON, "
        "with the labels' evidence notes as reasoning where present (RoboJudge Sec. 4.1).", "",
        f"Frames: {spec.fps:g} fps, at most {spec.max_frames} frames, thinned to {max_images} images"
        + (f", longer side {spec.size} px" if spec.size is not None else "")
        + (f", grid view {spec.grid_view}" if spec.grid_view != "main" else "") + ", PNG. "
        "Splits by clip (no `clip_id` in two splits; an item without one is its own clip), "
        f"stratified by source, seed {seed}, clip fractions "
        + ", ".join(f"{k} {v:g}" for k, v in fractions.items()) + ".", "",
        "| split | records |", "| --- | ---: |",
        *(f"| {s} | {summary.records[s]} |" for s in splits), "",
    ]
    for note in summary.notes:  # notes quote item ids and split values: text, never markup
        lines += [f"Note: {md_escape(note)}.", ""]
    if any(summary.skipped.values()):
        lines += ["Left out (item without that rubric's score): "
                  + ", ".join(f"{k} {v}" for k, v in summary.skipped.items() if v) + ".", ""]
    for kind in ("source", "generator", "score"):
        values = sorted({v for s in splits for (k, v) in summary.counts[s] if k == kind})
        lines += [f"## Records per {kind}", "", "| " + kind + " | " + " | ".join(splits) + " |",
                  "| --- | " + " | ".join("---:" for _ in splits) + " |"]
        # Generator and source names are the user's folder names: a '|' or '<i>' in one stays text.
        lines += [f"| {md_escape(str(v))} | " + " | ".join(str(summary.counts[s][kind, v]) for s in splits)
                  + " |" for v in values]
        lines.append("")
    return "\n".join(lines)


def _dataset_info(files: Sequence[Path]) -> dict[str, Any]:
    columns = {"messages": "conversations", "system": "system", "images": "images", "videos": "videos"}
    return {f"robojudge_{f.stem}": {"file_name": f.name, "formatting": "sharegpt", "columns": columns}
            for f in files}


LABELS_FILE = "labels.jsonl"
"""The manifest of an annotation project's final labels, written with the records (``project=``)."""


def _annotation_labels(db: str | Path, project: str, out: Path,
                       include_disputed: bool = False) -> tuple[Path, list[str]]:
    """The project's final labels as a manifest in ``out`` (what the records are then made from), and
    the items left out of it because they await an adjudication (with ``include_disputed``, none: their
    primary labels are written, the disputed axes in ``meta.annotation.disputed``)."""
    from robojudge.annotate import DISAGREEMENT, AnnotateError, disputed_items, export_manifest
    from robojudge.store import mask_text

    path = out / LABELS_FILE
    shown = mask_text(str(db))  # (a database URL may hold a password)
    try:
        n = export_manifest(db, project, path, disputed=include_disputed)
        disputed = [] if include_disputed else list(disputed_items(db, project))
    except AnnotateError as exc:
        raise ExportError(f"{shown}: project {project!r}: {exc}") from None
    if n == 0 and disputed:
        raise ExportError(
            f"{shown}: project {project!r} has no final label yet: {len(disputed)} item(s) await an "
            f"adjudication (a cross-review {DISAGREEMENT} points or more off the primary label on PA or IA); "
            "assign adjudications (robojudge annotate assign --kind adjudicate)"
        )
    if n == 0:
        raise ExportError(f"{shown}: project {project!r} has no submitted label yet")
    return path, disputed


def export_training_data(
    labels: str | Path,
    rubrics: Sequence[str],
    out: str | Path,
    *,
    fmt: str = "trl",
    judge: JudgeConfig | None = None,
    frames: FrameSpec | None = None,
    fractions: Mapping[str, float] | None = None,
    seed: int = 0,
    project: str | None = None,
    exclude_clips_of: str | Path | None = None,
    include_disputed: bool = False,
    force: bool = False,
) -> ExportSummary:
    """Write training records for every labelled item of a suite.

    Args:
        labels: A suite manifest whose items carry labels; with ``project``, the annotation database
            (a SQLite file or a database URL) whose project's final labels are exported.
        rubrics: Rubric ids (``pa``, ``ia``).
        out: Output folder (created). The export is written into a folder inside it first and moved
            into place only once every item is written, replacing the record files, frames, card
            and ``export.json`` of an earlier export; a failed export leaves the earlier one as it
            was. An earlier export that put some of the same items into other splits is refused
            unless ``force``.
        fmt: ``trl``, ``sharegpt`` or ``llamafactory``.
        judge: The judge whose requests are reproduced (its ``max_images`` and sampling); the
            default is a plain judge (32 images, greedy).
        frames: The judge's frame sampling (default: RoboJudge's 4 fps, at most 32 frames).
        fractions: Clip share per split (default 0.9 train, 0.1 val).
        seed: Split seed.
        project: An annotation project (``robojudge annotate``): its final labels (the adjudication,
            else the primary label where no cross-review disputes it) and evidence notes are written
            to ``out/labels.jsonl`` first, the manifest the records are made from.
        exclude_clips_of: A benchmark manifest: labelled items whose ``clip_id`` is the ``clip_id``
            of one of its items are left out before the split, so that a judge trained on the export
            has seen no clip it is tested on (RoboJudge Sec. 4.1; RoboPhys-3D App. A.1). Clips match
            by ``clip_id`` alone, across sources; an item without one (in either manifest) matches
            nothing. Its files need not exist.
        include_disputed: Train on the labels a cross-review disputes too. By default an item whose
            ``meta.annotation.disputed`` lists an axis (``robojudge annotate export
            --include-disputed`` writes it) is left out whole, as ``project`` leaves out the items
            awaiting an adjudication; with this, those items are exported (with ``project``, with
            their primary labels) and a note counts them.
        force: Export even when the earlier export in ``out`` put some of the items into other
            splits; its split files and ``export.json`` are then kept in
            ``out/earlier-split-<UTC time>/``, and a note counts the items that changed split.

    Raises:
        ExportError: Unknown format, a rubric without labels, an unreadable video or an item the
            rubric cannot be rendered for (named with the manifest and item), or nothing labelled
            (or nothing left once ``exclude_clips_of``'s clips are out), or without ``force`` an
            earlier export in ``out`` with another split (counting the items that change split).
        ManifestError: ``exclude_clips_of`` cannot be read.
    """
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    try:
        rubs = [get_rubric(r) for r in rubrics]
    except UnknownNameError as exc:
        raise ExportError(str(exc.args[0]) if exc.args else str(exc)) from None
    if not rubs:
        raise ExportError("no rubric given; use --rubric pa,ia")
    twice = [r.id for k, r in enumerate(rubs) if r.id in {q.id for q in rubs[:k]}]
    if twice:  # each record would be written twice, and a model trained on it would see it twice
        raise ExportError(f"rubric {twice[0]!r} is given twice; name each rubric once")
    bench = _benchmark_clips(exclude_clips_of) if exclude_clips_of is not None else None
    root = Path(out)
    _check_out(root, labels if project is None else None, project=project is not None)
    unreadable = None  # why the earlier export's split files could not be read (replaced only with force)
    try:
        earlier = _earlier_splits(root)
    except ExportError as exc:
        if not force:
            raise ExportError(f"{exc}: the earlier export in --out {root} cannot be read to compare its "
                              "split with this one's; export into another folder, or pass --force to replace "
                              f"it (its split files and {EXPORT_FILE} are then kept in "
                              f"{root / EARLIER_SPLIT_PREFIX}<time>/)") from None
        unreadable, earlier = str(exc), {}
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    for left in [*root.glob(".export-*"), *root.glob(".replaced-*")]:  # of an export killed half-way
        shutil.rmtree(left, ignore_errors=True)
    stage = Path(tempfile.mkdtemp(prefix=".export-", dir=root))
    try:
        summary = _write_export(labels, rubs, root, stage, fmt=fmt, judge=judge, frames=frames,
                                fractions=fractions, seed=seed, project=project, bench=bench,
                                include_disputed=include_disputed, earlier=earlier, force=force)
        if unreadable is not None:
            aside = _keep_earlier_split(root)
            summary = replace(summary, earlier_split=aside, notes=[*summary.notes, (
                f"the earlier export in this folder could not be read ({unreadable}; --force): its split "
                f"files and {EXPORT_FILE} are kept in {aside}")])
        elif summary.resplit:
            aside = _keep_earlier_split(root)
            moves = _moves(summary.resplit, earlier, _splits_of(stage))
            summary = replace(summary, earlier_split=aside, notes=[*summary.notes, (
                f"{len(summary.resplit)} item(s) changed split from the earlier export in this folder "
                f"({moves}; --force): its split files and {EXPORT_FILE} are kept in {aside}; a checkpoint "
                f"trained on it was trained on the items of {aside / 'train.jsonl'}")])
        _move_into_place(stage, root, replace_labels=project is not None)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):
                root.rmdir()  # only if the failed export left it empty
        raise
    shutil.rmtree(stage, ignore_errors=True)
    return summary


_MANAGED = (*(f"{s}.jsonl" for s in SPLITS), "frames", EXPORT_FILE, "README.md", "dataset_info.json")
"""The files and folders of an export; an earlier export's are replaced by (or removed for) a new one."""


def _earlier_splits(root: Path) -> dict[str, str]:
    """The split of each item in the export already in ``root`` (empty without one), from its records.

    Raises:
        ExportError: A record file of it that is not JSON Lines (naming the file and line).
    """
    return _splits_of(root) if (root / EXPORT_FILE).is_file() else {}


def _splits_of(folder: Path) -> dict[str, str]:
    """The split of each item whose records ``folder``'s split files hold."""
    out: dict[str, str] = {}
    for s in SPLITS:
        path = folder / f"{s}.jsonl"
        if path.is_file():
            for _, rec in jsonl_records(path, ExportError):
                if isinstance(rec, dict) and isinstance(rec.get("item_id"), str):
                    out.setdefault(rec["item_id"], s)
    return out


def _split_changes(earlier: Mapping[str, str], split_of: Mapping[str, str]) -> list[str]:
    """The items both exports hold whose split differs, sorted."""
    return sorted(i for i, s in split_of.items() if i in earlier and earlier[i] != s)


def _moves(moved: Sequence[str], earlier: Mapping[str, str], now: Mapping[str, str]) -> str:
    """The first few of ``moved`` as ``item train -> test``."""
    shown = [f"{i} {earlier[i]} -> {now.get(i, '?')}" for i in moved[:3]]
    return "first: " + ", ".join(shown) + (", ..." if len(moved) > 3 else "")


def _keep_earlier_split(root: Path) -> Path:
    """Copy the split files and ``export.json`` of the export in ``root`` into a new
    ``earlier-split-<UTC time>`` folder there; returns it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = root / f"{EARLIER_SPLIT_PREFIX}{stamp}"
    n = 1
    while aside.exists():
        n += 1
        aside = root / f"{EARLIER_SPLIT_PREFIX}{stamp}-{n}"
    aside.mkdir()
    for name in (*(f"{s}.jsonl" for s in SPLITS), EXPORT_FILE):
        if (root / name).is_file():
            shutil.copy2(root / name, aside / name)
    return aside


def _check_out(root: Path, manifest: str | Path | None, *, project: bool = False) -> None:
    """Refuse an output folder whose export files a new export would replace but no export wrote (no
    ``export.json``: a suite's own ``frames/`` or ``README.md``; with ``project``, a ``labels.jsonl``
    too), or that holds the labels manifest among them.

    Raises:
        ExportError: Naming the folder and what it would replace.
    """
    if not root.is_dir():
        return
    if manifest is not None:
        where = Path(manifest).resolve()
        for name in _MANAGED:
            target = (root / name).resolve()
            if where == target or target in where.parents:
                raise ExportError(f"--out {root}: the export would replace {root / name}, which holds the "
                                  f"labels manifest {manifest}; choose another folder")
    if (root / EXPORT_FILE).is_file():
        return  # an earlier export: its files are replaced
    present = [name for name in (*_MANAGED, *([LABELS_FILE] if project else [])) if (root / name).exists()]
    if present:
        raise ExportError(f"--out {root}: holds {', '.join(present)} that no robojudge export wrote (no "
                          f"{EXPORT_FILE}), and an export replaces them; choose an empty or new folder")


def _digest(stage: Path) -> str:
    """SHA-256 over the export's record files and frames, by relative path."""
    h = hashlib.sha256()
    skip = (EXPORT_FILE, "README.md")
    for path in sorted(p for p in stage.rglob("*") if p.is_file() and p.name not in skip):
        h.update(path.relative_to(stage).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _move_into_place(stage: Path, root: Path, *, replace_labels: bool) -> None:
    """Move the finished export in ``stage`` into ``root``: each managed name an earlier export left is
    moved aside first and deleted last, so no moment has new records with old frames."""
    names = [*_MANAGED, LABELS_FILE] if replace_labels else list(_MANAGED)
    aside = Path(tempfile.mkdtemp(prefix=".replaced-", dir=root))
    try:
        for name in names:
            if (root / name).exists():
                os.replace(root / name, aside / name)
        for name in names:
            if (stage / name).exists():
                os.replace(stage / name, root / name)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def _write_export(
    labels: str | Path,
    rubs: Sequence[Rubric],
    root: Path,
    stage: Path,
    *,
    fmt: str,
    judge: JudgeConfig | None,
    frames: FrameSpec | None,
    fractions: Mapping[str, float] | None,
    seed: int,
    project: str | None,
    bench: tuple[Path, frozenset[str]] | None = None,
    include_disputed: bool = False,
    earlier: Mapping[str, str] | None = None,
    force: bool = False,
) -> ExportSummary:
    """The export of :func:`export_training_data`, written into ``stage`` (paths in it relative to
    ``stage``, as they will be to ``root``); its summary names ``root``. ``bench``: a benchmark
    manifest and its clip ids, whose items are left out (:func:`_benchmark_clips`). ``earlier``: the
    split of each item of the export already in ``root``; one that differs is refused unless
    ``force`` (before any frame is written)."""
    disputed: list[str] = []
    if project is not None:
        labels, disputed = _annotation_labels(labels, project, stage, include_disputed)
    suite = load_suite(labels)
    marked_disputed = [it.item_id for it in suite.items if disputed_axes(it)]
    named = root / LABELS_FILE if project is not None else suite.path  # where the manifest will be
    frames_dir = (root / "frames").resolve()
    for it in suite.items:  # a suite whose videos are frame folders under --out/frames
        for used in it.file_fields().values():
            if frames_dir in Path(used).resolve().parents:
                raise ExportError(f"--out {root}: the export would replace {root / 'frames'}, which holds "
                                  f"{used}, a file of item {it.item_id!r}; choose another folder")
    config = judge or make_judge({"name": "export", "backend": "hf"})
    spec = frames or FrameSpec()
    fracs = dict(DEFAULT_FRACTIONS if fractions is None else fractions)
    notes = []
    candidates = suite.items
    if marked_disputed and not include_disputed:  # as the --project route: no final label yet
        disputed = [*disputed, *marked_disputed]
        candidates = [it for it in suite.items if not disputed_axes(it)]
    elif marked_disputed:
        first = ", ".join(marked_disputed[:3]) + (", ..." if len(marked_disputed) > 3 else "")
        notes.append(f"{len(marked_disputed)} item(s) carry labels a cross-review disputes (meta.annotation."
                     f"disputed; first: {first}): exported with their primary labels (--include-disputed)")
    scored = {r.id: [it for it in candidates if label_score(it, r) is not None] for r in rubs}
    labelled = [it for it in candidates if any(it in scored[r.id] for r in rubs)]
    if not labelled and marked_disputed and not include_disputed:
        raise ExportError(f"{named}: every labelled item is disputed ({len(marked_disputed)} item(s) whose "
                          "meta.annotation.disputed lists an axis): adjudicate them, or pass "
                          "--include-disputed to train on their primary labels")
    if not labelled:
        raise ExportError(f"{named}: no item has a {' or '.join(r.id for r in rubs)} label")
    excluded: list[str] = []
    if bench is not None:
        where, bench_clips = bench
        excluded = [it.item_id for it in labelled if it.clip_id and it.clip_id in bench_clips]
        clips = sorted({it.clip_id for it in labelled if it.clip_id and it.clip_id in bench_clips})
        listed = ", ".join(clips[:5]) + (", ..." if len(clips) > 5 else "")
        labelled = [it for it in labelled if not (it.clip_id and it.clip_id in bench_clips)]
        if not labelled:
            raise ExportError(f"{named}: every labelled item is of a clip of {where} (--exclude-clips-of: "
                              f"{len(clips)} clip(s), {listed}); nothing is left to train on")
        if excluded:
            notes.append(f"left out {len(excluded)} labelled item(s) of {len(clips)} clip(s) that {where} "
                         f"holds (--exclude-clips-of): {listed}")
        else:
            notes.append(f"no labelled item is of a clip of {where} ({len(bench_clips)} clip(s); "
                         "--exclude-clips-of): nothing left out")
    split_of = assign_splits(labelled, fracs, seed)
    resplit = _split_changes(earlier or {}, split_of)
    if resplit and not force:
        assert earlier is not None
        common = sum(1 for i in split_of if i in earlier)
        trained = sum(1 for i in resplit if earlier[i] == "train")
        new = len(split_of) - common
        grown = (f"; this export holds {new} item(s) the earlier one did not, and added clips move some "
                 "others (docs/training.md)") if new else ""
        raise ExportError(
            f"--out {root}: holds an earlier export that put {len(resplit)} of the {common} items both hold "
            f"into another split ({_moves(resplit, earlier, split_of)}), {trained} of them out of its train "
            f"split{grown} (another seed, --val or --test, other items, or an export by an older robojudge, "
            "which split otherwise): a judge trained on it and evaluated on this export's val or test split "
            "would be scored on items it was trained on. Export into another folder, or pass --force to "
            f"replace it (its split files and {EXPORT_FILE} are then kept in "
            f"{root / EARLIER_SPLIT_PREFIX}<time>/)")
    notes += _empty_split_notes(labelled, split_of, fracs)
    if disputed:
        from robojudge.annotate import DISAGREEMENT

        first = ", ".join(disputed[:3]) + (", ..." if len(disputed) > 3 else "")
        how = (" (meta.annotation.disputed; --include-disputed exports their primary labels)"
               if marked_disputed and not include_disputed else "")
        notes.append(f"{len(disputed)} item(s) left out, they await an adjudication (a cross-review "
                     f"{DISAGREEMENT} points or more off the primary label on PA or IA; first: "
                     f"{first}){how}: assign adjudications (robojudge annotate assign --kind adjudicate)")
    loose = [it.item_id for it in labelled if not it.clip_id]
    if loose:
        notes.append(f"{len(loose)} item(s) have no clip_id ({', '.join(loose[:3])}"
                     f"{', ...' if len(loose) > 3 else ''}): each is its own clip, so rollouts of one source "
                     "clip may land in two splits; give them a clip_id")
    marked = Counter(it.split for it in labelled if it.split)
    if marked:
        notes.append("the manifest's split field (" + ", ".join(f"{k} {v}" for k, v in sorted(marked.items()))
                     + ") is not used: the export splits by clip itself (--val, --test, --seed)")
    records: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    counts: dict[str, Counter[tuple[str, str]]] = {s: Counter() for s in SPLITS}
    for it in labelled:
        sampled = _sample(named, it, spec)
        folder = stage / "frames" / _safe_name(it.item_id)
        shown = thinned(sampled.frames, config.max_images)
        frame_paths = [p.relative_to(stage).as_posix() for p in write_frames(shown, folder)]
        rate = shown_rate(sampled, config.max_images)  # what the hf judge tells its processor
        for r in rubs:
            score = label_score(it, r)
            if score is None:
                continue
            try:
                request = judge_request(config, r, it.instruction, sampled)
            except ValueError as exc:
                raise ExportError(f"{named}: item {it.item_id!r}, field instruction: {exc}") from None
            image = frame_paths[0] if request.first_frame_label else None
            prompt = chat_messages(request, video=frame_paths, image=image)
            evidence = it.labels.evidence if it.labels is not None else None
            split = split_of[it.item_id]
            source, generator = source_key(it), it.generator or "unknown"
            meta = {"id": f"{it.item_id}:{r.id}", "item_id": it.item_id, "clip_id": clip_key(it),
                    "source": source, "generator": generator, "rubric": r.id, "score": score, "split": split,
                    "fps": rate}
            if axes := disputed_axes(it):  # (only with include_disputed: a primary label, not a final one)
                meta["disputed"] = axes
            reply = target_reply(r, score, evidence)
            records[split].append(make_record(fmt, prompt, reply, frame_paths, meta))
            counts[split].update([("source", source), ("generator", generator),
                                  ("score", f"{r.id}={score}")])
    notes += _one_class_notes(records["train"], rubs)
    files = []
    for s in SPLITS:
        if records[s]:
            with (stage / f"{s}.jsonl").open("w", encoding="utf-8") as f:
                for rec in records[s]:
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            files.append(root / f"{s}.jsonl")
    waiting = set(disputed)  # said in a note, not as a missing score
    left_out = {r.id: [it.item_id for it in suite.items if label_score(it, r) is None
                       and it.item_id not in waiting] for r in rubs}  # (excluded items have a score)
    skipped = {r: len(ids) for r, ids in left_out.items()}
    if fmt == "llamafactory":
        (stage / "dataset_info.json").write_text(json.dumps(_dataset_info(files), indent=2) + "\n")
    summary = ExportSummary(root, {s: len(records[s]) for s in SPLITS}, skipped, files, counts, left_out,
                            notes, _digest(stage), disputed, excluded, resplit)
    meta_out = {"format": fmt, "rubrics": [r.id for r in rubs], "frames": spec.as_dict(),
                "max_images": config.max_images, "seed": seed, "fractions": fracs,
                "records": summary.records, "source": str(named), "digest": summary.digest}
    if bench is not None:
        meta_out["excluded_clips_of"] = str(bench[0])
        meta_out["excluded_items"] = len(excluded)
    (stage / EXPORT_FILE).write_text(json.dumps(meta_out, indent=2) + "\n")
    card = _card(summary, rubs, fmt, spec, config.max_images, named, seed, fracs)
    (stage / "README.md").write_text(card)
    return summary


def disputed_axes(item: Item) -> list[str]:
    """The axes a cross-review disputes on ``item``'s label, as ``robojudge annotate export
    --include-disputed`` marks them (``meta.annotation.disputed``); empty for a final label."""
    note = item.meta.get("annotation")
    axes = note.get("disputed") if isinstance(note, dict) else None
    return [str(a) for a in axes] if isinstance(axes, list) else []


def _empty_split_notes(labelled: Sequence[Item], split_of: Mapping[str, str],
                       fracs: Mapping[str, float]) -> list[str]:
    """A note for each requested held-out split (a share above 0) that no clip reached: every source is
    rounded to whole clips on its own, so many small sources can leave one empty."""
    clips = {clip_key(it): it for it in labelled}
    per_source = Counter(source_key(it) for it in clips.values())
    got = Counter(split_of[it.item_id] for it in clips.values())
    out = []
    for name in ("val", "test"):
        share = fracs.get(name, 0.0)
        if share > 0 and not got[name]:
            largest = max(per_source.values())
            out.append(f"the {name} split is empty: --{name} {share:g} of {len(clips)} clip(s) in "
                       f"{len(per_source)} source(s) rounds to no clip in any source (each source is cut on "
                       f"its own; the largest has {largest} clip(s), {largest * share:.2g} of a clip); "
                       f"raise --{name}, or give sources more clips")
    return out


def _one_class_notes(train: Sequence[Mapping[str, Any]], rubs: Sequence[Rubric]) -> list[str]:
    """A note for each rubric whose training records all hold one score: SFT learns a constant from
    them, and GRPO's exact-match reward gives every completion of a prompt the same advantage."""
    out = []
    for r in rubs:
        scores = Counter(rec["score"] for rec in train if rec["rubric"] == r.id)
        if len(scores) == 1:
            (value, n), = scores.items()
            out.append(f"{r.id}: every one of its {n} train record(s) has the score {value}: SFT learns a "
                       "constant, and GRPO's exact-match reward has nothing to tell apart; label more "
                       "varied items")
    return out


def _benchmark_clips(manifest: str | Path) -> tuple[Path, frozenset[str]]:
    """The clip ids of a benchmark manifest's items (read as results are: its files need not exist).

    Raises:
        ManifestError: The manifest cannot be read.
    """
    suite = load_suite(manifest, strict=False, files="optional")
    return Path(manifest), frozenset(it.clip_id for it in suite.items if it.clip_id)


def _sample(manifest: Path, item: Item, spec: FrameSpec) -> SampledFrames:
    try:  # what the judge is sent of the item: a grid item's main-view cell, as the judge runner sends it
        return decode_frames(item.video, spec, cell=judged_input(item, spec).cell)
    except (VideoError, OSError) as exc:
        raise ExportError(f"{manifest}: item {item.item_id!r}, field video: {exc}") from None
