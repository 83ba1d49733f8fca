"""The GRPO rewards on hand-made replies: exact, off by one, out of range, unparsable."""

from __future__ import annotations

import pytest

from robojudge.train import completion_text, exact_match_reward, format_reward

PA = "physical_adherence"
IA = "instruction_alignment"


def _conv(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def test_exact_match_reward_on_hand_made_replies() -> None:
    completions = [
        _conv(f'{{"reasoning": "the cup melts", "{PA}": 2}}'),  # exact
        _conv(f'{{"{PA}": 3}}'),  # off by one
        _conv("a fine video, I would say four"),  # unparsable
        _conv(f'{{"{PA}": 7}}'),  # out of the rubric's range: not a score
        _conv(f'```json\n{{"{IA}": 5}}\n```'),  # exact, in a fence, IA
        [{"role": "assistant", "content": [{"type": "text", "text": f'{{"{IA}": 1}}'}]}],  # blocks, off by 4
    ]
    scores = [2, 2, 4, 5, 5, 5]
    rubrics = ["pa", "pa", "pa", "pa", "ia", "ia"]
    assert exact_match_reward(completions, score=scores, rubric=rubrics) == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert format_reward(completions, rubric=rubrics) == [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]
    # extra dataset columns arrive as keyword arguments too and are ignored
    reward = exact_match_reward([f'{{"{PA}": 4}}'], score=[4], rubric="pa", item_id=["x"], prompts=[[]])
    assert reward == [1.0]


def test_reward_needs_the_label_columns() -> None:
    with pytest.raises(ValueError, match="'score' and 'rubric'"):
        exact_match_reward([_conv("{}")], rubric=["pa"])
    with pytest.raises(ValueError, match="1 completions but 2 scores"):
        exact_match_reward([_conv("{}")], score=[1, 2], rubric="pa")


def test_completion_text_reads_every_completion_shape() -> None:
    assert completion_text("plain") == "plain"
    assert completion_text({"role": "assistant", "content": "one"}) == "one"
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    blocks = [{"role": "assistant", "content": parts}]
    assert completion_text(blocks) == "ab"
