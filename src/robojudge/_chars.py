"""Characters a name may not hold: control characters and the Unicode bidirectional controls.

A control character (category Cc) breaks printed lines and CSV rows, and an escape sequence rewrites the
terminal that prints it. A bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
reorders what follows it on screen: a generator named ``model\\u202e`` shows the next cells of its row
reversed, and two names that read alike may differ. Other format characters (the zero-width joiner and
non-joiner that some scripts need, the left-to-right and right-to-left marks) are allowed.

A name is also bounded in length (:data:`MAX_NAME_BYTES`): a generator, a metric, a judge or a rubric
name becomes part of a stored key (a set-level row's item id ``group:generator=<name>``, a judge's
metric id ``judge:<judge>:<rubric>``), whose index on PostgreSQL holds at most 2,704 bytes per entry,
and of file names, which hold at most 255 bytes on common file systems.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

MAX_NAME_BYTES = 200
"""The longest name, in bytes of UTF-8 (200 ASCII characters, fewer accented or CJK ones): a generator,
source, clip, task, regime, prompt variant, split, view or rater of a manifest, a metric id, a judge name,
a rubric id, a metric's or rubric's version. Two such names and a prefix stay far below PostgreSQL's
index limit, and a name with a file suffix still fits a file name."""


def unsafe_at(value: str) -> int | None:
    """The position of the first control or bidirectional control character of ``value``, or ``None``."""
    return next(
        (i for i, ch in enumerate(value) if ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc"), None
    )


def unsafe_kind(ch: str) -> str:
    """What the character at :func:`unsafe_at` is, for an error message."""
    return "a bidirectional control character" if ch in BIDI_CONTROLS else "a control character"


def too_long(field: str, value: str, limit: int = MAX_NAME_BYTES) -> str | None:
    """Why ``value`` is too long for ``field`` (more than ``limit`` bytes in UTF-8), or ``None``.

    A lone surrogate (no UTF-8 encoding: an undecodable byte of a file name) counts as three bytes, so
    the check itself never fails."""
    size = len(value.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return (f"{field} is {size:,} bytes long in UTF-8; at most {limit:,} are allowed (a name becomes part "
            "of stored keys and of file names)")
