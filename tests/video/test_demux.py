"""What a file says without being decoded: its length by its packets' time stamps (:func:`measured_duration`)
and how it is stored (:func:`stream_format`)."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import levels_clip, textured_clip, write_live_webm, write_timed

from _encode import mux_frames
from robojudge.video import (
    StreamFormat,
    VideoError,
    measured_duration,
    sample_frames,
    stream_format,
)


def test_a_live_webm_has_no_length_in_its_header_but_a_measured_one(tmp_path: Path) -> None:
    times = [round(i * 1000 / 30) for i in range(60)]  # 30 fps in whole milliseconds, as MediaRecorder
    path = write_live_webm(tmp_path / "rec.webm", levels_clip(60, 32, 24, step=4), times)
    with av.open(str(path)) as container:  # the header says nothing of the length
        assert container.duration is None and container.streams.video[0].duration is None
    # the last frame at 1.967 s, lasting 33 ms (its step in whole ticks of the millisecond time base)
    assert measured_duration(path) == pytest.approx(2.0, abs=1e-9)
    whole = sample_frames(path, fps=None, max_frames=None)
    assert measured_duration(path) == pytest.approx(whole.video_seconds, abs=0.001)


@pytest.mark.parametrize("suffix", [".mp4", ".mkv"])
def test_the_measured_length_is_what_sampling_reads(tmp_path: Path, suffix: str) -> None:
    # B-frames (packets out of presentation order) and uneven steps: 0-1.1 s, then 100 ms apart
    times = [0, 40, 80, 120, 160, 200, 1100, 1200, 1300, 1400]
    path = write_timed(tmp_path / f"vfr{suffix}", textured_clip(len(times), 64, 48), times)
    whole = sample_frames(path, fps=None, max_frames=None)
    assert measured_duration(path) == pytest.approx(whole.video_seconds, abs=0.001)  # within a tick (1 ms)


def test_an_unreadable_file_is_a_video_error(tmp_path: Path) -> None:
    (tmp_path / "not.webm").write_bytes(b"\x1aE\xdf\xa3 not a webm")
    for path in (tmp_path / "not.webm", tmp_path / "missing.webm"):
        with pytest.raises(VideoError, match=path.name):
            measured_duration(path)
        with pytest.raises(VideoError, match=path.name):
            stream_format(path)


def _encode(path: Path, codec: str, pix_fmt: str, sar: Fraction | None = None) -> Path:
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 64, pix_fmt
        if sar is not None:
            stream.codec_context.sample_aspect_ratio = sar

        def frames() -> Iterator[av.VideoFrame]:
            for i, rgb in enumerate(levels_clip(4, 64, 64, step=40)):
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
                frame = frame.reformat(format=pix_fmt)
                frame.pts = i
                yield frame

        mux_frames(container, stream, frames())
    return path


def test_stream_format_names_the_codec_not_the_decoder(tmp_path: Path) -> None:
    prores = _encode(tmp_path / "edit.mov", "prores_ks", "yuv422p10le")
    assert stream_format(prores) == StreamFormat("mov,mp4,m4a,3gp,3g2,mj2", "prores", None)
    wide = _encode(tmp_path / "dv.avi", "mpeg4", "yuv420p", sar=Fraction(16, 9))
    assert stream_format(wide) == StreamFormat("avi", "mpeg4", Fraction(16, 9))
    try:
        av1 = _encode(tmp_path / "a.mkv", "libsvtav1", "yuv420p")
    except (av.error.FFmpegError, ValueError):
        pytest.skip("no AV1 encoder in this PyAV build")
    with av.open(str(av1)) as container:
        decoder = container.streams.video[0].codec_context.name  # libdav1d where PyAV's FFmpeg has it
    assert stream_format(av1) == StreamFormat("matroska,webm", "av1", None), decoder
