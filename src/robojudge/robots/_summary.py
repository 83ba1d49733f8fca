"""What ``robojudge robots check`` prints: a spec's keypoints, links (with their lengths) and joints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robojudge.robots._fk import forward_kinematics, link_lengths, rigid_pairs
from robojudge.robots._spec import RobotSpec


@dataclass(frozen=True)
class LinkInfo:
    """One link: its keypoints, its length at the model's rest pose, and whether it is really rigid."""

    a: str
    b: str
    length: float  # metres, at all joints zero (MJCF: the spec's joints at 0, the others at qpos0)
    rigid: bool  # its length stays fixed over random configurations within the limits


@dataclass(frozen=True)
class RobotSummary:
    """A checked spec, for printing."""

    spec: RobotSpec
    links: list[LinkInfo]
    joints: list[tuple[str, tuple[float, float] | None]]


def summarize_robot(spec: RobotSpec, samples: int = 64, seed: int = 0) -> RobotSummary:
    """Keypoints, links with rest length and rigidity, and joint limits of a loaded spec."""
    rest = forward_kinematics(spec, np.zeros((1, len(spec.joints))))
    lengths = link_lengths(rest, spec.link_index)[0]
    rigid = set(rigid_pairs(spec, samples, seed))
    links = [
        LinkInfo(a, b, float(n), (a, b) in rigid or (b, a) in rigid)
        for (a, b), n in zip(spec.links, lengths, strict=True)
    ]
    return RobotSummary(spec, links, [(j, spec.limits.get(j)) for j in spec.joints])
