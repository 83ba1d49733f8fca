"""Building the simulator-grounded suite: episodes, stand-in generator rollouts, videos, state, manifest."""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from robojudge import settings
from robojudge._machine import usable_cpus
from robojudge.settings import MUJOCO_GL_ENV
from robojudge.suite.sim._labels import Profile

SCENE_CYCLE = ("pick_and_place", "relocate", "push", "slide")  # episode e uses SCENE_CYCLE[e % 4]
EMBODIMENTS = ("gripper", "dexterous_hand", "bimanual")
SHORT = {
    "pick_and_place": "fetch",
    "relocate": "adroit",
    "push": "fetchpush",
    "slide": "fetchslide",
    "transfer_cube": "aloha",
    "panda_pick_and_place": "panda",
}
INSTRUCTIONS = {
    "pick_and_place": "pick up the red cube and place it on the green target",
    "relocate": "pick up the blue ball and place it on the green target",
    "push": "push the red cube to the green target",
    "slide": "slide the red puck to the green target",
    "transfer_cube": "with the right arm, move the red cube to the middle of the table; "
    "with the left arm, place it on the green target",
    "panda_pick_and_place": "pick up the red cube and place it on the green target",
}
_ENVS: dict[tuple[str, int, bool], Any] = {}
MIN_SIZE = 16  # pixels: smaller frames leave the robot a few pixels wide (also the CLI's --size minimum)


def _env(embodiment: str, size: int, texture: bool = False) -> Any:
    from robojudge.suite.sim._scenes import make_env

    key = (embodiment, size, texture)
    if key not in _ENVS:
        _ENVS[key] = make_env(embodiment, size, texture)
    return _ENVS[key]


def _state_arrays(
    st: dict[str, np.ndarray], ep: Any, renderer: Any, plan: Any, goal: np.ndarray
) -> dict[str, Any]:
    from robojudge.suite.sim._render import TRACKED

    m = renderer.model
    info = renderer.info
    robot_joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] in set(_robot_bodies(m, info))]
    adr = [int(m.jnt_qposadr[j]) for j in robot_joints]
    qpos = plan.qpos
    if info.is_fetch:
        fingers = [
            int(m.joint(n).qposadr[0])
            for n in ("robot0:l_gripper_finger_joint", "robot0:r_gripper_finger_joint")
        ]
        opening = qpos[:, fingers].sum(axis=1)
    elif info.assets == "franka_kitchen":  # like Fetch: the sum of the two finger slides (m)
        opening = qpos[:, [int(m.joint(n).qposadr[0]) for n, _ in info.extra["finger_close"]]].sum(axis=1)
    elif info.embodiment == "bimanual":
        # The more closed of the two grippers (the one holding the cube, if any): how far its finger
        # slides are from fully closed together, 0 .. 0.072 m.
        slides = [int(m.joint(n).qposadr[0]) for n, _ in info.extra["finger_close"]]
        pairs = [slides[0:2], slides[2:4]]
        opening = np.min([qpos[:, a] - qpos[:, b] - 0.042 for a, b in pairs], axis=0)
    else:
        flex = [
            int(m.joint(n).qposadr[0])
            for n in ("FFJ1", "FFJ2", "MFJ1", "MFJ2", "RFJ1", "RFJ2", "LFJ1", "LFJ2")
        ]
        opening = 1.0 - qpos[:, flex].mean(axis=1) / 1.6
    return {
        "fps": np.float32(10.0),
        "view_names": np.array(renderer.cams),
        "K": st["K"].astype(np.float64),
        "R": st["R"].astype(np.float64),
        "t": st["t"].astype(np.float64),
        "object_names": np.array(TRACKED),
        "object_pos": st["obj_pos"].astype(np.float32),
        "object_quat": st["obj_quat"].astype(np.float32),
        "object_visible": st["obj_visible"].astype(bool),
        "goal_pos": goal.astype(np.float32),
        "ee_pos": st["ee_pos"].astype(np.float32),
        "ee_quat": st["ee_quat"].astype(np.float32),
        "gripper_opening": opening.astype(np.float32),
        "joint_names": np.array([m.joint(j).name for j in robot_joints]),
        "joint_pos": qpos[:, adr].astype(np.float32),
        "keypoint_names": np.array(info.keypoint_bodies),
        "keypoints_3d": st["kp3"].astype(np.float32),
        "keypoints_2d": st["kp2"].transpose(0, 1, 2, 3).astype(np.float32),
        "keypoints_visible": st["kp_vis"].astype(bool),
        "masks": st["masks"].astype(np.uint8),
        "contacts": st["contacts"].astype(bool),
        "unintended_collision": st["unintended"].astype(bool),
        "penetration": st["penetration"].astype(np.float32),
        "success": st["success"].astype(bool),
        # the action the episode took at the moment each frame stands for: an edited frame (source_frame
        # -1) keeps the action of the frame it replaces
        "actions": ep.actions[plan.base if plan.base is not None else np.arange(len(plan.qpos))],
        "source_frame": plan.src.astype(np.int32),
    }


