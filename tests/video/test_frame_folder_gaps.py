"""A frame folder whose numbering skips (``frame_004.png`` then ``frame_010.png``) says so: its images are
read as consecutive frames, so five missing frames put every later frame 0.5 s early at 10 fps."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from robojudge.video import probe_video, sample_frames


def _folder(path: Path, numbers: list[int], pattern: str = "frame_{:03d}.png") -> Path:
    path.mkdir(parents=True)
    for k, n in enumerate(numbers):
        cv2.imwrite(str(path / pattern.format(n)), np.full((16, 16, 3), 10 * k, np.uint8))
    (path / "fps.txt").write_text("10")
    return path


def test_gaps_warn_and_whole_runs_do_not(tmp_path: Path) -> None:
    gap = _folder(tmp_path / "gap", [1, 2, 3, 4, 10, 11])
    said = [w for w in sample_frames(gap, fps=None, max_frames=None).warnings if "numbering" in w]
    assert said == ["frame numbering skips 5 number(s) (first frame_004.png then frame_010.png): the images "
                    "are read as consecutive frames, so each frame after a gap is placed earlier than it was "
                    "shown"]
    assert any("numbering skips 5" in w for w in probe_video(gap).warnings)
    # Consecutive numbers from any start, and names of no one pattern, say nothing.
    for name, numbers, pattern in (("whole", [7, 8, 9, 10], "frame_{:03d}.png"),
                                   ("mixed", [1, 5, 9], "shot{}_a.png")):
        folder = _folder(tmp_path / name, numbers, pattern)
        if name == "mixed":
            cv2.imwrite(str(folder / "other.png"), np.zeros((16, 16, 3), np.uint8))
        assert not any("numbering" in w for w in sample_frames(folder, fps=None, max_frames=None).warnings)
