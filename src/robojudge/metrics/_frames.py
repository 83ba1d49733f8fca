"""Frame preprocessing shared by metrics, so equal settings mean one decode per item."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._content import require_frames, require_side
from robojudge.metrics._errors import Unmeasurable
from robojudge.metrics._registry import HASH_WHEN_SET, get_metric
from robojudge.suite._schema import Item
from robojudge.video import RESAMPLES, VideoInfo, prefetch_frames, probe_video, sample_frames


class GrayPreprocess(BaseModel):
    """Decode rate and size of a grayscale frame sequence; defaults are RoboJudge App. B.3's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Config values the fast profile (``FrameOptions(profile="fast")``) gives a metric with this config
    #: (under the values the run sets for it itself): see :func:`frame_option_values`.
    FAST_SETTINGS: ClassVar[dict[str, Any]] = {}

    fps: float = Field(default=8.0, gt=0, description="decode rate in frames per second")
    width: int = Field(default=256, gt=0, description="frames are resized to width x height")
    height: int = Field(default=256, gt=0)

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        """What a metric with this config reads of ``item``'s main video (:func:`prefetch_main_video`):
        nothing of a video too small to scale up (:func:`gray_sequence` refuses it from the probe)."""
        try:
            require_gray_side(item, self)
        except Unmeasurable:
            return []
        return [gray_sampling(self)]


def main_video_frames(
    item: Item,
    *,
    fps: float | None,
    max_frames: int | None = None,
    size: int | tuple[int, int] | None = None,
    gray: bool = False,
    least: int = 2,
) -> np.ndarray:
    """The item's main video sampled as :func:`robojudge.video.sample_frames` does, as an array.

    Raises:
        Unmeasurable: When the video gives fewer than ``least`` frames (the item is left unscored).
    """
    frames = sample_frames(item.video, fps=fps, max_frames=max_frames, size=size, gray=gray).frames
    require_frames(frames, least)
    return frames


def gray_sampling(cfg: GrayPreprocess) -> dict[str, Any]:
    """The :func:`sample_frames` arguments :func:`gray_sequence` reads the main video with."""
    return {"fps": cfg.fps, "max_frames": None, "size": (cfg.width, cfg.height), "gray": True}


def require_gray_side(item: Item, cfg: GrayPreprocess) -> VideoInfo:
    """The item's video's probe (no frame is decoded); raise :class:`~robojudge.metrics._errors.Unmeasurable`
    when it is too small to scale up to ``width`` x ``height``
    (:func:`~robojudge.metrics._content.require_side`)."""
    own = probe_video(item.video)
    require_side((own.width, own.height), why=f" (they would be scaled up to {cfg.width}x{cfg.height})")
    return own


def gray_sequence(item: Item, cfg: GrayPreprocess) -> np.ndarray:
    """The item's main video as ``(T, H, W)`` uint8 grayscale frames, at least two of them.

    Raises:
        Unmeasurable: When the video's own frames are too small to scale up to ``width`` x ``height``
            (:func:`~robojudge.metrics._content.require_side`), or it gives fewer than 2 frames at
            ``fps`` (the reason says how many the video has and how long it lasts, when the sampling
            left fewer than it has).
    """
    own = require_gray_side(item, cfg)
    frames = sample_frames(item.video, **gray_sampling(cfg)).frames
    if len(frames) < 2 and own.frame_count is not None and own.frame_count >= 2:
        lasts = f" ({own.duration:.2g} s)" if own.duration else ""
        got = f"{len(frames)} frame{'s' if len(frames) != 1 else ''}"
        raise Unmeasurable(f"{own.frame_count} frames{lasts} sampled at {cfg.fps:g} fps give {got}; the "
                           "metric needs at least 2 frames", frames=len(frames), video_frames=own.frame_count,
                           fps=cfg.fps)
    require_frames(frames, 2)
    return frames


