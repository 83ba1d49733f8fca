"""Scenes: gymnasium-robotics MuJoCo models, extended with a camera rig, a distractor and spare bodies.

Six scenes (keyed by task) on three embodiments are supported, the last two only when asked for:

* ``pick_and_place``, ``push``, ``slide`` (embodiment ``gripper``): the Fetch arm with its parallel-jaw
  gripper, from ``FetchPickAndPlace``, ``FetchPush`` and ``FetchSlide`` (gymnasium-robotics). Push and
  slide keep the envs' blocked (always closed) gripper; slide has the envs' long, slippery table and puck.
* ``relocate`` (embodiment ``dexterous_hand``): the ADROIT hand (a 24-DoF Shadow-style hand on a 6-DoF
  arm), from ``AdroitHandRelocate`` (gymnasium-robotics).
* ``transfer_cube`` (embodiment ``bimanual``, opt-in): ALOHA's two ViperX 300s arms from gym-aloha's
  ``bimanual_viperx_transfer_cube.xml`` (see ``_aloha``), driven by our own small env.
* ``panda_pick_and_place`` (embodiment ``gripper``, opt-in): the Franka Panda of gymnasium-robotics'
  Franka Kitchen on a plain table (see ``_franka``), driven by our own small env.

The embodiment names ``gripper``, ``dexterous_hand`` and ``bimanual`` are accepted as aliases of
``pick_and_place``, ``relocate`` and ``transfer_cube``, and ``franka`` of ``panda_pick_and_place``
(:func:`scene_name`).

Each model is loaded with :class:`mujoco.MjSpec` from the environment's own XML and extended with:

* ``distractor``: a second, differently coloured object resting on the table (physically simulated);
* ``duplicate``: a weightless, non-colliding free body shaped and coloured like the instructed object,
  parked far away, used to show object duplication;
* ``goal_marker``: a thin green disc without collisions marking the instructed goal (its position is
  set per episode in ``model.body_pos``);
* a rig of fixed world cameras ``cam0`` (main), ``cam1``, ... pointed at the workspace.

The extended model is then driven through the environment class itself (the classes are subclassed
only to load the extended model), so physics, control and success thresholds are those of the envs.
The ALOHA and Panda scenes have no gymnasium env; small envs of our own step them (``_aloha``,
``_franka``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.robots import SIM_KEYPOINTS

# Class ids used in the per-view segmentation maps (documented in docs/sim_suite.md).
CLASS_IDS: dict[str, int] = {
    "background": 0,
    "table": 1,
    "robot": 2,
    "object": 3,
    "distractor": 4,
    "duplicate": 5,
    "goal_marker": 6,
}


@dataclass(frozen=True)
class CameraSpec:
    """A fixed camera placed by eye point and look-at point (world frame, metres)."""

    name: str
    eye: tuple[float, float, float]
    lookat: tuple[float, float, float]
    fovy: float = 45.0


@dataclass(frozen=True)
class SceneInfo:
    """Static facts about one embodiment's scene."""

    embodiment: str
    task: str  # also the scene's key in SCENES
    robot_root: str
    object_body: str
    object_shape: str  # "box", "sphere" or "cylinder" (an upright puck)
    object_size: float  # half-extent or radius, metres
    table_body: str
    table_top: float  # z of the table surface
    ee_body: str
    keypoint_bodies: tuple[str, ...]
    cameras: tuple[CameraSpec, ...]
    object_color: str
    distractor_color: str
    success_threshold: float
    object_noun: str = "cube"
    object_half_height: float | None = None  # half of the object's height (default: object_size)
    xml: str = ""  # the model file, relative to the assets folder of ``assets``
    # Where the model comes from: gymnasium_robotics (``xml`` under envs/assets), gym_aloha (``xml`` under
    # its assets) or franka_kitchen (the Franka Kitchen arm in a scene of ours, ``_franka.load_spec``).
    assets: str = "gymnasium_robotics"
    robot_roots: tuple[str, ...] = ()  # all robot root bodies when there are several (default: robot_root)
    workspace: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))  # (x, y) lo, hi
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def half_height(self) -> float:
        """Height of the object's centre above the table when it rests on it."""
        return self.object_half_height if self.object_half_height is not None else self.object_size

    @property
    def roots(self) -> tuple[str, ...]:
        """The robot's root bodies (two for the bimanual scene)."""
        return self.robot_roots or (self.robot_root,)

    @property
    def is_fetch(self) -> bool:
        """The scene uses the Fetch arm (mocap-driven, one frame per env step)."""
        return self.xml.startswith("fetch/")


