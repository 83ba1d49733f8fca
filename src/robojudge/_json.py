"""JSON that strict readers take: non-finite floats written as null (audits, set-level rows, agreement);
JSON read with the keys it gives twice named, not dropped."""

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


def loads_noting_repeats(text: str | bytes) -> tuple[Any, list[str]]:
    """``json.loads(text)``, and each key that an object in it gives more than once, as a dotted path.

    ``json.loads`` keeps the last value of a repeated key and drops the others without a word, so a
    record written ``{"labels": {"pa": 2, "ia": 5, "pa": 5}}`` would read as PA 5. Readers that take
    records from users call this and refuse such a record, as a CSV header may not repeat a column. A
    path runs from the top of ``text``: ``labels.pa``, with an array element as ``[i]``
    (``meta.steps[2].x``). A repeated key inside a value that was itself dropped (the first of two
    ``labels``) is not listed: its own path is.

    Raises:
        json.JSONDecodeError, RecursionError: As ``json.loads``.

    >>> loads_noting_repeats('{"a": 1, "b": [{"c": 2, "c": 3}], "a": 4}')
    ({'a': 4, 'b': [{'c': 3}]}, ['a', 'b[0].c'])
    """
    noted: list[tuple[dict[str, Any], list[str]]] = []

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) < len(pairs):
            seen: set[str] = set()
            repeated: dict[str, None] = {}
            for key, _ in pairs:
                if key in seen:
                    repeated[key] = None
                seen.add(key)
            noted.append((obj, list(repeated)))
        return obj

    value = json.loads(text, object_pairs_hook=build)
    if not noted:
        return value, []
    # ``noted`` keeps every object it names alive, so no two of them share an id.
    by_id = {id(obj): keys for obj, keys in noted}
    return value, list(_repeat_paths(value, "", by_id))


def _repeat_paths(value: Any, path: str, by_id: dict[int, list[str]]) -> Iterator[str]:
    if isinstance(value, dict):
        for key in by_id.get(id(value), ()):
            yield f"{path}.{key}" if path else key
        for key, v in value.items():
            yield from _repeat_paths(v, f"{path}.{key}" if path else key, by_id)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _repeat_paths(v, f"{path}[{i}]", by_id)
