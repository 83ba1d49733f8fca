import numpy as np
import pytest

from robojudge.video import VideoError, _sample, frame_cache, probe_video, sample_frames, write_video


@pytest.fixture
def clip(tmp_path):
    frames = np.stack([np.full((24, 32, 3), 10 * i, np.uint8) for i in range(12)])
    return write_video(tmp_path / "c.mp4", frames, fps=8)


@pytest.fixture
def decode_calls(monkeypatch):
    calls = []
    real = _sample.sample_file

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_sample, "sample_file", counting)
    return calls


def test_same_sampling_decodes_once(clip, decode_calls):
    with frame_cache() as cache:
        a = sample_frames(clip, fps=4)
        b = sample_frames(clip, fps=4)
        c = sample_frames(clip, fps=4, gray=True)
    assert a is b and c is not a
    assert (cache.hits, cache.misses) == (1, 2)
    assert len(decode_calls) == 2
    assert not a.frames.flags.writeable  # shared arrays cannot be changed under another metric
    with pytest.raises(ValueError):
        a.frames[0, 0, 0, 0] = 1


def test_no_sharing_outside_a_cache(clip, decode_calls):
    a = sample_frames(clip, fps=4)
    b = sample_frames(clip, fps=4)
    assert a is not b and len(decode_calls) == 2
    assert a.frames.flags.writeable


def test_rewritten_file_is_decoded_again(clip, decode_calls):
    with frame_cache():
        first = sample_frames(clip, fps=None)
        write_video(clip, np.zeros((5, 24, 32, 3), np.uint8), fps=8)
        second = sample_frames(clip, fps=None)
    assert len(first) == 12 and len(second) == 5


def test_byte_bound_evicts_oldest(clip):
    full = 24 * 32 * 3 * 12  # bytes of all 12 RGB frames at native size
    with frame_cache(max_bytes=full) as cache:
        sample_frames(clip, fps=None)  # fills the cache exactly
        sample_frames(clip, fps=None, size=16)  # 16x12 frames: 6912 more bytes, evicts the first
        sample_frames(clip, fps=None, size=16)  # still cached
        sample_frames(clip, fps=None)  # was evicted: decoded again
    assert (cache.hits, cache.misses) == (1, 3)
    assert cache._bytes <= cache.max_bytes


def test_frame_folder_with_a_frame_rewritten_in_place_is_decoded_again(tmp_path):
    """Rewriting a frame leaves the folder's own size and time alone; the key lists its files."""
    import os

    folder = write_video(tmp_path / "frames", np.zeros((4, 8, 8, 3), np.uint8), fps=4)
    first_png = sorted(folder.glob("*.png"))[0]
    with frame_cache() as cache:
        before = sample_frames(folder, fps=None)
        stamp = os.stat(folder).st_mtime_ns
        write_video(tmp_path / "white", np.full((1, 8, 8, 3), 255, np.uint8), fps=4)
        first_png.write_bytes(sorted((tmp_path / "white").glob("*.png"))[0].read_bytes())
        os.utime(folder, ns=(stamp, stamp))  # as if only the file changed, on any file system
        after = sample_frames(folder, fps=None)
    assert cache.misses == 2
    assert before.frames[0].max() == 0 and after.frames[0].min() == 255


def test_samples_carry_the_fingerprint_of_their_file(clip):
    from robojudge.video import FileFingerprint

    with frame_cache():
        got = sample_frames(clip, fps=4)
    assert got.fingerprint == FileFingerprint.of(clip)
    assert sample_frames(clip, fps=4).fingerprint == got.fingerprint  # outside a cache too


def test_two_threads_decoding_one_video_share_one_entry(clip):
    """A judge decodes in threads; a race on one key must not count its bytes twice."""
    import threading

    from robojudge.video._cache import FrameCache

    cache = FrameCache()
    both_in = threading.Barrier(2)

    def compute():
        both_in.wait(timeout=10)  # both threads missed before either stored
        return sample_frames(clip, fps=4)

    got = []

    def lookup():
        got.append(cache.get_or_compute("k", compute))

    threads = [threading.Thread(target=lookup) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got[0] is got[1]
    assert cache._bytes == got[0].frames.nbytes and len(cache._entries) == 1


@pytest.fixture
def probe_calls(monkeypatch):
    calls = []
    real = _sample.probe_file

    def counting(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(_sample, "probe_file", counting)
    return calls


def test_probe_once_per_unchanged_file_inside_a_cache(clip, probe_calls):
    with frame_cache():
        a = probe_video(clip)
        b = probe_video(clip)
        assert a is b and len(probe_calls) == 1
        write_video(clip, np.zeros((5, 40, 48, 3), np.uint8), fps=8)  # a new file under the same name
        c = probe_video(clip)
    assert len(probe_calls) == 2 and (c.width, c.height) == (48, 40) and (a.width, a.height) == (32, 24)
    probe_video(clip)  # no cache open: every call probes
    probe_video(clip)
    assert len(probe_calls) == 4


def test_missing_file_is_still_reported_inside_a_cache(tmp_path):
    with frame_cache(), pytest.raises(VideoError, match="missing.mp4"):
        probe_video(tmp_path / "missing.mp4")


def test_a_file_rewritten_in_place_with_its_times_put_back_is_decoded_again(tmp_path):
    """Same path, inode, size and modification time (rsync --inplace -t, touch -d): only the change
    time, which no program can set, tells the new pixels from the old."""
    import os
    import time

    dark, light = tmp_path / "dark.mp4", tmp_path / "light.mp4"
    write_video(dark, np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    write_video(light, np.full((4, 16, 16, 3), 200, np.uint8), fps=4)
    size = max(dark.stat().st_size, light.stat().st_size)
    for f in (dark, light):  # padded to one size: the container ignores bytes after its end
        f.write_bytes(f.read_bytes().ljust(size, b"\0"))
    clip = tmp_path / "x.mp4"
    clip.write_bytes(dark.read_bytes())
    stamp = clip.stat().st_mtime_ns
    with frame_cache() as cache:
        before = sample_frames(clip, fps=None)
        time.sleep(0.01)
        with open(clip, "r+b") as f:  # in place: the inode stays
            f.write(light.read_bytes())
        os.utime(clip, ns=(stamp, stamp))
        after = sample_frames(clip, fps=None)
    assert cache.misses == 2
    assert before.frames.max() == 0 and after.frames.min() > 150
