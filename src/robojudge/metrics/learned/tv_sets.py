"""Set-level FVD on I3D features and Inception Score (RoboPhys-3D App. B.1.1) over lists of videos.

Both are defined over a set of videos, not one: FVD compares the generated set with the set of
reference videos; the Inception Score uses the generated set alone. :func:`fvd_of_videos` and
:func:`inception_score_of_videos` compute them for lists of video paths; ``iq1_fvd`` and
``iq1_inception_score`` are registered as set-level metrics (:mod:`robojudge.metrics._sets`), one
value per group of items (``robojudge metrics sets SUITE --metrics iq1_fvd --by generator``). The
feature extractors take the network as an argument, so tests use tiny random networks.

I3D contract (TorchScript, the StyleGAN-V export most PyTorch FVD code uses):
``net(x, rescale=False, resize=False, return_features=True)`` with ``x`` float ``(N, 3, T, 224, 224)``
in [-1, 1] returns ``(N, 400)`` pre-softmax Kinetics-400 features.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge import models
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics._sets import ItemGroup, SetOutput, SetScores, set_metric
from robojudge.metrics.learned import tv_nets
from robojudge.metrics.learned.distribution import (
    SmallSampleWarning,
    frechet_feature_distance,
    inception_score,
)
from robojudge.video import sample_frames

if TYPE_CHECKING:
    import torch


class FvdConfig(BaseModel):
    """One clip per video: the first ``frames`` frames (every ``stride``-th) at one common rate, resized
    to 224x224.

    The common rate is the lowest own rate among all the videos compared, generated and reference
    (or ``fps`` when lower): one low-rate video, a 3-fps reference or a GIF, lowers it for the whole
    set, and every clip then spans ``frames * stride / rate`` seconds. A video shorter than that fails
    the set, named in the error with the video that set the rate, before any network loads.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames: int = Field(default=16, ge=1, description="clip length in frames (16, as Unterthiner et al.)")
    stride: int = Field(default=1, ge=1, description="take every stride-th frame at the common rate")
    size: int = Field(default=224, ge=32, description="square side the I3D network expects")
    fps: float | None = Field(
        default=None, gt=0,
        description="rate every clip of both sets is sampled at; None, or above a video's own rate: the "
        "lowest own rate among the videos compared",
    )


class ClipRate(NamedTuple):
    """The rate the FVD clips are sampled at, and the video that set it."""

    #: the common rate: ``fps``, at most the lowest own rate
    fps: float
    #: the ``fps`` setting (None: unset)
    configured: float | None
    #: the video of the lowest own rate, and that rate
    slowest: str
    slowest_fps: float
    #: how many videos (both sets) the rate was chosen over
    videos: int

    def why(self) -> str:
        """Where the rate came from, in words."""
        if self.configured is not None and self.configured < self.slowest_fps:
            return f"the configured fps={self.configured:g}"
        return (f"{self.slowest}'s own rate, the lowest of the {self.videos} videos compared (generated and "
                "reference)")


def clip_rates(videos: Sequence[str | Path], fps: float | None) -> ClipRate:
    """The one rate the FVD clips of ``videos`` (both sets) are sampled at (:func:`clip_rate`), with the
    video that set it; from the probes."""
    from robojudge.video import probe_video

    own = [(probe_video(p).fps, str(p)) for p in videos]
    lowest, slowest = min(own, key=lambda r: r[0])
    return ClipRate(lowest if fps is None else min(fps, lowest), fps, slowest, lowest, len(own))


def clip_rate(videos: Sequence[str | Path], fps: float | None) -> float:
    """The one rate the FVD clips of ``videos`` (both sets) are sampled at: ``fps``, at most the lowest
    of their own rates (a video cannot be sampled faster), or that lowest rate when ``fps`` is None.

    Clips of 16 native frames covered 0.5 s of a 30-fps reference and 0.94 s of a 16-fps generated clip,
    so the same motion moved 1.9x as far per frame in one set as in the other, and I3D features tell
    motion speeds apart: 16-fps copies of the references scored worse than frozen first frames.
    """
    return clip_rates(videos, fps).fps


def _too_short(path: str | Path, config: FvdConfig, rate: ClipRate | float, lasts: str) -> MetricInputError:
    """The error for a video shorter than its FVD clip at the common rate: what it needs, how long it
    is (``lasts``), where the rate came from and what to change."""
    fps = rate.fps if isinstance(rate, ClipRate) else rate
    need = config.frames * config.stride / fps
    said = (f"{path}: FVD needs {config.frames} frames (stride {config.stride}) at {fps:g} fps, "
            f"{need:.2f} s of video, {lasts}")
    if not isinstance(rate, ClipRate):
        return MetricInputError(f"{said}: lower frames or stride, or set a higher fps")
    said += f"; the common rate {fps:g} fps is {rate.why()}"
    if rate.configured is not None and rate.configured < rate.slowest_fps:
        return MetricInputError(f"{said}: lower frames or stride, or raise fps (or unset it: "
                                f"{rate.slowest_fps:g} fps, the lowest own rate, is the most it can be)")
    return MetricInputError(
        f"{said}: lower frames or stride (fps cannot be set above that), or give the videos at one rate "
        "(references at the generated videos' rate): one low-rate video lowers the rate of every clip in "
        "both sets")


