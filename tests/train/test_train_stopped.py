"""``train sft`` stopped by SIGTERM while it saves into an existing checkpoint folder leaves no
robojudge-train.json describing the previous training beside the new weights, and says so. Before, the
new weights were written straight into it, beside the previous training's robojudge-train.json (stage,
steps, data digest), with exit status 130 and no word (audit signals 4). The weights are still saved
into --out itself (a mount point, a link, checkpoints TRL writes there: review rev10 of a version that
staged the save beside --out)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torchvision", reason="the Qwen2-VL video processor needs torchvision")
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("datasets")

from _train_suite import write_labelled_suite  # noqa: E402

from _tiny_vlm import build_tiny_qwen2vl  # noqa: E402
from robojudge.judges import FrameSpec  # noqa: E402
from robojudge.train import export_training_data  # noqa: E402
from robojudge.train._trl import SFTSettings, train_sft  # noqa: E402

pytestmark = pytest.mark.slow

# The scheduler's SIGTERM lands while the checkpoint is saved (tens of seconds for a 7B model): sent for real
# by this process to itself once the weights are written, before the processor's files.
STOP_DURING_SAVE = """
import os, signal, sys, time
import transformers
save = transformers.ProcessorMixin.save_pretrained
def stopped_save(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(1)
    return save(self, *args, **kwargs)
transformers.ProcessorMixin.save_pretrained = stopped_save
from robojudge.cli import main
sys.argv = ["robojudge", *sys.argv[1:]]
main()
"""


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_save_stopped_half_way_leaves_no_record_of_another_training(tmp_path: Path) -> None:
    manifest = write_labelled_suite(tmp_path / "suite")
    export_training_data(manifest, ["pa", "ia"], tmp_path / "data", frames=FrameSpec(max_frames=4))
    model = build_tiny_qwen2vl(tmp_path / "tiny")
    out = tmp_path / "ck"
    settings = SFTSettings(global_batch=2, per_device_batch=2, max_steps=2)
    train_sft(str(model), tmp_path / "data", out, settings, device="cpu")
    before = _digests(out)
    assert json.loads((out / "robojudge-train.json").read_text())["steps"] == 2

    args = ["train", "sft", "--model", str(model), "--data", str(tmp_path / "data"), "--out", str(out),
            "--max-steps", "3", "--global-batch", "2", "--per-device-batch", "2", "--device", "cpu",
            "--seed", "7"]
    proc = subprocess.run([sys.executable, "-c", STOP_DURING_SAVE, *args], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 130, proc.stdout + proc.stderr
    said = " ".join(proc.stderr.split())  # (folded to the terminal's width)
    assert "interrupted: nothing of this training was recorded (no robojudge-train.json" in said
    # the new weights were written, so the previous training's record is gone rather than false
    assert _digests(out)["model.safetensors"] != before["model.safetensors"]
    assert not (out / "robojudge-train.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck", "data", "suite", "tiny"]  # nothing beside

    # Unstopped, the same command writes the folder and its record.
    done = subprocess.run([sys.executable, "-m", "robojudge", *args], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((out / "robojudge-train.json").read_text())["steps"] == 3
