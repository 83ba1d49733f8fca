"""SFT then GRPO on TRL with a tiny random Qwen2-VL on CPU; the result loads as an ``hf`` judge.

Two optimizer steps per stage: the point is the path (the judge's own inputs in, a finite loss,
a checkpoint the judge backend reads), not learning. A random model writes noise, so its judgments
are unscored rows with the reason, as any judge's unparsable reply would be.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torchvision", reason="the Qwen2-VL video processor needs torchvision")
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("datasets")

from _train_suite import write_labelled_suite  # noqa: E402

from _tiny_vlm import build_tiny_qwen2vl  # noqa: E402
from robojudge.judges import FrameSpec, ResponseCache, get_rubric, load_judges_file, make_judge  # noqa: E402
from robojudge.run._judge import judge_items  # noqa: E402
from robojudge.store import ResultStore  # noqa: E402
from robojudge.suite import load_suite  # noqa: E402
from robojudge.train import completion_text, export_training_data  # noqa: E402
from robojudge.train._collate import IGNORE, JudgeSFTCollator  # noqa: E402
from robojudge.train._trl import (  # noqa: E402
    GRPOSettings,
    SFTSettings,
    TrainingError,
    load_records,
    train_grpo,
    train_sft,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("train")
    manifest = write_labelled_suite(root / "suite")
    # 4 frames: with the temporal patch of 2 and 28x28 frames, 2 video tokens per request
    export_training_data(manifest, ["pa", "ia"], root / "data", frames=FrameSpec(max_frames=4))
    return {"root": root, "manifest": manifest, "data": root / "data",
            "model": build_tiny_qwen2vl(root / "tiny")}


def test_collator_labels_the_reply_alone(workdir: dict[str, Path]) -> None:
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(workdir["model"])
    records = load_records(workdir["data"])
    pick = [next(r for r in records if r["rubric"] == "pa"), next(r for r in records if r["rubric"] == "ia")]
    batch = JudgeSFTCollator(processor)(pick)
    assert batch["input_ids"].shape[0] == 2 and "pixel_values_videos" in batch and "pixel_values" in batch
    for row, rec in enumerate(pick):
        kept = batch["input_ids"][row][batch["labels"][row] != IGNORE]
        reply = rec["completion"][0]["content"][0]["text"]
        # one token per character: the labelled tokens spell the reply and the end of the turn
        assert "".join(processor.tokenizer.convert_ids_to_tokens(kept.tolist())) == reply + "<|im_end|>\n"


def test_grpo_prompts_give_the_hf_judge_s_inputs(workdir: dict[str, Path]) -> None:
    """TRL tokenizes a GRPO prompt with the processor, which loads the frames from the video block's
    paths; that must give the tokens and pixels the hf judge builds from its decoded frames."""
    import torch
    from transformers import AutoProcessor

    from robojudge.judges import chat_messages, decode_frames, padded_video, temporal_patch, thinned
    from robojudge.train import judge_request

    processor = AutoProcessor.from_pretrained(workdir["model"])
    suite = load_suite(workdir["manifest"])
    judge = make_judge({"name": "t", "backend": "hf", "model": "m"})
    records = [r for r in load_records(workdir["data"]) if r["item_id"] == "c1-gen_a"]
    assert sorted(r["rubric"] for r in records) == ["ia", "pa"]
    for rec in records:
        trl_side = processor.apply_chat_template([rec["prompt"]], add_generation_prompt=True, tokenize=True,
                                                 return_dict=True, return_tensors="pt")
        item = suite.by_id(rec["item_id"])
        frames = decode_frames(item.video, FrameSpec(max_frames=4))
        request = judge_request(judge, get_rubric(rec["rubric"]), item.instruction, frames)
        video = padded_video(thinned(frames.frames, judge.max_images), temporal_patch(processor))
        text = processor.apply_chat_template(chat_messages(request), tokenize=False,
                                             add_generation_prompt=True)
        extra = {"images": [video[0]]} if rec["rubric"] == "ia" else {}
        judge_side = processor(text=[text], videos=[video], return_tensors="pt", **extra)
        assert torch.equal(trl_side["input_ids"], judge_side["input_ids"])
        assert torch.equal(trl_side["pixel_values_videos"], judge_side["pixel_values_videos"])
        if rec["rubric"] == "ia":
            assert torch.equal(trl_side["pixel_values"], judge_side["pixel_values"])


def test_sft_then_grpo_then_judge(workdir: dict[str, Path], tmp_path: Path) -> None:
    sft = train_sft(str(workdir["model"]), workdir["data"], tmp_path / "sft",
                    SFTSettings(global_batch=4, per_device_batch=2, max_steps=2), device="cpu")
    assert sft.steps == 2 and len(sft.losses) == 2 and all(math.isfinite(v) and v > 0 for v in sft.losses)
    assert _weights(sft.out) != _weights(workdir["model"])  # SFT moved the weights

    def parity(completions: list[Any], **kwargs: Any) -> list[float]:
        # the random model's replies never parse, so exact match is 0 for all; this reward differs
        # between (random) completions, so the advantage is not zero and GRPO has a gradient to follow
        return [float(sum(map(ord, completion_text(c))) % 2) for c in completions]

    grpo = train_grpo(str(sft.out), workdir["data"], tmp_path / "grpo",
                      GRPOSettings(prompts_per_device=2, grad_accumulation=1, num_generations=4,
                                   max_completion_length=8, max_steps=2, rewards=("exact", "format"),
                                   learning_rate=1e-3, temperature=2.0),
                      device="cpu", extra_rewards=[parity])
    assert grpo.steps == 2 and grpo.losses and all(math.isfinite(v) for v in grpo.losses)
    assert any("rewards/exact_match_reward/mean" in e for e in grpo.log)
    assert _weights(grpo.out) != _weights(sft.out)  # GRPO moved them too
    # ... the vision tower's too: the loss saw the frames (TRL's own trainer feeds them to generation only)
    assert _weights(grpo.out, "visual") != _weights(sft.out, "visual")
    info = json.loads((grpo.out / "robojudge-train.json").read_text())
    assert info["stage"] == "sft+rl" and info["base_model"] == str(workdir["model"].resolve())
    assert json.loads((sft.out / "robojudge-train.json").read_text())["stage"] == "sft"
    # the items trained on: the export's train split, which both stages read here
    assert info["train_items"] == sorted({r["item_id"] for r in load_records(workdir["data"])})

    # the entry the training command prints, as a user would paste it into robojudge.toml
    toml = tmp_path / "robojudge.toml"
    toml.write_text(grpo.judge_toml("tiny-rl") + 'device = "cpu"\ndtype = "float32"\n'
                    "[judges.tiny-rl.sampling]\nmax_tokens = 8\n")
    judge = load_judges_file(toml)["tiny-rl"]
    assert judge.stage == "sft+rl" and judge.base_model == str(workdir["model"].resolve())
    items = load_suite(workdir["manifest"]).items[:2]
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store, ResponseCache(tmp_path / "c") as cache:
        summary = judge_items(items, judge, [get_rubric("pa")], store, cache=cache)
        rows = store.rows()
    assert summary.scored + summary.unscored == 2 and len(rows) == 2
    for row in rows:  # a score, or an unparsable reply kept with its reason: never an error row
        assert row.status == "ok" and row.value is not None
        assert (math.isnan(row.value) and (row.error or "").startswith("unscored")) or 1 <= row.value <= 5


def _weights(folder: Path, part: str = "") -> float:
    """A fingerprint of a checkpoint's weights whose names hold ``part`` (sum of absolute values)."""
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        names = [k for k in f.keys() if part in k]  # noqa: SIM118 - a safetensors handle, not a dict
        assert names, f"no weight named like {part!r}"
        return float(sum(f.get_tensor(k).double().abs().sum() for k in names))


