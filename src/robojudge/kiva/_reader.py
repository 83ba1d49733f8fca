"""A trained reader on disk: training it, calibrating it, loading it and reading a video with it.

A reader folder holds ``reader.pt`` (weights and everything needed to use them) and ``reader.json``
(the same facts without the weights, for people): robot, keypoint names, rigid links and where they
came from, training settings, image size, the SHA-256 of every training file, the loss per epoch,
the held-out keypoint error and, after :func:`calibrate`, the thresholds with how they were drawn.
"""

from __future__ import annotations

import json
import math
import pickle
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from robojudge._files import replacing
from robojudge.kiva._config import TrainConfig
from robojudge.kiva._data import (
    Episode,
    KivaDataError,
    data_fingerprint,
    episode_keypoints_3d,
    episodes_from_manifest,
    file_sha256,
    load_episode,
)
from robojudge.kiva._infer import predict_confident
from robojudge.kiva._links import FINGER_PAIRS, finger_indices, measured_links, resolve_robot
from robojudge.kiva._net import KeypointReader, ReaderEnsemble, build_reader
from robojudge.kiva._score import (
    JERK_WINDOW,
    JERK_WINDOWS,
    MIN_SEGMENT,
    SEGMENT,
    Scales,
    SegmentValues,
    Thresholds,
    Tracks,
    calibration_version,
    held_frames,
    older_rules,
    reader_confidence,
    recognition,
    reference_cuts,
    segment_values,
)
from robojudge.kiva._train import Progress, keypoint_error, split_groups, train_net
from robojudge.video import VideoError, probe_video, sample_frames

CHECKPOINT = "reader.pt"
SUMMARY = "reader.json"
FORMAT = 1


class ReaderError(ValueError):
    """A reader folder or checkpoint that cannot be used (missing, not a reader, not calibrated)."""


@dataclass
class Reader:
    """A loaded reader: the network and its stored facts (``meta``, as in ``reader.json``)."""

    net: KeypointReader | ReaderEnsemble  # an ensemble when the reader was trained with several members
    meta: dict[str, Any]
    path: Path

    @property
    def size(self) -> int:
        return int(self.meta["image_size"])

    @property
    def links(self) -> list[tuple[int, int]]:
        return [(int(a), int(b)) for a, b in self.meta["links"]]

    @property
    def thresholds(self) -> Thresholds | None:
        cal = self.meta.get("calibration")
        if not cal:
            return None
        # A part the references never measured is stored as null: not judged (a reader calibrated before
        # the finger check has no finger key, one calibrated before measure version 5 no finger_gap key:
        # not judged either).
        return Thresholds(*(math.nan if cal.get(k) is None else float(cal[k])
                            for k in ("rigidity", "jerk", "finger", "finger_gap")))

    @property
    def aspects(self) -> list[float]:
        """Width over height of the training videos (empty for a reader trained before they were stored)."""
        return [float(a) for a in self.meta.get("frame_aspects") or []]

    @property
    def calibration_version(self) -> int:
        """The measure version the stored thresholds were drawn for (0: not calibrated)."""
        return calibration_version(self.meta.get("calibration"))

    @property
    def older_rules(self) -> list[str]:
        """The older rules the reader judges by in place of today's, until it is calibrated again
        (:func:`~robojudge.kiva._score.older_rules`; empty when calibrated for the current measure)."""
        return older_rules(self.meta.get("calibration"))

    @property
    def segment(self) -> int:
        """The segment length the thresholds were calibrated on (readers calibrated before it was
        stored used the default, :data:`~robojudge.kiva._score.SEGMENT`)."""
        cal = self.meta.get("calibration") or {}
        return int(cal.get("segment") or SEGMENT)

    @property
    def scales(self) -> Scales | None:
        """Per-link and per-keypoint reference scales (measure version 4); None for a reader calibrated
        before they were stored, whose thresholds are on the unscaled values (version 3)."""
        cal = self.meta.get("calibration") or {}
        stored = cal.get("scales")
        return None if stored is None else Scales.from_dict(stored)

    @property
    def relative_lengths(self) -> bool:
        """Whether the thresholds were drawn on relative link lengths (measure version 6,
        :func:`~robojudge.kiva._score.relative_lengths`); a reader calibrated before is judged on pixel
        lengths, as its rigidity threshold was drawn, until it is calibrated again."""
        cal = self.meta.get("calibration") or {}
        return cal.get("lengths") == "relative"

    @property
    def jerk_windows(self) -> str:
        """Which jerk windows count for a segment (:func:`~robojudge.kiva._score.jerk_window_span`), as its
        jerk threshold was drawn: ``lead`` since measure version 7, ``centre`` for a reader calibrated
        before, until it is calibrated again."""
        cal = self.meta.get("calibration") or {}
        rule = cal.get("jerk_windows", "centre")
        return rule if rule in JERK_WINDOWS else "centre"

    @property
    def fingers(self) -> list[tuple[int, int, int]]:
        """Finger pairs ``(a, b, hand)`` as keypoint indices (the finger check); a reader trained before
        they were stored gets its built-in robot's pairs."""
        stored = self.meta.get("fingers")
        if stored is not None:
            return [(int(a), int(b), int(h)) for a, b, h in stored]
        return finger_indices(FINGER_PAIRS.get(self.meta["robot"], ()), self.meta["keypoints"])

    @property
    def recognition(self) -> tuple[float, str]:
        """``(floor, note)``: the confidence below which a video is not judged (NaN: every video is) and why
        (:func:`~robojudge.kiva._score.recognition` of the stored calibration)."""
        return recognition(self.meta.get("calibration"))

    @property
    def rigidity_3d(self) -> float:
        """The 3D rigidity threshold (NaN when calibration saw no multi-view real video)."""
        cal = self.meta.get("calibration") or {}
        value = cal.get("rigidity_3d")
        return math.nan if value is None else float(value)


