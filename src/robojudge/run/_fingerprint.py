"""Fingerprints: what a result read, as one hash, so that a changed input means a recomputed result.

A result's fingerprint is the BLAKE2b hash (16 bytes, hex) of the inputs its metric declares
(:attr:`MetricSpec.inputs`), taken from the item as it is now:

* ``video``: the content digest of the video file or frame folder (:func:`file_digest`);
* ``reference``: the reference video's digest, and for metrics that also read ``state`` the
  reference's own state file (``<reference>.npz``) when it exists;
* ``views``: every view's digest by name, and ``main_view``; a grid item's layout and video; the
  rig's calibration file (or, without one, the state file whose cameras stand in for it);
* ``state``: the state file's digest;
* ``instruction``: the text;
* ``initial_frame``: the initial frame's digest (the video's when the item has none);
* what the metric reads of an item only when the item has it (:attr:`MetricSpec.also_reads`): the
  views as above, the ``embodiment`` text and the ``robot`` spec file's digest (KIVA: its reader
  refuses another robot, and measures in 3D where calibrated views allow);
* the networks a model metric loads (:attr:`MetricSpec.weights`): their content's digest, the same
  wherever they are found (:func:`weights_identity`); other weights are another result. A scored row
  records the digests it was computed with (``details["network_weights"]``, :func:`settle`), so that
  where the weights are not installed (scored on a GPU machine, read on a laptop) the rest of its
  inputs is still checked: the recorded digests stand in for the absent weights
  (``read_inputs(weights_known=...)``), and a replaced video makes the row stale there too. Rows
  that record none (stored before 2026-12-07) are kept as an unavailable file's are;
* a VLM judge's (:func:`judge_inputs`): the video and the instruction, and for a ``grid`` item the
  layout and the main view, which decide the cell it is sent;
* of a metric that reads one camera's video (``video`` and not ``views``) on a ``grid`` item, the
  layout and the declared ``main_view``, which decide the cell it reads (:func:`metric_inputs`);
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

import functools
import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from robojudge import settings
from robojudge.metrics import Input, MetricInputError, MetricSpec, file_fields
from robojudge.metrics._texts import load_item_texts, meta_gives_text, text_key
from robojudge.run._filehash import MISSING, UNAVAILABLE, file_digest, tree_digest
from robojudge.store import ResultRow
from robojudge.suite import Item, main_view_name

FINGERPRINT_VERSION = "1"
"""Part of every fingerprint: changing how fingerprints are made changes this, and every result."""

JUDGE_INPUTS: frozenset[Input] = frozenset({Input.video, Input.instruction})
"""What a VLM judge reads of an item: the sampled frames of the video, and the instruction."""



class Fingerprint(NamedTuple):
    """A fingerprint, and whether a file it covers could not be read now (missing or unreadable).

    An unavailable file is part of the value too (a file that appears later changes it), but the
    planners do not take such a value for a change of the inputs: see :mod:`robojudge.run._plan`.

    ``weights``: see the field. ``legacy``: for a metric with parts added to the recipe on 2026-12-06
    (what it reads of items that have it, the network weights it loads), the value without them, as
    rows stored before carry it.
    Such a row is not *stale* (nothing says its inputs changed) but *unknown*, as a row stored without
    a fingerprint: kept, and recomputed with ``--rescore-unknown``.
    """

    value: str
    unavailable: bool = False
    legacy: str | None = None
    weights: tuple[tuple[str, str], ...] = ()
    """The network weights' digests taken into the value, by name (a model metric's; else empty)."""


def settle(row: ResultRow, now: Fingerprint) -> ResultRow | None:
    """A computed ``row`` checked against its inputs as they are ``now``; ``None``: not to store.

    The row carries the fingerprint its inputs had when the run was planned. An input rewritten since
    (a video replaced while the run went on) makes its value one of the new file, or of neither, under
    the old file's fingerprint, which the old file, put back, would find up to date: it is not stored,
    and the next run computes it from what is there then. When an input cannot be read now (a drive
    unmounted mid-run), a value is kept under the planned fingerprint (it was computed from the file as
    planned, and the planners keep such rows until the file is back), and an error row takes the
    fingerprint of now: under the planned one it would count as up to date once the file is back, and
    stay an error. Used by ``score``, ``judge`` and ``metrics sets`` alike.

    A scored row of a model metric whose inputs are as planned records the network weights it was
    computed with (``details["network_weights"]``: name to digest, :data:`WEIGHTS_DETAIL`).
    """
    if not row.fingerprint:
        return row
    if now.unavailable:
        return replace(row, fingerprint=now.value) if row.status == "error" else row
    if now.value != row.fingerprint:
        return None
    if now.weights and row.status == "ok":
        return replace(row, details={**(row.details or {}), WEIGHTS_DETAIL: dict(now.weights)})
    return row


WEIGHTS_DETAIL = "network_weights"
"""The key of a scored model metric row's ``details`` that records its networks' digests by name."""


def recorded_weights(row: ResultRow) -> dict[str, str] | None:
    """The network weights' digests ``row`` records (:func:`settle`), or None where it records none."""
    found = (row.details or {}).get(WEIGHTS_DETAIL)
    if not isinstance(found, dict) or not found:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        return None
    return found


