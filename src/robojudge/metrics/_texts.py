"""Per-item texts from a file: captions (``sa_bleu``), key steps and reference steps (``sa_clip``).

A file is either one JSON object ``{item_id: text}`` or JSON Lines, one object per line with
``item_id`` and the text under ``field`` (what ``robojudge judge texts --field FIELD`` writes). A
JSON Lines file of a single row is also one valid JSON object; it is read as a row (it holds
``item_id``), not as a mapping. Files are read once per version (path and modification time).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from robojudge.metrics._errors import MetricInputError


def as_text(value: Any, allow_lists: bool) -> str | None:
    """``value`` as one text (with ``allow_lists``, a list of strings becomes lines); None if not text."""
    if isinstance(value, str):
        return value
    if allow_lists and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def meta_gives_text(value: Any, allow_lists: bool = True) -> bool:
    """Whether an item's ``meta`` value is what a metric reads, so that its texts file is not read.

    The rule of ``sa_bleu`` and ``sa_clip`` (and of the fingerprint of their results): a missing
    value (``None``) or one without text -- empty or blank, an empty list or one of blank strings --
    gives no text, and the item's entry in the file is read instead. Anything else is read from
    ``meta``: a text, or a value of another type, which the metric refuses whatever the file holds.
    """
    if value is None:
        return False
    text = as_text(value, allow_lists)
    return text is None or bool(text.strip())


@functools.lru_cache(maxsize=16)
def _load(path: str, stamp: tuple[int, int, int], field: str, allow_lists: bool) -> dict[str, str]:
    raw = Path(path).read_text(encoding="utf-8-sig")  # a BOM, as Windows tools write, is no error
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        data = None
    pairs: list[tuple[Any, Any]] = []
    if isinstance(data, dict) and "item_id" not in data:
        pairs = list(data.items())
    else:
        # Split on "\n" only: str.splitlines() also breaks at U+2028, U+2029 and U+0085, which
        # json.dumps(..., ensure_ascii=False) (robojudge judge texts) writes as they are inside a caption,
        # so it cut the caption's line in two and numbered the lines unlike an editor.
        for n, line in enumerate(raw.split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                pairs.append((row["item_id"], row[field]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise MetricInputError(
                    f"{field} file {path}, line {n}: expected a JSON object with 'item_id' and '{field}' "
                    f"({type(exc).__name__}: {exc}); or make the whole file one JSON object {{item_id: text}}"
                ) from None
    out: dict[str, str] = {}
    for key, value in pairs:
        text = as_text(value, allow_lists)
        if text is None:
            kinds = "a string or a list of strings" if allow_lists else "a string"
            raise MetricInputError(f"{field} file {path}: the text of item {key!r} is not {kinds}")
        out[str(key)] = text
    return out


def load_item_texts(path: str | Path, field: str, *, allow_lists: bool = False) -> dict[str, str]:
    """``{item_id: text}`` from ``path`` (see the module doc).

    Raises:
        MetricInputError: The file is missing, a line is not a JSON object with ``item_id`` and
            ``field`` (the message names file and line), or a text is not a string (or, with
            ``allow_lists``, a list of strings).
    """
    p = Path(path)
    if not p.is_file():
        raise MetricInputError(f"{field} file {path} does not exist")
    st = p.stat()  # the change time too: a file rewritten with its modification time put back
    return _load(str(p.resolve()), (st.st_mtime_ns, st.st_ctime_ns, st.st_size), field, allow_lists)


ITEM_TEXT = "item_text"
"""The ``json_schema_extra`` key of a config field that names a per-item texts file; its value is the
``meta`` key the item's own text is read from first (``caption`` for ``sa_bleu``)."""


def text_key(field: Any) -> str | None:
    """The ``meta`` key of a config field (a pydantic ``FieldInfo``) naming a per-item texts file, or None."""
    extra = getattr(field, "json_schema_extra", None)
    key = extra.get(ITEM_TEXT) if isinstance(extra, dict) else None
    return key if isinstance(key, str) else None


_TEXT_FIELDS: dict[type[Any], tuple[tuple[str, str], ...]] = {}


def item_text_fields(config_type: type[Any]) -> tuple[tuple[str, str], ...]:
    """``(config field, meta key)`` of each per-item text a metric's config declares (:data:`ITEM_TEXT`);
    found once per config type (the planner asks for every item and metric)."""
    found = _TEXT_FIELDS.get(config_type)
    if found is None:
        fields = getattr(config_type, "model_fields", {})
        found = tuple((name, key) for name, info in fields.items() if (key := text_key(info)) is not None)
        _TEXT_FIELDS[config_type] = found
    return found


def missing_texts(config: Any, item: Any) -> list[str]:
    """The per-item texts a metric's ``config`` reads that ``item`` has neither in ``meta`` nor in the
    config's file: ``meta.KEY`` for each, ``meta.KEY or an entry in FILE`` where the config names a file
    (what ``--metrics all`` takes for a missing input).

    A file that cannot be read counts as giving the text: the metric then fails with the reason.
    """
    missing = []
    for name, key in item_text_fields(type(config)):
        if meta_gives_text(item.meta.get(key)):
            continue
        path = getattr(config, name, None)
        if isinstance(path, str) and path:
            try:
                text = load_item_texts(path, key, allow_lists=True).get(item.item_id)
            except (MetricInputError, OSError, ValueError):
                continue
            if text is not None and text.strip():
                continue
            missing.append(f"meta.{key} or an entry in {path}")  # (a file is given: not "give a file")
            continue
        missing.append(f"meta.{key}")
    return missing
