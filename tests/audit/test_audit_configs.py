"""One configuration per metric in the acceleration audit: rows of the same metric under another config
hash or version are never averaged into Q (they used to count as another metric)."""

from __future__ import annotations

import json

import pytest
from _audit_store import stored_suite
from typer.testing import CliRunner

from robojudge.audit import audit_acceleration
from robojudge.cli import app
from robojudge.run import MetricRequest
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

METRIC = "pixel_frame_consistency"  # lower is better: retention = dense mean / accelerated mean
DEFAULT = MetricRequest.build(METRIC)
OTHER = MetricRequest.build(METRIC, {"fps": 2.0})
# dense 1.0 everywhere; the accelerated generator 2.0 under the default config, 4.0 under fps=2 and
# 5.0 under an older version of the default config.
VALUES = {(DEFAULT.config_hash, DEFAULT.spec.version): 2.0, (OTHER.config_hash, OTHER.spec.version): 4.0,
          (DEFAULT.config_hash, "0"): 5.0}


def _items() -> list[Item]:
    return [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                 meta={"generation_seconds": 10.0 if g == "dense" else 5.0}) for g in ("dense", "fast")
            for k in range(2)]


def _rows(items: list[Item], keys: list[tuple[str, str]]) -> list[ResultRow]:
    return [ResultRow(item_id=it.item_id, metric=METRIC, config_hash=h, version=v, status="ok",
                      value=1.0 if it.generator == "dense" else VALUES[h, v])
            for it in items for h, v in keys]


def _stored(tmp_path, keys: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    """The suite's manifest (empty videos beside it) and a store with its rows under ``keys``."""
    items = _items()
    return stored_suite(tmp_path, items, _rows(items, keys))


@pytest.fixture
def suite(tmp_path):
    return _stored(tmp_path, list(VALUES))


def _q(run) -> float:
    return run.audit.methods[1].q.value


def test_stored_metrics_are_audited_under_their_default_configuration(suite) -> None:
    manifest, db = suite
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    fast = run.audit.methods[1]
    assert [r.metric for r in fast.retentions] == [METRIC]  # one metric, not one per configuration
    assert _q(run) == pytest.approx(0.5)
    (note,) = run.config_notes
    assert note.startswith(f"{METRIC}: audited the default configuration (config {DEFAULT.config_hash[:8]}, "
                           f"version {DEFAULT.spec.version}); left out its rows under ")
    assert f"config {OTHER.config_hash[:8]}, version {OTHER.spec.version}" in note
    assert f"config {DEFAULT.config_hash[:8]}, version 0" in note
    # --set picks the stored configuration to audit
    other = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0,
                               configs={METRIC: {"fps": 2.0}})
    assert _q(other) == pytest.approx(0.25)
    assert other.config_notes[0].startswith(f"{METRIC}: audited the --set configuration")


def test_metrics_asked_for_are_audited_under_the_configuration_scored(suite) -> None:
    manifest, db = suite  # every row is stored: scoring reuses them (no fingerprint: kept)
    run = audit_acceleration(manifest, "dense", ["fast"], metrics=[METRIC], db=db, bootstrap=0)
    assert run.scored is not None and run.scored.ok == 0
    assert [r.metric for r in run.audit.methods[1].retentions] == [METRIC] and _q(run) == pytest.approx(0.5)
    other = audit_acceleration(manifest, "dense", ["fast"], metrics=[METRIC], configs={METRIC: {"fps": 2.0}},
                               db=db, bootstrap=0)
    assert _q(other) == pytest.approx(0.25)
    assert "left out its rows under" in other.config_notes[0]


def test_a_metric_without_its_chosen_configuration_is_left_out_and_said_so(tmp_path) -> None:
    # two configurations, neither the default one
    manifest, db = _stored(tmp_path, [(OTHER.config_hash, OTHER.spec.version), (DEFAULT.config_hash, "0")])
    with pytest.raises(ValueError, match="no stored metric with a known direction") as err:
        audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    msg = str(err.value)
    assert f"; {METRIC}: left out: stored under config " in msg
    assert f"config {DEFAULT.config_hash[:8]}, version 0" in msg and f"config {OTHER.config_hash[:8]}" in msg
    assert (f"not the default configuration (config {DEFAULT.config_hash[:8]}, version "
            f"{DEFAULT.spec.version}); name the stored one with --set {METRIC}.KEY=VALUE") in msg
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0, configs={METRIC: {"fps": 2.0}})
    assert _q(run) == pytest.approx(0.25)
    # the only configuration stored is audited, and the note says it is not the default one
    with ResultStore(f"sqlite:///{tmp_path / 'one.sqlite'}") as store:
        store.add(_rows(_items(), [(OTHER.config_hash, OTHER.spec.version)]))
    one = audit_acceleration(manifest, "dense", ["fast"], db=f"sqlite:///{tmp_path / 'one.sqlite'}",
                             bootstrap=0)
    assert _q(one) == pytest.approx(0.25)
    assert one.config_notes == [f"{METRIC}: audited its only stored configuration (config "
                                f"{OTHER.config_hash[:8]}, version {OTHER.spec.version}), which is not its "
                                f"default one (config {DEFAULT.config_hash[:8]}, version "
                                f"{DEFAULT.spec.version})"]


