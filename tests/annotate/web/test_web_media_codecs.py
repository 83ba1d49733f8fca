"""Which files the app serves as they are is read from their container and codec, not their suffix, and
an anamorphic video is encoded at its display aspect.

Before, every ``.mov``/``.mkv``/``.mp4`` was served as it was, so a ProRes, PNG or FFV1 file gave raters
an empty player (browsers decode none of them), and the WebM made of an anamorphic AVI had square pixels,
so its picture was squashed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from _web_data import PASSWORD, SECRET, cheap_passwords

from _covers import write_mp4_with_cover
from _encode import mux_frames
from robojudge.annotate import add_annotator, assign, init_project
from robojudge.annotate.web import create_app
from robojudge.annotate.web._folders import playable
from robojudge.video import sample_frames

fastapi_testclient = pytest.importorskip("fastapi.testclient")

W, H, N = 32, 24, 6


def _frames() -> np.ndarray:
    """A ramp across, brighter each frame."""
    ramp = np.linspace(0, 60, W)[None, :, None] + np.zeros((H, W, 3))
    return np.stack([ramp + 25 * i for i in range(N)]).astype(np.uint8)


def _write(path: Path, codec: str, pix_fmt: str, *, sar: Fraction | None = None, rotation: int = 0) -> Path:
    """The frames of :func:`_frames` encoded with ``codec`` at 10 fps (pixel aspect ``sar``, shown turned by
    ``rotation`` degrees)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=10)
        stream.width, stream.height, stream.pix_fmt = W, H, pix_fmt
        if sar is not None:
            stream.codec_context.sample_aspect_ratio = sar
        if rotation:
            stream.set_display_rotation(rotation)

        def frames() -> Iterator[av.VideoFrame]:
            for i, rgb in enumerate(_frames()):
                frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=pix_fmt)
                frame.pts = i
                yield frame

        mux_frames(container, stream, frames())
    return path


def _serve(tmp_path: Path, name: str) -> tuple[Path, object]:
    """The response of the app to the media request for the one item of a suite holding the video
    ``name`` (already written into ``tmp_path / "suite"``)."""
    manifest = tmp_path / "suite" / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "ep", "video": name, "instruction": "lift the cup"}) + "\n")
    db = f"sqlite:///{tmp_path / 'ann.sqlite'}"
    with cheap_passwords():
        init_project(manifest, db, "p1", seed=1)
        add_annotator(db, "alice", "annotator", password=PASSWORD)
    assign(db, "p1", ["alice"])
    app = create_app(db, manifest, SECRET)
    try:
        c = fastapi_testclient.TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
        token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/login").text).group(1)
        assert c.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": token}
                      ).status_code == 303
        task = re.search(r'href="/task/([^"]+)"', c.get("/").text).group(1)
        media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{task}").text).group(1)
        return tmp_path / "suite" / name, c.get(f"/media/{media_id}")
    finally:
        app.state.ctx.service.close()


def _encoded(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "cache" / "annotate-media").glob("*.webm"))


@pytest.mark.parametrize(("name", "codec", "pix_fmt"), [
    ("prores.mov", "prores_ks", "yuv422p10le"),
    ("alpha_png.mov", "png", "rgba"),
    ("lossless.mkv", "ffv1", "bgr0"),
    ("mpeg4.mp4", "mpeg4", "yuv420p"),
])
def test_a_codec_browsers_cannot_decode_is_served_as_a_webm(tmp_path, monkeypatch, name, codec, pix_fmt):
    # served as they were by suffix: Chromium said "no supported streams" and raters saw an empty player
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "suite").mkdir()
    _write(tmp_path / "suite" / name, codec, pix_fmt)
    _, r = _serve(tmp_path, name)
    assert r.status_code == 200 and r.headers["content-type"] == "video/webm"
    encoded = _encoded(tmp_path)
    assert len(encoded) == 1 and encoded[0].read_bytes() == r.content
    with av.open(str(encoded[0])) as container:
        assert container.streams.video[0].codec_context.codec.canonical_name == "vp9"
    back = sample_frames(encoded[0], fps=None, max_frames=None)
    assert back.frames.shape == _frames().shape
    assert np.abs(back.frames.astype(int) - _frames()).mean() < 8  # lossy, but the same frames in order


