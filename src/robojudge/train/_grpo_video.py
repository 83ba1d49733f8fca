"""GRPO whose loss sees the video: TRL's ``GRPOTrainer`` with the judge's media kept for the loss.

TRL (checked on 1.16) generates from the processor's full output, video included, but computes the
log-probabilities of the loss from images alone: a prompt's video pixels never reach that forward
pass, so a video judge would be optimised as if its video tokens were blank (its vision tower gets
no gradient at all). Batches mixing prompts with and without an image (PA and IA) also fail there,
and only the image pad token is kept out of sampled completions.

The subclass built by :func:`video_grpo_trainer` keeps, for each tokenized prompt, the pixel values
its processor produced (the first-frame image and the video) under the prompt's token ids, hides
them from TRL's image path, and hands them back to every forward pass by matching each row of the
batch to its prompt: the model then scores completions on exactly the inputs it generated from.
"""

from __future__ import annotations

from typing import Any

MEDIA_KEYS = ("pixel_values", "image_grid_thw", "pixel_values_videos", "video_grid_thw")


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
    return out


class _WithMedia:
    """The model, called with each batch row's media added (looked up by the row's prompt tokens)."""

    def __init__(self, model: Any, trainer: Any) -> None:
        self._model = model
        self._trainer = trainer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def __call__(self, **inputs: Any) -> Any:
        import torch

        ids, mask = inputs["input_ids"], inputs["attention_mask"]
        per_row = [self._trainer._media_of(ids[b][mask[b].bool()].tolist()) for b in range(ids.shape[0])]
        for key in MEDIA_KEYS:
            parts = [m[key] for m in per_row if m is not None and key in m]
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
    from trl.trainer.grpo_trainer import GRPOTrainer

    base: Any = GRPOTrainer

    class VideoGRPOTrainer(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._media: dict[tuple[int, ...], dict[str, Any]] = {}
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
            prompt_ids, _images, fields = super()._tokenize_prompts(prompts)
            if len(self._media) > 4096:  # prompts of past steps are not asked for again
                self._media.clear()
            for ids, media in zip(prompt_ids, _split_media(fields, prompts), strict=True):
                self._media[tuple(int(t) for t in ids)] = media
            return prompt_ids, None, fields  # None: TRL's image-only loss path stays out of the way

        def _media_of(self, tokens: list[int]) -> dict[str, Any] | None:
            for key, media in self._media.items():
                if len(tokens) >= len(key) and tuple(tokens[: len(key)]) == key:
                    return media
            return None

        def _get_per_token_logps_and_entropies(self, model: Any, *args: Any, **kwargs: Any) -> Any:
            return super()._get_per_token_logps_and_entropies(_WithMedia(model, self), *args, **kwargs)

    return VideoGRPOTrainer


def _token_id(tokenizer: Any, token: str) -> int | None:
    tid = tokenizer.convert_tokens_to_ids(token)
    unk = getattr(tokenizer, "unk_token_id", None)
    return int(tid) if isinstance(tid, int) and tid != unk else None