def test_training_refuses_what_it_cannot_read(workdir: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="robojudge train export"):
        load_records(tmp_path)
    sharegpt = tmp_path / "sg"
    export_training_data(workdir["manifest"], ["pa"], sharegpt, fmt="sharegpt")
    with pytest.raises(TrainingError, match="--format trl"):
        load_records(sharegpt)
    # settings TRL would train wrongly with or fail on deep inside, refused naming the option, no folder left
    for settings, message in ((SFTSettings(max_steps=0), r"--max-steps 0: must be -1"),
                              (SFTSettings(global_batch=0), r"--global-batch 0: must be >= 1"),
                              (SFTSettings(epochs=float("nan")), r"--epochs nan: must be > 0")):
        with pytest.raises(TrainingError, match=message):
            train_sft("x", workdir["data"], tmp_path / "o", settings, device="cpu")
    with pytest.raises(TrainingError, match=r"--generations 1: must be >= 2"):
        train_grpo("x", workdir["data"], tmp_path / "o", GRPOSettings(num_generations=1), device="cpu")
    assert not (tmp_path / "o").exists()
    with pytest.raises(TrainingError, match=r"--device 'gpu': use one of auto, cpu, cuda"):
        train_sft("x", workdir["data"], tmp_path / "o", device="gpu")
    with pytest.raises(TrainingError, match="unknown reward"):
        train_grpo("x", workdir["data"], tmp_path / "o", GRPOSettings(rewards=("accuracy",)))
    with pytest.raises(TrainingError, match="cannot load model"):
        train_sft(str(tmp_path / "nothing"), workdir["data"], tmp_path / "o", device="cpu")


