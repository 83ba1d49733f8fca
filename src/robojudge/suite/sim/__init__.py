"""A simulator-grounded suite: MuJoCo episodes, a calibrated camera rig, privileged state, planted failures.

Real episodes come from gymnasium-robotics scenes (Fetch pick-and-place for a parallel-jaw gripper,
ADROIT relocate for a dexterous hand; opt-in, a bimanual ALOHA and a Franka Panda, see
``make_sim_suite(scenes=...)``) driven by scripted policies and rendered offscreen. Stand-in
"generators" re-render each episode from edited state sequences with known failures, and reference
labels are derived from those failures by a documented rule (``labels.rater == "planted"``).
See docs/sim_suite.md. Needs the ``sim`` extra; MuJoCo is imported only when a function runs.
"""

from robojudge.suite.sim._build import make_sim_suite
from robojudge.suite.sim._labels import (
    KINEMATIC_PROFILES,
    MULTIVIEW_PROFILES,
    PROFILES,
    TRUE_RANKING,
    Profile,
    planted_labels,
)
from robojudge.suite.sim._multiview import MULTIVIEW_TYPES, multiview_labels
from robojudge.suite.sim._render import SimBuildError
from robojudge.suite.sim._segments import segment_verdicts

__all__ = [
    "KINEMATIC_PROFILES",
    "MULTIVIEW_PROFILES",
    "MULTIVIEW_TYPES",
    "PROFILES",
    "TRUE_RANKING",
    "Profile",
    "SimBuildError",
    "make_sim_suite",
    "multiview_labels",
    "planted_labels",
    "segment_verdicts",
]
