"""Stand-in accelerated generators: a dense generator's rollouts post-processed, with nominal costs.

There is no accelerated world model to run here, so the audit is shown end to end on stand-ins whose
degradation and cost are known by construction, each the dense rollout changed the way a family of
acceleration methods tends to change it (RoboWorM, Fig. 5):

* ``interp<k>``: keep every k-th frame (and the last), rebuild the others by linear blending of the
  kept neighbours -- generating 1/k of the frames (fewer denoising passes), frame interpolation in
  between. Same frame count as dense. Nominal cost: dense seconds / k, dense steps / k.
* ``lowres<f>``: render at 1/f of the width and height (area averaging), upscale back bilinearly --
  fewer tokens per frame. Nominal cost: dense seconds / f^2, same steps.
* ``chunk<c>``: the rollout generated in chunks of c frames that each drift by a small offset
  (``drift`` pixels right and half that down per chunk, accumulated; edges replicated) -- an
  autoregressive rollout with a short context. Nominal cost: attention over a chunk instead of the
  whole rollout, taken as half of the compute: dense seconds x (0.5 + 0.5 c / frames), same steps.

The dense cost is the dense item's ``meta.generation_seconds`` / ``meta.denoising_steps`` when it has
them, else nominally :data:`NOMINAL_SECONDS_PER_FRAME` per frame and :data:`NOMINAL_STEPS` steps.
Stand-ins drop the dense item's labels (the planted labels describe the dense rollout, not the
post-processed one).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from robojudge._csv import SafeCsvWriter
from robojudge._files import refuse_linked_folders, replacing
from robojudge.suite import Item, load_suite
from robojudge.video import probe_video, sample_frames, write_video

NOMINAL_SECONDS_PER_FRAME = 1.0
NOMINAL_STEPS = 50
DEFAULT_METHODS = ("interp2", "interp4", "lowres2", "lowres4", "chunk8")
#: Path fields of an item that are copied along with it.
_PATH_FIELDS = ("video", "initial_frame", "reference_video", "state", "joint_states", "calibration")
_METHOD = re.compile(r"^(interp|lowres|chunk)(\d+)$")


def drop_and_interpolate(frames: np.ndarray, every: int) -> np.ndarray:
    """Keep frames ``0, every, 2 every, ...`` and the last; fill the rest by linear blending.

    >>> f = np.arange(5, dtype=np.uint8).reshape(5, 1, 1, 1) * 10
    >>> drop_and_interpolate(f, 2)[:, 0, 0, 0].tolist()
    [0, 10, 20, 30, 40]
    >>> drop_and_interpolate(np.array([0, 7, 0, 9, 40], np.uint8).reshape(5, 1, 1, 1), 4)[:, 0, 0, 0].tolist()
    [0, 10, 20, 30, 40]
    """
    if every < 1:
        raise ValueError(f"keep every k-th frame needs k >= 1, got {every}")
    n = len(frames)
    kept = sorted({*range(0, n, every), n - 1})
    out = np.empty_like(frames)
    src = frames.astype(np.float32)
    for a, b in zip(kept, kept[1:], strict=False):
        for i in range(a, b + 1):
            t = (i - a) / (b - a)
            out[i] = np.clip(np.rint((1 - t) * src[a] + t * src[b]), 0, 255).astype(frames.dtype)
    if len(kept) == 1:
        out[:] = frames
    return out


def low_resolution(frames: np.ndarray, factor: int) -> np.ndarray:
    """Downscale each frame by ``factor`` (area averaging) and upscale back (bilinear)."""
    if factor < 1:
        raise ValueError(f"downscale factor must be >= 1, got {factor}")
    h, w = frames.shape[1:3]
    small = (max(1, w // factor), max(1, h // factor))
    return np.stack([cv2.resize(cv2.resize(f, small, interpolation=cv2.INTER_AREA), (w, h),
                                interpolation=cv2.INTER_LINEAR) for f in frames])


def chunk_drift(frames: np.ndarray, chunk: int, drift: float = 2.0) -> np.ndarray:
    """Shift chunk ``c`` (frames ``c chunk`` to ``(c+1) chunk - 1``) by ``c drift`` px right and
    ``c drift / 2`` px down, edges replicated."""
    if chunk < 1:
        raise ValueError(f"chunk length must be >= 1, got {chunk}")
    h, w = frames.shape[1:3]
    out = np.empty_like(frames)
    for i, f in enumerate(frames):
        c = i // chunk
        m = np.array([[1, 0, c * drift], [0, 1, c * drift / 2]], dtype=np.float32)
        out[i] = cv2.warpAffine(f, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out


@dataclass(frozen=True)
class StandIn:
    """One stand-in method: its name, kind and parameter."""

    name: str
    kind: str
    param: int

    @classmethod
    def parse(cls, name: str) -> StandIn:
        m = _METHOD.match(name)
        if not m or int(m.group(2)) < 1:
            raise ValueError(f"unknown stand-in method {name!r}: use interp<k>, lowres<f> or chunk<c> "
                             "with a positive integer (e.g. interp2, lowres4, chunk8)")
        return cls(name, m.group(1), int(m.group(2)))

    def apply(self, frames: np.ndarray, drift: float) -> np.ndarray:
        if self.kind == "interp":
            return drop_and_interpolate(frames, self.param)
        if self.kind == "lowres":
            return low_resolution(frames, self.param)
        return chunk_drift(frames, self.param, drift)

    def cost(self, seconds: float, steps: float, frames: int) -> tuple[float, float]:
        """Nominal (seconds, steps) of one rollout given the dense one's."""
        if self.kind == "interp":
            return seconds / self.param, steps / self.param
        if self.kind == "lowres":
            return seconds / self.param**2, steps
        return seconds * (0.5 + 0.5 * min(self.param, frames) / max(frames, 1)), steps


