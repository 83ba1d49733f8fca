"""Stored rows and items into the acceleration audit's matched scores and costs."""

from __future__ import annotations

import math

import pytest

from robojudge.meta._audit_input import audit_scores, declared_accelerations, manifest_costs
from robojudge.store import ResultRow
from robojudge.suite import Item


def _item(iid: str, gen: str, clip: str | None, **meta: object) -> Item:
    return Item(item_id=iid, video=f"{iid}.mp4", generator=gen, clip_id=clip, source="s", meta=dict(meta))


def _row(iid: str, metric: str, value: float | None, *, config: str = "c1", status: str = "ok") -> ResultRow:
    return ResultRow(item_id=iid, metric=metric, config_hash=config, version="1", status=status,  # type: ignore[arg-type]
                     value=value, error=None if status == "ok" else "boom")


ITEMS = [
    _item("d1", "dense", "k1", generation_seconds=10.0, denoising_steps=50),
    _item("d2", "dense", "k2", generation_seconds=14.0, denoising_steps=50),
    _item("f1", "fast", "k1", generation_seconds=3.0, accelerates="dense", acceleration="cache"),
    _item("f2", "fast", "k2", generation_seconds=4.0, accelerates="dense"),
    _item("f3", "fast", None),
    _item("o1", "other", "k1"),
]


def test_rows_are_matched_by_clip() -> None:
    rows = [_row("d1", "m", 1.0), _row("d2", "m", 2.0), _row("f1", "m", 0.5),
            _row("f2", "m", None, status="error"), _row("o1", "m", 9.0), _row("f1", "n", math.nan)]
    got = audit_scores(rows, ITEMS, ["dense", "fast"])
    assert got.scores == {"dense": {"m": {"k1": 1.0, "k2": 2.0}}, "fast": {"m": {"k1": 0.5}, "n": {}}}
    assert got.unmatched == ["f3"]
    assert got.unscored["fast"] == {"m": 1, "n": 2} and got.unscored["dense"] == {"m": 0, "n": 2}
    assert got.strata == {"k1": "s", "k2": "s"}
    assert audit_scores(rows, ITEMS, ["dense", "fast"], metrics=["n"]).metric_ids == {"n": "n"}


def test_two_configs_are_two_metrics() -> None:
    rows = [_row("d1", "m", 1.0), _row("d1", "m", 3.0, config="c2abcdefgh"), _row("f1", "m", 2.0)]
    got = audit_scores(rows, ITEMS, ["dense", "fast"])
    assert got.metric_ids == {"m [c1/1]": "m", "m [c2abcdef/1]": "m"}
    assert got.scores["dense"]["m [c2abcdef/1]"] == {"k1": 3.0}


def test_duplicate_clip_is_an_error_naming_both_items() -> None:
    items = [*ITEMS, _item("f9", "fast", "k2")]
    with pytest.raises(ValueError, match="'f2' and 'f9'"):
        audit_scores([], items, ["dense", "fast"])
    with pytest.raises(ValueError, match="'nobody'"):
        audit_scores([], ITEMS, ["dense", "nobody"])


def test_manifest_costs_and_declared_accelerations() -> None:
    costs = manifest_costs(ITEMS, ["dense", "fast", "other"])
    assert (costs["dense"].seconds, costs["dense"].steps) == (12.0, 50.0)
    assert (costs["fast"].seconds, costs["fast"].steps) == (3.5, None)
    assert costs["other"].seconds is None
    assert declared_accelerations(ITEMS) == {"dense": ["fast"]}
    with pytest.raises(ValueError, match="'bad': meta.generation_seconds"):
        manifest_costs([_item("bad", "dense", "k", generation_seconds="fast")], ["dense"])
