"""A set-level metric for the crash-guard tests, loaded only in their subprocesses (ROBOJUDGE_PLUGINS)."""

from __future__ import annotations

import os

from robojudge.metrics import Score
from robojudge.metrics import _sets as sets


@sets.set_metric("test_set_segfault", output="group", family="features", inputs={"instruction"},
                 higher_is_better=True, native_range=(0.0, None), citation="robojudge test suite",
                 provider="computed", description="test-only: a segfault on a group named crash")
def set_segfault(group: sets.ItemGroup, config: object) -> sets.SetScores:
    if group.key.startswith("crash"):
        import ctypes

        ctypes.string_at(0)  # a real segmentation fault, as in a native library
    return sets.SetScores(group=Score(value=float(len(group.items)), details={"pid": os.getpid()}))
