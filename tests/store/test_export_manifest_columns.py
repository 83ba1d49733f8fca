"""Exports with a suite carry the manifest's generator, source and clip_id after the standard columns.

``robojudge results export --suite`` and the report's ``results.csv`` both have them, so a long
table of results can be grouped or joined without the manifest at hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from robojudge.report import report_suite
from robojudge.run import export_run
from robojudge.store import (
    EXPORT_COLUMNS,
    MANIFEST_COLUMNS,
    OUTSIDE_COLUMN,
    STALE_COLUMN,
    ResultRow,
    ResultStore,
    item_columns,
    outside_column,
)
from robojudge.suite import Item


def _manifest(folder: Path) -> Path:
    rows = [
        {"item_id": "a", "video": "a.mp4", "generator": "gen1", "source": "bridge", "clip_id": "c1"},
        {"item_id": "b", "video": "b.mp4", "generator": "=HYPERLINK(1)", "source": "droid", "clip_id": "c1"},
        {"item_id": "c", "video": "c.mp4"},
    ]
    for r in rows:
        (folder / r["video"]).write_bytes(b"")  # the loader wants the files; nothing here decodes them
    path = folder / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _store(folder: Path) -> str:
    url = f"sqlite:///{folder / 'r.sqlite'}"
    with ResultStore(url) as store:
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0), ResultRow("b", "m", "h", "1", "ok", 2.0),
                   ResultRow("c", "m", "h", "1", "error", None, error="boom"),
                   ResultRow("group:generator=gen1", "fvd", "h", "1", "ok", 5.0,
                             details={"group": "gen1"}, config={"group_by": "generator"})])
    return url


def _read(out: Path) -> pd.DataFrame:
    if out.suffix == ".csv":
        return pd.read_csv(out, keep_default_na=False, dtype=str)
    return pd.read_parquet(out)


def test_item_columns_read_the_item_then_a_set_level_rows_group() -> None:
    items = [Item(item_id="a", video="a.mp4", generator="g", clip_id="c9")]
    cols = item_columns(items)
    assert tuple(cols) == MANIFEST_COLUMNS == ("generator", "source", "clip_id")
    row = ResultRow("a", "m", "h", "1", "ok", 1.0)
    assert [cols[k](row) for k in MANIFEST_COLUMNS] == ["g", None, "c9"]
    grouped = ResultRow("group:generator=g", "fvd", "h", "1", "ok", 1.0, details={"group": "g"},
                        config={"group_by": "generator"})
    assert [cols[k](grouped) for k in MANIFEST_COLUMNS] == ["g", None, None]
    assert cols["generator"](ResultRow("zz", "m", "h", "1", "ok", 1.0)) is None
    # A group no item forms any more (a generator renamed since) names no generator: aggregate ranked it.
    renamed = ResultRow("group:generator=old", "fvd", "h", "1", "ok", 1.0, details={"group": "old"},
                        config={"group_by": "generator"})
    assert cols["generator"](renamed) is None
    unset = ResultRow("group:source=-", "fvd", "h", "1", "ok", 1.0, details={"group": "-"},
                      config={"group_by": "source"})
    assert cols["source"](unset) == "-"  # the items without a source form the group '-'


def test_outside_column_marks_what_the_suite_does_not_hold() -> None:
    items = [Item(item_id="a", video="a.mp4", generator="g"), Item(item_id="b", video="b.mp4")]
    mark = outside_column(items)

    def group(by: str | None, name: str) -> ResultRow:
        return ResultRow(f"group:{by}={name}", "fvd", "h", "1", "ok", 1.0, details={"group": name},
                         config={"group_by": by})

    assert [mark(ResultRow(i, "m", "h", "1", "ok", 1.0)) for i in ("a", "b", "gone")] == ["", "", "outside"]
    # groups the items form (the unset one is '-') and a result over all items; a renamed generator and a
    # task no item has are outside
    groups = [("generator", "g"), ("generator", "-"), (None, "all"), ("generator", "old"), ("task", "push")]
    assert [mark(group(by, name)) for by, name in groups] == ["", "", "", "outside", "outside"]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_results_export_with_a_suite_adds_generator_source_and_clip_at_the_end(tmp_path: Path, suffix: str
                                                                               ) -> None:
    url, manifest = _store(tmp_path), _manifest(tmp_path)
    out = tmp_path / f"e{suffix}"
    assert export_run(url, out, suite=manifest) == 4
    table = _read(out)
    assert tuple(table.columns) == (*EXPORT_COLUMNS, *MANIFEST_COLUMNS, OUTSIDE_COLUMN, STALE_COLUMN)
    rows = {r.item_id: r for r in table.itertuples(index=False)}
    assert (rows["a"].generator, rows["a"].source, rows["a"].clip_id) == ("gen1", "bridge", "c1")
    unset = (rows["c"].generator, rows["c"].source, rows["c"].clip_id)
    assert unset == ("", "", "") if suffix == ".csv" else all(pd.isna(v) for v in unset)
    assert rows["group:generator=gen1"].generator == "gen1"
    # A cell a spreadsheet would run stays text in CSV, as every other text cell.
    assert rows["b"].generator == ("'=HYPERLINK(1)" if suffix == ".csv" else "=HYPERLINK(1)")


def test_by_keeps_its_place_and_the_manifest_columns_follow(tmp_path: Path) -> None:
    url, manifest = _store(tmp_path), _manifest(tmp_path)
    out = tmp_path / "e.csv"
    export_run(url, out, by="task", suite=manifest)
    assert tuple(_read(out).columns) == (*EXPORT_COLUMNS, "task", *MANIFEST_COLUMNS, OUTSIDE_COLUMN,
                                         STALE_COLUMN)
    export_run(url, out, by="generator", suite=manifest)  # --by generator: one generator column, by's
    table = _read(out)
    assert tuple(table.columns) == (*EXPORT_COLUMNS, "generator", "source", "clip_id", "outside_suite",
                                   "stale")
    assert dict(zip(table.item_id, table.generator, strict=True))["c"] == "-"  # by's name for unset


def test_without_a_suite_the_columns_are_as_before(tmp_path: Path) -> None:
    out = tmp_path / "e.csv"
    export_run(_store(tmp_path), out)
    assert tuple(_read(out).columns) == EXPORT_COLUMNS


def test_the_reports_results_csv_has_the_manifest_columns(tmp_path: Path) -> None:
    url, manifest = _store(tmp_path), _manifest(tmp_path)
    report_suite(manifest, url, tmp_path / "report")
    table = _read(tmp_path / "report" / "results.csv")
    assert tuple(table.columns) == (*EXPORT_COLUMNS, *MANIFEST_COLUMNS, OUTSIDE_COLUMN, STALE_COLUMN)
    assert dict(zip(table.item_id, table.source, strict=True))["b"] == "droid"
