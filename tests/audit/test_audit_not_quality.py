"""Q of the acceleration audit averages what measures the video (CLI consistency audit, F2): the random
baseline ``uniform_random`` and the simulator's own record (``sim_task_success``) used to be averaged in
whenever they were stored or brought in by ``-m all``. They are left out as the calibrated judge leaves
them out (:data:`robojudge.metric_info.NOT_VIDEO_QUALITY`), and said so; named with ``-m``, they are
audited as asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _audit_store import stored_suite
from typer.testing import CliRunner

from robojudge.audit import audit_acceleration
from robojudge.cli import app
from robojudge.metric_info import NOT_VIDEO_QUALITY, direction
from robojudge.report import ReportInput
from robojudge.report._audit import acceleration_section
from robojudge.report._leaderboard import NOT_FEATURES
from robojudge.run import MetricRequest
from robojudge.store import ResultRow
from robojudge.suite import Item

# (dense value, accelerated value) per metric, both clips alike:
#   pixel_frame_consistency (lower is better): retention 1.0 / 2.0 = 0.5
#   uniform_random (a draw per item id; higher "is better"): 5 / 1 = 5.0
#   sim_task_success (the simulator's record): 1 / 1 = 1.0
# Q over all three was (0.5 + 5 + 1) / 3 = 2.17; over the one that reads the video, 0.5.
PFC = "pixel_frame_consistency"
VALUES = {PFC: (1.0, 2.0), "uniform_random": (1.0, 5.0), "sim_task_success": (1.0, 1.0)}


def _items() -> list[Item]:
    return [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                 meta={"generation_seconds": 10.0 if g == "dense" else 5.0} |
                 ({} if g == "dense" else {"accelerates": "dense"}))
            for g in ("dense", "fast") for k in range(2)]


def _rows(items: list[Item]) -> list[ResultRow]:
    out = []
    for metric, (dense, fast) in VALUES.items():
        req = MetricRequest.build(metric)  # under its default configuration, as a score run stores it
        out += [ResultRow(item_id=it.item_id, metric=metric, config_hash=req.config_hash,
                          version=req.spec.version, status="ok",
                          value=dense if it.generator == "dense" else fast) for it in items]
    return out


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, str]:
    items = _items()
    return stored_suite(tmp_path, items, _rows(items))


def _cli(manifest: Path, db: str, *extra: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                    "--accelerated", "fast", "--db", db, "--bootstrap", "0", *extra])


def _metrics(run) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.metric for r in run.audit.methods[1].retentions]


def test_one_list_for_the_calibrated_judge_and_the_audit() -> None:
    assert NOT_FEATURES is NOT_VIDEO_QUALITY
    assert sorted(NOT_VIDEO_QUALITY) == ["cs_collision_count", "sim_task_success", "uniform_random"]


def test_stored_baselines_are_left_out_of_q_and_named(suite, tmp_path: Path) -> None:
    manifest, db = suite
    run = audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert _metrics(run) == ["pixel_frame_consistency"]
    assert run.audit.methods[1].q.value == pytest.approx(0.5)
    assert run.not_quality_left_out == ["sim_task_success", "uniform_random"] and run.not_quality_named == []
    res = _cli(manifest, db, "--out", str(tmp_path / "out"))
    assert res.exit_code == 0, res.output
    assert "fast: speedup 2.00 (seconds), Q 0.500 over 2 clips" in res.output
    assert ("left out (they do not measure the video: a random baseline, the simulator's own record): "
            "sim_task_success, uniform_random; name one with --metrics to audit it") in res.output
    data = json.loads((tmp_path / "out" / "acceleration.json").read_text())
    assert data["not_quality_left_out"] == ["sim_task_success", "uniform_random"]


def test_only_baselines_stored_is_an_error_that_says_why(tmp_path: Path) -> None:
    items = _items()
    manifest, db = stored_suite(tmp_path, items, [r for r in _rows(items) if r.metric != PFC])
    with pytest.raises(ValueError, match="no stored metric with a known direction") as err:
        audit_acceleration(manifest, "dense", ["fast"], db=db, bootstrap=0)
    assert "left out (they do not measure the video" in str(err.value)


def test_all_leaves_them_out_and_a_metric_named_by_its_id_is_audited(suite) -> None:
    manifest, db = suite  # empty videos: every metric that reads one fails; what is stored is audited
    run = audit_acceleration(manifest, "dense", ["fast"], metrics=["all"], db=db, bootstrap=0)
    assert "uniform_random" not in _metrics(run) and "sim_task_success" not in _metrics(run)
    assert "pixel_frame_consistency" in _metrics(run)
    assert run.audit.methods[1].q.value == pytest.approx(0.5)
    assert {"uniform_random", "sim_task_success"} <= set(run.not_quality_left_out)
    named = audit_acceleration(manifest, "dense", ["fast"], metrics=[PFC, "uniform_random"], db=db,
                               bootstrap=0)
    assert _metrics(named) == ["pixel_frame_consistency", "uniform_random"]
    assert named.audit.methods[1].q.value == pytest.approx((0.5 + 5.0) / 2)
    assert named.not_quality_named == ["uniform_random"] and named.not_quality_left_out == []
    res = _cli(manifest, db, "-m", f"{PFC},uniform_random")
    assert res.exit_code == 0, res.output
    assert ("in Q as named with --metrics, although they do not measure the video: uniform_random"
            in res.output)


def test_the_reports_section_leaves_them_out_too() -> None:
    items = _items()
    sec = acceleration_section(ReportInput(_rows(items), items, direction, bootstrap=0))
    frontier, retention = sec.tables
    (fast,) = [r for r in frontier.rows if r[0].text == "fast"]
    assert fast[4].value == pytest.approx(0.5)
    assert {r[1].text for r in retention.rows} == {"pixel_frame_consistency"}
    assert ("Left out of Q as they do not measure the video (a random baseline, the simulator's own record): "
            "sim_task_success, uniform_random.") in " ".join(sec.intro.split())
