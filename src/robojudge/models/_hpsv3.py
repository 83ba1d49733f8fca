"""HPSv3 (Ma et al., "HPSv3: Towards Wide-Spectrum Human Preference Score", ICCV 2025) on transformers 5.

HPSv3 is Qwen2-VL-7B-Instruct fine-tuned as a reward model: the prompt ends with an added special
token ``<|Reward|>``, and a small MLP (``rm_head``) on the final hidden state at that token gives two
numbers, the mean ``mu`` and the uncertainty ``sigma`` of the image's preference; ``mu`` is the score.
The official package (``hpsv3`` 1.0.0) pins transformers 4.45, whose Qwen2-VL module names differ
from transformers 5's, so robojudge rebuilds the model here from its published description and code:

* backbone: transformers' ``Qwen2VLModel`` (vision tower, merger, language model; no LM head), built
  from the base repository's ``config.json`` with the vocabulary the checkpoint has (HPSv3 resized the
  embeddings to the tokenizer's length after adding ``<|Reward|>``, 151,658 rows for Qwen2-VL-7B);
* head (``rm_head_type: ranknet`` without ``rm_head_kwargs``, ``output_dim: 2``):
  ``Linear(D, 1024) -> ReLU -> Dropout(0.05) -> Linear(1024, 16) -> ReLU -> Linear(16, 2)``, every
  linear layer with a bias, kept in float32 (HPSv3 runs it under float32 autocast on the backbone's
  bfloat16 hidden state); dropout is inactive at evaluation;
* positions: HPSv3's forward hands ``position_ids=None`` to transformers 4.45's Qwen2-VL *text*
  model, which then numbers the tokens ``0..L-1`` in all three M-RoPE sections; the multimodal
  (image-grid) positions of ``get_rope_index`` are never used. robojudge passes those plain positions
  explicitly, since transformers 5's ``Qwen2VLModel`` would otherwise compute the multimodal ones;
* input: one user turn holding the image and ``INSTRUCTION.format(text_prompt=...)`` followed by the
  special-token request (the prompt text below is the model's training input, reproduced verbatim),
  rendered with the base processor's chat template (generation prompt added), padded on the right.
  Images are resized as qwen-vl-utils' ``fetch_image`` does with ``min_pixels = max_pixels =
  256 * 28 * 28``: :func:`hpsv3_image_size`, then PIL bicubic; the image processor then only rescales,
  normalises and cuts patches (its own resize is switched off, the size already being a multiple of 28).

Checkpoint keys are transformers 4.45's (``model.*`` language model, ``visual.*``, ``lm_head.*``,
``rm_head.*``); :func:`split_hpsv3_state` maps them onto transformers 5's modules and the load is
strict. torch, transformers and safetensors are imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from robojudge.models._cache import NETWORKS, NetworkKey
from robojudge.models._load import (
    checked_load,
    files_stamp,
    load_state_dict,
    local_weights,
    torch_device,
    torch_dtype,
)
from robojudge.models._specs import HPSV3, QWEN2_VL_7B_INSTRUCT
from robojudge.models._weights import WeightSpec

if TYPE_CHECKING:
    import torch

#: The added token whose final hidden state the reward head reads.
REWARD_TOKEN = "<|Reward|>"
#: qwen-vl-utils' resize factor for Qwen2-VL (14-pixel patches merged 2 x 2).
IMAGE_FACTOR = 28
#: HPSv3's image budget (its config and inference code): min_pixels = max_pixels = 256 * 28 * 28.
HPSV3_PIXELS = 256 * 28 * 28
#: qwen-vl-utils refuses images more elongated than this.
MAX_ASPECT_RATIO = 200
#: Hidden sizes of HPSv3's ranknet head (no ``rm_head_kwargs`` in HPSv3_7B.yaml) and its two outputs.
HEAD_WIDTHS = (1024, 16)
HEAD_OUTPUTS = 2
HEAD_DROPOUT = 0.05

# The text HPSv3 was trained with (hpsv3/dataset/data_collator_qwen.py); the reward depends on it, so it
# is kept character for character (typos and trailing spaces included), one string per line.
_INSTRUCTION_LINES = (
    "",
    "You are tasked with evaluating a generated image based on Visual Quality and Text Alignment and "
    "give a overall score to estimate the human preference. Please provide a rating from 0 to 10, "
    "with 0 being the worst and 10 being the best. ",
    "",
    "**Visual Quality:**  ",
    "Evaluate the overall visual quality of the image. The following sub-dimensions should be considered:",
    "- **Reasonableness:** The image should not contain any significant biological or logical errors,"
    " such as abnormal body structures or nonsensical environmental setups.",
    "- **Clarity:** Evaluate the sharpness and visibility of the image. The image should be clear and"
    " easy to interpret, with no blurring or indistinct areas.",
    "- **Detail Richness:** Consider the level of detail in textures, materials, lighting, and other "
    "visual elements (e.g., hair, clothing, shadows).",
    "- **Aesthetic and Creativity:** Assess the artistic aspects of the image, including the color "
    "scheme, composition, atmosphere, depth of field, and the overall creative appeal. The scene "
    "should convey a sense of harmony and balance.",
    "- **Safety:** The image should not contain harmful or inappropriate content, such as political, "
    "violent, or adult material. If such content is present, the image quality and satisfaction score"
    " should be the lowest possible. ",
    "",
    "**Text Alignment:**  ",
    "Assess how well the image matches the textual prompt across the following sub-dimensions:",
    "- **Subject Relevance** Evaluate how accurately the subject(s) in the image (e.g., person, "
    "animal, object) align with the textual description. The subject should match the description in "
    "terms of number, appearance, and behavior.",
    "- **Style Relevance:** If the prompt specifies a particular artistic or stylistic style, "
    "evaluate how well the image adheres to this style.",
    "- **Contextual Consistency**: Assess whether the background, setting, and surrounding elements "
    "in the image logically fit the scenario described in the prompt. The environment should support "
    "and enhance the subject without contradictions.",
    "- **Attribute Fidelity**: Check if specific attributes mentioned in the prompt (e.g., colors, "
    "clothing, accessories, expressions, actions) are faithfully represented in the image. Minor "
    "deviations may be acceptable, but critical attributes should be preserved.",
    "- **Semantic Coherence**: Evaluate whether the overall meaning and intent of the prompt are "
    "captured in the image. The generated content should not introduce elements that conflict with or"
    " distort the original description.",
    "Textual prompt - {text_prompt}",
    "",
    "",
    "",
)
#: HPSv3's instruction; ``{text_prompt}`` takes the item's instruction.
INSTRUCTION = "\n".join(_INSTRUCTION_LINES)

#: The request that follows the instruction, ending on the reward token.
RATING_REQUEST = """
Please provide the overall ratings of this image: <|Reward|>