def _speckled(model: Any) -> bool:
    """Whether a geom of ``model`` wears the speckled table texture (``_scenes._speckle_table``)."""
    import mujoco

    mat = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MATERIAL, "rj_speckle")
    return mat >= 0 and bool((model.geom_matid == mat).any())


_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+@-]*")


def check_profile(profile: Profile) -> None:
    """Refuse a profile whose fields the builder cannot honour, naming the profile and the field: its
    name must make file names, types must be failures of their axis, rates in [0, 1], severities in
    (0, 1] (low <= high), counts 0 <= low <= high.

    Raises:
        ValueError: the first problem found.
    """
    from robojudge.suite.sim._failures import FAILURE_TYPES

    where = f"profile {profile.name!r}"
    if not isinstance(profile.name, str) or not _NAME_OK.fullmatch(profile.name):
        raise ValueError(f"{where}: name must be ASCII letters (A-Z, a-z), digits, '_', '.', '+', '@' or "
                         "'-', starting with a letter or a digit (it names files)")
    for field, axis in (("pa_types", "pa"), ("ia_types", "ia")):
        for kind in getattr(profile, field):
            if kind not in FAILURE_TYPES or FAILURE_TYPES[kind][0] != axis:
                known = sorted(k for k, v in FAILURE_TYPES.items() if v[0] == axis)
                other = "" if kind not in FAILURE_TYPES else (
                    " (an instruction failure: put it in ia_types)" if axis == "pa"
                    else " (a physical failure: put it in pa_types)")
                what = "a physical (PA)" if axis == "pa" else "an instruction (IA)"
                raise ValueError(f"{where}: {field}: {kind!r} is not {what} failure{other}; known: "
                                 f"{', '.join(known)}")
    for field in ("pa_rate", "ia_rate"):
        value = getattr(profile, field)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{where}: {field} must be in [0, 1], got {value}")
    for field in ("pa_severity", "ia_severity"):
        low, high = getattr(profile, field)
        if not 0.0 < low <= high <= 1.0:
            raise ValueError(f"{where}: {field} must be (low, high) with 0 < low <= high <= 1, "
                             f"got {(low, high)}")
    low, high = profile.pa_count
    if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= high):
        raise ValueError(f"{where}: pa_count must be (low, high) ints with 0 <= low <= high, "
                         f"got {(low, high)}")


def _robot_bodies(model: Any, info: Any) -> list[int]:
    from robojudge.suite.sim._scenes import subtree_bodies

    return [b for root in info.roots for b in subtree_bodies(model, model.body(root).id)]


