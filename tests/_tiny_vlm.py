"""A tiny randomly initialised Qwen2-VL (or Qwen2.5-VL) saved to a folder: no hub, no weights, a
character tokenizer.

Shared by the ``hf`` backend's tests (tests/judges) and the training tests (tests/train). Its replies
are noise, which is what the tests need: they check the paths (frames in, text out, finite loss, a
checkpoint the ``hf`` judge loads), not the quality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] == 'text' %}{{ c['text'] }}"
    "{% elif c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _char_tokenizer() -> tuple[Any, dict[str, int]]:
    """A tokenizer of one token per printable character, with Qwen's special tokens; and its vocabulary."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(chr(i) for i in range(32, 127)) | {"\n"})
    vocab = {tok: i for i, tok in enumerate(SPECIALS + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="?"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIALS[1:],
    )
    return fast, vocab


def _build(folder: Path, processor_cls: Any, config_cls: Any, model_cls: Any,
           vision: dict[str, Any]) -> Path:
    """Write a tiny model of ``model_cls`` (one text layer of 32 units, the char tokenizer, the vision
    settings ``vision``) with its processor into ``folder``; returns it."""
    import torch
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    tokenizer, vocab = _char_tokenizer()
    ids = {t: vocab[t] for t in SPECIALS}
    size = {"shortest_edge": 28 * 28, "longest_edge": 56 * 56}
    processor = processor_cls(
        image_processor=Qwen2VLImageProcessor(size=size),
        video_processor=Qwen2VLVideoProcessor(size=size),
        tokenizer=tokenizer,
        chat_template=TEMPLATE,
    )
    config = config_cls(
        text_config={
            "vocab_size": len(vocab),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 2, 4]},
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    model_cls(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def build_tiny_qwen2vl(folder: Path) -> Path:
    """Write a tiny Qwen2-VL (model, tokenizer, processor) into ``folder``; returns it."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    return _build(folder, Qwen2VLProcessor, Qwen2VLConfig, Qwen2VLForConditionalGeneration, {
        "depth": 1,
        "embed_dim": 32,
        "hidden_size": 32,
        "num_heads": 2,
        "mlp_ratio": 2,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    })


def build_tiny_qwen25vl(folder: Path) -> Path:
    """Write a tiny Qwen2.5-VL (model, tokenizer, processor) into ``folder``; returns it. Its processor
    places a video's frames in time (``second_per_grid_ts``) by their rate, and its model's temporal
    position ids step by ``tokens_per_second`` (4) x seconds per temporal patch."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor

    return _build(folder, Qwen2_5_VLProcessor, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "out_hidden_size": 32,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 56,
        "fullatt_block_indexes": [0],
        "tokens_per_second": 4,
    })
