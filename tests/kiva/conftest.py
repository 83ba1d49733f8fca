"""A tiny simulator suite and a tiny trained reader, built once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")

from _kiva_consts import EPISODES, JITTER, SIZE, TINY  # noqa: E402  (after MUJOCO_GL is set)


@pytest.fixture(scope="session")
def kiva_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mujoco")
    from robojudge.suite.sim import Profile, make_sim_suite

    # Besides faithful rollouts, each episode once with severe joint jitter planted (K3's kinematic
    # failures): rollouts with failures never train the reader, so they are KIVA's planted test cases.
    jitter = Profile(JITTER, 1.0, (1, 1), (0.9, 1.0), ("jitter",), 0.0, (0.1, 0.1), (), "severe jitter only")

    # Two worker processes, never this one: after MuJoCo has rendered through EGL here, torch's import of
    # its compiler package (torch.use_deterministic_algorithms loads it) crashes the process.
    out = tmp_path_factory.mktemp("kiva_suite")
    return make_sim_suite(out, seed=0, episodes=EPISODES, views=1, size=SIZE, profiles=("oracle", jitter),
                          workers=2)


@pytest.fixture(scope="session")
def tiny_reader(kiva_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reader trained on the suite's Fetch episodes and calibrated on its Fetch references."""
    pytest.importorskip("torch")
    from robojudge.kiva import TrainConfig, calibrate_reader, train_reader

    out = tmp_path_factory.mktemp("kiva_reader")
    train_reader(kiva_suite, "fetch", out, TrainConfig(**TINY))
    calibrate_reader(out, kiva_suite)
    return out
