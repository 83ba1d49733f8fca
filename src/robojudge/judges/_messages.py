"""The chat a local VLM judge is given: message list and video array, shared by inference and training.

The ``hf`` backend builds its prompt here, and judge training (:mod:`robojudge.train`) builds its
examples here too, so a trained judge is trained on exactly the conversation it is later asked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from robojudge.judges._backend import ChatRequest
from robojudge.judges._images import thin_indices


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
