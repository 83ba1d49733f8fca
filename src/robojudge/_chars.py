"""Characters a name may not hold: control characters and the Unicode bidirectional controls.

A control character (category Cc) breaks printed lines and CSV rows, and an escape sequence rewrites the
terminal that prints it. A bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
reorders what follows it on screen: a generator named ``model\\u202e`` shows the next cells of its row
reversed, and two names that read alike may differ. Other format characters (the zero-width joiner and
non-joiner that some scripts need, the left-to-right and right-to-left marks) are allowed.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe_at(value: str) -> int | None:
    """The position of the first control or bidirectional control character of ``value``, or ``None``."""
    return next(
        (i for i, ch in enumerate(value) if ch in BIDI_CONTROLS or unicodedata.category(ch) == "Cc"), None
    )


def unsafe_kind(ch: str) -> str:
    """What the character at :func:`unsafe_at` is, for an error message."""
    return "a bidirectional control character" if ch in BIDI_CONTROLS else "a control character"
