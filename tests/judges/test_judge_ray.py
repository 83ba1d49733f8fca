"""``robojudge judge --executor ray`` against a fake OpenAI-compatible server, on one private Ray instance
for the module (2 CPUs, 127.0.0.1) whose workers carry the planted decoder crash of
:mod:`_decode_crash` (``av.open`` segfaults on a file whose name starts with ``crash``).

A video that crashes its worker costs that item only: the chunk it was judged in is judged again one item
per task. Before, every item of the chunk got "the Ray worker died while scoring this item", on every
rerun (audit "ray", F2). ``--workers`` caps the chunks judged at once, so a server sees at most
``--workers`` x ``--concurrency`` requests; before, the option did not exist (audit "ray", F3).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _decode_crash import plant
from _judge_server import FakeServer, Reply
from typer.testing import CliRunner

from _ray_head import private_ray
from robojudge.cli import app
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import judge_items
from robojudge.run._ray import RayExecutor
from robojudge.store import ResultStore

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

REPLY = json.dumps({"reasoning": "r", "physical_adherence": 3})


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A private Ray instance whose workers segfault on opening a video named ``crash...``."""
    planted = plant(tmp_path_factory.mktemp("plant"))
    env = {
        "PYTHONPATH": os.pathsep.join([str(planted), os.environ.get("PYTHONPATH", "")]),
        "ROBOJUDGE_CACHE_DIR": str(tmp_path_factory.mktemp("worker-cache")),
    }
    with private_ray(env):
        yield


def test_a_video_that_crashes_its_worker_costs_that_item_only(head: None, tmp_path: Path,
                                                              make_items: Any) -> None:
    # concurrency 2: chunks of 4 items, the crashing video in the first with three others
    items = make_items(["a", "b", "crash", "c", "d"])
    with FakeServer(lambda body, n: Reply(REPLY)) as srv:
        judge = make_judge({"name": "t", "backend": "openai", "model": "m-crash", "base_url": srv.url,
                            "concurrency": 2})
        with ResultStore(tmp_path / "r.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
            run = judge_items(items, judge, [get_rubric("pa")], store, cache=cache,
                              executor=RayExecutor(max_retries=0))
            rows = {r.item_id: r for r in store.rows()}
            assert {i: r.status for i, r in rows.items()} == {
                "a": "ok", "b": "ok", "crash": "error", "c": "ok", "d": "ok"}
            assert rows["crash"].error == "the Ray worker died while judging this item (1 attempt)"
            assert (run.scored, run.failed) == (4, 1)
            again = judge_items(items, judge, [get_rubric("pa")], store, cache=cache, retry_errors=True,
                                executor=RayExecutor(max_retries=0))
            assert (again.skipped, again.failed) == (4, 1)


def test_workers_caps_the_chunks_judged_at_once(head: None, tmp_path: Path, make_items: Any) -> None:
    items = make_items([f"i{n}" for n in range(8)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    with FakeServer(lambda body, n: Reply(REPLY, delay=0.3)) as srv:
        (tmp_path / "judges.toml").write_text(
            f'[judges.t]\nbackend = "openai"\nmodel = "m-cap"\nbase_url = "{srv.url}"\nconcurrency = 2\n')
        # Ray is up in this process with 2 CPUs: both chunks of 4 would run at once, 4 requests in flight.
        res = CliRunner().invoke(app, [
            "judge", str(manifest), "--judge", "t", "--judges", str(tmp_path / "judges.toml"), "--rubric",
            "pa", "--db", str(tmp_path / "r.sqlite"), "--no-progress", "--executor", "ray", "--workers", "1"])
        assert res.exit_code == 0, res.output
        assert srv.count == 8
        assert srv.max_in_flight == 2
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert store.count() == 8 and not store.rows(status="error")
