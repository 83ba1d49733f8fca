"""One decode per video and sampling: for all the rubrics of an item, and for a metric and a judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.metrics._frames import main_video_frames
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.video import _sample, frame_cache

PA, IA, CAPTION = get_rubric("pa"), get_rubric("ia"), get_rubric("caption")


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths decoded in this process (video files)."""
    calls: list[str] = []
    real = _sample.sample_file

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(_sample, "sample_file", counting)
    return calls


def _script(request: Any) -> str:
    return json.dumps({"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4, "caption": "c"})


def _mock() -> tuple[Any, MockBackend]:
    cfg = make_judge({"name": "m", "backend": "mock", "model": "m", "replies": ["unused"]})
    return cfg, MockBackend(cfg, _script)


def test_three_rubrics_on_one_item_decode_its_video_once(
    make_items: Any, tmp_path: Path, decodes: list[str]
) -> None:
    item = make_items(["one"])[0]
    cfg, backend = _mock()
    with ResultStore(tmp_path / "s.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
        s = judge_items([item], cfg, [PA, IA, CAPTION], store, cache=cache, backend=backend, decode_workers=0)
    assert s.scored == 3 and len(backend.requests) == 3
    assert decodes == [item.video]
    assert len({id(r.frames) for r in backend.requests}) == 1  # the same frames went out three times


@pytest.mark.parametrize("workers", [0, 1])
def test_a_metric_and_a_judge_on_the_same_sampling_decode_once(
    make_items: Any, tmp_path: Path, decodes: list[str], workers: int
) -> None:
    """Inside one frame cache the judge takes the metric's frames, also when it would decode in
    worker processes (which cannot see this process's cache)."""
    item = make_items(["shared"])[0]
    cfg, backend = _mock()
    with frame_cache() as frames, ResultStore(tmp_path / "s.sqlite") as store, \
            ResponseCache(tmp_path / "c") as cache:
        pixels = main_video_frames(item, fps=4.0, max_frames=32)  # what a metric reads
        s = judge_items([item], cfg, [PA, IA], store, cache=cache, backend=backend, decode_workers=workers)
    assert s.scored == 2
    assert decodes == [item.video]
    assert (frames.misses, frames.hits) == (1, 1)
    sent = backend.requests[0].frames
    assert sent is not None and sent.frames is pixels  # the very array the metric read
    assert sent.hashes and sent.video_seconds == pytest.approx(2.0)  # 8 frames at 4 fps
