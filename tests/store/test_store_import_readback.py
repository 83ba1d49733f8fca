"""Reading robojudge's own exports back: ``results import`` and ``results export`` checks.

Each test failed before: the spreadsheet escape (``'=cmd``) was not undone on import, an export's
bookkeeping columns made a re-import of the same values a "conflict" that named no difference, the
same value with other extra fields was reported as a value change, an unknown ``--metric`` wrote an
empty file, and rows of items outside ``--suite`` got an empty ``--by`` cell.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.run._import import ResultImportError, import_results
from robojudge.store import ResultRow, ResultStore, export_results

runner = CliRunner()


def _suite(tmp_path: Path, items: dict[str, str | None]) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", **({"generator": e} if e else {})})
                            + "\n" for i, e in items.items()))
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    return path


def test_an_escaped_item_id_imports_as_stored(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {"=cmd": None, "-x": None})
    src = tmp_path / "values.csv"
    src.write_text("item_id,metric,value\n=cmd,ts_action_planner,0.5\n-x,ts_action_planner,0.25\n")
    db = tmp_path / "db.sqlite"
    with ResultStore(db) as store:
        import_results(store, src, suite=suite)
        export = tmp_path / "export.csv"
        export_results(store, export)
    cells = [r["item_id"] for r in csv.DictReader(export.open())]
    assert sorted(cells) == ["'-x", "'=cmd"]  # the guard for spreadsheets stays
    with ResultStore(db) as store:
        report = import_results(store, export, suite=suite)
    assert (report.imported, report.unchanged) == (0, 2)
    assert report.ignored_columns[:3] == ["status", "error", "config_hash"]


def test_reimporting_an_export_of_the_same_store_changes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "values.csv"
    src.write_text("item_id,metric,value,episodes\na,ts_action_planner,0.8,10\nb,ts_action_planner,0.4,12\n")
    db = tmp_path / "db.sqlite"
    with ResultStore(db) as store:
        import_results(store, src)
        before = store.rows()
    export = tmp_path / "export.csv"
    suite = _suite(tmp_path, {"a": "wan", "b": None})
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(export),
                                                 "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(build_app("results"), ["results", "import", str(export), "--db", str(db)])
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "0 imported, 2 unchanged, 0 replaced" in said
    assert "is a `results export`" in said and "are not kept" in said
    with ResultStore(db) as store:
        assert store.rows() == before


def test_an_export_written_before_result_schema_2_is_read_as_an_export(tmp_path: Path) -> None:
    # Such an export has no fingerprint column: it was taken for plain values, its bookkeeping columns
    # went into details, and a re-import into its own (upgraded) store was refused.
    src = tmp_path / "values.csv"
    src.write_text("item_id,metric,value,episodes\na,ts_action_planner,0.8,10\n")
    db = tmp_path / "db.sqlite"
    with ResultStore(db) as store:
        import_results(store, src)
        export = tmp_path / "export.csv"
        export_results(store, export)
    with export.open(newline="") as fh:
        table = list(csv.DictReader(fh))
    old = tmp_path / "old_export.csv"
    with old.open("w", newline="") as fh:
        columns = [c for c in table[0] if c != "fingerprint"]
        writer = csv.DictWriter(fh, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(table)
    with ResultStore(db) as store:
        again = import_results(store, old)
    assert (again.imported, again.unchanged) == (0, 1) and "status" in again.ignored_columns
    with ResultStore(tmp_path / "fresh.sqlite") as fresh:
        import_results(fresh, old)
        (row,) = fresh.rows()
    assert {k: v for k, v in (row.details or {}).items() if k != "import"} == {"episodes": 10}


def test_same_value_other_extra_fields_names_the_fields(tmp_path: Path) -> None:
    first = tmp_path / "one.csv"
    first.write_text("item_id,metric,value\na,ts_action_planner,0.8\n")
    second = tmp_path / "two.csv"
    second.write_text("item_id,metric,value,episodes\na,ts_action_planner,0.8,11\n")
    with ResultStore(tmp_path / "db.sqlite") as store:
        import_results(store, first)
        with pytest.raises(ResultImportError) as exc:
            import_results(store, second)
    (msg,) = [str(p) for p in exc.value.problems]
    assert msg.startswith(f"{second}:2: item 'a' field episodes: metric 'ts_action_planner': the value 0.8 "
                          "is the one stored")
    assert "extra fields differ (episodes: stored (none), file 11)" in msg and "--replace" in msg
    assert "the file has 0.8" not in msg


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "db.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(f"i{n}", m, "h", "1", "ok", 0.5) for n in range(4)
                   for m in ("iq1_ssim", "iq1_psnr")])
    return db


def test_export_of_an_unknown_metric_is_an_error_with_a_hint(tmp_path: Path) -> None:
    db = _store(tmp_path)
    out = tmp_path / "x.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(out),
                                                 "--metric", "iq1_ssm"])
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert "error: --metric 'iq1_ssm': no rows of that metric in the store (did you mean iq1_ssim?)" in said
    assert "its metrics: iq1_psnr, iq1_ssim" in said
    assert not out.exists()


def test_export_by_a_field_marks_items_outside_the_suite(tmp_path: Path) -> None:
    # They were written '-', as i1 (no generator) is, and aggregated with it.
    db = _store(tmp_path)
    suite = _suite(tmp_path, {"i0": "wan", "i1": None})
    out = tmp_path / "x.csv"
    done = runner.invoke(build_app("results"), ["results", "export", "--db", str(db), "-o", str(out),
                                                 "--by", "generator", "--suite", str(suite)])
    assert done.exit_code == 0, done.output
    cells = {r["item_id"]: (r["generator"], r["outside_suite"]) for r in csv.DictReader(out.open())}
    assert cells == {"i0": ("wan", ""), "i1": ("-", ""), "i2": ("", "outside"), "i3": ("", "outside")}
    said = " ".join(done.output.split())
    assert "note: 4 of 8 rows are of items (or groups) that are not in" in said
    assert "the 'outside_suite' column marks them 'outside' and their generator cell is empty" in said
