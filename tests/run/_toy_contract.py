"""Metrics that break a metric's contract, as a plugin's bug would: no Score. Registered for the using
test module only (the ``contract_toy`` fixture); worker processes import this module when they unpickle
a metric's function."""

from __future__ import annotations

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
