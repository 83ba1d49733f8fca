"""A file damaged inside its stream is read with a ``damaged: ...`` warning, wherever it is read.

Found by the logging audit of 2026-12-07 (F1): a clip with a few bytes overwritten in its frame data
decoded with concealed blocks, its PSNR fell from 58.6 to 27.9 dB, and nothing said why. The damage is
made here by :func:`damage_packets`, which writes random bytes into the back half of several packets'
data: which frames the decoder conceals, and how many, depends on the FFmpeg build, so the tests look
for the warning, never for its counts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import av
import pytest
from _videogen import damage_packets, textured_clip

from _score_cli import score_one
from robojudge.run import LocalProcessExecutor, SerialExecutor, build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item, validate_manifest
from robojudge.video import DecoderPool, VideoError, sample_frames, video_warnings, write_video
from robojudge.video._decode import StreamMeta
from robojudge.video._timing import FrameTimes, check_complete


def _damaged(warnings: object) -> list[str]:
    return [w for w in warnings if "damaged: " in w]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("damaged")
    intact = write_video(folder / "intact.mp4", textured_clip(32, 96, 64), fps=16)
    return intact, damage_packets(intact, folder / "damaged.mp4")


@pytest.mark.parametrize(("fps", "max_frames"), [(None, None), (4.0, 8)])
def test_sampling_a_damaged_file_says_so(clips: tuple[Path, Path], fps: float | None,
                                         max_frames: int | None) -> None:
    intact, damaged = clips
    assert sample_frames(intact, fps=fps, max_frames=max_frames).warnings == ()
    got = sample_frames(damaged, fps=fps, max_frames=max_frames)
    said = _damaged(got.warnings)
    assert len(said) == 1, got.warnings
    assert said[0].startswith("damaged: ") and "undecodable" in said[0] and "(concealed)" in said[0]
    assert "truncated" not in " ".join(got.warnings)


def test_every_read_says_so(clips: tuple[Path, Path]) -> None:
    # The count is each decode's own, not a log's (whose callback is the process's, and drops repeated
    # lines). Frame-threaded decoding may conceal one frame more or less from one read to the next.
    _, damaged = clips
    for _ in range(3):
        assert len(_damaged(sample_frames(damaged, fps=None, max_frames=None).warnings)) == 1


def test_frames_decoded_in_a_worker_process_bring_their_warning(clips: tuple[Path, Path]) -> None:
    intact, damaged = clips
    pool = DecoderPool(1)
    try:
        with video_warnings() as found:
            got = asyncio.run(pool.prepare(damaged, None, None, None))
            asyncio.run(pool.prepare(intact, None, None, None))
    finally:
        pool.close()
    assert _damaged(got.warnings)
    assert found == [f"{damaged}: {w}" for w in got.warnings]  # nothing about the intact file


def _meta(frames: int) -> StreamMeta:
    return StreamMeta(time_base=None, fps=10.0, frame_count=frames, duration=frames / 10, codec="h264")


def test_frames_lost_to_undecodable_packets_are_damage_not_truncation() -> None:
    timing = FrameTimes([i / 10 for i in range(45)], 10.0, 0.0)
    path = Path("clip.mp4")
    assert check_complete(path, 45, timing, _meta(48)) == (
        "truncated: decoded 45 of 48 declared frames (4.5 s of 4.8 s)",)
    # three packets rejected inside the stream account for the three frames missing: the file is whole
    assert check_complete(path, 45, timing, _meta(48), skipped=3) == (
        "damaged: decoded 45 of 48 declared frames (4.5 s of 4.8 s)",)
    # one rejected packet does not account for a shortfall of three: the file also ends early
    assert check_complete(path, 45, timing, _meta(48), skipped=1)[0].startswith("truncated: ")
    with pytest.raises(VideoError, match="damaged: decoded 20 of 48"):
        check_complete(path, 20, FrameTimes(timing.times[:20], 10.0, 0.0), _meta(48), skipped=28)


@pytest.mark.parametrize(
    "executor", [SerialExecutor, lambda: LocalProcessExecutor(2)], ids=["serial", "pool"]
)
def test_the_stored_row_and_the_run_summary_carry_the_warning(
    tmp_path: Path, clips: tuple[Path, Path], executor: object
) -> None:
    intact, damaged = clips
    items = [Item(item_id="hurt", video=str(damaged), instruction="push"),
             Item(item_id="whole", video=str(intact), instruction="push")]
    with ResultStore(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        s = score_items(items, build_requests(["pixel_frame_consistency"]), store,
                        executor=executor())  # type: ignore[operator]
        rows = {r.item_id: r for r in store.rows()}
    assert (s.ok, s.failed) == (2, 0)
    said = rows["hurt"].details["video_warnings"]
    assert _damaged(said) and all(w.startswith(f"{damaged}: ") for w in said)
    assert "video_warnings" not in (rows["whole"].details or {})
    assert s.video_warnings == {"hurt": said}


def test_score_lists_the_damaged_video_at_the_end(tmp_path: Path, clips: tuple[Path, Path]) -> None:
    _, damaged = clips
    result = score_one(tmp_path, "hurt", damaged)
    assert "1 result with video warnings (1 item)" in result.output
    assert f"hurt: {damaged}: damaged: " in result.output


def test_validate_deep_warns_and_the_default_cannot_see_it(tmp_path: Path, clips: tuple[Path, Path]) -> None:
    for clip in clips:
        shutil.copy(clip, tmp_path / clip.name)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": i, "video": p}) + "\n"
                                for i, p in (("hurt", "damaged.mp4"), ("whole", "intact.mp4"))))
    deep = validate_manifest(manifest, media="deep")
    assert [(p.item_id, p.field, p.severity) for p in deep] == [("hurt", "video", "warning")]
    assert _damaged([deep[0].message])
    # Opening a file decodes its first frame only: damage further in is found by --deep alone.
    assert validate_manifest(manifest, media="open") == []


@pytest.mark.parametrize("suffix", [".mp4", ".mkv"])
def test_frames_before_the_first_keyframe_are_missing_at_the_head(tmp_path: Path, suffix: str) -> None:
    # Audit (codecs F6): a stream remuxed without its first 5 packets (a capture begun mid-GOP) decodes
    # from its first keyframe on; the decoder drops the 5 frames before it without an error, and the
    # file was called "truncated: decoded 50 of 55 declared frames", an end cut.
    whole = tmp_path / "gop10.mp4"
    with av.open(str(whole), "w") as out:
        stream = out.add_stream("libx264", rate=30,
                                options={"g": "10", "bf": "0", "keyint_min": "10", "sc_threshold": "0"})
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for rgb in textured_clip(60, 32, 32):
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    path = tmp_path / f"midgop{suffix}"
    with av.open(str(whole)) as src, av.open(str(path), "w") as dst:
        into = dst.add_stream_from_template(src.streams.video[0])
        for k, packet in enumerate(p for p in src.demux(video=0) if p.dts is not None):
            if k >= 5:
                packet.stream = into
                dst.mux(packet)
    got = sample_frames(path, fps=None, max_frames=None)
    assert len(got.frames) == 50
    said = [w for w in got.warnings if "keyframe" in w or "truncated" in w]
    assert len(said) == 1 and said[0].startswith(
        "damaged: the stream starts 5 frames before its first keyframe; those frames cannot be decoded (")


def test_a_truncated_file_with_a_lost_head_is_still_called_truncated() -> None:
    # 2 frames lost before the first keyframe do not explain 20 missing: the end is cut too
    meta = StreamMeta(None, 30.0, 60, 2.0, "h264")
    timing = FrameTimes([i / 30 for i in range(40)], 30.0, 0.0)
    (text,) = check_complete(Path("x.mp4"), 40, timing, meta, lead=2)
    assert text == "truncated: decoded 40 of 60 declared frames (1.3 s of 2.0 s)"
    (text,) = check_complete(Path("x.mp4"), 40, timing, meta, lead=20)
    assert text.startswith("damaged: the stream starts 20 frames before its first keyframe")
