"""Timing files: per-item and whole-run rows, CSV and JSON, errors that name file, line and field."""

from __future__ import annotations

import json
import re

import pytest

from robojudge.audit import TimingError, read_timing, timing_costs
from robojudge.suite import Item

ITEMS = [Item(item_id=f"{g}{k}", video=f"{g}{k}.mp4", generator=g, clip_id=f"c{k}")
         for g in ("dense", "fast", "slow") for k in range(4)]


def test_per_item_rows_and_whole_run_rows(tmp_path) -> None:
    p = tmp_path / "t.csv"
    # dense: per item 10, 14 (mean 12); fast: one run of 4 rollouts took 12 s -> 3 s; slow: steps only,
    # a run of 2 rollouts (rollouts given) with 80 steps -> 40 per rollout.
    p.write_text("generator,item,seconds,steps,rollouts\n"
                 "dense,dense0,10,50,\ndense,dense1,14,50,\n"
                 "fast,,12,,\n"
                 "slow,*,,80,2\n")
    rows = read_timing(p)
    got = [(r.generator, r.item, r.line) for r in rows][:3]
    assert got == [("dense", "dense0", 2), ("dense", "dense1", 3), ("fast", None, 4)]
    costs = timing_costs(rows, ITEMS, ["dense", "fast", "slow"], source=str(p))
    assert (costs["dense"].seconds, costs["dense"].steps) == (12.0, 50.0)
    assert (costs["fast"].seconds, costs["fast"].steps) == (3.0, None)
    assert (costs["slow"].seconds, costs["slow"].steps) == (None, 40.0)


def test_json_form(tmp_path) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"timings": [{"generator": "fast", "item": "fast1", "seconds": 2.5}]}))
    costs = timing_costs(read_timing(p), ITEMS, ["dense", "fast"])
    assert costs["fast"].seconds == 2.5 and "dense" not in costs


@pytest.mark.parametrize(("body", "message"), [
    ("generator,item,seconds\nfast,fast0,abc\n", "line 2: field 'seconds' must be a number"),
    ("generator,item,seconds\nfast,fast0,-1\n", "line 2: field 'seconds' must be a non-negative"),
    ("generator,item,seconds\n,fast0,1\n", "line 2: field 'generator' is missing"),
    ("generator,item,seconds,steps\nfast,fast0,,\n", "line 2: give 'seconds' or 'steps'"),
    ("generator,item,secs\nfast,fast0,1\n", "line 2: unknown field(s) secs"),
    ("generator,item,seconds,rollouts\nfast,fast0,1,3\n", "line 2: field 'rollouts'"),
    ("item,seconds\nfast0,1\n", "line 1: the header must name 'generator'"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, body, message) -> None:
    p = tmp_path / "t.csv"
    p.write_text(body)
    with pytest.raises(TimingError, match=re.escape(f"{p}, {message}")):
        read_timing(p)


def test_rows_that_do_not_fit_the_suite(tmp_path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("generator,item,seconds\nfast,dense0,1\n")
    with pytest.raises(TimingError, match="line 2: item 'dense0' is not an item of generator 'fast'"):
        timing_costs(read_timing(p), ITEMS, ["fast"], source=str(p))
    p.write_text("generator,item,seconds\nfast,,1\nfast,*,2\n")
    with pytest.raises(TimingError, match="lines 2 and 3: two whole-run rows"):
        timing_costs(read_timing(p), ITEMS, ["fast"], source=str(p))
    with pytest.raises(TimingError, match="cannot read"):
        read_timing(tmp_path / "missing.csv")
    bad = tmp_path / "t.json"
    bad.write_text("[{]")
    with pytest.raises(TimingError, match="line 1: not JSON"):
        read_timing(bad)
