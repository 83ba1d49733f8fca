"""Manifests and frame folders made on Windows and read on Linux: errors that say why.

A manifest written on Windows with ``str(path)`` holds ``videos\\d.mp4``, which Windows opens and Linux
does not (there ``\\`` is part of a name); Windows PowerShell 5's ``>`` and ``Out-File`` write UTF-16. Both
were refused without the reason: "file not found: videos\\d.mp4", and "not valid UTF-8" followed by an
"invalid JSON" for each later line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from robojudge.suite import validate_manifest
from robojudge.video import VideoError
from robojudge.video._folder import folder_rate

pytestmark = pytest.mark.skipif(os.sep == "\\", reason="\\ separates folders on Windows")


def test_a_backslash_path_names_the_slashed_one_that_exists(tmp_path: Path) -> None:
    (tmp_path / "videos").mkdir()
    (tmp_path / "videos" / "d.mp4").write_bytes(b"")
    rows = [{"item_id": "ep1", "video": "videos\\d.mp4"}, {"item_id": "ep2", "video": "clips\\e.mp4"}]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    said = {p.item_id: p.message for p in validate_manifest(manifest) if p.is_error}
    assert said["ep1"].startswith("file not found: videos\\d.mp4 (looked for ")
    assert said["ep1"].endswith("; a Windows path: use / between folders (videos/d.mp4 exists)")
    assert said["ep2"].endswith("; \\ separates no folders here: use /")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".json"])
@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_a_utf16_manifest_is_one_problem_that_says_so(tmp_path: Path, suffix: str, codec: str) -> None:
    (tmp_path / "d.mp4").write_bytes(b"")
    text = {".jsonl": '{"item_id": "ep1", "video": "d.mp4"}\n{"item_id": "ep2", "video": "d.mp4"}\n',
            ".csv": "item_id,video\nep1,d.mp4\nep2,d.mp4\n",
            ".json": '[{"item_id": "ep1", "video": "d.mp4"}]\n'}[suffix]
    manifest = tmp_path / f"suite{suffix}"
    # "utf-16" writes a little-endian byte-order mark first, as PowerShell does; "utf-16-be" none, so:
    manifest.write_bytes(text.encode(codec) if codec == "utf-16" else b"\xfe\xff" + text.encode(codec))
    problems = validate_manifest(manifest)
    assert len(problems) == 1, [p.message for p in problems]
    assert problems[0].line is None and problems[0].message.startswith(
        "is UTF-16 (as Windows PowerShell's > and Out-File write it), not UTF-8: save it as UTF-8")


def test_a_utf16_fps_txt_says_so(tmp_path: Path) -> None:
    (tmp_path / "fps.txt").write_bytes("10\r\n".encode("utf-16"))
    with pytest.raises(VideoError, match=r"fps.txt is UTF-16 \(as Windows PowerShell's > and Out-File write"):
        folder_rate(tmp_path)
