"""aq_hpsv3: the registered metric end to end on a tiny random HPSv3 and a tiny synthetic video.

The network is the tiny Qwen2-VL of tests/models/_hpsv3_nets.py, saved to the ``weights`` fixture's
folder; the hub is offline and every download function of huggingface_hub raises.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))  # the tiny-HPSv3 helpers

from robojudge.metrics import MetricInputError, Provider, get_metric  # noqa: E402
from robojudge.models import MissingWeightsError  # noqa: E402
from robojudge.suite import Item  # noqa: E402
from robojudge.video import sample_frames, write_video  # noqa: E402

METRIC = "aq_hpsv3"
MODULE = "robojudge.metrics.learned.hf_hpsv3"
INSTRUCTION = "put the green block in the bowl"


hf_hpsv3, SPEC = importlib.import_module(MODULE), get_metric(METRIC)
HPSv3Sampling, aq_hpsv3 = hf_hpsv3.HPSv3Sampling, hf_hpsv3.aq_hpsv3


@pytest.fixture
def video(tmp_path):
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, (6, 40, 48, 3), dtype=np.uint8)
    return str(write_video(tmp_path / "v", frames, fps=8))


@pytest.fixture
def no_downloads(monkeypatch):
    import huggingface_hub

    def refuse(*args, **kwargs):
        raise AssertionError(f"a download was attempted: {args} {kwargs}")

    for name in ("hf_hub_download", "snapshot_download"):
        monkeypatch.setattr(huggingface_hub, name, refuse)


@pytest.fixture
def clear():
    from robojudge.models import clear as clear_networks

    clear_networks()
    yield
    clear_networks()


def test_registered_with_its_weights_and_inputs():
    spec = SPEC
    assert spec.id == METRIC and spec.fn is aq_hpsv3 and spec.provider is Provider.model
    assert spec.weights == ("qwen2_vl_7b_instruct", "hpsv3")
    assert {i.value for i in spec.inputs} == {"video", "instruction"}
    assert spec.config_type is HPSv3Sampling and spec.higher_is_better
    assert spec.taxonomy is not None and spec.taxonomy.subdim == "AQ"
    assert "App. B.1.2" in spec.citation


@pytest.mark.slow
def test_metric_is_the_mean_mu_over_evenly_spread_frames(weights, video, no_downloads, clear):
    from _hpsv3_nets import save_tiny_hpsv3

    from robojudge.models import hpsv3_rewards, load_hpsv3

    save_tiny_hpsv3(weights)
    item = Item(item_id="a", video=video, instruction=INSTRUCTION)
    config = HPSv3Sampling(max_frames=2, batch_size=2, dtype="float32")
    score = SPEC.compute(item, config)
    # the same two frames (first and last of six) scored directly, one at a time
    sampled = sample_frames(video, fps=None, max_frames=2)
    assert list(sampled.indices) == [0, 5]
    net = load_hpsv3(device="cpu", dtype="float32")
    rewards = np.concatenate([hpsv3_rewards(net, [f], [INSTRUCTION]) for f in sampled.frames])
    assert score.value == pytest.approx(rewards[:, 0].mean(), abs=1e-5)
    assert score.details["frames"] == 2
    assert score.details["sigma_mean"] == pytest.approx(rewards[:, 1].mean(), abs=1e-5)
    assert score.details["min_frame"] == pytest.approx(rewards[:, 0].min(), abs=1e-5)
    assert score.details["max_frame"] == pytest.approx(rewards[:, 0].max(), abs=1e-5)


def test_needs_an_instruction_and_the_weights(weights, video, no_downloads, clear):
    with pytest.raises(MetricInputError, match="item 'b' has no instruction: aq_hpsv3"):
        aq_hpsv3(Item(item_id="b", video=video, instruction="  "), HPSv3Sampling())
    with pytest.raises(MissingWeightsError, match="metric 'aq_hpsv3' needs"):
        aq_hpsv3(Item(item_id="c", video=video, instruction=INSTRUCTION), HPSv3Sampling())


def test_config_rejects_unknown_settings():
    assert HPSv3Sampling().max_frames == 4 and HPSv3Sampling().dtype == "bfloat16"
    with pytest.raises(ValueError):
        HPSv3Sampling(fps=8)
    with pytest.raises(ValueError):
        HPSv3Sampling(max_frames=0)
