"""ViCLIP: VBench's frame choice, preprocessing and tokens, the network's keys, and the strict loader.

Networks are tiny and random (built from a ViCLIPConfig, saved with torch.save into a temporary
$ROBOJUDGE_WEIGHTS); the hub is offline. The full-size network is only built on the meta device.
"""

import numpy as np
import pytest

from robojudge.models import VICLIP_L14_INTERNVID, MissingWeightsError, ViCLIPConfig, clear, load_viclip
from robojudge.models._viclip import (
    CLIP_MEAN,
    CLIP_STD,
    config_from_state_dict,
    cosine,
    frame_indices,
    preprocess_frames,
    tokenize,
    viclip_text_embedding,
    viclip_video_embedding,
)

FILE = "ViClip-InternVid-10M-FLT.pth"
TINY = ViCLIPConfig(input_resolution=32, patch_size=8, vision_width=128, vision_layers=2, num_frames=8,
                    embed_dim=16, text_width=64, text_layers=2)


def save_tiny(root, *, nest=True, rename=None, seed=0):
    """A random tiny ViCLIP saved as $ROBOJUDGE_WEIGHTS/viclip_l14_internvid/<FILE>; returns the net."""
    import torch

    from robojudge.models._viclip_net import ViCLIP

    torch.manual_seed(seed)
    net = ViCLIP(TINY).eval()
    state = net.state_dict()
    if rename:
        state[rename[1]] = state.pop(rename[0])
    folder = root / VICLIP_L14_INTERNVID.name
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": state} if nest else state, folder / FILE)  # VBench reads the 'model' entry
    return net


def test_frame_indices_by_hand():
    # 20 frames: bounds int(linspace(0, 20, 9)) = 0 2 5 7 10 12 15 17 20; spans (0,1) (2,4) (5,6) (7,9)
    # (10,11) (12,14) (15,16) (17,19); middles (lo + hi) // 2:
    assert frame_indices(20) == [0, 3, 5, 8, 10, 13, 15, 18]
    # 12 frames: bounds 0 1 3 4 6 7 9 10 12 -> spans (0,0) (1,2) (3,3) (4,5) (6,6) (7,8) (9,9) (10,11)
    assert frame_indices(12) == [0, 1, 3, 4, 6, 7, 9, 10]
    # 3 frames: three spans of one frame each, padded with the last one to 8
    assert frame_indices(3) == [0, 1, 2, 2, 2, 2, 2, 2]
    assert frame_indices(8) == list(range(8))
    with pytest.raises(ValueError, match="at least one frame"):
        frame_indices(0)


@pytest.mark.slow  # imports torch
def test_preprocess_constant_and_shape():
    frames = np.zeros((2, 40, 60, 3), dtype=np.uint8)
    frames[..., 0], frames[..., 1], frames[..., 2] = 51, 102, 255
    x = preprocess_frames(frames, 32).numpy()
    assert x.shape == (2, 3, 32, 32)
    # A constant frame stays constant through resize and crop: (c / 255 - mean) / std per channel,
    # e.g. red (0.2 - 0.48145466) / 0.26862954 = -1.04775...
    want = [(c / 255 - m) / s for c, m, s in zip((51, 102, 255), CLIP_MEAN, CLIP_STD, strict=True)]
    np.testing.assert_allclose(x, np.broadcast_to(np.array(want)[:, None, None], x.shape), atol=1e-6)
    assert want[0] == pytest.approx(-1.04775, abs=1e-4)
    # The centre crop of a wide frame keeps its middle: a left-half/right-half frame, 40 x 80, resized to
    # 32 x 64 and cropped to columns 16..47, shows both halves, split at column 16.
    split = np.zeros((1, 40, 80, 3), dtype=np.uint8)
    split[:, :, 40:] = 255
    y = preprocess_frames(split, 32).numpy()[0, 0]
    assert y[:, :14].max() < 0 < y[:, 18:].min()
    with pytest.raises(ValueError, match="uint8"):
        preprocess_frames(frames.astype(np.float32), 32)


@pytest.mark.slow  # imports torch
def test_tokenize_matches_openai_clip():
    texts = ["Pick up the red cube and place it in the bowl.", "word " * 40]
    got = tokenize(texts, 32)
    import clip  # importable now: tokenize() imported it with the pkg_resources stand-in in place

    assert got.shape == (2, 32) and got.dtype == np.int64
    assert got[0, 0] == 49406 and got[1, -1] == 49407  # start marker; the long text cut, end marker last
    end = int(np.argmax(got[0]))
    assert got[0, end] == 49407 and not got[0, end + 1:].any()
    np.testing.assert_array_equal(got, clip.tokenize(texts, context_length=32, truncate=True).numpy())
    # lower-cased and whitespace collapsed, as CLIP's tokenizer cleans text
    np.testing.assert_array_equal(tokenize(["PICK  up\tthe cube"]), tokenize(["pick up the cube"]))