@pytest.mark.parametrize(("name", "codec", "kind"), [
    ("h264.mov", "libx264", "video/quicktime"),
    ("vp9.mkv", "libvpx-vp9", "video/x-matroska"),
])
def test_a_codec_browsers_decode_is_still_served_as_it_is(tmp_path, monkeypatch, name, codec, kind):
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "suite").mkdir()
    path = _write(tmp_path / "suite" / name, codec, "yuv420p")
    _, r = _serve(tmp_path, name)
    assert r.status_code == 200 and r.headers["content-type"] == kind
    assert r.content == path.read_bytes() and not _encoded(tmp_path)


@pytest.mark.parametrize("name", ["tagged.mp4", "tagged.m4v"])
def test_a_cover_picture_listed_first_is_not_taken_for_the_video(tmp_path, name):
    # the cover (PNG) was read as the video stream: an H.264 clip browsers play was encoded into a WebM
    # of its one cover frame
    path = write_mp4_with_cover(tmp_path / name, _frames(), fps=10, cover_first=True)
    assert playable(path, cache_dir=tmp_path / "cache") == path
    assert not (tmp_path / "cache").exists()


def test_the_choice_follows_the_file_when_it_changes(tmp_path):
    path = _write(tmp_path / "clip.mov", "libx264", "yuv420p")
    assert playable(path, cache_dir=tmp_path / "cache") == path
    _write(path, "prores_ks", "yuv422p10le")  # exported again in place: the old file's answer is not reused
    served = playable(path, cache_dir=tmp_path / "cache")
    assert served.suffix == ".webm" and served.parent == tmp_path / "cache" / "annotate-media"


def test_an_anamorphic_avi_is_served_at_its_display_aspect(tmp_path, monkeypatch):
    # the WebM had the stored 32x24 pixels, square: a 64:27 picture shown at 4:3
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "suite").mkdir()
    _write(tmp_path / "suite" / "wide.avi", "mpeg4", "yuv420p", sar=Fraction(16, 9))
    _, r = _serve(tmp_path, "wide.avi")
    assert r.status_code == 200 and r.headers["content-type"] == "video/webm"
    with av.open(str(_encoded(tmp_path)[0])) as container:
        stream = container.streams.video[0]
        shown = stream.width * (stream.sample_aspect_ratio or 1) / stream.height
    assert (stream.width, stream.height) == (57, 24)  # 32 x 16/9 = 56.9 columns of square pixels
    assert float(shown) == pytest.approx(float(Fraction(W, H) * Fraction(16, 9)), rel=0.02)


@pytest.mark.parametrize(("name", "sar", "rotation", "size"), [
    ("narrow.avi", Fraction(8, 9), 0, (32, 27)),  # narrow pixels: the height grows, so no column is dropped
    ("turned.mp4", Fraction(16, 9), 90, (24, 57)),  # turned a quarter: the stored rows are shown as columns
])
def test_the_display_aspect_of_narrow_and_turned_pixels(tmp_path, name, sar, rotation, size):
    path = _write(tmp_path / name, "mpeg4", "yuv420p", sar=sar, rotation=rotation)
    served = playable(path, cache_dir=tmp_path / "cache")
    back = sample_frames(served, fps=None, max_frames=None)
    assert (back.frames.shape[2], back.frames.shape[1]) == size


def test_a_new_reader_version_encodes_the_video_again(tmp_path, monkeypatch):
    # The WebM was named by the encoding and the file alone, so a 10-bit clip encoded before reader
    # version 5 kept the old, darker picture after the upgrade, while judges and metrics read the new.
    from robojudge.annotate.web import _folders

    path = _write(tmp_path / "clip.mov", "prores_ks", "yuv422p10le")
    first = playable(path, cache_dir=tmp_path / "cache")
    made = first.stat().st_mtime_ns
    assert playable(path, cache_dir=tmp_path / "cache") == first  # the same reader: encoded once
    from robojudge.video import READER_VERSION

    monkeypatch.setattr(_folders, "READER_VERSION", f"{READER_VERSION}-next", raising=False)
    again = playable(path, cache_dir=tmp_path / "cache")
    assert again != first and again.parent == first.parent
    assert sorted(first.parent.glob("*.webm")) == sorted([first, again])
    assert first.stat().st_mtime_ns == made  # (the old file is left as it was, no longer served)
    assert np.array_equal(sample_frames(again, fps=None, max_frames=None).frames,
                          sample_frames(first, fps=None, max_frames=None).frames)  # the same encoder