def check_clip_lengths(videos: Sequence[str | Path], config: FvdConfig, rate: ClipRate) -> None:
    """Raise the error :func:`video_clip` would, from the probes alone (no frame decoded, no network
    loaded), for the first video surely shorter than its clip at ``rate``: one that gives fewer than
    ``(frames - 1) * stride + 1`` frames at that rate even counting its last frame's whole duration. A
    video whose probe gives no length is left to :func:`video_clip`.

    Raises:
        MetricInputError: a video is too short, named with the video that set the rate.
    """
    from robojudge.video import probe_video

    picks = (config.frames - 1) * config.stride + 1
    for path in videos:
        info = probe_video(path)
        if not info.frames or not info.fps > 0:
            continue
        seconds = info.frames / info.fps
        if int(np.floor(seconds * rate.fps + 1e-6)) + 1 < picks:
            raise _too_short(path, config, rate, f"and it lasts {seconds:.2f} s ({info.frames} frames at "
                             f"{info.fps:g} fps)")


class InceptionConfig(BaseModel):
    """Frames per video and the number of splits of the Inception Score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames_per_video: int = Field(default=16, ge=1, description="frames spread uniformly over each video")
    splits: int = Field(default=10, ge=1, description="splits of the scored frames (10, Salimans et al.)")


def video_clip(path: str | Path, config: FvdConfig, fps: float | ClipRate | None = None) -> np.ndarray:
    """The FVD clip of one video: ``(frames, size, size, 3)`` uint8, its first ``frames * stride`` frames
    at ``fps`` (:func:`clip_rate`, or :func:`clip_rates` to name the video that set it in the error;
    None: its own rate), every ``stride``-th kept.

    Raises:
        MetricInputError: When the video is shorter than the clip.
    """
    want = config.frames * config.stride
    size = (config.size, config.size)
    rate = fps.fps if isinstance(fps, ClipRate) else fps
    frames = sample_frames(path, fps=rate, max_frames=want, size=size, spread="head").frames
    clip = frames[: want : config.stride]
    if len(clip) < config.frames:
        if fps is None:
            raise MetricInputError(
                f"{path}: FVD needs {config.frames} frames (stride {config.stride}), got {len(clip)}")
        raise _too_short(path, config, fps, f"got {len(clip)}")
    return clip


def i3d_features(clips: Sequence[np.ndarray], net: torch.nn.Module, *, batch_size: int = 8) -> np.ndarray:
    """``(N, D)`` I3D features of uint8 clips ``(T, H, W, 3)``, fed as ``(N, 3, T, H, W)`` in [-1, 1]."""
    import torch

    dev = tv_nets.device_of(net)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in tv_nets.batches(len(clips), batch_size):
            x = torch.from_numpy(np.stack(clips[sl])).to(dev).float().permute(0, 4, 1, 2, 3) / 127.5 - 1.0
            out.append(net(x, rescale=False, resize=False, return_features=True).double().cpu().numpy())
    return np.concatenate(out)


def inception_probabilities(frames: np.ndarray, net: torch.nn.Module, *, batch_size: int = 16) -> np.ndarray:
    """Softmax class probabilities of uint8 RGB frames: resized to 299x299, ImageNet-normalized."""
    import torch
    import torch.nn.functional as F  # noqa: N812

    dev = tv_nets.device_of(net)
    mean = torch.tensor(tv_nets.IMAGENET_MEAN, device=dev).view(1, 3, 1, 1)
    std = torch.tensor(tv_nets.IMAGENET_STD, device=dev).view(1, 3, 1, 1)
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for sl in tv_nets.batches(len(frames), batch_size):
            x = tv_nets.to_unit_tensor(frames[sl], dev)
            x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
            logits = net((x - mean) / std)
            out.append(torch.softmax(logits.double(), dim=1).cpu().numpy())
    return np.concatenate(out)


@dataclass(frozen=True)
class SetScore:
    """A set-level value with the sample sizes it came from."""

    value: float
    n_generated: int
    n_reference: int = 0
    std: float = 0.0
    warnings: tuple[str, ...] = ()
    #: the rate the clips were sampled at (FVD)
    fps: float | None = None


def fvd_of_videos(
    generated: Sequence[str | Path],
    reference: Sequence[str | Path],
    config: FvdConfig | None = None,
    net: torch.nn.Module | None = None,
) -> SetScore:
    """Frechet video distance between two lists of videos (RoboPhys-3D ``iq1_fvd``, lower is better).

    One clip per video (:func:`video_clip`), every clip of both sets at one rate (:func:`clip_rate`) so
    that each covers the same stretch of time, ``frames * stride / fps`` seconds from the video's start
    (one low-rate video lowers the rate, and so lengthens that stretch, for all; a video shorter than it
    fails the set from the probes, :func:`check_clip_lengths`, before the network loads);
    I3D features (:func:`i3d_features`), Gaussians fitted to each set and their Frechet distance. Warns
    (``SmallSampleWarning``) below 401 videos per set, where the 400-d covariance is rank-deficient (see
    ``distribution.min_stable_samples``).

    Raises:
        MissingWeightsError: When ``net`` is None and the I3D file is not on this machine.
        MetricInputError: Fewer than 2 videos in a set, or a video shorter than its clip.
    """
    cfg = config or FvdConfig()
    if min(len(generated), len(reference)) < 2:
        raise MetricInputError(
            f"FVD needs at least 2 generated and 2 reference videos, got {len(generated)} and "
            f"{len(reference)}"
        )
    rate = clip_rates([*generated, *reference], cfg.fps)
    check_clip_lengths([*generated, *reference], cfg, rate)  # before the network loads
    model = net if net is not None else models.load_i3d_torchscript(metric="iq1_fvd")
    gen = i3d_features([video_clip(p, cfg, rate) for p in generated], model)
    ref = i3d_features([video_clip(p, cfg, rate) for p in reference], model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallSampleWarning)
        value = frechet_feature_distance(gen, ref)
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, SmallSampleWarning))
    for note in notes:
        warnings.warn(note, SmallSampleWarning, stacklevel=2)
    return SetScore(value=value, n_generated=len(gen), n_reference=len(ref), warnings=notes, fps=rate.fps)


def inception_score_of_videos(
    videos: Sequence[str | Path], config: InceptionConfig | None = None, net: torch.nn.Module | None = None
) -> SetScore:
    """Inception Score of the frames of a list of videos (RoboPhys-3D ``iq1_inception_score``).

    ``frames_per_video`` frames are spread uniformly over each video; all frames of the set are pooled
    and scored with ``splits`` splits. ``std`` is the spread over splits. torchvision's 1000-class
    Inception-v3 is used, so values are close to, but not identical with, the TensorFlow Inception
    Score of Salimans et al. (1008 classes).

    Raises:
        MissingWeightsError: When ``net`` is None and the Inception-v3 file is not on this machine.
        ValueError: When the set has fewer frames than ``splits``.
    """
    cfg = config or InceptionConfig()
    model = net if net is not None else models.load_inception_v3(metric="iq1_inception_score")
    frames = np.concatenate(
        [sample_frames(p, fps=None, max_frames=cfg.frames_per_video).frames for p in videos]
    )
    mean, std = inception_score(inception_probabilities(frames, model), splits=cfg.splits)
    return SetScore(value=mean, n_generated=len(videos), std=std)


@set_metric(
    "iq1_fvd",
    output=SetOutput.group,
    family=Family.features,
    inputs={Input.video, Input.reference},
    description=(
        "Frechet video distance between I3D (Kinetics-400) features of the group's generated videos and of "
        "its distinct reference videos: one 16-frame 224x224 clip per video from its start, every clip at "
        "one rate (the lowest of the videos' own). Lower is better."
    ),
    config=FvdConfig,
    version="2",  # clips at one common rate (v1: 16 native frames, a span set by each video's own rate)
    weights=(models.I3D_TORCHSCRIPT.name,),
    note="Unterthiner et al., 2018; warns below 401 videos per set (400-d covariance rank-deficient)",
    min_items=2,
)
def iq1_fvd(group: ItemGroup, config: FvdConfig) -> SetScores:
    """FVD of one group against its references (each distinct reference video counted once)."""
    with warnings.catch_warnings():  # the caveat travels on the result row instead
        warnings.simplefilter("ignore", SmallSampleWarning)
        result = fvd_of_videos([it.video for it in group.items], group.references(), config)
    assert result.fps is not None
    details = {"generated": result.n_generated, "references": result.n_reference, "clip_fps": result.fps,
               "fps_configured": config.fps,
               "clip_seconds": config.frames * config.stride / result.fps}
    return SetScores(group=Score(value=result.value, details=details), warnings=list(result.warnings))


@set_metric(
    "iq1_inception_score",
    output=SetOutput.group,
    family=Family.features,
    inputs={Input.video},
    description=(
        "Inception Score (torchvision Inception-v3) of 16 frames per video pooled over the group's generated "
        "videos, 10 splits. Higher means confident and diverse class predictions."
    ),
    config=InceptionConfig,
    weights=(models.INCEPTION_V3.name,),
    note="Salimans et al., 2016; torchvision's 1000-class Inception-v3",
)
def iq1_inception_score(group: ItemGroup, config: InceptionConfig) -> SetScores:
    """Inception Score of the group's frames; ``details.std`` is the spread over splits."""
    result = inception_score_of_videos([it.video for it in group.items], config)
    if not np.isfinite(result.value):
        raise MetricInputError("Inception Score is not finite for this group")
    return SetScores(
        group=Score(value=result.value, details={"std": result.std, "videos": result.n_generated})
    )
