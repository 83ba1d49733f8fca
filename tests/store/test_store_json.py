"""``dumps_json``: the one-pass C encoder path writes exactly what the strict walk writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robojudge.store._store import _json_ready, dumps_json


def _slow(value: object) -> str:
    return json.dumps(_json_ready(value), allow_nan=False, ensure_ascii=False, separators=(",", ":"))


VALUES = [
    {"a": 1, "b": [1.5, "x", None, True], "c": {"d": "é"}},
    {"score": np.float64(3.25), "n": np.int64(7), "ok": np.bool_(True), "arr": np.arange(3)},
    {"probs": np.array([0.25, 0.75], dtype=np.float32), "f32": np.float32(0.5)},
    {"turns": [{"raw": ['{"x": 1}'], "latency_s": 0.2, "parts": None}], "t": (1, 2)},
    {7: "int key", 2.5: "float key", True: "bool key", None: "none key"},
    {"nan": math.nan, "inf": [math.inf, -math.inf], "np_nan": np.float64("nan")},
    {"set": {3}, "frozen": frozenset({"a"})},
    {"obj": object.__new__(type("Custom", (), {"__str__": lambda self: "custom!"}))},
    [],
    "plain",
    None,
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_fast_path_equals_the_strict_walk(value: object) -> None:
    assert dumps_json(value) == _slow(value)


def test_non_finite_numbers_become_null_and_unknown_objects_strings() -> None:
    assert json.loads(dumps_json({"a": math.nan, "b": [np.float32("inf")], "c": 2})) == {
        "a": None,
        "b": [None],
        "c": 2,
    }
    assert dumps_json({"k": np.int64(3), True: 1}) == '{"k":3,"true":1}'
    assert dumps_json(math.nan) == "null"
    # numpy arrays of any size (an earlier version called .item() on them and failed)
    assert dumps_json({"a": np.zeros((2, 2), dtype=np.int32)}) == '{"a":[[0,0],[0,0]]}'


def test_nul_is_written_out_as_text_and_backslashes_are_kept() -> None:
    # Before: NUL went into the JSON as \u0000, which PostgreSQL's JSON operators refuse to read.
    value = {"a": "x\x00y", "b": "\\u0000", "c": "\\\x00", "d": "\x00\x00", "k\x00": ["\\\\u0000"]}
    text = dumps_json(value)
    assert "\\u0000" not in text.replace("\\\\", "")
    assert json.loads(text) == {"a": "x\\x00y", "b": "\\u0000", "c": "\\\\x00", "d": "\\x00\\x00",
                                "k\\x00": ["\\\\u0000"]}
    assert dumps_json({"n": math.nan, "z": "\x00"}) == '{"n":null,"z":"\\\\x00"}'  # the strict walk too


def test_lone_surrogates_are_written_out_as_text() -> None:
    # Before: the text held the surrogate itself, which no UTF-8 encoder takes.
    text = dumps_json({"r\udcff": "odd \udce9 byte", "ok": "é €"})
    text.encode("utf-8")
    assert json.loads(text) == {"r\\udcff": "odd \\udce9 byte", "ok": "é €"}
