"""Batches for supervised fine-tuning of a video judge: the ``hf`` judge's own inputs, reply labelled.

TRL's vision collator handles images only, while the ``hf`` judge passes its frames as one video.
This collator builds each example as the judge does at inference (the exported prompt messages,
the frames padded to the vision tower's temporal patch by :func:`robojudge.judges.padded_video`,
the first frame as an image for IA, the frames' rate as the judge tells it to the processor, from the
record's ``fps``), appends the target reply, and labels only the reply's tokens: the prompt (video
tokens included) is masked, so the loss is the judge's answer alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robojudge.judges import padded_video, temporal_patch, video_rate
from robojudge.train._export import read_frames

IGNORE = -100


def bare(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with media payloads taken out of their blocks (the processor gets the media apart)."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, list):
            content = [{"type": c["type"]} if c["type"] in ("image", "video") else
                       {"type": "text", "text": c.get("text") or ""} for c in content]
        out.append({"role": m["role"], "content": content})
    return out


def _media(messages: Sequence[dict[str, Any]]) -> tuple[list[str], str | None]:
    video: list[str] = []
    image = None
    for m in messages:
        for c in m["content"] if isinstance(m["content"], list) else []:
            if c["type"] == "video" and c.get("video"):
                video = list(c["video"])
            elif c["type"] == "image" and c.get("image"):
                image = str(c["image"])
    return video, image


class JudgeSFTCollator:
    """Collate exported ``trl`` records (``prompt``, ``completion``, ``fps``: the rate of the frames
    shown; absolute media paths) for SFT."""

    def __init__(self, processor: Any) -> None:
        self.processor = processor
        self.temporal = temporal_patch(processor)

    def _example(self, record: dict[str, Any]) -> tuple[str, str, Any, Any, float | None]:
        proc = self.processor
        prompt = bare(record["prompt"])
        full = prompt + bare(record["completion"])
        text_prompt = proc.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        text_full = proc.apply_chat_template(full, tokenize=False)
        if not text_full.startswith(text_prompt):
            raise ValueError("the processor's chat template does not render the prompt as a prefix of the "
                             "conversation, so the reply's tokens cannot be told apart")
        paths, image_path = _media(record["prompt"])
        video = padded_video(read_frames(paths), self.temporal) if paths else None
        image = video[0] if image_path is not None and video is not None else None
        rate = None
        if video is not None:
            rate = record.get("fps")
            if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not rate > 0:
                raise ValueError(f"record {record.get('id', '?')!r}: field fps: {rate!r} is not the frames' "
                                 "rate (a record exported before robojudge recorded it: export again)")
        return text_prompt, text_full, video, image, rate

    def _encode(self, texts: list[str], videos: list[Any], images: list[Any], rates: list[float]) -> Any:
        kwargs: dict[str, Any] = {}
        if videos:
            kwargs["videos"] = videos
            kwargs.update(video_rate(rates, [len(v) for v in videos]))
        if images:
            kwargs["images"] = images
        return self.processor(text=texts, return_tensors="pt", padding=True, **kwargs)

    def __call__(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        examples = [self._example(dict(r)) for r in records]
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        tokenizer.padding_side = "right"
        videos = [v for _, _, v, _, _ in examples if v is not None]
        images = [i for _, _, _, i, _ in examples if i is not None]
        rates = [float(r) for _, _, v, _, r in examples if v is not None and r is not None]
        batch = self._encode([full for _, full, _, _, _ in examples], videos, images, rates)
        labels = batch["input_ids"].clone()
        for row, (prompt, _, video, image, rate) in enumerate(examples):
            one = self._encode([prompt], [video] if video is not None else [],
                               [image] if image is not None else [], [rate] if rate is not None else [])
            labels[row, : int(one["input_ids"].shape[1])] = IGNORE
        labels[batch["attention_mask"] == 0] = IGNORE
        batch["labels"] = labels
        return dict(batch)
