"""What a command that needs an extra says on an install without it: one line naming the extra.

The dev environment has every extra, so each test hides a library the way the other such tests do:
``sys.modules[name] = None`` makes ``import name`` fail and ``importlib.util.find_spec(name)`` answer None,
as on a core install (``pip install robojudge``). The whole path is checked on a real core install by the
slow tests of tests/cli/test_core_install.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app

TORCH = "pip install '.[torch]' in a robojudge checkout"


def _invoke(*args: str | Path) -> tuple[int, str]:
    words = [str(a) for a in args]
    res = CliRunner().invoke(build_app(words[0]), words, env={"COLUMNS": "300"})
    return res.exit_code, res.output


def _one_error_line(code: int, output: str) -> str:
    assert code == 2, output
    assert "Traceback" not in output and "ModuleNotFoundError" not in output, output
    lines = [x for x in output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch as on a core install; KIVA's torch modules forgotten, so nothing imported earlier stands in."""
    import robojudge.kiva as kiva

    for name in ("_reader", "_net", "_infer", "_train"):
        monkeypatch.delitem(sys.modules, f"robojudge.kiva.{name}", raising=False)
        monkeypatch.delattr(kiva, name, raising=False)
    _hide(monkeypatch, "torch", "torchvision")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    from robojudge.video import write_video

    frames = np.random.default_rng(0).integers(0, 255, (6, 24, 32, 3), dtype=np.uint8)
    write_video(tmp_path / "v.mp4", frames, fps=8)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "i0", "video": "v.mp4", "generator": "g"}) + "\n")
    return manifest


# --- kiva train / calibrate (finding 2) ---------------------------------------------------------------


def test_kiva_train_and_calibrate_without_torch_name_the_extra(no_torch: None, suite: Path,
                                                               tmp_path: Path) -> None:
    line = _one_error_line(*_invoke("kiva", "train", "--episodes", suite, "--robot", "fetch",
                                    "--out", tmp_path / "reader", "--size", "32"))
    assert line == f"error: KIVA's keypoint reader needs torch, which is not installed: {TORCH}"
    assert not (tmp_path / "reader").exists()
    line = _one_error_line(*_invoke("kiva", "calibrate", "--reader", tmp_path / "reader",
                                    "--episodes", suite))
    assert line.endswith(f"needs torch, which is not installed: {TORCH}")


def test_kiva_option_errors_still_come_first_without_torch(no_torch: None, suite: Path,
                                                           tmp_path: Path) -> None:
    line = _one_error_line(*_invoke("kiva", "train", "--episodes", suite, "--robot", "fetch",
                                    "--out", tmp_path / "r", "--epochs", "0"))
    assert "--epochs must be at least 1" in line


# --- model metrics (finding 3) ------------------------------------------------------------------------


