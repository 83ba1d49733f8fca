"""What decides an `hf` judge's answers is part of its identity: the files of a local model folder and
its dtype. An audit wrote new weights into the judge's folder (a judge trained again into its --out):
the store kept the old rows, and a fresh store was filled with the old model's cached replies."""

from __future__ import annotations

from pathlib import Path

from robojudge.judges import FrameSpec, JudgeConfig, get_rubric, make_judge
from robojudge.run._judge import with_model_files
from robojudge.run._judge_rows import JudgePlan

PA = get_rubric("pa")


def _hf(model: str, **kw: object) -> JudgeConfig:
    return make_judge({"name": "t", "backend": "hf", "model": model, **kw})


def _hash(judge: JudgeConfig) -> str:
    return JudgePlan.build(judge, PA, FrameSpec(), "argmax", 1, 0.0).config_hash


def test_a_local_model_folder_is_identified_by_its_files(tmp_path: Path) -> None:
    folder = tmp_path / "judge"
    (folder / ".cache").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights 1")
    first = with_model_files(_hf(str(folder)))
    assert first.model_files and first.identity()["model_files"] == first.model_files
    (folder / ".cache" / "download.lock").write_text("x")  # a download tool's files are not the model
    (folder / "README.md").write_text("# a model card")  # nor is its card
    assert with_model_files(_hf(str(folder))).model_files == first.model_files
    (folder / "model.safetensors").write_bytes(b"weights 2")
    second = with_model_files(_hf(str(folder)))
    assert second.model_files != first.model_files and _hash(second) != _hash(first)
    # The folder moved unchanged is the same judge.
    moved = tmp_path / "moved"
    folder.rename(moved)
    third = with_model_files(_hf(str(moved)))
    assert third.model_files == second.model_files


def test_hub_ids_and_other_backends_are_left_as_they_are() -> None:
    hub = _hf("Qwen/Qwen2.5-VL-7B-Instruct")
    assert with_model_files(hub) is hub and "model_files" not in hub.identity()
    api = make_judge({"name": "t", "backend": "openai", "model": "/tmp", "base_url": "http://127.0.0.1:9"})
    assert with_model_files(api) is api


def test_dtype_is_part_of_an_hf_judge_when_set() -> None:
    auto, bf16 = _hf("m"), _hf("m", dtype="bfloat16")
    assert "dtype" not in auto.identity() and bf16.identity()["dtype"] == "bfloat16"
    assert _hash(auto) != _hash(bf16)


def test_a_mock_judges_scripted_replies_are_its_identity() -> None:
    """A mock judge whose script changed answered from the cache with the old replies."""
    one = make_judge({"name": "t", "backend": "mock", "replies": ["PA: 2"]})
    two = make_judge({"name": "t", "backend": "mock", "replies": ["PA: 5"]})
    assert one.identity()["replies"] == ["PA: 2"] and _hash(one) != _hash(two)
    assert "replies" not in _hf("m").identity()
