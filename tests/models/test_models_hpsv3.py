"""robojudge's HPSv3 port on a tiny random Qwen2-VL: resize rule, prompt, key mapping, strict load, forward.

The reference forward is built independently: transformers' own ``from_pretrained`` loads the same
4.45-named checkpoint (applying transformers' Qwen2-VL key renames), its hidden state at the reward
token is taken with HPSv3's plain positions, and the head is applied by hand from the raw tensors.
The hub is offline (the ``weights`` fixture); every network is built from a config in a tmp folder.
"""

import hashlib
import math
import shutil

import numpy as np
import pytest
from _hpsv3_nets import HIDDEN, legacy_state, save_tiny_hpsv3

from robojudge.models import MissingWeightsError, clear
from robojudge.models._hpsv3 import (
    HPSV3_PIXELS,
    INSTRUCTION,
    RATING_REQUEST,
    REWARD_TOKEN,
    backbone_key,
    build_rm_head,
    checkpoint_key,
    hpsv3_batch,
    hpsv3_image_size,
    hpsv3_prompt,
    hpsv3_rewards,
    load_hpsv3,
    resize_for_hpsv3,
    split_hpsv3_state,
)

PROMPTS = ["pick up the red cube", "open the drawer and put the spoon inside", "x"]


def _frames():
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((60, 80, 3), (50, 50, 3), (90, 40, 3))]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One tiny HPSv3 on disk for the whole module: ``(weights root, the 4.45-named state)``."""
    root = tmp_path_factory.mktemp("hpsv3_weights")
    return root, save_tiny_hpsv3(root)


@pytest.fixture
def net(tiny, monkeypatch):
    root, _ = tiny
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clear()
    yield load_hpsv3(device="cpu", dtype="float32")
    clear()


def test_image_size_follows_qwen_vl_utils():
    # 480 x 640: rounded 476 x 644 = 306,544 > 200,704, so beta = sqrt(307,200 / 200,704) = 1.23718;
    # 480 / 1.23718 / 28 = 13.86 -> 13 * 28 = 364; 640 / 1.23718 / 28 = 18.48 -> 18 * 28 = 504.
    assert hpsv3_image_size(480, 640) == (364, 504)
    # 60 x 80: rounded 56 x 84 is too small; beta = sqrt(200,704 / 4,800) = 6.4663;
    # 60 * 6.4663 / 28 = 13.86 -> 14 * 28 = 392; 80 * 6.4663 / 28 = 18.48 -> 19 * 28 = 532.
    assert hpsv3_image_size(60, 80) == (392, 532)
    assert hpsv3_image_size(448, 448) == (448, 448)  # 16 * 16 patches of 28 = exactly 256 * 28 * 28
    with pytest.raises(ValueError, match="aspect ratio"):
        hpsv3_image_size(2, 500)


def test_image_size_agrees_with_transformers_smart_resize():
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize

    for h, w in [(480, 640), (720, 1280), (256, 256), (100, 300), (1080, 1920), (33, 47)]:
        assert hpsv3_image_size(h, w) == smart_resize(h, w, 28, HPSV3_PIXELS, HPSV3_PIXELS)
        hh, ww = hpsv3_image_size(h, w)
        assert hh % 28 == 0 and ww % 28 == 0
        assert math.isclose(hh / ww, h / w, rel_tol=0.15)


def test_resize_is_pil_bicubic():
    from PIL import Image

    frame = _frames()[0]
    got = resize_for_hpsv3(frame)
    want = Image.fromarray(frame).resize((532, 392), Image.Resampling.BICUBIC)
    assert got.size == (532, 392)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_processor_gets_the_resized_image_and_one_reward_token(net):
    batch = hpsv3_batch(net, _frames()[:1], PROMPTS[:1])
    # 60 x 80 -> 392 x 532 (above): 28 x 38 patches of 14 pixels, merged 2 x 2 into 266 image tokens
    assert batch["image_grid_thw"].tolist() == [[1, 28, 38]]
    assert tuple(batch["pixel_values"].shape) == (28 * 38, 3 * 2 * 14 * 14)
    ids = batch["input_ids"][0].tolist()
    image_pad = net.processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    assert ids.count(image_pad) == 266 and ids.count(net.reward_token_id) == 1
    text = net.processor.tokenizer.decode(ids)
    assert text.endswith(hpsv3_prompt(PROMPTS[0]) + "<|im_end|>\n<|im_start|>assistant\n")
    assert net.processor.tokenizer.padding_side == "right"


def test_prompt_is_hpsv3s_text():
    # SHA-256 of hpsv3 1.0.0's INSTRUCTION and prompt_with_special_token (hpsv3/dataset/
    # data_collator_qwen.py in the published wheel), 2,523 and 67 characters.
    assert hashlib.sha256(INSTRUCTION.encode()).hexdigest() == (
        "0393599dad45a971903d1d62a3acf9bad3ccccdafa7f40f680523419e1f68b7a")
    assert hashlib.sha256(RATING_REQUEST.encode()).hexdigest() == (
        "2471faca094ae5bd6fe17b71dce20c3d7583625545e235889f7e74e7eeb69d0a")
    text = hpsv3_prompt("stack {the} cups")
    assert text.endswith("Textual prompt - stack {the} cups\n\n\n\n"
                         "Please provide the overall ratings of this image: <|Reward|>\n\nEND\n")
    assert text.count(REWARD_TOKEN) == 1 and text.startswith("\nYou are tasked with evaluating")


def test_key_mapping_matches_transformers_layout():
    assert backbone_key("model.layers.3.mlp.up_proj.weight") == "language_model.layers.3.mlp.up_proj.weight"
    assert backbone_key("model.embed_tokens.weight") == "language_model.embed_tokens.weight"
    assert backbone_key("visual.blocks.0.attn.qkv.weight") == "visual.blocks.0.attn.qkv.weight"
    # transformers 5 names (a re-saved checkpoint) map to the same modules
    assert backbone_key("model.language_model.norm.weight") == "language_model.norm.weight"
    assert backbone_key("model.visual.merger.ln_q.weight") == "visual.merger.ln_q.weight"
    assert backbone_key("lm_head.weight") is None and backbone_key("rm_head.0.weight") is None
    assert checkpoint_key("language_model.norm.weight") == "model.norm.weight"
    backbone, head, dropped = split_hpsv3_state(
        {"model.norm.weight": 1, "visual.patch_embed.proj.weight": 2, "lm_head.weight": 3,
         "rm_head.5.bias": 4, "value_head.weight": 5})
    assert backbone == {"language_model.norm.weight": 1, "visual.patch_embed.proj.weight": 2,
                        "value_head.weight": 5}
    assert head == {"5.bias": 4} and dropped == ["lm_head.weight"]


def test_head_is_hpsv3s_ranknet():
    import torch

    head = build_rm_head(HIDDEN)
    kinds = [type(m).__name__ for m in head]
    assert kinds == ["Linear", "ReLU", "Dropout", "Linear", "ReLU", "Linear"]
    assert [(m.in_features, m.out_features) for m in head if isinstance(m, torch.nn.Linear)] == [
        (HIDDEN, 1024), (1024, 16), (16, 2)]
    assert all(m.bias is not None for m in head if isinstance(m, torch.nn.Linear))
    assert head[2].p == 0.05 and not head.training
    assert all(p.dtype == torch.float32 for p in head.parameters())
    x = torch.randn(5, HIDDEN)
    assert torch.equal(head(x), head(x))  # dropout inactive at evaluation


@pytest.mark.slow
def test_reward_equals_hand_written_forward(tiny, net, tmp_path):
    import torch
    from safetensors.torch import save_file
    from transformers import Qwen2VLForConditionalGeneration

    root, state = tiny
    # transformers' own loader of the 4.45-named checkpoint (its conversion mapping, not robojudge's)
    shutil.copy(root / "qwen2_vl_7b_instruct" / "config.json", tmp_path / "config.json")
    backbone_only = {k: v for k, v in state.items() if not k.startswith("rm_head.")}
    save_file(backbone_only, str(tmp_path / "model.safetensors"))
    ref = Qwen2VLForConditionalGeneration.from_pretrained(tmp_path, local_files_only=True,
                                                          dtype=torch.float32)
    ref.eval()
    frames = _frames()
    got = hpsv3_rewards(net, frames[:1], PROMPTS[:1])
    for i in range(1):
        batch = hpsv3_batch(net, frames[i:i + 1], PROMPTS[i:i + 1])
        ids = batch["input_ids"]
        length = ids.shape[1]
        (where,) = torch.nonzero(ids[0] == net.reward_token_id)[0]
        inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "pixel_values", "image_grid_thw")}
        with torch.no_grad():
            plain = torch.arange(length).view(1, 1, length).expand(3, 1, length)
            hidden = ref.model(**inputs, position_ids=plain).last_hidden_state[0, where]
            types = batch["mm_token_type_ids"]
            mrope = ref.model(**inputs, mm_token_type_ids=types).last_hidden_state[0, where]

        def head(h):
            h = torch.relu(h @ state["rm_head.0.weight"].T + state["rm_head.0.bias"])
            h = torch.relu(h @ state["rm_head.3.weight"].T + state["rm_head.3.bias"])
            return (h @ state["rm_head.5.weight"].T + state["rm_head.5.bias"]).double().numpy()

        np.testing.assert_allclose(got[i], head(hidden), atol=1e-5, rtol=0)
        # HPSv3 numbers tokens 0..L-1: transformers 5's multimodal positions would give another reward
        assert np.abs(head(mrope) - got[i]).max() > 1e-3


@pytest.mark.slow
def test_batch_and_single_give_the_same_rewards(net):
    frames = _frames()
    together = hpsv3_rewards(net, frames, PROMPTS, batch_size=3)  # prompts of different lengths: padded
    alone = np.concatenate([hpsv3_rewards(net, frames[i:i + 1], PROMPTS[i:i + 1]) for i in range(3)])
    np.testing.assert_allclose(together, alone, atol=1e-5, rtol=0)
    assert together.shape == (3, 2) and np.ptp(together[:, 0]) > 0  # the frames do score differently
    with pytest.raises(ValueError, match="one prompt per frame"):
        hpsv3_rewards(net, frames, PROMPTS[:2])
    with pytest.raises(ValueError, match="contains HPSv3's reward token"):
        hpsv3_rewards(net, frames[:1], [f"say {REWARD_TOKEN}"])


@pytest.mark.slow
def test_bfloat16_backbone_keeps_a_float32_head(net):
    import torch

    clear()
    half = load_hpsv3(device="cpu", dtype="bfloat16")
    assert {p.dtype for p in half.backbone.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in half.head.parameters()} == {torch.float32}
    frames = _frames()[:1]
    low, full = hpsv3_rewards(half, frames, PROMPTS[:1]), hpsv3_rewards(net, frames, PROMPTS[:1])
    assert np.isfinite(low).all() and np.abs(low - full).max() < 0.1 * np.abs(full).max()


def _load_from(root, monkeypatch):
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    clear()
    try:
        return load_hpsv3(device="cpu", dtype="float32")
    finally:
        clear()


def test_strict_load_names_missing_and_unexpected_keys(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    state, _ = legacy_state()
    del state["model.norm.weight"], state["rm_head.3.bias"]
    state["visual.extra.weight"] = torch.zeros(1)
    save_tiny_hpsv3(tmp_path / "a", state=state)
    message = (r"HPSv3\.safetensors does not match HPSv3: 1 missing keys \(first: model\.norm\.weight\), "
               r"1 unexpected keys \(first: visual\.extra\.weight\)")
    with pytest.raises(ValueError, match=message):
        _load_from(tmp_path / "a", monkeypatch)
    state, _ = legacy_state()
    state.pop("rm_head.3.bias")
    save_tiny_hpsv3(tmp_path / "b", state=state)
    with pytest.raises(ValueError, match=r"1 missing keys \(first: rm_head\.3\.bias\)"):
        _load_from(tmp_path / "b", monkeypatch)
    state, _ = legacy_state()
    state["rm_head.5.weight"] = torch.zeros(3, 16)  # a 3-output head is not HPSv3's
    save_tiny_hpsv3(tmp_path / "c", state=state)
    with pytest.raises(ValueError, match=r"(?s)not match HPSv3 built from .*size mismatch for 5\.weight"):
        _load_from(tmp_path / "c", monkeypatch)


def test_reward_token_must_be_the_last_embedding_row(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    state, _ = legacy_state()
    embed = state["model.embed_tokens.weight"]
    state["model.embed_tokens.weight"] = torch.cat([embed, torch.zeros(1, HIDDEN)])  # 264 + 1 rows
    save_tiny_hpsv3(tmp_path, state=state)
    message = r"265 rows, so HPSv3's <\|Reward\|> is token 264, but the tokenizer .* gives it id 263"
    with pytest.raises(ValueError, match=message):
        _load_from(tmp_path, monkeypatch)


def test_missing_weights_name_the_metric(weights):
    with pytest.raises(MissingWeightsError, match=r"metric 'aq_hpsv3' needs .*'qwen2_vl_7b_instruct'"):
        load_hpsv3(metric="aq_hpsv3", device="cpu")
    (weights / "qwen2_vl_7b_instruct").mkdir()
    (weights / "qwen2_vl_7b_instruct" / "config.json").write_text("{}")
    with pytest.raises(MissingWeightsError, match=r"'hpsv3' \(hf://MizzenAI/HPSv3 .*HPSv3\.safetensors"):
        load_hpsv3(metric="aq_hpsv3", device="cpu")


def test_unreadable_folders_are_named_apart(tmp_path, monkeypatch):
    """A broken checkpoint is HPSv3's weights' fault, a broken base folder the base's: each comes out as
    an UnusableWeightsError naming its own weights and file (the runner records it per item), not as
    the loader's raw error."""
    from robojudge.models import UnusableWeightsError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    save_tiny_hpsv3(tmp_path / "a")
    (tmp_path / "a" / "hpsv3" / "HPSv3.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(UnusableWeightsError) as err:
        _load_from(tmp_path / "a", monkeypatch)
    assert err.value.spec.name == "hpsv3" and err.value.path.name == "HPSv3.safetensors"
    assert "loading failed" in str(err.value)

    save_tiny_hpsv3(tmp_path / "b")
    (tmp_path / "b" / "qwen2_vl_7b_instruct" / "config.json").write_text("{ not json")
    with pytest.raises(UnusableWeightsError) as err:
        _load_from(tmp_path / "b", monkeypatch)
    assert err.value.spec.name == "qwen2_vl_7b_instruct"
    assert err.value.path == tmp_path / "b" / "qwen2_vl_7b_instruct"
