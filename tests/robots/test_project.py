"""Projection: keypoints land within a pixel of markers MuJoCo renders at the same points; visibility."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from robojudge.robots import Camera, project

HAS_MUJOCO = importlib.util.find_spec("mujoco") is not None or bool(os.environ.get("CI"))
needs_mujoco = pytest.mark.skipif(not HAS_MUJOCO, reason="mujoco is not installed (pip install -e '.[sim]')")
os.environ.setdefault("MUJOCO_GL", "egl")

MARKER_GROUP = 3


def _look_at(eye: np.ndarray, target: np.ndarray) -> list[float]:
    fwd = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return [*right, *np.cross(right, fwd)]


def _centroids(seg: np.ndarray, geoms: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Centre of each marker's pixels (pixel (i, j) spans [i, i+1)) and its pixel count."""
    import mujoco

    is_geom = seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM)
    out, count = [], []
    for g in geoms:
        v, u = np.nonzero(is_geom & (seg[..., 0] == g))
        count.append(len(u))
        out.append([u.mean() + 0.5, v.mean() + 0.5] if len(u) else [np.nan, np.nan])
    return np.asarray(out), np.asarray(count)


def _render(renderer, data, camera: str, only_markers: bool) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    import mujoco

    opt = mujoco.MjvOption()
    if only_markers:
        opt.geomgroup[:] = 0
        opt.geomgroup[MARKER_GROUP] = 1
    renderer.update_scene(data, camera=camera, scene_option=opt)
    renderer.enable_segmentation_rendering()
    seg = renderer.render().copy()
    renderer.disable_segmentation_rendering()
    renderer.enable_depth_rendering()
    depth = renderer.render().copy()
    renderer.disable_depth_rendering()
    return {"seg": seg, "depth": depth}


TINY = """
<mujoco>
  <visual><global offwidth="160" offheight="160"/></visual>
  <worldbody>
    <camera name="cam" pos="0.9 -0.7 0.8" xyaxes="{xyaxes}" fovy="50"/>
    {markers}
    <geom name="wall" type="box" pos="{wall}" size="0.05 0.05 0.05" rgba="0.5 0.5 0.5 1"/>
  </worldbody>
</mujoco>
"""
POINTS = np.array(
    [
        [0.0, 0.0, 0.0],
        [0.15, 0.1, 0.05],
        [-0.2, 0.05, 0.12],
        [0.05, -0.18, -0.1],
        [-0.1, -0.1, 0.2],
        [0.3, 0.2, 0.0],
    ]
)


