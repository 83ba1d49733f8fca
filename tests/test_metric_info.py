"""robojudge.metric_info.direction: the one direction lookup; an id nobody knows is an error."""

from __future__ import annotations

import pytest

from robojudge.metric_info import direction, taxonomy_direction
from robojudge.metrics import list_metrics
from robojudge.registry import UnknownNameError
from robojudge.taxonomy import load_taxonomy


def test_registry_rubric_and_taxonomy_directions() -> None:
    assert direction("iq1_ssim") is True
    assert direction("iq1_lpips") is False
    # A judge score on a built-in rubric grows with quality.
    assert direction("judge:vlm:pa") is True
    # Every registered metric answers with its own declared direction.
    for spec in list_metrics():
        assert direction(spec.id) is bool(spec.higher_is_better), spec.id
    # Every taxonomy id has a direction, the taxonomy's where the registry does not override it.
    tax = load_taxonomy()
    for metric_id in tax.ids:
        assert taxonomy_direction(metric_id) is tax[metric_id].higher_is_better
        assert isinstance(direction(metric_id), bool)


@pytest.mark.parametrize("lookup", [direction, taxonomy_direction])
def test_unknown_id_is_an_error_naming_it(lookup: object) -> None:
    with pytest.raises(UnknownNameError) as info:
        lookup("iq1_lpip")  # type: ignore[operator]
    message = str(info.value)
    assert "'iq1_lpip'" in message
    assert "Did you mean 'iq1_lpips'" in message
    assert isinstance(info.value, KeyError)  # callers that tolerate unknown ids catch KeyError


def test_unknown_judge_rubric_and_plain_column_are_errors() -> None:
    for metric_id in ("judge:vlm:no_such_rubric", "jitter"):
        with pytest.raises(UnknownNameError, match=repr(metric_id)):
            direction(metric_id)
