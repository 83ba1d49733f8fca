"""Shared check for the opt-in scenes: every default physical failure can be planted and is rendered."""

from __future__ import annotations

import numpy as np


def check_physical_failures(scene: str, seed: int, size: int = 24) -> None:
    """Plant each default (non-kinematic) physical failure on a faithful episode of ``scene``, render
    it, and check the state arrays show it."""
    from robojudge.suite.sim._build import _state_arrays
    from robojudge.suite.sim._failures import PA_TYPES, Editor, applicable
    from robojudge.suite.sim._kinematic import KINEMATIC_TYPES
    from robojudge.suite.sim._policy import faithful_episode, object_positions
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import make_env
    from robojudge.suite.sim._scenes import scene as scene_info

    info = scene_info(scene)
    env = make_env(scene, size)
    model = env.model
    ep = faithful_episode(env, scene, np.random.default_rng(seed), seed)
    r = SceneRenderer(model, scene, size, 1)
    default_pa = [k for k in applicable(scene, PA_TYPES) if k not in KINEMATIC_TYPES]
    # All but deformation: it swells primitive geoms, and these robots are drawn with meshes only.
    assert len(default_pa) == 10 and "deformation" not in default_pa
    rest = info.table_top + info.half_height  # the object's centre height at rest
    try:
        base_frames, base = r.render(Editor(model, ep, object_positions(model, ep, info.object_body)).plan,
                                     ep.layout.goal)
        for i, kind in enumerate(default_pa):
            ed = Editor(model, ep, object_positions(model, ep, info.object_body))
            f = ed.apply(kind, 0.8, np.random.default_rng(i))
            frames, raw = r.render(ed.plan, ep.layout.goal)
            st = _state_arrays(raw, ep, r, ed.plan, ep.layout.goal)
            a, b = f.start, f.stop
            pos = st["object_pos"][:, 0]
            if kind == "teleport":
                assert np.linalg.norm(np.diff(pos, axis=0), axis=1).max() > 0.04
            elif kind in ("vanish", "appear"):
                assert not st["object_visible"][a:b, 0].any()
                assert not (st["masks"][a:b] == 3).any()
            elif kind == "duplicate":
                assert st["object_visible"][a:b, 2].all()
            elif kind == "interpenetration":
                assert (pos[a:b, 2] < rest - 0.01).any()
            elif kind == "telekinesis":
                assert np.linalg.norm(pos[a:b] - pos[0], axis=1).max() > 0.02
            elif kind == "floating":  # every gripper opens while the object keeps moving
                opening = st["gripper_opening"]
                assert opening[a:b].min() > opening[:a].min() + 0.01
                assert np.linalg.norm(pos[b - 1] - pos[a]) > 0.01
            elif kind == "frozen":
                assert np.array_equal(st["joint_pos"][a], st["joint_pos"][b - 1])
            elif kind == "camera_drift":
                assert np.linalg.norm(st["t"][-1, 0] - st["t"][a, 0]) > 0.03
            elif kind == "flicker":  # some frames are much darker or brighter than the faithful render
                diff = np.abs(frames[0].mean(axis=(1, 2, 3)) - base_frames[0].mean(axis=(1, 2, 3)))
                assert diff[a:b].max() > 5 and diff[:a].max() < 0.5
        # Why deformation is excluded: planted anyway, it leaves every pixel of the mesh robot as it was.
        ed = Editor(model, ep, object_positions(model, ep, info.object_body))
        f = ed.apply("deformation", 1.0, np.random.default_rng(0))
        frames, raw = r.render(ed.plan, ep.layout.goal)
        assert np.array_equal(raw["masks"], base["masks"]) and np.array_equal(frames, base_frames)
    finally:
        r.close()
