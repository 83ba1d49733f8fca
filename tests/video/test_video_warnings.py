"""Warnings about a video reach whoever sampled it: collected per block, carried by prepared frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _videogen import levels_clip

from robojudge.video import (
    frame_cache,
    prepare_frames,
    probe_video,
    sample_frames,
    video_warnings,
    write_video,
)

ASSUMED = "no fps.txt in the frame folder; rate assumed to be 30 fps"


def _folder_without_rate(tmp_path: Path) -> Path:
    folder = write_video(tmp_path / "frames", levels_clip(8), fps=8)
    (folder / "fps.txt").unlink()
    return folder


def test_collected_once_per_block_from_fresh_and_cached_samplings(tmp_path: Path) -> None:
    folder = _folder_without_rate(tmp_path)
    clean = write_video(tmp_path / "clean.mp4", levels_clip(8), fps=8)
    with frame_cache() as cache:
        with video_warnings() as first:
            sample_frames(folder, fps=4)
            sample_frames(folder, fps=4)
            sample_frames(clean, fps=4)
        with video_warnings() as second:  # a cache hit still tells the new block
            sample_frames(folder, fps=4)
    assert cache.hits == 2
    assert first == second == [f"{folder}: {ASSUMED}"]


def test_nested_blocks_and_probes(tmp_path: Path) -> None:
    folder = _folder_without_rate(tmp_path)
    with video_warnings() as outer:
        with video_warnings() as inner:
            probe_video(folder)
        sample_frames(folder, fps=None)
    assert inner == [f"{folder}: {ASSUMED}"] and outer == inner
    sample_frames(folder)  # outside any block: nothing collects, nothing fails


def test_prepared_frames_carry_the_warnings(tmp_path: Path) -> None:
    folder = _folder_without_rate(tmp_path)
    prepared = prepare_frames(folder, fps=4, max_frames=32, size=None)
    assert prepared.warnings == (ASSUMED,) and prepared.path == folder
    (folder / "fps.txt").write_text("8")
    again = prepare_frames(folder, fps=4, max_frames=32, size=None)
    assert again.warnings == () and np.array_equal(again.timestamps, [0, 0.25, 0.5, 0.75])


def test_frames_decoded_in_a_worker_process_report_to_the_callers_block(tmp_path: Path) -> None:
    import asyncio

    from robojudge.video import DecoderPool

    folder = _folder_without_rate(tmp_path)
    pool = DecoderPool(1)
    try:
        with video_warnings() as found:
            got = asyncio.run(pool.prepare(folder, 4, 32, None))
    finally:
        pool.close()
    assert got.warnings == (ASSUMED,)
    assert found == [f"{folder}: {ASSUMED}"]
