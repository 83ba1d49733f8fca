"""Fixtures for the model tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from robojudge.models import WEIGHTS, WeightSpec, register_weights


@pytest.fixture
def toy_weights() -> Iterator[Callable[[WeightSpec], None]]:
    """Registers specs for one test (replacing an earlier one of the same name) and removes them after."""
    added: list[str] = []

    def add(spec: WeightSpec) -> None:
        WEIGHTS.remove(spec.name)
        register_weights(spec)
        added.append(spec.name)

    yield add
    for name in added:
        WEIGHTS.remove(name)
