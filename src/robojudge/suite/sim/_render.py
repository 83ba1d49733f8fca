"""Offscreen rendering of edited state sequences, with the calibrated rig and privileged state.

A :class:`Plan` is what a stand-in generator produces: simulator state per frame plus model edits
(hide the object, scale the robot's geoms, dim the lights, move the main camera). :class:`SceneRenderer`
turns a plan into RGB frames per view and the per-frame state arrays documented in docs/sim_suite.md.

Camera convention (OpenCV): camera x right, y down, z forward; ``x_cam = R @ x_world + t`` and pixel
``(u, v) = (fx x/z + cx, fy y/z + cy)`` with (0, 0) the top-left corner of the top-left pixel.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robojudge.suite.sim._scenes import CLASS_IDS, geom_classes, scene

HIDDEN_GROUP = 5  # geom group that the scene option does not draw
KEYPOINT_MARGIN = (
    0.06  # m: a keypoint counts as visible if the rendered surface is at most this much in front
)
TRACKED = ("object", "distractor", "duplicate")


@dataclass
class Plan:
    """State and model edits for every frame of a rollout.

    ``src[t]`` is the faithful frame that frame ``t`` reproduces exactly (state and edits), or -1.
    ``edits[t]`` may hold ``hide`` (list of body names drawn nowhere), ``robot_scale`` (factor on the
    robot's geom sizes), ``light`` (factor on light and headlight brightness), ``cam_shift`` ((3,) metres
    added to the main camera's position), ``body_shift`` (body name -> (3,) metres added to the body's
    position in its parent's frame: the body and everything attached below it move, so a link looks
    longer or shorter) and ``body_rot`` (body name -> (axis (3,), angle in rad): the body and its
    subtree turn about the body's origin, the axis given in the frame the body has with its joints at
    zero, so a turn about an axis that none of its hinges has bends the robot where it cannot bend).
    """

    qpos: np.ndarray
    src: np.ndarray
    edits: list[dict[str, Any]] = field(default_factory=list)
    #: The episode frame whose moment frame ``t`` stands for (its action is the one the episode took
    #: then), edited or not; None: frame ``t`` itself.
    base: np.ndarray | None = None


def _axis_angle_quat(axis: np.ndarray, angle: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a turn by ``angle`` about ``axis``."""
    a = axis / np.linalg.norm(axis)
    return np.asarray(np.r_[np.cos(angle / 2), np.sin(angle / 2) * a], dtype=float)


def _quat_mul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product ``p q`` (w, x, y, z): ``q``'s turn is about an axis in the frame ``p`` defines."""
    w1, v1, w2, v2 = p[0], p[1:], q[0], q[1:]
    return np.asarray(np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)], dtype=float)


def load_compiler_before_gl() -> None:
    """Load triton (torch's kernel compiler, which ships its own LLVM) now, if it is installed, before
    this process makes an OpenGL context: MuJoCo's EGL and OSMesa contexts load Mesa, whose llvmpipe
    brings another LLVM, and triton loaded after it crashes the process (a segfault on
    ``import triton``, which torch's optimizers do on their first use). Loaded first, both work: a
    process may render a scene and then train a KIVA reader. Costs about 0.1 s, once; nothing when
    triton is not installed or already loaded.
    """
    if "triton" in sys.modules or importlib.util.find_spec("triton") is None:
        return
    with contextlib.suppress(Exception):  # a broken triton is torch's business, not the renderer's
        import triton  # noqa: F401


class SimBuildError(RuntimeError):
    """The simulator suite cannot be built here: MuJoCo cannot render (``MUJOCO_GL``), or its files cannot
    be written (a full disk). The message says what to do."""


# Renders one frame of a one-geom scene; prints the error in one line and exits 1 where that fails.
_PROBE = """
import os, sys
os.environ["MUJOCO_GL"] = sys.argv[1]
try:
    import mujoco
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><geom size='0.1'/></worldbody></mujoco>")
    renderer = mujoco.Renderer(model, 16, 16)
    renderer.update_scene(mujoco.MjData(model))
    renderer.render()
    renderer.close()
except Exception as exc:
    print((f"{type(exc).__name__}: {exc}".strip().splitlines() or ["?"])[0], flush=True)
    os._exit(1)  # no cleanup: a half-made context's finalizer would print a traceback of its own
"""