_FETCH_CAMS = (
    CameraSpec("cam0", (2.05, 0.75, 0.95), (1.25, 0.75, 0.42)),
    CameraSpec("cam1", (1.35, -0.05, 0.85), (1.3, 0.75, 0.42)),
    CameraSpec("cam2", (1.3, 0.75, 1.55), (1.3, 0.75, 0.42), fovy=40.0),
    CameraSpec("cam3", (1.35, 1.6, 0.85), (1.3, 0.75, 0.42)),
    CameraSpec("cam4", (0.5, 0.2, 1.3), (1.3, 0.75, 0.42)),
)
_ADROIT_CAMS = (
    CameraSpec("cam0", (0.0, 0.75, 0.55), (0.0, 0.05, 0.05)),
    CameraSpec("cam1", (0.75, 0.05, 0.45), (0.0, 0.05, 0.05)),
    CameraSpec("cam2", (0.0, 0.05, 0.95), (0.0, 0.06, 0.05), fovy=40.0),
    CameraSpec("cam3", (-0.75, 0.05, 0.45), (0.0, 0.05, 0.05)),
    CameraSpec("cam4", (0.45, 0.65, 0.6), (0.0, 0.05, 0.05)),
)

_FETCH_KEYPOINTS = SIM_KEYPOINTS["fetch"]
# FetchSlide: the robot base stands 0.355 m further back and the table is 2.5x longer.
_SLIDE_CAMS = (
    CameraSpec("cam0", (2.25, 0.75, 1.05), (1.3, 0.75, 0.42)),
    CameraSpec("cam1", (1.35, -0.2, 0.95), (1.3, 0.75, 0.42)),
    CameraSpec("cam2", (1.3, 0.75, 1.85), (1.3, 0.75, 0.42), fovy=40.0),
    CameraSpec("cam3", (1.35, 1.7, 0.95), (1.3, 0.75, 0.42)),
    CameraSpec("cam4", (0.3, 0.2, 1.3), (1.3, 0.75, 0.42)),
)

# The three Fetch tasks share the robot, table, keypoints and colours; they differ in model and object.
_FETCH_PICK = SceneInfo(
    embodiment="gripper",
    task="pick_and_place",
    robot_root="robot0:base_link",
    object_body="object0",
    object_shape="box",
    object_size=0.025,
    table_body="table0",
    table_top=0.4,
    ee_body="robot0:gripper_link",
    keypoint_bodies=_FETCH_KEYPOINTS,
    cameras=_FETCH_CAMS,
    object_color="red",
    distractor_color="blue",
    success_threshold=0.05,
    xml="fetch/pick_and_place.xml",
    workspace=((1.18, 0.55), (1.45, 0.98)),
)

