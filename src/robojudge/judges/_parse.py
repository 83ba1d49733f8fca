"""Getting a score out of a judge's reply: find the JSON, read it leniently, check type and range."""

from __future__ import annotations

import ast
import functools
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
    """Drop ``<think>...</think>`` blocks; after an orphan ``</think>`` keep only what follows it; when
    what is left begins with a ``<think>`` that is never closed, drop it all (a reply cut off
    mid-thought holds no answer, only drafts the model may have been about to revise). A ``<think>``
    further on, in prose or inside a JSON string, is text."""
    text = _closed_thinking_dropped(text)
    return "" if _opens_thinking(text) else text


def _closed_thinking_dropped(text: str) -> str:
    text = _THINK.sub("", text)
    end = text.lower().rfind("</think>")
    return text if end < 0 else text[end + len("</think>") :]


def _opens_thinking(text: str) -> bool:
    """Whether ``text`` (closed thinking already dropped) begins, after whitespace, with ``<think>``."""
    return text.lstrip()[:7].lower() == "<think>"


def ends_with_object(text: str) -> bool:
    """Whether the reply, closed thinking dropped, ends with a closed JSON object (in a code fence or not)."""
    body = _closed_thinking_dropped(text).rstrip()
    if _opens_thinking(body):
        return False
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


def _object_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every top-level ``{...}`` span, braces inside quoted strings ignored."""
    out: list[tuple[int, int]] = []
    start = -1
    for i, ch, depth in _outside_strings(text):
        if ch == "{" and depth == 0:
            start = i
        elif ch == "}" and depth == 1:
            out.append((start, i + 1))
    return out


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` span, braces inside quoted strings ignored."""
    return [text[lo:hi] for lo, hi in _object_spans(text)]


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


@dataclass(frozen=True)
class _Candidate:
    """A JSON object found in a reply: where it is, and whether it is written as an answer is."""

    obj: dict[str, Any]
    start: int
    end: int
    set_off: bool
    """On a line of its own, after a label ending in ``:``, or in a code fence that is."""
    closed: bool
    """False for a final object the reply never closed (the parser added the closing brace)."""


def _set_off(body: str, at: int) -> bool:
    line = body[body.rfind("\n", 0, at) + 1 : at].strip().strip("*_#>-").strip()
    return not line or line.endswith(":")


def _candidates(body: str) -> list[_Candidate]:
    """The JSON objects of ``body`` (thinking already blanked), in the order they are written."""
    whole = body.strip()
    if whole.startswith("{") and whole.endswith("}"):
        # The common case, a reply that is exactly one JSON object: no need to walk it character by
        # character.
        try:
            obj = _loads(whole)
        except (ValueError, RecursionError):
            obj = None
        if isinstance(obj, dict):
            start = body.index("{")
            return [_Candidate(obj, start, start + len(whole), True, True)]
    fences = [(m.start(), m.start(1), m.end(1)) for m in _FENCE.finditer(body)]
    spans = {lo: (hi, lo) for lo, hi in _object_spans(body)}
    for opening, lo, hi in fences:  # an object in a fence is read on its own, whatever surrounds it
        for a, b in _object_spans(body[lo:hi]):
            spans.setdefault(lo + a, (lo + b, opening))
    out: list[_Candidate] = []
    for start in sorted(spans):
        end, anchor = spans[start]
        obj = _load_object(body[start:end])
        if obj is not None:
            fenced = [f for f in fences if f[1] <= start < f[2]]
            where = fenced[0][0] if fenced else anchor
            out.append(_Candidate(obj, start, end, _set_off(body, where), True))
    # An unclosed final object (trailing text cut off) gets one chance with a closing brace.
    tail = body.rfind("{")
    if tail >= 0 and "}" not in body[tail:]:
        obj = _load_object(body[tail:].rstrip().rstrip(",") + "}")
        if obj is not None:
            out.append(_Candidate(obj, tail, len(body), _set_off(body, tail), False))
    return out


