"""The ``hf`` backend: a local transformers vision-language model (Qwen2-VL, Qwen2.5-VL, Qwen3-VL...).

The model and its processor are loaded with ``from_pretrained`` (a hub id or a local folder) on the
first request; frames are passed as one video, and for rubrics with a conditioning frame the first
frame also goes in as an image right after its label. It runs on the GPU when one is present.
``torch`` and ``transformers`` are imported here only, when the backend is first used.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from robojudge.judges._backend import BACKENDS, BackendError, ChatRequest, Completion, TokenLogprob
from robojudge.judges._config import JudgeConfig
from robojudge.judges._images import thin_indices
from robojudge.judges._messages import (
    chat_messages,
    padded_video,
    shown_rate,
    temporal_patch,
    video_rate,
    with_first_frame,
)


@contextlib.contextmanager
def _seeded(seed: int | None, device: str) -> Iterator[None]:
    """torch's random draws seeded with ``seed`` (None: left alone) inside the block, on the CPU and on
    ``device``'s kind; the caller's generators are as they were afterwards."""
    import torch

    if seed is None:
        yield
        return
    kind = torch.device(device).type
    if kind == "cpu":
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)  # (torch.manual_seed would seed CUDA too)
            yield
        return
    devices = list(range(getattr(torch, kind).device_count()))
    with torch.random.fork_rng(devices=devices, device_type=kind):
        torch.manual_seed(seed)
        yield


class HFBackend:
    """Generation with a transformers image-text-to-text model, one request at a time.

    Args:
        config: The judge; ``model`` is a hub id or a local folder, ``device`` and ``dtype`` pick
            where and how it runs.
    """

    name = "hf"
    supports_logprobs = True

    def __init__(self, config: JudgeConfig) -> None:
        if not config.model:
            raise ValueError(
                f"judge {config.name!r}: the hf backend needs model (a hub id or a local folder)"
            )
        self.config = config
        self._model: Any = None
        self._processor: Any = None
        self._device: str = "cpu"
        self._load_lock = threading.Lock()
        self._failed: BackendError | None = None  # the first load's failure, raised again for every item
        self._run_lock = asyncio.Lock()

    def _load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            if self._failed is not None:  # tried once: every item tried again (150 s of hub retries each)
                raise self._failed
            try:
                self._model, self._processor, self._device = self._load_once()
            except BackendError as exc:
                self._failed = exc
                raise

    def _load_once(self) -> tuple[Any, Any, str]:
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise BackendError(
                f"the hf backend needs torch and transformers ({exc}); pip install '.[torch]' in a robojudge "
                "checkout"
            ) from None
        cfg = self.config
        device = cfg.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendError(f"judge {cfg.name!r}: device = {cfg.device!r}, but no CUDA device is visible "
                               "here; set device to 'cpu' or 'auto'")
        dtype: Any = "auto" if cfg.dtype == "auto" else getattr(torch, cfg.dtype)
        auto_processor: Any = transformers.AutoProcessor
        auto_model: Any = transformers.AutoModelForImageTextToText
        try:
            processor = auto_processor.from_pretrained(cfg.model, revision=cfg.revision)
            model = auto_model.from_pretrained(cfg.model, dtype=dtype, revision=cfg.revision)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load model {cfg.model!r}: {exc}") from None
        try:
            model = model.to(device).eval()
        except (RuntimeError, AssertionError, ValueError) as exc:
            raise BackendError(f"judge {cfg.name!r}: cannot put the model on device {device!r}: {exc}") \
                from None
        return model, processor, device

    def _generate(self, request: ChatRequest) -> Completion:
        import torch

        self._load()
        proc, model = self._processor, self._model
        start = time.perf_counter()
        inputs, n_images = model_inputs(proc, request, self.config.max_images)
        inputs = inputs.to(self._device)
        sample = request.temperature > 0
        gen: dict[str, Any] = {"max_new_tokens": request.max_tokens, "do_sample": sample}
        if sample:
            gen["temperature"] = request.temperature
            if request.top_p is not None:
                gen["top_p"] = request.top_p
        with _seeded(request.seed, self._device), torch.inference_mode():
            out = model.generate(
                **inputs, **gen, output_scores=request.logprobs, return_dict_in_generate=True
            )
        prompt_len = int(inputs["input_ids"].shape[1])
        new_ids = out.sequences[0, prompt_len:]
        tokenizer = proc.tokenizer
        reply = tokenizer.decode(new_ids, skip_special_tokens=True)
        logprobs = None
        if request.logprobs and out.scores:
            logprobs = _token_logprobs(tokenizer, new_ids, out.scores, request.top_logprobs)
        return Completion(
            text=reply,
            logprobs=logprobs,
            prompt_tokens=prompt_len,
            completion_tokens=int(new_ids.shape[0]),
            latency_s=time.perf_counter() - start,
            meta={"model": self.config.model, "device": self._device, "images": n_images},
        )

    async def complete(self, request: ChatRequest) -> Completion:
        async with self._run_lock:  # one generation at a time on one model
            try:
                return await asyncio.to_thread(self._generate, request)
            except BackendError:
                raise
            except RuntimeError as exc:  # out of memory, shape problems: fail the item, not the run
                raise BackendError(f"generation failed: {exc}") from None

    async def aclose(self) -> None:
        self._model = None
        self._processor = None


def model_inputs(processor: Any, request: ChatRequest, max_images: int) -> tuple[Any, int]:
    """The processor's tensors for one request, and how many frames it shows.

    The frames go in as one video at the rate they were sampled at (the mean spacing of the frames
    shown, after thinning to ``max_images``): told nothing, transformers' video processors take 24 fps,
    and Qwen2.5-VL places the video's tokens in time by it (``second_per_grid_ts``), Qwen3-VL writes it
    into the prompt as each frame's time.

    Raises:
        BackendError: The frames carry no pixels (only their JPEG encodings).
    """
    kwargs: dict[str, Any] = {}
    n_images = 0
    frames = request.frames
    if frames is not None:
        if not frames.has_pixels:
            raise BackendError("the hf backend needs decoded pixels, but the frames carry only encodings")
        keep = thin_indices(len(frames), max_images)
        n_images = len(keep)
        arrays = padded_video(frames.frames[keep], temporal_patch(processor))
        kwargs["videos"] = [arrays]
        kwargs.update(video_rate([shown_rate(frames, max_images)], [len(arrays)]))
        if with_first_frame(request):
            kwargs["images"] = [arrays[0]]
    text = processor.apply_chat_template(chat_messages(request), tokenize=False, add_generation_prompt=True)
    return processor(text=[text], return_tensors="pt", **kwargs), n_images


def _token_logprobs(tokenizer: Any, ids: Any, scores: Any, k: int) -> tuple[TokenLogprob, ...]:
    import torch

    out = []
    for step, logits in enumerate(scores):
        if step >= len(ids):
            break
        lp = torch.log_softmax(logits[0].float(), dim=-1)
        tok = int(ids[step])
        top = torch.topk(lp, k=min(k, lp.shape[-1]))
        alts = tuple(
            (tokenizer.decode([int(i)]), float(v))
            for v, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        )
        out.append(TokenLogprob(tokenizer.decode([tok]), float(lp[tok]), alts))
    return tuple(out)


BACKENDS.add("hf", HFBackend)
