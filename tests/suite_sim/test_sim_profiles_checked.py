"""What an audit of the simulator suite found (2026-12-06): a failure planted where it draws nothing, state
files holding made-up actions, a texture recorded where none was drawn, and profiles and options checked
only after files were written (or never)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

if importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"):
    pytest.skip(
        "mujoco is not installed (pip install -e '.[sim]'); CI runs these tests", allow_module_level=True
    )

os.environ.setdefault("MUJOCO_GL", "egl")

from robojudge.suite.sim import Profile, make_sim_suite  # noqa: E402
from robojudge.suite.sim._build import check_profile  # noqa: E402
from robojudge.suite.sim._labels import ALL_PROFILES  # noqa: E402


def _render_with(scene: str, kind: str | None, size: int = 32) -> tuple[np.ndarray, dict, object, object]:
    """Frames, state arrays, the failure record and the episode of a faithful ``scene`` episode with one
    failure of ``kind`` planted (severity 1), or none."""
    from robojudge.suite.sim._build import _state_arrays
    from robojudge.suite.sim._failures import Editor
    from robojudge.suite.sim._policy import faithful_episode, object_positions
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env
    from robojudge.suite.sim._scenes import scene as scene_info

    env = make_env(scene, size)
    ep = faithful_episode(env, scene, np.random.default_rng(2), 2)
    renderer = SceneRenderer(env.model, scene, size, 1)
    try:
        ed = Editor(env.model, ep, object_positions(env.model, ep, scene_info(scene).object_body))
        failure = ed.apply(kind, 1.0, np.random.default_rng(0)) if kind else None
        frames, raw = renderer.render(ed.plan, ep.layout.goal)
        return frames, _state_arrays(raw, ep, renderer, ed.plan, ep.layout.goal), failure, ep
    finally:
        renderer.close()


def test_deformation_is_not_planted_where_it_draws_nothing() -> None:
    """ADROIT's hand is drawn with meshes; its capsules (what deformation swells) are not drawn."""
    from robojudge.suite.sim._failures import PA_TYPES, applicable

    clean, _, _, _ = _render_with("relocate", None)
    swollen, _, _, _ = _render_with("relocate", "deformation")
    assert np.array_equal(clean, swollen)
    assert "deformation" not in applicable("relocate", PA_TYPES)
    # Fetch's fingers are primitive geoms: there it shows, and it stays
    fetch_clean, _, _, _ = _render_with("pick_and_place", None)
    fetch_swollen, _, _, _ = _render_with("pick_and_place", "deformation")
    assert not np.array_equal(fetch_clean, fetch_swollen)
    assert "deformation" in applicable("pick_and_place", PA_TYPES)


def test_edited_frames_keep_the_episode_s_actions() -> None:
    """Frames a failure edits (source_frame -1) got frame 0's action, all zeros."""
    _, st, failure, ep = _render_with("pick_and_place", "teleport")
    a, b = failure.start, failure.stop  # type: ignore[attr-defined]
    assert (st["source_frame"][a:b] == -1).all()
    np.testing.assert_array_equal(st["actions"], ep.actions)  # type: ignore[attr-defined]
    assert np.abs(st["actions"][a:b]).sum() > 0


def test_texture_is_recorded_only_where_a_table_was_speckled() -> None:
    from robojudge.suite.sim._build import _speckled
    from robojudge.suite.sim._scenes import make_env

    assert _speckled(make_env("pick_and_place", 32, True).model)
    assert not _speckled(make_env("pick_and_place", 32, False).model)
    assert not _speckled(make_env("relocate", 32, True).model)  # ADROIT's marble table stays


