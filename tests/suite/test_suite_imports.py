"""Loading manifests does not pay for the video stack: PyAV and OpenCV load when a video is looked at."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _loaded_after(code: str) -> set[str]:
    """Which of av/cv2 a fresh interpreter has loaded after running ``code``."""
    probe = code + "\nimport sys; print(' '.join(m for m in ('av', 'cv2') if m in sys.modules))"
    cmd = [sys.executable, "-c", probe]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return set(done.stdout.split())


def test_importing_the_suite_package_loads_neither_pyav_nor_opencv() -> None:
    assert _loaded_after("import robojudge.suite") == set()


def test_looking_at_a_video_loads_the_decoder(tmp_path: Path) -> None:
    # The check still works once the import is deferred: a non-video file is reported, via PyAV.
    fake = tmp_path / "clip.mp4"
    fake.write_text("not a video\n")
    code = (
        "from robojudge.suite._media import inspect_video\n"
        f"found = inspect_video({str(fake)!r}, deep=False)\n"
        "assert len(found) == 1 and 'not a video file' in found[0][0], found\n"
    )
    assert "av" in _loaded_after(code)
