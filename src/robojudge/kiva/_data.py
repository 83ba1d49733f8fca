"""Training data for the keypoint reader: main-view frames and their forward-kinematics keypoints.

An episode is a video with a state file that holds ``keypoint_names``, ``keypoints_2d`` (``(T, V, K, 2)``
pixels of every view) and ``keypoints_visible`` (``(T, V, K)``), the layout of the simulator suite's
state files (docs/sim_suite.md). From a manifest, the episodes are the reference videos whose state file
sits beside them (``reference/<clip>.npz``) and the rollouts with a state file and no planted failure
(``meta.failures`` empty): a faithful rollout's keypoints are the true ones of what it shows. Both are
read in the item's main view (:func:`robojudge.suite.main_view_name`, whose file a manifest's ``video``
is): a reference video shows the main view, as the simulator suite writes it. With ``all_views``, a
faithful rollout's other views (``views``) are episodes too, each read in its own view of the state
file, so a reader learns every camera.

A recorded episode without such a state file (an item with ``robot``, ``joint_states`` and
``calibration``, no ``generator`` and no planted failure; docs/manifest.md) gets its keypoints from
forward kinematics of its joint states, projected into its main view's calibrated camera
(:mod:`robojudge.robots`). Without depth, a keypoint counts as visible when it projects inside the frame
(occlusion is not known).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from robojudge.suite import Item, load_suite, main_view_name
from robojudge.video import sample_frames

if TYPE_CHECKING:
    from robojudge.robots import Camera

STATE_KEYS = ("keypoint_names", "keypoints_2d", "keypoints_visible")
#: Planted failure types whose state-file keypoints are the pose the video shows (the simulator's
#: kinematic failures): rollouts with only these may train a reader (``failures``).
RENDERED_FAILURES = frozenset({"link_stretch", "bend", "joint_limit", "jitter", "config_jump", "finger_pass"})


class KivaDataError(ValueError):
    """Training or calibration data that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Recording:
    """Where a recorded episode's keypoints come from: its robot spec, joint states and camera."""

    robot: Path
    joint_states: Path
    calibration: Path
    view: str | None


@dataclass(frozen=True)
class Episode:
    """One video with forward-kinematics keypoints for its frames.

    Attributes:
        name: ``reference:<clip>`` or the rollout's item id.
        group: The clip the episode shows; a reference and its rollouts share it and are never split
            between training and held-out data.
        video: The main view's video file.
        state: Its state file (``None`` for a recording read through forward kinematics).
        view: Which view of the state file's arrays the video is.
        reference: Whether it is a reference (real) episode.
        embodiment: The manifest item's ``embodiment`` field, if it has one.
        recording: For a recording: spec, joint states and calibration.
        view_name: The view's name, when the item or state file names its views.
        failure_spans: A rollout's planted failures as ``[start, stop)`` frame spans (``meta.failures``);
            empty for references, faithful rollouts and recordings.
    """

    name: str
    group: str
    video: Path
    state: Path | None
    view: int
    reference: bool
    embodiment: str | None = None
    recording: Recording | None = None
    view_name: str | None = None
    failure_spans: tuple[tuple[int, int], ...] = ()

    @property
    def files(self) -> list[Path]:
        """Every file the episode's frames and keypoints are read from."""
        if self.recording is None:
            return [self.video, *([self.state] if self.state else [])]
        r = self.recording
        return [self.video, r.robot, r.joint_states, r.calibration]


@dataclass
class EpisodeData:
    """An episode's frames resized to ``size x size`` and its keypoints in those pixels."""

    episode: Episode
    frames: np.ndarray  # (T, S, S, 3) uint8
    keypoints: np.ndarray  # (T, K, 2) float32, pixels of the resized frame
    visible: np.ndarray  # (T, K) bool
    native: tuple[int, int]  # the video's (width, height)
    fps: float


def _state_names(path: Path) -> tuple[list[str], list[str]] | None:
    """The state file's keypoint and view names, or None when it has no keypoints."""
    try:
        with np.load(path) as z:
            if not all(k in z.files for k in STATE_KEYS):
                return None
            kp = [str(x) for x in z["keypoint_names"]]
            views = [str(x) for x in z["view_names"]] if "view_names" in z.files else []
    except (OSError, ValueError) as exc:
        raise KivaDataError(f"{path}: cannot read the state file: {exc}") from None
    return kp, views


def _view_index(views: list[str], name: str | None, path: Path) -> int:
    if not name or not views:
        return 0
    if name not in views:
        raise KivaDataError(f"{path}: field view_names {views} has no view {name!r} (the item's main_view)")
    return views.index(name)


