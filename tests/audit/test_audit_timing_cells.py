"""Timing files as spreadsheets write them: a UTF-8 byte order mark before the header is read, a cost of
0 and a row with more cells than the header are errors naming the file, line and field."""

from __future__ import annotations

import json
import re

import pytest

from robojudge.audit import TimingError, read_timing, timing_costs
from robojudge.suite import Item

ITEMS = [Item(item_id=f"{g}{k}", video=f"{g}{k}.mp4", generator=g, clip_id=f"c{k}")
         for g in ("dense", "fast") for k in range(2)]


def test_a_byte_order_mark_before_the_header_is_not_part_of_it(tmp_path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b"\xef\xbb\xbfgenerator,item,seconds\ndense,,40\nfast,,10\n")
    rows = read_timing(p)
    assert [(r.generator, r.seconds, r.line) for r in rows] == [("dense", 40.0, 2), ("fast", 10.0, 3)]
    costs = timing_costs(rows, ITEMS, ["dense", "fast"], source=str(p))
    assert (costs["dense"].seconds, costs["fast"].seconds) == (20.0, 5.0)
    j = tmp_path / "t.json"
    j.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"generator": "fast", "seconds": 3}]).encode())
    assert read_timing(j)[0].seconds == 3.0


@pytest.mark.parametrize(("body", "message"), [
    ("generator,item,seconds\ndense,,43\nfast,,0\n", "line 3: field 'seconds' must be above 0"),
    ("generator,item,seconds,steps\nfast,fast0,2,0\n", "line 2: field 'steps' must be above 0"),
    ("generator,item,seconds\nfast,,0.0\n", "line 2: field 'seconds' must be above 0 (a rollout's cost), "
                                            "got '0.0'"),
])
def test_a_cost_of_zero_is_an_error(tmp_path, body, message) -> None:
    p = tmp_path / "t.csv"
    p.write_text(body)
    with pytest.raises(TimingError, match=re.escape(f"{p}, {message}")):
        read_timing(p)
    j = tmp_path / "t.json"
    j.write_text(json.dumps({"timings": [{"generator": "fast", "seconds": 0}]}))
    with pytest.raises(TimingError, match=re.escape(f"{j}, entry 1: field 'seconds' must be above 0")):
        read_timing(j)


def test_a_row_with_more_cells_than_the_header_is_an_error(tmp_path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("generator,item,seconds\ndense,,43\nfast,,20,extra\n")
    with pytest.raises(TimingError, match=re.escape(
            f"{p}, line 3: 4 cells, the header names 3 (generator, item, seconds); extra: 'extra'")):
        read_timing(p)
    # an unquoted decimal comma shifts the row: refused, not read as 1 second
    p.write_text("generator,item,seconds,steps\nfast,fast0,1,5,50\n")
    with pytest.raises(TimingError, match="line 2: 5 cells, the header names 4"):
        read_timing(p)
    # a shorter row is fine: its missing cells are empty
    p.write_text('generator,item,seconds,steps\nfast,fast0,"1,5"\nfast,fast1,2\n')
    with pytest.raises(TimingError, match=re.escape("line 2: field 'seconds' must be a number, got '1,5'")):
        read_timing(p)
    p.write_text("generator,item,seconds,steps\nfast,fast0,2\n")
    assert read_timing(p)[0].seconds == 2.0


def test_a_timing_file_written_as_audit_standins_writes_it_reads_back(tmp_path) -> None:
    # A bare "\r" ended the row (audit acceleration refused its own file); read_timing lost quoted breaks.
    import pandas as pd

    from robojudge._csv import SafeCsvWriter

    p = tmp_path / "timing.csv"
    with p.open("w", newline="") as fh:  # as make_standins writes it
        rows = [["generator", "item", "seconds"], ["over\rwrite", "i\n1", "33"], ["g", "i2", "4"]]
        SafeCsvWriter(fh, lineterminator="\n").writerows(rows)
    assert [(r.generator, r.item, r.seconds) for r in read_timing(p)] == [
        ("over\rwrite", "i\n1", 33.0), ("g", "i2", 4.0)]
    assert list(pd.read_csv(p, dtype=str, keep_default_na=False)["generator"]) == ["over\rwrite", "g"]