@needs_mujoco
@pytest.mark.parametrize(("width", "height"), [(128, 128), (128, 96)])
def test_projected_points_land_on_rendered_markers(width: int, height: int) -> None:
    import mujoco

    from robojudge.robots import mujoco_camera

    eye = np.array([0.9, -0.7, 0.8])
    markers = "\n".join(
        f'<geom name="m{i}" type="sphere" size="0.03" pos="{p[0]} {p[1]} {p[2]}" group="{MARKER_GROUP}"/>'
        for i, p in enumerate(POINTS)
    )
    # The wall sits on the line of sight to marker 1, half-way: that marker is hidden in the render.
    wall = eye + 0.5 * (POINTS[1] - eye)
    xml = TINY.format(
        xyaxes=" ".join(map(str, _look_at(eye, np.zeros(3)))), markers=markers, wall=" ".join(map(str, wall))
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    cam = mujoco_camera(model, data, "cam", (width, height))
    geoms = [model.geom(f"m{i}").id for i in range(len(POINTS))]

    renderer = mujoco.Renderer(model, height, width)
    marks, count = _centroids(_render(renderer, data, "cam", only_markers=True)["seg"], geoms)
    uv, visible = cam.project(POINTS)
    assert visible.all() and (count > 4).all()
    err = np.linalg.norm(uv - marks, axis=1)
    assert err.max() < 1.0, err

    # With the full scene's depth map, the marker behind the wall is not visible; the others are.
    depth = _render(renderer, data, "cam", only_markers=False)["depth"]
    renderer.close()
    _, seen = cam.project(POINTS, depth=depth, margin=0.02)
    assert not seen[1]
    assert seen[[0, 2, 3, 4, 5]].all()


@needs_mujoco
def test_fetch_keypoints_project_onto_markers_at_their_bodies() -> None:
    import mujoco

    from robojudge.robots import builtin_robot, forward_kinematics, mujoco_camera, sample_configurations

    robot = builtin_robot("fetch")
    spec = mujoco.MjSpec.from_file(str(robot.model))
    spec.visual.global_.offwidth = spec.visual.global_.offheight = 128
    for k in robot.keypoints:  # a small sphere at each keypoint body's origin, drawn alone
        spec.body(k).add_geom(
            type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.03, 0, 0], group=MARKER_GROUP, contype=0, conaffinity=0
        )
    q = sample_configurations(robot, 3, seed=4)
    q[:, :3] = 0.0  # keep the base where the model puts it
    kp = forward_kinematics(robot, q)
    target = kp.reshape(-1, 3).mean(axis=0)  # a camera 1.6 m away, looking at the arm's poses
    eye = target + 1.6 * np.array([0.8, -0.5, 0.33]) / np.linalg.norm([0.8, -0.5, 0.33])
    spec.worldbody.add_camera(name="kp", pos=eye.tolist(), xyaxes=_look_at(eye, target), fovy=60)
    model = spec.compile()
    data = mujoco.MjData(model)
    geoms = [
        int(np.flatnonzero((model.geom_bodyid == model.body(k).id) & (model.geom_group == MARKER_GROUP))[0])
        for k in robot.keypoints
    ]
    adr = [int(model.joint(j).qposadr[0]) for j in robot.joints]
    renderer = mujoco.Renderer(model, 128, 128)
    checked = 0
    for t in range(len(q)):
        data.qpos[adr] = q[t]
        mujoco.mj_forward(model, data)
        cam = mujoco_camera(model, data, "kp", 128)
        uv, visible = cam.project(kp[t])
        for i, g in enumerate(geoms):  # one marker at a time: the gripper's markers overlap
            model.geom_group[geoms] = MARKER_GROUP + 1
            model.geom_group[g] = MARKER_GROUP
            mark, count = _centroids(_render(renderer, data, "kp", only_markers=True)["seg"], [g])
            if visible[i] and count[0] >= 6:
                assert np.linalg.norm(uv[i] - mark[0]) < 1.0, (t, robot.keypoints[i], uv[i], mark[0])
                checked += 1
    renderer.close()
    assert checked >= 27  # nearly all of the 3 x 10 keypoints are in view


def test_visibility_behind_outside_and_per_frame_extrinsics() -> None:
    cam = Camera(
        K=((100, 0, 32), (0, 100, 24), (0, 0, 1)),
        R=((1, 0, 0), (0, 1, 0), (0, 0, 1)),
        t=(0, 0, 0),
        size=(64, 48),
    )
    pts = np.array([[0.0, 0.0, 2.0], [0.1, -0.05, 1.0], [0.0, 0.0, -1.0], [1.0, 0.0, 1.0], [0.0, 0.239, 1.0]])
    uv, vis = cam.project(pts)
    # By hand: (fx x/z + cx, fy y/z + cy).
    np.testing.assert_allclose(uv[:2], [[32.0, 24.0], [42.0, 19.0]])
    assert np.isnan(uv[2]).all()  # behind the camera
    assert uv[3, 0] == pytest.approx(132.0)  # right of a 64-wide image
    assert uv[4, 1] == pytest.approx(47.9)  # last row, still inside
    assert vis.tolist() == [True, True, False, False, True]
    # A camera moved 1 m along +x per frame: the same world point drifts left by fx / z pixels per frame.
    R = np.tile(np.eye(3), (3, 1, 1))
    t = -np.array([[0.0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]])
    uv2, _ = project(np.tile(pts[:1], (3, 1, 1)), cam.K, R, t, (64, 48))
    np.testing.assert_allclose(uv2[:, 0, 0], [32.0, 27.0, 22.0])


def test_depth_test_margin() -> None:
    K = np.array([[50.0, 0, 8], [0, 50.0, 8], [0, 0, 1]])
    depth = np.full((16, 16), 1.0)
    pts = np.array([[0.0, 0.0, 1.05], [0.0, 0.0, 1.2], [0.0, 0.0, 0.9]])  # just behind, far behind, in front
    _, vis = project(pts, K, np.eye(3), np.zeros(3), 16, depth=depth, margin=0.06)
    assert vis.tolist() == [True, False, True]
    with pytest.raises(ValueError, match="depth must be"):
        project(pts[None], K, np.eye(3), np.zeros(3), 16, depth=np.ones((2, 16, 16)))


def test_camera_rejects_a_non_rotation() -> None:
    with pytest.raises(ValueError, match="not a rotation"):
        Camera(
            K=((1, 0, 0), (0, 1, 0), (0, 0, 1)), R=((2, 0, 0), (0, 1, 0), (0, 0, 1)), t=(0, 0, 0), size=(4, 4)
        )
