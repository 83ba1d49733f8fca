"""Label values: parsing form fields, range checks naming the field, completeness, diffs, draft tracking."""

from __future__ import annotations

import pytest

from robojudge.annotate import InvalidLabel, LabelValues
from robojudge.annotate._admin import segment_count
from robojudge.annotate._protocol import changed_fields, draft_agreement


def test_form_fields_parse_and_round_trip() -> None:
    v = LabelValues.from_form(
        {
            "pa": "4",
            "ia": "",
            "checklist.goal_completion": "0",
            "evidence": "  ",
            "segments.1": "Bad",
            "segments.0": "good",
        }
    )
    assert v.pa == 4 and v.ia is None and v.checklist["goal_completion"] == 0 and v.evidence is None
    assert v.segments == ("good", "bad")
    assert list(v.checklist) == [
        "agent_consistency",
        "scene_consistency",
        "interaction_realism",
        "agent_match",
        "object_correctness",
        "goal_completion",
    ]
    assert LabelValues.from_json(v.to_json()) == v
    # Nested JSON shape too.
    assert (
        LabelValues.from_form({"pa": 4, "checklist": {"goal_completion": 0}, "segments": ["good", "bad"]})
        == v
    )


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"pa": "6"}, "pa"),
        ({"ia": 0}, "ia"),
        ({"pa": 3.5}, "pa"),
        ({"pa": True}, "pa"),
        ({"pa": "four"}, "pa"),
        ({"checklist.goal_completion": 3}, "checklist.goal_completion"),
        ({"checklist.vibes": 1}, "checklist.vibes"),
        ({"segments.2": "awful"}, "segments.2"),
        ({"segments.x": "bad"}, "segments.x"),
        ({"generator": "x"}, "generator"),
        ({"evidence": 5}, "evidence"),
    ],
)
def test_bad_values_name_their_field(form: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidLabel) as err:
        LabelValues.from_form(form)
    assert err.value.field == field and field in str(err.value)


def test_missing_lists_required_fields_in_order() -> None:
    v = LabelValues.from_form({"pa": 3, "checklist.agent_match": 1, "segments.0": "bad"})
    assert v.missing(2) == [
        "ia",
        "checklist.agent_consistency",
        "checklist.scene_consistency",
        "checklist.interaction_realism",
        "checklist.object_correctness",
        "checklist.goal_completion",
        "segments.1",
    ]
    assert LabelValues().missing(0)[0] == "pa"


def test_changed_fields_and_draft_agreement() -> None:
    a = LabelValues.from_form({"pa": 3, "ia": 4})
    b = LabelValues.from_form({"pa": 3, "ia": 2, "checklist.agent_match": 1})
    assert changed_fields(None, a) == ("pa", "ia")
    assert changed_fields(a, b) == ("ia", "checklist.agent_match")
    assert changed_fields(b, a) == ("ia", "checklist.agent_match")
    assert draft_agreement(a, b) == {"pa": True, "ia": False}


@pytest.mark.parametrize(
    ("duration", "n"), [(None, 0), (0.0, 0), (2.0, 1), (3.0, 1), (3.0000001, 1), (3.5, 2), (6.0, 2), (7.0, 3)]
)
def test_segment_count(duration: float | None, n: int) -> None:
    assert segment_count(duration, 3.0) == n