class _Reader:
    """Takes the digests of one fingerprint and notes whether any file could not be read."""

    def __init__(self, weights_known: Mapping[str, str] | None = None,
                 weights_seen: MutableMapping[str, tuple[str, bool]] | None = None) -> None:
        self.unavailable = False
        self.weights_known = weights_known or {}
        self.weights_seen = weights_seen

    def digest(self, path: str | None) -> str | None:
        if not path:
            return None
        found = file_digest(path)
        self.unavailable = self.unavailable or found in UNAVAILABLE
        return found

    def part(self, item: Item, inp: Input, inputs: frozenset[Input]) -> Any:
        if inp is Input.video:
            return self.digest(item.video)
        if inp is Input.reference:
            part: dict[str, Any] = {"file": self.digest(item.reference_video)}
            if Input.state in inputs and item.reference_video:
                sibling = str(Path(item.reference_video).with_suffix(".npz"))
                part["state"] = self.digest(sibling) if _is_file(sibling) else None
            return part
        if inp is Input.views:
            views = {name: self.digest(path) for name, path in sorted((item.views or {}).items())}
            part = {"views": views, "main": item.main_view}
            if item.grid is not None:  # one stitched video: its layout names the views
                part["grid"] = {"layout": item.grid.model_dump(), "video": self.digest(item.video)}
            # The rig's calibration: its file, else the simulator state file that holds the cameras.
            rig = item.calibration or item.state
            if rig:
                part["rig"] = self.digest(rig)
            return part
        if inp is Input.state:
            return self.digest(item.state)
        if inp is Input.instruction:
            return item.instruction
        if inp is Input.initial_frame:
            return self.digest(item.initial_frame or item.video)
        raise ValueError(f"no fingerprint rule for input {inp!r}")  # pragma: no cover - a new Input member

    def weights(self, name: str) -> str:
        """The identity of the weights a metric loads under ``name``, as they would be found now; where
        they cannot be read here, the identity a stored row records for them (``weights_known``)."""
        if self.weights_seen is None:
            identity, unavailable = weights_identity(name)
        else:  # (one look per pass: finding weights that are not here scans the hub cache every time)
            if name not in self.weights_seen:
                self.weights_seen[name] = weights_identity(name)
            identity, unavailable = self.weights_seen[name]
        if unavailable and self.weights_known.get(name):
            return self.weights_known[name]
        self.unavailable = self.unavailable or unavailable
        return identity

    def item_text(self, item: Item, key: str, path: Any) -> Any:
        if meta_gives_text(item.meta.get(key)):  # the metrics' own rule: the manifest's text, if it has one
            return {"meta": item.meta[key]}
        if not isinstance(path, str) or not path:
            return None
        found = self.digest(path)
        if found in UNAVAILABLE or not _is_file(path):
            return None
        try:
            return {"file": load_item_texts(path, key, allow_lists=True).get(item.item_id)}
        except (MetricInputError, ValueError):  # not texts (or not UTF-8): the metric fails on it
            return {"file_digest": found}
        except OSError:  # gone between the digest and the read
            self.unavailable = True
            return None

    def config_parts(
        self, item: Item, config: Mapping[str, Any], config_type: type[BaseModel] | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, key in _read_fields(config_type) if config_type is not None else ():
            value = config.get(name)
            if key is not None:
                out[name] = self.item_text(item, key, value)
            elif isinstance(value, str) and value:
                out[name] = self.digest(value)
        return out


@functools.cache
def _read_fields(config_type: type[BaseModel]) -> tuple[tuple[str, str | None], ...]:
    """The fields of a config that name what a metric reads besides its inputs, in name order: a per-item
    text's (with its key, :func:`text_key`), else a file's (:func:`file_fields`, with None). Worked out
    once per config model, not for every item a plan or a check of stored rows goes through."""
    fields = config_type.model_fields
    files = set(file_fields(config_type))
    found = ((name, text_key(fields[name])) for name in sorted(fields))
    return tuple((name, key) for name, key in found if key is not None or name in files)


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _hash(parts: Any) -> str:
    canon = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(canon.encode(), digest_size=16).hexdigest()


def read_inputs(
    item: Item,
    inputs: Iterable[Input | str],
    config: Mapping[str, Any] | None = None,
    config_type: type[BaseModel] | None = None,
    also: Iterable[str] = (),
    weights: Iterable[str] = (),
    weights_known: Mapping[str, str] | None = None,
    weights_seen: MutableMapping[str, tuple[str, bool]] | None = None,
) -> Fingerprint:
    """The fingerprint of what a metric reading ``inputs`` (with ``config``) reads of ``item``.

    Args:
        item: The item, with absolute paths.
        inputs: The metric's declared inputs.
        config: The metric's config as plain values (what the store keeps in ``config``).
        config_type: The config's model, for the fields that name files or per-item texts; without
            it no config value is read as a file.
        also: What the metric reads of the item when the item has it (:attr:`MetricSpec.also_reads`).
        weights: The networks it loads (:attr:`MetricSpec.weights`).
        weights_known: Digests by network name that stand in for weights not readable on this
            machine (what a stored row records, :func:`recorded_weights`): the value is then the one
            the row would carry were its other inputs unchanged, and absent weights alone do not make
            it unavailable.
        weights_seen: The weights' identities (:func:`weights_identity`) looked up already in this pass,
            by name, and filled in here: a pass over many items looks each network up once.

    Returns:
        The value (32 hex characters) and whether a file could not be read.
    """
    reader = _Reader(weights_known, weights_seen)
    wanted = frozenset(Input(i) for i in inputs)
    parts: dict[str, Any] = {inp.value: reader.part(item, inp, wanted) for inp in sorted(wanted)}
    files = reader.config_parts(item, config or {}, config_type)
    if files:
        parts["config_files"] = files
    extra = sorted(set(also))
    nets = sorted(set(weights))
    legacy = _hash([FINGERPRINT_VERSION, parts]) if extra or nets else None
    if extra:  # (absent for every metric without any, so their fingerprints are as they were)
        parts["also"] = {name: _also_part(reader, item, name, wanted) for name in extra}
    if nets:
        parts["weights"] = {name: reader.weights(name) for name in nets}
    used = tuple(sorted(parts["weights"].items())) if nets else ()
    return Fingerprint(_hash([FINGERPRINT_VERSION, parts]), reader.unavailable, legacy, used)


#: How long a weights identity is reused without looking again (finding weights scans the hub cache).
WEIGHTS_TTL_S = 60.0
_weights_memo: dict[tuple[str, str], tuple[float, str, bool]] = {}
_weights_lock = threading.Lock()


def weights_identity(name: str) -> tuple[str, bool]:
    """``(identity, unavailable)`` of the weights ``name`` as they would be loaded now: the digest of
    their content (a file, or a folder's non-hidden files by relative name), the same wherever they are
    found (``$ROBOJUDGE_WEIGHTS`` or the hub cache), so a copy of the same bytes is the same network;
    ``missing`` (unavailable) when they are not on this machine.

    Found once per name and ``$ROBOJUDGE_WEIGHTS`` for :data:`WEIGHTS_TTL_S` seconds: looking scans
    the hub cache, and planning asks once per item. File digests are cached as any input's.
    """
    key = (name, str(settings.get().weights))
    now = time.monotonic()
    with _weights_lock:
        hit = _weights_memo.get(key)
    if hit is not None and now - hit[0] < WEIGHTS_TTL_S:
        return hit[1], hit[2]
    found = _weights_path(name)
    if found is None:
        return MISSING, True  # (not remembered: weights fetched a moment later are found at once)
    identity = file_digest(found) if found.is_file() else tree_digest(found)
    unavailable = identity in UNAVAILABLE
    with _weights_lock:
        _weights_memo[key] = (now, identity, unavailable)
    return identity, unavailable


def _weights_path(name: str) -> Path | None:
    """Where the weights ``name`` would be loaded from now (None: not on this machine)."""
    from robojudge.models import get_weights, weights_path

    try:
        return weights_path(get_weights(name))
    except (KeyError, ValueError):  # a name no network is registered under: the metric fails on it
        return None


def _also_part(reader: _Reader, item: Item, name: str, wanted: frozenset[Input]) -> Any:
    if name == "views":
        return reader.part(item, Input.views, wanted) if item.views or item.grid is not None else None
    if name == "embodiment":
        return item.embodiment
    if name == "robot":
        return reader.digest(item.robot) if item.robot else None
    raise ValueError(f"no fingerprint rule for {name!r}")  # pragma: no cover - a new ALSO_READS name


def inputs_fingerprint(
    item: Item,
    inputs: Iterable[Input | str],
    config: Mapping[str, Any] | None = None,
    config_type: type[BaseModel] | None = None,
) -> str:
    """The value of :func:`read_inputs`: 32 hex characters."""
    return read_inputs(item, inputs, config, config_type).value


def metric_inputs(
    item: Item, spec: MetricSpec[Any], config: BaseModel | Mapping[str, Any],
    weights_known: Mapping[str, str] | None = None,
) -> Fingerprint:
    """:func:`read_inputs` of a registered metric with a config (model or plain values); ``weights_known``
    as there.

    Of a metric that reads one camera's video (``video`` and not ``views``) on an item whose video is a
    ``grid`` of views, it also covers the layout and the declared ``main_view``: the cell the metric reads
    (:func:`robojudge.run.compute_metric`). A row stored before such items were read as their main view's
    cell (until 2026-12-07: the error "item has no single-view video") is then stale, and computed again.
    Other items' fingerprints are as they were.
    """
    values = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
    found = read_inputs(item, spec.inputs, values, spec.config_type, spec.also_reads, spec.weights,
                        weights_known)
    return _with_cell(item, spec, found)


def _with_cell(item: Item, spec: MetricSpec[Any], found: Fingerprint) -> Fingerprint:
    """``found`` with the grid layout and main view mixed in where ``spec`` reads a cell of ``item``'s
    video (see :func:`metric_inputs`)."""
    if item.grid is None or Input.video not in spec.inputs or Input.views in spec.inputs:
        return found
    cell = {"grid": item.grid.model_dump(), "main_view": item.main_view}
    legacy = None if found.legacy is None else _hash([FINGERPRINT_VERSION, "cell", found.legacy, cell])
    return found._replace(value=_hash([FINGERPRINT_VERSION, "cell", found.value, cell]), legacy=legacy)


def metric_fingerprint(item: Item, spec: MetricSpec[Any], config: BaseModel | Mapping[str, Any]) -> str:
    """The value of :func:`metric_inputs`."""
    return metric_inputs(item, spec, config).value


def judge_inputs(item: Item) -> Fingerprint:
    """The fingerprint of what a VLM judge reads of ``item`` (:data:`JUDGE_INPUTS`), whatever the rubric.

    For an item whose video is a ``grid`` of views it also covers the layout and the main view, which
    decide the cell a judge is sent (:func:`robojudge.judges.judged_input`): a judgment stored before
    the cell was sent (the whole stitched frame, until 2026-12-07) is stale, and judged again. Other
    items' fingerprints are as they were.
    """
    found = read_inputs(item, JUDGE_INPUTS)
    if item.grid is None:
        return found
    cell = {"grid": item.grid.model_dump(), "main_view": main_view_name(item)}
    return found._replace(value=_hash([FINGERPRINT_VERSION, "judge", found.value, cell]))


def judge_fingerprint(item: Item) -> str:
    """The value of :func:`judge_inputs`."""
    return judge_inputs(item).value


def set_inputs(
    spec: MetricSpec[Any],
    members: Sequence[Item],
    config: Mapping[str, Any],
    pool: Sequence[str] | None = None,
    weights_known: Mapping[str, str] | None = None,
) -> Fingerprint:
    """The fingerprint of a set-level result: its members' ids and fingerprints, in order.

    Args:
        spec: The set metric's registry entry (its declared inputs and config type).
        members: The group's items.
        config: The metric's own config values (without the grouping field).
        pool: Reference videos read beyond the members' own (a metric whose reference set is the
            whole manifest); their digests, sorted, are part of the fingerprint.
        weights_known: As for :func:`read_inputs`.

    Returns:
        The value, and whether a file of any member (or of the pool) could not be read.
    """
    prints = [(it.item_id, read_inputs(it, spec.inputs, config, spec.config_type, spec.also_reads,
                                       spec.weights, weights_known)) for it in members]
    parts: dict[str, Any] = {"members": [[item_id, fp.value] for item_id, fp in prints]}
    old: dict[str, Any] = {"members": [[item_id, fp.legacy or fp.value] for item_id, fp in prints]}
    unavailable = any(fp.unavailable for _, fp in prints)
    if pool is not None:
        reader = _Reader()
        parts["pool"] = old["pool"] = sorted({str(reader.digest(path)) for path in pool})
        unavailable = unavailable or reader.unavailable
    legacy = _hash([FINGERPRINT_VERSION, "set", old]) if any(fp.legacy for _, fp in prints) else None
    used = prints[0][1].weights if prints else ()  # (every member reads the same networks)
    return Fingerprint(_hash([FINGERPRINT_VERSION, "set", parts]), unavailable, legacy, used)


def set_fingerprint(
    spec: MetricSpec[Any],
    members: Sequence[Item],
    config: Mapping[str, Any],
    pool: Sequence[str] | None = None,
) -> str:
    """The value of :func:`set_inputs`."""
    return set_inputs(spec, members, config, pool).value


class Fingerprints:
    """Fingerprints for one planning pass, each (item, what is read) computed once.

    Metrics that read the same inputs with the same config share one; a judge's is one per item
    for every rubric. Digests themselves are cached by :mod:`robojudge.run._filehash`; this saves
    the texts files and the hashing of the parts. Each network's weights are looked up once a pass
    (:func:`weights_identity`), not once an item.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[str, Any], Fingerprint] = {}
        self._weights: dict[str, tuple[str, bool]] = {}  # (kept by forget: one look per network a pass)

    def metric(self, item: Item, spec: MetricSpec[Any], config: BaseModel | Mapping[str, Any]) -> Fingerprint:
        values = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
        reads = (spec.inputs, spec.also_reads, spec.weights, spec.config_type)
        key = (item.item_id, (*reads, repr(sorted(values.items()))))
        found = self._memo.get(key)
        if found is None:
            found = read_inputs(item, spec.inputs, values, spec.config_type, spec.also_reads, spec.weights,
                                weights_seen=self._weights)
            found = _with_cell(item, spec, found)
            self._memo[key] = found
        return found

    def forget(self) -> None:
        """Drop the fingerprints worked out so far: a pass over rows grouped by item needs the current
        item's only, and keeping every one grows with the store."""
        self._memo.clear()

    def judge(self, item: Item) -> Fingerprint:
        key = (item.item_id, "judge")
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = judge_inputs(item)
        return found
