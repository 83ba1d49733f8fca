"""A frame folder holding an image whose name is not UTF-8 (a Latin-1 ``frame_004\\xe9.png``).

Python lists such a name with a surrogate escape (``'\\udce9'``), which has no UTF-8 encoding: the
digest cache, OpenCV and the store each met it in turn.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from robojudge.run import build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item

LATIN1 = os.fsdecode(b"frame_001\xe9.png")


def _folder(path: Path, names: list[str]) -> str:
    path.mkdir()
    for k, name in enumerate(names):
        frame = np.full((16, 16, 3), 30 + 50 * k, np.uint8)
        frame[4:8, 4 + 4 * k:8 + 4 * k] = 255 - 50 * k  # a square moving across
        Image.fromarray(frame).save(path / name, format="PNG")
    (path / "fps.txt").write_text("4\n")
    return str(path)


def test_a_frame_name_that_is_not_utf8_fails_its_item_at_most(tmp_path: Path) -> None:
    # Before: planning raised UnicodeEncodeError (the digest cache's query) and no item of the manifest was
    # scored; past that, OpenCV crashed the process on the name, and the store refused an error quoting it.
    plain = _folder(tmp_path / "plain", ["frame_000.png", "frame_001.png", "frame_002.png"])
    odd = _folder(tmp_path / "odd", ["frame_000.png", LATIN1, "frame_002.png"])  # the same pictures
    broken = _folder(tmp_path / "broken", ["frame_000.png", "frame_002.png"])
    (Path(broken) / LATIN1).write_bytes(b"not an image")
    items = [Item(item_id=name, video=video) for name, video in
             (("plain", plain), ("odd", odd), ("broken", broken))]
    with ResultStore(tmp_path / "results.sqlite") as store:
        summary = score_items(items, build_requests(["pixel_frame_consistency"]), store)
        assert (summary.ok, summary.failed) == (2, 1)
        rows = {r.item_id: r for r in store.rows()}
        assert rows["odd"].value == rows["plain"].value
        assert rows["broken"].status == "error"
        assert "frame_001\\udce9.png" in str(rows["broken"].error)  # the byte written out as text
        again = score_items(items, build_requests(["pixel_frame_consistency"]), store)
        assert (again.skipped, again.stale, again.ok, again.failed) == (3, 0, 0, 0)
