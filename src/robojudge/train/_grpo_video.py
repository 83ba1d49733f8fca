"""GRPO whose loss sees the video: TRL's ``GRPOTrainer`` with the judge's media kept for the loss.

TRL (checked on 1.16) generates from the processor's full output, video included, but computes the
log-probabilities of the loss from images alone: a prompt's video pixels never reach that forward
pass, so a video judge would be optimised as if its video tokens were blank (its vision tower gets
no gradient at all). Batches mixing prompts with and without an image (PA and IA) also fail there,
and only the image pad token is kept out of sampled completions.

The subclass built by :func:`video_grpo_trainer` keeps, for each tokenized prompt, the pixel values
its processor produced (the first-frame image and the video) under the row's place in its generation
batch, hides them from TRL's image path, and hands them back to every forward pass: each generated row
carries its place (a column TRL shuffles and splits with the others), so the model scores completions
on exactly the inputs it generated from. Token ids cannot name a prompt: a PA prompt holds no item text,
so two videos of one size give the same tokens (the first version keyed media by them, and scored one
item's completions on another's video).

TRL tokenizes the prompts without the frames' rate, so the processor took its default (24 fps in
transformers 5) and Qwen2.5-VL placed the video tokens in time by it, unlike SFT and the ``hf`` judge;
the loss's forward pass got no rate at all (one second per temporal patch). The subclass tells the
processor each row's rate (the dataset's ``fps`` column) as the SFT collator does, and hands the
resulting ``second_per_grid_ts`` to the loss with the pixels.
"""

from __future__ import annotations

from typing import Any

MEDIA_KEYS = ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw", "second_per_grid_ts")


def _videos(prompt: Any) -> list[list[Any]]:
    """The frame lists of a prompt's video blocks, in order."""
    return [list(c.get("video") or []) for m in prompt
            for c in (m["content"] if isinstance(m["content"], list) else []) if c.get("type") == "video"]


