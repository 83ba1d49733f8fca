"""The traceback an error row keeps (``robojudge._raised.raised_traceback``): clipped to its end, with a
judge's secrets masked over the whole text before the cut (review rev14 F4: masked after it, a key lying
on the cut was stored with its first character missing and the rest in plain text)."""

from __future__ import annotations

import traceback

import pytest

from robojudge._raised import raised_traceback

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"


def _mask(text: str) -> str:
    return text.replace(KEY, "***")


def _raised(pad: int) -> BaseException:
    try:
        try:
            raise RuntimeError("x" * pad + "\n" + KEY + "\n")
        except RuntimeError as cause:
            raise ValueError("the judge's request failed") from cause
    except ValueError as exc:
        return exc


@pytest.mark.parametrize("pad", range(0, 4000, 37))
def test_no_part_of_a_secret_survives_wherever_the_cut_falls(pad: int) -> None:
    tb = raised_traceback(_raised(pad), limit=400, mask=_mask)
    # not the whole key, nor any stretch of 12 of its characters
    assert not any(KEY[i:i + 12] in tb for i in range(len(KEY) - 11)), tb
    assert tb.rstrip().endswith("ValueError: the judge's request failed")


def test_a_clipped_traceback_starts_at_a_line() -> None:
    exc = _raised(3000)
    whole = "".join(traceback.format_exception(exc))
    head, rest = raised_traceback(exc, limit=400).split("\n", 1)
    assert head == "... (clipped)" and len(rest) <= 400
    assert whole.endswith(rest) and whole[-len(rest) - 1] == "\n"  # the end of the text, from a line's start
