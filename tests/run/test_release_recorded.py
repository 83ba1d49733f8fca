"""Each new row records the robojudge release that computed it (``details["robojudge"]``), outside its key:
a store written by two releases says which wrote which rows, and an upgrade rescores nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robojudge
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import build_requests, compute_metric, score_items
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _item(tmp_path: Path, name: str = "a") -> Item:
    frames = np.full((6, 32, 32, 3), 40, np.uint8)
    frames[:, 4:8, 4:8] = 200
    video = write_video(tmp_path / f"{name}.mp4", frames, fps=4)
    return Item(item_id=name, video=str(video), instruction="t")


def test_a_scored_row_records_the_release_outside_its_key(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    item = _item(tmp_path)
    (req,) = build_requests(["pixel_frame_consistency"])
    row = compute_metric(item, req)
    assert row.status == "ok" and (row.details or {})["robojudge"] == robojudge.__version__
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([row])
        monkeypatch.setattr(robojudge, "__version__", "9.9.9")
        (again,) = build_requests(["pixel_frame_consistency"])
        assert again.config_hash == req.config_hash  # (the release is not part of the config)
        assert score_items([item], [again], store).computed == 0  # an upgrade rescores nothing
        assert compute_metric(item, again).details["robojudge"] == "9.9.9"  # type: ignore[index]


def test_a_judge_row_records_the_release(tmp_path: Path) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        judge_items([_item(tmp_path)], judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        (row,) = store.rows()
    assert row.status == "ok" and (row.details or {})["robojudge"] == robojudge.__version__
