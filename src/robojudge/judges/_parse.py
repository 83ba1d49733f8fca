"""Getting a score out of a judge's reply: find the JSON, read it leniently, check type and range."""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from robojudge.judges._rubric import Rubric

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_INT_DIGITS = 4000
"""Longest integer read as such (Python refuses to convert beyond 4300 digits); longer ones read as
plus or minus infinity, which is out of any rubric's range."""


def _bounded_int(text: str) -> int | float:
    if len(text) <= _INT_DIGITS:
        return int(text)
    return -math.inf if text.startswith("-") else math.inf


def _loads(text: str) -> Any:
    return json.loads(text, parse_int=_bounded_int)


@dataclass(frozen=True)
class ParseResult:
    """The outcome of reading one reply.

    Attributes:
        score: The validated score, or ``None`` when the reply is unusable.
        reasoning: The reasoning text, when the reply had one.
        error: Why the reply is unusable (``None`` on success).
        obj: The JSON object that was read, if any.
        parts: What the score was built from: ``{check: bool}`` for a checks rubric,
            ``{"label": ...}`` for a label rubric, ``{"text": ...}`` for a text rubric.
    """

    score: float | None
    reasoning: str | None = None
    error: str | None = None
    obj: dict[str, Any] | None = None
    parts: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.score is not None


def strip_thinking(text: str) -> str:
    """Drop ``<think>...</think>`` blocks; after an orphan ``</think>`` keep only what follows it; drop
    an unclosed ``<think>`` and everything after it (a reply cut off mid-thought holds no answer, only
    drafts the model may have been about to revise)."""
    text = _closed_thinking_dropped(text)
    start = text.lower().find("<think>")
    return text if start < 0 else text[:start]


def _closed_thinking_dropped(text: str) -> str:
    text = _THINK.sub("", text)
    end = text.lower().rfind("</think>")
    return text if end < 0 else text[end + len("</think>") :]


def ends_with_object(text: str) -> bool:
    """Whether the reply, closed thinking dropped, ends with a closed JSON object (in a code fence or not).

    A reply cut off at the token limit is usable only then: a score found earlier in it may be a draft
    the model was still revising when it was cut, and a reply that ends in a thought it had not closed
    does not end with its answer.
    """
    body = _closed_thinking_dropped(text).rstrip()
    if body.endswith("```"):
        body = body[:-3].rstrip()
    return body.endswith("}")