def test_lora_is_merged_into_a_plain_checkpoint(workdir: dict[str, Path], tmp_path: Path) -> None:
    from safetensors import safe_open
    from transformers import AutoModelForImageTextToText

    sft = train_sft(str(workdir["model"]), workdir["data"], tmp_path / "lora",
                    SFTSettings(global_batch=2, per_device_batch=2, max_steps=1, lora=True, lora_rank=4,
                                learning_rate=1e-2), device="cpu")
    assert sft.steps == 1 and all(math.isfinite(v) for v in sft.losses)
    with safe_open(str(sft.out / "model.safetensors"), "pt") as f:
        keys = list(f.keys())
    assert keys and not any("lora" in k for k in keys)  # merged: the hf backend needs no peft
    with safe_open(str(workdir["model"] / "model.safetensors"), "pt") as f:
        assert sorted(f.keys()) == sorted(keys)
    assert AutoModelForImageTextToText.from_pretrained(sft.out).config.model_type == "qwen2_vl"


def test_grpo_scores_each_completion_on_its_own_video(
    workdir: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PA prompt holds no item text, so every video of one size tokenizes the same; media were kept by
    token ids, and an item's completions were scored on another item's video. Checked here against TRL's
    own bookkeeping: the reward sees each completion with its item, the model forward its pixels."""
    from transformers import AutoProcessor

    from robojudge.train import _grpo_video

    data = tmp_path / "pa-only"  # every prompt a PA prompt: all collide (the suite's videos share one size)
    export_training_data(workdir["manifest"], ["pa"], data, frames=FrameSpec(max_frames=4))
    processor = AutoProcessor.from_pretrained(workdir["model"])
    expected = {}
    for rec in load_records(data):
        fields = processor.apply_chat_template([rec["prompt"]], add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt")
        expected[rec["item_id"]] = float(fields["pixel_values_videos"].double().sum())
    assert len(set(expected.values())) == len(expected)  # the videos differ

    generated: list[tuple[tuple[int, ...], str]] = []

    def remember(completions: list[Any], completion_ids: list[list[int]], item_id: list[str],
                 **kwargs: Any) -> list[float]:
        generated.extend((tuple(c), i) for c, i in zip(completion_ids, item_id, strict=True))
        return [float(sum(c) % 2) for c in completion_ids]

    forwarded: list[tuple[tuple[int, ...], float]] = []
    call = _grpo_video._WithMedia.__call__

    def spy(self: Any, **inputs: Any) -> Any:
        model = self._model

        def record(**given: Any) -> Any:
            ids, mask = given["input_ids"], given["attention_mask"]
            sizes = given["video_grid_thw"].prod(dim=-1).tolist()
            pixels = given["pixel_values_videos"].split([int(n) for n in sizes])
            for b in range(ids.shape[0]):
                forwarded.append((tuple(ids[b][mask[b].bool()].tolist()), float(pixels[b].double().sum())))
            return model(**given)

        self._model = record
        try:
            return call(self, **inputs)
        finally:
            self._model = model

    monkeypatch.setattr(_grpo_video._WithMedia, "__call__", spy)
    train_grpo(str(workdir["model"]), data, tmp_path / "grpo",
               GRPOSettings(prompts_per_device=2, grad_accumulation=1, num_generations=4,
                            max_completion_length=6, max_steps=2, rewards=("format",), temperature=2.0),
               device="cpu", extra_rewards=[remember])
    checked = 0
    for tokens, pixels in forwarded:
        items = {item for completion, item in generated
                 if completion and tokens[-len(completion):] == completion}
        if len(items) == 1:
            assert pixels == expected[items.pop()]
            checked += 1
    assert checked >= 8, (checked, len(forwarded))


def test_bad_records_are_named_before_training(workdir: dict[str, Path], tmp_path: Path) -> None:
    """A missing frame, a record without its prompt, an empty split: tracebacks half-way through a run."""
    data = tmp_path / "data"
    shutil.copytree(workdir["data"], data)
    lines = (data / "train.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    frame = data / first["frames"][1]
    frame.unlink()
    with pytest.raises(TrainingError, match=rf"train\.jsonl, line 1, record '{first['id']}': field prompt: "
                                            rf"frame .*{frame.name} is missing"):
        load_records(data)
    broken = dict(json.loads(lines[1]))
    del broken["prompt"]
    (data / "train.jsonl").write_text(json.dumps(broken) + "\n")
    with pytest.raises(TrainingError, match=rf"line 1, record '{broken['id']}': field prompt is missing"):
        load_records(data)
    (data / "train.jsonl").write_text("")
    with pytest.raises(TrainingError, match=r"train\.jsonl: no records"):
        load_records(data)


def test_grpo_with_fewer_prompts_than_one_update_is_refused(workdir: dict[str, Path], tmp_path: Path) -> None:
    """TRL yields no batch then: an untrained copy of the model was saved as "sft+rl" (rc 0)."""
    n = len(load_records(workdir["data"]))
    too_few = rf"{n} train records, but one GRPO generation takes {n + 1} prompts"
    with pytest.raises(TrainingError, match=too_few):
        train_grpo(str(workdir["model"]), workdir["data"], tmp_path / "o",
                   GRPOSettings(prompts_per_device=1, grad_accumulation=n + 1, num_generations=2),
                   device="cpu")
    assert not (tmp_path / "o").exists()
    # overrides count: a review found the figure taken from the settings alone, refusing what TRL runs
    with pytest.raises(TrainingError, match=rf"generation takes {n + 2} prompts"):
        train_grpo(str(workdir["model"]), workdir["data"], tmp_path / "o",
                   GRPOSettings(prompts_per_device=1, grad_accumulation=1, num_generations=2), device="cpu",
                   overrides={"gradient_accumulation_steps": n + 2})


def test_overrides_win_over_robojudge_s_settings(workdir: dict[str, Path], tmp_path: Path) -> None:
    """Overriding a field robojudge sets (seed, save_strategy) was a TypeError."""
    sft = train_sft(str(workdir["model"]), workdir["data"], tmp_path / "sft",
                    SFTSettings(global_batch=2, per_device_batch=2, max_steps=1), device="cpu",
                    overrides={"seed": 7, "save_strategy": "steps", "save_steps": 1})
    info = json.loads((sft.out / "robojudge-train.json").read_text())
    assert info["overrides"] == {"seed": 7, "save_strategy": "steps", "save_steps": 1}
    assert list(sft.out.glob("checkpoint-1"))  # the intermediate save asked for
    export = json.loads((workdir["data"] / "export.json").read_text())
    assert info["data_digest"] == export["digest"] and info["data"] == str(workdir["data"].resolve())


def test_the_record_names_the_export_read_at_the_start(
    workdir: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-export into the data folder while the model trained was recorded as the data it was trained
    on (``data_digest`` was read at the end), and the record left out the frame sampling of the export
    (audit train F2, F3)."""
    import trl

    data = tmp_path / "data"
    halves = {"train": 0.5, "val": 0.5}
    first = export_training_data(workdir["manifest"], ["pa"], data, fractions=halves,
                                 frames=FrameSpec(fps=2.0, max_frames=4),
                                 judge=make_judge({"name": "x", "backend": "hf", "max_images": 2}))
    trained_ids = {r["item_id"] for r in load_records(data)}
    real_train = trl.SFTTrainer.train

    def train_then_reexport(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = real_train(self, *args, **kwargs)  # a re-export finishing while a long training runs
        # (another seed: another split, which an export into the same folder takes only when forced)
        export_training_data(workdir["manifest"], ["pa"], data, fractions=halves, seed=7,
                             frames=FrameSpec(max_frames=4), force=True)
        return out

    monkeypatch.setattr(trl.SFTTrainer, "train", train_then_reexport)
    sft = train_sft(str(workdir["model"]), data, tmp_path / "sft",
                    SFTSettings(global_batch=2, per_device_batch=2, max_steps=1), device="cpu")
    info = json.loads((sft.out / "robojudge-train.json").read_text())
    now = json.loads((data / "export.json").read_text())["digest"]
    assert info["data_digest"] == first.digest != now
    assert set(info["train_items"]) == trained_ids
    assert info["frames"] == {"fps": 2.0, "max_frames": 4, "size": None} and info["max_images"] == 2
    assert len(sft.notes) == 1 and "changed while the model trained" in sft.notes[0]
    assert info["notes"] == sft.notes
    assert "max_images = 2\n" in sft.judge_toml("ck") and "--fps 2 --max-frames 4" in sft.judge_toml("ck")
