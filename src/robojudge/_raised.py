"""What an unexpected exception leaves in an error row: a short reason, and the end of its traceback."""

from __future__ import annotations

import traceback
from collections.abc import Callable

#: The most characters of a traceback an error row keeps (its last ones: the innermost frames).
TRACEBACK_CHARS = 4000


def raised_reason(exc: BaseException) -> str:
    """``Type: message``, then the exception's notes (``add_note``), one line.

    :func:`traceback.format_exception_only` puts the notes after the message on lines of their own, and
    taking its last line kept the last note alone, without the type and message.

    >>> e = KeyError("missing_key")
    >>> e.add_note("while fitting view cam0")
    >>> raised_reason(e)
    "KeyError: 'missing_key' (while fitting view cam0)"
    >>> raised_reason(ValueError())
    'ValueError'
    """
    message = str(exc)
    reason = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    notes = [str(n) for n in getattr(exc, "__notes__", None) or ()]
    if notes:
        reason += f" ({'; '.join(notes)})"
    return " ".join(reason.split("\n")) if "\n" in reason else reason


def raised_traceback(exc: BaseException, limit: int = TRACEBACK_CHARS,
                     mask: Callable[[str], str] | None = None) -> str:
    """The traceback of ``exc`` as Python prints it (chained exceptions and sub-exceptions too), clipped to
    its last ``limit`` characters: the innermost frames and the exception itself, where the fault is.
    ``mask`` (a judge's secret redaction) is applied to the whole text before it is clipped, so that a
    secret on the cut is never stored in part.

    >>> try:
    ...     {}["k"]
    ... except KeyError as e:
    ...     tb = raised_traceback(e)
    >>> tb.startswith("Traceback"), tb.rstrip().endswith("KeyError: 'k'")
    (True, True)
    """
    text = "".join(traceback.format_exception(exc))
    if mask is not None:
        text = mask(text)
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    # from a line's start (a part of a line reads as something it is not)
    return "... (clipped)\n" + (tail[tail.index("\n") + 1:] if "\n" in tail[:-1] else tail)
