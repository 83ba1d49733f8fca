"""Trajectory accuracy and object localization from tracks (RoboPhys-3D App. B.3.1-B.3.2).

Both sub-dimensions compare what a tracker finds in the generated video with the ground truth of
the reference episode:

* generated tracks: the tracker (default ``lk_flow``, :mod:`robojudge.metrics.tracking`) follows
  the objects and the end effector through ``Item.video``, seeded with frame 0 of the item's state
  file (the shared conditioning frame): object masks, the projected end effector, in the state file's
  view that the video shows (:func:`state_view`: the item's main view, found by name);
* reference tracks: the reference episode's own state when the suite ships one next to the
  reference video (``reference/<clip>.npz``, same layout as ``Item.state``; mask centroids and
  boxes, the projected end effector), otherwise the same tracker run on ``Item.reference_video``
  with the same seed (EWMBench's protocol: one detector for generated and ground-truth videos).
  Config ``truth`` picks (``auto``: the state file when present); ``details["truth"]`` says which.

With the reference's state file, the tracker is also checked on the reference video, whose true
positions are known: a target it does not follow there (within ``follow_tolerance`` of the truth on
at least ``min_followed`` of the frames; for example the end effector at a low frame rate, where it
moves farther between frames than the tracker searches, or in small frames) leaves its scores
unmeasured, since a lost or wrong track in the generated video would then say nothing about the
video. ``details["tracks"][name]["reference_followed"]`` is the share it followed. Each metric then
scores the reference video itself (the tracker's track of it against its truth) as it scores a
generated one; below ``min_reference_score`` even a perfect video could not score well there, and
the target is unmeasured too (``reference_score``; ``reference_ap``/``reference_ar`` for
localization).

Generated and reference videos are sampled at one rate (the lower native rate unless ``fps`` is
set). A rate a video's own does not divide leaves its sampled frames unevenly spaced (30 fps read at
16 fps: 1 and 2 source frames apart in turn), so ``ta_dyn``, which compares speeds per step, first
reads both tracks on one even time grid at that rate
(:func:`~robojudge.metrics.functional.on_time_grid`); the other metrics compare positions and use the
frames as sampled. Tracks of all five metrics of an item are computed once and shared (an in-process
cache keyed by files, their modification times and the settings).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from robojudge.metrics._errors import MetricInputError, Unmeasurable
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics.functional import (
    MAX_MISSING,
    diameter,
    dyn_score,
    fill_gaps,
    hsd_score,
    ndtw_score,
    on_time_grid,
    track_localization,
)
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.metrics.robophys.reference import (
    PairingRate,
    aspect_mismatch,
    pairing_rate,
    pairing_rates,
    size_text,
)
from robojudge.metrics.tracking import (
    SimState,
    Tracks,
    get_tracker,
    list_trackers,
    seed_from_state,
    true_tracks,
)
from robojudge.metrics.tracking._sim import EE, StateFileError, read_state
from robojudge.suite import main_view_name, video_view_name
from robojudge.suite._schema import Item
from robojudge.video import FileFingerprint, SampledFrames, probe_video, report_warnings, sample_frames

_OBJECTS = ("object", "distractor")
_NOT_SEEDED = "not tracked: not visible in the first frames of the state file (nothing to seed)"
_NO_REFERENCE_TRACK = ("not tracked in the reference: its mask in the state file, scaled to the reference "
                       "video's size, is too small to seed")


def _reasons(per: Mapping[str, object]) -> str:
    """``name: why`` for each track or object left out, as one line."""
    def why(v: object) -> str:
        return str(v.get("status", v)) if isinstance(v, dict) else str(v)

    return "; ".join(f"{name}: {why(v)}" for name, v in per.items())


def _why(status: str, untracked: str | None) -> str:
    """``status``, with the tracker's reason when it did not follow the target at all."""
    return f"{status} ({untracked})" if untracked else status


_INPUTS = {Input.video, Input.reference, Input.state}
_EWM = "trajectory scores as in EWMBench (Yue et al. 2025), which the paper cites for DYN"


