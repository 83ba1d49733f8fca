"""Fingerprints: what a result read, as one hash, so that a changed input means a recomputed result.

A result's fingerprint is the BLAKE2b hash (16 bytes, hex) of the inputs its metric declares
(:attr:`MetricSpec.inputs`), taken from the item as it is now:

* ``video``: the content digest of the video file or frame folder (:func:`file_digest`);
* ``reference``: the reference video's digest, and for metrics that also read ``state`` the
  reference's own state file (``<reference>.npz``) when it exists;
* ``views``: every view's digest by name, and ``main_view``;
* ``state``: the state file's digest;
* ``instruction``: the text;
* ``initial_frame``: the initial frame's digest (the video's when the item has none);
* files named in the metric's config (a captions file...): a config field that names per-item
  texts declares ``json_schema_extra={"item_text": KEY}``; its part is the item's ``meta[KEY]``
  when the metric reads that (:func:`~robojudge.metrics._texts.meta_gives_text`: not when it is
  empty or blank), else the item's entry in the file -- so editing one caption rescores one item.
  A config field whose type is a :class:`~pathlib.Path` (``Path | None``...), or that declares
  ``json_schema_extra={"input_file": True}``, names an input file: its part is that file's digest.
  No other config value is taken for a file, whatever it spells: a word such as ``lk_flow`` that
  happens to name a file in the current folder is only a word, and a long string is never
  handed to the file system as a name.

Paths are not part of it (moving a file does not change the result) and neither is anything the
metric does not declare: a metric that never reads the reference is not rescored when only the
reference changes. The config and the metric version are separate parts of the stored key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any, get_args

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from robojudge.metrics import Input, MetricInputError, MetricSpec
from robojudge.metrics._texts import load_item_texts, meta_gives_text
from robojudge.run._filehash import file_digest
from robojudge.suite import Item

FINGERPRINT_VERSION = "1"
"""Part of every fingerprint: changing how fingerprints are made changes this, and every result."""

JUDGE_INPUTS: frozenset[Input] = frozenset({Input.video, Input.instruction})
"""What a VLM judge reads of an item: the sampled frames of the video, and the instruction."""

ITEM_TEXT = "item_text"
"""The ``json_schema_extra`` key of a config field that names a per-item texts file."""
INPUT_FILE = "input_file"
"""The ``json_schema_extra`` key (true) of a ``str`` config field that names a file the metric reads."""


def _digest(path: str | None) -> str | None:
    return None if not path else file_digest(path)


def _part(item: Item, inp: Input, inputs: frozenset[Input]) -> Any:
    if inp is Input.video:
        return _digest(item.video)
    if inp is Input.reference:
        part: dict[str, Any] = {"file": _digest(item.reference_video)}
        if Input.state in inputs and item.reference_video:
            sibling = Path(item.reference_video).with_suffix(".npz")
            part["state"] = _digest(str(sibling)) if sibling.is_file() else None
        return part
    if inp is Input.views:
        views = {name: _digest(path) for name, path in sorted((item.views or {}).items())}
        return {"views": views, "main": item.main_view}
    if inp is Input.state:
        return _digest(item.state)
    if inp is Input.instruction:
        return item.instruction
    if inp is Input.initial_frame:
        return _digest(item.initial_frame or item.video)
    raise ValueError(f"no fingerprint rule for input {inp!r}")  # pragma: no cover - a new Input member


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _item_text(item: Item, key: str, path: Any) -> Any:
    if meta_gives_text(item.meta.get(key)):  # the metrics' own rule: the manifest's text, if it has one
        return {"meta": item.meta[key]}
    if not isinstance(path, str) or not path or not _is_file(path):
        return None
    try:
        return {"file": load_item_texts(path, key, allow_lists=True).get(item.item_id)}
    except MetricInputError:  # unreadable as texts: the metric fails on it; hash the bytes
        return {"file_digest": file_digest(path)}


def _config_parts(
    item: Item, config: Mapping[str, Any], config_type: type[BaseModel] | None
) -> dict[str, Any]:
    fields = config_type.model_fields if config_type is not None else {}
    out: dict[str, Any] = {}
    for name in sorted(fields):
        value = config.get(name)
        key = _text_key(fields[name])
        if key is not None:
            out[name] = _item_text(item, key, value)
        elif _is_file_field(fields[name]) and isinstance(value, str) and value:
            out[name] = file_digest(value)
    return out


def _text_key(field: FieldInfo) -> str | None:
    extra = field.json_schema_extra
    if isinstance(extra, Mapping):
        key = extra.get(ITEM_TEXT)
        return key if isinstance(key, str) else None
    return None


def _is_file_field(field: FieldInfo) -> bool:
    extra = field.json_schema_extra
    return (isinstance(extra, Mapping) and extra.get(INPUT_FILE) is True) or _names_path(field.annotation)


def _names_path(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return True
    return any(_names_path(arg) for arg in get_args(annotation))


def inputs_fingerprint(
    item: Item,
    inputs: Iterable[Input | str],
    config: Mapping[str, Any] | None = None,
    config_type: type[BaseModel] | None = None,
) -> str:
    """The fingerprint of what a metric reading ``inputs`` (with ``config``) reads of ``item``.

    Args:
        item: The item, with absolute paths.
        inputs: The metric's declared inputs.
        config: The metric's config as plain values (what the store keeps in ``config``).
        config_type: The config's model, for the fields that name files or per-item texts; without
            it no config value is read as a file.

    Returns:
        32 hex characters.
    """
    wanted = frozenset(Input(i) for i in inputs)
    parts: dict[str, Any] = {inp.value: _part(item, inp, wanted) for inp in sorted(wanted)}
    files = _config_parts(item, config or {}, config_type)
    if files:
        parts["config_files"] = files
    canon = json.dumps([FINGERPRINT_VERSION, parts], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(canon.encode(), digest_size=16).hexdigest()


def metric_fingerprint(item: Item, spec: MetricSpec[Any], config: BaseModel | Mapping[str, Any]) -> str:
    """:func:`inputs_fingerprint` of a registered metric with a config (model or plain values)."""
    values = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
    return inputs_fingerprint(item, spec.inputs, values, spec.config_type)


def judge_fingerprint(item: Item) -> str:
    """The fingerprint of what a VLM judge reads of ``item`` (:data:`JUDGE_INPUTS`)."""
    return inputs_fingerprint(item, JUDGE_INPUTS)


def set_fingerprint(
    spec: MetricSpec[Any],
    members: Sequence[Item],
    config: Mapping[str, Any],
    pool: Sequence[str] | None = None,
) -> str:
    """The fingerprint of a set-level result: its members' ids and fingerprints, in order.

    Args:
        spec: The set metric's registry entry (its declared inputs and config type).
        members: The group's items.
        config: The metric's own config values (without the grouping field).
        pool: Reference videos read beyond the members' own (a metric whose reference set is the
            whole manifest); their digests, sorted, are part of the fingerprint.
    """
    prints = [[it.item_id, inputs_fingerprint(it, spec.inputs, config, spec.config_type)] for it in members]
    parts: dict[str, Any] = {"members": prints}
    if pool is not None:
        parts["pool"] = sorted({file_digest(path) for path in pool})
    canon = json.dumps([FINGERPRINT_VERSION, "set", parts], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(canon.encode(), digest_size=16).hexdigest()
