"""aq_clip_iqa end to end on a tiny random CLIP saved as OpenAI's RN50.pt in a temporary weights folder.

The value is compared with CLIP-IQA run by hand on the same network, frame by frame. Nothing reaches
the network.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))  # the tiny-CLIP helpers

from robojudge.metrics import METRICS  # noqa: E402
from robojudge.metrics.learned.hf_consistency import FrameSampling  # noqa: E402
from robojudge.models import _clipiqa as cq  # noqa: E402
from robojudge.run._score import MetricRequest, compute_metric  # noqa: E402
from robojudge.suite import Item  # noqa: E402
from robojudge.video import write_video  # noqa: E402

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module")
def tv_clipiqa():
    """The metric module, as the metric registry imports it."""
    METRICS.load()
    return importlib.import_module("robojudge.metrics.learned.tv_clipiqa")


def _item(tmp_path, frames) -> Item:
    write_video(tmp_path / "v", frames, fps=8)  # PNG folder: lossless, so the metric sees these pixels
    return Item(item_id="v", video=str(tmp_path / "v"))


def test_registered_from_the_taxonomy_with_its_weights(tv_clipiqa):
    from robojudge.metrics import get_metric

    spec = get_metric("aq_clip_iqa")
    assert spec.fn is tv_clipiqa.aq_clip_iqa and spec.provider.value == "model"
    assert spec.higher_is_better and spec.native_range == (0.0, 1.0) and spec.weights == ("clip_rn50_openai",)
    assert spec.taxonomy is not None and (spec.taxonomy.subdim, spec.taxonomy.level) == ("AQ", 1)
    assert "App. B.1.2" in spec.citation and "pyiqa" in spec.description


def test_missing_rn50_is_an_error_row_naming_metric_and_file(weights, tmp_path):
    row = compute_metric(_item(tmp_path, RNG.integers(0, 256, (2, 16, 16, 3), dtype=np.uint8)),
                         MetricRequest.build("aq_clip_iqa"))
    assert row.status == "error" and "metric 'aq_clip_iqa' needs" in row.error
    assert str(weights / "clip_rn50_openai" / "RN50.pt") in row.error


@pytest.mark.slow  # imports pyiqa and traces a tiny CLIP
def test_value_is_the_mean_of_per_frame_clipiqa(tv_clipiqa, weights, tmp_path, monkeypatch):
    import torch
    from _clipiqa_nets import forbid_downloads, save_tiny_rn50

    save_tiny_rn50(weights)
    forbid_downloads(monkeypatch)
    # Three flat frames (dark, mid, bright) and two noisy ones, 40x56: native size goes in unresized.
    flat = np.stack([np.full((40, 56, 3), v, np.uint8) for v in (10, 128, 250)])
    frames = np.concatenate([flat, RNG.integers(0, 256, (2, 40, 56, 3), dtype=np.uint8)])
    item = _item(tmp_path, frames)
    row = compute_metric(item, MetricRequest.build("aq_clip_iqa", {"batch_size": 2}))  # batches 2, 2, 1

    net = cq.load_clipiqa(device="cpu")
    with torch.inference_mode():  # one frame at a time, straight into pyiqa's CLIPIQA
        per_frame = [float(net(torch.from_numpy(f).permute(2, 0, 1)[None].float() / 255)) for f in frames]
    assert row.status == "ok", row.error
    assert row.value == pytest.approx(float(np.mean(per_frame)), abs=1e-6)
    assert min(per_frame) >= 0.0 and max(per_frame) <= 1.0 and len(set(per_frame)) == 5
    score = tv_clipiqa.aq_clip_iqa(item, FrameSampling(batch_size=32))
    assert score.details == {"frames": 5, "min_frame": pytest.approx(min(per_frame), abs=1e-6)}
    assert score.value == pytest.approx(row.value, abs=1e-6)  # batch size does not change the value