@pytest.mark.slow  # imports torch
def test_full_size_keys_are_vbench_names():
    import torch

    from robojudge.models._viclip_net import ViCLIP

    with torch.device("meta"):
        net = ViCLIP()
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    # Names and sizes as VBench's third_party/ViCLIP builds them (clip_joint_l14, clip_text_l14 with
    # context 32) and loads them from the checkpoint's 'model' entry.
    expected = {
        "temp": (),
        "vision_encoder.conv1.weight": (1024, 3, 1, 14, 14),
        "vision_encoder.class_embedding": (1024,),
        "vision_encoder.positional_embedding": (257, 1024),  # 16 x 16 patches + class token
        "vision_encoder.temporal_positional_embedding": (1, 8, 1024),
        "vision_encoder.ln_pre.weight": (1024,),
        "vision_encoder.transformer.resblocks.0.attn.in_proj_weight": (3072, 1024),
        "vision_encoder.transformer.resblocks.0.attn.out_proj.bias": (1024,),
        "vision_encoder.transformer.resblocks.23.mlp.c_fc.weight": (4096, 1024),
        "vision_encoder.transformer.resblocks.23.mlp.c_proj.weight": (1024, 4096),
        "vision_encoder.transformer.resblocks.23.ln_2.bias": (1024,),
        "vision_encoder.ln_post.weight": (1024,),
        "vision_encoder.proj": (1024, 768),
        "text_encoder.token_embedding.weight": (49408, 768),
        "text_encoder.positional_embedding": (32, 768),
        "text_encoder.transformer.resblocks.11.attn.in_proj_bias": (2304,),
        "text_encoder.transformer.resblocks.11.ln_1.weight": (768,),
        "text_encoder.ln_final.bias": (768,),
        "text_encoder.text_projection": (768, 768),
    }
    assert {k: shapes.get(k) for k in expected} == expected
    assert not any("resblocks.24." in k or "text_encoder.transformer.resblocks.12." in k for k in shapes)
    assert not any("mask" in k for k in shapes)  # the causal mask is not stored
    # 24 blocks x 12 tensors + 8 vision tensors, 12 x 12 + 6 text tensors, temp
    assert len(shapes) == 24 * 12 + 8 + 12 * 12 + 6 + 1
    assert config_from_state_dict(net.state_dict()) == ViCLIPConfig()
    with torch.device("meta"):  # shapes flow through both towers without allocating
        assert net.encode_video(torch.empty(2, 8, 3, 224, 224)).shape == (2, 768)
        assert net.encode_text(torch.zeros(3, 32, dtype=torch.long)).shape == (3, 768)


@pytest.mark.slow  # builds and loads a (tiny) network
def test_loader_is_strict_and_equals_the_saved_net(weights):
    import torch

    saved = save_tiny(weights)
    net = load_viclip(device="cpu")
    assert net.config == TINY and not net.training
    for key, value in saved.state_dict().items():
        torch.testing.assert_close(net.state_dict()[key], value)
    frames = np.random.default_rng(0).integers(0, 256, (8, 40, 48, 3), dtype=np.uint8)
    with torch.no_grad():
        want = saved.encode_video(preprocess_frames(frames, 32)[None]).double().numpy()[0]
    np.testing.assert_allclose(viclip_video_embedding(net, frames), want, rtol=1e-5, atol=1e-6)
    assert load_viclip(device="cpu") is net  # cached per file and device


@pytest.mark.slow
def test_wrong_key_and_missing_file_errors(weights):
    save_tiny(weights, nest=False, rename=("vision_encoder.ln_post.weight", "vision_encoder.ln_out.weight"))
    wrong = (rf"{FILE} does not match robojudge's ViCLIP: 1 missing keys \(first: vision_encoder\.ln_post\."
             r"weight\), 1 unexpected keys \(first: vision_encoder\.ln_out")
    with pytest.raises(ValueError, match=wrong):
        load_viclip(device="cpu")
    save_tiny(weights, rename=("vision_encoder.proj", "vision_encoder.projection"))
    clear()
    # the loader's reason, inside the message that names the weights and how to replace them
    lacks = (rf"weights 'viclip_l14_internvid', but .*{FILE} is unreadable: .*{FILE} is not a ViCLIP "
             rf"checkpoint: it lacks vision_encoder\.proj\)\. Replace them with `robojudge weights fetch "
             r"viclip_l14_internvid`")
    with pytest.raises(ValueError, match=lacks):
        load_viclip(device="cpu")
    (weights / VICLIP_L14_INTERNVID.name / FILE).unlink()
    with pytest.raises(MissingWeightsError, match=f"'cc_semantics' needs.*viclip_l14_internvid.*{FILE}"):
        load_viclip(metric="cc_semantics", device="cpu")


