"""``robojudge robots check``: a spec's keypoints, links and joint limits, or its errors."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
    reason="needs mujoco (the sim extra)",
)
runner = CliRunner()

ARM = """<mujoco><compiler angle="radian"/><worldbody>
  <body name="base"><geom type="sphere" size="0.05"/>
    <body name="upper" pos="0 0 0.1"><joint name="shoulder" axis="0 1 0" range="-1 1"/>
      <geom type="sphere" size="0.02"/>
      <body name="hand" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0" range="0 0.1"/>
        <geom type="sphere" size="0.02"/></body></body></body>
</worldbody></mujoco>
"""


def _run(*args: str) -> tuple[int, str]:
    r = runner.invoke(build_app("robots"), ["robots", *args], env={"COLUMNS": "200"})
    return r.exit_code, r.output


def test_builtin_robot_is_described() -> None:
    code, out = _run("check", "adroit")
    assert code == 0, out
    assert "keypoints (14): wrist, palm, ffproximal" in out
    assert "links (9)" in out and "wrist - palm" in out
    assert "ARTy" in out and "-0.15" in out  # the sim scene's widened limit
    assert "warning" not in out


def test_non_rigid_link_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.toml").write_text(
        'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "upper", "hand"]\n'
        'links = [["base", "upper"], ["upper", "hand"]]\n'
    )
    code, out = _run("check", str(tmp_path / "arm.toml"))
    assert code == 0, out
    assert "0.1000" in out and "0.3000" in out  # link lengths at rest
    assert "not rigid (a joint changes its length): upper - hand" in out


def test_bad_spec_exits_2_with_the_field(tmp_path: Path) -> None:
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.toml").write_text(
        'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base"]\n[limits]\nshoulder = [1]\n'
    )
    code, out = _run("check", str(tmp_path / "arm.toml"))
    assert code == 2
    assert "field limits.shoulder: expected two numbers [lo, hi]" in out  # brackets survive rich markup
    code, out = _run("check", "robby")
    assert code == 2
    assert "robby: no robot spec file of that name, nor a built-in robot (built-in: fetch" in out


def test_aloha_without_its_scene_files_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: "pip install --no-deps gym-aloha (make install does)", a target no Makefile has.
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "gym_aloha" else real(name, *a, **k))
    code, out = _run("check", "aloha")
    assert code == 2, out
    assert out.strip() == ("error: the built-in robots need gym_aloha: pip install --no-deps "
                           "gym-aloha==0.1.5 (its scene files; its own requirements are not needed)")
