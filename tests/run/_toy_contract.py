"""Metrics that break a metric's contract, as a plugin's bug would: no Score, an infinite value, one
outside the declared native range. Registered for the using test module only (the ``contract_toy``
fixture); worker processes import this module when they unpickle a metric's function."""

from __future__ import annotations

import math

from robojudge.metrics import Score, metric

COMMON = dict(
    family="baseline",
    inputs={"instruction"},
    higher_is_better=True,
    version="1",
    citation="robojudge test suite",
    description="test-only metric",
)


@metric("test_fine", native_range=(0.0, 1.0), **COMMON)
def fine(item, config) -> Score:
    return Score(value=0.25)


@metric("test_returns_float", native_range=(0.0, 1.0), **COMMON)
def returns_float(item, config):  # type: ignore[no-untyped-def]
    return 0.5  # Score(value=0.5) forgotten


@metric("test_returns_none", native_range=(0.0, 1.0), **COMMON)
def returns_none(item, config):  # type: ignore[no-untyped-def]
    return None


@metric("test_out_of_range", native_range=(0.0, 1.0), **COMMON)
def out_of_range(item, config) -> Score:
    # "edge" items give the range's own ends, which are in it
    value = {"high": 7.5, "low": -3.0, "edge0": 0.0, "edge1": 1.0}.get(item.item_id, 0.5)
    return Score(value=value)


@metric("test_infinite", native_range=(0.0, None), **COMMON)
def infinite(item, config) -> Score:
    if item.item_id == "nan":  # the documented way to say "nothing to measure": stays an ok row
        return Score.unscored("nothing to measure here")
    if item.item_id == "bare_nan":  # NaN without a reason is unscored as well
        return Score(value=math.nan)
    return Score(value={"inf": math.inf, "neginf": -math.inf}.get(item.item_id, 1e300))