class TrackingConfig(BaseModel):
    """Which tracker, at what rate, from which view of the state file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tracker: str = Field(
        default="lk_flow", description="registered tracker name (robojudge.metrics.tracking)"
    )
    fps: float | None = Field(
        default=None, gt=0,
        description="common rate; None, or above either video's own rate: the lower native rate",
    )
    view: int | None = Field(
        default=None, ge=0,
        description="state-file view that the main video shows; None: the item's main view, found by name in "
        "the state file's view_names (view 0 for an item without views)",
    )
    truth: Literal["auto", "reference_state", "tracked_reference"] = Field(
        default="auto",
        description="reference tracks: the reference episode's state file (auto: when present) or the "
        "tracker on the reference video",
    )
    min_reference_coverage: float = Field(
        default=0.9, gt=0, le=1,
        description="the reference must have at least this share of the generated video's frames; a "
        "shorter one leaves the item unscored",
    )
    follow_tolerance: float = Field(
        default=0.05, gt=0, le=1,
        description="with the reference's state file: distance (image coordinates in [0, 1]) within which "
        "the tracker's track of the reference video counts as following the truth",
    )
    min_reference_score: float = Field(
        default=0.5, ge=0, le=1,
        description="with the reference's state file: the score the reference video itself must get "
        "against its own truth (the tracker's track of it, scored as the metric scores a generated one), "
        "or the metric cannot tell a good video from a bad one there and leaves the target unmeasured",
    )
    min_followed: float = Field(
        default=0.5, ge=0, le=1,
        description="with the reference's state file: share of the reference video's frames the tracker "
        "must follow a target on, or that target's scores are unmeasured",
    )

    @field_validator("tracker")
    @classmethod
    def _known_tracker(cls, name: str) -> str:
        if name not in list_trackers():
            raise ValueError(f"unknown tracker {name!r}; known: {', '.join(list_trackers())}")
        return name

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        """What the trackers read of ``item``'s main video: every frame at the common rate
        (``robojudge.metrics.prefetch_main_video``); nothing without the state and reference they need,
        nor when the two videos are framed differently (the metrics leave the item unscored from the
        probes, :func:`_framing_mismatch`, before reading a frame)."""
        if not item.reference_video or not item.state:
            return []
        if _framing_mismatch(item.video, item.reference_video) is not None:
            return []
        return [{"fps": pairing_rate(item.video, item.reference_video, self.fps), "max_frames": None}]


def state_view(item: Item, path: str | Path, view: int | None = None) -> int:
    """Which view of the state file at ``path`` ``item.video`` shows: ``view`` when given; else the view
    whose file ``video`` is (:func:`robojudge.suite.video_view_name`), else the item's main view
    (:func:`robojudge.suite.main_view_name`; a manifest makes ``video`` its file, an item built in Python
    may name another view in ``main_view``), found by name in the file's ``view_names``; view 0 for an
    item without views (the sim suite's main view). Read elsewhere, the seed and the truth were another
    camera's: view 0 whatever camera ``video`` is.

    Raises:
        MetricInputError: The item has a main view and the file names no view so (or names none, and
            holds several), or the file cannot be read.
    """
    if view is not None:
        return view
    # `video` is what the tracker reads: its camera's masks and seed, even where main_view says another.
    main = video_view_name(item) or main_view_name(item)
    if main is None:
        return 0
    try:
        arrays = read_state(path, ("view_names", "K"))
    except StateFileError as exc:
        raise MetricInputError(str(exc)) from None
    if "view_names" not in arrays:
        held = arrays["K"].shape[0] if "K" in arrays and arrays["K"].ndim == 3 else 1
        if held <= 1:
            return 0  # one view (or no cameras, which the state's reader names): the only candidate
        raise MetricInputError(
            f"state file {path} holds {held} views and names none (no array view_names), so which is the "
            f"item's main view {main!r} is not known; add view_names (docs/sim_suite.md) or set the "
            "metric's view")
    names = [str(n) for n in np.atleast_1d(arrays["view_names"])]
    if main not in names:
        raise MetricInputError(
            f"state file {path} field view_names {names} has no view {main!r}, the item's main view (the one "
            "its video shows): its masks and camera are of other cameras; give a state file with that view, "
            "or set the metric's view")
    return names.index(main)


def reference_state_path(item: Item) -> Path | None:
    """``<reference video without suffix>.npz`` when that file exists, else None."""
    if not item.reference_video:
        return None
    path = Path(item.reference_video).with_suffix(".npz")
    return path if path.is_file() else None


def _identity(path: str | Path | None) -> FileFingerprint | None:
    """The file as it is now (path, size, modification time in ns; a frame folder's file list), or None
    when it is missing: the reader then reports it, and nothing is cached."""
    try:
        return FileFingerprint.of(path) if path else None
    except OSError:
        return None


class ItemTracks(NamedTuple):
    """An item's tracks: generated, reference, the reference's source (``reference_state`` or
    ``tracked_reference``) and, with the reference's state file, the share of the reference video's
    frames on which the tracker follows each target (empty for ``tracked_reference``)."""

    gen: Tracks
    ref: Tracks
    truth: str
    followed: Mapping[str, float]
    #: the tracker's tracks of the reference video itself (with its state file): what the metrics score
    #: against the truth to see how well a perfect video would do
    checked: Tracks | None = None
    #: when each generated and reference frame was shown (seconds), and the rate of the even time grid
    #: ``ta_dyn`` reads both tracks on (the common rate, or a video's own when that is lower)
    gen_times: np.ndarray | None = None
    ref_times: np.ndarray | None = None
    grid_fps: float | None = None
    #: the item's state-file view the tracks were seeded from (:func:`state_view`)
    view: int = 0
    #: the common rate both videos were sampled at, the setting and their own rates
    rates: PairingRate | None = None


def item_tracks(item: Item, cfg: TrackingConfig) -> ItemTracks:
    """Generated tracks, reference tracks, the reference's source and the tracker's check on the
    reference video for one item (see :class:`ItemTracks`).

    Raises:
        MetricInputError: When the item lacks a state file or reference video, or they are unreadable.
        Unmeasurable: When either video gives fewer than 2 frames, the reference has fewer than
            ``min_reference_coverage`` of the generated video's frames, or the two are of different
            framings (aspect ratios; :func:`~robojudge.metrics.robophys.reference.aspect_mismatch`).
    """
    if not item.state:
        raise MetricInputError("item has no state file to seed the tracker (first-frame masks)")
    if not item.reference_video:
        raise MetricInputError("item has no reference_video to compare tracks against")
    ref_state = reference_state_path(item) if cfg.truth != "tracked_reference" else None
    if cfg.truth == "reference_state" and ref_state is None:
        want = Path(item.reference_video).with_suffix(".npz")
        raise MetricInputError(f"truth='reference_state' but there is no reference state file {want}")
    # The view of each state file that the videos show: the main view, by name in each file.
    views = (state_view(item, item.state, cfg.view),
             state_view(item, ref_state, cfg.view) if ref_state is not None else None)
    cfg = TrackingConfig(tracker=cfg.tracker, fps=cfg.fps, view=cfg.view, truth=cfg.truth,
                         min_reference_coverage=cfg.min_reference_coverage,
                         follow_tolerance=cfg.follow_tolerance, min_followed=cfg.min_followed)
    files = (item.video, item.reference_video, item.state, ref_state)
    key = _Key(item.video, item.reference_video, item.state, ref_state, tuple(map(_identity, files)), views,
               cfg)
    try:
        found = _cached_tracks(key)
    except StateFileError as exc:
        raise MetricInputError(str(exc)) from None
    ng, nr = len(found.gen.points), len(found.ref.points)
    if ng < 2 or nr < 2:
        def count(n: int) -> str:
            return f"{n} frame{'s' if n != 1 else ''}"

        # Each short clip named with its own count (one count for both read "the video gave 0 frames"
        # when the video gave 1 and the reference 0).
        if ng < 2 and nr < 2:
            said = f"the video gave {count(ng)} and the reference {count(nr)}"
        else:
            said = f"the video gave {count(ng)}" if ng < 2 else f"the reference gave {count(nr)}"
        raise Unmeasurable(f"{said}; tracks need at least 2 frames", frames=ng, reference_frames=nr)
    if nr < cfg.min_reference_coverage * ng:
        raise Unmeasurable(
            f"the reference has {nr} frames, fewer than {cfg.min_reference_coverage:g} of the generated "
            f"video's {ng}: no ground truth for the rest", frames=ng, reference_frames=nr)
    note = found.rates.note() if found.rates is not None else None
    if note is not None:  # fps above a video's own rate: lowered to it (into the row's video_warnings)
        report_warnings(Path(item.video), [note])
    return found


class _Key(NamedTuple):
    """What an item's tracks depend on: the identity of each input file (a file rewritten in place,
    even with its old modification time, has another size or time and so another key) and the tracker
    settings. The paths are kept to read the files."""

    video: str
    reference_video: str
    state: str
    reference_state: Path | None
    files: tuple[FileFingerprint | None, ...]
    views: tuple[int, int | None]  # the state-file view the videos show, in the item's and the reference's
    config: TrackingConfig


# Why a cache: the five tracking metrics of an item (ta_hsd, ta_ndtw, ta_dyn, ol_*) each need the same
# tracks, and a tracking run decodes two videos and follows every target through them; the runner
# scores them one after the other, so one run serves all five. Tracks are a few small arrays per item,
# and 16 entries bound it: items are scored in order, so older entries are not asked again.
@lru_cache(maxsize=16)
def _cached_tracks(key: _Key) -> ItemTracks:
    cfg = key.config
    state = SimState.load(key.state, key.views[0])
    # The state file's masks and positions are scaled to the generated video's size per axis, and tracks
    # compared in coordinates normalized by each video's size: both assume the reference's framing. A
    # wider, padded or cropped video puts the seed on other pixels (a padded faithful rollout lost its
    # object, AP 0); such an item is unscored, as frame-paired metrics leave it.
    found = _framing_mismatch(key.video, key.reference_video)
    if found is not None:
        mismatch, sizes = found
        raise Unmeasurable(f"{mismatch}; the state file's masks and positions would be scaled onto the "
                           "wrong pixels", video_size=size_text(sizes[0]), reference_size=size_text(sizes[1]))
    # The masks and positions are pixels of the picture the simulator rendered: a video cropped or padded
    # from it (another aspect ratio) has the targets elsewhere, however the two videos agree.
    shown = probe_video(key.reference_video).display_size
    ref_state = SimState.load(key.reference_state, key.views[1] or 0) if key.reference_state else None
    drawn = {"state": state.size, **({"reference_state": ref_state.size} if ref_state else {})}
    for which, (sw, sh) in drawn.items():
        if aspect_mismatch(shown, (sw, sh)) is not None:
            w, h = shown
            raise Unmeasurable(
                f"the videos are {w}x{h} (aspect {w / h:.3f}) and the masks of the {which} file {sw}x{sh} "
                f"({sw / sh:.3f}): the videos are framed otherwise than the simulator rendered (a crop, "
                "padding), so its masks and positions would be scaled onto the wrong pixels",
                reference_size=size_text(shown), state_size=size_text((sw, sh)))
    rates = pairing_rates(key.video, key.reference_video, cfg.fps)
    rate = rates.fps
    tracker = get_tracker(cfg.tracker)
    gen = sample_frames(key.video, fps=rate, max_frames=None)
    seed = seed_from_state(state, (gen.frames.shape[2], gen.frames.shape[1]), objects=_OBJECTS)
    gen_tracks = tracker.track(gen.frames, seed)
    ref = sample_frames(key.reference_video, fps=rate, max_frames=None)
    size = (ref.frames.shape[2], ref.frames.shape[1])
    timing = (_shown_times(gen), _shown_times(ref), min(rate, gen.source_fps, ref.source_fps))
    if ref_state is not None:
        # Every target the metrics may ask for, seeded or not: the reference's truth says how far one
        # that the item's state could not seed moves, so that another track does not stand in for it.
        names = seed.names() + tuple(n for n in (*_OBJECTS, EE) if n not in seed.names())
        truth = true_tracks(ref_state, names, size)
        idx = np.minimum(np.asarray(ref.indices), len(truth.points) - 1)  # the sampled frames
        ref_tracks = Tracks(truth.names, truth.points[idx], truth.boxes[idx], truth.confidence[idx], size)
        # The tracker on the reference video, seeded by its own state, against the truth: whether it can
        # follow each target at this rate and size at all.
        checked = tracker.track(ref.frames, seed_from_state(ref_state, size, objects=_OBJECTS))
        # A target the tracker cannot start on there (untracked), or has no seed for, is followed on none.
        followed = {n: (_followed_share(checked, ref_tracks, n, cfg.follow_tolerance)
                        if n in checked.names and n not in checked.untracked else _never(ref_tracks, n))
                    for n in ref_tracks.names}
        return ItemTracks(gen_tracks, ref_tracks, "reference_state", followed, checked, *timing, key.views[0],
                          rates)
    ref_seed = seed_from_state(state, size, objects=_OBJECTS)
    return ItemTracks(gen_tracks, tracker.track(ref.frames, ref_seed), "tracked_reference", {}, None, *timing,
                      key.views[0], rates)


def _framing_mismatch(video: str, reference_video: str) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """Why the two videos are of different framings (:func:`~robojudge.metrics.robophys.reference.
    aspect_mismatch` of their displayed sizes) and both stored sizes, ``(width, height)``; None when they
    are of one framing. From the probes alone: no frame is decoded."""
    probes = probe_video(video), probe_video(reference_video)
    mismatch = aspect_mismatch(probes[0].display_size, probes[1].display_size)
    if mismatch is None:
        return None
    return mismatch, tuple((p.width, p.height) for p in probes)


def _shown_times(frames: SampledFrames) -> np.ndarray:
    """When each sampled frame was shown, in seconds from the first: its place on the video's own frame
    grid (``index / source_fps``) where its time stamp is that up to rounding (a quarter of a frame; a
    container counting milliseconds stores 1/30 s as 0.033 s), else the time stamp (a stall)."""
    nominal = np.asarray(frames.indices, dtype=np.float64) / frames.source_fps
    stamps = frames.timestamps - frames.timestamps[0] if len(frames) else frames.timestamps
    return np.where(np.abs(stamps - nominal) < 0.25 / frames.source_fps, nominal, stamps)


def _followed_share(tracked: Tracks, truth: Tracks, name: str, tolerance: float) -> float:
    """Share of the frames where ``truth`` knows ``name`` on which ``tracked`` has it within
    ``tolerance`` (image coordinates in [0, 1]); NaN when the truth never knows it."""
    t, g = truth.normalized(name), tracked.normalized(name)
    known = np.isfinite(t).all(axis=1)
    if not known.any():
        return float("nan")
    dist = np.linalg.norm(g[known] - t[known], axis=1)
    return float(np.mean(np.isfinite(dist) & (dist <= tolerance)))


def _never(truth: Tracks, name: str) -> float:
    """The share of a target the tracker could not start on: none, or NaN (no check) when the truth
    never shows it either, so that the reason said is that one ("never visible in the reference")."""
    return 0.0 if np.isfinite(truth.normalized(name)).all(axis=1).any() else float("nan")


def _unfollowed(name: str, share: float, cfg: TrackingConfig) -> str:
    return (f"the tracker follows {name} on {share:.0%} of the reference video's frames (within "
            f"{cfg.follow_tolerance:g} of its true position; {cfg.min_followed:.0%} needed) at this rate and "
            "size, so its track in the generated video says nothing about the video")


# -- trajectory accuracy (App. B.3.2) ---------------------------------------------------------------


class TrajectoryConfig(TrackingConfig):
    """Tracks compared, how one score is drawn from them, and EWMBench's normalizing maxima."""

    targets: tuple[str, ...] = Field(
        default=("ee", "object"),
        min_length=1,
        description="tracks compared: end effector and manipulated object",
    )
    select: Literal["farthest", "mean"] = Field(
        default="farthest",
        description="farthest: score the reference track with the largest extent (EWMBench); mean: average",
    )
    max_missing: float = Field(
        default=MAX_MISSING,
        gt=0,
        lt=1,
        description="a track missing more than this fraction of frames scores 0",
    )
    min_generated_coverage: float = Field(
        default=0.9, gt=0, le=1,
        description="the generated video must have at least this share of the reference's frames; a "
        "shorter one leaves the item unscored",
    )


class _Grid(NamedTuple):
    """When the frames of the two tracks ``_track_score`` compares were shown, and the rate of the even
    grid DYN reads them on."""

    gen_times: np.ndarray
    ref_times: np.ndarray
    fps: float


def _track_score(
    which: str, g: np.ndarray, r: np.ndarray, grid: _Grid | None = None
) -> tuple[float, dict[str, float]]:
    if which == "hsd":
        score, dist = hsd_score(g, r)
        return score, {"hausdorff": dist}
    if which == "ndtw":
        score, dist = ndtw_score(g, r)
        return score, {"dtw_per_step": dist}
    if grid is not None:  # speeds per step mean speeds per 1 / fps seconds for both tracks
        g, r = on_time_grid(g, grid.gen_times, grid.fps), on_time_grid(r, grid.ref_times, grid.fps)
        if min(len(g), len(r)) < 3:
            raise Unmeasurable(f"DYN needs tracks of at least 3 steps of 1/{grid.fps:g} s, got {len(g)} and "
                               f"{len(r)}", frames=len(g), reference_frames=len(r))
    score, parts = dyn_score(g, r)
    return score, dict(parts)


def _grid(tracks: ItemTracks) -> _Grid | None:
    """The time grid of ``tracks`` (None for tracks made without frame times)."""
    if tracks.gen_times is None or tracks.ref_times is None or tracks.grid_fps is None:
        return None
    return _Grid(tracks.gen_times, tracks.ref_times, tracks.grid_fps)


def _reference_score(checked: Tracks | None, name: str, r: np.ndarray, which: str,
                     cfg: TrajectoryConfig, grid: _Grid | None = None) -> float | None:
    """What the reference video itself scores against its own truth: the tracker's track of it, scored
    as a generated one is (None without the check: a tracked reference). Both are the reference's
    frames, so ``grid`` gives both the reference's times."""
    if checked is None:
        return None
    if name not in checked.names or name in checked.untracked:
        return 0.0
    c, c_ok = fill_gaps(checked.normalized(name), cfg.max_missing)
    own = None if grid is None else _Grid(grid.ref_times, grid.ref_times, grid.fps)
    return _track_score(which, c, r, own)[0] if c_ok else 0.0


def _short_of(name: str, self_score: float, which: str, cfg: TrackingConfig) -> str:
    return (f"the reference video itself scores {self_score:.2f} on {name} against its own truth with this "
            f"tracker ({which}; {cfg.min_reference_score:g} needed), so a generated video's score of it says "
            "little about the video")


def _trajectory_metric(item: Item, cfg: TrajectoryConfig, which: str) -> Score:
    tracks = item_tracks(item, cfg)
    gen, ref, truth, followed, checked = tracks[:5]
    grid = _grid(tracks) if which == "dyn" else None
    ng, nr = len(gen.points), len(ref.points)
    if ng < cfg.min_generated_coverage * nr:
        # A track cut short still has the reference's speeds (DYN) and lies on its path (HSD).
        raise Unmeasurable(
            f"the generated video has {ng} frames, fewer than {cfg.min_generated_coverage:g} of the "
            f"reference's {nr}: its trajectory ends early", frames=ng, reference_frames=nr)
    if which == "dyn" and min(ng, nr) < 3:
        raise Unmeasurable(f"DYN needs tracks of at least 3 frames, got {ng} and {nr}", frames=ng,
                           reference_frames=nr)
    per: dict[str, dict[str, float | str]] = {}
    extent: dict[str, float] = {}
    unseeded: list[str] = []  # no generated track: the item's state did not show them to seed
    unreferenced: list[str] = []  # a generated track and none in the (tracked) reference
    unchecked: list[str] = []  # the tracker does not follow it on the reference video: not measurable
    for name in cfg.targets:
        if name not in gen.names:
            unseeded.append(name)
            per[name] = {"status": _NOT_SEEDED}
            if name in ref.names:  # the reference state file's truth still says how far it moves
                r, r_ok = fill_gaps(ref.normalized(name), cfg.max_missing)
                if r_ok:
                    extent[name] = diameter(r)
            continue
        if name not in ref.names:  # the tracked reference, seeded at its own size, has no such target
            unreferenced.append(name)
            per[name] = {"status": _NO_REFERENCE_TRACK}
            continue
        r, r_ok = fill_gaps(ref.normalized(name), cfg.max_missing)
        if not r_ok:
            per[name] = {"status": _why("reference track mostly missing", ref.untracked.get(name))}
            continue
        extent[name] = diameter(r)
        share = followed.get(name)
        if share is not None and share < cfg.min_followed:
            unchecked.append(name)
            per[name] = {"status": _unfollowed(name, share, cfg), "reference_followed": share}
            continue
        self_score = _reference_score(checked, name, r, which, cfg, grid)
        if self_score is not None and self_score < cfg.min_reference_score:
            unchecked.append(name)
            per[name] = {"status": _short_of(name, self_score, which, cfg), "reference_score": self_score}
            if share is not None:
                per[name]["reference_followed"] = share
            continue
        g, g_ok = fill_gaps(gen.normalized(name), cfg.max_missing)
        if not g_ok:
            per[name] = {"status": _why("lost in the generated video", gen.untracked.get(name)), "score": 0.0}
        else:
            score, parts = _track_score(which, g, r, grid)
            per[name] = {"score": score, **parts}
        if share is not None:
            per[name]["reference_followed"] = share
        if self_score is not None:
            per[name]["reference_score"] = self_score
    if not extent:  # readable inputs that show nothing to compare: unscored, not failed
        raise Unmeasurable(f"no usable reference track among {list(cfg.targets)} ({_reasons(per)})",
                           tracks=per)
    # A target that could not be seeded has no score, and the tracked reference (seeded the same way) no
    # track either; scoring the others instead gave a file with NaN in ee_pos the object's score (1.0).
    # how far it moves is not known
    unknown = [n for n in unseeded if n not in ref.names]
    # Likewise a target the tracker could not start on the reference video (its seed frame does not show
    # it): no reference track, though the generated video may have one.
    unfollowed = [n for n in cfg.targets if n in ref.untracked and n not in unseeded]
    if cfg.select == "farthest":
        chosen = max(extent, key=lambda n: extent[n])
        if chosen in unseeded:
            raise Unmeasurable(
                f"the reference's farthest-moving track, {chosen}, has no generated track ({chosen}: "
                f"{_NOT_SEEDED}); another track does not stand in for it", tracks=per)
        if unknown:
            raise Unmeasurable(
                f"cannot tell which reference track moves farthest: {', '.join(unknown)}: {_NOT_SEEDED}, "
                "and the tracked reference, seeded the same way, has no track of it either", tracks=per)
        if unfollowed or unreferenced:
            said = _reasons({n: per[n] for n in unfollowed + unreferenced})
            raise Unmeasurable(f"cannot tell which reference track moves farthest: {said}", tracks=per)
        if chosen in unchecked:
            raise Unmeasurable(f"the reference's farthest-moving track, {chosen}: {per[chosen]['status']}",
                               tracks=per)
        value = float(per[chosen].get("score", 0.0))
    else:
        missing = [n for n in unseeded if n in extent or n in unknown]
        if missing:
            raise Unmeasurable(f"the mean needs every track; {', '.join(missing)}: {_NOT_SEEDED}", tracks=per)
        if unfollowed or unreferenced or unchecked:
            said = _reasons({n: per[n] for n in unfollowed + unreferenced + unchecked})
            raise Unmeasurable(f"the mean needs every track; {said}", tracks=per)
        chosen = "mean"
        value = float(np.mean([float(per[n].get("score", 0.0)) for n in extent]))
    details = {
        "truth": truth,
        "selected": chosen,
        "tracks": per,
        "frames": len(gen.points),
        "reference_frames": len(ref.points),
        "tracker": cfg.tracker,
        "state_view": tracks.view,
        **gen.info,
        **(tracks.rates.details() if tracks.rates is not None else {}),
    }
    if grid is not None:
        details["time_grid_fps"] = grid.fps
    return Score(value=value, details=details)


@robophys_metric(
    "ta_hsd",
    family=Family.kinematics,
    inputs=_INPUTS,
    description=(
        "Symmetric Hausdorff distance between the generated and reference 2-D tracks (image coordinates "
        "in [0, 1]) of the end effector or object with the larger reference extent, scored "
        "min(1, 1 / (24.979 H)) as in EWMBench. Tracks from the weights-free tracker by default."
    ),
    config=TrajectoryConfig,
    note=_EWM,
    version="10",  # v10: an fps above either video's own rate is lowered to it (v9: frames paired by index
    # there); v9: videos framed otherwise than the state's masks are unscored; v8: state view: the view
    # video is (v7: main_view when video was another; v6: view 0)
)
def ta_hsd(item: Item, config: TrajectoryConfig) -> Score:
    """HSD (RoboPhys-3D App. B.3.2): worst-case spatial deviation, ``H = max(h(G, R), h(R, G))``."""
    return _trajectory_metric(item, config, "hsd")


@robophys_metric(
    "ta_ndtw",
    family=Family.kinematics,
    inputs=_INPUTS,
    description=(
        "Dynamic time warping between the generated and reference 2-D tracks (exact DTW, Euclidean), "
        "mean cost per warping step d, scored min(1, 1 / (50.202 d)) as in EWMBench."
    ),
    config=TrajectoryConfig,
    note=_EWM,
    version="10",  # v10: an fps above either video's own rate is lowered to it (v9: frames paired by index
    # there); v9: videos framed otherwise than the state's masks are unscored; v8: state view: the view
    # video is (v7: main_view when video was another; v6: view 0)
)
def ta_ndtw(item: Item, config: TrajectoryConfig) -> Score:
    """nDTW (RoboPhys-3D App. B.3.2): spatial-temporal alignment under monotone time warping."""
    return _trajectory_metric(item, config, "ndtw")


@robophys_metric(
    "ta_dyn",
    family=Family.kinematics,
    inputs=_INPUTS,
    description=(
        "Dynamic consistency: Wasserstein-1 distances between the per-step speed and acceleration "
        "distributions of the generated and reference tracks, both read on one even time grid at the "
        "common rate, weighted by their range ratios, "
        "scored min(1, (0.007 r_v / W_v + 0.003 r_a / W_a) / 22.519) as in EWMBench."
    ),
    config=TrajectoryConfig,
    note=_EWM,
    version="10",  # v10: an fps above either video's own rate is lowered to it (v9: frames paired by index
    # there); v9: videos framed otherwise than the state's masks are unscored; v8: state view: the view
    # video is (v7: main_view when video was another; v6: view 0)
)
def ta_dyn(item: Item, config: TrajectoryConfig) -> Score:
    """DYN (RoboPhys-3D App. B.3.2): velocity and acceleration agreement with motion normalization."""
    return _trajectory_metric(item, config, "dyn")


# -- object localization (App. B.3.1) ---------------------------------------------------------------


class LocalizationConfig(TrackingConfig):
    """Which objects are categories (the manipulated one by default)."""

    objects: tuple[Literal["object", "distractor"], ...] = Field(
        default=("object",), min_length=1, description="tracked objects scored as detection categories"
    )


def _localization(item: Item, cfg: LocalizationConfig, which: str) -> tuple[float, float, dict[str, object]]:
    """AP, AR and details; ``which`` (``ap`` or ``ar``) is the measure the reference check uses."""
    tracks = item_tracks(item, cfg)
    gen, ref, truth, followed, checked = tracks[:5]
    # Every reference frame is an image to detect in (track_localization): frames the generated video
    # does not reach have no detection.
    n, found_in = len(ref.points), min(len(gen.points), len(ref.points))
    sx, sy = ref.size[0] / gen.size[0], ref.size[1] / gen.size[1]
    scale = np.array([sx, sy, sx, sy])
    aps: list[float] = []
    ars: list[float] = []
    per: dict[str, object] = {}
    for name in cfg.objects:
        if name not in gen.names:  # the reference state file's truth has it, the tracker had no seed
            per[name] = _NOT_SEEDED
            continue
        if name not in ref.names:  # the tracked reference, seeded at its own size, has no such target
            per[name] = _NO_REFERENCE_TRACK
            continue
        share = followed.get(name)
        if share is not None and share < cfg.min_followed:
            per[name] = _unfollowed(name, share, cfg)
            continue
        self_score = None
        if checked is not None:  # the reference video itself, tracked, against its own boxes
            if name in checked.names and name not in checked.untracked:
                k = checked.index(name)
                own = track_localization(ref.boxes[:n, ref.index(name)], checked.boxes[:n, k],
                                         checked.confidence[:n, k])
                self_score = float(getattr(own, which)) if not np.isnan(getattr(own, which)) else 0.0
            else:
                self_score = 0.0
            if self_score < cfg.min_reference_score:
                per[name] = _short_of(name, self_score, which.upper(), cfg)
                continue
        boxes = gen.boxes[:found_in, gen.index(name)] * scale  # the tracked boxes, in the reference's pixels
        confidence = gen.confidence[:found_in, gen.index(name)]
        loc = track_localization(ref.boxes[:n, ref.index(name)], boxes, confidence)
        if np.isnan(loc.ap):
            per[name] = _why("never visible in the reference", ref.untracked.get(name))
            continue
        aps.append(loc.ap)
        ars.append(loc.ar)
        found: dict[str, object] = {
            "ap": loc.ap,
            "ar": loc.ar,
            "frames_with_truth": loc.frames_with_truth,
            "frames_detected": loc.frames_detected,
        }
        if name in gen.untracked:
            found["status"] = _why("lost in the generated video", gen.untracked[name])
        if share is not None:
            found["reference_followed"] = share
        if self_score is not None:
            found[f"reference_{which}"] = self_score
        per[name] = found
    if not aps:  # readable inputs that show nothing to localize: unscored, not failed
        raise Unmeasurable(f"no reference object to localize among {list(cfg.objects)} ({_reasons(per)})",
                           objects=per)
    details: dict[str, object] = {
        "truth": truth, "objects": per, "frames": found_in, "frames_expected": n,
        "frames_missing": n - found_in, "frames_unmatched": len(gen.points) - found_in,
        "tracker": cfg.tracker, "state_view": tracks.view, **gen.info,
        **(tracks.rates.details() if tracks.rates is not None else {})}
    return float(np.mean(aps)), float(np.mean(ars)), details


@robophys_metric(
    "ol_average_precision",
    family=Family.state,
    inputs=_INPUTS,
    description=(
        "COCO average precision (IoU 0.50:0.95, 101 recall points) of the tracked object boxes in each "
        "generated frame against the reference episode's boxes at the same time; one category per object."
    ),
    config=LocalizationConfig,
    note="COCO detection protocol (Lin et al. 2014); boxes from the weights-free tracker by default",
    version="10",  # v10: an fps above either video's own rate is lowered to it (v9: frames paired by index
    # there); v9: videos framed otherwise than the state's masks are unscored; v8: state view: the view
    # video is (v7: main_view when video was another; v6: view 0)
)
def ol_average_precision(item: Item, config: LocalizationConfig) -> Score:
    """Average Precision (RoboPhys-3D App. B.3.1): precision of the manipulated object's location."""
    ap, _, details = _localization(item, config, "ap")
    return Score(value=ap, details=details)


@robophys_metric(
    "ol_average_recall",
    family=Family.state,
    inputs=_INPUTS,
    description=(
        "COCO average recall (IoU 0.50:0.95) of the tracked object boxes against the reference episode's "
        "boxes frame by frame: the fraction of the object's appearances found at the right place."
    ),
    config=LocalizationConfig,
    note="COCO detection protocol (Lin et al. 2014); boxes from the weights-free tracker by default",
    version="10",  # v10: an fps above either video's own rate is lowered to it (v9: frames paired by index
    # there); v9: videos framed otherwise than the state's masks are unscored; v8: state view: the view
    # video is (v7: main_view when video was another; v6: view 0)
)
def ol_average_recall(item: Item, config: LocalizationConfig) -> Score:
    """Average Recall (RoboPhys-3D App. B.3.1): coverage of the manipulated object's appearances."""
    _, ar, details = _localization(item, config, "ar")
    return Score(value=ar, details=details)