def _build_episode(
    args: tuple[str, int, int, str, int, int, tuple[str | Profile, ...], bool, bool, int | None],
) -> list[dict[str, Any]]:
    """Simulate one episode, render it for every profile, write files; return manifest rows."""
    os.environ[MUJOCO_GL_ENV] = settings.get().mujoco_gl  # MuJoCo reads it when it is imported
    from robojudge.suite.sim._depth import chunk_bounds, draw_chunk_failures
    from robojudge.suite.sim._failures import Editor, applicable, failure_record, ia_failure
    from robojudge.suite.sim._kinematic import KINEMATIC_TYPES, MainView
    from robojudge.suite.sim._labels import ALL_PROFILES, draws_multiview, planted_labels
    from robojudge.suite.sim._multiview import (
        MULTIVIEW_TYPES,
        calibration_json,
        draw_view_failures,
        multiview_labels,
        plan_view_failure,
    )
    from robojudge.suite.sim._policy import (
        FPS,
        faithful_episode,
        object_positions,
        run_episode,
        set_goal_marker,
    )
    from robojudge.suite.sim._render import SceneRenderer
    from robojudge.suite.sim._scenes import SCENES
    from robojudge.suite.sim._segments import keypoints_seen, segment_verdicts
    from robojudge.video import write_video

    # ``embodiment``: the scene key
    out_s, seed, e, embodiment, size, views, profiles, with_calibration, texture, depth = args
    out = Path(out_s)
    info = SCENES[embodiment]
    env = _env(embodiment, size, texture)
    rng = np.random.default_rng([seed, e])
    run_seed = int(rng.integers(0, 2**31 - 1))
    faithful = faithful_episode(env, embodiment, rng, run_seed)
    layout = faithful.layout
    set_goal_marker(env.model, embodiment, layout)
    renderer = SceneRenderer(env.model, embodiment, size, views)
    clip = f"{SHORT[embodiment]}{e:02d}"
    rows = []
    try:
        ref_editor = Editor(env.model, faithful, object_positions(env.model, faithful, info.object_body))
        ref_frames, ref_st = renderer.render(ref_editor.plan, layout.goal, faithful=True)
        ref = f"reference/{clip}.mp4"
        write_video(out / ref, ref_frames[0], fps=FPS)
        # The reference episode's own state, beside its video: trajectory and localization metrics
        # compare a rollout's tracks with the reference's true tracks and masks.
        ref_arrays = _state_arrays(ref_st, faithful, renderer, ref_editor.plan, layout.goal)
        ref_arrays["failures_json"] = np.array("[]")
        ref_arrays["instruction"] = np.array(INSTRUCTIONS[embodiment])
        np.savez_compressed(out / f"reference/{clip}.npz", **ref_arrays)
        # Where the main view shows the robot when nothing is edited: kinematic failures are planted there.
        ref_seen = keypoints_seen(ref_st["kp2"][:, 0], ref_st["kp_vis"][:, 0], ref_st["masks"][:, 0])
        main_view = MainView(ref_st["kp2"][:, 0], ref_seen, size, ref_st["K"][0], ref_st["R"][:, 0],
                             ref_st["t"][:, 0], frozenset(int(g) for g in renderer.robot_geoms))
        chunks = chunk_bounds(len(faithful.qpos), depth) if depth else None
        for p in profiles:
            # K3: ALL_PROFILES = PROFILES then the opt-in kinematic ones, so default indices are unchanged.
            prof = ALL_PROFILES[p] if isinstance(p, str) else p
            p_name = prof.name
            if p_name in ALL_PROFILES and prof == ALL_PROFILES[p_name]:
                prng = np.random.default_rng([seed, e, list(ALL_PROFILES).index(p_name)])
            else:  # a custom profile: its own stream, seeded by its name
                prng = np.random.default_rng([seed, e, zlib.crc32(p_name.encode())])
            failures = []
            base = faithful
            ia_types = applicable(embodiment, prof.ia_types)
            pa_types = applicable(embodiment, prof.pa_types)
            if ia_types and prng.random() < prof.ia_rate:
                kind = str(prng.choice(ia_types))
                sev = float(prng.uniform(*prof.ia_severity))
                base = run_episode(env, embodiment, layout, run_seed, kind, sev)
                failures.append(ia_failure(kind, sev, len(base.qpos)))
            editor = Editor(env.model, base, object_positions(env.model, base, info.object_body))
            if base is faithful:  # another policy variant's rollout moves elsewhere: no view to consult
                editor.view = main_view
            benign: dict[str, float] = {}
            if not pa_types:
                benign = editor.benign(prng)
            kin_types = tuple(k for k in pa_types if k in KINEMATIC_TYPES)
            if chunks and kin_types:  # with a depth, kinematic failures are drawn per chunk (see _depth)
                for kind, sev, c in draw_chunk_failures(kin_types, prof.pa_severity, prof.pa_rate, chunks,
                                                         prng):
                    f = editor.apply(kind, sev, prng, window=chunks[c])
                    failures.append(failure_record(f.type, f.severity, f.start, f.stop,
                                                   {**(f.detail or {}), "chunk": c}))
                pa_types = tuple(k for k in pa_types if k not in KINEMATIC_TYPES)
            n = int(prng.integers(prof.pa_count[0], prof.pa_count[1] + 1)) if pa_types else 0
            kinds = list(prng.permutation(pa_types))[:n]
            view_failures = []
            for kind in kinds:
                if prng.random() < prof.pa_rate:
                    sev = float(prng.uniform(*prof.pa_severity))
                    if kind in MULTIVIEW_TYPES:  # opt-in: drawn into one view after the clean render
                        vf = plan_view_failure(str(kind), sev, prng, editor=editor, views=views,
                                               view_names=renderer.cams)
                        view_failures.append(vf)
                        failures.append(failure_record(vf.kind, sev, vf.start, vf.stop, vf.detail))
                    else:
                        failures.append(editor.apply(str(kind), sev, prng))
            frames, st = renderer.render(editor.plan, layout.goal)
            if view_failures:
                draw_view_failures(renderer, editor.plan, frames, st, view_failures)
            item = f"{clip}-{p_name}"
            view_paths = {}
            for v, cam in enumerate(renderer.cams):
                rel = f"videos/{item}_{cam}.mp4"
                write_video(out / rel, frames[v], fps=FPS)
                view_paths[cam] = rel
            state_rel = f"state/{item}.npz"
            arrays = _state_arrays(st, base, renderer, editor.plan, layout.goal)
            fdicts = [f.to_dict() for f in failures]
            arrays["failures_json"] = np.array(json.dumps(fdicts))
            arrays["instruction"] = np.array(INSTRUCTIONS[embodiment])
            np.savez_compressed(out / state_rel, **arrays)
            extra: dict[str, Any] = {}
            if with_calibration:
                calib_rel = f"calibration/{item}.json"
                calib = calibration_json(st["K"], st["R"], st["t"], renderer.cams, size)
                (out / calib_rel).write_text(json.dumps(calib))
                extra["calibration"] = calib_rel
            meta_extra: dict[str, Any] = {}
            if draws_multiview(prof):
                meta_extra["multiview"] = multiview_labels(fdicts)
            if texture and _speckled(env.model):  # a mesh table or ADROIT's marble is left as it is
                meta_extra["texture"] = "speckled table"
            if chunks:
                meta_extra["rollout_depth"] = depth
                meta_extra["chunks"] = [list(c) for c in chunks]
            rows.append(
                {
                    "item_id": item,
                    "video": view_paths[renderer.cams[0]],
                    "instruction": INSTRUCTIONS[embodiment],
                    "reference_video": ref,
                    "views": view_paths,
                    "main_view": renderer.cams[0],
                    "source": "mujoco-sim",
                    "clip_id": clip,
                    "generator": p_name,
                    "embodiment": info.embodiment,
                    "task": info.task,
                    "regime": "sim",
                    "split": "test",
                    "state": state_rel,
                    **extra,
                    "labels": planted_labels(fdicts),
                    "meta": {
                        "label_provenance": "planted failures, derived by rule (not human ratings)",
                        "failures": fdicts,
                        # Planted, per 16 frames; a failure counts where the main view shows it.
                        "segments": segment_verdicts(
                            fdicts, len(frames[0]), keypoint_names=info.keypoint_bodies,
                            keypoints_visible=keypoints_seen(st["kp2"][:, 0], st["kp_vis"][:, 0],
                                                             st["masks"][:, 0])),
                        "benign_variation": benign,
                        "policy_variant": base.variant,
                        "seed": seed,
                        "episode": e,
                        **meta_extra,
                    },
                }
            )
    finally:
        renderer.close()
    return rows


