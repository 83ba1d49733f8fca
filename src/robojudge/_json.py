"""JSON that strict readers take: non-finite floats written as null (audits, set-level rows, agreement)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_ready(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (JSON has no NaN), through dicts and lists.

    >>> json_ready({"a": [1.0, float("nan")], "b": (float("inf"),)})
    {'a': [1.0, None], 'b': [None]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def jsonl_records(path: Path, error: type[Exception]) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of each non-blank line of the JSON Lines file ``path``, split on
    ``"\\n"`` only (a record's text may hold U+2028 or U+0085, which ``str.splitlines`` takes for line
    breaks); a line that is not JSON, or not UTF-8 text (a file cut inside a character), raises ``error``
    naming the file and line."""
    for line_no, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"{exc.reason} at byte {exc.start}"
            raise error(f"{path}, line {line_no}: not UTF-8 text ({why})") from None
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}, line {line_no}: not JSON ({exc.msg})") from None
