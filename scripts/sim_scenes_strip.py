"""Render the opt-in ALOHA and Franka Panda scenes (a faithful episode each, main and top views) to a PNG.

Usage: MUJOCO_GL=egl .venv/bin/python scripts/sim_scenes_strip.py [OUT.png]
(default docs/img/sim_more_scenes.png)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cv2
import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

SIZE = 160
SCENES = ("transfer_cube", "panda_pick_and_place")


def _row(name: str, seed: int) -> np.ndarray:
    from robojudge.suite.sim._policy import faithful_episode, set_goal_marker
    from robojudge.suite.sim._render import Plan, SceneRenderer
    from robojudge.suite.sim._scenes import make_env

    env = make_env(name, SIZE)
    ep = faithful_episode(env, name, np.random.default_rng(seed), seed)
    set_goal_marker(env.model, name, ep.layout)
    picks = np.linspace(0, len(ep.qpos) - 1, 6).round().astype(int)
    renderer = SceneRenderer(env.model, name, SIZE, 3)
    try:
        frames, _ = renderer.render(Plan(qpos=ep.qpos[picks], src=-np.ones(len(picks), int)), ep.layout.goal)
    finally:
        renderer.close()
    main = np.concatenate(list(frames[0]), axis=1)  # cam0 at six moments
    top = np.concatenate(list(frames[2]), axis=1)  # cam2, from above
    bar = np.full((22, main.shape[1], 3), 255, np.uint8)
    text = f"{name}: frames {', '.join(map(str, picks))} (cam0 above, cam2 below)"
    cv2.putText(bar, text, (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
    return np.concatenate([bar, main, top], axis=0)


def main(out: Path) -> None:
    img = np.concatenate([_row(name, seed=1) for name in SCENES], axis=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/img/sim_more_scenes.png"))
