"""The agreement check every computed metric's tests use: registered metric = functional form = reference.

:func:`agree` scores one item with the registered metric, calls the metric's functional form
(``robojudge.metrics.functional``) on the same arrays and an independent reference (a library such as
scikit-image, SciPy or OpenCV, or a paper's formula written out in the test), and asserts that

* the registered value equals the functional value, tightly: the metric must call the functional form
  on the arrays it reads, so anything beyond float noise means the two implementations drifted apart;
* both equal the reference within the reference's own tolerance (a library may round differently);
* the value lies in the metric's declared ``native_range``.

A reference is required. Where no library computes the quantity (a simulator's flag count, a seeded
draw), pass the reason as a string instead; the test then checks the value another way.

Usage, from a test module in tests/metrics (the folder is on ``sys.path``)::

    from _agree import agree

    score = agree("iq1_psnr", item, functional=lambda: F.psnr(gen, ref),
                  reference=lambda: peak_signal_noise_ratio(ref, gen, data_range=255))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from robojudge.metrics import Score, get_metric
from robojudge.suite import Item


def agree(
    metric_id: str,
    item: Item,
    *,
    functional: Callable[[], float],
    reference: Callable[[], float] | str,
    config: BaseModel | dict[str, Any] | None = None,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    reference_rtol: float | None = None,
    reference_atol: float | None = None,
) -> Score:
    """Assert that ``metric_id`` on ``item``, ``functional()`` and ``reference()`` agree; return the Score.

    Args:
        metric_id: The registered metric to compute.
        item: The item it scores (its files hold the arrays the two callables use).
        functional: The metric's functional form called on those arrays.
        reference: An independent computation of the same value, or a string saying why there is none.
        config: The metric's config, or plain values for ``make_config``; ``None`` for its defaults.
        rtol: Relative tolerance between the registered and the functional value.
        atol: Absolute tolerance between them (values near 0).
        reference_rtol: Relative tolerance against the reference; ``rtol`` when not given.
        reference_atol: Absolute tolerance against the reference; ``atol`` when not given.
    """
    spec = get_metric(metric_id)
    cfg = config if isinstance(config, BaseModel) else spec.make_config(config)
    score = spec.compute(item, cfg)
    assert score.scored, f"{metric_id} left the item unscored: {score.details.get('unscored_reason')}"
    got = float(score.value)
    want = float(functional())
    assert math.isclose(got, want, rel_tol=rtol, abs_tol=atol), (
        f"{metric_id}: registered metric gives {got!r}, its functional form {want!r}")
    if isinstance(reference, str):
        assert reference.strip(), "a metric without a reference must say why"
    else:
        ref = float(reference())
        r_rtol = rtol if reference_rtol is None else reference_rtol
        r_atol = atol if reference_atol is None else reference_atol
        for name, value in (("registered metric", got), ("functional form", want)):
            assert math.isclose(value, ref, rel_tol=r_rtol, abs_tol=r_atol), (
                f"{metric_id}: {name} gives {value!r}, the reference {ref!r}")
    lo, hi = spec.native_range
    assert (lo is None or got >= lo) and (hi is None or got <= hi), (
        f"{metric_id}: {got!r} lies outside its native range {spec.native_range}")
    return score