def _block_ref(x, p, prefix, heads, causal):
    """One residual block of ViCLIP on (L, D) tokens, with attention written out by hand."""
    import torch

    def ln(v, name):
        return torch.nn.functional.layer_norm(v, v.shape[-1:], p[f"{name}.weight"], p[f"{name}.bias"])

    h = ln(x, f"{prefix}.ln_1")
    q, k, v = (h @ p[f"{prefix}.attn.in_proj_weight"].T + p[f"{prefix}.attn.in_proj_bias"]).chunk(3, -1)
    n, d = x.shape[0], x.shape[1] // heads
    q, k, v = (t.reshape(n, heads, d).transpose(0, 1) for t in (q, k, v))
    logits = q @ k.transpose(1, 2) / d**0.5
    if causal:
        logits = logits.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    att = (logits.softmax(-1) @ v).transpose(0, 1).reshape(n, -1)
    x = x + att @ p[f"{prefix}.attn.out_proj.weight"].T + p[f"{prefix}.attn.out_proj.bias"]
    m = ln(x, f"{prefix}.ln_2") @ p[f"{prefix}.mlp.c_fc.weight"].T + p[f"{prefix}.mlp.c_fc.bias"]
    m = m * torch.sigmoid(1.702 * m)
    return x + m @ p[f"{prefix}.mlp.c_proj.weight"].T + p[f"{prefix}.mlp.c_proj.bias"]


@pytest.mark.slow
def test_towers_equal_a_hand_written_forward():
    import torch

    from robojudge.models._viclip_net import ViCLIP

    torch.manual_seed(1)
    net = ViCLIP(TINY).eval()
    p = {k: v.double() for k, v in net.state_dict().items()}
    net = net.double()
    frames = np.random.default_rng(1).integers(0, 256, (8, 32, 32, 3), dtype=np.uint8)
    x = preprocess_frames(frames, 32).double()  # (T, 3, 32, 32)
    # Each frame: 4 x 4 patches of 8 px, flattened row by row; a token per (patch, frame), patch-major.
    pe, te = p["vision_encoder.positional_embedding"], p["vision_encoder.temporal_positional_embedding"][0]
    w = p["vision_encoder.conv1.weight"][:, :, 0]  # (C, 3, 8, 8)
    patches = torch.einsum("tchpwq,dcpq->thwd", x.reshape(8, 3, 4, 8, 4, 8), w).reshape(8, 16, -1)
    tokens = [patches[t, n] + pe[1 + n] + te[t] for n in range(16) for t in range(8)]
    seq = torch.stack([p["vision_encoder.class_embedding"] + pe[0], *tokens])
    ln = torch.nn.functional.layer_norm
    seq = ln(seq, (128,), p["vision_encoder.ln_pre.weight"], p["vision_encoder.ln_pre.bias"])
    for i in range(2):
        seq = _block_ref(seq, p, f"vision_encoder.transformer.resblocks.{i}", heads=2, causal=False)
    want = ln(seq[0], (128,), p["vision_encoder.ln_post.weight"], p["vision_encoder.ln_post.bias"])
    want = want @ p["vision_encoder.proj"]
    got = viclip_video_embedding(net, frames)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-9, atol=1e-10)
    # the frame order matters (frame positions), so the class token does see time
    assert cosine(viclip_video_embedding(net, frames[::-1].copy()), got) < 1 - 1e-6

    ids = torch.from_numpy(tokenize(["move the gripper left"], 32))[0]
    end = int(ids.argmax())
    seq = p["text_encoder.token_embedding.weight"][ids] + p["text_encoder.positional_embedding"]
    for i in range(2):
        seq = _block_ref(seq, p, f"text_encoder.transformer.resblocks.{i}", heads=1, causal=True)
    seq = ln(seq, (64,), p["text_encoder.ln_final.weight"], p["text_encoder.ln_final.bias"])
    want_text = seq[end] @ p["text_encoder.text_projection"]
    got_text = viclip_text_embedding(net, ["move the gripper left"])[0]
    np.testing.assert_allclose(got_text, want_text.numpy(), rtol=1e-9, atol=1e-10)