def _write(folder: Path, state: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # Both whole or the old ones; a link in the folder is written through only while it stays in it (a
    # reader folder shared with reader.json linked to a file of the user's). The checkpoint's temporary
    # name is a new hidden one: a fixed reader.pt.tmp could be a link, which torch.save writes through.
    with replacing(folder) as files:
        torch.save({"state_dict": state, "meta_json": json.dumps(meta)}, files.path(folder / CHECKPOINT))
        files.write_text(folder / SUMMARY, json.dumps(meta, indent=2) + "\n")


def checkpoint_path(path: str | Path) -> Path:
    """``path/reader.pt`` for a reader folder, ``path`` itself for a checkpoint file."""
    p = Path(path)
    return p / CHECKPOINT if p.is_dir() else p


def _load_reason(exc: BaseException) -> str:
    """The gist of why ``torch.load`` failed.

    Refusing a file's pickled objects, torch adds paragraphs of advice, among them to load the file again
    with ``weights_only=False``: unsafe for a file of unknown origin and wrong for a file that is not a
    checkpoint at all. The last line holds the reason.
    """
    if isinstance(exc, KeyError):
        # A string key is an entry the checkpoint lacks; another (101, from pickle) means the bytes are
        # not a torch file at all.
        if exc.args and isinstance(exc.args[0], str):
            return f"it has no {exc.args[0]!r} entry"
        return "not a torch checkpoint file"
    if isinstance(exc, PermissionError):
        return f"cannot read it: {exc.strerror or exc}"
    if isinstance(exc, OSError | EOFError) or (isinstance(exc, RuntimeError) and "zip archive" in str(exc)):
        first = str(exc).split(". ")[0].strip().rstrip(".")
        return "truncated or damaged file" + (f": {first}" if first else "")
    text = str(exc)
    if not (isinstance(exc, pickle.UnpicklingError) and "weights_only" in text):
        return text or type(exc).__name__
    found = re.search(r"WeightsUnpickler error:\s*(.+?)(?:\n\s*\n|$)", text, flags=re.DOTALL)
    reason = found.group(1).split(". ")[0].strip().rstrip(".") if found else ""
    return "torch refuses its contents as weights" + (f": {reason}" if reason else "")


def load_reader(path: str | Path) -> Reader:
    """Load a reader from its folder (or its ``reader.pt``) onto the CPU.

    Raises:
        ReaderError: Nothing there, or not a reader checkpoint.
    """
    ckpt = checkpoint_path(path)
    if not ckpt.is_file():
        raise ReaderError(f"{ckpt}: no KIVA reader here; train one with `robojudge kiva train`")
    try:
        blob = torch.load(ckpt, map_location="cpu", weights_only=True)
        meta = json.loads(blob["meta_json"])
        cfg = TrainConfig.from_stored(meta["config"])
        net = build_reader(len(meta["keypoints"]), cfg.context, cfg.width, cfg.heatmap_stride, cfg.members)
        net.load_state_dict(blob["state_dict"])
    except (KeyError, TypeError, ValueError, RuntimeError, EOFError, OSError, pickle.UnpicklingError) as exc:
        # OSError: torch's zip reader on a file cut short (a copy or download stopped half-way).
        raise ReaderError(f"{ckpt}: not a KIVA reader checkpoint ({_load_reason(exc)})") from None
    if meta.get("format") != FORMAT:
        raise ReaderError(f"{ckpt}: field format is {meta.get('format')!r}, this robojudge reads {FORMAT}")
    return Reader(net.eval(), meta, ckpt.parent)


def _aspect(width: float, height: float) -> float:
    """A training video's width over height as ``frame_aspects`` stores it (3 decimals)."""
    return round(width / height, 3)


def record_frame_aspects(path: str | Path) -> tuple[list[float], bool]:
    """Store ``frame_aspects`` in a reader trained before robojudge stored them, from its training videos:
    every file of its data fingerprint (``data.files``) must still be there with the content it had in
    training, so the shapes are those the reader learned. Weights and calibration are kept.

    Returns:
        The reader's training videos' width over height, and whether they were recorded now (False: the
        reader had them).

    Raises:
        ReaderError: The reader cannot be loaded, or a training file is gone or has changed.
    """
    reader = load_reader(path)
    if reader.aspects:
        return reader.aspects, False
    where = reader.path / CHECKPOINT
    files = (reader.meta.get("data") or {}).get("files") or {}
    retrain = "train the reader again (`robojudge kiva train`)"
    if not files:
        raise ReaderError(f"{where}: no record of its training files (data.files), so the shape of its "
                          f"training videos is not known; {retrain}")
    shapes: set[float] = set()
    for name, digest in files.items():
        file = Path(name)
        if not file.is_file():
            raise ReaderError(f"{where}: its training file {file} is gone, so the shape of its training "
                              f"videos is not known; put it back, or {retrain}")
        if file_sha256(file) != digest:
            raise ReaderError(f"{where}: its training file {file} has changed since it was trained (SHA-256 "
                              f"differs), so the shape of its training videos is not known; {retrain}")
        try:
            info = probe_video(file)
        except VideoError:
            continue  # a state file, or a recording's spec, joint states or calibration
        shapes.add(_aspect(info.width, info.height))
    if not shapes:
        raise ReaderError(f"{where}: none of its training files is a video; {retrain}")
    reader.meta["frame_aspects"] = sorted(shapes)
    _write(reader.path, reader.net.state_dict(), reader.meta)
    return reader.meta["frame_aspects"], True


def train(
    manifest: str | Path,
    robot: str,
    out: str | Path,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train a reader for ``robot`` on the manifest's reference and faithful episodes (and, with
    ``config.failures``, its rollouts with planted kinematic failures); save it in ``out``.

    Returns:
        The stored facts (``reader.json``), with ``held_out_error`` in pixels of the reader's frames and as a
        fraction of their diagonal.

    Raises:
        KivaDataError: The manifest has no episode with the robot's keypoints.
        ValueError: An unknown robot.
    """
    cfg = config or TrainConfig()
    bot = resolve_robot(robot)
    episodes, names = episodes_from_manifest(manifest, bot.keypoints, cfg.rollouts, cfg.views == "all",
                                             cfg.failures)
    train_groups, held_groups = split_groups([e.group for e in episodes], cfg.holdout, cfg.seed)
    data = [load_episode(e, names, cfg.size) for e in episodes]
    train_data = [d for d in data if d.episode.group in train_groups]
    held_data = [d for d in data if d.episode.group in held_groups]
    if bot.links is not None:
        pos = {k: i for i, k in enumerate(names)}
        links = [(pos[a], pos[b]) for a, b in bot.links]
        links_source = bot.source
    else:
        links = measured_links([episode_keypoints_3d(e, names) for e in episodes if e.group in train_groups])
        links_source = ("measured on the training episodes' 3D keypoints (distance within "
                        "0.5% of its mean on every frame, at least 2 cm)")
        if bot.not_rigid:
            links_source += f"; every link of the {bot.source} is a joint's, not rigid"
    nets, member_losses = [], []
    for k in range(cfg.members):
        # Progress runs over every member's epochs; member k trains with seed + k on the same clips.
        step = None if progress is None else _member_progress(progress, k, cfg.members)
        member, losses = train_net(train_data, len(names), cfg, step, seed=cfg.seed + k)
        nets.append(member)
        member_losses.append(losses)
    net: KeypointReader | ReaderEnsemble = nets[0] if cfg.members == 1 else ReaderEnsemble(nets).eval()
    losses = [float(np.mean(epoch)) for epoch in zip(*member_losses, strict=True)]
    fingerprint: dict[str, Any] = data_fingerprint(episodes)
    meta: dict[str, Any] = {
        "format": FORMAT,
        "robot": bot.name,
        "robot_source": bot.source,
        # The manifests' embodiment labels of the training episodes: the metric refuses items of another.
        "embodiments": sorted({e.embodiment for e in episodes if e.embodiment is not None}),
        "keypoints": names,
        "links": [list(p) for p in links],
        "link_names": [[names[a], names[b]] for a, b in links],
        "fingers": [list(f) for f in finger_indices(bot.fingers, names)],
        "finger_names": [list(f) for f in bot.fingers if set(f) <= set(names)],
        "links_source": links_source,
        # Links the robot spec lists that a joint lengthens: left out of the rigidity measure.
        "links_not_rigid": [list(p) for p in bot.not_rigid],
        "image_size": cfg.size,
        # Every frame is squashed to image_size x image_size: a video of another shape shows the robot
        # squashed in another way than the reader learned, and the metric refuses it.
        "frame_aspects": sorted({_aspect(*d.native) for d in data}),
        "config": cfg.model_dump(),
        "manifest": str(Path(manifest).resolve()),
        "episodes": {"train": [e.name for e in episodes if e.group in train_groups],
                     "held_out": [e.name for e in episodes if e.group in held_groups]},
        "data": fingerprint,
        # The training videos by content, whatever a later manifest calls them (calibration's note).
        "train_videos_sha256": sorted({fingerprint["files"][str(e.video)] for e in episodes
                                       if e.group in train_groups and str(e.video) in fingerprint["files"]}),
        "losses": [round(x, 6) for x in losses],
        "train_error": keypoint_error(net, train_data, cfg),
        "held_out_error": keypoint_error(net, held_data, cfg),
        "calibration": None,
    }
    if cfg.members > 1:
        # Each member alone on the same clips: what averaging them gained.
        meta["members"] = [{"seed": cfg.seed + k, "losses": [round(x, 6) for x in member_losses[k]],
                            "held_out_error": keypoint_error(m, held_data, cfg)} for k, m in enumerate(nets)]
    if cfg.views == "all":
        # A reader meant to read every camera is checked on each: one view's error can hide behind another's.
        by_view: dict[str, list[Any]] = {}
        for d in held_data:
            by_view.setdefault(d.episode.view_name or str(d.episode.view), []).append(d)
        meta["held_out_error_by_view"] = {v: keypoint_error(net, ds, cfg)
                                          for v, ds in sorted(by_view.items())}
    _write(Path(out), net.state_dict(), meta)
    return meta


def _member_progress(progress: Progress, k: int, members: int) -> Progress:
    def step(done: int, total: int, loss: float) -> None:
        progress(k * total + done, members * total, loss)

    return step


def read_frames(reader: Reader, frames: np.ndarray, fps: float) -> Tracks:
    """Run ``reader`` (five test-time candidates averaged) on native ``(T, H, W, 3)`` frames."""
    import cv2

    h, w = frames.shape[1:3]
    s = reader.size
    small = np.stack([cv2.resize(f, (s, s), interpolation=cv2.INTER_AREA) for f in frames])
    # No deterministic-kernel switch here: its import of torch's compiler crashes a process where MuJoCo
    # has rendered through EGL, and CPU inference needs none. torch's thread count is left as it is.
    pos, prob, conf = predict_confident(reader.net, small, int(reader.meta["config"]["context"]))
    pos = pos * np.array([w / s, h / s])
    # Repeated frames (a slowed replay, a frame-rate conversion) are found on the native frames.
    return Tracks(pos, prob > 0.5, prob, fps, w, h, held=held_frames(frames), confidence=conf)


def read_video(reader: Reader, video: str | Path) -> Tracks:
    """Every frame of ``video`` read by ``reader``."""
    sampled = sample_frames(video, fps=None, max_frames=None)
    return read_frames(reader, sampled.frames, float(sampled.source_fps))


def tracks_segments(reader: Reader, tracks: Tracks, **kw: Any) -> list[SegmentValues]:
    """:func:`~robojudge.kiva._score.segment_values` of a read video, with the reader's links, its finger
    pairs, the video's held frames, the reader's kind of link length (:attr:`Reader.relative_lengths`;
    ``relative=`` overrides it) and its jerk windows (:attr:`Reader.jerk_windows`; ``window=``)."""
    kw = {"fingers": reader.fingers, "held": tracks.held, "relative": reader.relative_lengths,
          "window": reader.jerk_windows, **kw}
    return segment_values(tracks.positions, tracks.visible, reader.links, tracks.fps, tracks.diagonal, **kw)


def calibrate(
    path: str | Path,
    manifest: str | Path,
    percentile: float = 95.0,
    seed: int = 0,
    videos: int | None = None,
    multiview_rollouts: bool = False,
    segment: int = SEGMENT,
) -> dict[str, Any]:
    """Set a reader's thresholds from its robot's reference videos in ``manifest``; store and return them.

    Each rigid link and keypoint gets a scale, ``percentile`` of its own coefficient of variation or jerk
    over the reference segments (:func:`~robojudge.kiva._score.part_scales`); the thresholds are then
    ``percentile`` of the per-segment scaled rigidity and jerk the reader measures on the
    reference videos and recordings (see :mod:`robojudge.kiva._data`). With ``videos``, that many of
    them are drawn at random with ``seed`` (as the paper draws its calibration videos); without it, all
    are used. The same reader, references, percentile, seed and count give the same thresholds.

    The 3D rigidity threshold (``rigidity_3d``) is the same percentile over the segments of every real
    multi-view item of the robot: a recording with two or more calibrated views and, with
    ``multiview_rollouts``, a faithful rollout (no planted failure, a state file with the robot's
    keypoints) with calibrated views, the simulator's stand-in for a real multi-camera recording. ``None``
    when there is none: the metrics then measure rigidity in 2D.

    ``segment``: frames per segment. The thresholds are percentiles of per-segment maxima, which grow with
    the segment's length, so they hold for that length only: it is stored (``calibration.segment``) and
    the metrics refuse a config with another.

    Raises:
        ReaderError: The reader cannot be loaded.
        KivaDataError: The manifest has no reference video of the reader's robot, or none of them is a
            segment long.
        ValueError: ``videos`` below 1, ``segment`` below 4.
    """
    if videos is not None and videos < 1:
        raise ValueError(f"videos must be at least 1 (or None: every reference); got {videos}")
    if segment < 4:
        raise ValueError(f"segment must be at least 4 frames; got {segment}")
    cut = {"length": segment, "min_length": min(MIN_SEGMENT, segment)}
    reader = load_reader(path)
    try:
        episodes, _ = episodes_from_manifest(manifest, reader.meta["keypoints"])
    except KivaDataError:
        episodes = []  # said below, naming only what calibration reads (never rollouts)
    # Real videos only: references, and recordings (real by definition); never rollouts.
    refs = sorted((e for e in episodes if e.reference or e.recording is not None), key=lambda e: str(e.video))
    if not refs:
        robot = reader.meta["robot"]
        raise KivaDataError(f"{manifest}: no reference video (with a state file beside it) nor recording of "
                            f"robot {robot!r}")
    if videos is not None and videos < len(refs):
        pick = np.random.default_rng(seed).choice(len(refs), size=videos, replace=False)
        refs = [refs[i] for i in sorted(pick)]
    values: list[SegmentValues] = []
    sure: list[float] = []
    like: tuple[tuple[int, ...], float] | None = None  # the first reference's clip shape and frame rate
    lengths: dict[str, int] = {}
    for ep in refs:
        sampled = sample_frames(ep.video, fps=None, max_frames=None)
        lengths[ep.name] = len(sampled.frames)
        tracks = read_frames(reader, sampled.frames, float(sampled.source_fps))
        values.extend(tracks_segments(reader, tracks, relative=True, window=JERK_WINDOW, **cut))
        sure.append(reader_confidence(tracks))
        if like is None:
            # Clips with no robot of its frame size and rate, at most 3 segments long (a median needs no
            # more, and a long 720p clip of noise would cost gigabytes).
            shape = (min(len(sampled.frames), 3 * segment), *sampled.frames.shape[1:])
            like = (shape, float(sampled.source_fps))
    assert like is not None
    if not values:
        shown = ", ".join(f"{name}: {n} frames" for name, n in list(lengths.items())[:5])
        raise KivaDataError(f"{manifest}: none of the {len(refs)} reference video(s) of robot "
                            f"{reader.meta['robot']!r} gives a {segment}-frame segment ({shown}); "
                            "calibration needs references at least a segment long in which the robot moves")
    negatives = {name: reader_confidence(read_frames(reader, clip, like[1]))
                 for name, clip in robot_free_clips(like[0], seed).items()}
    # Version 4: each link and keypoint is first scaled by its own spread over these segments, then the
    # thresholds are drawn from the scaled values (docs/kiva.md, "Per-part scales").
    scales, cuts = reference_cuts(values, percentile)
    cal = {
        "rigidity": None if math.isnan(cuts.rigidity) else cuts.rigidity,
        "jerk": None if math.isnan(cuts.jerk) else cuts.jerk,
        "finger": None if math.isnan(cuts.finger) else cuts.finger,
        "finger_gap": None if math.isnan(cuts.finger_gap) else cuts.finger_gap,
        "scales": scales.to_dict(),
        # Measure version 6: the rigidity threshold is on relative link lengths (docs/kiva.md).
        "lengths": "relative",
        # Measure version 7: a segment's jerk windows are its own and the one reaching back a frame.
        "jerk_windows": JERK_WINDOW,
        # Measure version 8: the median over the references of the reader's confidence in each; a video
        # read with less than CONFIDENCE_RATIO of it is not judged (docs/kiva.md).
        "confidence": float(np.median(sure)),
        # ... and on clips with no robot shaped like the first reference: a reader as sure of those is not
        # trusted to tell (Reader.recognition).
        "confidence_negatives": negatives,
        "percentile": percentile,
        # The thresholds hold for segments of this length only (a longer one holds larger maxima).
        "segment": segment,
        "seed": seed,
        "videos": [str(e.video) for e in refs],
        # References the reader was trained on fit it better than new videos: thresholds drawn from
        # them run tight. Said here so a report can tell.
        "videos_seen_in_training": _seen_in_training(reader, refs),
        "segments": len(values),
        "manifest": str(Path(manifest).resolve()),
    }
    cal.update(_calibrate_3d(reader, manifest, percentile, multiview_rollouts, segment))
    reader.meta["calibration"] = cal
    _write(reader.path, reader.net.state_dict(), reader.meta)
    return cal


def robot_free_clips(shape: tuple[int, ...], seed: int = 0) -> dict[str, np.ndarray]:
    """Two uint8 clips of ``shape`` ``(T, H, W, 3)`` with no robot in them: ``textured pan``, a smooth
    random texture (random colours on a grid of an eighth of the height, blended) sliding 2 px a frame,
    and ``uniform noise``. Seeded: the same shape and seed give the same clips."""
    import cv2

    n, h, w = shape[:3]
    rng = np.random.default_rng(seed)
    texture = cv2.resize(rng.integers(0, 256, (max(h // 8, 2), max(w // 4, 2), 3), dtype=np.uint8),
                         (w + 2 * n, h), interpolation=cv2.INTER_LINEAR)
    return {
        "textured pan": np.stack([texture[:, 2 * t : 2 * t + w] for t in range(n)]),
        "uniform noise": rng.integers(0, 256, tuple(shape), dtype=np.uint8),
    }


def _seen_in_training(reader: Reader, refs: Sequence[Episode]) -> int:
    """How many of ``refs`` the reader trained on: a video with the content of a file the reader's data
    fingerprint holds, whatever its item is called (a calibration manifest of the user's own, with other
    ids, lists the same files). Names alone collide: every suite the simulator builds names its references
    ``fetch00``, ``fetch01``, ... whatever its seed. A training name decides for a reader stored without
    file hashes and for a video that is a folder of frames."""
    train = set(reader.meta["episodes"]["train"])
    videos = set(reader.meta.get("train_videos_sha256") or [])
    hashes = set((reader.meta.get("data") or {}).get("files", {}).values())
    seen = 0
    for e in refs:
        video = Path(e.video)
        if videos and video.is_file():
            seen += file_sha256(video) in videos
        elif e.name in train:  # a reader stored before its training videos' hashes: name and content
            seen += not hashes or not video.is_file() or file_sha256(video) in hashes
    return seen


def _calibrate_3d(reader: Reader, manifest: str | Path, percentile: float, rollouts: bool,
                  segment: int = SEGMENT) -> dict[str, Any]:
    from robojudge.kiva._data import collect_episodes
    from robojudge.kiva._score import segments
    from robojudge.kiva.multiview import (
        ViewOffCalibration,
        ViewsOutOfStep,
        calibrated_views,
        read_views,
        segment_values_3d,
    )
    from robojudge.suite import load_suite

    values: list[float] = []
    used: list[str] = []
    for item in load_suite(manifest).items:
        eps, _ = collect_episodes([item], reader.meta["keypoints"], rollouts=True)
        mine = [e for e in eps if e.name == item.item_id]  # a recording or a faithful rollout of this robot
        if not mine or (mine[0].recording is None and not rollouts):
            continue
        cams, _ = calibrated_views(item)
        if not cams:
            continue
        try:
            readings = read_views(lambda f, fps: read_frames(reader, f, fps), item, cams)
        except (ViewsOutOfStep, ViewOffCalibration):
            continue  # scored in 2D (the metrics say why), so it sets no 3D threshold either
        spans = segments(len(readings.positions), segment, min(MIN_SEGMENT, segment))
        got = [v for v, _ in segment_values_3d(readings, reader.links, spans) if not math.isnan(v)]
        values += got
        used.append(item.item_id)
    return {
        "rigidity_3d": float(np.percentile(values, percentile)) if values else None,
        "videos_3d": used,
        "segments_3d": len(values),
    }