def _outside_strings(text: str) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` of every character that is not inside a quoted string within braces:
    ``depth`` counts the ``{`` open before it. A quote that opens a string is yielded too (the
    string's own characters are not); braces and quotes outside every object count as text."""
    depth, quote, escaped = 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        yield i, ch, depth
        if ch in "\"'" and depth > 0:
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span, braces inside quoted strings ignored."""
    out: list[str] = []
    start = -1
    for i, ch, depth in _outside_strings(text):
        if ch == "{" and depth == 0:
            start = i
        elif ch == "}" and depth == 1:
            out.append(text[start : i + 1])
    return out


def _load_object(candidate: str) -> dict[str, Any] | None:
    """``candidate`` as a dict: strict JSON, then without trailing commas, then as a Python literal."""
    attempts = (candidate, _TRAILING_COMMA.sub(r"\1", candidate))
    for text in attempts:
        try:
            val = _loads(text)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            continue
        if isinstance(val, dict):
            return val
    pythonish = re.sub(
        r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", attempts[1]))
    )
    try:
        val = ast.literal_eval(pythonish)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return val if isinstance(val, dict) else None


def find_json_object(text: str, key: str | None = None) -> dict[str, Any] | None:
    """The JSON object a reply means, or ``None``.

    ``<think>`` blocks are dropped (an unclosed one to the end of the reply). An object in a code
    fence that holds ``key`` is the answer (the last such fence); only when no fence holds one are the
    balanced ``{...}`` spans tried, the last one first (the answer usually follows the reasoning), so
    that an example the model adds after its fenced answer is not read as the answer. With ``key``, an
    object holding that key wins over one without.
    """
    body = strip_thinking(text)
    whole = body.strip()
    if whole.startswith("{") and whole.endswith("}"):
        # The common case, a reply that is exactly one JSON object: what the search below would
        # find first anyway (the last balanced span), without walking the text character by character.
        try:
            obj = _loads(whole)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict) and (key is None or key in obj):
            return obj
    fenced = [m.group(1).strip() for m in _FENCE.finditer(body)]
    spans = _balanced_objects(body)
    # An unclosed final object (trailing text cut off) gets one chance with a closing brace.
    tail = body.rfind("{")
    if tail >= 0 and "}" not in body[tail:]:
        spans.append(body[tail:].rstrip().rstrip(",") + "}")
    fallback: dict[str, Any] | None = None
    for candidates in (fenced, spans):
        for cand in reversed(candidates):
            for sub in [cand, *reversed(_balanced_objects(cand))]:
                obj = _load_object(sub)
                if obj is None:
                    continue
                if key is None or key in obj:
                    return obj
                fallback = fallback or obj
    return fallback


def _shown(value: Any) -> str:
    """``repr(value)``, shortened for a number with hundreds of digits or a long text."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"{str(value)[:12]}... ({len(str(abs(value)))} digits)"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def check_score(value: Any, rubric: Rubric) -> tuple[float | None, str | None]:
    """Check a raw score against the rubric's type and range: ``(score, None)`` or ``(None, why)``."""
    if isinstance(value, str):
        stripped = value.strip()
        try:
            value = int(stripped) if re.fullmatch(r"[+-]?\d+", stripped) else float(stripped)
        except ValueError:  # also an integer text of more than 4300 digits
            return None, f"{rubric.score_key} is the text {_shown(value)}, not a number"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, f"{rubric.score_key} is {type(value).__name__} {_shown(value)}, not a number"
    lo, hi = rubric.score_min, rubric.score_max
    if isinstance(value, int) and not lo <= value <= hi:  # before float(): a huge int overflows it
        return None, f"{rubric.score_key} = {_shown(value)} is outside {lo:g}-{hi:g}"
    score = float(value)
    if math.isnan(score):
        return None, f"{rubric.score_key} is {value!r}"
    if not lo <= score <= hi:
        return None, f"{rubric.score_key} = {_shown(value)} is outside {lo:g}-{hi:g}"
    if rubric.score_type == "integer" and not score.is_integer():
        return None, f"{rubric.score_key} is {_shown(value)}, not an integer"
    return score, None


_YES = {"true", "yes", "y", "1", "pass", "passed"}
_NO = {"false", "no", "n", "0", "fail", "failed"}


def check_answer(value: Any) -> bool | None:
    """A yes/no answer as a bool: JSON booleans, 0/1, and yes/no/true/false words; else ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().strip(".").lower()
        if word in _YES:
            return True
        if word in _NO:
            return False
    return None


def _parse_checks(obj: dict[str, Any], rubric: Rubric, reasoning: str | None) -> ParseResult:
    missing = [c for c in rubric.checks if c not in obj]
    if missing:
        return ParseResult(None, reasoning, f"JSON lacks the check(s) {', '.join(map(repr, missing))}", obj)
    answers: dict[str, Any] = {}
    for check in rubric.checks:
        ans = check_answer(obj[check])
        if ans is None:
            return ParseResult(None, reasoning, f"check {check!r} is {obj[check]!r}, not true/false", obj)
        answers[check] = ans
    score = sum(w for c, w in zip(rubric.checks, rubric.weights, strict=True) if answers[c])
    return ParseResult(float(score), reasoning, None, obj, answers)


def _parse_label(value: Any, rubric: Rubric, reasoning: str | None, obj: dict[str, Any]) -> ParseResult:
    if isinstance(value, str):
        word = value.strip().strip(".").lower()
        for label, score in rubric.labels:
            if word == label.lower():
                return ParseResult(score, reasoning, None, obj, {"label": label})
    names = ", ".join(lab for lab, _ in rubric.labels)
    return ParseResult(None, reasoning, f"{rubric.score_key} is {value!r}, not one of {names}", obj)


def parse_reply(text: str, rubric: Rubric) -> ParseResult:
    """Read a judge's reply under ``rubric``; never raises: a reply it cannot read is unusable."""
    try:
        return _parse_reply(text, rubric)
    except Exception as exc:  # a reply that trips a case not foreseen is unscored, not a failed item
        return ParseResult(None, error=f"the reply could not be read ({type(exc).__name__}: {exc})"[:500])


def _parse_reply(text: str, rubric: Rubric) -> ParseResult:
    if not text or not text.strip():
        return ParseResult(None, error="empty reply")
    key = rubric.checks[0] if rubric.kind == "checks" else rubric.score_key
    obj = find_json_object(text, key)
    if obj is None:
        return ParseResult(None, error="no JSON object in the reply")
    reasoning = obj.get(rubric.reasoning_key)
    reasoning_text = reasoning if isinstance(reasoning, str) else None
    if rubric.kind == "checks":
        return _parse_checks(obj, rubric, reasoning_text)
    if rubric.score_key not in obj:
        keys = ", ".join(sorted(map(str, obj))) or "none"
        return ParseResult(None, reasoning_text, f"JSON has no {rubric.score_key!r} (keys: {keys})", obj)
    value = obj[rubric.score_key]
    if rubric.kind == "label":
        return _parse_label(value, rubric, reasoning_text, obj)
    if rubric.kind == "text":
        if not isinstance(value, str) or not value.strip():
            return ParseResult(None, reasoning_text, f"{rubric.score_key} is {value!r}, not a text", obj)
        words = len(value.split())
        return ParseResult(float(words), reasoning_text, None, obj, {"text": value.strip()})
    score, why = check_score(value, rubric)
    return ParseResult(score, reasoning_text, why, obj)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_KEY_VALUE = re.compile(r"\s*:\s*[\"']?\s*(?=-?\d)")
"""What follows a score key up to its value's first character (a digit or its minus sign)."""


def _blank_thinking(text: str) -> str:
    """``text`` with what :func:`strip_thinking` drops turned into spaces, so offsets stay valid."""
    text = _THINK.sub(lambda m: " " * len(m.group()), text)
    end = text.lower().rfind("</think>")
    if end >= 0:
        text = " " * (end + len("</think>")) + text[end + len("</think>") :]
    start = text.lower().find("<think>")
    if start >= 0:
        text = text[:start] + " " * (len(text) - start)
    return text


def score_char_offset(text: str, rubric: Rubric, score: float | None = None) -> int | None:
    """Character offset in ``text`` of the first digit of the score value the parser reads, if found.

    Only the score key written as a JSON key counts: quoted, inside an object and outside every
    string, so a reply that mentions ``physical_adherence: 5`` in its reasoning is not read there.
    The last such value wins (the parser reads the last object first), one inside a code fence over
    any outside (the parser takes a fenced answer first); with ``score``, the last one whose number
    equals it, and ``None`` when no written value does.
    """
    body = _blank_thinking(text)
    key = rubric.score_key
    found: list[int] = []
    for i, ch, depth in _outside_strings(body):
        if ch in "\"'" and depth > 0:
            close = i + 1 + len(key)
            if body.startswith(key, i + 1) and body[close : close + 1] == ch:
                m = _KEY_VALUE.match(body, close + 1)
                if m is not None:
                    found.append(m.end())
    if score is not None:
        found = [at for at in found if _written_number(body, at) == score]
    fences = [m.span(1) for m in _FENCE.finditer(body)]
    fenced = [at for at in found if any(lo <= at < hi for lo, hi in fences)]
    found = fenced or found
    return found[-1] if found else None


def _written_number(text: str, at: int) -> float | None:
    m = _NUMBER.match(text, at)
    if m is None:
        return None
    try:
        return float(m.group())
    except (ValueError, OverflowError):
        return None
