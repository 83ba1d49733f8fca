"""aq_laion_ap: the LAION linear head maths by hand, and the registered metric on a tiny random CLIP.

The CLIP is built from a config (projection_dim 16, 32-pixel images) and saved with
``save_pretrained``; the head is a ``(1, 16)`` state dict saved with ``torch.save``. The hub is offline.
"""

import numpy as np
import pytest
from _learned_hf_nets import save_tiny_clip

from robojudge.metrics import get_metric
from robojudge.metrics.learned.hf_aesthetic import aesthetic_ratings, linear_head, load_linear_head
from robojudge.models import MissingWeightsError, clear, clip_image_features, load_clip
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

HEAD_FILE = "sa_0_4_vit_l_14_linear.pth"


def test_ratings_by_hand():
    # unit rows: (3, 4)/5 = (0.6, 0.8); (0, 2)/2 = (0, 1). With w = (10, 20), b = 1:
    # 0.6*10 + 0.8*20 + 1 = 23; 0*10 + 1*20 + 1 = 21.
    got = aesthetic_ratings(np.array([[3.0, 4.0], [0.0, 2.0]]), np.array([10.0, 20.0]), 1.0)
    np.testing.assert_allclose(got, [23.0, 21.0])
    with pytest.raises(ValueError, match="expects 3-d embeddings, CLIP gives 2"):
        aesthetic_ratings(np.ones((2, 2)), np.ones(3), 0.0)


def test_linear_head_is_built_here_and_loaded_without_pickled_code(tmp_path):
    import torch

    state = {"weight": torch.tensor([[1.0, -2.0, 0.5]]), "bias": torch.tensor([0.25])}
    path = tmp_path / HEAD_FILE
    torch.save(state, path)
    head = load_linear_head(path)
    x = torch.tensor([[2.0, 1.0, 4.0]])
    # 1*2 - 2*1 + 0.5*4 + 0.25 = 2.25
    assert head(x).item() == pytest.approx(2.25)
    with pytest.raises(ValueError, match=r"h\.pth: expected a linear head"):
        linear_head({"weight": torch.ones(2, 3), "bias": torch.ones(2)}, "h.pth")
    torch.save(torch.nn.Linear(3, 1), tmp_path / "module.pth")  # a pickled module, not a state dict
    with pytest.raises(Exception, match="(?i)weights.only|unpickl|global"):
        load_linear_head(tmp_path / "module.pth")


def _weights(root, weight, bias):
    import torch

    save_tiny_clip(root / "clip_vit_l14")
    (root / "laion_aesthetic_linear_l14").mkdir(parents=True)
    state = {"weight": torch.tensor([weight], dtype=torch.float32),
             "bias": torch.tensor([bias], dtype=torch.float32)}
    torch.save(state, root / "laion_aesthetic_linear_l14" / HEAD_FILE)
    return root


