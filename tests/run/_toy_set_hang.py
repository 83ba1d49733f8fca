"""A set-level metric that never returns on a group named "hang...", for the time-limit tests; registered
only inside a registry scratch (tests/run/test_timelimit.py)."""

from __future__ import annotations

import time

from robojudge.metrics import Score
from robojudge.metrics import _sets as sets


@sets.set_metric("test_set_hang", output="group", family="features", inputs={"instruction"},
                 higher_is_better=True, native_range=(0.0, None), citation="robojudge test suite",
                 provider="computed", description="test-only: never returns on a group named hang")
def set_hang(group: sets.ItemGroup, config: object) -> sets.SetScores:
    while group.key.startswith("hang"):
        time.sleep(0.01)
    return sets.SetScores(group=Score(value=float(len(group.items))))
