"""JSON that strict readers take: non-finite floats written as null (audits, set-level rows, agreement)."""

from __future__ import annotations

import math
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
