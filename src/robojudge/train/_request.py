"""One labelled item as a judge sees it and as a trained judge should answer it.

The request is the one :class:`robojudge.judges.JudgeEngine` sends on its first turn (the rubric's
prompts for the item's instruction, the conditioning-frame label, the frames at the judge's
sampling); the messages are the ones the ``hf`` backend builds from it
(:func:`robojudge.judges.chat_messages`). The target reply is a JSON object the judge's parser
reads: the reasoning first, when the labels carry evidence notes, then the score.
"""

from __future__ import annotations

import json
from typing import Any

from robojudge.judges import ChatRequest, JudgeConfig, Rubric
from robojudge.suite import Item
from robojudge.video import SampledFrames


class ExportError(ValueError):
    """Labels or a rubric that cannot become training data; the message names what and where."""


def judge_request(config: JudgeConfig, rubric: Rubric, instruction: str | None,
                  frames: SampledFrames | None) -> ChatRequest:
    """The first-turn request a judge with ``config`` sends for one item under ``rubric``.

    Raises:
        ValueError: The rubric needs an instruction and the item has none.
    """
    system, user = rubric.render(instruction)
    s = config.sampling
    return ChatRequest(
        system=system,
        user=user,
        frames=frames,
        first_frame_label=rubric.first_frame_label,
        temperature=s.temperature,
        top_p=s.top_p,
        seed=s.seed,
        max_tokens=s.max_tokens,
    )


def label_score(item: Item, rubric: Rubric) -> int | None:
    """The item's human score for ``rubric`` (``None`` when unlabelled on it).

    Raises:
        ExportError: The labels have no field for this rubric (only ``pa`` and ``ia`` are labelled).
    """
    if rubric.kind != "score":
        raise ExportError(f"rubric {rubric.id!r} answers with {rubric.kind}, not a score: only score rubrics "
                          "can be trained on labels")
    if rubric.id not in ("pa", "ia"):
        raise ExportError(f"rubric {rubric.id!r}: labels hold scores for pa and ia only")
    if item.labels is None:
        return None
    value: int | None = getattr(item.labels, rubric.id)
    if value is not None and not rubric.score_min <= value <= rubric.score_max:
        raise ExportError(f"item {item.item_id!r}: label {rubric.id}={value} is outside the rubric's range "
                          f"{rubric.score_min:g}-{rubric.score_max:g}")
    return value


def target_reply(rubric: Rubric, score: int, evidence: str | None = None) -> str:
    """The reply a trained judge should give: ``{"<reasoning>": evidence, "<score key>": score}``.

    Without evidence notes the reply holds the score alone (the parser does not need reasoning),
    rather than a made-up justification.
    """
    obj: dict[str, Any] = {}
    if evidence and evidence.strip():
        obj[rubric.reasoning_key] = evidence.strip()
    obj[rubric.score_key] = int(score)
    return json.dumps(obj, ensure_ascii=False)