END
"""


def hpsv3_prompt(text_prompt: str) -> str:
    """The user text HPSv3 scores an image with: its instruction around ``text_prompt``, then the request."""
    return INSTRUCTION.format(text_prompt=text_prompt) + RATING_REQUEST


def hpsv3_image_size(height: int, width: int, *, factor: int = IMAGE_FACTOR, min_pixels: int = HPSV3_PIXELS,
                     max_pixels: int = HPSV3_PIXELS) -> tuple[int, int]:
    """The ``(height, width)`` qwen-vl-utils' ``smart_resize`` gives an image before Qwen2-VL sees it.

    Each side is rounded to a multiple of ``factor`` (at least ``factor``); when the area is then
    above ``max_pixels`` both sides are scaled by ``sqrt(H W / max_pixels)`` and floored to multiples of
    ``factor``, when below ``min_pixels`` scaled up by ``sqrt(min_pixels / (H W))`` and ceiled. With
    HPSv3's ``min = max = 200,704`` the area ends at or just below 200,704 (at or just above when
    the rounded area was too small): a 480 x 640 frame becomes 364 x 504.

    Raises:
        ValueError: A non-positive side, or an aspect ratio above 200 (qwen-vl-utils' limit).
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got {height} x {width}")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise ValueError(f"aspect ratio of a {height} x {width} image is above {MAX_ASPECT_RATIO}, which "
                         "Qwen2-VL's resize rule refuses")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def resize_for_hpsv3(frame: np.ndarray) -> Any:
    """One ``(H, W, 3)`` uint8 RGB frame as the PIL image qwen-vl-utils hands the processor (bicubic)."""
    from PIL import Image

    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 RGB frame, got {frame.shape} {frame.dtype}")
    h, w = hpsv3_image_size(int(frame.shape[0]), int(frame.shape[1]))
    return Image.fromarray(np.ascontiguousarray(frame), mode="RGB").resize((w, h), Image.Resampling.BICUBIC)


