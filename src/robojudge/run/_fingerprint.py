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
  texts declares ``json_schema_extra={"item_text": KEY}``; its part is the item's ``meta[KEY]``,
  else the item's entry in the file -- so editing one caption rescores one item. Any other config
  value that names an existing file adds that file's digest.

Paths are not part of it (moving a file does not change the result) and neither is anything the
metric does not declare: a metric that never reads the reference is not rescored when only the
reference changes. The config and the metric version are separate parts of the stored key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from robojudge.metrics import Input, MetricInputError, MetricSpec
from robojudge.run._filehash import file_digest
from robojudge.suite import Item

FINGERPRINT_VERSION = "1"
"""Part of every fingerprint: changing how fingerprints are made changes this, and every result."""

JUDGE_INPUTS: frozenset[Input] = frozenset({Input.video, Input.instruction})
"""What a VLM judge reads of an item: the sampled frames of the video, and the instruction."""

ITEM_TEXT = "item_text"
"""The ``json_schema_extra`` key of a config field that names a per-item texts file."""


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


def _item_text(item: Item, key: str, path: Any) -> Any:
    if key in item.meta:  # the metrics read the manifest's text first
        return {"meta": item.meta[key]}
    if not isinstance(path, str) or not path or not Path(path).is_file():
        return None
    from robojudge.metrics._texts import load_item_texts

    try:
        return {"file": load_item_texts(path, key, allow_lists=True).get(item.item_id)}
    except MetricInputError:  # unreadable as texts: the metric fails on it; hash the bytes
        return {"file_digest": file_digest(path)}


def _config_parts(
    item: Item, config: Mapping[str, Any], config_type: type[BaseModel] | None
) -> dict[str, Any]:
    fields = config_type.model_fields if config_type is not None else {}
    out: dict[str, Any] = {}
    for name in sorted(set(config) | {n for n, f in fields.items() if _text_key(f.json_schema_extra)}):
        value = config.get(name)
        key = _text_key(fields[name].json_schema_extra) if name in fields else None
        if key is not None:
            out[name] = _item_text(item, key, value)
        elif isinstance(value, str) and value and Path(value).is_file():
            out[name] = file_digest(value)
    return out


def _text_key(extra: Any) -> str | None:
    if isinstance(extra, Mapping):
        key = extra.get(ITEM_TEXT)
        return key if isinstance(key, str) else None
    return None


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
        config_type: The config's model, for the fields that name per-item texts.

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