def _scene_cycle(scenes: Sequence[str] | None) -> tuple[str, ...]:
    """Scene keys to cycle through: ``SCENE_CYCLE`` by default, else the named scenes (aliases resolved)."""
    if scenes is None:
        return SCENE_CYCLE
    if isinstance(scenes, str) or not scenes:
        raise ValueError("scenes must be a non-empty list of scene names")
    from robojudge.suite.sim._scenes import scene_name

    return tuple(scene_name(s) for s in scenes)


def _build_episodes(jobs: list[tuple[Any, ...]], n: int) -> list[list[dict[str, Any]]]:
    """Each job's manifest rows, built in this process (``n`` 1) or by ``n`` worker processes."""
    if n == 1:
        return [_build_episode(j) for j in jobs]
    import multiprocessing as mp
    from concurrent.futures.process import BrokenProcessPool

    from robojudge._lifeline import (
        WorkerStartError,
        alive,
        quiet_worker,
        spawn_without_main,
        stop_pool,
        worker_start_hint,
    )

    # spawn, not fork: a forked child deadlocks when the parent already runs threads (torch's
    # pools, for one, once a model-backed metric has been loaded in the same process). The workers
    # need nothing of the main script, so they do not import it (an unguarded one would run again),
    # unless a profile is of a class defined there.
    mine = any(type(p).__module__ == "__main__" for j in jobs for p in j[6])
    ctx = mp.get_context("spawn") if mine else spawn_without_main()
    # The workers ignore Ctrl-C (quiet_worker): this process stops them. On a stop (Ctrl-C, SIGTERM) or an
    # error they are terminated, not waited for: a `with` block would wait for each episode in progress
    # (up to a minute), and a second stop during that wait left workers that were never told to exit.
    pool = ProcessPoolExecutor(n, mp_context=ctx, initializer=quiet_worker)
    finished = False
    try:
        try:  # workers that die as they start (a script without the __main__ guard) build nothing
            pool.submit(alive).result()
        except BrokenProcessPool:
            raise WorkerStartError(worker_start_hint()) from None
        rows = list(pool.map(_build_episode, jobs))
        finished = True
        return rows
    finally:
        try:
            if finished:
                pool.shutdown(wait=True)  # (idle workers: they exit at once)
        finally:
            stop_pool(pool)  # a stop, an error, or a stop during the wait above


