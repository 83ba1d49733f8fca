"""Validate KIVA per 16-frame segment against the simulator's planted kinematic failures (issue 15, item 5).

For each robot (``fetch``, ``adroit``, and the opt-in ``aloha`` and ``franka``) this builds, or reuses, a
simulator suite with the profiles ``oracle``, ``kin_mild`` and ``kin_severe`` (docs/sim_suite.md), trains a
KIVA reader on its reference and faithful episodes and calibrates it on its references
(``robojudge.kiva``), then scores every rollout segment by segment:

* KIVA's own per-segment score (``details.segments[].score`` of the ``kiva`` metric: the larger of
  rigidity / threshold and jerk / threshold), and its two parts;
* every weights-free video metric (provider ``computed``) on the segment as a clip of its own: the
  segment's frames (and the reference's same frames) are written as PNG frame folders and scored with
  :func:`robojudge.run.score_suite`.

Then it compares each with the planted verdicts (``meta.segments``) with :mod:`robojudge.meta`'s segment
statistics: Spearman's rho per robot, macro and micro (with 95% intervals from a paired cluster bootstrap
over clips, and each metric's rho minus KIVA's), the calibrated three-band overlap over 1,000
calibration draws (RoboWorM Table D4), and KIVA per video by rollout depth and by regime (Table C4).
With ``--judge-backend`` (and ``--judge-model``, ``--judge-base-url``, ``--judge-api-key-env``), a VLM judges
every segment clip too, with ``scripts/kiva_kinematic_rubric.toml`` (Bad, Medium, Good stored as 1, 2, 3) over
``--judge-samples`` turns (default 3); the stored value is the majority verdict, a column ``vlm`` in both
tables, and the share of segments whose verdict is the planted one is reported beside them (RoboWorM
App. D, Tables D2 and D4).

Rerun (MuJoCo needs ``MUJOCO_GL=egl``; everything is cached under ``--root``)::

    MUJOCO_GL=egl .venv/bin/python scripts/kiva_validation.py --root runs/kiva_validation \\
        --robots fetch,adroit --out docs/kiva_validation.md

``--suite ROBOT=DIR`` reuses a suite folder built elsewhere (its reader goes to ``DIR/reader`` unless
``--reader ROBOT=PATH`` names one). ``--prepare-only`` stops after building, training and calibrating.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Scenes per robot (scene keys of robojudge.suite.sim).
SCENES: dict[str, tuple[str, ...]] = {
    "fetch": ("pick_and_place", "push", "slide"),
    "adroit": ("relocate",),
    "aloha": ("transfer_cube",),
    "franka": ("panda_pick_and_place",),
}
PROFILES = ("oracle", "kin_mild", "kin_severe")
#: Changes when KIVA's per-segment values would: cached segment rows of another measure are recomputed.
MEASURE = ("7: lead jerk windows, relative link lengths, per-part scales, finger check with the fingers' "
           "gap, held frames")


#: The VLM column's rubric (Bad 1, Medium 2, Good 3) and how a segment clip is shown to the judge: all 16
#: frames (the judges' default of 4 frames a second would show 6, too few to see a jitter or a jump).
RUBRIC = Path(__file__).with_name("kiva_kinematic_rubric.toml")
JUDGE_FRAMES: dict[str, Any] = {"fps": None, "max_frames": 16}
VLM = "vlm"

#: KIVA's columns, in table order (all oriented higher-is-worse).
KIVA_COLUMNS = ("kiva", "kiva_rigidity", "kiva_jerk", "kiva_finger", "kiva_no_finger", "kiva_v3", "kiva_v2",
                "kiva_true_keypoints", "kiva_true_keypoints_v3", "kiva_true_keypoints_v2")


def _log(msg: str, t0: float) -> None:
    print(f"[{time.time() - t0:7.0f} s] {msg}", flush=True)


def build_suite(folder: Path, robot: str, *, episodes: int, size: int, seed: int,
                rollout_depth: Sequence[int] | None = None, profiles: Sequence[Any] = PROFILES) -> Path:
    """Build (or reuse) ``robot``'s suite of :data:`PROFILES` (or of ``profiles``: names or
    ``Profile`` objects) in ``folder``; its manifest."""
    manifest = folder / "suite.jsonl"
    if not manifest.exists():
        from robojudge.suite.sim import make_sim_suite

        # Worker processes render, so this process never touches EGL before torch trains.
        make_sim_suite(folder, seed=seed, episodes=episodes, views=1, size=size, profiles=profiles,
                       scenes=SCENES[robot], workers=2, rollout_depth=rollout_depth)
    return manifest


#: The readers' default size, epochs, heatmap stride and heatmap loss (``--reader-size``, ``--epochs``,
#: ``--heatmap-stride``, ``--heatmap-loss``): the settings the page's first readers were trained with, kept
#: so that the folders of those readers keep their names. ``robojudge kiva train`` defaults differ (128 px,
#: stride 2, loss 0.01); other values name their folders.
READER_SIZE, EPOCHS, STRIDE, HEATMAP_LOSS = 64, 30, 4, 0.0


def reader_folder(root: Path, folder: Path, robot: str, train_seed: int | None, failures: bool,
                  mixed: bool = False, size: int = READER_SIZE, epochs: int = EPOCHS,
                  stride: int = STRIDE, heatmap_loss: float = HEATMAP_LOSS) -> Path:
    """Where a robot's reader goes unless ``--reader`` names one: beside the suite it trains on. A reader
    of another ``--reader-size`` or ``--epochs`` than the defaults (64, 30) gets them in its folder's name
    (``reader-s128-e10``), a heatmap stride of 2 adds ``-h2`` and a heatmap loss W ``-lW``, so readers of
    different settings never stand in for each other."""
    name = "reader-mixed" if mixed else "reader-failures" if failures else "reader"
    if (size, epochs) != (READER_SIZE, EPOCHS):
        name += f"-s{size}-e{epochs}"
    if stride != STRIDE:
        name += f"-h{stride}"
    if heatmap_loss != HEATMAP_LOSS:
        name += f"-l{heatmap_loss:g}"
    return folder / name if train_seed is None else root / "train" / f"{robot}-seed{train_seed}" / name


def mixed_manifest(judged: Path, failures: Path, out: Path, prefix: str, keep_first: bool = False) -> Path:
    """A training manifest: ``judged``'s faithful rollouts with their references (what the readers train on
    by default) and ``failures``' rollouts with planted failures, without their references.

    Paths become absolute; the second suite's item and clip ids get ``prefix`` (both suites name their
    clips alike), so its clips stay groups of their own when clips are held out. ``keep_first``: every row
    of ``judged``, its rollouts with planted failures too (a training suite joined with extra failure
    rollouts, as ``kiva_read_levers.py links`` does).
    """
    rows = []
    for source, first in ((judged, True), (failures, False)):
        for line in source.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            planted = bool(r.get("meta", {}).get("failures"))
            if not ((keep_first or not planted) if first else planted):
                continue
            if not first:
                r.pop("reference_video", None)
                r["item_id"], r["clip_id"] = prefix + r["item_id"], prefix + r["clip_id"]
            for k in ("video", "reference_video", "state"):
                if r.get(k):
                    r[k] = str((source.parent / r[k]).resolve())
            r["views"] = {v: str((source.parent / x).resolve()) for v, x in (r.get("views") or {}).items()}
            rows.append(r)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out


def prepare(robot: str, folder: Path, reader_dir: Path, *, episodes: int, size: int, seed: int,
            reader_size: int, epochs: int, threads: int, t0: float, stride: int = STRIDE,
            heatmap_loss: float = HEATMAP_LOSS,
            rollout_depth: Sequence[int] | None = None, train_folder: Path | None = None,
            train_seed: int | None = None, failures: bool = False, mixed: bool = False,
            given: bool = False) -> tuple[Path, Path]:
    """Build (or reuse) the suite and train and calibrate (or reuse) its reader; ``(manifest, reader.pt)``.

    The reader is calibrated on this suite's references unless its stored calibration already comes from
    this suite's manifest (a reader calibrated on another suite is calibrated again, never judged with the
    other suite's thresholds). A ``given`` reader (``--reader``) is not written to: a copy of it in the
    suite's ``calibrated/`` folder is calibrated and used (:func:`calibrated_copy`).

    With ``train_folder`` the reader trains on another suite of the robot, built there with ``train_seed``
    (other episodes), and is calibrated on this suite's references. With ``failures`` it also trains on
    the training suite's rollouts with planted kinematic failures (``TrainConfig.failures``); with ``mixed``
    it trains on this suite's references and faithful rollouts and on only those failure rollouts of the
    training suite (:func:`mixed_manifest`).
    """
    manifest = build_suite(folder, robot, episodes=episodes, size=size, seed=seed,
                           rollout_depth=rollout_depth)
    _log(f"{robot}: suite {manifest}", t0)
    train_manifest = manifest
    if train_folder is not None:
        train_manifest = build_suite(train_folder, robot, episodes=episodes, size=size,
                                     seed=seed if train_seed is None else train_seed)
        _log(f"{robot}: training suite {train_manifest}", t0)
        if mixed:
            train_manifest = mixed_manifest(manifest, train_manifest, train_folder / "mixed.jsonl",
                                            f"s{train_seed}-")
    checkpoint = reader_dir / "reader.pt" if reader_dir.suffix != ".pt" else reader_dir
    if given:
        checkpoint = calibrated_copy(checkpoint, folder)
    if not checkpoint.exists():
        from robojudge.kiva import TrainConfig, train_reader

        facts = train_reader(train_manifest, robot, checkpoint.parent,
                             TrainConfig(size=reader_size, epochs=epochs, threads=threads, seed=seed,
                                         failures=failures, heatmap_stride=stride,
                                         heatmap_loss=heatmap_loss))
        _log(f"{robot}: reader trained, held-out {facts['held_out_error']}, train {facts['train_error']}", t0)
    if not calibrated_on(checkpoint, manifest):
        from robojudge.kiva import calibrate_reader

        cal = calibrate_reader(checkpoint, manifest, 95.0, seed)
        _log(f"{robot}: calibrated {cal}", t0)
    return manifest, checkpoint


def calibrated_on(checkpoint: Path, manifest: Path) -> bool:
    """Whether the reader at ``checkpoint`` holds thresholds calibrated on ``manifest``'s references."""
    from robojudge.kiva import load_reader

    reader = load_reader(checkpoint)
    stored = (reader.meta.get("calibration") or {}).get("manifest")
    return reader.thresholds is not None and stored == str(manifest.resolve())


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes (hex)."""
    import hashlib

    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def calibrated_copy(checkpoint: Path, folder: Path) -> Path:
    """A copy of the reader at ``checkpoint`` (``--reader``) in ``folder/calibrated/<its folder's name>``,
    made again whenever the reader's file has changed since (``source.json`` holds its path and SHA-256);
    the copy's ``reader.pt``. Calibrating a reader writes its thresholds into its checkpoint, so the
    script calibrates this copy and leaves the reader it was given as it was."""
    import shutil

    if not checkpoint.is_file():
        raise SystemExit(f"--reader {checkpoint.parent}: no reader.pt there; train one with "
                         "`robojudge kiva train`")
    source = {"reader": str(checkpoint.resolve()), "sha256": file_digest(checkpoint)}
    copy = folder / "calibrated" / checkpoint.resolve().parent.name
    stamp = copy / "source.json"
    if not (stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == source):
        if copy.exists():
            shutil.rmtree(copy)
        copy.mkdir(parents=True)
        for f in checkpoint.parent.iterdir():
            if f.is_file():
                shutil.copy2(f, copy / f.name)
        stamp.write_text(json.dumps(source) + "\n", encoding="utf-8")
    return copy / checkpoint.name


# ---------------------------------------------------------------------------------------------------
# Per-segment values


def _nan(x: Any) -> float:
    return math.nan if x is None else float(x)


def robot_items(manifest: Path, robot: str) -> list[Any]:
    """The manifest's rollouts of ``robot``'s scenes (a reused suite may hold other robots' too)."""
    from robojudge.suite import load_suite

    return [it for it in load_suite(manifest).items if it.task in SCENES[robot]]


def true_tracks(state: Path, keypoints: Sequence[str], main_view: str | None) -> tuple[Any, Any]:
    """The simulator's keypoints ``keypoints`` in the main view: ``(T, K, 2)`` pixels and visibility."""
    import numpy as np

    with np.load(state) as z:
        names = [str(x) for x in z["keypoint_names"]]
        views = [str(x) for x in z["view_names"]] if "view_names" in z.files else []
        view = views.index(main_view) if main_view in views else 0
        idx = [names.index(k) for k in keypoints]
        return z["keypoints_2d"][:, view, idx].astype(np.float64), z["keypoints_visible"][:, view, idx]


#: The measure of the ``kiva`` metric up to version 2 (a column for comparison): windows ending in the
#: segment, no finger check, held frames kept.
OLD_RULE: dict[str, Any] = {"window": "end"}


def reader_fingers(reader: Any) -> list[tuple[int, int, int]]:
    """The reader's finger pairs: those it stores, else the built-in robot's (readers trained before)."""
    from robojudge.kiva import FINGER_PAIRS, finger_indices

    stored = reader.meta.get("fingers")
    if stored is not None:
        return [(int(a), int(b), int(h)) for a, b, h in stored]
    return finger_indices(FINGER_PAIRS.get(reader.meta["robot"], ()), reader.meta["keypoints"])


def measure(new: bool, fingers: Sequence[tuple[int, int, int]], held: Any, relative: bool = False
            ) -> dict[str, Any]:
    """Keyword arguments of :func:`robojudge.kiva.segment_values` for version 3's measure (``new``; with
    ``relative``, the current one: version 6's relative link lengths and version 7's ``lead`` jerk
    windows) or the old one (:data:`OLD_RULE`)."""
    if not new:
        return {**OLD_RULE, "relative": False}
    return {"fingers": fingers, "held": held, "relative": relative,
            "window": "lead" if relative else "centre"}


def true_keypoint_values(state: Path, reader: Any, main_view: str | None, fps: float, diagonal: float,
                         **kw: Any) -> Any:
    from robojudge.kiva import segment_values

    pos, vis = true_tracks(state, reader.meta["keypoints"], main_view)
    return segment_values(pos, vis, reader.links, fps, diagonal, **kw)


def _failure_kind(f: dict[str, Any]) -> str:
    # A failure the main view never shows (the simulator's `visible` flag) leaves its segment Good.
    return str(f["type"]) + (" (unseen)" if f.get("visible") is False else "")


def segment_rows(facts: dict[str, Any], planted: Sequence[dict[str, Any]], result: Any,
                 true: dict[tuple[int, int], Any], old: Any = None,
                 true_old: dict[tuple[int, int], Any] | None = None, plain: Any = None,
                 v3: Any = None, true_v3: dict[tuple[int, int], Any] | None = None
                 ) -> list[dict[str, Any]]:
    """A row per planted segment: ``facts``, the verdict, KIVA's values (NaN and a reason where it has none).

    ``result`` is the video's :class:`robojudge.kiva.KivaResult`; ``true`` maps ``(start, stop)`` to the
    verdicts on the simulator's keypoints. ``old`` and ``true_old``: the same under the measure of metric
    version 2 (:data:`OLD_RULE`), ``v3`` and ``true_v3`` under version 3 (no per-part scales), for
    comparison; ``plain``: the current measure without the finger check.
    A planted segment KIVA does not judge (too short, or a video shorter than one segment) is kept with
    NaN values and the reason.
    """
    from robojudge.kiva import SEGMENT
    from robojudge.kiva._score import MIN_SEGMENT
    from robojudge.meta import too_short_reason

    kiva, _ = result.value("kiva")
    judged = {(v.values.start, v.values.stop): v for v in result.verdicts}
    judged_old = {} if old is None else {(v.values.start, v.values.stop): v for v in old.verdicts}
    judged_plain = {} if plain is None else {(v.values.start, v.values.stop): v for v in plain.verdicts}
    judged_v3 = {} if v3 is None else {(v.values.start, v.values.stop): v for v in v3.verdicts}
    rows = []
    for p in planted:
        span = (p["start"], p["stop"])
        v = judged.get(span)
        reason = None
        if v is None:
            short = too_short_reason(*span, SEGMENT if result.frames < SEGMENT else MIN_SEGMENT)
            reason = result.reason or short or f"KIVA judges no segment [{span[0]}, {span[1]})"
        elif not v.measured:
            reason = "no rigid link long enough to measure and no keypoint seen on 4 frames in a row"
        rows.append({
            **facts, "start": p["start"], "stop": p["stop"], "verdict": p["verdict"],
            "failures": [_failure_kind(f) for f in p.get("failures", [])],
            "kiva": math.nan if v is None else v.score,
            "kiva_rigidity": math.nan if v is None else v.values.rigidity,
            "kiva_jerk": math.nan if v is None else v.values.jerk,
            "kiva_finger": math.nan if v is None else v.values.finger,
            "kiva_v3": _nan(getattr(judged_v3.get(span), "score", None)),
            "kiva_v2": _nan(getattr(judged_old.get(span), "score", None)),
            "kiva_no_finger": _nan(getattr(judged_plain.get(span), "score", None)),
            "kiva_video": kiva, "reason": reason,
            "kiva_true_keypoints": _nan(getattr(true.get(span), "score", None)),
            "kiva_true_keypoints_v3": _nan(getattr((true_v3 or {}).get(span), "score", None)),
            "kiva_true_keypoints_v2": _nan(getattr((true_old or {}).get(span), "score", None)),
        })
    return rows


def kiva_segments(manifest: Path, checkpoint: Path, robot: str) -> list[dict[str, Any]]:
    """One row per planted segment of every rollout: its verdict and KIVA's values (NaN with a reason).

    Thresholds are recalibrated here, at the 95th percentile of the references' segments as the reader
    reads them (as ``calibrate_reader`` does: per-part scales first, then the thresholds), for the current
    measure and for the old ones (version 3 without the scales, version 2 :data:`OLD_RULE`): the reader's
    stored calibration may predate any of them.
    """
    from robojudge.kiva import (
        apply_scales,
        held_frames,
        judge_segments,
        judge_tracks,
        load_reader,
        percentile_thresholds,
        read_frames,
        reference_cuts,
        segment_values,
    )
    from robojudge.meta import verdict_levels
    from robojudge.video import sample_frames

    reader = load_reader(checkpoint)
    fingers = reader_fingers(reader)
    items = robot_items(manifest, robot)
    # Every reference is read once; KIVA on the simulator's true keypoints (a perfect reader) is
    # calibrated on the references' true keypoints: what the measure itself can do, apart from reading.
    # Keys: "now" the current measure (version 7: relative link lengths, lead windows), True version 3's
    # (pixel lengths, centre windows), False version 2's (OLD_RULE).
    kinds: dict[Any, tuple[bool, bool]] = {"now": (True, True), True: (True, False), False: (False, False)}
    read_vals: dict[Any, list[Any]] = {k: [] for k in kinds}
    true_vals: dict[Any, list[Any]] = {k: [] for k in kinds}
    for ref in sorted({it.reference_video for it in items if it.reference_video}):
        clip = sample_frames(manifest.parent / ref, fps=None, max_frames=None)
        h, w = clip.frames.shape[1:3]
        held = held_frames(clip.frames)
        tracks = read_frames(reader, clip.frames, clip.source_fps)
        for key, (new, relative) in kinds.items():
            kw = measure(new, fingers, held, relative)
            read_vals[key] += segment_values(tracks.positions, tracks.visible, reader.links, tracks.fps,
                                             tracks.diagonal, **kw)
            true_vals[key] += true_keypoint_values((manifest.parent / ref).with_suffix(".npz"), reader, None,
                                                   clip.source_fps, math.hypot(h, w), **kw)
    # Versions 2 and 3 had no finger gap: their columns are judged without its cut.
    cuts = {new: no_gap(percentile_thresholds(read_vals[new], 95.0)) for new in (True, False)}
    true_cuts = {new: no_gap(percentile_thresholds(true_vals[new], 95.0)) for new in (True, False)}
    scales, cuts4 = reference_cuts(read_vals["now"])
    true_scales, true_cuts4 = reference_cuts(true_vals["now"])
    rows = []
    for item in items:
        planted = item.meta.get("segments")
        if not planted:
            raise SystemExit(f"{manifest}: item {item.item_id} has no meta.segments "
                             "(a suite with kinematic profiles writes them)")
        verdict_levels([p["verdict"] for p in planted],
                       [f"{manifest}: item {item.item_id} segment {i}" for i in range(len(planted))])
        clip = sample_frames(manifest.parent / item.video, fps=None, max_frames=None)
        held = held_frames(clip.frames)
        tracks = read_frames(reader, clip.frames, clip.source_fps)
        tracks.held = None
        old = judge_tracks(tracks, reader.links, cuts[False], relative=False, **OLD_RULE)
        tracks.held = held
        result = judge_tracks(tracks, reader.links, cuts4, fingers=fingers, scales=scales)
        plain = judge_tracks(tracks, reader.links, cuts4, scales=scales)
        v3 = judge_tracks(tracks, reader.links, cuts[True], fingers=fingers, relative=False, window="centre")
        h, w = clip.frames.shape[1:3]
        true: dict[Any, dict[tuple[int, int], Any]] = {}
        for key, (new, relative) in kinds.items():
            vals = true_keypoint_values(manifest.parent / str(item.state), reader, item.main_view,
                                        clip.source_fps, math.hypot(h, w),
                                        **measure(new, fingers, held, relative))
            if key == "now":
                true4 = {(v.values.start, v.values.stop): v
                         for v in judge_segments(apply_scales(vals, true_scales), true_cuts4)}
            else:
                true[key] = {(v.values.start, v.values.stop): v for v in judge_segments(vals, true_cuts[key])}
        facts = {"item": item.item_id, "clip": item.clip_id, "generator": item.generator,
                 "regime": item.regime, "depth": item.meta.get("rollout_depth")}
        rows += segment_rows(facts, planted, result, true4, old, true[False], plain, v3, true[True])
    return rows


#: The measure's changes one at a time, on true keypoints (``--true-keypoints-only``): name and keywords
#: of :func:`robojudge.kiva.segment_values` (``fingers``/``held`` True: the robot's pairs / the video's
#: held frames).
ABLATION: dict[str, dict[str, Any]] = {
    "version 2 (windows ending in the segment)": {"window": "end"},
    "centre windows": {},
    "centre windows + held frames": {"held": True},
    "centre windows + finger check": {"fingers": True},
    "version 3: centre windows + held frames + finger check": {"fingers": True, "held": True},
    "windows ending in the segment + held frames + finger check": {"window": "end", "fingers": True,
                                                                   "held": True},
    "version 3 + jerk max over keypoints": {"fingers": True, "held": True, "jerk_reduce": "max"},
    "version 4: version 3 + per-part scales": {"fingers": True, "held": True, "scales": True},
    "version 5: version 4 + finger gap": {"fingers": True, "held": True, "scales": True, "gap": True},
    "version 6: version 5 + relative link lengths": {"fingers": True, "held": True, "scales": True,
                                                     "gap": True, "relative": True},
    "version 7: version 6 + lead jerk windows": {"fingers": True, "held": True, "scales": True, "gap": True,
                                                 "relative": True, "window": "lead"},
}


def no_gap(cuts: Any) -> Any:
    """``cuts`` without the finger gap's (the measure before version 5)."""
    from dataclasses import replace

    return replace(cuts, finger_gap=math.nan)


def window_errors(err: Any, visible: Any, names: Sequence[str], failures: Sequence[dict[str, Any]]
                  ) -> dict[str, list[float]]:
    """Read errors ``err`` (``(T, K)`` pixels) split by what the frames show: ``{"faithful": [...]}`` for a
    rollout without planted failures (every visible keypoint), else ``{type: [...]}`` over each failure's
    frames and the keypoints that show it (``detail.keypoints``; all of them when it names none). A
    failure the main view never shows is left out."""
    import numpy as np

    out: dict[str, list[float]] = {}
    if not failures:
        out["faithful"] = err[visible].tolist()
    for f in failures:
        if f.get("visible") is False:
            continue
        shown = [names.index(k) for k in f.get("detail", {}).get("keypoints", []) if k in names]
        cols = shown or list(range(len(names)))
        a, b = int(f["start"]), min(int(f["stop"]), len(err))
        out.setdefault(f["type"], []).extend(np.asarray(err[a:b][:, cols])[visible[a:b][:, cols]].tolist())
    return out


def read_errors(manifest: Path, checkpoint: Path, robot: str) -> dict[str, list[float]]:
    """Mean distance (video pixels) and count of a reader's reads from the simulator's keypoints, on
    faithful rollouts and inside each planted failure (:func:`window_errors`), over the suite's rollouts:
    ``{kind: [mean, n]}``. Does the reader follow a broken pose or read the nearest faithful one?"""
    import numpy as np

    from robojudge.kiva import load_reader, read_frames
    from robojudge.video import sample_frames

    reader = load_reader(checkpoint)
    names = reader.meta["keypoints"]
    pooled: dict[str, list[float]] = {}
    for item in robot_items(manifest, robot):
        clip = sample_frames(manifest.parent / item.video, fps=None, max_frames=None)
        tracks = read_frames(reader, clip.frames, clip.source_fps)
        pos, vis = true_tracks(manifest.parent / str(item.state), names, item.main_view)
        n = min(len(pos), len(tracks.positions))
        err = np.linalg.norm(tracks.positions[:n] - pos[:n], axis=-1)
        for kind, e in window_errors(err, vis[:n], names, item.meta.get("failures") or []).items():
            pooled.setdefault(kind, []).extend(e)
    return {k: [round(float(np.mean(v)), 2), len(v)] for k, v in pooled.items() if v}


def true_keypoint_ablation(manifest: Path, robot: str) -> dict[str, dict[str, float]]:
    """Spearman's rho per variant of :data:`ABLATION` on the simulator's keypoints (no reader needed), and
    the segments flagged among the Good ones: ``{variant: {"rho": .., "n": .., "good_flagged": ..}}``.

    Thresholds at the 95th percentile of the references' true keypoints, as in :func:`kiva_segments`.
    """
    import numpy as np

    from robojudge.kiva import (
        apply_scales,
        finger_indices,
        held_frames,
        judge_segments,
        percentile_thresholds,
        reference_cuts,
        resolve_robot,
        segment_values,
    )
    from robojudge.meta import segment_spearman, verdict_levels
    from robojudge.video import sample_frames

    bot = resolve_robot(robot)
    names = list(bot.keypoints)
    pos = {k: i for i, k in enumerate(names)}
    links = [(pos[a], pos[b]) for a, b in bot.links or ()]
    fingers = finger_indices(bot.fingers, names)
    items = robot_items(manifest, robot)

    def load(video: Path, state: Path, view: str | None) -> tuple[Any, Any, float, float, Any]:
        clip = sample_frames(video, fps=None, max_frames=None)
        h, w = clip.frames.shape[1:3]
        p, v = true_tracks(state, names, view)
        return p, v, float(clip.source_fps), math.hypot(h, w), held_frames(clip.frames)

    refs = [load(manifest.parent / r, (manifest.parent / r).with_suffix(".npz"), None)
            for r in sorted({it.reference_video for it in items if it.reference_video})]
    rolls = [(it, load(manifest.parent / it.video, manifest.parent / str(it.state), it.main_view))
             for it in items]
    out = {}
    for name, opts in ABLATION.items():
        def kw(held: Any, opts: dict[str, Any] = opts) -> dict[str, Any]:
            return {"window": opts.get("window", "centre"), "fingers": fingers if opts.get("fingers") else (),
                    "held": held if opts.get("held") else None,
                    "jerk_reduce": opts.get("jerk_reduce", "mean"), "relative": bool(opts.get("relative"))}

        ref_vals = [v for p, vis, fps, diag, held in refs for v in segment_values(p, vis, links, fps, diag,
                                                                                     **kw(held))]
        scales, cuts = (reference_cuts(ref_vals) if opts.get("scales")
                        else (None, percentile_thresholds(ref_vals, 95.0)))
        if not opts.get("gap"):
            cuts = no_gap(cuts)

        def scaled(values: list[Any], scales: Any = scales) -> list[Any]:
            return values if scales is None else apply_scales(values, scales)

        scores, verdicts = [], []
        for it, (p, vis, fps, diag, held) in rolls:
            judged = {(v.values.start, v.values.stop): v
                      for v in judge_segments(scaled(segment_values(p, vis, links, fps, diag, **kw(held))),
                                              cuts)}
            for seg in it.meta["segments"]:
                v = judged.get((seg["start"], seg["stop"]))
                scores.append(math.nan if v is None else v.score)
                verdicts.append(seg["verdict"])
        levels = verdict_levels(verdicts)
        rho = segment_spearman(np.asarray(scores), levels, [robot] * len(levels)).groups[robot]
        good = levels == 0
        out[name] = {"rho": rho.rho, "n": rho.n, "good_flagged": int(np.sum(np.asarray(scores)[good] > 1)),
                     "good": int(good.sum())}
    return out


def render_ablation(result: dict[str, dict[str, dict[str, float]]]) -> str:
    """The ablation as a Markdown table: rho per robot and macro, Good segments flagged."""
    robots = list(result)
    variants = list(next(iter(result.values()))) if result else []
    lines = ["| measure (true keypoints) | " + " | ".join(robots) + " | macro | Good flagged |",
             "| --- | " + " | ".join("---:" for _ in robots) + " | ---: | ---: |"]
    for name in variants:
        rhos = [result[r][name]["rho"] for r in robots]
        good = sum(int(result[r][name]["good_flagged"]) for r in robots)
        total = sum(int(result[r][name]["good"]) for r in robots)
        macro = sum(rhos) / len(rhos) if rhos else math.nan
        cells = " | ".join(_f(x) for x in rhos)
        lines.append(f"| {name} | {cells} | {_f(macro)} | {good} of {total} |")
    return "\n".join(lines) + "\n"


def segment_manifest(manifest: Path, out: Path, robot: str) -> Path:
    """Cut each rollout (and its reference) into its planted segments as PNG frame folders; their manifest.

    A segment item keeps its rollout's fields but not its state file, whose arrays span the whole video.
    """
    from robojudge.video import sample_frames, write_video

    target = out / "segments.jsonl"
    if target.exists():
        return target
    out.mkdir(parents=True, exist_ok=True)
    refs: dict[str, Any] = {}
    lines = []
    for item in robot_items(manifest, robot):
        clip = sample_frames(manifest.parent / item.video, fps=None, max_frames=None)
        ref = None
        if item.reference_video:
            key = item.reference_video
            if key not in refs:
                refs[key] = sample_frames(manifest.parent / key, fps=None, max_frames=None)
            ref = refs[key]
        for p in item.meta["segments"]:
            a, b = p["start"], p["stop"]
            seg_id = f"{item.item_id}@{a}"
            video = write_video(out / "v" / seg_id, clip.frames[a:b], fps=clip.source_fps)
            row: dict[str, Any] = {
                "item_id": seg_id, "video": str(video.relative_to(out)), "instruction": item.instruction,
                "clip_id": item.clip_id, "generator": item.generator, "regime": item.regime,
                "task": item.task, "source": item.source, "split": item.split,
                "embodiment": item.embodiment.value if item.embodiment else None,
                "meta": {"segment_of": item.item_id, "start": a, "stop": b},
            }
            if ref is not None and len(ref.frames) >= b:
                rv = write_video(out / "r" / seg_id, ref.frames[a:b], fps=ref.source_fps)
                row["reference_video"] = str(rv.relative_to(out))
            lines.append(json.dumps({k: v for k, v in row.items() if v is not None}))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def weights_free_metrics() -> list[str]:
    """Every metric robojudge computes itself without weights, except the random baseline and KIVA's."""
    from robojudge.metrics import Provider, list_metrics

    return [s.id for s in list_metrics()
            if s.provider is Provider.computed and s.id != "uniform_random" and not s.id.startswith("kiva")]


def metric_segments(seg_manifest: Path, run_dir: Path, metrics: Sequence[str], workers: int
                    ) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """``{metric: {segment id: value}}`` of the segment clips, and why a metric has no value anywhere."""
    from robojudge.metrics import get_metric
    from robojudge.run import score_suite
    from robojudge.store import ResultStore

    run = score_suite(seg_manifest, list(metrics), run_dir=run_dir, workers=workers)
    values: dict[str, dict[str, float]] = {m: {} for m in metrics}
    errors: dict[str, str] = {}
    versions = {m: get_metric(m).version for m in metrics}
    with ResultStore(run.db_url) as store:
        for row in store.rows():
            if row.metric not in values or row.version != versions[row.metric]:
                continue
            if row.status == "ok" and row.value is not None and not math.isnan(row.value):
                values[row.metric][row.item_id] = float(row.value)
            else:
                errors.setdefault(row.metric, str(row.error or row.status).split(";")[0][:160])
    return values, errors


def judge_config(args: argparse.Namespace) -> Any:
    """The VLM judge the arguments configure, or ``None`` without ``--judge-backend``."""
    if not args.judge_backend:
        return None
    from robojudge.judges import JudgeConfig

    return JudgeConfig(name=args.judge_name, backend=args.judge_backend, model=args.judge_model,
                       base_url=args.judge_base_url, api_key_env=args.judge_api_key_env)


def vlm_segments(seg_manifest: Path, run_dir: Path, judge: Any, samples: int, **kwargs: Any
                 ) -> tuple[dict[str, float], str | None]:
    """The judge's majority verdict (1 Bad, 2 Medium, 3 Good) per segment clip, and why none was scored.

    Every frame of a clip is sent (:data:`JUDGE_FRAMES`); ``kwargs`` go to :func:`robojudge.run.judge_suite`
    (a response cache, a ready backend).
    """
    from robojudge.judges import FrameSpec, judge_metric_id, load_rubric_file
    from robojudge.run import judge_suite
    from robojudge.store import ResultStore

    rubric = load_rubric_file(RUBRIC)
    run = judge_suite(seg_manifest, judge, [rubric], run_dir=run_dir, samples=samples,
                      frames=FrameSpec(**JUDGE_FRAMES), **kwargs)
    mid = judge_metric_id(judge.name, rubric.id)
    values: dict[str, float] = {}
    why = None
    with ResultStore(run.db_url) as store:
        for row in store.rows():
            if row.metric != mid:
                continue
            if row.status == "ok" and row.value is not None and not math.isnan(row.value):
                values[row.item_id] = float(row.value)
            elif why is None:
                why = str((row.details or {}).get("unscored_reason") or row.error or row.status)[:160]
    return values, (None if values else why or "the judge stored no verdict")


def verdict_agreement(rows: Sequence[dict[str, Any]], column: str = VLM) -> dict[str, Any]:
    """How often the VLM's majority verdict is the planted one (RoboWorM's overlap for a VLM, Table D4:
    its verdict taken as it is, no calibrated cuts): ``{robot: [agreeing, judged]}``, macro and micro.

    A verdict of 3 is Good, 2 Medium, 1 Bad; a segment without one is left out.
    """
    per: dict[str, list[int]] = {}
    want = {"Good": 3.0, "Medium": 2.0, "Bad": 1.0}
    for r in rows:
        v = _nan(r.get(column))
        cell = per.setdefault(r["robot"], [0, 0])
        if math.isnan(v):
            continue
        cell[0] += int(v == want[r["verdict"]])
        cell[1] += 1
    shares = [a / n for a, n in per.values() if n]
    agree, judged = sum(a for a, _ in per.values()), sum(n for _, n in per.values())
    return {"robots": per, "macro": sum(shares) / len(shares) if shares else None,
            "micro": agree / judged if judged else None}


# ---------------------------------------------------------------------------------------------------
# Statistics and tables


def evaluate(rows: Sequence[dict[str, Any]], columns: dict[str, bool], *, draws: int, seed: int
             ) -> dict[str, Any]:
    """Spearman and three-band overlap per column (``{name: higher_is_better}``): per robot, macro, micro."""
    from robojudge.meta import group_bands, orient, segment_spearman, verdict_levels

    robots = [r["robot"] for r in rows]
    levels = verdict_levels([r["verdict"] for r in rows])
    videos = [f"{r['robot']}/{r['item']}" for r in rows]
    out: dict[str, Any] = {}
    for name, hib in columns.items():
        scores = orient([_nan(r.get(name)) for r in rows], hib)
        rho = segment_spearman(scores, levels, robots)
        # A robot with no value of the column (a part it lacks: no finger pairs) gets a reason, not 0%.
        bands, pooled = group_bands(scores, levels, robots, videos, draws=draws, seed=seed)
        out[name] = {
            "rho": {k: {"rho": v.rho, "n": v.n, "unscored": v.unscored} for k, v in rho.groups.items()},
            "rho_macro": rho.macro,
            "rho_micro": {"rho": rho.micro.rho, "n": rho.micro.n, "unscored": rho.micro.unscored},
            "overlap": {k: (b if isinstance(b, str) else
                            {"mean": b.overlap, "low": b.low, "high": b.high, "cuts": list(b.mean_cuts),
                             "videos_per_level": list(b.videos_per_level)}) for k, b in bands.items()},
            "overlap_macro": None if pooled is None else list(pooled.macro),
            "overlap_micro": None if pooled is None else list(pooled.micro),
        }
    return out


#: Columns whose rho gets an interval, besides the weights-free metrics and the VLM: the metric and the
#: same measure on the simulator's keypoints.
INTERVAL_COLUMNS = ("kiva", "kiva_true_keypoints")


def rho_intervals(rows: Sequence[dict[str, Any]], columns: dict[str, bool], *, replicates: int, seed: int
                  ) -> dict[str, Any]:
    """Spearman's rho with 95% intervals, and every other column's rho minus ``kiva``'s, from one paired
    cluster bootstrap: a robot's clips (with all their rollouts' segments) redrawn within the robot.

    Returns ``{"metrics": {name: {robot | "macro" | "micro": [rho, low, high]}}, "minus_kiva": {...}}`` for
    :data:`INTERVAL_COLUMNS` and every column not named ``kiva*``.
    """
    from robojudge.meta import orient, segment_spearman_bootstrap, verdict_levels

    names = [k for k in columns if k in INTERVAL_COLUMNS or not k.startswith("kiva")]
    scores = {k: orient([_nan(r.get(k)) for r in rows], columns[k]) for k in names}
    out = segment_spearman_bootstrap(scores, verdict_levels([r["verdict"] for r in rows]),
                                     [r["robot"] for r in rows], [str(r["clip"]) for r in rows],
                                     reference="kiva", replicates=replicates, seed=seed)

    def cells(x: Any) -> dict[str, list[float]]:
        parts = {**x.groups, "macro": x.macro, "micro": x.micro}
        return {k: [v.rho, v.low, v.high] for k, v in parts.items()}

    return {"replicates": replicates, "clusters": out.clusters,
            "metrics": {k: cells(v) for k, v in out.metrics.items()},
            "minus_kiva": {k: cells(v) for k, v in out.differences.items()},
            # A macro of fewer robots than the table has (where a rho, or both rhos, is undefined).
            "macro_robots": {kind: {k: list(v.macro_groups) for k, v in part.items()
                                    if len(v.macro_groups) < len(out.clusters)}
                             for kind, part in (("metrics", out.metrics), ("minus_kiva", out.differences))}}


def by_group(rows: Sequence[dict[str, Any]], key: str, *, seed: int) -> dict[str, Any]:
    """Table C4's view: each video's KIVA (% invalid segments) by ``key``, mean and bootstrap interval."""
    from robojudge.meta import group_means

    videos: dict[str, dict[str, Any]] = {}
    for r in rows:
        videos.setdefault(f"{r['robot']}/{r['item']}", r)
    items = list(videos.values())
    groups = [f"{r['robot']} / {r.get(key) if r.get(key) is not None else 'n/a'}" for r in items]
    means = group_means([[_nan(r["kiva_video"])] for r in items], groups, [r["clip"] for r in items],
                        bootstrap=2000, seed=seed)
    # ``why``: the reason a group has a mean and no interval (videos in fewer than 3 clips, or all alike).
    return {g: {"n": m[0].n, "mean": m[0].mean, "low": m[0].low, "high": m[0].high, "why": m[0].why}
            for g, m in means.items()}


def flagged(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """``{planted types: {robot: [flagged by kiva, flagged on true keypoints, segments]}}``."""
    out: dict[str, dict[str, list[int]]] = {}
    for r in rows:
        kind = "+".join(sorted(set(r["failures"]))) or "none"
        cell = out.setdefault(kind, {}).setdefault(r["robot"], [0, 0, 0])
        cell[0] += int(_nan(r["kiva"]) > 1)
        cell[1] += int(_nan(r["kiva_true_keypoints"]) > 1)
        cell[2] += 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "none", kv[0])))