def rate_kwargs(prompts: list[Any], rates: list[Any], temporal: int) -> dict[str, Any]:
    """The processor keywords that tell it the rate of each prompt's video (``rates[i]`` frames per second
    for ``prompts[i]``), as the SFT collator and the ``hf`` judge tell it (:func:`video_rate`); frames
    are counted after padding to the temporal patch ``temporal``, as the judge pads them. Nothing when no
    prompt holds a video. The processor gets the frames as they are (no sampling by the rate)."""
    from robojudge.judges import video_rate

    seconds, lengths = [], []
    for prompt, rate in zip(prompts, rates, strict=True):
        for frames in _videos(prompt):
            if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not rate > 0:
                raise ValueError(f"GRPO prompt with a video: fps {rate!r} is not the frames' rate")
            seconds.append(float(rate))
            lengths.append(-(-len(frames) // temporal) * temporal if temporal > 1 else len(frames))
    if not seconds:
        return {}
    return {**video_rate(seconds, lengths), "do_sample_frames": False}


def _split_media(fields: dict[str, Any], prompts: list[Any]) -> list[dict[str, Any]]:
    """The batched processor output cut back into one ``{key: tensor}`` per prompt."""
    counts = [
        {kind: sum(1 for m in p for c in (m["content"] if isinstance(m["content"], list) else [])
                   if c.get("type") == kind) for kind in ("image", "video")}
        for p in prompts
    ]
    out: list[dict[str, Any]] = [{} for _ in prompts]
    for kind, pix_key, grid_key in (("image", "pixel_values", "image_grid_thw"),
                                    ("video", "pixel_values_videos", "video_grid_thw")):
        grid = fields.get(grid_key)
        pixels = fields.get(pix_key)
        if grid is None or pixels is None:
            continue
        rows = grid.prod(dim=-1).tolist()
        g = r = 0
        for i, c in enumerate(counts):
            n = c[kind]
            if n:
                take = int(sum(rows[g : g + n]))
                out[i][pix_key] = pixels[r : r + take]
                out[i][grid_key] = grid[g : g + n]
                g, r = g + n, r + take
        if g != len(rows):
            raise RuntimeError(f"{kind} count mismatch splitting the processor output ({g} of {len(rows)})")
    seconds = fields.get("second_per_grid_ts")  # one per video, in order
    if seconds is not None:
        import torch

        seconds = torch.as_tensor(seconds, dtype=torch.float32).reshape(-1)
        g = 0
        for i, c in enumerate(counts):
            if c["video"]:
                out[i]["second_per_grid_ts"] = seconds[g : g + c["video"]]
                g += c["video"]
    return out


#: The column each generated row carries through TRL's shuffling and splitting: (generation, row), the
#: row's place in the generation batch whose media it was generated from.
ROW_KEY = "rj_media_row"


class _WithMedia:
    """The model, called with each batch row's media added. ``rows`` are the (generation, row) of the
    rows of the ``_get_per_token_logps_and_entropies`` call it wraps, which calls the model on
    consecutive chunks of them, in order."""

    def __init__(self, model: Any, trainer: Any, rows: list[tuple[int, int]]) -> None:
        self._model = model
        self._trainer = trainer
        self._rows = rows
        self._next = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def __call__(self, **inputs: Any) -> Any:
        import torch

        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        rows = self._rows[self._next : self._next + ids.shape[0]]
        self._next += ids.shape[0]
        if len(rows) != ids.shape[0]:
            raise RuntimeError(f"GRPO media: {ids.shape[0]} rows in a forward pass, {len(rows)} known")
        per_row = [self._trainer._media_for(row, ids[b][mask[b].bool()].tolist())
                   for b, row in enumerate(rows)]
        for key in MEDIA_KEYS:
            parts = [m[key] for m in per_row if key in m]
            if parts:
                inputs[key] = torch.cat(parts).to(ids.device)
        tok = self._trainer
        mm = torch.zeros_like(ids)
        if tok._image_token is not None:
            mm[ids == tok._image_token] = 1
        if tok._video_token is not None:
            mm[ids == tok._video_token] = 2
        inputs["mm_token_type_ids"] = mm
        return self._model(**inputs)


def video_grpo_trainer() -> type:
    """The GRPO trainer class that carries prompt media into the loss (imports trl)."""
    import torch
    from trl.trainer.grpo_trainer import GRPOTrainer

    from robojudge.judges import temporal_patch

    base: Any = GRPOTrainer

    class VideoGRPOTrainer(base):  # type: ignore[misc]
        chat_template_kwargs: dict[str, Any]  # TRL's: keywords for every apply_chat_template call

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # generation -> each row's (prompt tokens, media), in the order the rows were generated
            self._media: dict[int, list[tuple[tuple[int, ...], dict[str, Any]]]] = {}
            self._generation = 0
            self._rows: list[tuple[int, int]] | None = None  # rows of the forward passes to come
            self._rates: list[Any] | None = None  # the fps of the rows being generated from
            self._temporal = temporal_patch(self.processing_class)
            tokenizer = getattr(self.processing_class, "tokenizer", self.processing_class)
            self._image_token = _token_id(tokenizer, "<|image_pad|>")
            self._video_token = _token_id(tokenizer, "<|video_pad|>")
            # TRL keeps a sampled image pad out of completions; a sampled video pad would likewise
            # no longer match the video's features in the loss's forward pass
            config = getattr(self, "generation_config", None)
            if config is not None:
                pads = [t for t in (self._image_token, self._video_token) if t is not None]
                config.suppress_tokens = sorted({*(config.suppress_tokens or []), *pads})

        def _tokenize_prompts(self, prompts: list[Any]) -> Any:
            # Media are kept by the row's place in its generation batch: prompts with the same tokens
            # (PA prompts of two videos of one size, IA prompts of one clip's generators) hold other videos.
            rates = self._rates if self._rates is not None and len(self._rates) == len(prompts) else None
            if rates is None:
                raise RuntimeError(f"GRPO media: {len(prompts)} prompts to tokenize, the rates of "
                                   f"{len(self._rates or [])} known")
            told = rate_kwargs(prompts, rates, self._temporal)
            plain = self.chat_template_kwargs
            if told:  # TRL passes these to the processor's apply_chat_template
                self.chat_template_kwargs = {**plain, **_processor_kwargs(self.processing_class, plain, told)}
            try:
                prompt_ids, _images, fields = super()._tokenize_prompts(prompts)
            finally:
                self.chat_template_kwargs = plain
            self._generation += 1
            self._media[self._generation] = [
                (tuple(int(t) for t in ids), media)
                for ids, media in zip(prompt_ids, _split_media(fields, prompts), strict=True)]
            for old in [g for g in self._media if g < self._generation - 4]:  # batches long used
                del self._media[old]
            self._rows = [(self._generation, i) for i in range(len(prompt_ids))]
            return prompt_ids, None, fields  # None: TRL's image-only loss path stays out of the way

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            self._rates = [row.get("fps") for row in inputs]  # the rows TRL tokenizes next, in order
            try:
                output = super()._generate_and_score_completions(inputs)
            finally:
                self._rates = None
            rows = self._rows or []
            if len(rows) != output["prompt_ids"].shape[0]:
                raise RuntimeError(f"GRPO media: {output['prompt_ids'].shape[0]} rows generated, {len(rows)} "
                                   "prompts tokenized")
            output[ROW_KEY] = torch.tensor(rows, dtype=torch.long)  # shuffled and split with the rows
            self._rows = None
            return output

        def _compute_loss(self, model: Any, inputs: Any) -> Any:
            self._rows = [(int(g), int(i)) for g, i in inputs[ROW_KEY].tolist()]
            try:
                return super()._compute_loss(model, inputs)
            finally:
                self._rows = None

        def _media_for(self, row: tuple[int, int], tokens: list[int]) -> dict[str, Any]:
            generation, index = row
            if generation not in self._media:
                raise RuntimeError(f"GRPO media: generation {generation} is no longer kept")
            prompt, media = self._media[generation][index]
            if tuple(tokens[: len(prompt)]) != prompt:
                raise RuntimeError(f"GRPO media: row {index} of generation {generation} does not start "
                                   "with its prompt")
            return media

        def _get_per_token_logps_and_entropies(self, model: Any, *args: Any, **kwargs: Any) -> Any:
            if self._rows is None:
                raise RuntimeError("GRPO media: a forward pass outside generation and loss")
            return super()._get_per_token_logps_and_entropies(_WithMedia(model, self, self._rows), *args,
                                                              **kwargs)

    return VideoGRPOTrainer


def _processor_kwargs(processor: Any, given: dict[str, Any], told: dict[str, Any]) -> dict[str, Any]:
    """``told`` (processor keywords) in the form ``processor.apply_chat_template`` takes them: transformers 5
    reads them from its ``processor_kwargs`` dict (loose keywords it also takes, with a warning per call),
    4.x from its keyword arguments."""
    import inspect

    if "processor_kwargs" in inspect.signature(processor.apply_chat_template).parameters:
        return {"processor_kwargs": {**dict(given.get("processor_kwargs") or {}), **told}}
    return told


def _token_id(tokenizer: Any, token: str) -> int | None:
    tid = tokenizer.convert_tokens_to_ids(token)
    unk = getattr(tokenizer, "unk_token_id", None)
    return int(tid) if isinstance(tid, int) and tid != unk else None
