"""The commands the first pipelines change left (audit s71_cli, the follow-up): notes on stderr, tables on
the shared printer, ``results status --json``.

Each command runs as in a pipeline (``robojudge ... | jq``, ``> file``): stdout is a pipe, ``COLUMNS`` is
narrow. Stdout must hold the data alone, every value whole on its line (a table piped is printed at the
width it needs, never cut to ``…``); notes, warnings and progress go to stderr.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import robojudge

SRC = str(Path(robojudge.__file__).parents[1])
needs_mujoco = pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco (sim)")


def piped(*args: str, columns: str = "40", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``robojudge args`` with stdout and stderr on pipes of their own, ``COLUMNS`` narrow."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-m", "robojudge", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def whole(text: str, *values: str) -> None:
    """Each of ``values`` on one line of ``text``, and nothing cut to ``…``."""
    assert "…" not in text, text
    for value in values:
        assert any(value in line for line in text.splitlines()), f"{value!r} not whole in:\n{text}"


LONG = "upper_arm_link_of_the_left_manipulator"
ARM = f"""<mujoco><compiler angle="radian"/><worldbody>
  <body name="base"><geom type="sphere" size="0.05"/>
    <body name="{LONG}" pos="0 0 0.1"><joint name="shoulder_pitch_joint_of_the_left_arm" axis="0 1 0"
      range="-1 1"/><geom type="sphere" size="0.02"/>
      <body name="hand" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0" range="0 0.1"/>
        <geom type="sphere" size="0.02"/></body></body></body>
</worldbody></mujoco>
"""


@needs_mujoco
def test_robots_check_warns_on_stderr_and_prints_names_whole(tmp_path: Path) -> None:
    # Before: the rigidity warning was on stdout among the tables, and at COLUMNS=40 the link and joint
    # names were cut ('base - upper_arm_li…').
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.toml").write_text(f'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "{LONG}", '
                                       f'"hand"]\nlinks = [["base", "{LONG}"], ["{LONG}", "hand"]]\n')
    done = piped("robots", "check", str(tmp_path / "arm.toml"))
    assert done.returncode == 0, done.stderr
    assert f"not rigid (a joint changes its length): {LONG} - hand" in done.stderr
    assert "not rigid" not in done.stdout
    whole(done.stdout, f"base - {LONG}", f"{LONG} - hand", "shoulder_pitch_joint_of_the_left_arm", "0.1000")
