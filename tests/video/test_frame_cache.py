import numpy as np
import pytest

from robojudge.video import _sample, frame_cache, sample_frames, write_video


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
