"""A toy set metric shared by the set-grouping tests: its value is its group's number of items."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from robojudge.metrics import METRICS, SET_METRICS, Score
from robojudge.metrics import _sets as sets


@contextmanager
def toy_set_count() -> Iterator[str]:
    """Register ``toy_set_count`` in scratch registries for the ``with`` block; yields its id."""
    with METRICS.scratch(), SET_METRICS.scratch():
        @sets.set_metric("toy_set_count", output="group", family="features", inputs={"video"},
                         higher_is_better=True, native_range=(0.0, None), citation="toy", provider="computed",
                         description="the number of items in the group")
        def n_items(group: sets.ItemGroup, config: object) -> sets.SetScores:
            return sets.SetScores(group=Score(value=float(len(group.items))))

        yield "toy_set_count"
