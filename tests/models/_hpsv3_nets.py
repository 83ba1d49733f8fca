"""A tiny random HPSv3 for tests: a byte-level Qwen2 tokenizer, a 1-block vision tower, 2 text layers.

:func:`save_tiny_hpsv3` writes what robojudge reads from the two weight folders: the base folder
(``config.json`` in the hub's flat Qwen2-VL layout, tokenizer, image processor and a chat template
written like Qwen2-VL's) and ``HPSv3.safetensors`` with transformers 4.45 key names (``model.*``,
``visual.*``, ``lm_head.*``) plus a random ``rm_head``. Nothing touches a hub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|image_pad|>", "<|video_pad|>"]

# Qwen2-VL's template, reduced to what HPSv3's single user turn uses (system line, image, text).
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}"
    "{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == 'text' %}{{ content['text'] }}"
    "{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

HIDDEN = 32


def tiny_tokenizer() -> Any:
    """A Qwen2 byte-level BPE over the 256 byte symbols (no merges) plus Qwen2-VL's special tokens."""
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import Qwen2Tokenizer

    vocab = {c: i for i, c in enumerate(sorted(ByteLevel.alphabet()))}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[])
    tok.add_special_tokens({"additional_special_tokens": SPECIALS})
    return tok


def flat_config(vocab_size: int, ids: dict[str, int]) -> dict[str, Any]:
    """A Qwen2-VL ``config.json`` in the hub's flat layout (text fields at the top), tiny sizes."""
    return {
        "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
        "vocab_size": vocab_size, "hidden_size": HIDDEN, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_act": "silu", "rms_norm_eps": 1e-6,
        "max_position_embeddings": 4096, "rope_theta": 1000000.0, "tie_word_embeddings": False,
        "initializer_range": 0.2,  # large random weights, so that token positions visibly matter
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]},  # head_dim 8: 4 frequencies
        "image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
        "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"],
        "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
        "vision_config": {"depth": 1, "embed_dim": 16, "hidden_size": HIDDEN, "num_heads": 2, "mlp_ratio": 2,
                          "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
                          "temporal_patch_size": 2, "hidden_act": "quick_gelu", "initializer_range": 0.2},
    }


def legacy_state(seed: int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
    """Random weights of the tiny model, keyed as transformers 4.45 saved HPSv3, and its flat config.

    The vocabulary is the tokenizer's length plus one row for ``<|Reward|>`` (HPSv3 resized the
    embeddings after adding it). Returns ``(state, config)``.
    """
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLModel

    tok = tiny_tokenizer()
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = flat_config(len(tok) + 1, ids)
    torch.manual_seed(seed)
    net = Qwen2VLModel(Qwen2VLConfig(**config))
    state: dict[str, Any] = {}
    for key, tensor in net.state_dict().items():
        if key.startswith("language_model."):
            state["model." + key.removeprefix("language_model.")] = tensor.clone()
        else:
            state[key] = tensor.clone()  # visual.*
    state["lm_head.weight"] = torch.randn(len(tok) + 1, HIDDEN)
    for name, shape in (("0", (1024, HIDDEN)), ("3", (16, 1024)), ("5", (2, 16))):
        state[f"rm_head.{name}.weight"] = torch.randn(shape) / shape[1] ** 0.5
        state[f"rm_head.{name}.bias"] = torch.randn(shape[0]) * 0.1
    return state, config


def save_base(folder: Path, config: dict[str, Any]) -> Path:
    """The base folder: flat config, tokenizer, image processor (HPSv3's 256 x 28 x 28 budget), template."""
    from transformers import Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    image_processor = Qwen2VLImageProcessor(min_pixels=3136, max_pixels=12845056)
    processor = Qwen2VLProcessor(image_processor=image_processor, tokenizer=tiny_tokenizer(),
                                 video_processor=Qwen2VLVideoProcessor(), chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(folder)
    return folder


def save_tiny_hpsv3(root: Path, seed: int = 0, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``root/qwen2_vl_7b_instruct/`` and ``root/hpsv3/HPSv3.safetensors``; returns the saved state."""
    from safetensors.torch import save_file

    made, config = legacy_state(seed)
    state = made if state is None else state
    save_base(root / "qwen2_vl_7b_instruct", config)
    (root / "hpsv3").mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in state.items()}, str(root / "hpsv3" / "HPSv3.safetensors"))
    return state
