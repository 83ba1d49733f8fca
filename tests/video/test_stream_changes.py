"""What reading a video as RGB frames of one size changes is said in its warnings: a resolution that
changes mid-stream (later frames resized to the first one's size) and an alpha channel (dropped)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import textured_clip

from robojudge.video import frame_cache, sample_frames, video_warnings


def _encode(path: Path, frames: np.ndarray, codec: str, pix_fmt: str, fmt: str | None = None,
            source: str = "rgb24") -> Path:
    with av.open(str(path), "w", format=fmt) as container:
        stream = container.add_stream(codec, rate=8)
        stream.height, stream.width, stream.pix_fmt = frames.shape[1], frames.shape[2], pix_fmt
        for image in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format=source)):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def _joined(tmp_path: Path, first: np.ndarray, second: np.ndarray) -> Path:
    """Two raw H.264 streams of other frame sizes, one after the other: a stream whose resolution changes
    (as a camera or a concatenation leaves it)."""
    a = _encode(tmp_path / "a.h264", first, "libx264", "yuv420p", "h264").read_bytes()
    b = _encode(tmp_path / "b.h264", second, "libx264", "yuv420p", "h264").read_bytes()
    joined = tmp_path / "joined.h264"
    joined.write_bytes(a + b)
    return joined


def test_a_resolution_change_mid_stream_is_a_warning(tmp_path: Path) -> None:
    path = _joined(tmp_path, textured_clip(15, 128, 96), textured_clip(12, 160, 120, seed=1))
    every = sample_frames(path, fps=None, max_frames=None)
    assert every.frames.shape == (27, 96, 128, 3)  # the later frames resized to the first size, as before
    [warning] = [w for w in every.warnings if "frame size" in w]
    assert warning == (
        "the frame size changes mid-stream: the first frame read is 128x96, frame 15 160x120 (the first "
        "read at another size, counting every frame from 0); all are resized to 128x96, the first frame's "
        "output size")
    # At 4 fps frames 0, 2, ..., 14, 16, ... are read: frame 16 is the first of them at the new size; and
    # with a size asked for, every frame is resized to it, from both sizes.
    half = sample_frames(path, fps=4, max_frames=None, size=(64, 64), gray=True)
    assert half.indices[8] == 16 and half.frames.shape[1:] == (64, 64)
    assert any("frame 16 160x120" in w and "resized to 64x64" in w for w in half.warnings)
    # It reaches the warnings of whoever reads the video, fresh or from the cache.
    with frame_cache(), video_warnings() as found:
        sample_frames(path, fps=None, max_frames=None)
        sample_frames(path, fps=None, max_frames=None)
    assert found.count(f"{path}: {warning}") == 1


def test_a_change_of_aspect_ratio_says_the_frames_are_stretched(tmp_path: Path) -> None:
    path = _joined(tmp_path, textured_clip(6, 128, 96), textured_clip(6, 96, 128, seed=1))
    warnings = sample_frames(path, fps=None, max_frames=None).warnings
    assert any("frame 6 96x128" in w and w.endswith("which stretches the later ones (another aspect ratio)")
               for w in warnings)


def test_one_size_throughout_gives_no_size_warning(tmp_path: Path) -> None:
    path = _joined(tmp_path, textured_clip(6, 128, 96), textured_clip(6, 128, 96, seed=1))
    assert not any("frame size" in w for w in sample_frames(path, fps=None, max_frames=None).warnings)


def _rgba(alpha: int) -> np.ndarray:
    rgb = textured_clip(6, 64, 48)
    return np.concatenate([rgb, np.full((*rgb.shape[:3], 1), alpha, np.uint8)], axis=3)


@pytest.mark.parametrize("alpha", [0, 128])
def test_a_transparent_alpha_channel_is_a_warning(tmp_path: Path, alpha: int) -> None:
    frames = _rgba(alpha)
    frames[2:, ..., 3] = 255  # two frames of six transparent, the rest opaque
    path = _encode(tmp_path / "alpha.mov", frames, "png", "rgba", source="rgba")
    read = sample_frames(path, fps=None, max_frames=None)
    assert read.warnings == (
        f"alpha channel ignored: 2 of the 6 frames read have transparent pixels (lowest alpha {alpha} of "
        "255); frames are read as their stored colours, as if opaque, not composited onto a background",)
    assert np.array_equal(read.frames, frames[..., :3])  # the stored colours, unchanged


def test_an_opaque_alpha_channel_says_nothing(tmp_path: Path) -> None:
    path = _encode(tmp_path / "opaque.mov", _rgba(255), "png", "rgba", source="rgba")
    assert sample_frames(path, fps=None, max_frames=None).warnings == ()


def test_an_alpha_channel_the_decoder_does_not_read_is_a_warning(tmp_path: Path) -> None:
    # VP9 keeps alpha beside the colour (WebM alpha_mode 1); FFmpeg's own VP9 decoder drops it.
    try:
        path = _encode(tmp_path / "alpha.webm", _rgba(0), "libvpx-vp9", "yuva420p", source="rgba")
    except (av.error.FFmpegError, ValueError) as exc:  # no libvpx in this FFmpeg
        pytest.skip(f"cannot write VP9 with alpha: {exc}")
    warnings = sample_frames(path, fps=None, max_frames=None).warnings
    assert "alpha channel ignored: the stream declares one (WebM alpha_mode 1)" in " ".join(warnings)
