"""Names and keys have limits, the same on SQLite and PostgreSQL.

Before, a metric id, a judge or rubric name or a version of any length went into the key of stored rows:
SQLite stored it, while PostgreSQL refused the write once the unique index's entry outgrew 2,704 bytes
(a bare "index row size exceeds maximum" mid-run). A row whose key part is longer than a store takes is now
refused before anything is written, with the same message on both; a key at every limit at once fits
PostgreSQL's index.
"""

from __future__ import annotations

import random
import string

import pytest

from robojudge._chars import MAX_NAME_BYTES
from robojudge.judges import judge_metric_id
from robojudge.store import ResultRow, ResultStore, put_rows
from robojudge.store._row import MAX_KEY_BYTES
from robojudge.suite import MAX_ITEM_ID_BYTES


def _text(n: int, seed: int) -> str:
    """``n`` random lowercase letters: text PostgreSQL cannot compress into a short index entry."""
    return "".join(random.Random(seed).choices(string.ascii_lowercase, k=n))


def test_a_key_at_every_limit_is_stored_on_every_backend(store_url: str) -> None:
    judge, rubric = _text(MAX_NAME_BYTES, 1), _text(MAX_NAME_BYTES, 2)
    metric = judge_metric_id(judge, rubric)
    assert len(metric) <= MAX_KEY_BYTES["metric"]
    row = ResultRow(_text(MAX_ITEM_ID_BYTES, 3), metric, _text(MAX_KEY_BYTES["config_hash"], 4),
                    _text(MAX_KEY_BYTES["version"], 5), "ok", 1.0)
    with ResultStore(store_url) as store:
        assert store.add([row]) == 1
        assert [r.key for r in store.rows()] == [row.key]


@pytest.mark.parametrize("field", ["item_id", "metric", "config_hash", "version"])
def test_a_longer_key_part_is_refused_alike_on_every_backend(store_url: str, field: str) -> None:
    key = {"item_id": "ep1", "metric": "ssim", "config_hash": "c", "version": "1"}
    key[field] = _text(MAX_KEY_BYTES[field] + 1, 6) if field != "item_id" else "é" * 600
    long = ResultRow(**key, status="ok", value=1.0)
    fine = ResultRow("ep2", "ssim", "c", "1", "ok", 2.0)
    size = len(key[field].encode())
    shown = "ep1" if field != "item_id" else "é" * 80 + "..."
    message = (f"item {shown!r} field {field}: {field} is {size:,} bytes long in UTF-8; a result store takes "
               f"at most {MAX_KEY_BYTES[field]:,}")
    with ResultStore(store_url) as store:
        with pytest.raises(ValueError) as err:
            store.add([fine, long])
        assert str(err.value) == f"cannot add the row: {message}"
        with pytest.raises(ValueError) as err:
            put_rows(store, [fine, long])
        assert str(err.value) == f"put_rows cannot store a row: {message}"
        assert store.rows() == []  # nothing of the batch was written