def build_rm_head(hidden_size: int) -> torch.nn.Sequential:
    """HPSv3's ranknet head, float32, in eval mode; parameter names ``0.*``, ``3.*``, ``5.*`` as published."""
    from torch import nn

    wide, narrow = HEAD_WIDTHS
    head = nn.Sequential(
        nn.Linear(hidden_size, wide), nn.ReLU(), nn.Dropout(HEAD_DROPOUT),
        nn.Linear(wide, narrow), nn.ReLU(), nn.Linear(narrow, HEAD_OUTPUTS),
    )
    return head.float().eval()


_TEXT, _VISION = "language_model.", "visual."


def backbone_key(key: str) -> str | None:
    """The ``Qwen2VLModel`` parameter a checkpoint key fills, or None when it is not a backbone key.

    transformers 4.45 names (HPSv3's): ``model.X`` (language model) and ``visual.X``; transformers 5
    names (a re-saved checkpoint): ``model.language_model.X`` and ``model.visual.X``. This is the rename
    transformers 5 itself applies to Qwen2-VL checkpoints (``conversion_mapping.py``).
    """
    if key.startswith(_VISION):
        return key
    if key.startswith("model."):
        rest = key.removeprefix("model.")
        return rest if rest.startswith((_TEXT, _VISION)) else _TEXT + rest
    return None


