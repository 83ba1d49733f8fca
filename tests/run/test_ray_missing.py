"""Without Ray installed, ``--executor ray`` stops with a message naming the extra; the rest runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import pytest
from typer.testing import CliRunner

from robojudge.run import make_executor, score_suite
from robojudge.run._ray import RayUnavailableError


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError


def _manifest(tmp_path: Path) -> Path:
    m = tmp_path / "suite.jsonl"
    m.write_text(json.dumps({"item_id": "a", "video": "v.mp4", "instruction": "x"}) + "\n")
    (tmp_path / "v.mp4").write_bytes(b"never opened")
    return m


def test_the_api_names_the_extra(no_ray: None, tmp_path: Path) -> None:
    with pytest.raises(RayUnavailableError, match=r"pip install '\.\[ray\]' in a robojudge checkout"):
        make_executor(2, "ray")
    with pytest.raises(RayUnavailableError):
        score_suite(_manifest(tmp_path), ["test_slow"], db=str(tmp_path / "r.sqlite"), executor="ray")
    # The local executor does not need Ray.
    run = score_suite(_manifest(tmp_path), ["test_slow"], db=str(tmp_path / "r.sqlite"), executor="local")
    assert run.summary.ok == 1


def test_the_cli_fails_cleanly(no_ray: None, tmp_path: Path) -> None:
    from robojudge.cli import app

    res = CliRunner().invoke(app, ["score", str(_manifest(tmp_path)), "-m", "test_slow", "--no-progress",
                                   "--db", str(tmp_path / "r.sqlite"), "--executor", "ray"])
    assert res.exit_code == 2, res.output
    assert "pip install '.[ray]' in a robojudge checkout" in res.output and "Traceback" not in res.output


def test_metrics_sets_fails_cleanly_too(no_ray: None, tmp_path: Path) -> None:
    from robojudge.cli import app

    res = CliRunner().invoke(app, ["metrics", "sets", str(_manifest(tmp_path)), "-m", "iq1_fvd",
                                   "--by", "none", "--db", str(tmp_path / "r.sqlite"), "--executor", "ray"])
    assert res.exit_code == 2, res.output
    assert "pip install '.[ray]' in a robojudge checkout" in res.output and "Traceback" not in res.output


def test_bad_executor_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        make_executor(2, "dask")
    with pytest.raises(ValueError, match="--address is for --executor ray"):
        score_suite(_manifest(tmp_path), ["test_slow"], db=str(tmp_path / "r.sqlite"), address="auto")
    assert not (tmp_path / "r.sqlite").exists()  # refused before a store was made


def test_judge_fails_cleanly_too(no_ray: None, tmp_path: Path) -> None:
    from robojudge.cli import app

    res = CliRunner().invoke(app, ["judge", str(_manifest(tmp_path)), "--backend", "mock", "--model", "m",
                                   "--rubric", "ia", "--db", str(tmp_path / "r.sqlite"), "--no-progress",
                                   "--executor", "ray"])
    assert res.exit_code == 2, res.output
    assert "pip install '.[ray]' in a robojudge checkout" in res.output and "Traceback" not in res.output