SCENES: dict[str, SceneInfo] = {
    "pick_and_place": _FETCH_PICK,
    "push": replace(
        _FETCH_PICK,
        task="push",
        xml="fetch/push.xml",
        workspace=((1.15, 0.55), (1.45, 0.98)),
        extra={"grip_start": (1.363, 0.749)},
    ),
    "slide": replace(
        _FETCH_PICK,
        task="slide",
        object_shape="cylinder",
        object_half_height=0.02,
        cameras=_SLIDE_CAMS,
        object_noun="puck",
        xml="fetch/slide.xml",
        workspace=((0.95, 0.45), (1.75, 1.05)),
        extra={"grip_start": (1.013, 0.749)},
    ),
    "relocate": SceneInfo(
        embodiment="dexterous_hand",
        task="relocate",
        robot_root="forearm",
        object_body="Object",
        object_shape="sphere",
        object_size=0.035,
        table_body="table",
        table_top=0.0,
        ee_body="palm",
        keypoint_bodies=SIM_KEYPOINTS["adroit"],
        cameras=_ADROIT_CAMS,
        object_color="blue",
        distractor_color="yellow",
        success_threshold=0.08,
        object_noun="ball",
        xml="adroit_hand/adroit_relocate.xml",
        workspace=((-0.15, -0.02), (0.15, 0.25)),
    ),
}
_ALOHA_CAMS = (
    CameraSpec("cam0", (0.0, 0.0, 0.8), (0.0, 0.55, 0.0), fovy=60.0),
    CameraSpec("cam1", (0.0, 1.55, 0.75), (0.0, 0.55, 0.03)),
    CameraSpec("cam2", (0.0, 0.35, 1.4), (0.0, 0.6, 0.0), fovy=50.0),
    CameraSpec("cam3", (1.0, 0.05, 0.6), (0.0, 0.55, 0.03)),
    CameraSpec("cam4", (-1.0, 0.05, 0.6), (0.0, 0.55, 0.03)),
)
_VX_ARM = ("waist", "shoulder", "elbow", "forearm_roll", "wrist_angle", "wrist_rotate")
SCENES["transfer_cube"] = SceneInfo(
    embodiment="bimanual",
    task="transfer_cube",
    robot_root="vx300s_right",  # the arm that picks the cube first
    robot_roots=("vx300s_left", "vx300s_right"),
    object_body="box",
    object_shape="box",
    object_size=0.02,
    table_body="table",
    table_top=0.0,
    ee_body="vx300s_right/gripper_link",
    keypoint_bodies=SIM_KEYPOINTS["aloha"],
    cameras=_ALOHA_CAMS,
    object_color="red",
    distractor_color="blue",
    success_threshold=0.05,
    xml="bimanual_viperx_transfer_cube.xml",
    assets="gym_aloha",
    # object: the right half (right arm); goal: the left half (left arm); relay on the line x = 0.
    workspace=((-0.26, 0.36), (0.26, 0.66)),
    extra={
        "object_joint": "red_box_joint",
        # For the kinematic failures (``_kinematic``): the twelve arm joints; fingers with the end of
        # their range that closes them (-1 lower, +1 upper). ``finger_open``: the slides' open values
        # in the same order, used by the ``floating`` failure.
        "arm_joints": tuple(f"{arm}/{j}" for arm in ("vx300s_left", "vx300s_right") for j in _VX_ARM),
        "finger_close": tuple(
            (f"{arm}/{f}", end)
            for arm in ("vx300s_left", "vx300s_right")
            for f, end in (("left_finger", -1), ("right_finger", 1))
        ),
        "finger_open": (0.057, -0.057, 0.057, -0.057),
    },
)
_PANDA_CAMS = (
    CameraSpec("cam0", (1.75, 0.0, 0.9), (0.3, 0.0, 0.28)),
    CameraSpec("cam1", (0.35, -1.55, 0.75), (0.3, 0.0, 0.28)),
    CameraSpec("cam2", (0.3, 0.0, 1.9), (0.3, 0.0, 0.0)),
    CameraSpec("cam3", (0.35, 1.55, 0.75), (0.3, 0.0, 0.28)),
    CameraSpec("cam4", (-0.9, -1.0, 1.3), (0.3, 0.0, 0.25)),
)
_PANDA_ARM = tuple(f"robot:panda0_joint{i}" for i in range(1, 8))
SCENES["panda_pick_and_place"] = SceneInfo(
    embodiment="gripper",
    task="panda_pick_and_place",
    robot_root="panda0_link0",
    object_body="cube",
    object_shape="box",
    object_size=0.025,
    table_body="table",
    table_top=0.0,
    ee_body="panda0_link7",
    # Links 2 and 6 are left out: their origins coincide with those of links 1 and 5.
    keypoint_bodies=SIM_KEYPOINTS["franka"],
    cameras=_PANDA_CAMS,
    object_color="red",
    distractor_color="blue",
    success_threshold=0.05,
    assets="franka_kitchen",
    workspace=((0.38, -0.22), (0.62, 0.22)),
    extra={
        "object_joint": "cube_joint",
        "arm_joints": _PANDA_ARM,  # for the kinematic failures (``_kinematic``)
        "finger_close": (("robot:panda0_finger_joint1", -1), ("robot:panda0_finger_joint2", -1)),
        "finger_open": (0.04, 0.04),
    },
)
ALIASES = {
    "gripper": "pick_and_place",
    "dexterous_hand": "relocate",
    "bimanual": "transfer_cube",
    "franka": "panda_pick_and_place",
}