@functools.cache
def _render_failure(gl: str) -> str | None:
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, gl], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "rendering one frame took over 2 minutes"
    if done.returncode == 0:
        return None
    said = done.stdout.strip().splitlines()
    return said[-1] if said else f"the process rendering one frame ended with status {done.returncode}"


def check_rendering(gl: str) -> None:
    """Render one small frame with the OpenGL backend ``gl`` (``MUJOCO_GL``) in a child process, once per
    process and backend, so that a machine that cannot render is told so before any worker starts (and
    this process makes no OpenGL context).

    Raises:
        SimBuildError: naming the backend, MuJoCo's reason and the fix.
    """
    reason = _render_failure(gl)
    if reason is None:
        return
    raise SimBuildError(f"MuJoCo cannot render with MUJOCO_GL={gl} ({reason}): {render_fix(gl)}; or run "
                        "the demo without the simulator: robojudge demo --suite synthetic")


def render_fix(gl: str) -> str:
    """What to do where MuJoCo cannot render with ``gl``, on this system as :func:`platform.system` names
    it (MuJoCo takes ``egl``, ``osmesa`` and ``glx`` on Linux only, ``cgl`` on macOS only, ``wgl`` on
    Windows only, ``glfw`` everywhere)."""
    system = platform.system()
    if system == "Darwin":
        return ("use MUJOCO_GL=cgl, macOS's own OpenGL, which needs no window" if gl != "cgl" else
                "use MUJOCO_GL=glfw, which renders in a logged-in desktop session")
    if system != "Linux":  # Windows and the rest: MuJoCo renders through GLFW there
        return ("use MUJOCO_GL=glfw" if gl not in ("glfw", "wgl") else
                "MuJoCo renders through GLFW here and needs an OpenGL driver: install the graphics card's")
    egl = ("Mesa's EGL, which renders without a display or a GPU (on Debian and Ubuntu: apt-get install "
           "libegl1 libegl-mesa0 libgl1-mesa-dri)")
    return (f"install {egl}, or use MUJOCO_GL=osmesa (with libosmesa6)" if gl == "egl" else
            f"use MUJOCO_GL=egl: {egl}")


