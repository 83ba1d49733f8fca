"""A GIF or an animated WebP whose frames last unequal times is served as a WebM whose frames keep
those times: the app used to encode them at the average rate, so a 500 ms pause played as 250 ms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from robojudge.annotate.web._folders import playable
from robojudge.video import VideoError, sample_frames, write_video

DURATIONS_MS = [100, 300, 100, 500, 200]


def _frames() -> np.ndarray:
    return np.stack([np.full((24, 32, 3), 40 * i + 20, np.uint8) for i in range(len(DURATIONS_MS))])


@pytest.mark.parametrize("suffix", [".gif", ".webp"])
def test_unequal_frame_durations_survive_the_webm(tmp_path: Path, suffix: str) -> None:
    images = [Image.fromarray(f) for f in _frames()]
    src = tmp_path / f"ep{suffix}"
    images[0].save(src, save_all=True, append_images=images[1:], duration=DURATIONS_MS, loop=0,
                   **({"lossless": True} if suffix == ".webp" else {}))
    webm = playable(src, cache_dir=tmp_path / "cache")
    assert webm.suffix == ".webm"
    back = sample_frames(webm, fps=None, max_frames=None)
    starts = np.cumsum([0, *DURATIONS_MS[:-1]]) / 1000
    assert back.timestamps - back.timestamps[0] == pytest.approx(starts, abs=0.002)
    assert np.abs(back.frames.astype(int) - _frames()).mean() < 8


def test_write_video_refuses_timestamps_it_cannot_keep(tmp_path: Path) -> None:
    frames = _frames()
    with pytest.raises(VideoError, match="increase by at least 1 ms"):
        write_video(tmp_path / "a.webm", frames, fps=5, timestamps=[0, 0.1, 0.1002, 0.3, 0.4])
    with pytest.raises(VideoError, match="need 5 finite times"):
        write_video(tmp_path / "a.webm", frames, fps=5, timestamps=[0, 0.1])
    with pytest.raises(VideoError, match="timestamps need a video file"):
        write_video(tmp_path / "folder", frames, fps=5, timestamps=[0, 0.1, 0.2, 0.3, 0.4])
    # an mp4 keeps them too
    write_video(tmp_path / "a.mp4", frames, fps=5, timestamps=[0, 0.1, 0.4, 0.5, 1.0])
    back = sample_frames(tmp_path / "a.mp4", fps=None, max_frames=None)
    assert back.timestamps - back.timestamps[0] == pytest.approx([0, 0.1, 0.4, 0.5, 1.0], abs=0.002)


def test_frames_under_a_millisecond_apart_are_served_at_the_average_rate(tmp_path: Path) -> None:
    # times that whole milliseconds cannot keep (2000 fps) made the encoding fail: a 404 for the rater
    write_video(tmp_path / "fast", _frames(), fps=2000)  # a frame folder with fps.txt
    webm = playable(tmp_path / "fast", cache_dir=tmp_path / "cache")
    back = sample_frames(webm, fps=None, max_frames=None)
    assert len(back.timestamps) == len(DURATIONS_MS)  # served (a WebM cannot hold 2000 fps either way)