def _profile(**kw: object) -> Profile:
    fields: dict[str, object] = {
        "name": "mine", "pa_rate": 1.0, "pa_count": (1, 1), "pa_severity": (0.5, 0.9),
        "pa_types": ("teleport",), "ia_rate": 0.0, "ia_severity": (0.5, 0.9), "ia_types": (),
        "description": ""}
    return Profile(**{**fields, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize(("change", "message"), [
    ({"ia_types": ("teleport",)},
     r"ia_types: 'teleport' is not an instruction \(IA\) failure \(a physical failure: put it in pa_types"),
    ({"ia_types": ("stop_shrt",)},
     r"ia_types: 'stop_shrt' is not an instruction \(IA\) failure; known: stop_short, unrelated"),
    ({"pa_types": ("wrong_object",)}, r"pa_types: 'wrong_object' .*put it in ia_types"),
    ({"pa_severity": (0.0, 0.0)},
     r"pa_severity must be \(low, high\) with 0 < low <= high <= 1, got \(0.0, 0.0\)"),
    ({"ia_severity": (0.5, 2.0)}, r"ia_severity must be"),
    ({"pa_count": (3, 1)}, r"pa_count must be \(low, high\) ints with 0 <= low <= high, got \(3, 1\)"),
    ({"pa_rate": 1.5}, r"pa_rate must be in \[0, 1\], got 1.5"),
    ({"name": "bad name/x"}, r"name must be ASCII letters \(A-Z, a-z\), digits"),
    ({"name": "r\u00e9el"}, r"name must be ASCII letters"),  # é is a letter, but not an ASCII one
])
def test_a_custom_profile_is_checked_before_anything_is_written(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    profile = _profile(**change)
    with pytest.raises(ValueError, match=f"profile '{profile.name}': {message}"):
        make_sim_suite(tmp_path / "out", episodes=1, size=32, profiles=[profile], workers=1)
    assert not (tmp_path / "out").exists()


def test_every_built_in_profile_passes_the_check() -> None:
    for profile in ALL_PROFILES.values():
        check_profile(profile)
    # the dose-response study's names (scripts/sensitivity_matrix.py --dose: failure@severity)
    check_profile(_profile(name="frozen@0.5"))
    check_profile(_profile(name="frozen@0", pa_types=(), pa_count=(0, 0)))


@pytest.mark.parametrize(("kw", "message"), [
    ({"size": 8}, r"size must be an int >= 16, got 8"),
    ({"size": 0}, r"size must be an int >= 16, got 0"),
    ({"size": 31.5}, r"size must be an int >= 16, got 31.5"),
    ({"episodes": 0}, r"episodes must be an int >= 1, got 0"),
    ({"seed": -1}, r"seed must be an int >= 0, got -1"),
    ({"rollout_depth": 40, "profiles": ["kin_severe"]},
     r"rollout_depth 40 is too deep for rollouts of 48 frames: profiles \['kin_severe'\] plant kinematic "
     r"failures in chunks of 2 frames or more, so the depth is at most 24"),
    ({"rollout_depth": [2, 49]},
     r"rollout_depth 49 is too deep .*a chunk needs a frame, so the depth is at most 48"),
])
def test_options_are_checked_before_anything_is_written(tmp_path: Path, kw: dict, message: str) -> None:
    args = {"episodes": 1, "size": 32, "profiles": ["oracle"], "workers": 1, **kw}
    with pytest.raises(ValueError, match=message):
        make_sim_suite(tmp_path / "out", **args)
    assert not (tmp_path / "out").exists()


def test_the_cli_names_a_negative_seed_and_a_small_size(tmp_path: Path) -> None:
    from robojudge.cli import build_app

    out = str(tmp_path / "out")
    res = CliRunner().invoke(build_app(), ["suite", "make-demo", "--out", out, "--seed", "-1"])
    assert res.exit_code == 2 and "--seed" in res.output and not (tmp_path / "out").exists()
    res = CliRunner().invoke(build_app(), ["suite", "make-demo", "--out", out, "--size", "8"])
    assert res.exit_code == 2 and "--size" in res.output and not (tmp_path / "out").exists()