def scene_name(name: str) -> str:
    """The SCENES key of a scene or embodiment name (``gripper`` -> ``pick_and_place``, ...)."""
    key = ALIASES.get(name, name)
    if key not in SCENES:
        import difflib

        close = difflib.get_close_matches(name, [*SCENES, *ALIASES], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown scene {name!r}{hint}; known: {', '.join(sorted(SCENES))}; or by "
                         f"embodiment: {', '.join(f'{a} ({k})' for a, k in ALIASES.items())}")
    return key


def scene(name: str) -> SceneInfo:
    """The :class:`SceneInfo` of a scene (or embodiment alias)."""
    return SCENES[scene_name(name)]


RGBA = {
    "red": (0.85, 0.15, 0.12, 1.0),
    "blue": (0.15, 0.3, 0.85, 1.0),
    "yellow": (0.9, 0.8, 0.1, 1.0),
    "green": (0.1, 0.75, 0.25, 1.0),
}


def look_at_xyaxes(eye: np.ndarray, lookat: np.ndarray) -> np.ndarray:
    """MuJoCo ``xyaxes`` (camera x = right, y = up, looking along -z) for a camera at ``eye``."""
    fwd = lookat - eye
    fwd = fwd / np.linalg.norm(fwd)
    up = np.array([0.0, 0.0, 1.0])
    right = np.cross(fwd, up)
    if np.linalg.norm(right) < 1e-6:  # looking straight down: pick +x as "up" in the image
        right = np.cross(fwd, np.array([1.0, 0.0, 0.0]))
    right = right / np.linalg.norm(right)
    cam_up = np.cross(right, fwd)
    return np.concatenate([right, cam_up])


