"""``robojudge suite validate``: media checks, warnings versus errors, confinement."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._suite import app, media_progress
from robojudge.suite import CONFINE_ENV
from robojudge.video import write_video

runner = CliRunner()


def _suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    rng = np.random.default_rng(0)  # texture panning across the frame: frames cost real bytes
    canvas = rng.integers(0, 256, (32 + 48, 48 + 72, 3), dtype=np.uint8)
    frames = np.stack([canvas[2 * i : 2 * i + 32, 3 * i : 3 * i + 48] for i in range(24)])
    full = write_video(root / "good.mp4", frames, fps=8).read_bytes()
    (root / "cut.mp4").write_bytes(full[: len(full) // 3])
    outside = write_video(tmp_path / "elsewhere.mp4", frames, fps=8)
    rows = [
        {"item_id": "good", "video": "good.mp4"},
        {"item_id": "cut", "video": "cut.mp4"},
        {"item_id": "far", "video": str(outside)},
    ]
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def test_warnings_alone_pass(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    result = runner.invoke(app, ["validate", str(manifest), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert f"{manifest}:3: item 'far' field video: warning: " in result.stderr
    assert "is outside the manifest's folder" in result.stderr
    assert f"ok: {manifest} (1 warning)" in result.stdout


def test_deep_fails_on_a_truncated_video(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    result = runner.invoke(app, ["validate", str(manifest), "--deep", "--no-progress"])
    assert result.exit_code == 1
    assert f"{manifest}:2: item 'cut' field video: cannot be decoded: truncated: decoded" in result.stderr
    assert "1 problem(s) and 1 warning(s)" in result.stderr


def test_confine_refuses_the_item_outside(tmp_path: Path, monkeypatch) -> None:
    manifest = _suite(tmp_path)
    result = runner.invoke(app, ["validate", str(manifest), "--confine", str(manifest.parent), "--no-media"])
    assert result.exit_code == 1
    assert "item 'far' field video: " in result.stderr and "outside the confined folder" in result.stderr
    monkeypatch.setenv(CONFINE_ENV, str(manifest.parent))
    assert runner.invoke(app, ["validate", str(manifest), "--no-media"]).exit_code == 1
    missing = runner.invoke(app, ["validate", str(manifest), "--confine", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_media_checks_print_a_plain_line_every_progress_every_seconds(
        capsys: pytest.CaptureFixture[str]) -> None:
    with media_progress(True, "decoding", every=0.05) as on_video:
        assert on_video is not None
        time.sleep(0.2)
        on_video(3, 12)
        time.sleep(0.2)
    err = capsys.readouterr().err
    assert "decoding videos: none checked yet, 0 s elapsed" in err, err
    assert "decoding videos: 3/12 (25%), 0 s elapsed" in err, err
    with media_progress(False, "decoding", every=0.05) as off:
        assert off is None


def test_validate_prints_plain_progress_lines_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    # (audit cli2 F4) the media checks drew a transient bar straight to stderr: in a log or CI that is
    # nothing at all for minutes (one blank line at the end), where score and judge print a line every
    # --progress-every seconds
    root = tmp_path / "many"
    root.mkdir()
    frames = np.random.default_rng(1).integers(0, 256, (48, 64, 96, 3), dtype=np.uint8)
    rows = []
    for k in range(16):
        write_video(root / f"v{k}.mp4", frames, fps=8)
        rows.append({"item_id": f"i{k}", "video": f"v{k}.mp4"})
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(app, ["validate", str(manifest), "--deep", "--progress-every", "0.1"])
    assert result.exit_code == 0, result.output
    assert re.search(r"decoding videos: (none checked yet|\d+/16 \(\d+%\)), \d+ s elapsed", result.stderr), \
        result.stderr
    assert "━" not in result.stderr and result.stdout.startswith("ok")
    quiet = runner.invoke(app, ["validate", str(manifest), "--no-progress", "--progress-every", "0.1"])
    assert quiet.exit_code == 0 and "videos:" not in quiet.stderr, quiet.output
