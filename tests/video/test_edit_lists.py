"""MP4 edit lists: a trimmed clip holds frames it never shows, and only the shown ones are its frames.

FFmpeg's own decoder (a plain PyAV decode) honours the edit list; the sampler must return exactly
what it returns, without calling the file truncated and without reading the hidden frames back in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _videogen import naive_decode, textured_clip, write_trimmed

from robojudge.video import VideoError, _filesample, sample_frames, write_video
from robojudge.video._decode import decoded_frames, open_video

FPS = 30


def _clip(n: int) -> np.ndarray:
    """Frames that name themselves: frame ``i`` has gray ``4 * (i % 60)`` on its left half and
    ``40 * (i // 60)`` on its right half (up to 360 frames)."""
    assert n <= 360
    i = np.arange(n)
    clip = np.empty((n, 48, 64, 3), dtype=np.uint8)
    clip[:, :, :32] = (4 * (i % 60)).astype(np.uint8)[:, None, None, None]
    clip[:, :, 32:] = (40 * (i // 60)).astype(np.uint8)[:, None, None, None]
    return clip


def _level_index(frame: np.ndarray) -> int:
    """Which frame of :func:`_clip` this decoded frame is."""
    low = round(float(frame[:, 4:28].mean()) / 4)
    high = round(float(frame[:, 36:60].mean()) / 40)
    return 60 * high + low


# (frames written, frames hidden before the cut, keyframe interval)
CASES = {
    # The hidden frames follow the only keyframe: all are demuxed, flagged "discard".
    "discarded": (60, 40, 60),
    # The same with 9 s of hidden frames in front of a 1 s clip.
    "long_hidden_span": (300, 270, 300),
    # The cut falls on a keyframe: the demuxer drops the hidden frames without flagging any.
    "cut_on_keyframe": (60, 40, 20),
}


@pytest.mark.parametrize("route", ["planned", "reread", "two_pass"])
@pytest.mark.parametrize("case", list(CASES))
def test_trimmed_mp4_gives_the_frames_ffmpeg_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, route: str
) -> None:
    n, hidden, keyint = CASES[case]
    path = write_trimmed(tmp_path / "trimmed.mp4", _clip(n), FPS, hidden, keyint)
    shown = naive_decode(path)
    assert len(shown) == n - hidden  # FFmpeg honours the edit list
    if route == "reread":  # packets too many to keep: demuxed again for decoding
        monkeypatch.setattr(_filesample, "PACKET_BUFFER_BYTES", 1)
    elif route == "two_pass":  # no plan from packet time stamps: decoded twice
        monkeypatch.setattr(_filesample._Plan, "make", classmethod(lambda cls, *a, **k: None))

    got = sample_frames(path, fps=None, max_frames=None)
    assert got.warnings == ()
    assert len(got) == len(shown)
    np.testing.assert_array_equal(got.frames, np.stack(shown))
    assert [_level_index(f) for f in got.frames] == list(range(hidden, n))
    assert got.indices.tolist() == list(range(len(shown)))
    np.testing.assert_allclose(got.timestamps, np.arange(len(shown)) / FPS, atol=1e-3)
    assert got.source_fps == pytest.approx(FPS)


@pytest.mark.parametrize("case", list(CASES))
def test_trimmed_mp4_samples_like_the_same_frames_written_plainly(tmp_path: Path, case: str) -> None:
    n, hidden, keyint = CASES[case]
    trimmed = write_trimmed(tmp_path / "trimmed.mp4", _clip(n), FPS, hidden, keyint)
    plain = write_video(tmp_path / "plain.mp4", _clip(n)[hidden:], fps=FPS)
    want = sample_frames(plain, fps=4)
    got = sample_frames(trimmed, fps=4)
    assert got.warnings == want.warnings == ()
    assert got.indices.tolist() == want.indices.tolist()
    np.testing.assert_allclose(got.timestamps, want.timestamps, atol=1e-3)
    assert [_level_index(f) for f in got.frames] == [hidden + int(i) for i in want.indices]


def _shown_decodable(path: Path) -> int:
    with open_video(path) as (container, stream):
        return sum(1 for _ in decoded_frames(container, stream))


@pytest.mark.parametrize("keyint", [60, 20])
@pytest.mark.parametrize("kept", [0.85, 0.95])
def test_truncated_trimmed_mp4_is_judged_by_its_edited_duration(
    tmp_path: Path, keyint: int, kept: float
) -> None:
    # 60 frames written, the last 20 shown (0.67 s). The file is cut inside the shown part: the
    # container declares 60 frames, but only the 20 the edit list shows are the clip's, so the
    # shortfall is measured against the edited duration, not against 60.
    full = write_trimmed(tmp_path / "full.mp4", textured_clip(60, 96, 64), FPS, 40, keyint, faststart=True)
    assert len(sample_frames(full, fps=None, max_frames=None)) == 20
    data = full.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: int(len(data) * kept)])
    n = _shown_decodable(cut)
    text = f"truncated: decoded {n} frames covering {n / FPS:.1f} s of 0.7 s declared"
    if kept < 0.9:  # under half of the shown part is left
        assert 0 < n < 10
        with pytest.raises(VideoError) as info:
            sample_frames(cut, fps=None, max_frames=None)
        assert info.value.reason == text
    else:  # most of it is left: the prefix, with a warning
        assert 10 <= n <= 18
        got = sample_frames(cut, fps=None, max_frames=None)
        assert len(got) == n and got.warnings == (text,)