def collect_episodes(
    items: Iterable[Item], keypoints: Sequence[str] | None = None, rollouts: bool = True,
    all_views: bool = False, failures: bool = False,
) -> tuple[list[Episode], list[str]]:
    """The episodes of ``items`` whose state files hold all of ``keypoints``, and those names.

    Args:
        items: Manifest items, paths resolved.
        keypoints: Keypoint names to read, in order; ``None`` takes the first episode's names.
        rollouts: Also take rollouts without planted failures (``meta.failures`` empty), not just
            the reference videos.
        all_views: Take every view of a faithful rollout (``views`` named in its state file's
            ``view_names``) and of a recording (``views`` its calibration names), one episode per view
            named ``<item>@<view>``; a reference video is one view (the main one) either way.
        failures: With ``rollouts``, also take rollouts whose planted failures are all of
            :data:`RENDERED_FAILURES` (their state files hold the pose as rendered).

    Returns:
        The episodes (references first, each once, in manifest order) and the keypoint names.
    """
    refs: dict[str, Episode] = {}
    others: list[Episode] = []
    wanted = list(keypoints) if keypoints is not None else None
    for item in items:
        group = item.clip_id or item.item_id
        kind = item.embodiment.value if item.embodiment is not None else None
        if rollouts and _is_recording(item):
            names = _spec_keypoints(item)
            if wanted is None:
                wanted = names
            if set(wanted) <= set(names):
                assert item.robot and item.joint_states and item.calibration  # _is_recording
                for rec_view, rec_video in _recording_views(item, all_views):
                    rec = Recording(Path(item.robot), Path(item.joint_states), Path(item.calibration),
                                    rec_view)
                    rec_name = item.item_id if rec_video == item.video else f"{item.item_id}@{rec_view}"
                    others.append(Episode(rec_name, group, Path(rec_video), None, 0, False, kind, rec,
                                          rec_view))
        # (name, video, state, reference, view name): the view name picks the state file's arrays.
        candidates: list[tuple[str, Path, Path, bool, str | None]] = []
        main = main_view_name(item)
        if item.reference_video:
            ref = Path(item.reference_video)
            if ref.with_suffix(".npz").is_file() and str(ref) not in refs:
                candidates.append((f"reference:{group}", ref, ref.with_suffix(".npz"), True, main))
        if rollouts and item.state and _trainable(item.meta.get("failures"), failures):
            # `video` is the main view's file (a manifest refuses an item where it is not): read in its view.
            candidates.append((item.item_id, Path(item.video), Path(item.state), False, main))
            if all_views and item.views:
                candidates.extend((f"{item.item_id}@{v}", Path(p), Path(item.state), False, v)
                                  for v, p in item.views.items() if v != main)
        spans = _failure_spans(item.meta.get("failures"))
        for name, video, state, is_ref, view_name in candidates:
            found = _state_names(state)
            if found is None:
                continue
            names, views = found
            if wanted is None:
                wanted = names
            if not set(wanted) <= set(names):
                continue
            if view_name != main and view_name not in views:
                continue  # a view the state file holds no keypoints for
            view = _view_index(views, view_name, state)
            ep = Episode(name, group, video, state, view, is_ref, kind, None,
                         views[view] if views else view_name, () if is_ref else spans)
            if is_ref:
                refs[str(video)] = ep
            else:
                others.append(ep)
    return [*refs.values(), *others], list(wanted or [])


def _trainable(planted: Any, failures: bool) -> bool:
    """Whether a rollout's keypoints are the pose it shows: no failure, or (with ``failures``) only
    failures that move the robot as drawn."""
    if not planted:
        return True
    if not failures or not isinstance(planted, list):
        return False
    return all(isinstance(f, dict) and f.get("type") in RENDERED_FAILURES for f in planted)


def _failure_spans(planted: Any) -> tuple[tuple[int, int], ...]:
    """``[start, stop)`` frame spans of the planted failures that give both (others are left out)."""
    if not isinstance(planted, list):
        return ()
    spans = []
    for f in planted:
        if isinstance(f, dict) and isinstance(f.get("start"), int) and isinstance(f.get("stop"), int):
            spans.append((int(f["start"]), int(f["stop"])))
    return tuple(spans)


def _recording_views(item: Item, all_views: bool) -> list[tuple[str | None, str]]:
    """(view name, video) pairs of a recording read as episodes: its main view, or with ``all_views``
    every view its calibration names."""
    main = [(main_view_name(item), item.video)]
    if not all_views or not item.views:
        return main
    from robojudge.robots import load_calibration

    assert item.calibration
    try:
        cams = load_calibration(item.calibration)
    except ValueError as exc:
        raise KivaDataError(f"item {item.item_id!r} field calibration: {exc}") from None
    return [(v, p) for v, p in item.views.items() if v in cams] or main


