"""One stored result: a metric's value (or failure) for one item under one config."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from robojudge._chars import MAX_NAME_BYTES
from robojudge.suite import MAX_ITEM_ID_BYTES

Status = Literal["ok", "error"]
STATUSES: tuple[Status, ...] = ("ok", "error")

MAX_KEY_BYTES: dict[str, int] = {
    "item_id": MAX_ITEM_ID_BYTES,
    "metric": 2 * MAX_NAME_BYTES + 100,
    "config_hash": MAX_NAME_BYTES,
    "version": MAX_NAME_BYTES,
}
"""The most bytes (UTF-8) of each key column a store takes, on every backend. An item id is a manifest's
(at most :data:`~robojudge.suite.MAX_ITEM_ID_BYTES`) or a set-level group's, which is no longer; a
metric id is a registered one or ``judge:<judge>:<rubric>`` (two names of at most
:data:`robojudge._chars.MAX_NAME_BYTES`). Together they stay below the 2,704 bytes an entry of
PostgreSQL's unique index over the key holds, so that a row SQLite takes is never one PostgreSQL refuses."""


def key_problem(row: ResultRow) -> str | None:
    """Why ``row``'s key is too long to store (a field over :data:`MAX_KEY_BYTES`), naming the item and
    the field; None when it fits."""
    for name, limit in MAX_KEY_BYTES.items():
        value: str = getattr(row, name)
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > limit:
            item = row.item_id if len(row.item_id) <= 80 else row.item_id[:80] + "..."
            return (f"item {item!r} field {name}: {name} is {size:,} bytes long in UTF-8; a result store "
                    f"takes at most {limit:,}")
    return None


@dataclass(frozen=True)
class ResultRow:
    """A metric's outcome for one item, keyed by ``(item_id, metric, config_hash, version)``.

    The value convention follows :class:`robojudge.metrics.Score`: for an ``"ok"`` row the value is
    always a float and NaN means "ran but produced no score"; for an ``"error"`` row the value is
    always ``None``. Passing ``None`` for an ok row is accepted and turned into NaN; passing NaN for
    an error row is turned into ``None``; a real number on an error row is rejected.

    Attributes:
        item_id: The suite item the result belongs to.
        metric: The metric id.
        config_hash: Hash of the metric's config; a different config gives different rows.
        version: The metric's implementation version.
        status: ``"ok"`` if the metric returned, ``"error"`` if it raised.
        value: The score (NaN when unscored) or ``None`` for failures.
        error: The failure message, if any.
        duration_s: Wall time the metric took, in seconds.
        details: Small JSON-able extra facts returned with the score.
        config: The metric config itself, kept for provenance.
        created_at: When the row was stored (UTC); filled in by the store when ``None``.
        fingerprint: Hash of the inputs the result read (video content, reference, texts...; see
            :mod:`robojudge.run._fingerprint`); ``""`` when unknown (rows stored before schema
            version 2, imported values). Not part of the key: a different fingerprint for a stored
            key means the inputs changed, and the new row supersedes the stored one.
        superseded_at: When a row computed from changed inputs, or a value of the same inputs in place
            of this error, took this row's place (UTC);
            ``None`` for current rows. Only set by the store.
        row_id: The store's id of the row, which grows in the order rows were written (``None`` for a
            row not read from a store). "Newest" goes by it, not by ``created_at``: that is each
            writing host's own clock, which may be off or stepped back. Not part of equality.
    """

    item_id: str
    metric: str
    config_hash: str
    version: str
    status: Status
    value: float | None
    error: str | None = None
    duration_s: float = 0.0
    details: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    created_at: datetime | None = None
    fingerprint: str = ""
    superseded_at: datetime | None = None
    row_id: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("item_id", "metric", "config_hash", "version"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"ResultRow.{name} must be a non-empty string, got {getattr(self, name)!r}")
        if not isinstance(self.fingerprint, str):
            raise ValueError(f"ResultRow.fingerprint must be a string, got {self.fingerprint!r}")
        if self.status not in STATUSES:
            raise ValueError(f"ResultRow.status must be 'ok' or 'error', got {self.status!r}")
        value = self.value
        if value is not None:
            value = float(value)
        if self.status == "ok":
            value = math.nan if value is None else value
        elif value is not None:
            if not math.isnan(value):
                raise ValueError(f"an error row carries no value, got {value!r} for {self.key}")
            value = None
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "duration_s", float(self.duration_s))

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The identity of the row: ``(item_id, metric, config_hash, version)``."""
        return (self.item_id, self.metric, self.config_hash, self.version)

    @property
    def current(self) -> bool:
        """True unless a row computed from changed inputs superseded this one."""
        return self.superseded_at is None

    @property
    def scored(self) -> bool:
        """True for an ok row with a real (non-NaN) value."""
        return self.value is not None and not math.isnan(self.value)


def parse_libraries(text: str) -> dict[str, str]:
    """``{"numpy": "2.3.4", ...}`` from a row's ``details["libraries"]`` (``"name version"`` pairs joined
    by ``", "``); parts it cannot read are skipped.

    >>> parse_libraries("numpy 2.3.4, opencv 5.1.0")
    {'numpy': '2.3.4', 'opencv': '5.1.0'}
    """
    out = {}
    for part in text.split(","):
        name, _, version = part.strip().partition(" ")
        if name and version.strip():
            out[name] = version.strip()
    return out


def served_models(details: dict[str, Any] | None) -> list[str]:
    """The model names the server reported in a judge row's replies (``details.turns[].response.model``),
    each once, in the order of the turns; none for a row that records none (a failure, a backend that
    does not say, a row stored before it was recorded).

    The judge's identity has no endpoint (docs/judges.md, "Results and cache"), so these names are the
    only trace of which weights answered: two of them under one configuration mean the rows mix models.
    Here, below the judges and the report, so that both read it (the report loads no judge code).
    """
    turns = (details or {}).get("turns")
    names: dict[str, None] = {}
    for turn in turns if isinstance(turns, list) else ():
        response = turn.get("response") if isinstance(turn, dict) else None
        model = response.get("model") if isinstance(response, dict) else None
        if isinstance(model, str) and model:
            names[model] = None
    return list(names)