#: The evaluation profiles: ``native`` (the metrics' definitions) and ``fast`` (``robojudge score --fast``).
Profile = Literal["native", "fast"]
#: The longer side, in px, that the ``fast`` profile scales every video to (unless a size is given).
FAST_SIZE = 640
#: Under the ``fast`` profile the metrics that read every consecutive pair or every frame at native
#: rate (``cc_photometric``, ``mq_flow_score``, ``ctg_camera_control``) read about this many per
#: second of video (every ``round(fps / 8)``-th: still consecutive frames, VBench's 8 fps for dynamic
#: degree), and ``rbg_stability`` matches half its pairs per interval.
FAST_PAIRS_PER_SECOND = 8.0
#: How frames are shrunk to the evaluation size: ``area`` (``INTER_AREA``) or ``fast`` (bilinear down to
#: half of each side, ``INTER_AREA`` beyond; what ``FrameOptions(profile="fast")`` sets).
Resample = Literal["area", "fast"]


class NativeFrames(BaseModel):
    """Which frames a metric defined "at native rate and size" reads; the defaults keep both.

    ``size`` gives every video the same evaluation size (the longer side scaled to it, up or down;
    ``robojudge score --size``), so values of generators of different resolutions can be compared.
    ``max_side`` only caps: a video whose longer side exceeds it is scaled down to it, smaller ones
    keep their size (``--max-side``; faster on large videos, but values at different sizes stay
    different). ``max_frames`` keeps the first frames only (``--max-frames``; the rate stays native,
    so consecutive frames stay consecutive). ``size`` wins over ``max_side``.

    ``profile="fast"`` (``robojudge score --fast``) trades fidelity to the definitions for speed:
    frames at a longer side of :data:`FAST_SIZE` unless ``size`` or ``max_side`` says otherwise, DIS's
    ``fast`` preset at every size where ``auto`` would pick by size, and about 8 consecutive pairs (or
    frames) per second in the metrics that read all of them (:func:`profile_step`), plus the settings a
    metric's config class lists in ``FAST_SETTINGS`` (:func:`frame_option_values`; docs/metrics.md,
    "The fast profile"). Its values are not the native ones: the profile enters the
    config (so its results are stored apart) and each value's details.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Further config values of the fast profile for this metric (see :func:`frame_option_values`).
    FAST_SETTINGS: ClassVar[dict[str, Any]] = {}

    size: int | None = Field(default=None, gt=0, description="resize so the longer side has this many px")
    max_side: int | None = Field(
        default=None, gt=0, description="downscale when the longer side exceeds this many px",
        json_schema_extra=HASH_WHEN_SET,
    )
    max_frames: int | None = Field(
        default=None, ge=2, description="read at most this many frames, from the start",
        json_schema_extra=HASH_WHEN_SET,
    )
    profile: Profile = Field(
        default="native", description="native: the definitions; fast: a 640 px longer side and faster flow",
        json_schema_extra=HASH_WHEN_SET,
    )
    resample: Resample = Field(
        default="area", description="how frames shrink to size/max_side: area, or fast (bilinear down to "
        "half a side)", json_schema_extra=HASH_WHEN_SET,
    )

    def main_video_samplings(self, item: Item) -> list[dict[str, Any]]:
        """What a metric with this config reads of ``item``'s main video (:func:`prefetch_main_video`)."""
        return [native_sampling(item, self)]


def profile_details(cfg: NativeFrames) -> dict[str, Any]:
    """``{"profile": "fast"}`` for a value computed under the fast profile; nothing for native ones."""
    return {} if cfg.profile == "native" else {"profile": cfg.profile}


def profile_step(cfg: NativeFrames, fps: float) -> int:
    """Every how many consecutive pairs (or frames) of a video at ``fps`` an every-pair metric reads:
    1, or under the fast profile ``round(fps /`` :data:`FAST_PAIRS_PER_SECOND` ``)`` (at least 1).

    >>> fast = NativeFrames(profile="fast")
    >>> profile_step(NativeFrames(), 30.0), [profile_step(fast, fps) for fps in (30.0, 16.0, 5.0)]
    (1, [4, 2, 1])
    """
    return max(1, round(fps / FAST_PAIRS_PER_SECOND)) if cfg.profile == "fast" else 1


