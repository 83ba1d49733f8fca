"""The weights-free RIGIS on the simulator's planted multi-view failures: a lagging view costs more the
longer it lags, a shaking camera the harder it shakes (the same view, the same episode, only the severity
changes)."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("mujoco") is None and not os.environ.get("CI"),
                       reason="mujoco is not installed (pip install -e '.[sim]'); CI runs these tests"),
]
os.environ.setdefault("MUJOCO_GL", "egl")

SIZE = 128


def test_rigis_drops_with_the_lag_of_one_view() -> None:
    from robojudge.metrics.multiview import rigis
    from robojudge.robots import Camera
    from robojudge.suite.sim._failures import Editor
    from robojudge.suite.sim._multiview import calibration_json, draw_view_failures, plan_view_failure
    from robojudge.suite.sim._policy import faithful_episode, object_positions
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    env = make_env("relocate", SIZE)  # ADROIT: textured enough at this size for the SIFT matches
    ep = faithful_episode(env, "relocate", np.random.default_rng(5), 5)
    r = SceneRenderer(env.model, "relocate", SIZE, 3)
    try:
        ed = Editor(env.model, ep, object_positions(env.model, ep, "Object"))
        clean, st = r.render(ed.plan, ep.layout.goal)
        cams = {k: Camera(**v) for k, v in calibration_json(st["K"], st["R"], st["t"], r.cams, SIZE).items()}
        idx = np.linspace(0, clean.shape[1] - 1, 8).round().astype(int)  # the metric's 8 instants

        def score(frames: np.ndarray) -> float:
            value, _ = rigis({c: frames[v][idx] for v, c in enumerate(r.cams)}, cams,
                             timing={c: frames[v] for v, c in enumerate(r.cams)})
            return value

        values = [score(clean)]
        for severity in (0.3, 1.0):
            frames, masks = clean.copy(), {"masks": st["masks"].copy()}
            # The same random stream each time: the same view lags, by 2 and then 6 frames.
            f = plan_view_failure("view_lag", severity, np.random.default_rng(11), editor=ed, views=3,
                                  view_names=r.cams)
            draw_view_failures(r, ed.plan, frames, masks, [f])
            values.append(score(frames))
    finally:
        r.close()
    assert all(np.isfinite(values)), values
    assert values[0] > values[1] > values[2], values


def test_rigis_pose_on_a_flat_scene_drops_with_the_shake_of_one_camera() -> None:
    # The Panda's table and objects are flat-coloured: no relative pose can be read between its views, so
    # rigis_pose is each camera's stillness in its own view (S_still) alone.
    from robojudge.metrics.multiview import rigis_pose
    from robojudge.robots import Camera
    from robojudge.suite.sim._failures import Editor
    from robojudge.suite.sim._multiview import calibration_json, draw_view_failures, plan_view_failure
    from robojudge.suite.sim._policy import faithful_episode, object_positions
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    scene = "panda_pick_and_place"
    env = make_env(scene, SIZE)
    ep = faithful_episode(env, scene, np.random.default_rng(5), 5)
    r = SceneRenderer(env.model, scene, SIZE, 3)
    details = []
    try:
        ed = Editor(env.model, ep, object_positions(env.model, ep, "cube"))
        clean, st = r.render(ed.plan, ep.layout.goal)
        cams = {k: Camera(**v) for k, v in calibration_json(st["K"], st["R"], st["t"], r.cams, SIZE).items()}
        idx = np.linspace(0, clean.shape[1] - 1, 8).round().astype(int)

        def score(frames: np.ndarray) -> float:
            value, d = rigis_pose({c: frames[v][idx] for v, c in enumerate(r.cams)}, cams)
            details.append(d)
            return value

        values = [score(clean)]
        for severity in (0.2, 1.0):
            frames, masks = clean.copy(), {"masks": st["masks"].copy()}
            # The same random stream each time: the same camera (cam1), window and directions, shaken
            # harder (cam2 has too little static scene in this episode to be read at all).
            f = plan_view_failure("view_shake", severity, np.random.default_rng(1), editor=ed, views=3,
                                  view_names=r.cams)
            draw_view_failures(r, ed.plan, frames, masks, [f])
            values.append(score(frames))
    finally:
        r.close()
    assert all("too few matches" in d.get("relative_unscored", "") for d in details), details
    assert values[0] >= 0.95 and values[0] > values[1] > values[2], values
