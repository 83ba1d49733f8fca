"""``--workers/-w`` on ``robojudge metrics sets`` (a local pool of that many processes computes the groups)
and ``robojudge judge`` (only with ``--executor ray``: a local judge has no workers to count). Before,
neither command had the option, though docs/ray.md told users to cap a Ray run with it (audit "ray", F3);
the cap itself is tested against a server in tests/judges/test_judge_ray.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType

from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.store import ResultStore


def _manifest(tmp_path: Path) -> Path:
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": f"i{i}", "video": "v.mp4", "instruction": "x",
                                            "generator": f"g{i % 2}"}) + "\n" for i in range(4)))
    (tmp_path / "v.mp4").write_bytes(b"never opened: test_ray_set counts the items")
    return manifest


def test_metrics_sets_workers_computes_the_groups_in_worker_processes(tmp_path: Path,
                                                                      ray_toy: ModuleType) -> None:
    db = tmp_path / "r.sqlite"
    res = CliRunner().invoke(build_app("metrics"), ["metrics", "sets", str(_manifest(tmp_path)), "-m",
                                                    "test_ray_set", "--db", str(db), "-w", "2"])
    assert res.exit_code == 0, res.output
    with ResultStore(db) as store:
        rows = {r.item_id: r for r in store.rows()}
    assert {i: r.value for i, r in rows.items()} == {"group:generator=g0": 2.0, "group:generator=g1": 2.0}
    assert os.getpid() not in {(r.details or {}).get("pid") for r in rows.values()}


def test_metrics_sets_workers_needs_the_store(tmp_path: Path) -> None:
    res = CliRunner().invoke(build_app("metrics"), ["metrics", "sets", str(_manifest(tmp_path)), "-m",
                                                    "iq1_fvd", "--no-store", "--workers", "2"])
    assert res.exit_code == 2 and "--workers" in res.output and "drop --no-store" in res.output


def test_judge_workers_is_for_the_ray_executor(tmp_path: Path) -> None:
    (tmp_path / "judges.toml").write_text('[judges.m]\nbackend = "mock"\nmodel = "m"\nreplies = ["x"]\n')
    res = CliRunner().invoke(build_app("judge"), [
        "judge", str(_manifest(tmp_path)), "--judge", "m", "--judges", str(tmp_path / "judges.toml"),
        "--rubric", "pa", "--db", str(tmp_path / "r.sqlite"), "--workers", "2"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "--workers 2 is for --executor ray" in said and "--concurrency" in said
    assert not (tmp_path / "r.sqlite").exists()
