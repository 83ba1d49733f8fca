"""The built-in ``roboworm_multiview`` rubric: RoboWorM's multi-view consistency verdict on the
Bad/Medium/Good scale of Table D2, majority over three turns, listed by ``judge rubrics``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from robojudge.cli import main
from robojudge.judges import get_rubric, make_judge, parse_reply
from robojudge.run._judge import judge_items


def test_loads_on_the_physics_verdict_scale_and_renders() -> None:
    r, physics = get_rubric("roboworm_multiview"), get_rubric("roboworm_physics")
    assert r.kind == "label" and r.labels == physics.labels == (("Bad", 1.0), ("Medium", 2.0), ("Good", 3.0))
    assert (r.score_min, r.score_max) == (1.0, 3.0) and not r.needs_instruction
    system, user = r.render(None)  # a video-level verdict: no instruction needed
    assert "several fixed cameras" in system and "tiled" in system
    assert '"verdict": "<Bad|Medium|Good>"' in user and "{instruction}" not in user
    assert parse_reply('{"reasoning": "views agree", "verdict": "good"}', r).score == 3
    off = parse_reply('{"reasoning": "r", "verdict": 4}', r)
    assert not off.ok and "not one of Bad, Medium, Good" in (off.error or "")


def test_majority_over_three_turns(make_items: Any, store: Any, cache: Any) -> None:
    # RoboWorM Table D2: three turns, majority vote; Bad, Medium, Bad -> Bad (1)
    replies = [f'{{"reasoning": "r", "verdict": "{v}"}}' for v in ("Bad", "Medium", "bad")]
    j = make_judge({"name": "mv", "backend": "mock", "model": "m", "replies": replies})
    judge_items(make_items(["rollout"]), j, [get_rubric("roboworm_multiview")], store, cache=cache, samples=3)
    (row,) = store.rows()
    assert row.metric == "judge:mv:roboworm_multiview" and row.value == 1
    assert row.details["votes"] == [1.0, 2.0, 1.0] and row.details["mean"] == pytest.approx(4 / 3)


def test_listed_by_judge_rubrics(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["judge", "rubrics", "--json"])
    assert exc.value.code == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["roboworm_multiview"]["kind"] == "label"
    assert "RoboWorM App. D, Tables D2" in listed["roboworm_multiview"]["source"]
