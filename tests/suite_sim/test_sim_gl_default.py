"""The ``MUJOCO_GL`` robojudge sets when it is unset is one MuJoCo takes on each system, and the advice
printed where rendering fails names a value that works there.

Other systems are simulated as MuJoCo tells them apart, through :func:`platform.system`: in a child
process (MuJoCo checks the value when it is imported), and a fake ``sysctl`` answers the Apple Silicon
check ``import mujoco`` runs on macOS. Nothing here can render with ``cgl``, so on the simulated Mac the
probe fails past MuJoCo's check of the value (no OpenGL framework), not at it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from robojudge import settings
from robojudge.suite.sim import _render
from robojudge.suite.sim._render import SimBuildError, check_rendering

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

# Runs MuJoCo's own check of MUJOCO_GL (its gl_context module) with the system it reads simulated.
_MUJOCO_CHECK = textwrap.dedent(
    """
    import json, os, platform, runpy, sys
    import mujoco.rendering.classic.gl_context as gl_context  # (imported as on this machine first)
    platform.system = lambda: sys.argv[1]
    os.environ["MUJOCO_GL"] = sys.argv[2]
    try:
        runpy.run_path(gl_context.__file__)
        said = "taken"
    except Exception as exc:
        said = f"{type(exc).__name__}: {exc}"
    print(json.dumps(said))
    """
)


@pytest.mark.parametrize("system", ["Linux", "Darwin", "Windows"])
def test_mujoco_takes_the_default_on_each_system(monkeypatch: pytest.MonkeyPatch, system: str) -> None:
    monkeypatch.setattr(platform, "system", lambda: system)
    gl = settings.mujoco_gl_default()
    done = subprocess.run([sys.executable, "-c", _MUJOCO_CHECK, system, gl], capture_output=True, text=True,
                          timeout=120, check=True)
    said = json.loads(done.stdout.strip().splitlines()[-1])
    # Before: egl on every system, "RuntimeError: invalid value for environment variable MUJOCO_GL: egl"
    # on Darwin and Windows. (On the simulated Mac, cgl gets past the check and then finds no OpenGL
    # framework to load, which a real Mac has.)
    assert "invalid value" not in said, (system, gl, said)


@pytest.fixture
def simulated_mac(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    fakebin = tmp_path / "bin"
    fakebin.mkdir()
    (fakebin / "sysctl").write_text("#!/bin/sh\necho 0\n")  # sysctl.proc_translated: not under Rosetta
    (fakebin / "sysctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fakebin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    mac = "    import platform; platform.system = lambda: 'Darwin'\n    import mujoco\n"
    monkeypatch.setattr(_render, "_PROBE", _render._PROBE.replace("    import mujoco\n", mac))
    _render._render_failure.cache_clear()
    yield
    _render._render_failure.cache_clear()


@pytest.mark.usefixtures("simulated_mac")
def test_the_advice_on_a_mac_names_cgl_and_no_apt_get() -> None:
    with pytest.raises(SimBuildError) as failed:
        check_rendering("egl")
    said = str(failed.value)
    # Before: "install Mesa's EGL ... apt-get install libegl1 ..., or use MUJOCO_GL=osmesa", neither of
    # which a Mac can do.
    assert said.startswith("MuJoCo cannot render with MUJOCO_GL=egl (RuntimeError: invalid value"), said
    assert "use MUJOCO_GL=cgl" in said and "apt-get" not in said and "osmesa" not in said, said
    assert said.endswith("robojudge demo --suite synthetic")

    with pytest.raises(SimBuildError) as failed:
        check_rendering("cgl")  # taken by MuJoCo; only this machine has no OpenGL framework
    said = str(failed.value)
    assert "invalid value" not in said and "use MUJOCO_GL=glfw" in said and "apt-get" not in said, said


def test_the_advice_on_linux_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    assert "apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri" in _render.render_fix("egl")
    assert _render.render_fix("glx").startswith("use MUJOCO_GL=egl: Mesa's EGL")
    monkeypatch.setattr(platform, "system", lambda: "Windows")
    assert _render.render_fix("egl") == "use MUJOCO_GL=glfw"
