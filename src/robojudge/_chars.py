"""Characters a name may not hold: control characters and the Unicode bidirectional controls.

A control character (category Cc) breaks printed lines and CSV rows, and an escape sequence rewrites the
terminal that prints it. A bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
reorders what follows it on screen: a generator named ``model\\u202e`` shows the next cells of its row
reversed, and two names that read alike may differ. Other format characters (the zero-width joiner and
non-joiner that some scripts need, the left-to-right and right-to-left marks) are allowed.

A name is also bounded in length (:data:`MAX_NAME_BYTES`): a metric id, a judge or a rubric name and
their versions are parts of a stored key (a judge's metric id is ``judge:<judge>:<rubric>``), and the
whole key must fit an entry of PostgreSQL's unique index (at most 2,704 bytes). No name is used as a file
name as it is: where one names a file (the acceleration audit's tables), it is cut and given a short hash
there.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

MAX_NAME_BYTES = 255
"""The longest name, in bytes of UTF-8 (255 ASCII characters, fewer accented or CJK ones; as long as a
folder's name may be on common file systems): a generator, task, regime, prompt variant, split, view or
rater of a manifest, a metric id, a judge name, a rubric id, a metric's or rubric's version. A manifest's
``clip_id`` and ``source`` name paths and may be as long as an item id
(:data:`robojudge.suite.MAX_ITEM_ID_BYTES`). Two names and a prefix (``judge:<judge>:<rubric>``), an item
id, a configuration hash and a version stay below PostgreSQL's index limit together."""


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
    return f"{field} is {size:,} bytes long in UTF-8; at most {limit:,} are allowed"


def short_enough(field: str, value: str, limit: int = MAX_NAME_BYTES) -> str:
    """``value``, or a ValueError saying why it is too long for ``field`` (:func:`too_long`): the check of
    a pydantic validator."""
    problem = too_long(field, value, limit)
    if problem is not None:
        raise ValueError(problem)
    return value
