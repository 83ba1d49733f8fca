"""Whether the networks a metric declares are on this machine (``--metrics all`` runs only those)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from robojudge.metrics._registry import MetricSpec


def present_names(specs: Sequence[MetricSpec[Any]]) -> dict[str, bool]:
    """Presence of every network the given metrics declare (each resolved once)."""
    from robojudge.models import get_weights, weights_path

    out: dict[str, bool] = {}
    for name in {n for s in specs for n in s.weights}:
        try:
            out[name] = weights_path(get_weights(name)) is not None
        except KeyError:  # named by a metric but never registered
            out[name] = False
    return out


def weights_present(spec: MetricSpec[Any], present: Mapping[str, bool] | None = None) -> bool:
    """Whether ``spec`` declares weights and every one of them is on this machine.

    A metric that declares no weights, or names weights nobody registered, is not runnable by
    ``all`` (every built-in model metric declares its networks; a plugin's might not).
    """
    present = present_names([spec]) if present is None else present
    return bool(spec.weights) and all(present.get(n, False) for n in spec.weights)


def missing_weights(spec: MetricSpec[Any], present: Mapping[str, bool] | None = None) -> list[str]:
    """The names among ``spec.weights`` that are not on this machine (or not registered)."""
    present = present_names([spec]) if present is None else present
    return [n for n in spec.weights if not present.get(n, False)]
