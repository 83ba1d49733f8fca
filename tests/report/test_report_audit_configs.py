"""The report's acceleration section reads one configuration per metric, as `robojudge audit acceleration`
does (:func:`robojudge.meta.current_configs`): rows of a metric under another config hash were labelled
apart and averaged into Q as if they were another metric.

dense and fast, 2 clips each. pixel_frame_consistency (lower is better: retention = dense mean / fast
mean) is stored under its default configuration (dense 1, fast 2: retention 0.5) and under fps=2 (dense
1, fast 4: 0.25); iq1_psnr (higher is better) under one configuration (dense 20, fast 15: 0.75).
Before, Q = (0.5 + 0.25 + 0.75) / 3 = 0.5. Now the report, which does not load the metric registry,
cannot tell which of the two is the default and leaves pixel_frame_consistency out: Q = 0.75; given the
registry's choice (``config_key``) it audits the default one: Q = (0.5 + 0.75) / 2 = 0.625.
"""

from __future__ import annotations

import pytest

from robojudge.report._audit import acceleration_section
from robojudge.report._sections import ReportInput
from robojudge.run import MetricRequest
from robojudge.store import ResultRow
from robojudge.suite import Item

PFC = "pixel_frame_consistency"
DEFAULT = MetricRequest.build(PFC)
OTHER = MetricRequest.build(PFC, {"fps": 2.0})
DIRECTION = {PFC: False, "iq1_psnr": True}


def _data() -> tuple[list[Item], list[ResultRow]]:
    items, rows = [], []
    for gen in ("dense", "fast"):
        for k in range(2):
            iid = f"c{k}-{gen}"
            meta = {"generation_seconds": 10.0} if gen == "dense" else {"generation_seconds": 5.0,
                                                                         "accelerates": "dense"}
            items.append(Item(item_id=iid, video=f"{iid}.mp4", generator=gen, clip_id=f"c{k}", meta=meta))
            dense = gen == "dense"
            for metric, chash, version, value in (
                    (PFC, DEFAULT.config_hash, DEFAULT.spec.version, 1.0 if dense else 2.0),
                    (PFC, OTHER.config_hash, OTHER.spec.version, 1.0 if dense else 4.0),
                    ("iq1_psnr", "h", "1", 20.0 if dense else 15.0)):
                rows.append(ResultRow(iid, metric, chash, version, "ok", value))
    return items, rows


def _fast(sec):
    frontier, retention = sec.tables
    (fast,) = [r for r in frontier.rows if r[0].text == "fast"]
    return fast[4].value, [(r[1].text, r[6].value) for r in retention.rows]


def test_a_metric_under_two_configurations_is_left_out_without_the_registry() -> None:
    items, rows = _data()
    sec = acceleration_section(ReportInput(rows, items, DIRECTION.__getitem__, bootstrap=0))
    q, retentions = _fast(sec)
    assert q == pytest.approx(0.75)
    assert retentions == [("iq1_psnr", pytest.approx(0.75))]
    keys = sorted([(DEFAULT.config_hash[:8], DEFAULT.spec.version),
                   (OTHER.config_hash[:8], OTHER.spec.version)])
    assert (f"Each metric enters Q under one configuration (`robojudge audit acceleration --set` audits "
            f"another): {PFC}: left out: stored under 2 configurations or versions (config {keys[0][0]}, "
            f"version {keys[0][1]}; config {keys[1][0]}, version {keys[1][1]}) and which of them is its "
            "default is not known here.") in sec.intro


def test_the_default_configuration_is_audited_when_the_caller_knows_it() -> None:
    from robojudge.audit._acceleration import config_key  # the registry's choice, as the audit makes it

    items, rows = _data()
    sec = acceleration_section(ReportInput(rows, items, DIRECTION.__getitem__, bootstrap=0),
                               config_key=config_key)
    q, retentions = _fast(sec)
    assert q == pytest.approx(0.625)
    assert sorted(retentions) == [("iq1_psnr", pytest.approx(0.75)), (PFC, pytest.approx(0.5))]
    assert (f"{PFC}: audited the default configuration (config {DEFAULT.config_hash[:8]}, version "
            f"{DEFAULT.spec.version}); left out its rows under config {OTHER.config_hash[:8]}, version "
            f"{OTHER.spec.version}.") in sec.intro


def test_a_section_left_with_no_metric_says_which_configurations_it_left_out() -> None:
    items, rows = _data()
    rows = [r for r in rows if r.metric == PFC]
    sec = acceleration_section(ReportInput(rows, items, DIRECTION.__getitem__, bootstrap=0))
    assert sec.skipped is not None
    assert sec.skipped.startswith("no metric with a known direction is left to audit for these generators. "
                                  "Each metric enters Q under one configuration")
    assert f"{PFC}: left out: stored under 2 configurations" in sec.skipped


def test_the_report_input_carries_the_registrys_choice() -> None:
    # what `robojudge report` and the demo pass (write_html_report(..., config_key=registry_config_key))
    from robojudge.metric_info import registry_config_key

    assert registry_config_key(PFC, None) == (DEFAULT.config_hash, DEFAULT.spec.version)
    assert registry_config_key(PFC, {"fps": 2.0}) == (OTHER.config_hash, OTHER.spec.version)
    items, rows = _data()
    inp = ReportInput(rows, items, DIRECTION.__getitem__, bootstrap=0, config_key=registry_config_key)
    q, _ = _fast(acceleration_section(inp))
    assert q == pytest.approx(0.625)