def evaluation_size(item: Item, cfg: NativeFrames) -> int | None:
    """The ``size`` argument of :func:`sample_frames` that ``cfg`` asks for on ``item``'s video.

    ``None`` (native) when neither ``size`` nor a ``max_side`` below the video's longer side is set;
    the video is probed only for ``max_side``, so a video that already fits shares its decode with the
    metrics that read it at native size.
    """
    if cfg.size is not None:
        return cfg.size
    if cfg.max_side is None:
        return FAST_SIZE if cfg.profile == "fast" else None
    info = probe_video(item.video)
    return cfg.max_side if max(info.width, info.height) > cfg.max_side else None


def native_sampling(item: Item, cfg: NativeFrames) -> dict[str, Any]:
    """The :func:`sample_frames` arguments :func:`native_rgb` reads ``item``'s main video with."""
    return {"fps": None, "max_frames": cfg.max_frames, "size": evaluation_size(item, cfg),
            "spread": "head" if cfg.max_frames is not None else "uniform", "resample": cfg.resample}


def native_rgb(item: Item, cfg: NativeFrames, *, least_side: bool = False) -> tuple[np.ndarray, float]:
    """The main video's frames as ``cfg`` asks (every frame at native size by default), ``(T, H, W, 3)``
    uint8 RGB, and the source frame rate.

    With ``least_side``, a video whose own frames (its probe, before any resizing) are under
    :data:`~robojudge.metrics._content.MIN_SIDE` px on a side is refused before it is decoded
    (:func:`~robojudge.metrics._content.require_side`): the metrics that ask measure how frames change,
    and the still check (:func:`~robojudge.metrics._content.require_motion`) cannot tell whether frames
    that small move.

    Raises:
        Unmeasurable: When the video has fewer than two frames, or (``least_side``) too small frames
            (the item is left unscored).
    """
    if least_side:
        own = probe_video(item.video)
        require_side((own.width, own.height))
    sampled = sample_frames(item.video, **native_sampling(item, cfg))
    require_frames(sampled.frames, 2)
    return sampled.frames, sampled.source_fps


def prefetch_main_video(item: Item, configs: Iterable[object]) -> int:
    """Decode in one pass the samplings of ``item``'s main video that metrics with these ``configs``
    read, into the open frame cache (:func:`robojudge.video.prefetch_frames`). Returns how many were
    decoded.

    A config (or any other reader of the main video: the run's check for a tiled video is one) says
    what its metric reads with a method ``main_video_samplings(item)`` (keyword arguments of
    :func:`sample_frames`): :class:`NativeFrames` (the native frames), :class:`GrayPreprocess`
    (RoboJudge App. B.3's 8 fps 256x256 gray sequence), the reference metrics' pairing and the
    trackers' configs (the main video at the common rate). Configs without it choose their frames
    themselves. Each sampling used to decode the whole file; the values are the same either way. Never
    raises: a video that cannot be read is left to each metric, whose row reports it.
    """
    samplings: list[dict[str, Any]] = []
    for cfg in configs:
        declared = getattr(cfg, "main_video_samplings", None)
        try:
            samplings.extend(declared(item) if declared is not None else [])
        except Exception:  # noqa: BLE001, S112 - a reference that cannot be probed: its metric reports it
            continue
    try:
        return prefetch_frames(item.video, samplings) if len(samplings) > 1 else 0
    except Exception:  # noqa: BLE001 - a speed-up only: each metric meets (and reports) the error itself
        return 0


