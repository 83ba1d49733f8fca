"""Arguments of the scripting API given as a notebook user types them: a metric list as one string, rubric
ids, a judge as a dict. Each is taken as the CLI takes it, or refused with a TypeError before any store is
made."""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.metrics import get_metric
from robojudge.run import judge_suite, score_suite
from robojudge.store import ResultStore
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4, "physical_adherence": 3}'


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    rows = []
    for k in range(2):
        write_video(tmp_path / f"v{k}.mp4", np.full((4, 16, 16, 3), 40 * (k + 1), np.uint8), fps=4)
        rows.append({"item_id": f"i{k}", "video": f"v{k}.mp4", "instruction": "pick it up"})
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_suite_takes_metrics_as_one_comma_separated_string(manifest: Path, tmp_path: Path) -> None:
    # Before: the string was read as a list of characters: "unknown metric 't'".
    run = score_suite(manifest, "test_frames_a, test_frames_b", db=str(tmp_path / "a.sqlite"))
    assert run.summary.ok == 4
    with ResultStore(run.db_url, read_only=True) as store:
        assert {r.metric for r in store.rows()} == {"test_frames_a", "test_frames_b"}
    spec = get_metric("test_frames_a")
    with pytest.raises(TypeError, match="metrics must be metric ids"):
        score_suite(manifest, [spec], db=str(tmp_path / "b.sqlite"))  # type: ignore[list-item]
    assert not (tmp_path / "b.sqlite").exists()


def test_judge_suite_looks_rubric_ids_up(manifest: Path, tmp_path: Path) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    db = str(tmp_path / "j.sqlite")
    with ResponseCache(tmp_path / "cache") as cache:
        # Before: AttributeError: 'str' object has no attribute 'kind', after the store was made.
        run = judge_suite(manifest, judge, "pa,ia", db=db, cache=cache, decode_workers=0)
        assert run.summary.scored == 4
        again = judge_suite(manifest, judge, ["ia", get_rubric("pa")], db=db, cache=cache, decode_workers=0)
        assert again.summary.skipped == 4


def test_judge_suite_refuses_a_dict_judge_and_an_odd_rubric_before_making_the_store(
    manifest: Path, tmp_path: Path
) -> None:
    values = {"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]}
    db = tmp_path / "slip.sqlite"
    # Before: AttributeError: 'dict' object has no attribute 'backend', with the store already made.
    with pytest.raises(TypeError, match=r"judge must be a JudgeConfig, got dict.*make_judge"):
        judge_suite(manifest, values, ["pa"], db=str(db))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="rubrics must be Rubric objects or rubric ids"):
        judge_suite(manifest, make_judge(values), [3], db=str(db))  # type: ignore[list-item]
    with pytest.raises(KeyError, match="Did you mean 'pa'"):
        judge_suite(manifest, make_judge(values), "pa,pb", db=str(db))
    assert not db.exists()