def _copy(src: Path, root: Path, out: Path) -> str:
    """Copy ``src`` into ``out`` under its path relative to ``root`` (its name when outside)."""
    try:
        rel = src.relative_to(root)
    except ValueError:
        rel = Path("external") / src.name
    dst = out / rel
    if not dst.exists():
        refuse_linked_folders(out, dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    return rel.as_posix()


def _record(item: Item, paths: dict[str, str]) -> dict[str, Any]:
    rec = item.model_dump(mode="json", exclude_none=True)
    for f in _PATH_FIELDS:
        if f in rec:
            rec[f] = paths[rec[f]]
    if "views" in rec:
        rec["views"] = {k: paths[v] for k, v in rec["views"].items()}
    return rec


#: Fewest pixels a ``lowres<f>`` stand-in may keep on a frame's short side: below this the frame is a
#: few blurred colours, no longer a lower-resolution rollout.
MIN_LOWRES_SIDE = 4


def _check_factors(specs: Sequence[StandIn], items: Sequence[Item]) -> None:
    """Refuse a ``lowres<f>`` whose factor leaves fewer than :data:`MIN_LOWRES_SIDE` pixels on the
    short side of some video, before any file is written."""
    lowres = [s for s in specs if s.kind == "lowres"]
    if not lowres:
        return
    worst = max(lowres, key=lambda s: s.param)
    for it in items:
        for v in sorted({it.video, *(it.views or {}).values()}):
            info = probe_video(v)
            short = min(info.width, info.height)
            if short // worst.param < MIN_LOWRES_SIDE:
                raise ValueError(
                    f"{worst.name}: {v} is {info.width}x{info.height}, so 1/{worst.param} of it keeps "
                    f"{short // worst.param} px on its short side (at least {MIN_LOWRES_SIDE} needed); "
                    f"use lowres{max(1, short // MIN_LOWRES_SIDE)} or less")


def make_standins(manifest: str | Path, dense: str, out_dir: str | Path,
                  methods: Sequence[str] = DEFAULT_METHODS, *, drift: float = 2.0) -> Path:
    """Write a suite with ``dense``'s items and one stand-in generator per method; return its manifest.

    The output folder holds ``suite.jsonl`` (dense items copied with their files, then the stand-ins
    named ``<dense>-<method>``, items ``<dense item>-<method>``), the processed videos under
    ``standins/`` and ``timing.csv`` (generator, item, seconds, steps of every rollout, the nominal
    costs also written into each item's ``meta``). Other generators of the manifest are left out.

    ``out_dir`` is the user's folder: a file in it that is a link (a video, ``timing.csv``) is written
    where it points. A folder the command writes into (``standins/``, ``external/``, a video's folder)
    that is a link leading out of ``out_dir`` is refused (:class:`robojudge._files.LinkedFolderError`)
    before anything is written through it.

    Raises:
        ValueError: No item of ``dense``, an unknown method, a ``drift`` that is not a finite number, or
            a ``lowres<f>`` that would leave fewer than :data:`MIN_LOWRES_SIDE` pixels on the short side
            of a video.
        LinkedFolderError: A folder it writes into leads out of ``out_dir``.
    """
    if not math.isfinite(drift):
        raise ValueError(f"drift must be a finite number of pixels per chunk, got {drift}")
    specs = [StandIn.parse(m) for m in methods]
    if len({s.name for s in specs}) != len(specs):
        raise ValueError(f"methods repeat: {list(methods)}")
    src_manifest = Path(manifest)
    suite = load_suite(src_manifest)
    root = src_manifest.resolve().parent
    items = [it for it in suite.items if it.generator == dense]
    if not items:
        raise ValueError(f"{manifest}: no item has generator {dense!r}")
    _check_factors(specs, items)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    timing: list[list[Any]] = [["generator", "item", "seconds", "steps"]]
    for it in items:
        files = {p for f in _PATH_FIELDS if (p := getattr(it, f))} | set((it.views or {}).values())
        paths = {p: _copy(Path(p), root, out) for p in files}
        videos = sorted({it.video, *(it.views or {}).values()})
        decoded = {v: sample_frames(v, fps=None, max_frames=None) for v in videos}
        frames_n = len(decoded[it.video].indices)
        seconds = float(it.meta.get("generation_seconds", frames_n * NOMINAL_SECONDS_PER_FRAME))
        steps = float(it.meta.get("denoising_steps", NOMINAL_STEPS))
        base = _record(it, paths)
        base["meta"] = {**base.get("meta", {}), "generation_seconds": seconds, "denoising_steps": steps}
        records.append(base)
        timing.append([dense, it.item_id, f"{seconds:g}", f"{steps:g}"])
        for spec in specs:
            new_paths = dict(paths)
            for v, clip in decoded.items():
                if clip.frames is None:
                    raise ValueError(f"{v}: no frames decoded")
                rel = Path("standins") / spec.name / paths[v]
                refuse_linked_folders(out, out / rel)  # (standins/ linked elsewhere: nothing written there)
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                write_video(out / rel, spec.apply(clip.frames, drift), fps=clip.source_fps)
                new_paths[v] = rel.as_posix()
            rec = _record(it, new_paths)
            rec.pop("labels", None)
            s, k = spec.cost(seconds, steps, frames_n)
            gen = f"{dense}-{spec.name}"
            rec.update(item_id=f"{it.item_id}-{spec.name}", generator=gen)
            rec["meta"] = {**rec.get("meta", {}), "generation_seconds": s, "denoising_steps": k,
                           "accelerates": dense, "acceleration": spec.name, "standin_of": it.item_id}
            records.append(rec)
            timing.append([gen, rec["item_id"], f"{s:g}", f"{k:g}"])
    path = out / "suite.jsonl"
    with replacing(out, named=True) as staged:  # both whole or the old ones untouched; the manifest last
        # Quoted and escaped as every robojudge CSV: an id holding a comma, or one a spreadsheet would run
        with staged.open(out / "timing.csv", newline="") as fh:
            SafeCsvWriter(fh, lineterminator="\n").writerows(timing)
        staged.write_text(path, "".join(json.dumps(r) + "\n" for r in records))
    return path