def _import_robotics() -> Any:
    """Import gymnasium_robotics without the release notice it prints to stderr on first import."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):
        import gymnasium_robotics
    return gymnasium_robotics


def _env_xml(name: str) -> Path:
    info = scene(name)
    if info.assets == "gym_aloha":
        from robojudge.suite.sim._aloha import aloha_assets

        return aloha_assets() / info.xml
    gymnasium_robotics = _import_robotics()
    return Path(gymnasium_robotics.__file__).parent / "envs" / "assets" / info.xml


def _speckle_table(spec: Any, info: SceneInfo) -> None:
    """Give the table's untextured box geoms a speckled texture (opt-in; see ``make_sim_suite(texture=)``).

    Feature matching between views needs texture, and the stock tables of Fetch and the Panda are one
    flat colour (real tables rarely are). A mesh table (ALOHA's) has no texture coordinates and stays
    as it is, and so does a table that already has a texture (ADROIT's marble).
    """
    import mujoco

    tex = spec.add_texture(name="rj_speckle", type=mujoco.mjtTexture.mjTEXTURE_2D,
                           builtin=mujoco.mjtBuiltin.mjBUILTIN_FLAT, mark=mujoco.mjtMark.mjMARK_RANDOM,
                           random=0.35, rgb1=[0.45, 0.42, 0.38], markrgb=[0.9, 0.88, 0.8],
                           width=48, height=48)
    mat = spec.add_material(name="rj_speckle", texrepeat=[3, 3], texuniform=True)
    mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex.name
    rgb = int(mujoco.mjtTextureRole.mjTEXROLE_RGB)
    for g in spec.body(info.table_body).geoms:
        plain = not g.material or not spec.material(g.material).textures[rgb]
        if g.type == mujoco.mjtGeom.mjGEOM_BOX and plain:
            g.material = mat.name
            g.rgba = [1.0, 1.0, 1.0, 1.0]


def build_spec(name: str, size: int, texture: bool = False) -> Any:
    """Return the extended :class:`mujoco.MjSpec` of a scene (not yet compiled).

    ``texture``: speckle a flat-coloured box table (:func:`_speckle_table`); off by default.
    """
    import mujoco

    info = scene(name)
    if info.assets == "franka_kitchen":
        from robojudge.suite.sim._franka import load_spec

        spec = load_spec()
    else:
        spec = mujoco.MjSpec.from_file(str(_env_xml(name)))
    if info.assets == "gym_aloha":
        from robojudge.suite.sim._aloha import prepare_spec

        prepare_spec(spec)
    spec.visual.global_.offwidth = max(int(spec.visual.global_.offwidth), size)
    spec.visual.global_.offheight = max(int(spec.visual.global_.offheight), size)
    world = spec.worldbody
    s = info.object_size
    table_z = info.table_top
    # The instructed object's colour.
    obj = spec.body(info.object_body)
    shape = {
        "box": mujoco.mjtGeom.mjGEOM_BOX,
        "sphere": mujoco.mjtGeom.mjGEOM_SPHERE,
        "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
    }[info.object_shape]
    friction = None
    contact: dict[str, Any] = {}
    for g in obj.geoms:
        if g.type == shape:
            g.material = ""
            g.rgba = RGBA[info.object_color]
            friction = list(g.friction)
            contact = {"condim": g.condim, "solimp": list(g.solimp), "solref": list(g.solref)}
    gsize = [s, info.half_height, 0.0] if info.object_shape == "cylinder" else [s, s, s]
    # Distractor: a real, collidable free body on the table (push and slide: as heavy and slippery as
    # the object, so that pushing or sliding it is the same task).
    dis = world.add_body(name="distractor", pos=[0.0, 0.0, table_z + info.half_height])
    dis.add_freejoint(name="distractor:joint")
    mass = 0.2 if info.task in ("pick_and_place", "relocate") else 2.0
    if info.embodiment == "bimanual":
        mass = 0.05  # as light as the cube: the small grippers hold it the same way
    elif info.assets == "franka_kitchen":
        mass = 0.1  # as heavy as the cube
    dg = dis.add_geom(name="distractor", type=shape, size=gsize, rgba=RGBA[info.distractor_color], mass=mass)
    if info.task in ("push", "slide") and friction is not None:
        dg.friction = friction
    if info.embodiment == "bimanual" and friction is not None:
        # The same contact model as the cube's, so picking the distractor (wrong_object) works alike.
        dg.friction = friction
        dg.condim = contact["condim"]
        dg.solimp = contact["solimp"]
        dg.solref = contact["solref"]
    # Duplicate: a weightless free body without collisions, parked far away.
    dup = world.add_body(name="duplicate", pos=[10.0, 10.0, -5.0], gravcomp=1.0)
    dup.add_freejoint(name="duplicate:joint")
    dup.add_geom(
        name="duplicate",
        type=shape,
        size=gsize,
        rgba=RGBA[info.object_color],
        contype=0,
        conaffinity=0,
        mass=0.1,
    )
    if info.embodiment == "bimanual":
        # gym-aloha's compiler takes inertia from geom groups 4-5 only; give the added bodies their own.
        for body, m in ((dis, mass), (dup, 0.1)):
            body.explicitinertial = True
            body.mass = m
            body.inertia = [m * (2 * s) ** 2 / 6] * 3
    # Goal marker: a flat disc on the table; its position (model.body_pos) is set per episode.
    goal = world.add_body(name="goal_marker", pos=[10.0, 10.0, -5.0])
    goal.add_geom(
        name="goal_marker",
        type=mujoco.mjtGeom.mjGEOM_CYLINDER,
        size=[0.04, 0.001, 0.0],
        rgba=RGBA["green"],
        contype=0,
        conaffinity=0,
    )
    for cam in info.cameras:
        eye = np.asarray(cam.eye, float)
        world.add_camera(
            name=cam.name,
            pos=eye.tolist(),
            fovy=cam.fovy,
            xyaxes=look_at_xyaxes(eye, np.asarray(cam.lookat)).tolist(),
        )
    spec.visual.quality.offsamples = 0  # no multisampling: faster CPU rendering, exact masks
    for light in spec.lights:
        light.castshadow = False  # shadows cost ~8x render time with a software renderer
    if info.is_fetch:
        # The mocap handle of the arm carries translucent guide geoms; hide them.
        for g in spec.body("robot0:mocap").geoms:
            g.rgba = [0, 0, 0, 0]
    elif info.embodiment == "dexterous_hand":
        # Let the arm reach down to the table (the stock lower limit keeps the palm ~8 cm higher).
        spec.joint("ARTy").range = [-0.15, 0.2]
        spec.actuator("A_ARTy").ctrlrange = [-0.15, 0.2]
        # Gravity compensation on the arm and hand, so the position actuators track their targets.
        stack = [spec.body(info.robot_root)]
        while stack:
            b = stack.pop()
            b.gravcomp = 1.0
            stack.extend(b.bodies)
        # Grasp assist: a weld between palm and ball, switched on only while the fingers are closed.
        spec.add_equality(
            type=mujoco.mjtEq.mjEQ_WELD,
            name="grasp_assist",
            name1="palm",
            name2="Object",
            objtype=mujoco.mjtObj.mjOBJ_BODY,
            active=False,
        )
    if texture:
        _speckle_table(spec, info)
    return spec


def make_env(name: str, size: int, texture: bool = False) -> Any:
    """Create the gymnasium-robotics environment of a scene, running the extended model."""
    import mujoco

    key = scene_name(name)
    if scene(key).assets == "gym_aloha":
        from robojudge.suite.sim._aloha import AlohaEnv

        return AlohaEnv(build_spec(key, size, texture).compile())
    if scene(key).assets == "franka_kitchen":
        from robojudge.suite.sim._franka import FrankaEnv

        return FrankaEnv(build_spec(key, size, texture).compile())
    _import_robotics()

    if scene(key).is_fetch:
        from gymnasium_robotics.envs.fetch.pick_and_place import MujocoFetchPickAndPlaceEnv
        from gymnasium_robotics.envs.fetch.push import MujocoFetchPushEnv
        from gymnasium_robotics.envs.fetch.slide import MujocoFetchSlideEnv

        base = {
            "pick_and_place": MujocoFetchPickAndPlaceEnv,
            "push": MujocoFetchPushEnv,
            "slide": MujocoFetchSlideEnv,
        }[key]

        class _Fetch(base):  # type: ignore[misc,valid-type]
            def _initialize_simulation(self) -> None:
                self.model = build_spec(key, size, texture).compile()
                self.data = mujoco.MjData(self.model)
                self._model_names = self._utils.MujocoModelNames(self.model)
                self._env_setup(initial_qpos=self.initial_qpos)  # type: ignore[has-type]
                self.initial_time = self.data.time
                self.initial_qpos = np.copy(self.data.qpos)
                self.initial_qvel = np.copy(self.data.qvel)

        return _Fetch(reward_type="sparse")

    from gymnasium_robotics.envs.adroit_hand.adroit_relocate import AdroitHandRelocateEnv

    class _Adroit(AdroitHandRelocateEnv):  # type: ignore[misc]
        def _initialize_simulation(self) -> tuple[Any, Any]:
            model = build_spec("dexterous_hand", size, texture).compile()
            return model, mujoco.MjData(model)

    return _Adroit(reward_type="sparse")


def subtree_bodies(model: Any, root: int) -> list[int]:
    """Body ids of ``root`` and all its descendants."""
    out = [root]
    for b in range(root + 1, model.nbody):
        p = int(model.body_parentid[b])
        if p in out:
            out.append(b)
    return out


def geom_classes(model: Any, info: SceneInfo) -> np.ndarray:
    """Class id (see :data:`CLASS_IDS`) of every geom of the extended model."""
    import mujoco

    cls = np.zeros(model.ngeom, dtype=np.uint8)
    robot = {
        b
        for root in info.roots
        for b in subtree_bodies(model, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, root))
    }
    named = {
        info.table_body: CLASS_IDS["table"],
        info.object_body: CLASS_IDS["object"],
        "distractor": CLASS_IDS["distractor"],
        "duplicate": CLASS_IDS["duplicate"],
        "goal_marker": CLASS_IDS["goal_marker"],
    }
    ids = {mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, k): v for k, v in named.items()}
    for g in range(model.ngeom):
        b = int(model.geom_bodyid[g])
        if b in robot:
            cls[g] = CLASS_IDS["robot"]
        elif b in ids:
            cls[g] = ids[b]
    return cls
