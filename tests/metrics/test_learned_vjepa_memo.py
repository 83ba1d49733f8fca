"""The V-JEPA metrics' per-process memos of clip spans and embeddings: bounded, keyed by the file's identity.

No network is needed: the span memo is filled by decoding alone, and the embedding memo shares its
class and its key.
"""

import os

import numpy as np
import pytest

from robojudge.metrics.learned import hf_vjepa
from robojudge.metrics.learned.hf_vjepa import VJepaClip, clip_span
from robojudge.video import write_video

CFG = VJepaClip(num_frames=4, size=16)


def _video(path, frames, seed):
    rng = np.random.default_rng(seed)
    return str(write_video(path, rng.integers(0, 255, (frames, 24, 32, 3), dtype=np.uint8), fps=8))


@pytest.fixture
def fresh_memos(monkeypatch):
    monkeypatch.setattr(hf_vjepa, "_SPANS", hf_vjepa._Memo())
    monkeypatch.setattr(hf_vjepa, "_EMBEDDINGS", hf_vjepa._Memo())


def test_span_memo_keeps_at_most_its_bound_least_recent_out(tmp_path, monkeypatch, fresh_memos):
    monkeypatch.setattr(hf_vjepa, "MEMO_ENTRIES", 2)
    a, b, c = (_video(tmp_path / f"{n}.mp4", 6, seed) for seed, n in enumerate("abc"))
    for path in (a, b, c):
        _, sampled = clip_span(path, CFG)
        assert sampled is not None  # first sight: decoded
    assert len(hf_vjepa._SPANS) == 2
    assert clip_span(c, CFG)[1] is None  # kept
    assert clip_span(a, CFG)[1] is not None  # the oldest went first, so it is decoded again
    assert len(hf_vjepa._SPANS) == 2


def test_a_file_replaced_with_the_same_size_and_time_is_decoded_again(tmp_path, fresh_memos):
    # A sync tool that writes a new file beside the old one, renames it over it and restores the
    # time leaves path, size and modification time as they were; only the file's identity changed.
    long_clip, short_clip = _video(tmp_path / "long.mp4", 8, 0), _video(tmp_path / "short.mp4", 4, 1)
    pad = os.path.getsize(long_clip) - os.path.getsize(short_clip)
    assert pad > 0
    with open(short_clip, "ab") as f:  # trailing bytes the decoder ignores: same size as the long clip
        f.write(b"\0" * pad)
    assert os.path.getsize(short_clip) == os.path.getsize(long_clip)
    before = os.stat(long_clip)
    first, _ = clip_span(long_clip, CFG)
    os.utime(short_clip, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(short_clip, long_clip)
    after = os.stat(long_clip)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    second, sampled = clip_span(long_clip, CFG)
    assert sampled is not None and second != first
    assert second.seconds < first.seconds


def test_a_missing_file_is_reported_and_nothing_is_kept(tmp_path, fresh_memos):
    with pytest.raises(Exception, match="missing.mp4"):
        clip_span(str(tmp_path / "missing.mp4"), CFG)
    assert len(hf_vjepa._SPANS) == 0
