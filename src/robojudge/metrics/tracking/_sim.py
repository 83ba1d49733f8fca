"""Seeds and ground-truth tracks from a sim-suite state file (layout in docs/sim_suite.md)."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from robojudge.metrics.tracking._types import Target, Tracks, TrackSeed
from robojudge.suite import npz_problem

#: Mask class ids of the sim suite (docs/sim_suite.md, ``masks``) for the tracked region targets.
REGION_CLASSES: dict[str, int] = {"object": 3, "distractor": 4, "duplicate": 5}
ROBOT_CLASS = 2
EE = "ee"
KP_PREFIX = "kp:"


class StateFileError(ValueError):
    """A state file is missing, unreadable or lacks an array; the message names file and array."""


def read_state(path: str | Path, keys: Iterable[str]) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the state npz at ``path`` that it holds (a key it lacks is left out).

    Raises:
        StateFileError: ``cannot read state file <path>: <why>`` when the file is missing, empty,
            not an npz archive (a text file, a single ``.npy`` array), damaged, or holds one of
            ``keys`` as pickled Python objects (never loaded).
    """
    why = npz_problem(path)
    if why:
        raise StateFileError(f"cannot read state file {path}: {why}")
    out: dict[str, np.ndarray] = {}
    key = ""
    try:
        with np.load(path, allow_pickle=False) as z:
            for key in keys:
                if key in z.files:
                    out[key] = np.asarray(z[key])
    except ValueError as exc:
        where = f"array {key!r}: " if key else ""
        why = ("stored as pickled Python objects, which are not loaded" if "allow_pickle" in str(exc)
               else str(exc))
        raise StateFileError(f"cannot read state file {path}: {where}{why}") from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        where = f"array {key!r}: " if key else ""
        raise StateFileError(
            f"cannot read state file {path}: {where}damaged or truncated npz archive ({exc})"
        ) from None
    return out


def state_flags(arr: np.ndarray, path: str | Path, key: str) -> np.ndarray:
    """``arr``, the state file's array ``key``, as bool: a bool array, or integers that are all 0 or 1.

    Raises:
        StateFileError: For any other dtype (floats, where NaN or 0.3 would read as true; strings,
            where 'no' would) or integers other than 0 and 1, naming the file, the array and where.
    """
    if arr.dtype == np.bool_:
        return arr
    if not np.issubdtype(arr.dtype, np.integer):
        raise StateFileError(
            f"state file {path}: array {key!r} must be bool (or integers 0 and 1), got dtype {arr.dtype} "
            "(see docs/sim_suite.md)"
        )
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        first = tuple(int(i[0]) for i in np.nonzero(bad))
        raise StateFileError(
            f"state file {path}: array {key!r} holds integers other than 0 and 1 ({int(bad.sum())} values, "
            f"first {arr[first].item()} at frame {first[0]})"
        )
    return arr.astype(bool)


def _frames(bad: np.ndarray) -> str:
    """``frame 3`` or ``5 frames (first 0, 1, 2, ...)``: the frames (first axis) flagged in ``bad``."""
    rows = np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))
    if len(rows) == 1:
        return f"frame {rows[0]}"
    more = ", ..." if len(rows) > 3 else ""
    return f"{len(rows)} frames (first {', '.join(str(r) for r in rows[:3])}{more})"


