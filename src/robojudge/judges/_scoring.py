"""Scoring modes: the written score (argmax), the probability-weighted score, self-consistency votes."""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from robojudge.judges._backend import TokenLogprob
from robojudge.judges._parse import score_char_offset
from robojudge.judges._rubric import Rubric

EXPECTED_FALLBACK = "expected requested, backend gave no usable log-probabilities"
"""Why a row asked to be scored ``expected`` holds the argmax score (its config's ``scoring_note``)."""


class Scoring(StrEnum):
    """How a judge's reply becomes a number.

    ``argmax``: the score the model wrote (RoboJudge's protocol). ``expected``: the mean of the
    valid scores weighted by the probabilities of their tokens at the position where the score was
    written (needs log-probabilities from the backend; single-token scores such as 1-5). A
    judgment for which the backend gave none is scored ``argmax`` and stored under a config that
    says so (:data:`EXPECTED_FALLBACK`), apart from true expected scores.
    """

    argmax = "argmax"
    expected = "expected"


def expected_score(
    text: str, logprobs: tuple[TokenLogprob, ...], rubric: Rubric, score: float | None = None
) -> tuple[float, dict[str, float]] | None:
    """Probability-weighted score from the alternatives at the score token, or ``None`` if not found.

    The score token is the one holding the value the parser read: the score key's value in the
    JSON, not a mention of the key in the reasoning. With ``score`` (the parsed score), a token
    that does not spell exactly that number gives ``None`` (the judgment is then scored argmax,
    marked as a fallback): the alternatives of some other token would weigh the wrong position.

    Returns:
        ``(expected score, {score: probability})`` with probabilities renormalised over the valid scores.
    """
    joined = "".join(t.token for t in logprobs)
    # The token text may differ from the reply text (some servers strip); search in the joined tokens.
    offset = score_char_offset(joined, rubric, score)
    if offset is None:
        return None
    pos = 0
    for tok in logprobs:
        end = pos + len(tok.token)
        if pos <= offset < end:
            if score is not None and _token_number(tok.token) != score:
                return None  # the score is spread over tokens, or the token holds more than it
            alternatives = list(tok.top) or [(tok.token, tok.logprob)]
            probs: dict[str, float] = {}
            for alt, lp in alternatives:
                v = _token_number(alt)
                if v is None or not v.is_integer():
                    continue
                if rubric.score_min <= v <= rubric.score_max and math.isfinite(lp):
                    probs[str(int(v))] = probs.get(str(int(v)), 0.0) + math.exp(lp)
            total = sum(probs.values())
            if total <= 0:
                return None
            dist = {k: p / total for k, p in sorted(probs.items(), key=lambda kv: int(kv[0]))}
            return sum(int(k) * p for k, p in dist.items()), dist
        pos = end
    return None


def _token_number(token: str) -> float | None:
    """The integer a token spells (spaces and quotes around it allowed), else ``None``."""
    s = token.strip().strip("\"'")
    return float(int(s)) if re.fullmatch(r"-?[0-9]{1,12}", s) else None


@dataclass(frozen=True)
class Vote:
    """Self-consistency over several turns (RoboWorM Table D3 style).

    Attributes:
        value: Majority score (ties go to the tied score nearest the mean, then the lower one).
        mean: Mean of the valid turns.
        std: Population standard deviation of the valid turns.
        agreement: True when every turn parsed and gave the same score.
        valid: Turns that produced a score.
        turns: Turns asked.
        scores: The per-turn scores (``None`` for an unparsable turn).
    """

    value: float
    mean: float
    std: float
    agreement: bool
    valid: int
    turns: int
    scores: list[float | None]

    def details(self) -> dict[str, Any]:
        return {
            "votes": self.scores,
            "mean": self.mean,
            "std": self.std,
            "agreement": self.agreement,
            "valid_turns": self.valid,
            # not "turns": the row keeps the turns' records there (older rows hold this count there)
            "n_turns": self.turns,
        }


def answered_agreement(details: dict[str, Any]) -> bool:
    """Whether the turns of a voted row that got a reply all gave the same score (an unparsable one
    disagrees); a turn whose request failed (``details.failed_turns``, numbered from 1) is left out."""
    failed = set(details.get("failed_turns") or ())
    votes = [v for i, v in enumerate(details.get("votes") or []) if i + 1 not in failed]
    return bool(votes) and None not in votes and len(set(votes)) == 1


def majority_vote(scores: list[float | None]) -> Vote | None:
    """Aggregate per-turn scores; ``None`` when no turn produced a score."""
    valid = [s for s in scores if s is not None]
    if not valid:
        return None
    if len(scores) == 1:  # one turn, the common case: no vote to take
        only = valid[0]
        return Vote(value=only, mean=only, std=0.0, agreement=True, valid=1, turns=1, scores=list(scores))
    mean = statistics.fmean(valid)
    counts = Counter(valid)
    top = max(counts.values())
    tied = [s for s, c in counts.items() if c == top]
    value = min(tied, key=lambda s: (abs(s - mean), s))
    return Vote(
        value=value,
        mean=mean,
        std=statistics.pstdev(valid) if len(valid) > 1 else 0.0,
        agreement=len(valid) == len(scores) and len(counts) == 1,
        valid=len(valid),
        turns=len(scores),
        scores=list(scores),
    )
