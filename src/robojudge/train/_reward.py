"""Rewards for GRPO on judge replies (RoboJudge Sec. 4.2, App. G).

Both are plain functions in the form TRL's ``GRPOTrainer`` takes for ``reward_funcs``: the
completions of a batch, plus the dataset's columns as keyword arguments (here ``score``, the human
score, and ``rubric``, the rubric id; both are columns of ``robojudge train export``'s records).
A reply is read by the judges' own parser (:func:`robojudge.judges.parse_reply`), so what earns a
reward is exactly what the judge would score.

* :func:`exact_match_reward`: 1 when the parsed score equals the human score, else 0; an
  unparsable reply earns 0.
* :func:`format_reward`: 1 when the reply parses to a valid score (whatever its value), else 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from robojudge.judges import Rubric, get_rubric, parse_reply


@cache
def _rubric(rubric_id: str) -> Rubric:
    return get_rubric(rubric_id)


def completion_text(completion: Any) -> str:
    """The reply text of one completion: a string, or a conversation whose last message is the reply
    (its content a string or a list of typed blocks)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    message = completion[-1] if completion else {}
    content = message.get("content", "") if isinstance(message, dict) else ""
    if isinstance(content, str):
        return content
    texts = [c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"]
    return "".join(str(t or "") for t in texts)


def _columns(n: int, score: Sequence[Any] | None, rubric: Sequence[str] | str | None) -> list[str]:
    if score is None or rubric is None:
        raise ValueError("the reward needs the dataset columns 'score' and 'rubric' (robojudge train export "
                         "writes both)")
    rubrics = [rubric] * n if isinstance(rubric, str) else list(rubric)
    if len(score) != n or len(rubrics) != n:
        raise ValueError(f"{n} completions but {len(score)} scores and {len(rubrics)} rubrics")
    return rubrics


def exact_match_reward(completions: Sequence[Any], score: Sequence[Any] | None = None,
                       rubric: Sequence[str] | str | None = None, **kwargs: Any) -> list[float]:
    """1.0 where the reply's parsed score equals the human ``score``, else 0.0 (also when unparsable)."""
    rubrics = _columns(len(completions), score, rubric)
    out = []
    for completion, human, rid in zip(completions, score or [], rubrics, strict=True):
        parsed = parse_reply(completion_text(completion), _rubric(rid))
        out.append(1.0 if parsed.ok and human is not None and parsed.score == float(human) else 0.0)
    return out


def format_reward(completions: Sequence[Any], rubric: Sequence[str] | str | None = None,
                  **kwargs: Any) -> list[float]:
    """1.0 where the reply parses to a valid score under its rubric, else 0.0."""
    rubrics = _columns(len(completions), [None] * len(completions), rubric)
    return [1.0 if parse_reply(completion_text(c), _rubric(r)).ok else 0.0
            for c, r in zip(completions, rubrics, strict=True)]


REWARDS: dict[str, Callable[..., list[float]]] = {"exact": exact_match_reward, "format": format_reward}
"""The rewards ``robojudge train grpo --reward`` names."""
