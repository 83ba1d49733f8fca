"""A process that renders a simulator scene (MuJoCo through EGL) can train afterwards: torch's
optimizer loads triton, whose LLVM crashed the process when Mesa's had been loaded first."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("mujoco")

SCRIPT = textwrap.dedent("""
    import numpy as np
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    env = make_env("gripper", 32)
    r = SceneRenderer(env.model, "gripper", 32, 1)  # a GL context, as a sim suite build makes
    r.close()
    print("rendered", flush=True)
    import torch

    net = torch.nn.Linear(2, 2)
    torch.optim.AdamW(net.parameters()).step()  # what KIVA training does first
    print("trained", flush=True)
""")


def test_training_after_rendering_in_one_process() -> None:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl")}
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]  # was -11 (SIGSEGV) on `import triton`
    assert res.stdout.split() == ["rendered", "trained"]
