"""Model-assisted draft labels: several judges' PA/IA averaged, with their reasoning (RoboJudge App. A.2).

RoboJudge (paper 000, Sec. 3.3 and App. A.2) pre-annotates its training pool with three MLLM judges,
averages their PA/IA scores into a draft label, and has annotators review and correct the draft.
:func:`draft_labels` does the averaging for any number of judges and rubrics; the stored rows are
read by :func:`robojudge.run._judge.draft_from_store`, and ``robojudge judge draft`` writes the
drafts as JSON Lines for the annotation workflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from robojudge.judges._specialized import round_half_up


@dataclass(frozen=True)
class JudgeOpinion:
    """One judge's stored answer for one (item, rubric).

    Attributes:
        score: The judge's score, ``None``/NaN when the item is unscored or failed.
        reasoning: The judge's reasoning text, if any.
    """

    score: float | None
    reasoning: str | None = None

    @property
    def valid(self) -> bool:
        return self.score is not None and math.isfinite(self.score)


@dataclass
class DraftScore:
    """The draft for one rubric of one item.

    Attributes:
        label: The proposed integer label: the mean rounded half up and clipped to the rubric's
            range; ``None`` when fewer than ``min_judges`` judges gave a score.
        mean: Mean of the valid judges' scores (``None`` when there are none).
        spread: Largest minus smallest valid score (disagreement among the judges).
        n_judges: Judges that gave a valid score.
        judges: Per judge: its score (``None`` when unscored) and reasoning.
        note: Why there is no label, when there is none.
    """

    label: int | None
    mean: float | None
    spread: float | None
    n_judges: int
    judges: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "mean": self.mean,
            "spread": self.spread,
            "n_judges": self.n_judges,
            "judges": self.judges,
            **({"note": self.note} if self.note else {}),
        }


def draft_score(
    opinions: Mapping[str, JudgeOpinion], score_range: tuple[float, float] = (1, 5), min_judges: int = 1
) -> DraftScore:
    """Average several judges' scores for one (item, rubric) into a draft.

    Args:
        opinions: Judge name -> its opinion.
        score_range: The rubric's ``(min, max)``; the label is clipped into it.
        min_judges: Fewest valid scores needed for a label.
    """
    valid = {name: float(op.score) for name, op in opinions.items() if op.valid and op.score is not None}
    per_judge = {
        name: {"score": valid.get(name), "reasoning": op.reasoning} for name, op in sorted(opinions.items())
    }
    if not valid:
        return DraftScore(None, None, None, 0, per_judge, "no judge gave a score")
    mean = sum(valid.values()) / len(valid)
    spread = max(valid.values()) - min(valid.values())
    if len(valid) < min_judges:
        note = f"only {len(valid)} of the required {min_judges} judges gave a score"
        return DraftScore(None, mean, spread, len(valid), per_judge, note)
    lo, hi = score_range
    label = int(min(max(round_half_up(mean), math.ceil(lo)), math.floor(hi)))
    return DraftScore(label, mean, spread, len(valid), per_judge)


def draft_labels(
    opinions: Mapping[str, Mapping[str, Mapping[str, JudgeOpinion]]],
    rubrics: Sequence[str],
    *,
    ranges: Mapping[str, tuple[float, float]] | None = None,
    min_judges: int = 1,
) -> dict[str, dict[str, DraftScore]]:
    """Drafts for every item: ``{item_id: {rubric: DraftScore}}``.

    Args:
        opinions: ``{item_id: {rubric: {judge: JudgeOpinion}}}``.
        rubrics: Rubric ids to draft (``["pa", "ia"]``); an item lacking one gets an empty draft.
        ranges: Score range per rubric (default 1-5, RoboJudge's PA/IA scale).
        min_judges: Fewest valid judge scores needed for a label.
    """
    ranges = ranges or {}
    out: dict[str, dict[str, DraftScore]] = {}
    for item_id in sorted(opinions):
        per_rubric = opinions[item_id]
        out[item_id] = {
            r: draft_score(per_rubric.get(r, {}), ranges.get(r, (1, 5)), min_judges) for r in rubrics
        }
    return out
