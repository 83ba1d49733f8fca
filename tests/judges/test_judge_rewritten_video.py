"""A video rewritten in place with its modification time put back is judged anew, not from the
frame hashes remembered for the old file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.run import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


def _reply(request: Any) -> str:
    return json.dumps({"reasoning": "r", "physical_adherence": 3})


def test_a_video_rewritten_in_place_is_asked_about_again(tmp_path: Path) -> None:
    dark, light = tmp_path / "dark.mp4", tmp_path / "light.mp4"
    write_video(dark, np.zeros((8, 32, 32, 3), np.uint8), fps=4)
    write_video(light, np.full((8, 32, 32, 3), 200, np.uint8), fps=4)
    size = max(dark.stat().st_size, light.stat().st_size)
    for f in (dark, light):
        f.write_bytes(f.read_bytes().ljust(size, b"\0"))
    clip = tmp_path / "x.mp4"
    clip.write_bytes(dark.read_bytes())
    stamp = clip.stat().st_mtime_ns
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": ["unused"]})
    items = [Item(item_id="x", video=str(clip), instruction="pick")]
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
        first = judge_items(items, cfg, [get_rubric("pa")], store, cache=cache,
                            backend=MockBackend(cfg, _reply), decode_workers=0)
        assert first.stats.sent == 1
        time.sleep(0.01)
        with open(clip, "r+b") as f:  # same inode, same size ...
            f.write(light.read_bytes())
        os.utime(clip, ns=(stamp, stamp))  # ... same modification time: new pixels
        again = judge_items(items, cfg, [get_rubric("pa")], store, cache=cache,
                            backend=MockBackend(cfg, _reply), decode_workers=0)
        assert again.stale == 1  # the row's fingerprint (a content hash) saw the change ...
        assert again.stats.sent == 1 and again.stats.cache_hits == 0  # ... and the new frames are asked about