@pytest.fixture
def video(tmp_path):
    rng = np.random.default_rng(0)
    return str(write_video(tmp_path / "v", rng.integers(0, 255, (6, 40, 48, 3), dtype=np.uint8), fps=8))


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clear()
    yield monkeypatch
    clear()


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_constant_head_gives_bias_over_ten(tmp_path, video, offline):
    offline.setenv("ROBOJUDGE_WEIGHTS", str(_weights(tmp_path / "w", [0.0] * 16, 7.0)))
    score = get_metric("aq_laion_ap").compute(Item(item_id="a", video=video))
    assert score.value == pytest.approx(0.7, abs=1e-6)  # rating 7 on every frame, / 10
    assert score.details["frames"] == 6 and score.details["rating_mean"] == pytest.approx(7.0, abs=1e-5)


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_a_head_copied_in_with_the_same_size_and_time_is_read_anew(tmp_path, video, offline):
    import os
    import shutil
    import time

    import torch

    root = _weights(tmp_path / "w", [0.0] * 16, 7.0)
    head, other = root / "laion_aesthetic_linear_l14" / HEAD_FILE, tmp_path / "other" / HEAD_FILE
    other.parent.mkdir()  # (the same file name: torch.save writes it into the archive)
    torch.save({"weight": torch.zeros(1, 16), "bias": torch.tensor([3.0])}, other)
    for p in (head, other):
        os.utime(p, ns=(1_700_000_000_000_000_000,) * 2)  # an archive's normalised time
    assert head.stat().st_size == other.stat().st_size
    offline.setenv("ROBOJUDGE_WEIGHTS", str(root))
    metric = get_metric("aq_laion_ap")
    assert metric.compute(Item(item_id="a", video=video)).value == pytest.approx(0.7, abs=1e-6)
    time.sleep(0.05)  # past the kernel's coarse clock tick, so the copy's change time differs
    shutil.copy2(other, head)  # cp -p: another head, in place, with the same size and time
    # Before: the head was cached by (path, mtime) only, and the first head's bias 7 was used again.
    assert metric.compute(Item(item_id="a", video=video)).value == pytest.approx(0.3, abs=1e-6)


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_registered_metric_is_the_formula_on_clip_features(tmp_path, video, offline):
    w = np.random.default_rng(1).normal(size=16)
    offline.setenv("ROBOJUDGE_WEIGHTS", str(_weights(tmp_path / "w", w.tolist(), 5.0)))
    score = get_metric("aq_laion_ap").compute(Item(item_id="a", video=video))
    frames = sample_frames(video, fps=8.0, max_frames=None).frames
    emb = clip_image_features(load_clip("clip_vit_l14"), frames)
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    want = np.mean((unit @ w.astype(np.float32) + 5.0) / 10.0)
    assert score.value == pytest.approx(want, abs=1e-5)
    assert len(set(np.round(unit @ w, 6))) > 1  # frames differ, so the mean is not a single frame's value


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_missing_head_names_metric_and_file(tmp_path, video, offline):
    root = tmp_path / "w"
    save_tiny_clip(root / "clip_vit_l14")
    offline.setenv("ROBOJUDGE_WEIGHTS", str(root))
    with pytest.raises(MissingWeightsError, match=f"aq_laion_ap.*laion_aesthetic_linear_l14.*{HEAD_FILE}"):
        get_metric("aq_laion_ap").compute(Item(item_id="a", video=video))
    offline.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "empty"))
    with pytest.raises(MissingWeightsError, match="aq_laion_ap.*clip_vit_l14"):
        get_metric("aq_laion_ap").compute(Item(item_id="a", video=video))


# --- aq_clip_ap: the CLIP+MLP aesthetic predictor -------------------------------------------------

MLP_FILE = "sac+logos+ava1-l14-linearMSE.pth"
TINY_MLP = ((16, 12), (12, 8), (8, 6), (6, 4), (4, 1))  # the published layout with small widths


def _mlp_state(dims=TINY_MLP, seed=0):
    import torch

    gen = torch.Generator().manual_seed(seed)
    state = {}
    for idx, (d_in, d_out) in zip((0, 2, 4, 6, 7), dims, strict=True):
        state[f"layers.{idx}.weight"] = torch.randn(d_out, d_in, generator=gen)
        state[f"layers.{idx}.bias"] = torch.randn(d_out, generator=gen)
    return state


def test_published_layout_has_dropouts_between_and_loads_strictly():
    import torch

    from robojudge.metrics.learned.hf_aesthetic import MLP_LAYERS, mlp_head

    net = mlp_head(_mlp_state(), dims=TINY_MLP)
    kinds = [type(m).__name__ for m in net.layers]
    assert kinds == ["Linear", "Dropout", "Linear", "Dropout", "Linear", "Dropout", "Linear", "Linear"]
    assert [m.p for m in net.layers if isinstance(m, torch.nn.Dropout)] == [0.2, 0.2, 0.1]
    assert MLP_LAYERS[0] == (768, 1024) and MLP_LAYERS[-1] == (16, 1)
    bad = _mlp_state()
    bad["layers.1.weight"] = bad.pop("layers.0.weight")  # a file with another layout
    with pytest.raises(ValueError, match=r"m\.pth: not a CLIP\+MLP.*missing \['layers\.0\.weight'\]"
                                         r".*unexpected \['layers\.1\.weight'\]"):
        mlp_head(bad, "m.pth", dims=TINY_MLP)
    with pytest.raises(ValueError, match="wrong shape"):
        mlp_head(_mlp_state(), dims=((16, 13), (13, 8), (8, 6), (6, 4), (4, 1)))