def make_sim_suite(
    out_dir: str | Path,
    *,
    seed: int = 0,
    episodes: int = 10,
    views: int = 3,
    size: int = 256,
    profiles: Sequence[str | Profile] | None = None,
    workers: int | None = None,
    scenes: Sequence[str] | None = None,
    calibration: bool | None = None,
    texture: bool = False,
    rollout_depth: int | Sequence[int] | None = None,
) -> Path:
    """Write the simulator-grounded suite to ``out_dir`` and return the manifest path (``suite.jsonl``).

    Args:
        out_dir: destination folder (created).
        seed: master seed; the same seed gives the same decoded frames.
        episodes: number of simulated episodes; episode ``e`` uses scene ``SCENE_CYCLE[e % 4]``: Fetch
            pick-and-place, ADROIT relocate, Fetch push, Fetch slide.
        views: cameras per rollout (1-5); the first, ``cam0``, is the main view.
        size: square image size in pixels.
        profiles: generator profiles to render (default: all of ``PROFILES``): names of built-in
            profiles (``PROFILES`` or the opt-in ``KINEMATIC_PROFILES`` and ``MULTIVIEW_PROFILES``), or
            :class:`~robojudge.suite.sim.Profile` objects of your own (for example one
            failure type at a spread of severities, for a dose-response study); a custom profile's
            random draws are seeded by its name.
        workers: processes to use (default: up to 2, never more than the CPUs or the episodes).
        scenes: the scenes to cycle through instead of ``SCENE_CYCLE`` (episode ``e`` uses
            ``scenes[e % len(scenes)]``): scene keys (``pick_and_place``, ``relocate``, ``push``,
            ``slide``, ``transfer_cube``) or embodiment aliases (``gripper``, ``dexterous_hand``,
            ``bimanual``). The ALOHA scene ``transfer_cube`` is built only when named here.
        calibration: write each rollout's nominal rig to ``calibration/<item>.json`` and name it in
            the manifest's ``calibration`` field (default: when a profile plants multi-view failures,
            such as the opt-in ``MULTIVIEW_PROFILES``; those need ``views >= 2``).
        texture: give a table drawn in one flat colour (Fetch's, the Panda's) a speckled texture, so
            features can be matched between views; off by default (the default suite is unchanged).
        rollout_depth: render each rollout as this many chunks (an int, or a list cycled over the
            episodes: episode ``e`` gets ``rollout_depth[e % len]``) and write ``meta.rollout_depth`` and
            ``meta.chunks``; a profile's kinematic failures are then drawn per chunk, more likely in
            later chunks (``robojudge.suite.sim._depth``). Off by default (the suite is unchanged).

    Returns:
        Path of ``suite.jsonl``; it holds ``episodes * len(profiles)`` rollouts.

    Raises:
        ValueError: an argument the builder cannot honour; nothing is written.
        SimBuildError: MuJoCo cannot render with ``MUJOCO_GL`` (found before anything is written), or a
            file cannot be written (a full disk: the folder is then left without a manifest).
    """
    from robojudge.suite.sim._depth import check_depths, depth_of
    from robojudge.suite.sim._labels import ALL_PROFILES, PROFILES, draws_multiview

    names = tuple(profiles) if profiles else tuple(PROFILES)
    unknown = [p for p in names if isinstance(p, str) and p not in ALL_PROFILES]
    if unknown:
        raise ValueError(f"unknown profiles {unknown}; known: {sorted(ALL_PROFILES)}")
    for p in names:
        if not isinstance(p, str):
            check_profile(p)
    for name, value, low in (("seed", seed, 0), ("episodes", episodes, 1), ("size", size, MIN_SIZE)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    labels = [p if isinstance(p, str) else p.name for p in names]
    clash = sorted({x for x in labels if labels.count(x) > 1})
    if clash:
        raise ValueError(f"profile names must be unique, repeated: {clash}")
    if not 1 <= views <= 5:
        raise ValueError("views must be between 1 and 5")
    multiview = [x for p, x in zip(names, labels, strict=True)
                 if draws_multiview(ALL_PROFILES[p] if isinstance(p, str) else p)]
    if multiview and views < 2:
        raise ValueError(f"profiles {multiview} plant multi-view failures and need views >= 2, got {views}")
    if calibration is None:
        calibration = bool(multiview)
    cycle = _scene_cycle(scenes)
    depths = check_depths(rollout_depth)
    if depths:
        from robojudge.suite.sim._kinematic import KINEMATIC_TYPES
        from robojudge.suite.sim._policy import N_FRAMES

        kinematic = [x for p, x in zip(names, labels, strict=True)
                     if set((ALL_PROFILES[p] if isinstance(p, str) else p).pa_types) & set(KINEMATIC_TYPES)]
        # a kinematic failure needs two frames of its chunk (one may be the rollout's first or last)
        most = N_FRAMES // 2 if kinematic else N_FRAMES
        if max(depths) > most:
            why = (f"profiles {kinematic} plant kinematic failures in chunks of 2 frames or more"
                   if kinematic else "a chunk needs a frame")
            raise ValueError(f"rollout_depth {max(depths)} is too deep for rollouts of {N_FRAMES} frames: "
                             f"{why}, so the depth is at most {most}")
    from robojudge.suite.sim._render import SimBuildError, check_rendering
    from robojudge.video import VideoError

    check_rendering(settings.get().mujoco_gl)  # here, not as many tracebacks as workers
    out = Path(out_dir)
    manifest, kind = out / "suite.jsonl", out / "SUITE_KIND"
    # Files are rewritten in place: a rebuild stopped half-way would leave the old manifest's labels over
    # new videos, and it would validate. Both go before the first file is written, so it leaves none.
    manifest.unlink(missing_ok=True)
    kind.unlink(missing_ok=True)
    for sub in ("videos", "reference", "state") + (("calibration",) if calibration else ()):
        (out / sub).mkdir(parents=True, exist_ok=True)
    jobs = [
        (str(out), seed, e, cycle[e % len(cycle)], size, views, names, calibration, texture,
         depth_of(depths, e) if depths else None)
        for e in range(episodes)
    ]
    n = workers or max(1, min(2, usable_cpus(), episodes))
    try:
        rows = [r for rs in _build_episodes(jobs, n) for r in rs]
        # The kind (read by ``robojudge demo``) and then the manifest, last and whole (a temporary file
        # renamed over it): a build killed before the end leaves no manifest, so the next build starts
        # again instead of reusing half a suite.
        kind.write_text("sim\n")
        partial = manifest.with_name(manifest.name + ".partial")
        partial.write_text("".join(json.dumps(r) + "\n" for r in rows))
        partial.replace(manifest)
    except (VideoError, OSError) as exc:  # a full disk, most often
        raise SimBuildError(f"cannot write the simulator suite into {out}: {exc}; the folder holds part of "
                            "a build and no suite.jsonl: free space (or fix the cause) and build it again"
                            ) from exc
    return manifest
