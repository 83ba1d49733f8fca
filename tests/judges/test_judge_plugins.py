"""A judge backend or a specialized judge of another package: added through ROBOJUDGE_PLUGINS or an entry
point, as the metrics are, and used by `robojudge judge` with no change to robojudge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from robojudge.store import ResultStore

BACKEND_MODULE = '''
import json
from robojudge.judges import BACKENDS, ChatRequest, Completion, JudgeConfig

class MyBackend:
    name, supports_logprobs = "mine", False
    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
    async def complete(self, request: ChatRequest) -> Completion:
        n = 0 if request.frames is None else len(request.frames)
        return Completion(text=json.dumps({"reasoning": f"saw {n} frames", "physical_adherence": 4}))
    async def aclose(self) -> None:
        pass

BACKENDS.add("mine", MyBackend)
'''

LAZY_MODULE = '''
from robojudge.judges import PaIa, SpecializedJudge

def _adapt(score: float) -> PaIa:
    return PaIa(pa=score, ia=score)

MY_JUDGE = SpecializedJudge("my_judge", "My judge (me, 2026)", ("overall",), (1.0, 5.0), _adapt)
'''


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "rj_judge_plugin.py").write_text(BACKEND_MODULE)
    (site / "rj_judge_lazy.py").write_text(LAZY_MODULE)
    info = site / "rj_judge_dist-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rj-judge-dist\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[robojudge.judge_backends]\nmine_too = rj_judge_plugin:MyBackend\n"
        "[robojudge.specialized_judges]\nmy_judge = rj_judge_lazy:MY_JUDGE\n")
    return site


def _env(site: Path, **more: str) -> dict[str, str]:
    env = {**os.environ, **more}
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    return env


def _manifest(tmp_path: Path, make_items: Callable[..., Any]) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n"
                            for it in make_items(["a", "b"])))
    return path


def _judge(tmp_path: Path, manifest: Path, backend: str,
           env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "robojudge", "judge", str(manifest), "--backend", backend, "--model", "m",
           "--rubric", "pa", "--db", str(tmp_path / f"{backend}.sqlite"), "--cache-dir", str(tmp_path / "c"),
           "--no-progress"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def test_a_backend_named_in_robojudge_plugins_judges(tmp_path: Path, make_items: Callable[..., Any]) -> None:
    manifest = _manifest(tmp_path, make_items)
    env = _env(_site(tmp_path), ROBOJUDGE_PLUGINS="rj_judge_plugin")
    # Before: "unknown judge backend 'mine'. Known: hf, mock, openai." (only metrics read ROBOJUDGE_PLUGINS)
    res = _judge(tmp_path, manifest, "mine", env)
    assert res.returncode == 0, res.stderr
    assert "2 judgments: 2 scored, 0 unparsable, 0 failed" in res.stdout
    with ResultStore(tmp_path / "mine.sqlite", read_only=True) as store:
        assert store.count() == 2


def test_a_backend_and_a_specialized_judge_of_an_entry_point(tmp_path: Path,
                                                             make_items: Callable[..., Any]) -> None:
    manifest = _manifest(tmp_path, make_items)
    env = _env(_site(tmp_path))
    env.pop("ROBOJUDGE_PLUGINS", None)
    # Before: the registries had no entry-point group: "unknown judge backend 'mine_too'".
    res = _judge(tmp_path, manifest, "mine_too", env)
    assert res.returncode == 0, res.stderr
    assert "2 judgments: 2 scored, 0 unparsable, 0 failed" in res.stdout
    probe = ("from robojudge.judges import SPECIALIZED, adapt_native\n"
             "print(SPECIALIZED.names())\n"
             "print(adapt_native('my_judge', {'overall': 3.0}))\n")
    res = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    names, adapted = res.stdout.splitlines()
    assert "my_judge" in names and "videoscore2" in names
    assert adapted == "PaIa(pa=3.0, ia=3.0)"