@dataclass(frozen=True)
class SimState:
    """The arrays of one view of a state file that tracking needs.

    Attributes:
        masks: ``(T, S, S)`` uint8 class ids.
        ee_uv: ``(T, 2)`` end-effector position projected into the view (pixels).
        keypoint_names: ``(K,)`` robot keypoint names.
        keypoints_uv: ``(T, K, 2)`` projected keypoints; ``keypoints_visible``: ``(T, K)`` bool.
    """

    masks: np.ndarray
    ee_uv: np.ndarray
    keypoint_names: tuple[str, ...]
    keypoints_uv: np.ndarray
    keypoints_visible: np.ndarray

    @property
    def size(self) -> tuple[int, int]:
        return int(self.masks.shape[2]), int(self.masks.shape[1])

    @classmethod
    def load(cls, path: str | Path, view: int = 0) -> SimState:
        """Read view ``view`` of a state npz.

        Raises:
            StateFileError: When the file cannot be read or lacks an array or the view; when
                ``ee_pos`` or the view's camera (``K``, ``R``, ``t``) is not finite, or a keypoint
                marked visible has no finite ``keypoints_2d``; when ``keypoints_visible`` is not bool.
        """
        need = ("masks", "ee_pos", "K", "R", "t", "keypoint_names", "keypoints_2d", "keypoints_visible")
        arr = read_state(path, need)
        missing = [k for k in need if k not in arr]
        if missing:
            raise StateFileError(f"state file {path} has no {missing} array(s) (see docs/sim_suite.md)")
        if not 0 <= view < arr["masks"].shape[1]:
            raise StateFileError(
                f"state file {path} has {arr['masks'].shape[1]} views, asked for view {view}"
            )
        camera = {"K": arr["K"][view], "R": arr["R"][:, view], "t": arr["t"][:, view]}
        # A position the simulator did not record is a broken file, not a hidden target: NaN in ee_pos
        # left the end effector unseeded and out of the reference too, and another track was scored.
        for key, values in {"ee_pos": arr["ee_pos"], "R": camera["R"], "t": camera["t"]}.items():
            bad = ~np.isfinite(values.astype(np.float64))
            if bad.any():
                raise StateFileError(
                    f"state file {path}: array {key!r} is not finite (NaN or inf) at {_frames(bad)}"
                )
        if not np.isfinite(camera["K"].astype(np.float64)).all():
            raise StateFileError(f"state file {path}: array 'K' is not finite (NaN or inf) for view {view}")
        names = tuple(str(n) for n in arr["keypoint_names"])
        kp_uv = arr["keypoints_2d"][:, view].astype(np.float64)
        kp_seen = state_flags(arr["keypoints_visible"], path, "keypoints_visible")[:, view]
        # A keypoint off the image may have no position (NaN); one marked visible needs a place.
        broken = kp_seen & ~np.isfinite(kp_uv).all(axis=-1)
        if broken.any():
            k = int(np.nonzero(broken)[1][0])
            raise StateFileError(
                f"state file {path}: array 'keypoints_2d' has no finite position in view {view} for "
                f"keypoints marked visible at {_frames(broken)} (first keypoint {names[k]!r})"
            )
        # Behind the camera (z <= 0) the end effector projects to NaN: not visible in this view.
        ee_uv = project(arr["ee_pos"].astype(np.float64), camera["K"], camera["R"], camera["t"])
        return cls(
            masks=arr["masks"][:, view],
            ee_uv=ee_uv,
            keypoint_names=names,
            keypoints_uv=kp_uv,
            keypoints_visible=kp_seen,
        )