def _in_answer_order(found: list[_Candidate]) -> list[_Candidate]:
    """The objects the last one first: a model's last answer is its final one (a correction written after
    a first answer, on a line of its own or inside a sentence, replaces it)."""
    return list(reversed(found))


def find_json_object(text: str, key: str | None = None) -> dict[str, Any] | None:
    """The JSON object a reply most likely means, without a rubric to check it against, or ``None``.

    Thinking is dropped as by :func:`strip_thinking`. The last object written (in a code fence or not)
    is the answer; with ``key``, the last one that holds the key, else the last object.
    :func:`parse_reply` goes further: it passes over an object that only repeats the answer format.
    """
    ordered = _in_answer_order(_candidates(_blank_thinking(text)))
    for cand in ordered:
        if key is None or key in cand.obj:
            return cand.obj
    return ordered[0].obj if ordered else None


_PLACEHOLDER = re.compile(r"<[^<>]*>")


@functools.lru_cache(maxsize=256)
def _format_values(rubric: Rubric) -> dict[str, frozenset[str]]:
    """The text values the rubric's prompts write in their JSON answer format (``"<one sentence>"``)."""
    text = rubric.system + "\n" + rubric.user
    if rubric.syntax == "format":
        text = text.replace("{{", "{").replace("}}", "}")
    out: dict[str, set[str]] = {}
    for lo, hi in _object_spans(text):
        obj = _load_object(text[lo:hi])
        for k, v in (obj or {}).items():
            if isinstance(v, str):
                out.setdefault(str(k), set()).add(v.strip())
    return {k: frozenset(v) for k, v in out.items()}


def _echo(obj: dict[str, Any], rubric: Rubric) -> str | None:
    """The score or check key whose value only repeats the answer format (a ``<...>`` placeholder, or the
    value the rubric's own format line writes there), or ``None`` for a filled-in answer (a reasoning
    left as the placeholder beside a real score is still an answer)."""
    keys = (*rubric.checks, rubric.score_key)
    written = _format_values(rubric)
    for k in keys:
        v = obj.get(k)
        if isinstance(v, str) and (_PLACEHOLDER.fullmatch(v.strip()) or v.strip() in written.get(k, ())):
            return k
    return None


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
    """Read a judge's reply under ``rubric``; never raises: a reply it cannot read is unusable.

    The answer is the model's final one: the last JSON object in the reply that holds the score key (or
    the first check), passing over an object that only repeats the answer format (a ``<...>``
    placeholder, or the value the rubric's own format line writes, as its score or check value). That
    object is read as it is: a score out of range or of the wrong type makes the reply unusable (and
    asks for the repair prompt), never an earlier draft scored in its place. Thinking is dropped as by
    :func:`strip_thinking`. With no such object, the reason given is that of the last object.
    """
    try:
        return _parse_reply(text, rubric)
    except Exception as exc:  # a reply that trips a case not foreseen is unscored, not a failed item
        return ParseResult(None, error=f"the reply could not be read ({type(exc).__name__}: {exc})"[:500])


def _parse_reply(text: str, rubric: Rubric) -> ParseResult:
    return _choose(text, rubric)[0]


