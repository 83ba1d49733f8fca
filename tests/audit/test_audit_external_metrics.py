"""An external metric named with ``audit acceleration --metrics``: its imported values are read, never
scored (scoring wrote an error row per item, and that configuration then hid the imported one), and a
configuration holding only failures never displaces one with values."""

from __future__ import annotations

import pytest
from _audit_store import stored_suite

from robojudge.audit import audit_acceleration
from robojudge.metrics import get_metric
from robojudge.run import MetricRequest, import_config, import_config_hash
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

METRIC = "rc_spatial_consistency"  # provider external, higher is better
VERSION = get_metric(METRIC).version


def _items() -> list[Item]:
    return [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                 meta={"generation_seconds": 10.0 if g == "dense" else 5.0}) for g in ("dense", "fast")
            for k in range(3)]


def _imported(items: list[Item]) -> list[ResultRow]:
    # dense 0.5 on every clip, fast 0.4: retention 0.4 / 0.5 = 0.8
    return [ResultRow(item_id=it.item_id, metric=METRIC, config_hash=import_config_hash(), version=VERSION,
                      status="ok", value=0.5 if it.generator == "dense" else 0.4, config=import_config())
            for it in items]


def _retention(run) -> float:  # type: ignore[no-untyped-def]
    (r,) = run.audit.methods[1].retentions
    return float(r.retention.value)


def test_an_external_metric_named_is_read_from_its_imported_rows_and_never_scored(tmp_path) -> None:
    items = _items()
    manifest, db = stored_suite(tmp_path, items, _imported(items))
    run = audit_acceleration(manifest, "dense", ["fast"], metrics=[METRIC], db=db, bootstrap=0)
    assert _retention(run) == pytest.approx(0.8)
    assert run.scored is None  # nothing to compute
    with ResultStore(db, read_only=True) as store:
        assert {(r.status, r.config_hash) for r in store.rows()} == {("ok", import_config_hash())}
    # and without --metrics afterwards: the same imported values
    again = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert _retention(again) == pytest.approx(0.8)


def test_an_external_metric_with_no_imported_value_is_refused_with_the_import_hint(tmp_path) -> None:
    items = _items()
    manifest, db = stored_suite(tmp_path, items, [])
    with pytest.raises(ValueError, match=rf"{METRIC}: provided by an external pipeline.*results import"):
        audit_acceleration(manifest, "dense", ["fast"], metrics=[METRIC], db=db, bootstrap=0)
    with ResultStore(db, read_only=True) as store:
        assert store.rows() == []  # no error row written


def test_a_configuration_of_failures_only_does_not_displace_one_with_values(tmp_path) -> None:
    # What an earlier robojudge left behind: one error row per item under the metric's default
    # configuration (the one the audit picks among several), beside the imported values.
    items = _items()
    default = MetricRequest.build(METRIC)
    failed = [ResultRow(item_id=it.item_id, metric=METRIC, config_hash=default.config_hash, version=VERSION,
                        status="error", value=None, error="not computed here") for it in items]
    manifest, db = stored_suite(tmp_path, items, [*_imported(items), *failed])
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert _retention(run) == pytest.approx(0.8)
    (note,) = run.config_notes
    assert note.startswith(f"{METRIC}: audited its only configuration with values (config "
                           f"{import_config_hash()[:8]}, version {VERSION}); ")
    assert note.endswith(f"left out its rows under config {default.config_hash[:8]}, version {VERSION} "
                         "(failures only)")
