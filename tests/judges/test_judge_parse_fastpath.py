"""A reply that is exactly one JSON object takes a shortcut; it must find what the full search finds."""

from __future__ import annotations

import pytest

from robojudge.judges._parse import find_json_object

REPLIES = [
    '{"reasoning": "fine", "physical_adherence": 4}',
    '  \n{"reasoning": "braces } and { inside", "instruction_alignment": 2}\n',
    '<think>maybe {"x": 1}</think>{"reasoning": "ok", "physical_adherence": 5}',
    '{"reasoning": "nested", "scores": {"physical_adherence": 3}}',
    '{"reasoning": "fence inside ```json\\n{\\"physical_adherence\\": 2}\\n```", "other": 1}',
    '{"physical_adherence": 4, "reasoning": "trailing comma",}',
    "{'reasoning': 'single quotes', 'physical_adherence': 3}",
    '{"a": 1} {"physical_adherence": 2}',
]


@pytest.mark.parametrize("reply", REPLIES, ids=range(len(REPLIES)))
@pytest.mark.parametrize("key", [None, "physical_adherence", "instruction_alignment"])
def test_shortcut_agrees_with_the_full_search(reply: str, key: str | None) -> None:
    # A leading word keeps the reply from being "exactly one object", forcing the full search,
    # which skips text outside braces; both must pick the same object.
    assert find_json_object(reply, key) == find_json_object("Answer: " + reply, key)


def test_shortcut_results() -> None:
    assert find_json_object(REPLIES[0], "physical_adherence") == {
        "reasoning": "fine",
        "physical_adherence": 4,
    }
    # the key is in no object (the fenced text is escaped): the whole object is the fallback
    assert find_json_object(REPLIES[4], "physical_adherence") == {
        "reasoning": 'fence inside ```json\n{"physical_adherence": 2}\n```',
        "other": 1,
    }
    # the key is only in a later object: the shortcut does not stop at the first
    assert find_json_object(REPLIES[7], "physical_adherence") == {"physical_adherence": 2}
    assert find_json_object(REPLIES[5], "physical_adherence") == {
        "physical_adherence": 4,
        "reasoning": "trailing comma",
    }
