"""SFT batches tell the processor the rate of the frames shown, as the ``hf`` judge does.

The collator passed the frames alone, so Qwen2.5-VL's processor took its default rate (24 fps in
transformers 5) and the model placed every clip's video tokens in time by it: a clip judged at 2 fps
was trained with the temporal position ids of one at 24 fps, unlike the judge's own inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torchvision", reason="the Qwen2-VL video processor needs torchvision")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from _tiny_vlm import build_tiny_qwen25vl  # noqa: E402
from robojudge.train import write_frames  # noqa: E402
from robojudge.train._collate import JudgeSFTCollator  # noqa: E402


@pytest.fixture(scope="module")
def qwen25(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    from transformers import AutoModelForImageTextToText, AutoProcessor

    folder = build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny25"))
    return AutoProcessor.from_pretrained(folder), AutoModelForImageTextToText.from_pretrained(folder).eval()


def _record(frames: list[str], fps: float | None) -> dict[str, Any]:
    user = [{"type": "text", "text": "rate it"}, {"type": "video", "video": frames}]
    rec: dict[str, Any] = {"id": "c1:pa", "prompt": [{"role": "user", "content": user}],
                           "completion": [{"role": "assistant", "content": [{"type": "text", "text": "3"}]}]}
    if fps is not None:
        rec["fps"] = fps
    return rec


def _video_times(model: Any, batch: dict[str, Any], row: int) -> list[int]:
    """The temporal position ids the model gives the video tokens of ``row``, one per temporal patch."""
    positions, _ = model.model.get_rope_index(
        batch["input_ids"], mm_token_type_ids=batch["mm_token_type_ids"],
        video_grid_thw=batch["video_grid_thw"], second_per_grid_ts=batch["second_per_grid_ts"],
        attention_mask=batch["attention_mask"])
    video = batch["mm_token_type_ids"][row] == 2
    return sorted(set(positions[0, row][video].tolist()))


def test_the_frames_rate_places_the_video_in_time(qwen25: tuple[Any, Any], tmp_path: Path) -> None:
    processor, model = qwen25
    rng = np.random.default_rng(0)
    paths = [str(p) for p in write_frames(rng.integers(0, 255, (8, 28, 28, 3), dtype=np.uint8), tmp_path)]
    collate = JudgeSFTCollator(processor)
    slow, fast = collate([_record(paths, 2.0)]), collate([_record(paths, 8.0)])
    assert torch.equal(slow["pixel_values_videos"], fast["pixel_values_videos"])  # the same frames
    # temporal patch 2: a patch spans 1 s at 2 fps, 0.25 s at 8 fps (24 fps, 0.083 s, whatever the rate)
    assert slow["second_per_grid_ts"].tolist() == pytest.approx([1.0])
    assert fast["second_per_grid_ts"].tolist() == pytest.approx([0.25])
    # 4 tokens per second of video: the 4 patches start 4 positions apart at 2 fps, 1 apart at 8 fps
    start = _video_times(model, slow, 0)[0]
    assert _video_times(model, slow, 0) == [start, start + 4, start + 8, start + 12]
    assert _video_times(model, fast, 0) == [start, start + 1, start + 2, start + 3]
    # one batch of both: each video keeps its own rate
    both = collate([_record(paths, 2.0), _record(paths, 8.0)])
    assert both["second_per_grid_ts"].tolist() == pytest.approx([1.0, 0.25])
    assert _video_times(model, both, 0) == _video_times(model, slow, 0)
    assert _video_times(model, both, 1) == _video_times(model, fast, 0)
    with pytest.raises(ValueError, match="record 'c1:pa': field fps: None is not the frames' rate"):
        collate([_record(paths, None)])


def test_sft_refuses_an_export_without_the_frames_rate(labelled_suite: Path, tmp_path: Path) -> None:
    import json

    from robojudge.judges import FrameSpec
    from robojudge.train import export_training_data
    from robojudge.train._trl import TrainingError, load_records, train_sft

    data = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], data, frames=FrameSpec(max_frames=4))
    assert all(r["fps"] > 0 for r in load_records(data))
    train = data / "train.jsonl"
    records = [json.loads(line) for line in train.read_text().splitlines()]
    first = records[0]["id"]
    train.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "fps"}) + "\n" for r in records))
    with pytest.raises(TrainingError, match=f"train.jsonl, record '{first}': field fps is missing"):
        train_sft("no-model-needed", data, tmp_path / "out", device="cpu")  # told before any model loads
    train.write_text(json.dumps({**records[0], "fps": "fast"}) + "\n")
    with pytest.raises(TrainingError, match="line 1, record .*: field fps: 'fast' is not a frame rate"):
        load_records(data)
