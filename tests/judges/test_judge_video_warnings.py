"""What had to be assumed about a judged video reaches its rows and the run's output, as for metrics;
frames with non-square pixels go to the judge at the picture's display aspect."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
import pytest
from _decoder import load_in_decoder
from _judge_cli import app
from _judge_server import FakeServer, Reply, image_sizes, user_text
from typer.testing import CliRunner

from robojudge.judges import FrameSpec, ResponseCache, decode_frames, get_rubric, make_judge
from robojudge.judges._frames import remembered_key
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import FileFingerprint, sample_frames, write_video


@app.command("noop")
def _noop() -> None:  # a second command keeps "judge" a subcommand
    pass


NO_RATE = "no fps.txt in the frame folder; rate assumed to be 30 fps"


def _reply(body: dict[str, Any], n: int) -> Reply:
    key = "instruction_alignment" if "instruction_alignment" in user_text(body) else "physical_adherence"
    return Reply(f'{{"reasoning": "r", "{key}": 4}}')



def _anamorphic(path: Path, rotation: int = 0) -> Path:
    """48x64 stored with 2:1 pixels: a 96x64 picture (turned a quarter when ``rotation``)."""
    rng = np.random.default_rng(0)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 48, 64, "yuv420p"
        stream.codec_context.sample_aspect_ratio = Fraction(2, 1)
        if rotation:
            stream.set_display_rotation(rotation)
        for _ in range(8):
            rgb = rng.integers(0, 256, (64, 48, 3), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def test_a_judged_frame_folder_without_a_rate_says_so_in_rows_and_output(tmp_path: Path) -> None:
    # judge rows had no video_warnings and `robojudge judge` said nothing of the assumed 30 fps
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(8):
        cv2.imwrite(str(folder / f"{i:04d}.png"), np.full((24, 32, 3), 20 * i, np.uint8))
    manifest = tmp_path / "s.jsonl"
    manifest.write_text(json.dumps({"item_id": "nf", "video": "f", "instruction": "wipe"}) + "\n")
    said = f"  nf: {folder}: {NO_RATE}"
    with FakeServer(_reply) as srv:
        args = ["judge", str(manifest), "--backend", "openai", "--model", "m", "--base-url", srv.url,
                "--rubric", "pa,ia", "--cache-dir", str(tmp_path / "c"), "--no-progress"]
        cold = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "cold.sqlite")])
        assert cold.exit_code == 0, cold.output
        sent = srv.count
        # a warm rerun into another store takes the frames' hashes, and their warnings, from the cache
        warm = CliRunner().invoke(app, [*args, "--db", str(tmp_path / "warm.sqlite")])
        assert warm.exit_code == 0, warm.output
        assert srv.count == sent
    for res in (cold, warm):
        assert "2 results with video warnings (1 item):" in res.output and said in res.output.splitlines()
    assert "0 requests sent" in warm.output
    for db in ("cold", "warm"):
        with ResultStore(tmp_path / f"{db}.sqlite") as st:
            rows = st.rows()
        assert len(rows) == 2 and all(r.details["video_warnings"] == [f"{folder}: {NO_RATE}"] for r in rows)
    with ResponseCache(tmp_path / "c") as cache:
        known = cache.get_frames(remembered_key(FileFingerprint.of(folder), FrameSpec()))
    assert known is not None and known["warnings"] == [NO_RATE]


def test_hashes_remembered_without_warnings_are_read_again(
    tmp_path: Path, store: ResultStore, cache: ResponseCache
) -> None:
    # a cache written before the warnings were remembered would give a warm rerun rows without them
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(4):
        cv2.imwrite(str(folder / f"{i:04d}.png"), np.full((24, 32, 3), 40 * i, np.uint8))
    key = remembered_key(FileFingerprint.of(folder), FrameSpec())
    read = decode_frames(folder, FrameSpec())  # one frame: 4 fps of a folder taken for 30 fps
    old = {"hashes": read.hashes, "video_seconds": read.video_seconds}
    cache.put_frames(key, old)
    judge = make_judge({"name": "t", "backend": "mock", "model": "m", "replies": [
        '{"reasoning": "r", "physical_adherence": 4}']})
    judge_items([Item(item_id="nf", video=str(folder))], judge, [get_rubric("pa")], store, cache=cache)
    (row,) = store.rows()
    assert row.details["video_warnings"] == [f"{folder}: {NO_RATE}"]
    assert cache.get_frames(key) == {**old, "warnings": [NO_RATE]}


@pytest.mark.parametrize(("rotation", "shown"), [(0, (96, 64)), (90, (64, 96))])
def test_non_square_pixels_are_sent_at_the_display_aspect(
    tmp_path: Path, store: ResultStore, cache: ResponseCache, rotation: int, shown: tuple[int, int]
) -> None:
    # the judge got the stored 48x64 frames, a 96x64 picture squeezed to half its width, and no warning
    video = _anamorphic(tmp_path / "dv.mp4", rotation)
    judge = make_judge({"name": "t", "model": "m", "base_url": "http://127.0.0.1:9/v1"})
    with FakeServer(_reply) as srv:
        judge = judge.model_copy(update={"base_url": srv.url})
        judge_items([Item(item_id="dv", video=str(video))], judge, [get_rubric("pa")], store, cache=cache)
        assert [image_sizes(b) for b in srv.bodies] == [{shown}]
    (row,) = store.rows()
    w, h = (48, 64) if not rotation else (64, 48)  # as read: stored, then turned
    assert row.details["video_warnings"] == [
        f"{video}: non-square pixels (sample aspect ratio 2:1): the judge is sent the frames stretched to "
        f"the display aspect, {shown[0]}x{shown[1]} (read as stored: {w}x{h})"]


def test_only_non_square_videos_change_their_frame_hashes(tmp_path: Path) -> None:
    # the stretch must leave every other video's frames, and so its cached replies' keys, as they were
    video = _anamorphic(tmp_path / "dv.mp4")
    square = write_video(tmp_path / "sq.mp4", sample_frames(video, fps=None, max_frames=None).frames, fps=8)
    for path, same in ((square, True), (video, False)):
        read = sample_frames(path, fps=4.0, max_frames=32)
        sent = decode_frames(path, FrameSpec())
        assert (sent.hashes == read.hashes) is same
    small = decode_frames(video, FrameSpec(size=48), jpeg_quality=90, keep_pixels=False)
    (jpeg,) = {cv2.imdecode(np.frombuffer(j, np.uint8), cv2.IMREAD_COLOR).shape[:2] for j in small.jpeg(90)}
    assert jpeg == (32, 48)  # the display aspect, longer side 48


def test_a_decoder_process_stretches_too(tmp_path: Path) -> None:
    # the same frames, hashes and warning whether the video is decoded here or in a decoder process
    video = _anamorphic(tmp_path / "dv.mp4")
    here = decode_frames(video, FrameSpec(), jpeg_quality=90)
    with ResponseCache(tmp_path / "c") as cache:
        got = load_in_decoder(video, cache, 90)
    assert not got.has_pixels and got.hashes == here.hashes and got.warnings == here.warnings
    assert got.data_urls(90) == here.data_urls(90) and "96x64" in got.warnings[0]