def _choose(text: str, rubric: Rubric) -> tuple[ParseResult, _Candidate | None]:
    """The reading of the reply, and the object it was read from when that object is a valid answer."""
    if not text or not text.strip():
        return ParseResult(None, error="empty reply"), None
    key = rubric.checks[0] if rubric.kind == "checks" else rubric.score_key
    ordered = _in_answer_order(_candidates(_blank_thinking(text)))
    if not ordered:
        return ParseResult(None, error="no JSON object in the reply"), None
    first: ParseResult | None = None
    for k, cand in enumerate(ordered):
        if key not in cand.obj:
            continue
        echoed = _echo(cand.obj, rubric)
        if echoed is None:
            res = _read_object(cand.obj, rubric)
            if res.ok and not cand.set_off:
                other = _set_off_answer(ordered[k + 1:], rubric, key)
                if other is not None and other.score != res.score:
                    # An answer on a line of its own, then another inside a sentence: a correction
                    # ("so I revise it to {...}") or an example ("a flawless video would get {...}")?
                    # Neither is taken on a guess: the repair prompt asks for the answer alone.
                    was = other.obj.get(key) if other.obj is not None else other.score
                    why = (f"the reply gives two answers, {_shown(was)} set off and then "
                           f"{_shown(cand.obj[key])} inside a sentence: which is meant is unclear")
                    return ParseResult(None, res.reasoning, why, cand.obj), None
            return res, (cand if res.ok else None)
        if first is None:
            shown = _shown(cand.obj[echoed])
            why = f"the JSON only repeats the answer format ({echoed} = {shown})"
            first = ParseResult(None, None, why, cand.obj)
    return first or _read_object(ordered[0].obj, rubric), None


def _set_off_answer(earlier: list[_Candidate], rubric: Rubric, key: str) -> ParseResult | None:
    """The reading of the last valid answer set off (on a line of its own, after a label or in a fence)
    among ``earlier`` (last first), or None."""
    for cand in earlier:
        if cand.set_off and key in cand.obj and _echo(cand.obj, rubric) is None:
            res = _read_object(cand.obj, rubric)
            if res.ok:
                return res
    return None


def _read_object(obj: dict[str, Any], rubric: Rubric) -> ParseResult:
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


def answer_is_final(text: str, rubric: Rubric) -> bool:
    """Whether a reply cut off at the token limit still holds its final answer.

    True only when the reply ends with a closed JSON object that is a valid answer: text cut after an
    answer may have been revising it (``{...} Hmm, but frame 9 shows``), as untagged thinking does
    (``my first impression is {...}, but``), so it is repaired rather than trusted.
    """
    parsed, cand = _choose(text, rubric)
    return parsed.ok and cand is not None and cand.closed and ends_with_object(text)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_KEY_VALUE = re.compile(r"\s*:\s*[\"']?\s*(?=-?\d)")
"""What follows a score key up to its value's first character (a digit or its minus sign)."""


def _blank_thinking(text: str) -> str:
    """``text`` with what :func:`strip_thinking` drops turned into spaces, so offsets stay valid."""
    text = _THINK.sub(lambda m: " " * len(m.group()), text)
    end = text.lower().rfind("</think>")
    if end >= 0:
        text = " " * (end + len("</think>")) + text[end + len("</think>") :]
    return " " * len(text) if _opens_thinking(text) else text


def score_char_offset(text: str, rubric: Rubric, score: float | None = None) -> int | None:
    """Character offset in ``text`` of the first digit of the score value the parser reads, if found.

    Only the score key written as a JSON key counts: quoted, inside an object and outside every
    string, so a reply that mentions ``physical_adherence: 5`` in its reasoning is not read there.
    The value is looked for in the object :func:`parse_reply` reads as the answer (the last one in it
    when the key is repeated); in a reply without a valid answer, the last value written anywhere.
    With ``score``, the last one whose number equals it, and ``None`` when no written value does.
    """
    body = _blank_thinking(text)
    key = rubric.score_key
    lo, hi = 0, len(body)
    cand = _choose(text, rubric)[1]
    if cand is not None:
        lo, hi = cand.start, cand.end
    found: list[int] = []
    for i, ch, depth in _outside_strings(body):
        if ch in "\"'" and depth > 0:
            close = i + 1 + len(key)
            if body.startswith(key, i + 1) and body[close : close + 1] == ch:
                m = _KEY_VALUE.match(body, close + 1)
                if m is not None and lo <= m.end() < hi:
                    found.append(m.end())
    if score is not None:
        found = [at for at in found if _written_number(body, at) == score]
    return found[-1] if found else None


def _written_number(text: str, at: int) -> float | None:
    m = _NUMBER.match(text, at)
    if m is None:
        return None
    try:
        return float(m.group())
    except (ValueError, OverflowError):
        return None