def test_folded_mlp_equals_the_module_and_a_hand_example():
    import torch

    from robojudge.metrics.learned.hf_aesthetic import fold_mlp, mlp_head

    net = mlp_head(_mlp_state(seed=3), dims=TINY_MLP).double()
    x = torch.randn(5, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    w, b = fold_mlp(net)
    with torch.no_grad():
        want = net.layers(x).reshape(-1).numpy()
    np.testing.assert_allclose(x.numpy() @ w + b, want, rtol=1e-10, atol=1e-10)
    # Hand example with scalar layers 2, 3, 0.5, -1, 4 and biases 1, 0, 1, 2, -3 on x = 1:
    # 2*1+1 = 3; 3*3+0 = 9; 0.5*9+1 = 5.5; -1*5.5+2 = -3.5; 4*(-3.5)-3 = -17; folded w = 2*3*0.5*-1*4 = -12.
    one = ((1, 1),) * 5
    state = {}
    for idx, (wv, bv) in zip((0, 2, 4, 6, 7), ((2, 1), (3, 0), (0.5, 1), (-1, 2), (4, -3)), strict=True):
        state[f"layers.{idx}.weight"] = torch.tensor([[float(wv)]])
        state[f"layers.{idx}.bias"] = torch.tensor([float(bv)])
    w1, b1 = fold_mlp(mlp_head(state, dims=one))
    assert w1.tolist() == [-12.0] and w1[0] * 1 + b1 == pytest.approx(-17.0)


def _mlp_weights(root, seed=0):
    import torch

    save_tiny_clip(root / "clip_vit_l14")
    (root / "clip_mlp_aesthetic_l14").mkdir(parents=True)
    # A tiny CLIP gives 16-d embeddings, so the saved head is the published layout at small widths.
    torch.save(_mlp_state(seed=seed), root / "clip_mlp_aesthetic_l14" / MLP_FILE)
    return root


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_registered_clip_ap_is_the_mlp_on_unit_clip_features(tmp_path, video, offline, monkeypatch):
    import torch

    from robojudge.metrics.learned import hf_aesthetic

    real = hf_aesthetic.mlp_head
    monkeypatch.setattr(hf_aesthetic, "mlp_head", lambda state, path="head": real(state, path, dims=TINY_MLP))
    hf_aesthetic._mlp_arrays.cache_clear()
    offline.setenv("ROBOJUDGE_WEIGHTS", str(_mlp_weights(tmp_path / "w", seed=5)))
    score = get_metric("aq_clip_ap").compute(Item(item_id="a", video=video))
    frames = sample_frames(video, fps=8.0, max_frames=None).frames
    emb = clip_image_features(load_clip("clip_vit_l14"), frames)
    unit = torch.as_tensor(emb / np.linalg.norm(emb, axis=1, keepdims=True), dtype=torch.float64)
    net = real(_mlp_state(seed=5), dims=TINY_MLP).double()
    with torch.no_grad():
        per_frame = net.layers(unit).reshape(-1).numpy()
    assert score.value == pytest.approx(per_frame.mean(), abs=1e-4)  # on the rating scale, not / 10
    assert score.details["frames"] == 6
    assert score.details["min_frame"] == pytest.approx(per_frame.min(), abs=1e-4)
    assert np.ptp(per_frame) > 1e-3  # frames differ, so the mean is not a single frame's value
    hf_aesthetic._mlp_arrays.cache_clear()


@pytest.mark.slow  # transformers import
def test_clip_ap_missing_head_names_metric_and_file(tmp_path, video, offline):
    root = tmp_path / "w"
    save_tiny_clip(root / "clip_vit_l14")
    offline.setenv("ROBOJUDGE_WEIGHTS", str(root))
    with pytest.raises(MissingWeightsError, match=r"aq_clip_ap.*clip_mlp_aesthetic_l14.*sac\+logos"):
        get_metric("aq_clip_ap").compute(Item(item_id="a", video=video))
