"""What `kiva train`, `kiva calibrate` and the metrics' config refuse, in one line (no reader trained)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.kiva import KivaDataError, segments

needs_mujoco = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
    reason="mujoco is not installed (pip install -e '.[sim]')",
)


def _one_line_error(result, words: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert words in lines[0], lines[0]


def _train(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    return _train_to(tmp_path, tmp_path / "r", *args)


def _train_to(tmp_path: Path, out: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["kiva", "train", "--robot", "fetch", "--out", str(out),
                                    "--episodes", str(tmp_path / "m.jsonl"), *args])


@pytest.mark.parametrize(("text", "words"), [
    (None, "m.jsonl: manifest file not found"),
    ("", "m.jsonl: manifest has no items"),
    ('{"item_id": "a", "video": \n', "m.jsonl:1: invalid JSON"),
])
def test_train_and_calibrate_name_a_manifest_problem_in_one_line(tmp_path: Path, text: str | None, words: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    import robojudge.kiva._reader as kr

    if text is not None:
        (tmp_path / "m.jsonl").write_text(text, encoding="utf-8")
    _one_line_error(_train(tmp_path, "--size", "32"), words)
    # Calibration loads the reader first: a stand-in with the facts it reads before the manifest.
    monkeypatch.setattr(kr, "load_reader", lambda path: SimpleNamespace(meta={"keypoints": ["a"],
                                                                              "robot": "fetch"}))
    cal = CliRunner().invoke(app, ["kiva", "calibrate", "--reader", str(tmp_path / "reader"),
                                   "--episodes", str(tmp_path / "m.jsonl")])
    _one_line_error(cal, words)


def test_several_manifest_problems_give_the_first_and_a_count(tmp_path: Path) -> None:
    (tmp_path / "m.jsonl").write_text('{"item_id": \n{"item_id": \n', encoding="utf-8")
    _one_line_error(_train(tmp_path), "(and 1 more; `robojudge suite validate")


@pytest.mark.parametrize(("args", "words"), [
    (["--size", "0"], "--size must be at least 16; got 0"),
    (["--size", "4096"], "--size must be at most 512; got 4096"),
    (["--epochs", "0"], "--epochs must be at least 1; got 0"),
    (["--holdout", "1.5"], "--holdout must be below 1"),
    (["--heatmap-stride", "3"], "--heatmap-stride must be 2 or 4; got 3"),
    (["--device", "tpu"], "--device must be cpu, cuda or auto; got 'tpu'"),
    (["--failure-repeat", "2"], "--failure-repeat 2 needs failures: add --with-failures"),
    # an infinite weight trained a reader of NaN weights, saved with exit status 0
    (["--heatmap-loss", "inf"], "--heatmap-loss: Input should be a finite number"),
])
def test_train_options_are_refused_in_plain_words(tmp_path: Path, args: list[str], words: str) -> None:
    result = _train(tmp_path, *args)
    _one_line_error(result, words)
    assert "pydantic" not in result.output


def test_train_on_cuda_without_a_gpu_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    _one_line_error(_train(tmp_path, "--device", "cuda"),
                    "--device cuda: no CUDA device visible (use cpu or auto)")


@pytest.mark.parametrize(("args", "words"), [
    (["--videos", "0"], "--videos must be at least 1; got 0"),
    (["--videos", "-1"], "--videos must be at least 1; got -1"),
    (["--percentile", "0"], "--percentile must be above 0 and at most 100; got 0"),
])
def test_calibrate_options_are_refused_before_anything_is_read(tmp_path: Path, args: list[str],
                                                               words: str) -> None:
    result = CliRunner().invoke(app, ["kiva", "calibrate", "--reader", str(tmp_path / "r"), "--episodes",
                                      str(tmp_path / "m.jsonl"), *args])
    _one_line_error(result, words)


def test_calibrate_reader_refuses_fewer_than_one_video(tmp_path: Path) -> None:
    from robojudge.kiva import calibrate_reader

    with pytest.raises(ValueError, match="videos must be at least 1"):
        calibrate_reader(tmp_path / "r", tmp_path / "m.jsonl", videos=0)


# -- segments --------------------------------------------------------------------------------------


def test_a_clip_shorter_than_a_segment_has_no_segment_as_the_metric_says():
    # judge_tracks and the metrics leave a video under one whole segment unscored; segments agrees.
    assert segments(12) == [] and segments(15) == []
    assert segments(16) == [(0, 16)]
    assert segments(24) == [(0, 16), (16, 24)]  # a tail of 8 after a whole segment is judged
    assert segments(12, length=12, min_length=8) == [(0, 12)]
    with pytest.raises(ValueError, match=r"min_segment \(40\) must be at least 1 and at most segment \(16\)"):
        segments(48, 16, 40)


def test_the_metrics_refuse_a_shortest_tail_longer_than_a_segment():
    from robojudge.metrics import get_metric

    spec = get_metric("kiva")
    with pytest.raises(ValueError, match=r"min_segment \(40\) must be at most segment \(16\)"):
        spec.make_config({"min_segment": 40})
    assert spec.make_config({"segment": 12, "min_segment": 12})


# -- recordings whose joint states do not fit their video ------------------------------------------

ARM = """<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <geom type="sphere" size="0.05"/>
      <body name="upper" pos="0 0 0.1">
        <joint name="shoulder" axis="0 1 0" range="-1.5 1.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="hand" pos="0.3 0 0"><geom type="box" size="0.02 0.02 0.02"/></body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _recording(tmp_path: Path, rows: int) -> Path:
    from robojudge.video import write_video

    (tmp_path / "arm.xml").write_text(ARM, encoding="utf-8")
    (tmp_path / "arm.toml").write_text('name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "upper", '
                                       '"hand"]\nlinks = [["upper", "hand"]]\n', encoding="utf-8")
    cam = {"K": [[40, 0, 16], [0, 40, 16], [0, 0, 1]], "R": [[1, 0, 0], [0, 0, -1], [0, 1, 0]],
           "t": [0, 0.3, 1.5], "size": [32, 32]}
    (tmp_path / "cal.json").write_text(json.dumps({"front": cam}), encoding="utf-8")
    np.save(tmp_path / "js.npy", np.zeros((rows, 1)))
    write_video(tmp_path / "v.mp4", np.zeros((24, 32, 32, 3), np.uint8), 8.0)
    item = {"item_id": "r1", "video": "v.mp4", "robot": "arm.toml", "joint_states": "js.npy",
            "calibration": "cal.json", "clip_id": "c1"}
    (tmp_path / "m.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    return tmp_path / "m.jsonl"


@needs_mujoco
def test_a_recording_with_a_row_count_other_than_its_frames_is_refused(tmp_path: Path) -> None:
    from robojudge.kiva._data import episodes_from_manifest, load_episode

    episodes, names = episodes_from_manifest(_recording(tmp_path, 10), ["base", "upper", "hand"])
    with pytest.raises(KivaDataError, match=r"episode 'r1' field joint_states: .*js\.npy: joint_states has "
                                            r"10 rows, video has 24 frames"):
        load_episode(episodes[0], names, 16)


@needs_mujoco
def test_train_on_a_recording_without_rows_names_file_and_field(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    _recording(tmp_path, 0)
    result = CliRunner().invoke(app, ["kiva", "train", "--robot", str(tmp_path / "arm.toml"), "--out",
                                      str(tmp_path / "r"), "--episodes", str(tmp_path / "m.jsonl"),
                                      "--size", "16", "--epochs", "1", "--quiet"])
    _one_line_error(result, "episode 'r1' field joint_states: ")
    assert "js.npy: no rows of joint positions" in result.output


def test_train_refuses_an_out_it_cannot_write_before_training(tmp_path: Path) -> None:
    """The reader was trained to the end, then lost to a traceback at the write."""
    (tmp_path / "x.png").write_bytes(b"not a folder")
    _one_line_error(_train_to(tmp_path, tmp_path / "x.png" / "reader"),
                    f"--out {tmp_path / 'x.png' / 'reader'}: {tmp_path / 'x.png'} is a file")
    _one_line_error(_train_to(tmp_path, tmp_path / "x.png"),
                    f"--out {tmp_path / 'x.png'}: a file, not a folder")