def _is_recording(item: Item) -> bool:
    # A generated video's joint states are those it was conditioned on, not what it shows.
    has_keypoints = item.state is not None and _state_names(Path(item.state)) is not None
    return bool(item.robot and item.joint_states and item.calibration and not item.generator
                and not item.meta.get("failures") and not has_keypoints)


def _spec_keypoints(item: Item) -> list[str]:
    from robojudge.robots import read_robot_spec

    try:
        return list(read_robot_spec(str(item.robot)).keypoints)
    except ValueError as exc:
        raise KivaDataError(f"item {item.item_id!r} field robot: {exc}") from None


def recording_keypoints(rec: Recording, name: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Keypoint names, ``(T, K, 2)`` pixels and ``(T, K)`` visibility in the recording's view, and the
    ``(T, K, 3)`` world positions, by forward kinematics of its joint states.

    Raises:
        KivaDataError: The spec, joint states or calibration cannot be used (naming the episode).
    """
    from robojudge.robots import forward_kinematics, load_calibration, load_joint_states, load_robot_spec

    field = "robot"
    try:
        spec = load_robot_spec(rec.robot)
        field = "joint_states"
        kp3 = forward_kinematics(spec, load_joint_states(rec.joint_states, spec.joints))
        field = "calibration"
        cams = load_calibration(rec.calibration)
    except ValueError as exc:
        raise KivaDataError(f"episode {name!r} field {field}: {exc}") from None
    uv, vis = _camera_of(rec, cams).project(kp3)
    return list(spec.keypoints), np.nan_to_num(uv, nan=-1.0), vis, kp3


def episode_keypoints_3d(ep: Episode, names: Sequence[str]) -> np.ndarray:
    """``(T, K, 3)`` world positions of ``names`` in an episode (for measuring rigid links).

    Raises:
        KivaDataError: A state file without ``keypoints_3d``.
    """
    if ep.recording is not None:
        stored, _, _, kp3 = recording_keypoints(ep.recording, ep.name)
        return kp3[:, [stored.index(k) for k in names]]
    assert ep.state is not None
    with np.load(ep.state) as z:
        if "keypoints_3d" not in z.files:
            raise KivaDataError(f"{ep.state}: field keypoints_3d is missing; name the links in a robot spec")
        stored = [str(x) for x in z["keypoint_names"]]
        return np.asarray(z["keypoints_3d"])[:, [stored.index(k) for k in names]]


def episodes_from_manifest(
    manifest: str | Path, keypoints: Sequence[str] | None = None, rollouts: bool = True,
    all_views: bool = False, failures: bool = False,
) -> tuple[list[Episode], list[str]]:
    """:func:`collect_episodes` over a manifest's items.

    Raises:
        KivaDataError: No item gives an episode with those keypoints.
    """
    episodes, names = collect_episodes(load_suite(manifest).items, keypoints, rollouts, all_views, failures)
    if not episodes:
        want = f" with the keypoints {list(keypoints)}" if keypoints is not None else ""
        raise KivaDataError(
            f"{manifest}: no reference video with a state file beside it, nor faithful rollout with a state "
            f"file, holds {', '.join(STATE_KEYS)}{want}; nor is any item a recording with robot, "
            "joint_states and calibration"
        )
    return episodes, names


def load_episode(ep: Episode, keypoints: Sequence[str], size: int) -> EpisodeData:
    """Decode every frame of ``ep.video``, resize to ``size``, and scale the keypoints to match.

    The keypoints are one row per frame of the video, as a recording's joint states are: another count
    is the file of another episode, or one cut short, whose keypoints would be put on the wrong frames.

    Raises:
        KivaDataError: The state file's arrays do not have the documented shapes, or another number of
            rows than the video has frames.
    """
    sampled = sample_frames(ep.video, fps=None, max_frames=None)
    frames = sampled.frames
    h, w = frames.shape[1:3]
    names, kp2, vis, drawn = _targets(ep)
    if ep.recording is not None:
        from robojudge.robots import frame_mismatch

        # A recording's joint states are one row per frame of its video (docs/manifest.md): another count
        # is a file of another episode, or one cut short, and its keypoints would be put on wrong frames.
        wrong = frame_mismatch(len(kp2), len(frames))
        if wrong is not None:
            where = f"episode {ep.name!r} field joint_states: {ep.recording.joint_states}"
            raise KivaDataError(f"{where}: {wrong}")
    elif len(kp2) != len(frames):
        raise KivaDataError(f"episode {ep.name!r}: state file {ep.state} has {len(kp2)} rows of keypoints "
                            f"and its video {ep.video} {len(frames)} frames (one row per frame of video)")
    if drawn is not None and tuple(drawn) != (w, h):
        # The keypoints are pixels of the picture as calibrated (a recording) or rendered (a state file's
        # masks); the video is that picture resized, or it is framed otherwise and cannot be labelled.
        from robojudge.robots import same_picture

        pw, ph = drawn
        if not same_picture(drawn, w, h):
            raise KivaDataError(
                f"episode {ep.name!r}: video {ep.video} is {w}x{h} (aspect {w / h:.3f}) and its keypoints "
                f"are pixels of a {pw}x{ph} picture ({pw / ph:.3f}, {_drawn_where(ep)}): another framing "
                "(a crop, padding, another camera), on which the keypoints would be put in the wrong place")
        kp2 = kp2 * np.array([w / pw, h / ph], np.float32)
    idx = [names.index(k) for k in keypoints]
    n = min(len(frames), len(kp2))
    kp = kp2[:n][:, idx] * np.array([size / w, size / h], np.float32)
    seen = vis[:n][:, idx] & np.all((kp >= 0) & (kp < size), axis=-1)
    small = np.stack([cv2.resize(f, (size, size), interpolation=cv2.INTER_AREA) for f in frames[:n]])
    return EpisodeData(ep, small, kp.astype(np.float32), seen, (w, h), float(sampled.source_fps))


def _drawn_where(ep: Episode) -> str:
    """Where the size of the picture an episode's keypoints are pixels of comes from."""
    if ep.recording is not None:
        view = ep.recording.view
        camera = f"view {view!r}" if view is not None else "its camera"
        return f"the size of {camera} in calibration {ep.recording.calibration}"
    return f"the size of the masks in state file {ep.state}"


def _targets(ep: Episode) -> tuple[list[str], np.ndarray, np.ndarray, tuple[int, int] | None]:
    """Keypoint names, ``(T, K, 2)`` pixels and ``(T, K)`` visibility of the episode's view, and the
    (width, height) of the picture those are pixels of (None when the file does not say)."""
    if ep.recording is not None:
        names, uv, vis, _ = recording_keypoints(ep.recording, ep.name)
        return names, uv.astype(np.float32), vis, _recording_size(ep.recording)
    assert ep.state is not None
    with np.load(ep.state) as z:
        names = [str(x) for x in z["keypoint_names"]]
        kp2 = np.asarray(z["keypoints_2d"], dtype=np.float32)
        vis = np.asarray(z["keypoints_visible"], dtype=bool)
        # the simulator's state files hold per-view masks (T, views, H, W) rendered with the keypoints
        masks: tuple[int, ...] = z["masks"].shape if "masks" in z.files else ()
    drawn = (int(masks[3]), int(masks[2])) if len(masks) == 4 else None
    if kp2.ndim != 4 or kp2.shape[-1] != 2 or vis.shape != kp2.shape[:3] or kp2.shape[2] != len(names):
        raise KivaDataError(
            f"{ep.state}: field keypoints_2d must be (T, views, {len(names)}, 2) and keypoints_visible "
            f"(T, views, {len(names)}); got {kp2.shape} and {vis.shape}"
        )
    uv, seen = kp2[:, ep.view], vis[:, ep.view]
    broken = seen & ~np.isfinite(uv).all(axis=-1)
    if broken.any():  # a keypoint marked visible needs a place: NaN here is a broken file, not an occlusion
        t, k = (int(i[0]) for i in np.nonzero(broken))
        raise KivaDataError(
            f"{ep.state}: field keypoints_2d: {int(broken.sum())} keypoint(s) marked visible in "
            f"keypoints_visible have no finite position in view {ep.view} (first: frame {t}, keypoint "
            f"{names[k]!r}); mark them not visible or fix their coordinates"
        )
    return names, uv, seen, drawn


def _recording_size(rec: Recording) -> tuple[int, int]:
    """The (width, height) of the picture a recording's view is calibrated for."""
    from robojudge.robots import load_calibration

    cam = _camera_of(rec, load_calibration(rec.calibration))  # recording_keypoints has read it already
    return int(cam.size[0]), int(cam.size[1])


def _camera_of(rec: Recording, cams: dict[str, Camera]) -> Camera:
    """The camera of the recording's view in its calibration ``cams`` (the only one, if it has one)."""
    if rec.view in cams:
        return cams[rec.view]
    if len(cams) == 1:
        return next(iter(cams.values()))
    raise KivaDataError(f"{rec.calibration}: no camera for view {rec.view!r} (has {sorted(cams)})")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def data_fingerprint(episodes: Sequence[Episode]) -> dict[str, object]:
    """SHA-256 of every file used (videos, state files; a recording's spec, joint states and calibration),
    and one hash over their contents."""
    files: dict[str, str] = {}
    for ep in episodes:
        for p in ep.files:
            files.setdefault(str(p), file_sha256(p))
    overall = hashlib.sha256(json.dumps(sorted(files.values())).encode()).hexdigest()
    return {"sha256": overall, "files": files}