@dataclass(frozen=True)
class FrameOptions:
    """Run-wide settings for every metric that reads frames at native rate and size (``score --size``,
    ``--max-side``, ``--max-frames``, ``--fast``): see :class:`NativeFrames`. A metric's own setting
    (``--set METRIC.size=N``) wins over the run-wide one.

    ``FrameOptions(profile="fast")`` is the fast profile (``score --fast``); without a ``size`` or
    ``max_side`` it sets ``size`` to :data:`FAST_SIZE`, so the configs (and the cost estimate) name the
    size the values are computed at, and without a ``resample`` it sets ``resample="fast"``.
    """

    size: int | None = None
    max_side: int | None = None
    max_frames: int | None = None
    profile: Profile = "native"
    resample: Resample | None = None

    def __post_init__(self) -> None:
        if self.profile not in ("native", "fast"):
            raise ValueError(f"profile must be 'native' or 'fast', got {self.profile!r}")
        if self.profile == "fast" and self.size is None and self.max_side is None:
            object.__setattr__(self, "size", FAST_SIZE)
        if self.profile == "fast" and self.resample is None:
            object.__setattr__(self, "resample", "fast")
        if self.resample is not None and self.resample not in RESAMPLES:
            raise ValueError(f"resample must be one of {RESAMPLES}, got {self.resample!r}")
        if self.resample is not None and self.size is None and self.max_side is None:
            # Nothing would be resized: the values would be the native ones under another config hash.
            raise ValueError(f"resample={self.resample!r} needs a size or a max_side (or the fast profile)")
        for name in ("size", "max_side"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ValueError(f"{name} must be a positive number of pixels, got {v}")
        if self.max_frames is not None and self.max_frames < 2:
            raise ValueError(f"max_frames must be at least 2, got {self.max_frames}")

    def values(self) -> dict[str, Any]:
        """The options that are set, as config values."""
        out: dict[str, Any] = {k: v for k, v in (("size", self.size), ("max_side", self.max_side),
                                             ("max_frames", self.max_frames)) if v is not None}
        if self.profile != "native":
            out["profile"] = self.profile
        if self.resample is not None:
            out["resample"] = self.resample
        return out

    def __bool__(self) -> bool:
        return bool(self.values())


def takes_frame_options(metric_id: str) -> bool:
    """Whether a metric reads frames at native rate and size, so :class:`FrameOptions` apply to it."""
    return issubclass(get_metric(metric_id).config_type, NativeFrames)


def frame_option_values(metric_id: str, frames: FrameOptions | None) -> dict[str, Any]:
    """The config values ``frames`` gives the metric ``metric_id`` (a metric's own values go over them).

    A metric that reads frames at native rate and size (:func:`takes_frame_options`) takes the options
    themselves; under the fast profile a metric's config class may add settings of its own
    (``FAST_SETTINGS`` of the config class and its bases: the RoboJudge App. B.3 Farneback pair one
    Farneback iteration instead of three, the DIS flow metrics float32 flow lengths; docs/metrics.md,
    "The fast profile"). They are plain config values, so a row's config says what it was computed with.

    >>> frame_option_values("flow_warp_error", FrameOptions(profile="fast"))
    {'iterations': 1}
    >>> frame_option_values("flow_warp_error", FrameOptions(size=480))
    {}
    """
    if not frames:
        return {}
    config_type = get_metric(metric_id).config_type
    out: dict[str, Any] = frames.values() if issubclass(config_type, NativeFrames) else {}
    if frames.profile == "fast":
        out.update(fast_settings(config_type))
    return out


def fast_settings(config_type: type) -> dict[str, Any]:
    """The fast profile's own settings for a config class: the ``FAST_SETTINGS`` of the class and its
    bases (a mixin's first, a subclass's over them).

    >>> from robojudge.metrics import get_metric
    >>> fast_settings(get_metric("mq_flow_score").config_type)
    {'magnitude_dtype': 'float32'}
    """
    out: dict[str, Any] = {}
    for base in reversed(config_type.__mro__):
        out.update(vars(base).get("FAST_SETTINGS", {}))
    return out
