"""cc_semantics: the registered metric on a tiny random ViCLIP saved in $ROBOJUDGE_WEIGHTS (hub offline).

The value must be the cosine of the video and text embeddings computed by hand from the embedding
functions, on the 8 frames VBench's "middle" rule picks.
"""

import numpy as np
import pytest

from robojudge.metrics import MetricInputError, get_metric
from robojudge.models import (
    VICLIP_L14_INTERNVID,
    ViCLIPConfig,
    clear,
    load_viclip,
    viclip_text_embedding,
    viclip_video_embedding,
)
from robojudge.run import MetricRequest, compute_metric
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video

TINY = ViCLIPConfig(input_resolution=32, patch_size=8, vision_width=64, vision_layers=1, num_frames=8,
                    embed_dim=16, text_width=64, text_layers=1)
TASK = "put the red block on the green plate"


@pytest.fixture
def weights(tmp_path, monkeypatch):
    """$ROBOJUDGE_WEIGHTS with a random tiny ViCLIP under the published file name."""
    import huggingface_hub.constants
    import torch

    from robojudge.models._viclip_net import ViCLIP

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    root = tmp_path / "weights"
    folder = root / VICLIP_L14_INTERNVID.name
    folder.mkdir(parents=True)
    torch.manual_seed(3)
    torch.save({"model": ViCLIP(TINY).state_dict()}, folder / VICLIP_L14_INTERNVID.filename)
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(root))
    clear()
    yield root
    clear()


def _video(path, frames):
    return str(write_video(path, frames, fps=8))


@pytest.fixture
def clip12(tmp_path):
    rng = np.random.default_rng(5)
    return _video(tmp_path / "v12", rng.integers(0, 256, (12, 40, 48, 3), dtype=np.uint8))


@pytest.mark.slow  # a (tiny) network forward pass
def test_metric_is_the_cosine_of_the_embeddings(weights, clip12):
    score = get_metric("cc_semantics").compute(Item(item_id="a", video=clip12, instruction=TASK))
    net = load_viclip(device="cpu")
    frames = sample_frames(clip12, fps=None, max_frames=None).frames
    # 12 frames: the middles of spans (0,0) (1,2) (3,3) (4,5) (6,6) (7,8) (9,9) (10,11)
    v = viclip_video_embedding(net, frames[[0, 1, 3, 4, 6, 7, 9, 10]])
    t = viclip_text_embedding(net, [TASK])[0]
    want = float(v @ t / np.linalg.norm(v) / np.linalg.norm(t))
    assert score.value == pytest.approx(want, abs=1e-9)
    assert score.details == {"indices": [0, 1, 3, 4, 6, 7, 9, 10], "distinct_frames": 8}
    # another instruction gives another value, so the text is really compared
    other = get_metric("cc_semantics").compute(Item(item_id="a", video=clip12, instruction="open the drawer"))
    assert other.value != pytest.approx(score.value, abs=1e-6)


@pytest.mark.slow
def test_invariants(weights, tmp_path):
    rng = np.random.default_rng(6)
    frames = rng.integers(0, 256, (8, 32, 40, 3), dtype=np.uint8)
    eight = _video(tmp_path / "v8", frames)
    # Each frame twice: the middle rule on 16 frames takes frames 0, 2, ..., 14, i.e. the original 8.
    doubled = _video(tmp_path / "v16", np.repeat(frames, 2, axis=0))
    m = get_metric("cc_semantics")
    a = m.compute(Item(item_id="a", video=eight, instruction=TASK)).value
    assert m.compute(Item(item_id="b", video=doubled, instruction=TASK)).value == pytest.approx(a, abs=1e-9)
    # CLIP's tokenizer lower-cases and collapses whitespace
    loud = "  PUT the red block\ton the GREEN plate "
    assert m.compute(Item(item_id="c", video=eight, instruction=loud)).value == pytest.approx(a, abs=1e-9)
    assert -1.0 <= a <= 1.0


def test_item_without_instruction_is_named(tmp_path):
    video = _video(tmp_path / "v", np.zeros((2, 16, 16, 3), dtype=np.uint8))
    with pytest.raises(MetricInputError, match="item 'no-task' has no instruction"):
        get_metric("cc_semantics").compute(Item(item_id="no-task", video=video, instruction="  "))


def test_missing_weights_give_an_error_row(tmp_path, monkeypatch, clip12):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "empty"))
    item = Item(item_id="a", video=clip12, instruction=TASK)
    row = compute_metric(item, MetricRequest.build("cc_semantics"))
    assert row.status == "error" and row.value is None
    assert "'cc_semantics' needs" in row.error and "viclip_l14_internvid" in row.error
    assert "ViClip-InternVid-10M-FLT.pth" in row.error