def test_cli_prints_which_configuration_it_audited(suite, tmp_path) -> None:
    manifest, db = suite
    args = ["audit", "acceleration", str(manifest), "--dense", "dense", "--accelerated", "fast", "--db", db,
            "--bootstrap", "0", "--out", str(tmp_path / "out")]
    res = CliRunner().invoke(app, [*args, "--set", f"{METRIC}.fps=2"])
    assert res.exit_code == 0, res.output
    assert "fast: speedup 2.00 (seconds), Q 0.250" in res.output
    assert f"{METRIC}: audited the --set configuration (config {OTHER.config_hash[:8]}" in res.output
    data = json.loads((tmp_path / "out" / "acceleration.json").read_text())
    assert data["config_notes"][0].startswith(f"{METRIC}: audited the --set configuration")
    # Two clips: a bootstrap can only recombine them, so no interval is printed, and the reason is.
    boot = CliRunner().invoke(app, [*args[:-4], "--bootstrap", "50", "--set", f"{METRIC}.fps=2"])
    assert boot.exit_code == 0, boot.output
    assert ("fast: speedup 2.00 (seconds), Q 0.250 (no interval: scored items in 2 cluster(s); an interval "
            "needs at least 3) over 2 clips") in " ".join(boot.output.split())
    bad = CliRunner().invoke(app, [*args, "--set", "pixel_frame_consistenc.fps=2"])
    assert bad.exit_code == 2 and "pixel_frame_consistenc" in bad.output


def test_the_page_tables_and_json_name_the_audited_configuration_when_only_one_is_stored(tmp_path) -> None:
    # With one configuration stored there was no choice to note: two audits of fps=2 and of the default
    # rows gave pages and tables whose words were the same and whose retentions differed.
    items = _items()
    rows = [ResultRow(item_id=it.item_id, metric=METRIC, config_hash=OTHER.config_hash,
                      version=OTHER.spec.version, status="ok", value=1.0 if it.generator == "dense" else 4.0,
                      config=OTHER.config.model_dump(mode="json")) for it in items]
    manifest, db = stored_suite(tmp_path, items, rows)
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0, out_dir=tmp_path / "out")
    (note,) = run.config_notes  # (only this much was said before, and only on stdout and in the JSON)
    assert note.startswith(f"{METRIC}: audited its only stored configuration (config {OTHER.config_hash[:8]}")
    said = (f"Audited configurations: {METRIC} [v{OTHER.spec.version}, config {OTHER.config_hash[:8]}, "
            "fps=2.0].")
    page = " ".join((tmp_path / "out" / "index.html").read_text().split())
    assert said in page
    assert said in " ".join((tmp_path / "out" / "tables" / "retention_dense.md").read_text().split())
    data = json.loads((tmp_path / "out" / "acceleration.json").read_text())
    assert data["audited"] == [{"metric": METRIC, "version": OTHER.spec.version,
                                "config_hash": OTHER.config_hash, "non_default": "fps=2.0"}]
    # The default configuration says so; a row stored without its config cannot say what differs.
    rows = [ResultRow(item_id=r.item_id, metric=METRIC, config_hash=DEFAULT.config_hash,
                      version=DEFAULT.spec.version, status="ok", value=r.value,
                      config=DEFAULT.config.model_dump(mode="json")) for r in rows]
    (tmp_path / "d").mkdir()
    manifest, db = stored_suite(tmp_path / "d", items, rows)
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert run.audited[0]["non_default"] == "" and run.config_notes == []
    (tmp_path / "e").mkdir()
    manifest, db = _stored(tmp_path / "e", [(DEFAULT.config_hash, DEFAULT.spec.version)])  # no config
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert run.audited[0]["non_default"] is None
