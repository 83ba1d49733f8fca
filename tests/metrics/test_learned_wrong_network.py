"""A weights folder that holds another network is refused, not loaded as a random one.

transformers builds the asked class from a folder of another network, initialising every weight it
does not find at random, and only prints a report: an audit put DINO files where CLIP was expected and
stored clip_frame_consistency 0.99999 (random features agree with themselves), and a DINOv2 folder
where DINO ViT-B/16 was expected was loaded whole by AutoModel.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from _learned_hf_nets import save_tiny_clip, save_tiny_dinov2, save_tiny_vit

from robojudge.metrics import get_metric
from robojudge.models import UnusableWeightsError, clear, load_clip, load_vit, load_vjepa2
from robojudge.suite import Item
from robojudge.video import write_video


@pytest.fixture
def weights(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "w"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    clear()
    yield tmp_path / "w"
    clear()


def test_a_folder_of_another_network_is_refused_naming_it(weights, tmp_path):
    save_tiny_vit(weights / "clip_vit_b32")  # DINO files in the CLIP slot
    with pytest.raises(UnusableWeightsError, match="holds a 'vit' network .*not 'clip'"):
        load_clip("clip_vit_b32")
    save_tiny_dinov2(weights / "dino_vit_b16")  # DINOv2 where DINO ViT-B/16 is expected
    with pytest.raises(UnusableWeightsError, match="holds a 'dinov2' network .*not 'vit'"):
        load_vit("dino_vit_b16")
    save_tiny_clip(weights / "vjepa2_vitg_ssv2")
    with pytest.raises(UnusableWeightsError, match="not 'vjepa2'"):
        load_vjepa2("vjepa2_vitg_ssv2")
    # through the runner: an error row naming the weights, no score
    frames = np.random.default_rng(0).integers(0, 255, (10, 48, 64, 3), dtype=np.uint8)
    video = write_video(tmp_path / "v", frames, fps=8)
    score = get_metric("clip_frame_consistency")
    with pytest.raises(UnusableWeightsError, match="clip_vit_b32"):
        score.compute(Item(item_id="a", video=str(video)))


def test_a_folder_missing_weights_of_the_network_is_refused(weights):
    # the right model_type, but weights of the network absent from the files: random layers
    folder = save_tiny_clip(weights / "clip_vit_b32")
    from safetensors.torch import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    dropped = next(k for k in tensors if "vision_model" in k)
    save_file({k: v for k, v in tensors.items() if k != dropped}, folder / "model.safetensors",
              metadata={"format": "pt"})
    with pytest.raises(UnusableWeightsError, match="1 of the network's weights are not in the files"):
        load_clip("clip_vit_b32")
    shutil.rmtree(folder)
    save_tiny_clip(weights / "clip_vit_b32")
    clear()
    assert load_clip("clip_vit_b32").model is not None  # the real thing loads

