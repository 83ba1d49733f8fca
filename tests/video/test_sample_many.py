"""Several samplings of one file from one decode (``sample_file_many``, ``prefetch_frames``)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np
import pytest
from _videogen import textured_clip

from robojudge.video import VideoError, frame_cache, prefetch_frames, sample_frames, write_video
from robojudge.video import _filesample as FS
from robojudge.video._filesample import Sampling, sample_file, sample_file_many
from robojudge.video._post import PostProcess

# (fps, max_frames, size, gray, spread, resample): the weights-free set's two, and others besides
SAMPLINGS = [
    (None, None, None, False, "uniform", "area"),  # native RGB, every frame
    (8.0, None, (64, 64), True, "uniform", "area"),  # RoboJudge App. B.3's gray sequence (scaled down)
    (None, None, 96, False, "uniform", "fast"),  # the fast profile's bilinear shrink
    (None, 10, None, False, "head", "area"),  # the first frames only
    (4.0, 5, 48, True, "middle", "area"),
]


def _sampling(args: tuple) -> Sampling:
    fps, max_frames, size, gray, spread, resample = args
    return Sampling(fps, max_frames, PostProcess(size, gray, resample), spread)


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    # 45 frames at 24 fps of panning noise (inter-frame prediction at work: B- and P-frames)
    path = tmp_path_factory.mktemp("many") / "clip.mp4"
    return write_video(path, textured_clip(45, 160, 96), fps=24)


@pytest.fixture
def decodes(monkeypatch) -> list[int]:
    """How many frames each pass over the packets decoded (one entry per pass)."""
    passes: list[int] = []
    real = FS._Plan._decode

    def counting(ctx, packets, wanted, *rest):
        passes.append(0)
        for frame in real(ctx, packets, wanted, *rest):
            passes[-1] += 1
            yield frame

    monkeypatch.setattr(FS._Plan, "_decode", staticmethod(counting))
    return passes


def _same(a, b) -> None:
    assert a.frames.dtype == b.frames.dtype and np.array_equal(a.frames, b.frames)
    assert np.array_equal(a.timestamps, b.timestamps) and np.array_equal(a.indices, b.indices)
    assert (a.source_fps, a.warnings, a.path) == (b.source_fps, b.warnings, b.path)


def test_one_pass_gives_each_sampling_what_it_gives_alone(clip, decodes):
    alone = [sample_file(clip, s.fps, s.max_frames, s.post, s.spread) for s in map(_sampling, SAMPLINGS)]
    assert len(decodes) == len(SAMPLINGS)
    decodes.clear()
    together = sample_file_many(clip, [_sampling(s) for s in SAMPLINGS])
    assert len(decodes) == 1  # one pass for all five
    for a, b in zip(alone, together, strict=True):
        _same(a, b)
    # 45 frames at 24 fps last 1.875 s: 8 fps picks k / 8 s for k = 0..14; 160x96 to 48 px wide is 48x29
    assert [t.frames.shape for t in together] == [(45, 96, 160, 3), (15, 64, 64), (45, 58, 96, 3),
                                                  (10, 96, 160, 3), (5, 29, 48)]
    assert sample_file_many(clip, []) == []


def test_each_picked_frame_is_converted_to_rgb_once(clip, monkeypatch):
    converted: list[int] = []
    real = FS.to_rgb
    monkeypatch.setattr(FS, "to_rgb", lambda frame, path: (converted.append(frame.pts), real(frame, path))[1])
    together = sample_file_many(clip, [_sampling(SAMPLINGS[1]), _sampling(SAMPLINGS[4])])
    picked = set(together[0].indices) | set(together[1].indices)
    assert len(converted) == len(set(converted)) == len(picked)


def test_a_stream_without_usable_stamps_takes_the_two_pass_way_for_each(tmp_path, decodes, monkeypatch):
    # A raw H.264 elementary stream: packets carry no time stamps, so no plan can be made
    frames = textured_clip(20, 64, 48)
    path = tmp_path / "raw.h264"
    with av.open(str(path), "w", format="h264") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for rgb in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    two_pass: list[object] = []
    real = FS._two_pass
    monkeypatch.setattr(FS, "_two_pass", lambda *a: (two_pass.append(a), real(*a))[1])
    chosen = [SAMPLINGS[0], SAMPLINGS[4]]
    alone = [sample_file(path, s.fps, s.max_frames, s.post, s.spread) for s in map(_sampling, chosen)]
    together = sample_file_many(path, [_sampling(s) for s in chosen])
    assert len(two_pass) == 4 and decodes == []
    for a, b in zip(alone, together, strict=True):
        _same(a, b)


def _kw(args: tuple) -> dict:
    return dict(zip(("fps", "max_frames", "size", "gray", "spread", "resample"), args, strict=True))


def test_prefetch_fills_the_cache_with_what_sample_frames_would_decode(clip, decodes):
    wanted = [_kw(s) for s in SAMPLINGS[:2]]
    assert prefetch_frames(clip, wanted) == 0  # no cache open: nothing to keep them in
    assert decodes == []
    fresh = [sample_frames(clip, **kw) for kw in wanted]
    decodes.clear()
    with frame_cache() as cache:
        assert prefetch_frames(clip, wanted + wanted[:1]) == 2  # a repeated sampling counts once
        assert len(decodes) == 1 and cache.misses == 2
        got = [sample_frames(clip, **kw) for kw in wanted]
        assert len(decodes) == 1 and cache.hits == 2  # both now served from the cache
        for a, b in zip(fresh, got, strict=True):
            _same(a, b)
            assert b.fingerprint is not None and not b.frames.flags.writeable
        # what the cache holds already is not decoded again; one missing one is left to sample_frames
        assert prefetch_frames(clip, wanted) == 0
        assert prefetch_frames(clip, [*wanted, _kw(SAMPLINGS[3])]) == 0
        assert len(decodes) == 1


def test_prefetch_leaves_what_would_not_fit_and_what_cannot_be_read(clip, tmp_path, decodes):
    wanted = [_kw(s) for s in SAMPLINGS[:2]]
    native = 45 * 96 * 160 * 3
    with frame_cache(max_bytes=native) as cache:  # the RGB frames alone fill it: no room for both
        assert prefetch_frames(clip, wanted) == 0 and cache.misses == 0
    with frame_cache(max_bytes=native + 16 * 64 * 64) as cache:  # exactly room for both
        assert prefetch_frames(clip, wanted) == 2
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    with frame_cache():
        assert prefetch_frames(broken, wanted) == 0
        assert prefetch_frames(tmp_path / "missing.mp4", wanted) == 0
        with pytest.raises(VideoError):  # the reader meets the error itself
            sample_frames(broken, **wanted[0])
        folder = tmp_path / "frames"
        write_video(folder, textured_clip(4, 32, 24), fps=4)
        assert prefetch_frames(folder, wanted) == 0
    with pytest.raises(ValueError, match="fps"):
        prefetch_frames(clip, [{"fps": -1.0}])
    with pytest.raises(ValueError, match="not arguments of sample_frames: colour"):
        prefetch_frames(clip, [{"colour": True}])
    with pytest.raises(ValueError, match="spread"):
        prefetch_frames(clip, [{"spread": "sideways"}])


def test_samplings_that_pick_the_same_frames_share_one_array(clip, monkeypatch):
    # 24 fps asked of a 24 fps clip (and 100 fps) picks every frame, as no rate does: made once
    made: list[int] = []
    real = FS._run_plans
    monkeypatch.setattr(FS, "_run_plans", lambda jobs, *a: (made.append(len(jobs)), real(jobs, *a))[1])
    same = [Sampling(None, None, PostProcess(None, False)), Sampling(24.0, None, PostProcess(None, False)),
            Sampling(100.0, None, PostProcess(None, False)), Sampling(24.0, None, PostProcess(48, False))]
    got = sample_file_many(clip, same)
    assert made == [2]  # native (three of them) and the 48 px one
    assert got[0] is got[1] is got[2] and got[3] is not got[0]
    for s, g in zip(same, got, strict=True):
        _same(sample_file(clip, s.fps, s.max_frames, PostProcess(s.post.size, False), s.spread), g)


def test_a_head_read_decodes_only_its_frames_and_counts_the_rest(clip, tmp_path, decodes):
    # What iq1_psnr/iq1_ssim read of a long reference: the first frames at the common rate, and how many
    # the whole video would give at that rate (SampledFrames.picked), without decoding them.
    whole = sample_frames(clip, fps=8.0, max_frames=None)
    decodes.clear()
    head = sample_frames(clip, fps=8.0, max_frames=4, spread="head")
    assert len(head) == 4 and head.picked == len(whole) == whole.picked == 15
    assert np.array_equal(head.frames, whole.frames[:4]) and np.array_equal(head.indices, whole.indices[:4])
    assert decodes and decodes[-1] < 45  # the decode stopped after the 4th pick (frame 9 of 45)
    frames = textured_clip(12, 32, 24)
    for name in ("folder", "a.gif"):  # a frame folder, and a GIF (its stamps in centiseconds)
        path = write_video(tmp_path / name, frames, fps=12)
        read = sample_frames(path, fps=6.0, max_frames=2, spread="head")
        assert len(read) == 2 and read.picked == len(sample_frames(path, fps=6.0, max_frames=None)) == 6


def test_each_prefetched_sampling_counts_the_alpha_of_its_own_frames(tmp_path: Path) -> None:
    # Audit (codecs F3): with prefetch_frames, every sampling got the alpha warning counted over all the
    # samplings' frames: 4 opaque frames picked at 4 fps warned of the 6 transparent frames the other
    # sampling (every frame) read.
    path = tmp_path / "alpha.mov"
    with av.open(str(path), "w") as out:  # PNG-in-MOV at 30 fps; frames 1-6 have transparent pixels
        stream = out.add_stream("png", rate=30)
        stream.width = stream.height = 16
        stream.pix_fmt = "rgba"
        for i in range(30):
            rgba = np.full((16, 16, 4), 255, np.uint8)
            rgba[..., 0] = 8 * i
            if 1 <= i <= 6:
                rgba[:4, :4, 3] = 0
            frame = av.VideoFrame.from_ndarray(rgba, format="rgba")
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    alone = sample_frames(path, fps=4)
    every = sample_frames(path, fps=None, max_frames=None)
    assert alone.indices.tolist() == [0, 7, 15, 22] and alone.warnings == ()
    assert every.warnings[0].startswith("alpha channel ignored: 6 of the 30 frames read")
    with frame_cache():
        prefetch_frames(path, [{"fps": 4}, {"fps": None, "max_frames": None}])
        assert sample_frames(path, fps=4).warnings == alone.warnings
        assert sample_frames(path, fps=None, max_frames=None).warnings == every.warnings
