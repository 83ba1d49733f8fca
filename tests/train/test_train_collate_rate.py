"""SFT batches and GRPO prompts tell the processor the rate of the frames shown, as the ``hf`` judge does.

The collator passed the frames alone, so Qwen2.5-VL's processor took its default rate (24 fps in
transformers 5) and the model placed every clip's video tokens in time by it: a clip judged at 2 fps
was trained with the temporal position ids of one at 24 fps, unlike the judge's own inputs. GRPO
generated from the same default and scored its loss at one second per temporal patch.
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
def tiny25(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_qwen25vl(tmp_path_factory.mktemp("tiny25"))


@pytest.fixture(scope="module")
def qwen25(tiny25: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForImageTextToText, AutoProcessor

    return AutoProcessor.from_pretrained(tiny25), AutoModelForImageTextToText.from_pretrained(tiny25).eval()


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


def test_grpo_refuses_an_export_without_the_frames_rate(labelled_suite: Path, tmp_path: Path) -> None:
    import json

    from robojudge.judges import FrameSpec
    from robojudge.train import export_training_data
    from robojudge.train._trl import TrainingError, train_grpo

    data = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], data, frames=FrameSpec(max_frames=4))
    train = data / "train.jsonl"
    records = [json.loads(line) for line in train.read_text().splitlines()]
    train.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "fps"}) + "\n" for r in records))
    first = records[0]["id"]
    with pytest.raises(TrainingError, match=f"train.jsonl, record '{first}': field fps is missing"):
        train_grpo("no-model-needed", data, tmp_path / "out", device="cpu")  # told before any model loads


@pytest.mark.slow
def test_grpo_generates_and_scores_each_video_at_its_rate(
    labelled_suite: Path, tiny25: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each prompt's video reaches the model with the seconds per temporal patch its record's rate gives,
    in generation and in the loss alike (before: 1/12 s in generation, whatever the rate; none in the
    loss, which Qwen2.5-VL takes as 1 s)."""
    import json

    pytest.importorskip("trl")
    pytest.importorskip("datasets")
    from transformers import AutoProcessor
    from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl

    from robojudge.judges import FrameSpec
    from robojudge.train import export_training_data
    from robojudge.train._trl import GRPOSettings, load_records, train_grpo

    data = tmp_path / "data"
    export_training_data(labelled_suite, ["pa"], data, frames=FrameSpec(max_frames=4))
    train = data / "train.jsonl"
    records = [json.loads(line) for line in train.read_text().splitlines()]
    for i, rec in enumerate(records):  # two rates, so that each prompt must get its own
        rec["fps"] = 2.0 if i % 2 else 8.0
    train.write_text("".join(json.dumps(r) + "\n" for r in records))
    processor = AutoProcessor.from_pretrained(tiny25)
    expected = {}  # a video's pixel sum -> its seconds per temporal patch (2 frames a patch)
    for rec in load_records(data):
        fields = processor.apply_chat_template([rec["prompt"]], add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt")
        expected[round(float(fields["pixel_values_videos"].double().sum()), 3)] = 2 / rec["fps"]
    assert len(expected) == len(records)  # the videos differ

    seen: list[tuple[str, float, float | None]] = []  # (where, a video's pixel sum, its seconds per patch)

    def note(where: str, given: dict[str, Any]) -> None:
        pixels, grid, seconds = (given.get(k) for k in ("pixel_values_videos", "video_grid_thw",
                                                          "second_per_grid_ts"))
        if pixels is not None:
            for i, part in enumerate(pixels.split([int(n) for n in grid.prod(dim=-1).tolist()])):
                seen.append((where, round(float(part.double().sum()), 3),
                             None if seconds is None else float(seconds[i])))

    generate = modeling_qwen2_5_vl.Qwen2_5_VLForConditionalGeneration.generate
    forward = modeling_qwen2_5_vl.Qwen2_5_VLModel.forward

    def generating(self: Any, *args: Any, **kwargs: Any) -> Any:
        note("generation", kwargs)
        return generate(self, *args, **kwargs)

    def forwarding(self: Any, *args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled():  # the loss's forward pass (generation runs without gradients)
            note("loss", kwargs)
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(modeling_qwen2_5_vl.Qwen2_5_VLForConditionalGeneration, "generate", generating)
    monkeypatch.setattr(modeling_qwen2_5_vl.Qwen2_5_VLModel, "forward", forwarding)
    train_grpo(str(tiny25), data, tmp_path / "grpo",
               GRPOSettings(prompts_per_device=4, grad_accumulation=1, num_generations=2,
                            max_completion_length=4, max_steps=1, rewards=("format",), temperature=2.0),
               device="cpu")
    assert {where for where, _, _ in seen} == {"generation", "loss"}
    assert {seconds for _, _, seconds in seen} == {1.0, 0.25}  # both rates were drawn
    for where, pixels, seconds in seen:
        assert seconds == pytest.approx(expected[pixels]), (where, seconds)
