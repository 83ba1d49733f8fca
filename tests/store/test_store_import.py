"""``import_results``: external metric values into the store, checked, idempotent, all-or-nothing.

The behavioural tests run on SQLite and PostgreSQL (the ``store_url`` fixture); the checks of the
file's content do not depend on the database and run on SQLite only.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from robojudge.run._import import (
    DEFAULT_SOURCE,
    ResultImportError,
    import_config_hash,
    import_results,
)
from robojudge.store import ResultRow, ResultStore, RowConflictError, export_results, put_rows

GOOD = (
    "item_id,metric,value,episodes\n"
    "a,ts_action_planner,0.5,10\n"
    "b,ts_action_planner,0.75,10\n"
    "a,ta_mean_trajectory_length,1.25,\n"
)


def _write(tmp_path: Path, text: str, name: str = "values.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _values(store: ResultStore) -> dict[tuple[str, str], float | None]:
    return {(r.item_id, r.metric): r.value for r in store.rows()}


def _problems(exc: pytest.ExceptionInfo[ResultImportError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


# -- behaviour on both databases ------------------------------------------------------------------


def test_round_trip_through_export(store_url: str, tmp_path: Path) -> None:
    src = _write(tmp_path, GOOD)
    with ResultStore(store_url) as store:
        report = import_results(store, src)
        assert (report.imported, report.unchanged, report.replaced) == (3, 0, 0)
        assert report.metrics["ts_action_planner"].imported == 2
        out = tmp_path / "export.csv"
        assert export_results(store, out) == 3
    df = pd.read_csv(out)
    got = {(r.item_id, r.metric): r.value for r in df.itertuples()}
    assert got == {("a", "ts_action_planner"): 0.5, ("b", "ts_action_planner"): 0.75,
                   ("a", "ta_mean_trajectory_length"): 1.25}
    assert set(df["status"]) == {"ok"}
    assert set(df["config_hash"]) == {import_config_hash()}
    first = df[(df.item_id == "a") & (df.metric == "ts_action_planner")].iloc[0]
    details = json.loads(first["details"])
    assert details["episodes"] == 10  # an extra column, kept per row (CSV text "10" -> int)
    prov = details["import"]
    assert prov["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert prov["file"] == str(src.resolve()) and prov["line"] == 2
    assert prov["provider"] == "external" and prov["source"] == DEFAULT_SOURCE
    assert json.loads(first["config"]) == {"provider": "external", "source": DEFAULT_SOURCE}


def test_reimport_is_idempotent(store_url: str, tmp_path: Path) -> None:
    src = _write(tmp_path, GOOD)
    with ResultStore(store_url) as store:
        import_results(store, src)
        before = store.rows()
        # The same values from another file (another sha256) are still the same rows.
        again = import_results(store, _write(tmp_path, GOOD + "\n", "copy.csv"))
        assert (again.imported, again.unchanged, again.replaced) == (0, 3, 0)
        assert store.count() == 3
        assert store.rows() == before  # provenance of the first import kept, nothing rewritten


def test_different_value_is_refused_then_replaced(store_url: str, tmp_path: Path) -> None:
    with ResultStore(store_url) as store:
        import_results(store, _write(tmp_path, GOOD))
        changed = _write(tmp_path, GOOD.replace("b,ts_action_planner,0.75", "b,ts_action_planner,0.8"),
                         "v2.csv")
        with pytest.raises(ResultImportError) as exc:
            import_results(store, changed)
        (msg,) = _problems(exc)
        assert msg.startswith(f"{changed}:3: item 'b' field value:") and "0.75" in msg and "--replace" in msg
        assert _values(store)[("b", "ts_action_planner")] == 0.75  # nothing written
        report = import_results(store, changed, replace=True)
        assert (report.imported, report.unchanged, report.replaced) == (0, 2, 1)
        assert store.count() == 3  # replaced, not duplicated
        assert _values(store)[("b", "ts_action_planner")] == 0.8
        row = next(r for r in store.rows() if r.item_id == "b")
        assert row.details is not None and row.details["import"]["file"] == str(changed.resolve())


def test_one_bad_line_imports_nothing(store_url: str, tmp_path: Path) -> None:
    text = GOOD + "c,ts_action_planner,1.5,10\nd,ts_data_engine,-0.25,\n"
    with ResultStore(store_url) as store:
        with pytest.raises(ResultImportError) as exc:
            import_results(store, _write(tmp_path, text))
        msgs = _problems(exc)
        assert [m.split(":")[1] for m in msgs] == ["5", "6"]  # every bad line, at once
        assert store.count() == 0


def test_sources_are_kept_apart(store_url: str, tmp_path: Path) -> None:
    src = _write(tmp_path, GOOD)
    with ResultStore(store_url) as store:
        import_results(store, src)
        other = import_results(store, src, source="robotwin2-idm-seed1")
        assert other.imported == 3 and other.config_hash != import_config_hash()
        assert store.count() == 6


# -- formats ----------------------------------------------------------------------------------------


def test_jsonl_parquet_and_one_metric_files(tmp_path: Path) -> None:
    jsonl = _write(tmp_path, '{"item_id": "a", "metric": "ts_data_engine", "value": 0.25, "seed": 3}\n\n'
                   '{"item_id": 7, "metric": "ts_data_engine", "value": 1}\n', "v.jsonl")
    wide = _write(tmp_path, "item_id,value\na,2.5\nb,0.1349\n", "mtl.csv")
    parquet = tmp_path / "v.parquet"
    pq.write_table(pa.table({"item_id": ["a", "b"], "value": [0.0, 1.0]}), parquet)
    with ResultStore(tmp_path / "db.sqlite") as store:
        assert import_results(store, jsonl).imported == 2
        assert import_results(store, wide, metric="ta_mean_trajectory_length").imported == 2
        assert import_results(store, parquet, metric="ts_action_planner").imported == 2
        values = _values(store)
        assert values[("7", "ts_data_engine")] == 1.0 and values[("a", "ts_data_engine")] == 0.25
        assert values[("b", "ta_mean_trajectory_length")] == 0.1349
        assert values[("b", "ts_action_planner")] == 1.0
        row = next(r for r in store.rows() if r.item_id == "a" and r.metric == "ts_action_planner")
        assert row.details is not None and row.details["import"]["row"] == 0  # Parquet: record index


def test_a_csv_cell_longer_than_pythons_csv_limit_is_read(tmp_path: Path, default_csv_limit: None) -> None:
    # A details cell over csv's default 131,072 characters made the whole file unreadable.
    trace = json.dumps([i * 0.5 for i in range(40_000)])
    assert len(trace) > 131_072
    src = _write(tmp_path, f'item_id,metric,value,trace\na,ts_data_engine,0.5,"{trace}"\n'
                 "b,ts_data_engine,0.25,\n")
    with ResultStore(tmp_path / "db.sqlite") as store:
        assert import_results(store, src).imported == 2
        row = next(r for r in store.rows() if r.item_id == "a")
        assert row.details is not None and row.details["trace"] == trace


def test_a_jsonl_key_given_twice_is_refused(tmp_path: Path) -> None:
    # json.loads keeps the last of two values without a word: 0.9 would have been imported.
    src = _write(tmp_path, '{"item_id": "a", "metric": "ts_data_engine", "value": 0.2, "value": 0.9}\n'
                 '{"item_id": "b", "metric": "ts_data_engine", "value": 0.5}\n', "v.jsonl")
    with ResultStore(tmp_path / "db.sqlite") as store:
        with pytest.raises(ResultImportError) as exc:
            import_results(store, src)
        assert _problems(exc) == [f"{src}:1: item 'a' field value: given more than once"]
        report = import_results(store, src, skip_invalid=True)
        assert report.imported == 1 and [p.line for p in report.skipped] == [1]
        assert _values(store) == {("b", "ts_data_engine"): 0.5}


def test_metric_option_picks_one_metric_of_a_long_file(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "db.sqlite") as store:
        report = import_results(store, _write(tmp_path, GOOD), metric="ta_mean_trajectory_length")
        assert report.imported == 1 and report.left_out == 2
        assert set(_values(store)) == {("a", "ta_mean_trajectory_length")}


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "db.sqlite") as store:
        report = import_results(store, _write(tmp_path, GOOD), dry_run=True)
        assert report.dry_run and report.imported == 3
        assert store.count() == 0


def test_skip_invalid_imports_the_good_lines(tmp_path: Path) -> None:
    text = GOOD + "c,ts_action_planner,oops,\nd,ts_action_planner,0.1,\nd,ts_action_planner,0.2,\n"
    with ResultStore(tmp_path / "db.sqlite") as store:
        report = import_results(store, _write(tmp_path, text), skip_invalid=True)
        assert report.imported == 3
        assert [p.line for p in report.skipped] == [5, 7]
        assert ("d", "ts_action_planner") not in _values(store)  # a duplicated pair: neither value


# -- checks of the file's content -------------------------------------------------------------------

HEADER = "item_id,metric,value\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("a,ts_action_planer,0.5\n", ":2: item 'a' field metric: unknown metric 'ts_action_planer'. "
                                     "Did you mean 'ts_action_planner'"),
        ("a,iq1_ssim,0.5\n", ":2: item 'a' field metric: metric 'iq1_ssim' is provided by 'computed'"),
        ("a,ts_vlm2,0.5\n", ":2: item 'a' field metric: metric 'ts_vlm2' is provided by 'judge'"),
        ("a,ts_action_planner,high\n", ":2: item 'a' field value: value 'high' is not a finite number"),
        ("a,ts_action_planner,nan\n", ":2: item 'a' field value: value 'nan' is not a finite number"),
        ("a,ts_action_planner,\n", ":2: item 'a' field value: value missing"),
        ("a,ts_action_planner,1.0001\n", ":2: item 'a' field value: 1.0001 is outside the native range "
                                          "[0, 1]"),
        ("a,ta_mean_trajectory_length,-1\n", ":2: item 'a' field value: -1.0 is outside the native range "
                                             "[0, inf]"),
        ("a,ts_data_engine,0.5\na,ts_data_engine,0.5\n", ":3: item 'a': duplicate: a second value for metric "
                                                         "'ts_data_engine' (the first is at line 2)"),
        (",ts_data_engine,0.5\n", ":2: field item_id: missing or non-text item id None"),
        ("a,ts_data_engine,0.5,extra\n", ":2: 4 cells but the header has 3"),
    ],
)
def test_bad_line_names_file_line_item_and_field(tmp_path: Path, body: str, expected: str) -> None:
    src = _write(tmp_path, HEADER + body)
    with ResultStore(tmp_path / "db.sqlite") as store:
        with pytest.raises(ResultImportError) as exc:
            import_results(store, src)
        assert any(m.startswith(f"{src}{expected}") for m in _problems(exc)), _problems(exc)
        assert store.count() == 0


def test_computed_metric_with_allow_computed(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "db.sqlite") as store:
        src = _write(tmp_path, HEADER + "a,iq1_ssim,0.5\n")
        assert import_results(store, src, allow_computed=True).imported == 1
        assert _values(store) == {("a", "iq1_ssim"): 0.5}


def test_refused_metric_is_reported_once_with_its_lines(tmp_path: Path) -> None:
    body = "".join(f"i{n},ts_action_planer,0.5\n" for n in range(7))
    with ResultStore(tmp_path / "db.sqlite") as store, pytest.raises(ResultImportError) as exc:
        import_results(store, _write(tmp_path, HEADER + body))
    (msg,) = _problems(exc)
    assert "(7 record(s): line 2, line 3, line 4, line 5, line 6 and 2 more)" in msg


def test_item_must_be_in_the_suite(tmp_path: Path) -> None:
    manifest = tmp_path / "suite.jsonl"
    # The videos need not exist: an item whose files are missing is still an item of the suite.
    manifest.write_text('{"item_id": "a", "video": "a.mp4"}\n{"item_id": "b", "video": "b.mp4"}\n')
    src = _write(tmp_path, HEADER + "a,ts_data_engine,0.5\nzz,ts_data_engine,0.5\n")
    with ResultStore(tmp_path / "db.sqlite") as store:
        with pytest.raises(ResultImportError) as exc:
            import_results(store, src, suite=manifest)
        (msg,) = _problems(exc)
        assert msg.startswith(f"{src}:3: item 'zz' field item_id: item 'zz' is not in the suite")
        assert import_results(store, _write(tmp_path, HEADER + "b,ts_data_engine,0.5\n", "ok.csv"),
                              suite=manifest).imported == 1


def test_item_ids_no_manifest_could_hold_are_refused(store_url: str, tmp_path: Path) -> None:
    # Before: without a suite, an id with NUL was imported on SQLite and failed the whole import on PostgreSQL
    # without naming the line; one too long for PostgreSQL's index failed there the same way.
    lines = [{"item_id": "ep00-fa\u0000ithful"}, {"item_id": "gen\u202eA"}, {"item_id": "ep\udcff"},
             {"item_id": "x" * 1001}, {"item_id": "fine", "note": "a\u0000b"}]
    src = _write(tmp_path, "".join(json.dumps({**line, "metric": "ts_data_engine", "value": 1.0}) + "\n"
                                   for line in lines), "v.jsonl")
    with ResultStore(store_url) as store:
        report = import_results(store, src, skip_invalid=True)
        assert [(p.file, p.line, p.field) for p in report.skipped] == [(str(src), n, "item_id")
                                                                       for n in (1, 2, 3, 4)]
        msgs = [str(p) for p in report.skipped]
        assert "item_id holds a control character ('\\x00' at position 7)" in msgs[0]
        assert "item_id holds a bidirectional control character ('\\u202e' at position 3)" in msgs[1]
        assert "item_id holds '\\udcff' at position 2, which is no character" in msgs[2]
        assert "item_id is 1,001 bytes long in UTF-8; at most 1,000 are allowed" in msgs[3]
        (row,) = store.rows()
        assert row.item_id == "fine" and row.details is not None and row.details["note"] == "a\\x00b"


@pytest.mark.parametrize(
    ("text", "kwargs", "expected"),
    [
        ("item_id,value\na,0.5\n", {}, "field metric: no metric column"),
        ("item,metric,value\na,ts_data_engine,0.5\n", {}, "no column(s) item_id"),
        (GOOD, {"metric": "ts_actionplanner"}, "field metric: unknown metric 'ts_actionplanner'"),
        ("item_id,metric,value,import\na,ts_data_engine,0.5,x\n", {}, "field import: the column name"),
    ],
)
def test_file_level_problems(tmp_path: Path, text: str, kwargs: dict[str, str], expected: str) -> None:
    src = _write(tmp_path, text)
    with ResultStore(tmp_path / "db.sqlite") as store, pytest.raises(ResultImportError) as exc:
        import_results(store, src, **kwargs)  # type: ignore[arg-type]
    (msg,) = _problems(exc)
    assert msg.startswith(f"{src}:") and expected in msg


def test_unreadable_files(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "db.sqlite") as store:
        for path, expected in [(tmp_path / "missing.csv", "no such file"),
                               (_write(tmp_path, "x", "v.txt"), "cannot tell the format"),
                               (_write(tmp_path, "", "empty.csv"), "empty file"),
                               (_write(tmp_path, "{bad\n", "b.jsonl"), ":1: not valid JSON")]:
            with pytest.raises(ResultImportError) as exc:
                import_results(store, path)
            assert expected in str(exc.value), str(exc.value)


# -- put_rows ---------------------------------------------------------------------------------------


def test_put_rows_conflict_writes_nothing(store_url: str) -> None:
    with ResultStore(store_url) as store:
        store.add([ResultRow("a", "m", "h", "1", "ok", 1.0)])
        rows = [ResultRow("b", "m", "h", "1", "ok", 2.0), ResultRow("a", "m", "h", "1", "ok", 3.0)]
        with pytest.raises(RowConflictError) as exc:
            put_rows(store, rows)
        assert [(new.value, old.value) for new, old in exc.value.conflicts] == [(3.0, 1.0)]
        assert store.count() == 1  # "b" was not inserted either
        nan_row = ResultRow("c", "m", "h", "1", "ok", math.nan)
        put_rows(store, [nan_row])
        assert put_rows(store, [nan_row]).unchanged == [nan_row]  # NaN equals NaN here


def test_an_export_s_rows_of_another_metric_version_are_refused_with_their_count(tmp_path: Path) -> None:
    # An upgrade audit: `results import --allow-computed` of an export made before a version bump stored
    # the values iq1_ssim version 3 computed as the installed version's, without a word.
    from robojudge.metrics import get_metric

    installed = get_metric("iq1_ssim").version
    old = str(int(installed) - 1)
    rows = [ResultRow(f"i{n}", "iq1_ssim", "c1", old, "ok", 0.5) for n in range(7)]
    rows.append(ResultRow("now", "iq1_ssim", "c1", installed, "ok", 0.25))
    with ResultStore(tmp_path / "a.sqlite") as store:
        store.add(rows)
        export_results(store, tmp_path / "old_export.csv")
    src = tmp_path / "old_export.csv"
    with ResultStore(tmp_path / "b.sqlite") as store:
        with pytest.raises(ResultImportError) as exc:
            import_results(store, src, allow_computed=True)
        (msg,) = _problems(exc)
        assert f"7 record(s) of the export were computed by its version {old}" in msg
        assert f"this robojudge's iq1_ssim is version {installed}" in msg and "field version" in msg
        assert store.count() == 0
        report = import_results(store, src, allow_computed=True, skip_invalid=True)
        assert report.imported == 1 and len(report.skipped) == 1
        assert _values(store) == {("now", "iq1_ssim"): 0.25}
