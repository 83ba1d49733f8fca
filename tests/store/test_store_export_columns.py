"""Exports carry each row's inputs fingerprint and, on request, extra columns (e.g. the generator)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from robojudge.store import ResultRow, ResultStore, export_results


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_fingerprint_and_extra_columns(tmp_path: Path, suffix: str) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow("a", "m", "c", "1", "ok", 1.0, fingerprint="f1"),
                   ResultRow("b", "m", "c", "1", "ok", 2.0),
                   ResultRow("a", "old", "c", "1", "ok", 3.0, fingerprint="x")])
        store.add([ResultRow("a", "old", "c", "1", "ok", 4.0, fingerprint="y")])  # supersedes
        gen = {"a": "g1", "b": "=cmd"}
        out = tmp_path / f"e{suffix}"
        n = export_results(store, out, columns={"generator": lambda r: gen.get(r.item_id)})
    table = pd.read_csv(out, keep_default_na=False) if suffix == ".csv" else pd.read_parquet(out)
    assert n == 3  # the superseded row is not exported
    assert list(table.columns)[-2:] == ["fingerprint", "generator"]
    rows = {(r.item_id, r.metric): r for r in table.itertuples(index=False)}
    assert rows[("a", "m")].fingerprint == "f1" and rows[("b", "m")].fingerprint == ""
    assert rows[("a", "old")].value == 4.0 and rows[("a", "old")].fingerprint == "y"
    assert rows[("a", "m")].generator == "g1"
    # Extra text columns are neutralised in CSV like every other text cell.
    assert rows[("b", "m")].generator == ("'=cmd" if suffix == ".csv" else "=cmd")


@pytest.mark.parametrize("name", ["item_id", "value", "fingerprint"])
def test_an_extra_column_may_not_take_a_standard_name(tmp_path: Path, name: str) -> None:
    """``results export --by item_id`` wrote a second item_id column; now it is refused by name."""
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow("a", "m", "c", "1", "ok", 1.0)])
        with pytest.raises(ValueError, match=f"'{name}'.*export column"):
            export_results(store, tmp_path / "e.csv", columns={name: lambda r: "x"})
    assert not (tmp_path / "e.csv").exists()
