"""Rows are read in code point order of item id and metric on every backend, whatever collation a
PostgreSQL database sorts its text by."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from _postgres import _admin_connect
from robojudge.store import ResultRow, ResultStore, export_results

# Ids whose order depends on the collation: case, punctuation and an accented letter.
IDS = ["b-item", "B_item", "a.item", "A-item", "a_item", "_z", "Z1", "z10", "z2", "ä-item"]
METRICS = ["ssim", "Psnr", "_mse"]
CODE_POINT_ORDER = sorted((item, metric) for item in IDS for metric in METRICS)


def _fill(url: str) -> None:
    with ResultStore(url) as store:
        store.add([ResultRow(item, metric, "c", "1", "ok", 1.0) for metric in METRICS for item in IDS[::-1]])


def _read_order(url: str, tmp_path: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    with ResultStore(url, read_only=True) as store:
        rows = [(r.item_id, r.metric) for r in store.rows()]
        export_results(store, tmp_path / "rows.csv")
    table = pd.read_csv(tmp_path / "rows.csv", keep_default_na=False)
    return rows, list(zip(table["item_id"], table["metric"], strict=True))


def test_rows_and_exports_come_in_code_point_order(store_url: str, tmp_path: Path) -> None:
    _fill(store_url)
    rows, exported = _read_order(store_url, tmp_path)
    assert rows == CODE_POINT_ORDER
    assert exported == CODE_POINT_ORDER


@pytest.mark.postgres
def test_rows_ignore_an_icu_database_collation(icu_db_url: str, tmp_path: Path) -> None:
    _fill(icu_db_url)
    with _admin_connect(icu_db_url) as conn:  # the database itself sorts the ids otherwise
        own = [r[0] for r in conn.execute("SELECT DISTINCT item_id FROM robojudge_results ORDER BY item_id")]
    assert own != sorted(IDS)
    # Before, rows and exports followed the database's order (_z, a_item, A-item, ä-item, a.item, ...),
    # and so did `results status`'s examples and the report's results.csv: not SQLite's.
    rows, exported = _read_order(icu_db_url, tmp_path)
    assert rows == CODE_POINT_ORDER
    assert exported == CODE_POINT_ORDER