class SceneRenderer:
    """Renders plans of one scene; holds one offscreen context and a faithful-frame cache."""

    def __init__(self, model: Any, embodiment: str, size: int, views: int) -> None:
        import mujoco

        load_compiler_before_gl()  # before the GL context below (see there)
        self.mj = mujoco
        self.model = model
        self.info = scene(embodiment)
        self.size = size
        self.cams = [c.name for c in self.info.cameras[:views]]
        self.cam_ids = [model.camera(c).id for c in self.cams]
        self.data = mujoco.MjData(model)
        self.renderer = mujoco.Renderer(model, size, size)
        self.option = mujoco.MjvOption()
        self.option.sitegroup[:] = 0
        self.option.geomgroup[HIDDEN_GROUP] = 0
        self.classes = geom_classes(model, self.info)
        self.lut = np.concatenate([[0], self.classes]).astype(np.uint8)  # index 0: background
        self.robot_geoms = np.flatnonzero(self.classes == CLASS_IDS["robot"])
        self.base = {
            "geom_size": model.geom_size.copy(),
            "geom_group": model.geom_group.copy(),
            "light": model.light_diffuse.copy(),
            "head": model.vis.headlight.diffuse.copy(),
            "cam_pos": model.cam_pos.copy(),
            "body_pos": model.body_pos.copy(),
            "body_quat": model.body_quat.copy(),
        }
        # Bodies moved by the previous frame's edits; only these are restored, so that body positions
        # set on the model after this renderer was made (the goal marker) are left alone.
        self._moved: set[int] = set()
        self.body = {n: model.body(n).id for n in (self.info.object_body, "distractor", "duplicate")}
        self.kp_ids = [model.body(b).id for b in self.info.keypoint_bodies]
        self.cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def close(self) -> None:
        """Free the GL context."""
        self.renderer.close()

    # -- calibration -------------------------------------------------------------------------------
    def intrinsics(self) -> np.ndarray:
        """(V, 3, 3) pinhole matrices from each camera's vertical field of view and the image size."""
        out = []
        for cid in self.cam_ids:
            f = 0.5 * self.size / np.tan(np.deg2rad(self.model.cam_fovy[cid]) / 2)
            out.append([[f, 0, self.size / 2], [0, f, self.size / 2], [0, 0, 1]])
        return np.asarray(out)

    def extrinsics(self) -> tuple[np.ndarray, np.ndarray]:
        """World-to-camera ``R`` (V, 3, 3) and ``t`` (V, 3) in OpenCV axes for the current data."""
        flip = np.diag([1.0, -1.0, -1.0])
        rs, ts = [], []
        for cid in self.cam_ids:
            r = flip @ self.data.cam_xmat[cid].reshape(3, 3).T
            rs.append(r)
            ts.append(-r @ self.data.cam_xpos[cid])
        return np.asarray(rs), np.asarray(ts)

    # -- edits ---------------------------------------------------------------------------------------
    def _apply(self, edits: dict[str, Any]) -> None:
        m, b = self.model, self.base
        m.geom_size[:] = b["geom_size"]
        m.geom_group[:] = b["geom_group"]
        m.light_diffuse[:] = b["light"]
        m.vis.headlight.diffuse[:] = b["head"]
        m.cam_pos[:] = b["cam_pos"]
        for i in self._moved:
            m.body_pos[i] = b["body_pos"][i]
            m.body_quat[i] = b["body_quat"][i]
        self._moved = set()
        for name, shift in edits.get("body_shift", {}).items():
            i = m.body(name).id
            m.body_pos[i] = b["body_pos"][i] + np.asarray(shift)
            self._moved.add(i)
        for name, (axis, angle) in edits.get("body_rot", {}).items():
            i = m.body(name).id
            m.body_quat[i] = _quat_mul(b["body_quat"][i], _axis_angle_quat(np.asarray(axis), float(angle)))
            self._moved.add(i)
        for name in edits.get("hide", ()):
            m.geom_group[m.geom_bodyid == m.body(name).id] = HIDDEN_GROUP
        if "robot_scale" in edits:
            m.geom_size[self.robot_geoms] *= edits["robot_scale"]
        if "light" in edits:
            m.light_diffuse[:] = np.clip(b["light"] * edits["light"], 0, 1)
            m.vis.headlight.diffuse[:] = np.clip(b["head"] * edits["light"], 0, 1)
        if "cam_shift" in edits:
            m.cam_pos[self.cam_ids[0]] += edits["cam_shift"]

    def _render_views(self, only: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r, d = self.renderer, self.data
        rgb, seg, depth = [], [], []
        geom = int(self.mj.mjtObj.mjOBJ_GEOM)
        for v, cid in enumerate(self.cam_ids):
            if only is not None and v != only:
                continue
            r.update_scene(d, camera=cid, scene_option=self.option)
            rgb.append(r.render().copy())
            r.enable_segmentation_rendering()
            s = r.render()
            r.disable_segmentation_rendering()
            idx = (s[..., 0] + 1) * (s[..., 1] == geom)
            seg.append(self.lut[idx])
            r.enable_depth_rendering()
            depth.append(r.render().astype(np.float32))
            r.disable_depth_rendering()
        return np.stack(rgb), np.stack(seg), np.stack(depth)

    # -- the main entry --------------------------------------------------------------------------------
    def render(
        self, plan: Plan, goal: np.ndarray, faithful: bool = False
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Render a plan; return frames ``(V, T, H, W, 3)`` and the state arrays of the rollout.

        With ``faithful=True`` the renders are cached by frame index, and later plans reuse them for
        every frame whose ``src`` is set and which has no edits.
        """
        mj, m, d, info = self.mj, self.model, self.data, self.info
        T, V = len(plan.qpos), len(self.cam_ids)
        edits = plan.edits or [{} for _ in range(T)]
        frames = np.zeros((V, T, self.size, self.size, 3), np.uint8)
        st: dict[str, list[Any]] = {
            k: []
            for k in (
                "R",
                "t",
                "obj_pos",
                "obj_quat",
                "obj_visible",
                "ee_pos",
                "ee_quat",
                "kp3",
                "kp2",
                "kp_vis",
                "masks",
                "contacts",
                "unintended",
                "penetration",
                "success",
            )
        }
        K = self.intrinsics()
        ee = m.body(info.ee_body).id
        for t in range(T):
            self._apply(edits[t])
            d.qpos[:] = plan.qpos[t]
            mj.mj_forward(m, d)
            key = int(plan.src[t])
            if not edits[t] and key >= 0 and key in self.cache:
                rgb, seg, depth = self.cache[key]
            elif set(edits[t]) == {"cam_shift"} and key in self.cache:
                # Only the main camera moved: re-render that view, reuse the others.
                rgb, seg, depth = (x.copy() for x in self.cache[key])
                rgb[0], seg[0], depth[0] = (x[0] for x in self._render_views(only=0))
            else:
                rgb, seg, depth = self._render_views()
                if faithful and not edits[t]:
                    self.cache[key] = (rgb, seg, depth)
            frames[:, t] = rgb
            R, tt = self.extrinsics()
            st["R"].append(R)
            st["t"].append(tt)
            hidden = set(edits[t].get("hide", ()))
            st["obj_pos"].append([d.xpos[self.body[n]].copy() for n in self.body])
            st["obj_quat"].append([d.xquat[self.body[n]].copy() for n in self.body])
            st["obj_visible"].append([n not in hidden and d.xpos[self.body[n]][2] > -1 for n in self.body])
            st["ee_pos"].append(d.xpos[ee].copy())
            st["ee_quat"].append(d.xquat[ee].copy())
            kp3 = d.xpos[self.kp_ids].copy()
            cam = np.einsum("vij,kj->vki", R, kp3) + tt[:, None, :]
            z = cam[..., 2]
            uv = cam[..., :2] / z[..., None] * K[:, None, [0, 1], [0, 1]] + K[:, None, [0, 1], [2, 2]]
            inside = (z > 0) & np.all((uv >= 0) & (uv < self.size), axis=-1)
            px = np.clip(uv.astype(int), 0, self.size - 1)
            surf = depth[np.arange(V)[:, None], px[..., 1], px[..., 0]]
            st["kp3"].append(kp3)
            st["kp2"].append(uv)
            st["kp_vis"].append(inside & (surf >= z - KEYPOINT_MARGIN))
            st["masks"].append(seg)
            cm, unint, pen = self._contacts()
            st["contacts"].append(cm)
            st["unintended"].append(unint)
            st["penetration"].append(pen)
            dist = np.linalg.norm(d.xpos[self.body[info.object_body]] - goal)
            st["success"].append(bool(dist < info.success_threshold and info.object_body not in hidden))
        self._apply({})
        out = {k: np.asarray(v) for k, v in st.items()}
        out["K"] = K
        return frames, out

    def _contacts(self) -> tuple[np.ndarray, bool, float]:
        """Class-by-class contact matrix, whether any contact is unintended, deepest object penetration."""
        d, n = self.data, len(CLASS_IDS)
        cm = np.zeros((n, n), bool)
        unintended, pen = False, 0.0
        c = CLASS_IDS
        objects = {c["object"], c["distractor"], c["duplicate"]}
        for i in range(d.ncon):
            con = d.contact[i]
            if con.dist > 0.001:
                continue
            a, b = int(self.classes[con.geom1]), int(self.classes[con.geom2])
            cm[a, b] = cm[b, a] = True
            for x, y in ((a, b), (b, a)):
                if x in objects and y not in (c["table"], c["robot"]):
                    unintended = True
            if {a, b} == {c["robot"], c["table"]} or -con.dist > 0.005:
                unintended = True
            if {a, b} & objects:
                pen = max(pen, -float(con.dist))
        return cm, unintended, pen
