"""The ``hf`` backend with a tiny randomly initialised Qwen2-VL built from a config (no hub, no weights).

Its replies are noise; the test checks the path: frames in as a video, text out, parsing, and an
unscored (NaN) row with the reason when the reply is not JSON.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

# Qwen2-VL's video processor needs torchvision; without it the processor cannot be built at all.
pytest.importorskip("torchvision", reason="the Qwen2-VL video processor needs torchvision")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from _tiny_vlm import build_tiny_qwen2vl  # noqa: E402
from robojudge.judges import get_rubric, make_judge  # noqa: E402
from robojudge.run._judge import judge_items  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-qwen2vl")
    build_tiny_qwen2vl(folder)
    return folder


def test_hf_backend_path(tiny_model: Path, make_items: Any, store: Any, cache: Any) -> None:
    j = make_judge(
        {
            "name": "tiny",
            "backend": "hf",
            "model": str(tiny_model),
            "device": "cpu",
            "dtype": "float32",
            "max_images": 4,
            "sampling": {"max_tokens": 12},
        }
    )
    summary = judge_items(
        make_items(["item0"]), j, [get_rubric("ia"), get_rubric("pa")], store, cache=cache, scoring="expected"
    )
    rows = {r.metric: r for r in store.rows()}
    assert set(rows) == {"judge:tiny:ia", "judge:tiny:pa"}
    for row in rows.values():
        # random weights write noise: never a score, always the reason and the raw text
        assert row.status == "ok" and row.value is not None and math.isnan(row.value), row
        assert row.error and row.error.startswith("unscored")
        d = row.details
        assert d is not None and len(d["turns"][0]["raw"]) == 2  # the reply and the repair reply
        assert d["turns"][0]["response"]["images"] == 4 and d["completion_tokens"] > 0
    assert summary.unscored == 2 and summary.stats.sent == 4
    json.dumps(rows["judge:tiny:ia"].details)  # details stay JSON-able


def test_hf_frames_reach_the_model_as_video(tiny_model: Path, make_items: Any) -> None:
    import asyncio

    from robojudge.judges import ChatRequest, FrameSpec, decode_frames, make_backend

    frames = decode_frames(make_items(["v"])[0].video, FrameSpec())  # 8 frames of 32x32
    assert frames.frames.shape[0] == 8
    prompt_tokens = {}
    for cap in (4, 2):
        cfg = {"name": "t", "backend": "hf", "model": str(tiny_model), "device": "cpu", "max_images": cap}
        backend = make_backend(make_judge({**cfg, "dtype": "float32"}))
        request = ChatRequest(system="s", user="rate", frames=frames, max_tokens=1)
        completion = asyncio.run(backend.complete(request))
        assert completion.meta["images"] == cap and completion.completion_tokens == 1
        prompt_tokens[cap] = completion.prompt_tokens
    # Frames are resized to 28x28 (min_pixels 28*28), 14-pixel patches, temporal patch 2, 2x2 merge:
    # 4 frames -> grid (t=2, h=2, w=2) = 8 patches / 4 = 2 video tokens; 2 frames -> (1, 2, 2) -> 1.
    # Same text, so the prompts differ by exactly one token.
    assert prompt_tokens[4] is not None and prompt_tokens[2] is not None
    assert prompt_tokens[4] - prompt_tokens[2] == 1


def test_seeded_sampling_leaves_the_callers_torch_stream_alone(tiny_model: Path, make_items: Any) -> None:
    import asyncio

    from robojudge.judges import ChatRequest, FrameSpec, decode_frames, make_backend

    frames = decode_frames(make_items(["v"])[0].video, FrameSpec())
    cfg = {"name": "t", "backend": "hf", "model": str(tiny_model), "device": "cpu", "dtype": "float32"}
    backend = make_backend(make_judge(cfg))
    request = ChatRequest(system="s", user="rate", frames=frames, max_tokens=4, temperature=1.0, seed=7)
    first = asyncio.run(backend.complete(request)).text  # (loads the model)
    torch.manual_seed(1234)
    want = torch.rand(6)
    torch.manual_seed(1234)
    head = torch.rand(3)
    again = asyncio.run(backend.complete(request)).text
    # Before: each seeded request ran torch.manual_seed(7) on the caller's global generator.
    assert torch.equal(torch.cat([head, torch.rand(3)]), want)
    assert again == first  # still seeded: the same draw each time


def test_a_model_that_cannot_load_is_tried_once_and_cuda_without_a_gpu_is_named(
        tmp_path: Path, make_items: Any, store: Any, cache: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # a hub id offline tried its download again for every item (150 s of retries each); device "cuda"
    # on a machine without a GPU loaded the model for every item, then said "generation failed"
    from robojudge.judges._hf import HFBackend

    calls: list[str] = []
    real = transformers.AutoProcessor.from_pretrained

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append(str(args[0]))
        return real(*args, **kw)

    monkeypatch.setattr(transformers.AutoProcessor, "from_pretrained", counting)
    j = make_judge({"name": "nowhere", "backend": "hf", "model": str(tmp_path / "no-such-model"),
                    "device": "cpu", "sampling": {"max_tokens": 4}})
    summary = judge_items(make_items(["a", "b", "c"]), j, [get_rubric("pa")], store, cache=cache)
    assert summary.failed == 3 and len(calls) == 1
    if torch.cuda.is_available():
        return
    gpu = {"name": "gpu", "backend": "hf", "model": str(tmp_path), "device": "cuda"}
    backend = HFBackend(make_judge(gpu))
    from robojudge.judges import BackendError

    for _ in range(2):
        with pytest.raises(BackendError, match="judge 'gpu': device = 'cuda', but no CUDA device is visible"):
            backend._load()


def test_the_processor_is_told_the_rate_the_frames_were_sampled_at(tiny_model: Path, make_items: Any) -> None:
    # Qwen2.5-VL's processor was told nothing and took 24 fps: 4 fps frames 1/24 s apart (0.0833 s a grid)
    from transformers import (
        AutoProcessor,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    from _tiny_vlm import TEMPLATE
    from robojudge.judges import ChatRequest, FrameSpec, decode_frames
    from robojudge.judges._hf import model_inputs

    size = {"shortest_edge": 28 * 28, "longest_edge": 56 * 56}
    tokenizer = AutoProcessor.from_pretrained(tiny_model).tokenizer
    qwen25 = Qwen2_5_VLProcessor(image_processor=Qwen2VLImageProcessor(size=size),
                                 video_processor=Qwen2VLVideoProcessor(size=size), tokenizer=tokenizer,
                                 chat_template=TEMPLATE)
    frames = decode_frames(make_items(["v"])[0].video, FrameSpec())  # 8 frames at 4 fps, 0 to 1.75 s
    request = ChatRequest(system="s", user="rate", frames=frames, max_tokens=1)
    inputs, shown = model_inputs(qwen25, request, 32)
    # temporal patch 2 over 4 fps: each grid step spans 0.5 s
    assert shown == 8 and inputs["second_per_grid_ts"] == pytest.approx([0.5])
    assert inputs["video_grid_thw"].tolist() == [[4, 2, 2]]  # every frame kept
    inputs, shown = model_inputs(qwen25, request, 4)
    # thinned to frames 0, 2, 5, 7: three steps over 1.75 s, 12/7 fps, so 2 / (12/7) = 7/6 s a grid step
    assert shown == 4 and inputs["second_per_grid_ts"] == pytest.approx([7 / 6])


def test_the_rate_keywords_fit_the_installed_transformers() -> None:
    import dataclasses

    from transformers.video_utils import VideoMetadata

    from robojudge.judges import video_rate
    from robojudge.judges._messages import _video_metadata

    one = video_rate([2.0], [8])
    (meta,) = one["video_metadata"]
    assert one["fps"] == 2.0 and isinstance(meta, VideoMetadata)
    assert (meta.total_num_frames, meta.fps, meta.frames_indices) == (8, 2.0, list(range(8)))
    # videos of unequal rates in one call (an SFT batch): transformers 5 checks that fps is one number,
    # and reads each video's rate from its metadata; transformers 4 reads fps, one per video
    two = video_rate([2.0, 8.0], [8, 4])
    assert [m.fps for m in two["video_metadata"]] == [2.0, 8.0]
    assert two.get("fps") == (None if int(transformers.__version__.split(".")[0]) >= 5 else [2.0, 8.0])

    # The VideoMetadata of transformers 4.52 (its fields copied here; that release is not installed to
    # run): duration and video_backend required, no frames_indices. Building it with frames_indices, as
    # the hf judge did, was a TypeError there.
    @dataclasses.dataclass
    class VideoMetadata452:
        total_num_frames: int
        fps: float
        duration: float
        video_backend: str

    old = _video_metadata(VideoMetadata452, 4.0, 8)
    assert (old.total_num_frames, old.fps, old.duration) == (8, 4.0, 2.0)