def project(points: np.ndarray, k: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Pixels ``(T, 2)`` of world points ``(T, 3)``, per-frame ``R (T,3,3)`` and ``t (T,3)``, OpenCV axes."""
    cam = np.einsum("tij,tj->ti", r, points) + t
    z = cam[:, 2]
    u = k[0, 0] * cam[:, 0] / z + k[0, 2]
    v = k[1, 1] * cam[:, 1] / z + k[1, 2]
    out = np.stack([u, v], axis=1)
    out[z <= 0] = np.nan
    return out


def _resize_mask(mask: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    if (mask.shape[1], mask.shape[0]) == size:
        return mask
    resized: np.ndarray = cv2.resize(mask.astype(np.uint8), size, interpolation=cv2.INTER_NEAREST)
    return resized.astype(bool)


def _centroid_box(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return np.full(2, np.nan), np.full(4, np.nan)
    centre = np.array([xs.mean() + 0.5, ys.mean() + 0.5])
    return centre, np.array([xs.min(), ys.min(), xs.max() + 1.0, ys.max() + 1.0])


def seed_from_state(
    state: SimState,
    size: tuple[int, int] | None = None,
    *,
    objects: tuple[str, ...] = ("object", "distractor"),
    ee: bool = True,
    keypoints: bool = False,
    frame: int = 0,
    min_area: int = 4,
    appear_within: int = 10,
) -> TrackSeed:
    """First-frame targets of a rollout: object masks, the end effector and (optionally) keypoints.

    An object hidden on ``frame`` (fewer than ``min_area`` mask pixels, e.g. under the gripper at
    the start of a push) is seeded on the first of the next ``appear_within`` frames that shows it,
    and left out if none does; keypoints not visible on ``frame`` are left out. Masks and points are
    scaled to ``size`` (the video's width, height).
    """
    w, h = size or state.size
    sx, sy = w / state.size[0], h / state.size[1]
    scale = np.array([sx, sy])
    robot = _resize_mask(state.masks[frame] == ROBOT_CLASS, (w, h))
    targets: list[Target] = []
    for name in objects:
        if name not in REGION_CLASSES:
            raise ValueError(f"unknown object {name!r}; known: {sorted(REGION_CLASSES)}")
        last = min(len(state.masks), frame + appear_within + 1)
        areas = [int((state.masks[k] == REGION_CLASSES[name]).sum()) for k in range(frame, last)]
        if areas[0] < min_area and max(areas) >= min_area:  # hidden at first: its first clear view
            k = frame + next(i for i, a in enumerate(areas) if a >= max(min_area, max(areas) // 2))
        else:
            k = frame
        mask = _resize_mask(state.masks[k] == REGION_CLASSES[name], (w, h))
        if mask.sum() >= min_area:
            centre, _ = _centroid_box(mask)
            targets.append(Target(name, (float(centre[0]), float(centre[1])), mask=mask, start=k - frame))
    if ee and np.isfinite(state.ee_uv[frame]).all():
        u, v = state.ee_uv[frame] * scale
        targets.append(Target(EE, (float(u), float(v)), support=robot))
    if keypoints:
        for j, name in enumerate(state.keypoint_names):
            if state.keypoints_visible[frame, j]:
                u, v = state.keypoints_uv[frame, j] * scale
                targets.append(Target(KP_PREFIX + name, (float(u), float(v)), support=robot))
    return TrackSeed(tuple(targets), (w, h))


def true_tracks(state: SimState, names: tuple[str, ...], size: tuple[int, int] | None = None) -> Tracks:
    """Ground-truth tracks of ``names`` from the state: mask centroids and boxes, projected points.

    Region targets are absent (NaN) on frames where their mask is empty; keypoints where the state
    marks them not visible; the end effector is its projection on every frame (occluded or not).
    """
    w, h = size or state.size
    scale = np.array([w / state.size[0], h / state.size[1]])
    length = len(state.masks)
    points = np.full((length, len(names), 2), np.nan)
    boxes = np.full((length, len(names), 4), np.nan)
    for i, name in enumerate(names):
        if name in REGION_CLASSES:
            for t in range(length):
                mask = _resize_mask(state.masks[t] == REGION_CLASSES[name], (w, h))
                points[t, i], boxes[t, i] = _centroid_box(mask)
        elif name == EE:
            points[:, i] = state.ee_uv * scale
        elif name.startswith(KP_PREFIX) and name[len(KP_PREFIX) :] in state.keypoint_names:
            j = state.keypoint_names.index(name[len(KP_PREFIX) :])
            uv = state.keypoints_uv[:, j] * scale
            uv[~state.keypoints_visible[:, j]] = np.nan
            points[:, i] = uv
        else:
            raise KeyError(f"no ground truth for track {name!r}")
    conf = np.isfinite(points[..., 0]).astype(np.float64)
    return Tracks(tuple(names), points, boxes, conf, (w, h))
