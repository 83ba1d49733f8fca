"""``robojudge settings`` and :func:`robojudge.settings.in_force` (audit config F9): nothing printed the
settings a run uses, so a misspelt or a bad variable could not be checked before a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from robojudge import settings


def test_in_force_says_each_value_and_where_it_comes_from(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.delenv("ROBOJUDGE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "w"))
    monkeypatch.delenv("ROBOJUDGE_CONFINE", raising=False)
    monkeypatch.setenv("ROBOJUDGE_MAX_NETWORKS", "0")
    monkeypatch.delenv("ROBOJUDGE_FRAME_MEMORY_GIB", raising=False)
    rows = {r.name: r for r in settings.in_force()}
    assert {v.name for v in settings.VARIABLES if v.name.replace("_", "").isalpha()} <= set(rows)
    assert (rows["ROBOJUDGE_CACHE_DIR"].value, rows["ROBOJUDGE_CACHE_DIR"].source) == (
        str(tmp_path / "robojudge"), "environment (XDG_CACHE_HOME)")
    assert (rows["ROBOJUDGE_WEIGHTS"].value, rows["ROBOJUDGE_WEIGHTS"].source) == (str(tmp_path / "w"),
                                                                                   "environment")
    assert (rows["ROBOJUDGE_CONFINE"].value, rows["ROBOJUDGE_CONFINE"].source) == (None, "default")
    bad = rows["ROBOJUDGE_MAX_NETWORKS"]
    assert (bad.value, bad.source) == ("0", "environment")
    assert bad.problem == "ROBOJUDGE_MAX_NETWORKS='0': expected a whole number >= 1"
    memory = rows["ROBOJUDGE_FRAME_MEMORY_GIB"]
    assert memory.value is None and memory.default.startswith("50% of the memory available")


def test_the_command_prints_them_as_json_and_as_a_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ROBOJUDGE_")}
    env.update(ROBOJUDGE_CONFINE=str(tmp_path), ROBOJUDGE_WEIGTHS="/x", COLUMNS="250")
    run = [sys.executable, "-m", "robojudge", "settings"]
    out = subprocess.run([*run, "--json"], capture_output=True, text=True, env=env, timeout=120, check=True)
    said = json.loads(out.stdout)
    confine = next(v for v in said["variables"] if v["name"] == "ROBOJUDGE_CONFINE")
    assert (confine["value"], confine["source"]) == (str(tmp_path), "environment")
    assert said["unknown"] == [{"name": "ROBOJUDGE_WEIGTHS", "did_you_mean": "ROBOJUDGE_WEIGHTS"}]
    table = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    line = next(x for x in table.splitlines() if "ROBOJUDGE_CONFINE" in x)
    assert str(tmp_path) in line and "environment" in line
    assert "not read: ROBOJUDGE_WEIGTHS (did you mean ROBOJUDGE_WEIGHTS?)" in table


def test_verbose_logs_the_variables_set(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ROBOJUDGE_")}
    env.update(ROBOJUDGE_CONFINE=str(tmp_path), COLUMNS="200")
    done = subprocess.run([sys.executable, "-m", "robojudge", "-v", "weights", "list"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"DEBUG robojudge.settings: ROBOJUDGE_CONFINE={tmp_path} (environment)" in done.stderr
    assert "ROBOJUDGE_WEIGHTS" not in done.stderr  # (unset: the default is not logged)


@pytest.mark.parametrize(("env", "where", "source"), [
    ({"HF_HUB_CACHE": "/data/hub"}, "/data/hub", "environment"),
    ({"HF_HOME": "/data/hf"}, "/data/hf/hub", "environment (HF_HOME)"),
    ({"XDG_CACHE_HOME": "/data/xdg"}, "/data/xdg/huggingface/hub", "environment (XDG_CACHE_HOME)"),
    ({}, None, "default"),
])
def test_the_hub_cache_is_where_huggingface_hub_looks(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                      where: str | None, source: str) -> None:
    # it printed the default whenever HF_HUB_CACHE itself was unset, though HF_HOME or XDG_CACHE_HOME
    # moves the cache (review rev12 F2)
    for name in ("HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    hub = {r.name: r for r in settings.in_force()}["HF_HUB_CACHE"]
    assert (hub.value, hub.source) == (where, source)