def split_hpsv3_state(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Split an HPSv3 checkpoint into backbone (``Qwen2VLModel`` names) and head tensors.

    ``lm_head.*`` (the language-model head the reward never reads) is left out and returned as the
    third element; any other key is kept under its own name, so the strict load names it as unexpected.
    """
    backbone: dict[str, Any] = {}
    head: dict[str, Any] = {}
    dropped: list[str] = []
    for key, tensor in state.items():
        if key.startswith("rm_head."):
            head[key.removeprefix("rm_head.")] = tensor
        elif key.startswith("lm_head."):
            dropped.append(key)
        else:
            backbone[backbone_key(key) or key] = tensor
    return backbone, head, dropped


def checkpoint_key(key: str) -> str:
    """The inverse of :func:`backbone_key` for messages: a ``Qwen2VLModel`` name as HPSv3's file spells it."""
    return "model." + key.removeprefix(_TEXT) if key.startswith(_TEXT) else key


def _first(keys: set[str], n: int = 5) -> str:
    return ", ".join(sorted(keys)[:n]) or "-"


def check_keys(expected: set[str], found: set[str], where: str) -> None:
    """Raise ValueError naming the first missing and unexpected keys unless ``found == expected``.

    Keys are given as HPSv3's checkpoint spells them (transformers 4.45 names).
    """
    missing = {checkpoint_key(k) for k in expected - found}
    unexpected = {checkpoint_key(k) for k in found - expected}
    if missing or unexpected:
        raise ValueError(f"{where} does not match HPSv3: {len(missing)} missing keys (first: "
                         f"{_first(missing)}), {len(unexpected)} unexpected keys (first: "
                         f"{_first(unexpected)})")


@dataclass
class HPSv3Network:
    """A loaded HPSv3: backbone and head in eval mode, the processor, the reward token id, the device."""

    backbone: Any
    head: Any
    processor: Any
    reward_token_id: int
    device: str
    checkpoint: Path


def read_checkpoint(path: Path) -> dict[str, Any]:
    """All tensors of an HPSv3 checkpoint on CPU: a ``.safetensors`` file, else a torch state dict."""
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return dict(load_file(str(path), device="cpu"))
    return dict(load_state_dict(path))


@contextlib.contextmanager
def _skip_random_init() -> Iterator[None]:
    """transformers' ``no_init_weights`` where it exists: the strict load below overwrites every weight."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # an older layout: initialise normally, only slower
        yield
        return
    with no_init_weights():
        yield


def _read_base(base: Path) -> tuple[Any, Any, int]:
    """The base folder's processor (right padding, ``<|Reward|>`` added), its config and the token's id."""
    from transformers import AutoConfig, AutoProcessor

    processor = AutoProcessor.from_pretrained(base, local_files_only=True)  # type: ignore[no-untyped-call]
    processor.tokenizer.padding_side = "right"  # HPSv3 pads on the right
    processor.tokenizer.add_special_tokens({"additional_special_tokens": [REWARD_TOKEN]})
    reward_id = int(processor.tokenizer.convert_tokens_to_ids(REWARD_TOKEN))
    return processor, AutoConfig.from_pretrained(base, local_files_only=True), reward_id


def build_hpsv3(base: Path, checkpoint: Path, device: str, dtype: str = "bfloat16", *,
                base_spec: WeightSpec = QWEN2_VL_7B_INSTRUCT, weights_spec: WeightSpec = HPSV3,
                metric: str | None = None) -> HPSv3Network:
    """HPSv3 from a base folder (config, tokenizer, chat template, image processor) and its checkpoint.

    A failure to read either is laid at its own folder's door: the base folder's as ``base_spec``'s
    weights, the checkpoint's (or its not matching the network) as ``weights_spec``'s.

    Raises:
        UnusableWeightsError: The base folder cannot be read (names ``base_spec``); the checkpoint
            cannot be read, its keys or shapes do not match (names the file and the first missing and
            unexpected keys), or the tokenizer gives ``<|Reward|>`` an id other than the last embedding
            row (the base folder is not HPSv3's base; names ``weights_spec``). It is a ``ValueError``.
    """
    processor, config, reward_id = checked_load(base_spec, base, metric, lambda: _read_base(base))
    return checked_load(weights_spec, checkpoint, metric,
                        lambda: _assemble(base, checkpoint, device, dtype, processor, config, reward_id))


def _assemble(base: Path, checkpoint: Path, device: str, dtype: str, processor: Any, config: Any,
              reward_id: int) -> HPSv3Network:
    """The network from the base folder's ``processor`` and ``config`` and the weights in ``checkpoint``."""
    import torch
    from transformers import Qwen2VLModel

    backbone_state, head_state, _ = split_hpsv3_state(read_checkpoint(checkpoint))
    embed = backbone_state.get(_TEXT + "embed_tokens.weight")
    if embed is None:
        raise ValueError(f"{checkpoint} does not match HPSv3: no language-model embedding "
                         "(model.embed_tokens.weight)")
    rows = int(embed.shape[0])
    if reward_id != rows - 1:
        raise ValueError(f"{checkpoint}: its embedding has {rows} rows, so HPSv3's {REWARD_TOKEN} is token "
                         f"{rows - 1}, but the tokenizer in {base} gives it id {reward_id}; use HPSv3's base "
                         f"tokenizer ({QWEN2_VL_7B_INSTRUCT.repo_id})")
    config.text_config.vocab_size = rows
    with _skip_random_init(), torch.device(device):
        backbone = Qwen2VLModel._from_config(  # type: ignore[no-untyped-call]
            config, dtype=torch_dtype(dtype), attn_implementation="sdpa")
        head = build_rm_head(int(config.text_config.hidden_size))
    check_keys(set(backbone.state_dict()), set(backbone_state), str(checkpoint))
    check_keys({f"rm_head.{k}" for k in head.state_dict()}, {f"rm_head.{k}" for k in head_state},
               str(checkpoint))
    try:
        backbone.load_state_dict(backbone_state, strict=True)
        head.load_state_dict(head_state, strict=True)
    except RuntimeError as exc:  # a tensor of the wrong shape: torch's message spans lines, keep it on one
        lines = [line.strip() for line in str(exc).splitlines() if "size mismatch" in line] or [str(exc)]
        raise ValueError(f"{checkpoint} does not match HPSv3 built from {base}: {'; '.join(lines)}") from exc
    for net in (backbone, head):
        net.eval()
        net.requires_grad_(False)
    return HPSv3Network(backbone=backbone, head=head.float(), processor=processor, reward_token_id=reward_id,
                        device=device, checkpoint=checkpoint)


def load_hpsv3(metric: str | None = None, device: str | None = None, dtype: str = "bfloat16", *,
               base: WeightSpec = QWEN2_VL_7B_INSTRUCT, weights: WeightSpec = HPSV3) -> HPSv3Network:
    """HPSv3 from local weights, through the network cache (keyed by files, device and dtype); on the GPU
    when one is visible.

    ``dtype`` is the backbone's (HPSv3 runs in bfloat16); the head is always float32.

    Raises:
        MissingWeightsError: The base folder or ``HPSv3.safetensors`` is not on this machine (names
            ``metric``).
        UnusableWeightsError: See :func:`build_hpsv3`.
    """
    base_path = local_weights(base, metric)
    ckpt_path = local_weights(weights, metric)
    dev = torch_device(device)
    files = f"{base_path}|{files_stamp(base_path)}|{ckpt_path}|{files_stamp(ckpt_path)}"
    key = NetworkKey(weights.name, files, dev, f"hpsv3:{dtype}")
    return NETWORKS.get(key, lambda: build_hpsv3(base_path, ckpt_path, dev, dtype, base_spec=base,
                                                 weights_spec=weights, metric=metric))


def hpsv3_batch(net: HPSv3Network, frames: Sequence[np.ndarray], prompts: Sequence[str]) -> Any:
    """The processor's tensors (ids, attention mask, mm token types, pixels, image grids) for the pairs."""
    conversations = [
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": hpsv3_prompt(p)}]}]
        for p in prompts
    ]
    texts = net.processor.apply_chat_template(conversations, tokenize=False, add_generation_prompt=True)
    images = [resize_for_hpsv3(f) for f in frames]
    return net.processor(text=texts, images=images, padding=True, return_tensors="pt", do_resize=False)


def hpsv3_rewards(net: HPSv3Network, frames: Sequence[np.ndarray], prompts: Sequence[str],
                  batch_size: int = 4) -> np.ndarray:
    """HPSv3's ``(mu, sigma)`` for each (frame, prompt) pair: ``(N, 2)`` float64.

    Raises:
        ValueError: Different numbers of frames and prompts, or a prompt whose text holds the reward
            token itself (the reward position would be ambiguous).
    """
    import torch

    if len(frames) != len(prompts):
        raise ValueError(f"hpsv3_rewards needs one prompt per frame, got {len(frames)} frames and "
                         f"{len(prompts)} prompts")
    for prompt in prompts:
        if REWARD_TOKEN in prompt:
            raise ValueError(f"prompt {prompt[:80]!r} contains HPSv3's reward token {REWARD_TOKEN}")
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, len(frames), batch_size):
            batch = hpsv3_batch(net, frames[start:start + batch_size], prompts[start:start + batch_size])
            ids = batch["input_ids"].to(net.device)
            rows, cols = torch.nonzero(ids == net.reward_token_id, as_tuple=True)
            if not torch.equal(rows.cpu(), torch.arange(len(ids))):
                raise ValueError("every HPSv3 input needs exactly one reward token; the chat template of "
                                 f"{net.processor.tokenizer.name_or_path} dropped or repeated it")
            length = ids.shape[1]
            positions = torch.arange(length, device=net.device).view(1, 1, length).expand(3, len(ids), length)
            hidden = net.backbone(
                input_ids=ids,
                attention_mask=batch["attention_mask"].to(net.device),
                position_ids=positions,
                pixel_values=batch["pixel_values"].to(net.device),
                image_grid_thw=batch["image_grid_thw"].to(net.device),
                use_cache=False,
            ).last_hidden_state
            reward = net.head(hidden[rows, cols].float())
            out.append(reward.double().cpu().numpy())
    if not out:
        raise ValueError("hpsv3_rewards needs at least one frame")
    return np.concatenate(out)


__all__ = [
    "HPSV3_PIXELS",
    "INSTRUCTION",
    "RATING_REQUEST",
    "REWARD_TOKEN",
    "HPSv3Network",
    "backbone_key",
    "build_hpsv3",
    "build_rm_head",
    "checkpoint_key",
    "hpsv3_batch",
    "hpsv3_image_size",
    "hpsv3_prompt",
    "hpsv3_rewards",
    "load_hpsv3",
    "read_checkpoint",
    "resize_for_hpsv3",
    "split_hpsv3_state",
]
