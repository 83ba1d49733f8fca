"""The chat a local VLM judge is given: message list and video array, shared by inference and training.

The ``hf`` backend builds its prompt here, and judge training (:mod:`robojudge.train`) builds its
examples here too, so a trained judge is trained on exactly the conversation it is later asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge.judges._backend import ChatRequest
from robojudge.judges._images import thin_indices
from robojudge.video import SampledFrames


def with_first_frame(request: ChatRequest) -> bool:
    """Whether the request shows the first frame as an image of its own, after its label (IA)."""
    return request.frames is not None and bool(request.first_frame_label)


def chat_messages(request: ChatRequest, *, video: Any = None, image: Any = None) -> list[dict[str, Any]]:
    """The request as chat messages with typed content blocks (``text``, ``image``, ``video``).

    Args:
        request: The judge's request.
        video: Put into the video block as ``"video"`` (frame paths for a processor to load);
            ``None`` leaves the block bare (the frames are then passed to the processor apart).
        image: Likewise for the first-frame image block.
    """
    content: list[dict[str, Any]] = [{"type": "text", "text": request.user}]
    if request.frames is not None:
        if with_first_frame(request):
            content += [
                {"type": "text", "text": request.first_frame_label or ""},
                {"type": "image"} if image is None else {"type": "image", "image": image},
                {"type": "text", "text": "The video:"},
            ]
        content.append({"type": "video"} if video is None else {"type": "video", "video": video})
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": [{"type": "text", "text": request.system}]})
    messages.append({"role": "user", "content": content})
    messages += [{"role": r, "content": [{"type": "text", "text": t}]} for r, t in request.history]
    return messages


def thinned(frames: npt.NDArray[np.uint8], max_images: int) -> npt.NDArray[np.uint8]:
    """The frames a judge with ``max_images`` shows (uniformly thinned, first kept)."""
    return frames[thin_indices(len(frames), max_images)]


def padded_video(frames: npt.NDArray[np.uint8], temporal_patch: int) -> npt.NDArray[np.uint8]:
    """Frames padded by repeating the last one to a multiple of the vision tower's temporal patch."""
    if temporal_patch > 1 and len(frames) % temporal_patch:
        pad = temporal_patch - len(frames) % temporal_patch
        frames = np.concatenate([frames, np.repeat(frames[-1:], pad, axis=0)])
    return frames


def temporal_patch(processor: Any) -> int:
    """The processor's temporal patch size (1 when it has none)."""
    return int(getattr(getattr(processor, "video_processor", None), "temporal_patch_size", 1) or 1)


def shown_rate(frames: SampledFrames, max_images: int) -> float:
    """Frames per second of the frames a judge with ``max_images`` shows of ``frames`` (:func:`thinned`):
    their count over the time they span; the source's rate when they span none (one frame)."""
    times = frames.timestamps[thin_indices(len(frames), max_images)]
    span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    if span > 0:
        return (len(times) - 1) / span
    return frames.source_fps if frames.source_fps > 0 else 1.0


def video_rate(rates: Sequence[float], lengths: Sequence[int]) -> dict[str, Any]:
    """The processor keywords that tell it the frame rate of each video of a call (``rates[i]`` frames
    per second, ``lengths[i]`` frames): told nothing, transformers' video processors take a default
    (24 fps in transformers 5, 2 in Qwen2.5-VL's processor of transformers 4), and Qwen2.5-VL places
    the video's tokens in time by it (``second_per_grid_ts``), Qwen3-VL writes it into the prompt.

    Transformers 4 reads ``fps``: one number, or one per video (so does 4.5x, where ``VideoMetadata``
    exists but Qwen2.5-VL's processor reads ``fps`` alone). Transformers 5 reads ``video_metadata``
    and accepts ``fps`` only as one number, so videos of unequal rates there are told by their
    metadata alone.
    """
    fps: float | list[float] = float(rates[0]) if len(set(rates)) == 1 else [float(r) for r in rates]
    try:
        import transformers
        from transformers.video_utils import VideoMetadata
    except ImportError:
        return {"fps": fps}
    metadata = [_video_metadata(VideoMetadata, r, n) for r, n in zip(rates, lengths, strict=True)]
    if isinstance(fps, list) and int(transformers.__version__.split(".")[0]) >= 5:
        return {"video_metadata": metadata}
    return {"fps": fps, "video_metadata": metadata}


def _video_metadata(cls: Any, fps: float, n_frames: int) -> Any:
    """A transformers ``VideoMetadata`` of ``n_frames`` frames at ``fps``, given as the installed release
    defines it: in transformers 4.52 its fields are ``total_num_frames``, ``fps``, ``duration`` and
    ``video_backend``, all required; later releases add ``frames_indices`` and give the rest defaults."""
    values = {"total_num_frames": n_frames, "fps": float(fps), "duration": n_frames / fps if fps > 0 else 0.0,
              "video_backend": "pyav", "frames_indices": list(range(n_frames))}
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(values)
    return cls(**{k: v for k, v in values.items() if k in names})