def pct1(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _f(x: Any, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def render(result: dict[str, Any]) -> str:
    """The Markdown tables of a validation result."""
    stats, robots = result["stats"], result["robots"]
    order = [*KIVA_COLUMNS, VLM]
    order += sorted(k for k in stats if not k.startswith("kiva") and k != VLM)
    order = [k for k in order if k in stats]
    lines = ["Segments per robot: " + ", ".join(f"{r} {result['segments'][r]} ({result['verdicts'][r]})"
                                                 for r in robots) + ".", "",
             "Spearman's rho per segment (metric oriented so that higher is worse, against Good 0, Medium 1, "
             "Bad 2; n scored segments in brackets):", "",
             "| metric | " + " | ".join(robots) + " | macro | micro |",
             "| --- | " + " | ".join("---:" for _ in robots) + " | ---: | ---: |"]
    for k in order:
        s = stats[k]
        cells = [f"{_f(s['rho'][r]['rho'])} ({s['rho'][r]['n']})" if r in s["rho"] else "n/a" for r in robots]
        lines.append(f"| `{k}` | " + " | ".join(cells) + f" | {_f(s['rho_macro'])} | "
                     f"{_f(s['rho_micro']['rho'])} ({s['rho_micro']['n']}) |")
    lines += ["", "Calibrated three-band overlap (% of evaluation segments banded at their verdict; mean and "
              f"95% interval over {result['draws']} calibration draws of 3 videos per level):", "",
              "| metric | " + " | ".join(robots) + " | macro | micro |",
              "| --- | " + " | ".join("---:" for _ in robots) + " | ---: | ---: |"]

    def pct(t: Any) -> str:
        if t is None or isinstance(t, str):
            return "n/a"
        return f"{100 * t[0]:.0f} [{100 * t[1]:.0f}, {100 * t[2]:.0f}]"

    for k in order:
        s = stats[k]
        cells = []
        for r in robots:
            o = s["overlap"].get(r)
            cells.append(pct(None if o is None or isinstance(o, str) else (o["mean"], o["low"], o["high"])))
        lines.append(f"| `{k}` | " + " | ".join(cells)
                     + f" | {pct(s['overlap_macro'])} | {pct(s['overlap_micro'])} |")
    ci = result.get("rho_intervals")
    if ci:

        def span(c: Sequence[float]) -> str:
            return f"{_f(c[0])} [{_f(c[1])}, {_f(c[2])}]"

        clips = ", ".join(f"{r} {ci['clusters'][r]}" for r in robots if r in ci["clusters"])
        head = ["| metric | " + " | ".join(robots) + " | macro | micro |",
                "| --- | " + " | ".join("---:" for _ in robots) + " | ---: | ---: |"]
        lines += ["", "Spearman's rho with 95% intervals: paired cluster bootstrap, "
                  f"{ci['replicates']} replicates, each robot's clips redrawn within the robot ({clips}), "
                  "every segment of a drawn clip kept:", "", *head]
        fewer = ci.get("macro_robots", {})

        def macro_note(kind: str) -> list[str]:
            part = {k: v for k, v in fewer.get(kind, {}).items() if k in order}
            return ["", "Macro of fewer robots: " + "; ".join(
                f"`{k}` {', '.join(v) or 'none'}" for k, v in part.items()) + "."] if part else []

        for k in [k for k in order if k in ci["metrics"]]:
            lines.append(f"| `{k}` | " + " | ".join(span(ci["metrics"][k][r]) for r in robots)
                         + f" | {span(ci['metrics'][k]['macro'])} | {span(ci['metrics'][k]['micro'])} |")
        lines += macro_note("metrics")
        lines += ["", "Each metric's rho minus `kiva`'s, on the same replicates and the segments both "
                  "scored, the macro over the robots where both have a rho (an interval below 0: `kiva` "
                  "ranks the segments better):", "", *head]
        for k in [k for k in order if k in ci["minus_kiva"]]:
            d = ci["minus_kiva"][k]
            lines.append(f"| `{k}` | " + " | ".join(span(d[r]) for r in robots)
                         + f" | {span(d['macro'])} | {span(d['micro'])} |")
        lines += macro_note("minus_kiva")
    agreement = result.get("vlm_verdicts")
    if agreement:
        cells = [f"{r} {100 * a / n:.0f}% of {n}" if n else f"{r} n/a"
                 for r, (a, n) in ((r, agreement["robots"].get(r, [0, 0])) for r in robots)]
        lines += ["", f"`{VLM}` ({result['vlm']}): its majority verdict taken as it is (no calibrated cuts) "
                  "matches the planted one on " + ", ".join(cells) + f"; macro {pct1(agreement['macro'])}, "
                  f"micro {pct1(agreement['micro'])}."]
    if result["no_value"]:
        lines += ["", "Weights-free metrics with no value on any segment: " + "; ".join(
            f"`{m}` ({why})" for m, why in sorted(result["no_value"].items())) + "."]
    lines += ["", "Segments KIVA flags invalid (score above 1), by the failure types planted in them: with "
              "the reader / with the simulator's true keypoints, of all such segments:", "",
              "| planted | " + " | ".join(robots) + " |",
              "| --- | " + " | ".join("---:" for _ in robots) + " |"]
    for kind, per in result["flagged"].items():
        cells = ["-" if r not in per else f"{per[r][0]} / {per[r][1]} of {per[r][2]}" for r in robots]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", "KIVA per video (% invalid segments), by generator profile and by regime (Table C4's view; "
              "mean and 95% cluster-bootstrap interval over clips; none where the group's videos lie in "
              "fewer than 3 clips, or every video of the group gives the same value, so every resample "
              "does too):", "",
              "| group | videos | KIVA % |", "| --- | ---: | ---: |"]
    withheld: dict[str, list[str]] = {}
    for key in ("generator", "regime", "depth"):
        for g, m in result["by"][key].items():
            ci = _f(m["mean"], 1)
            if m["low"] is not None and not math.isnan(m["low"]):
                ci += f" [{_f(m['low'], 1)}, {_f(m['high'], 1)}]"
            elif m.get("why") and m["mean"] is not None and not math.isnan(m["mean"]):
                withheld.setdefault(m["why"], []).append(f"{key}: {g}")
            lines.append(f"| {key}: {g} | {m['n']} | {ci} |")
    for why, named in withheld.items():  # the reason, not an interval (robojudge.meta.interval_gate)
        lines += ["", f"No interval for {', '.join(named)}: {why}."]
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- kiva-validation:begin -->", "<!-- kiva-validation:end -->"


def write_table(path: Path, table: str) -> None:
    """Write ``table`` between the markers of an existing file at ``path``, or as the whole file."""
    from robojudge.report._tables import write_between_markers

    write_between_markers(path, table, BEGIN, END)


def cached_rows(cache: Path, key: dict[str, str], compute: Any) -> list[dict[str, Any]]:
    """KIVA's segment rows for ``key`` (reader and measure) from ``cache``, else ``compute()`` and keep them.

    The file keeps the rows of every reader judged on the suite (``entries``), so comparing readers on one
    suite reads each once; a file of the older form (one reader's ``rows`` at the top) counts as one entry.
    """
    data = json.loads(cache.read_text()) if cache.exists() else {}
    entries = data.get("entries", [data] if "rows" in data else [])
    for e in entries:
        if all(e.get(k) == v for k, v in key.items()):
            return list(e["rows"])
    rows: list[dict[str, Any]] = compute()
    entries = [*entries, {**key, "rows": rows}]
    cache.write_text(json.dumps({"entries": entries}))
    return rows


def validate(prepared: dict[str, tuple[Path, Path]], args: argparse.Namespace, t0: float) -> int:
    from collections import Counter

    from robojudge.metrics import get_metric

    rows: list[dict[str, Any]] = []
    # --kiva-only: no weights-free metric is scored on the segments, and no judge is asked
    metrics = [] if args.kiva_only else weights_free_metrics()
    no_value: dict[str, str] = {}
    judge = None if args.kiva_only else judge_config(args)
    for robot, (manifest, checkpoint) in prepared.items():
        folder = manifest.parent
        # The reader's file, not only its path: a reader calibrated again judges anew.
        key = {"reader": str(checkpoint), "sha256": file_digest(checkpoint), "measure": MEASURE}
        kiva_rows = cached_rows(folder / "_validation_kiva.json", key,
                                lambda m=manifest, c=checkpoint, r=robot: kiva_segments(m, c, r))
        _log(f"{robot}: KIVA read {len(kiva_rows)} segments", t0)
        if args.kiva_only:
            values, errors = {}, {}
        else:
            seg_manifest = segment_manifest(manifest, folder / "_segments", robot)
            values, errors = metric_segments(seg_manifest, folder / "_segments_run", metrics, args.workers)
            _log(f"{robot}: weights-free metrics scored on the segments", t0)
        if judge is not None:
            values[VLM], why = vlm_segments(seg_manifest, folder / "_segments_judge", judge,
                                            args.judge_samples)
            if why is not None:
                errors[VLM] = why
            _log(f"{robot}: segments judged by {judge.name}", t0)
        for r in kiva_rows:
            r["robot"] = robot
            for m in values:
                r[m] = values[m].get(f"{r['item']}@{r['start']}", math.nan)
            rows.append(r)
        for m in values:
            if not values[m] and m in errors:
                no_value[m] = errors[m]
    metrics = [m for m in metrics if m not in no_value and any(not math.isnan(_nan(r[m])) for r in rows)]
    columns = {k: False for k in KIVA_COLUMNS}
    columns.update({m: get_metric(m).higher_is_better for m in metrics})
    judged = judge is not None and VLM not in no_value
    if judged:
        columns[VLM] = True  # Good 3 is best
    robots = list(prepared)
    result = {
        "robots": robots, "draws": args.draws, "seed": args.seed,
        "segments": {r: sum(x["robot"] == r for x in rows) for r in robots},
        "verdicts": {r: ", ".join(f"{k} {v}" for k, v in sorted(Counter(x["verdict"] for x in rows
                                                                          if x["robot"] == r).items()))
                     for r in robots},
        "stats": evaluate(rows, columns, draws=args.draws, seed=args.seed),
        "rho_intervals": rho_intervals(rows, columns, replicates=args.replicates, seed=args.seed),
        "by": {k: by_group(rows, k, seed=args.seed) for k in ("generator", "regime", "depth")},
        "no_value": no_value,
        "vlm": (f"judge {judge.name}: {' '.join(x for x in (judge.backend, judge.model) if x)}, rubric "
                f"{RUBRIC.name}, majority of {args.judge_samples}") if judge is not None
        else "no judge configured: no VLM column",
        "vlm_verdicts": verdict_agreement(rows) if judged else None,
        "flagged": flagged(rows),
    }
    _log("statistics done", t0)
    args.root.mkdir(parents=True, exist_ok=True)
    dump = json.dumps({**result, "rows": rows}, indent=1, default=str)
    (args.root / "kiva_validation.json").write_text(dump, encoding="utf-8")
    table = render(result)
    if args.out:
        write_table(args.out, table)
    print(table)
    return 0


def robot_paths(values: Sequence[str], what: str) -> dict[str, Path]:
    """``ROBOT=PATH`` options (``--suite``, ``--reader``) as a dict; a clear exit on any other form."""
    out = {}
    for v in values:
        key, sep, path = v.partition("=")
        if not sep:
            raise SystemExit(f"{what} takes ROBOT=PATH, got {v!r}")
        out[key] = Path(path)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--root", type=Path, default=Path("runs/kiva_validation"))
    parser.add_argument("--robots", default="fetch,adroit", help="any of fetch,adroit,aloha,franka")
    parser.add_argument("--episodes", type=int, default=6, help="episodes per robot's suite")
    parser.add_argument("--size", type=int, default=128, help="image size of the suites")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reader-size", type=int, default=READER_SIZE)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--heatmap-stride", type=int, choices=(2, 4), default=STRIDE,
                        help="input pixels per heatmap cell of the readers trained "
                        "(TrainConfig.heatmap_stride)")
    parser.add_argument("--heatmap-loss", type=float, default=HEATMAP_LOSS,
                        help="weight of the heatmap loss of the readers trained (TrainConfig.heatmap_loss)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--suite", action="append", default=[], help="ROBOT=DIR: reuse this suite folder")
    parser.add_argument("--reader", action="append", default=[], help="ROBOT=PATH: reuse this reader")
    parser.add_argument("--rollout-depth", default=None,
                        help="chunks per rollout, cycled over episodes (e.g. 1,2,4): the simulator's opt-in "
                             "rollout depth, for Table C4's view; the suites are built with it")
    parser.add_argument("--train-suite-seed", type=int, default=None,
                        help="train each reader on a suite of its own built with this seed (other episodes "
                             "than the judged suite's), under ROOT/train/ROBOT-seedN; calibrated on the "
                             "judged suite's references")
    parser.add_argument("--train-failures", action="store_true",
                        help="also train the readers on rollouts with planted kinematic failures "
                             "(robojudge kiva train --with-failures); reader folder reader-failures")
    parser.add_argument("--train-mixed", action="store_true",
                        help="with --train-suite-seed and --train-failures: train on the judged suite's "
                             "references and faithful rollouts plus only the failure rollouts of the other "
                             "suite; reader folder reader-mixed")
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument("--read-error", action="store_true",
                        help="print how far each reader's reads are from the simulator's keypoints on "
                             "faithful rollouts and inside each planted failure (ROOT/kiva_read_error.json), "
                             "then stop")
    parser.add_argument("--kiva-only", action="store_true",
                        help="the KIVA columns only (reader and true keypoints): no weights-free metric is "
                             "scored on the segments, so a run costs the readers' training and reading")
    parser.add_argument("--true-keypoints-only", action="store_true",
                        help="build the suites, print the measure's ablation on true keypoints (no reader)")
    parser.add_argument("--draws", type=int, default=1000, help="calibration draws of the three-band overlap")
    parser.add_argument("--replicates", type=int, default=2000,
                        help="cluster-bootstrap replicates of the intervals of rho")
    parser.add_argument("--workers", type=int, default=1, help="scoring workers")
    parser.add_argument("--judge-backend", default=None, help="openai, hf or mock: adds a VLM column")
    parser.add_argument("--judge-model", default="")
    parser.add_argument("--judge-name", default="vlm")
    parser.add_argument("--judge-base-url", default=None)
    parser.add_argument("--judge-api-key-env", default=None)
    parser.add_argument("--judge-samples", type=int, default=3, help="turns per segment; majority verdict")
    parser.add_argument("--out", type=Path, default=None, help="Markdown file (table between its markers)")
    args = parser.parse_args(argv)
    t0 = time.time()
    robots = [r for r in args.robots.split(",") if r]
    unknown = [r for r in robots if r not in SCENES]
    if unknown:
        raise SystemExit(f"unknown robots {unknown}; known: {sorted(SCENES)}")
    suites, readers = robot_paths(args.suite, "--suite"), robot_paths(args.reader, "--reader")
    depth = [int(x) for x in args.rollout_depth.split(",") if x] if args.rollout_depth else None
    if args.train_mixed and not args.train_failures:
        raise SystemExit("--train-mixed adds another suite's failure rollouts: give --train-failures too")
    if args.train_failures and args.train_suite_seed is None and len(readers) < len(robots):
        # The judged suite's failure rollouts would be in training: the reader would have seen the answers.
        raise SystemExit("--train-failures trains on rollouts with planted failures; give --train-suite-seed "
                         "so they come from other episodes than the suite being judged")
    if args.true_keypoints_only:
        ablation = {}
        for robot in robots:
            manifest = build_suite(suites.get(robot, args.root / robot), robot, episodes=args.episodes,
                                   size=args.size, seed=args.seed, rollout_depth=depth)
            ablation[robot] = true_keypoint_ablation(manifest, robot)
        print(render_ablation(ablation))
        return 0
    prepared = {}
    for robot in robots:
        folder = suites.get(robot, args.root / robot)
        reader = readers.get(robot, reader_folder(args.root, folder, robot, args.train_suite_seed,
                                                  args.train_failures, args.train_mixed,
                                                  args.reader_size, args.epochs, args.heatmap_stride,
                                                  args.heatmap_loss))
        train_folder = (None if args.train_suite_seed is None
                        else args.root / "train" / f"{robot}-seed{args.train_suite_seed}")
        prepared[robot] = prepare(robot, folder, reader, episodes=args.episodes, size=args.size,
                                  seed=args.seed, reader_size=args.reader_size, epochs=args.epochs,
                                  threads=args.threads, t0=t0, stride=args.heatmap_stride,
                                  heatmap_loss=args.heatmap_loss,
                                  rollout_depth=depth, train_folder=train_folder,
                                  train_seed=args.train_suite_seed, failures=args.train_failures,
                                  mixed=args.train_mixed, given=robot in readers)
    if args.prepare_only:
        return 0
    if args.read_error:
        errors = {robot: read_errors(m, c, robot) for robot, (m, c) in prepared.items()}
        args.root.mkdir(parents=True, exist_ok=True)
        (args.root / "kiva_read_error.json").write_text(json.dumps(errors, indent=1), encoding="utf-8")
        print(json.dumps(errors, indent=1))
        return 0
    return validate(prepared, args, t0)


if __name__ == "__main__":
    sys.exit(main())
