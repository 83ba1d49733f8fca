"""The judge command's self-consistency summary, one figure per rubric (RoboWorM App. D, Table D3).

It pooled every rubric of the run into one agreement rate and one mean score std: a run of ``ia`` (1-5)
and ``roboworm_physics`` (the 1-3 verdict) with three turns each printed a rate and a spread that were
neither rubric's. Each rubric now has its own counts and its own line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _judge_cli import app
from _judge_server import FakeServer, Reply, user_text
from typer.testing import CliRunner

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore


def _reply(body: dict[str, Any], n: int) -> Reply:
    if "Verdict:" in user_text(body):  # roboworm_physics: Good at every turn
        return Reply('{"reasoning": "links stay rigid", "verdict": "Good"}')
    score = {0: 3, 1: 3, 2: 4}[body["seed"]]  # ia: the third turn disagrees
    return Reply(f'{{"reasoning": "goal reached", "instruction_alignment": {score}}}')


def test_each_rubric_keeps_its_own_agreement_and_spread(make_items: Any, store: ResultStore,
                                                          cache: ResponseCache) -> None:
    rubrics = [get_rubric("ia"), get_rubric("roboworm_physics")]
    with FakeServer(_reply) as srv:
        cfg = make_judge({"name": "t", "backend": "openai", "model": "fake-vl", "base_url": srv.url,
                          "concurrency": 4, "backoff_s": 0.01, "max_retries": 3, "timeout_s": 0.5})
        s = judge_items(make_items(["item0", "item1"]), cfg, rubrics, store, cache=cache, samples=3)
    assert set(s.consistency) == {"ia", "roboworm_physics"}
    ia, phys = s.consistency["ia"], s.consistency["roboworm_physics"]
    # ia: turns 3, 3, 4 on both items: no agreement; std of (3, 3, 4) = sqrt(2/9) = 0.4714
    assert (ia.voted, ia.agreed) == (2, 0) and ia.mean_score_std == pytest.approx((2 / 9) ** 0.5)
    # the verdict: Good (3) three times on both items
    assert (phys.voted, phys.agreed, phys.mean_score_std) == (2, 2, 0.0)
    assert phys.latency_per_video_second is not None and phys.latency_per_video_second > 0


def test_the_judge_command_prints_one_line_per_rubric(tmp_path: Path, make_items: Any) -> None:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n"
                                for it in make_items(["item0", "item1"])))
    with FakeServer(_reply) as srv:
        res = CliRunner().invoke(app, ["judge", str(manifest), "--backend", "openai", "--model", "fake-vl",
                                       "--base-url", srv.url, "--rubric", "ia,roboworm_physics",
                                       "--samples", "3", "--db", str(tmp_path / "r.sqlite"), "--no-cache",
                                       "--no-progress"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())  # (the console wraps long lines)
    assert "self-consistency of ia over the 2 items judged with several turns in this run: 0.0% agree" in out
    assert "mean score std 0.471" in out
    assert "self-consistency of roboworm_physics over the 2 items judged with several turns in this run: " \
           "100.0% agree across turns, mean score std 0.000, " in out
    # the pooled figures of both rubrics (50.0% agree, mean std 0.236) are printed nowhere
    assert "50.0%" not in out and "0.236" not in out


def test_no_counts_without_voted_items(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    with FakeServer(_reply) as srv:
        cfg = make_judge({"name": "t", "backend": "openai", "model": "fake-vl", "base_url": srv.url,
                          "backoff_s": 0.01, "timeout_s": 0.5})
        s = judge_items(make_items(["item0"]), cfg, [get_rubric("roboworm_physics")], store, cache=cache)
    assert s.scored == 1 and s.consistency == {}