@pytest.fixture
def musiq_present(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MUSIQ's checkpoint file in $ROBOJUDGE_WEIGHTS (its contents are never read here), no hub cache."""
    from huggingface_hub import constants

    folder = tmp_path / "weights" / "musiq_spaq"
    folder.mkdir(parents=True)
    (folder / "musiq_spaq_ckpt-358bb6af.pth").write_bytes(b"not read")
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "weights"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def test_all_leaves_out_metrics_whose_library_is_missing_and_says_which_extra(
        musiq_present: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.metrics import expand_metric_ids, not_run_summary

    assert {"iq1_musiq", "musiq_spaq"} <= set(expand_metric_ids(["all"]))  # weights here, pyiqa installed
    _hide(monkeypatch, "pyiqa")
    ids = expand_metric_ids(["all"])
    assert "iq1_musiq" not in ids and "musiq_spaq" not in ids and "pixel_frame_consistency" in ids
    lines = not_run_summary()
    assert any("need libraries not installed here" in x for x in lines), lines
    (line,) = [x for x in lines if "pyiqa" in x]
    assert line.startswith("  need pyiqa, not installed here (pip install '.[iqa]' in a robojudge "
                           "checkout): ")
    assert set(line.split("): ", 1)[1].split(", ")) == {"aq_clip_iqa", "iq1_musiq", "musiq_spaq"}


def test_all_without_torch_names_the_torch_extra_for_every_model_metric(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.metrics import expand_metric_ids, list_metrics, not_run_summary

    _hide(monkeypatch, "torch", "torchvision", "transformers", "pyiqa")
    lines = not_run_summary()
    torch_line = next(x for x in lines if "pip install '.[torch]' in a robojudge checkout" in x)
    assert torch_line.startswith("  need torch")
    named = set(torch_line.split("): ", 1)[1].split(", "))
    assert {"iq1_lpips", "clip_frame_consistency", "kiva"} <= named
    iqa_line = next(x for x in lines if "pip install '.[torch,iqa]' in a robojudge checkout" in x)
    assert "iq1_musiq" in iqa_line
    assert not any(x.startswith("  need weights: ") for x in lines)  # installing comes first
    model = {s.id for s in list_metrics() if s.provider.value == "model"}
    assert not model & set(expand_metric_ids(["all"]))


def test_a_named_model_metric_without_its_library_is_refused_before_anything_is_read(
        suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "torch", "torchvision", "transformers", "pyiqa")
    code, out = _invoke("score", suite, "-m", "pixel_frame_consistency,iq1_lpips", "--run-dir",
                        tmp_path / "run", "--no-progress")
    line = _one_error_line(code, out)
    assert line == ("error: metric 'iq1_lpips' needs torch and torchvision, which are not installed here: "
                    "pip install '.[torch]' in a robojudge checkout")
    assert not (tmp_path / "run").exists()  # no store made, no video decoded
    code, out = _invoke("score", suite, "-m", "iq1_lpips,iq1_musiq", "--run-dir", tmp_path / "run",
                        "--no-progress")
    line = _one_error_line(code, out)
    assert line.startswith("error: metrics 'iq1_lpips', 'iq1_musiq' need torch, torchvision and pyiqa, ")
    assert line.endswith("pip install '.[torch,iqa]' in a robojudge checkout")


def test_a_named_metric_is_refused_only_for_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.metrics._select import MissingLibrariesError, expand_metric_ids

    _hide(monkeypatch, "pyiqa")
    with pytest.raises(MissingLibrariesError, match=r"needs pyiqa, which is not installed here: "
                       r"pip install '\.\[iqa\]' in a robojudge checkout$"):
        expand_metric_ids(["iq1_musiq"])
    # torch is here: the other model metrics, unknown ids and set-level metrics go on as before
    assert expand_metric_ids(["iq1_lpips", "no_such_metric", "iq1_fvd"]) == [
        "iq1_lpips", "no_such_metric", "iq1_fvd"]


def test_metrics_info_names_the_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.metrics import get_metric, how_to_score

    assert not any("not installed" in x for x in how_to_score(get_metric("iq1_musiq")))
    _hide(monkeypatch, "pyiqa")
    lines = how_to_score(get_metric("iq1_musiq"))
    assert "needs pyiqa, not installed here: pip install '.[iqa]' in a robojudge checkout" in lines


# --- weights fetch (finding 4) ------------------------------------------------------------------------


def test_weights_fetch_without_huggingface_hub_names_the_extra(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _hide(monkeypatch, "huggingface_hub")
    line = _one_error_line(*_invoke("weights", "fetch", "clip_vit_b32", "--dest", tmp_path / "w" / "clip"))
    assert line == ("error: fetching clip_vit_b32 from the Hugging Face hub needs huggingface_hub, which is "
                    f"not installed: {TORCH}")
    assert "refused" not in line
    assert not (tmp_path / "w").exists()


def test_a_missing_module_met_while_fetching_is_not_a_refusal(tmp_path: Path) -> None:
    from robojudge.models import WeightsFetchError, fetch_weights

    def hub_missing(**kw: object) -> str:
        raise ModuleNotFoundError("No module named 'huggingface_hub'", name="huggingface_hub")

    with pytest.raises(WeightsFetchError) as err:
        fetch_weights("clip_vit_b32", dest=tmp_path / "clip", download=hub_missing)
    assert str(err.value).endswith(f"needs huggingface_hub, which is not installed: {TORCH}")

    def other_missing(**kw: object) -> str:
        raise ModuleNotFoundError("No module named 'hf_xet'", name="hf_xet")

    with pytest.raises(WeightsFetchError) as err:
        fetch_weights("clip_vit_b32", dest=tmp_path / "clip", download=other_missing)
    msg = str(err.value)
    assert "refused" not in msg and "cannot be imported" in msg and "hf_xet" in msg
    assert not (tmp_path / "clip").exists()


def test_a_set_metric_without_its_library_is_refused_before_anything_is_read(
        suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # metrics sets went on to store an error row per group naming ModuleNotFoundError
    _hide(monkeypatch, "torch", "torchvision")
    line = _one_error_line(*_invoke("metrics", "sets", suite, "--metrics", "iq1_fvd", "--run-dir",
                                    tmp_path / "run"))
    assert line.startswith("error: metric 'iq1_fvd' needs torch") and line.endswith(TORCH)
    assert not (tmp_path / "run").exists()


def test_a_judge_summary_counts_what_another_run_stored_first(capsys: pytest.CaptureFixture[str]) -> None:
    from robojudge.cli._judge import print_judge_summary
    from robojudge.run import JudgeRunSummary

    print_judge_summary("m", JudgeRunSummary(total=3, scored=1, duplicates=2))
    assert "2 judged by another run meanwhile, not stored" in capsys.readouterr().out
    assert not JudgeRunSummary(total=2, failed=1, duplicates=1).judged_nothing


def test_viclip_needs_openai_clip_which_comes_with_iqa(monkeypatch: pytest.MonkeyPatch) -> None:
    """ViCLIP's text side is openai-clip's tokenizer: without it cc_semantics would fail on every item
    after the run began; it is refused up front, naming the extra that installs it."""
    from robojudge.metrics import get_metric, missing_libraries
    from robojudge.metrics._select import MissingLibrariesError, expand_metric_ids

    assert missing_libraries(get_metric("cc_semantics")) == []
    _hide(monkeypatch, "clip")
    assert missing_libraries(get_metric("cc_semantics")) == ["clip"]
    with pytest.raises(MissingLibrariesError, match=r"needs clip, which is not installed here: "
                       r"pip install '\.\[iqa\]' in a robojudge checkout$"):
        expand_metric_ids(["cc_semantics"])
