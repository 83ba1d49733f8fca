"""aq_laion_ap: the LAION linear head maths by hand, and the registered metric on a tiny random CLIP.

The CLIP is built from a config (projection_dim 16, 32-pixel images) and saved with
``save_pretrained``; the head is a ``(1, 16)`` state dict saved with ``torch.save``. The hub is offline.
"""

import numpy as np
import pytest
from _learned_hf_nets import save_tiny_clip

from robojudge.metrics import get_metric
from robojudge.metrics.learned.hf_aesthetic import aesthetic_ratings, linear_head, load_linear_head
from robojudge.models import MissingWeightsError, clear_network_cache, clip_image_features, load_clip
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
    clear_network_cache()
    yield monkeypatch
    clear_network_cache()


@pytest.mark.slow  # transformers import and a CLIP forward pass
def test_constant_head_gives_bias_over_ten(tmp_path, video, offline):
    offline.setenv("ROBOJUDGE_WEIGHTS", str(_weights(tmp_path / "w", [0.0] * 16, 7.0)))
    score = get_metric("aq_laion_ap").compute(Item(item_id="a", video=video))
    assert score.value == pytest.approx(0.7, abs=1e-6)  # rating 7 on every frame, / 10
    assert score.details["frames"] == 6 and score.details["rating_mean"] == pytest.approx(7.0, abs=1e-5)


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
