"""The report reads the stillness-rewarding metrics beside the clips' motion and flags low-motion clips.

A frozen copy of an episode, or one where only a speck moves, scores as well as a clip can on pixel
and flow consistency; the motion section puts the dynamic degree and Flow Score beside those values
and lists such clips as low motion.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from robojudge.report import write_html_report
from robojudge.report._motion import FLOW_LOW, ClipMotion, clip_motion, motion_section
from robojudge.report._sections import ReportInput
from robojudge.report._series import metric_series
from robojudge.store import ResultRow
from robojudge.suite import Item


def _row(item: str, metric: str, value: float | None) -> ResultRow:
    return ResultRow(item, metric, "h", "1", "ok", value)


def test_low_motion_rule() -> None:
    assert ClipMotion(dynamic=0.0).low and not ClipMotion(dynamic=1.0).low
    assert ClipMotion(flow=FLOW_LOW / 2).low and not ClipMotion(flow=FLOW_LOW * 2).low
    assert ClipMotion(dynamic=0.0, flow=FLOW_LOW / 2).low  # frozen, or only a speck moves
    assert not ClipMotion().low


def test_a_moving_real_episode_that_vbench_calls_not_dynamic_is_not_flagged() -> None:
    # Numbers of real clips (docs/sensitivity.md, "The low-motion rule on real videos"). A recorded
    # DROID episode, arm reaching and closing a laptop: VBench's decision says not dynamic (a quarter
    # of the steps is needed, 14% moved), its Flow Score is 7 times the bound.
    assert not ClipMotion(dynamic=0.0, flow=0.3608, moving=0.142).low
    # A still photograph with two drawn dots on a flat background (RoboMaster's coffee-cup input):
    # no step moved, but DIS spreads the dots' motion over the flat wall: Flow Score 0.19.
    assert ClipMotion(dynamic=0.0, flow=0.1943, moving=0.0).low
    # Without the moving share, the values: both must say still where both are stored.
    assert not ClipMotion(dynamic=0.0, flow=0.3667).low
    assert not ClipMotion(dynamic=1.0, flow=FLOW_LOW / 2).low


def test_clip_motion_reads_both_measures() -> None:
    rows = [_row("a", "mq_dynamic_degree", 0.0), _row("a", "mq_flow_score", 0.3),
            _row("b", "mq_flow_score", 1.0)]
    motion = clip_motion(metric_series(rows))
    assert motion == {"a": ClipMotion(0.0, 0.3), "b": ClipMotion(None, 1.0)}
    detailed = [ResultRow("a", "mq_dynamic_degree", "h", "1", "ok", 0.0, details={"moving_fraction": 0.2}),
                ResultRow("c", "mq_dynamic_degree", "h", "1", "ok", 0.0, details={"moving_fraction": 0.0})]
    motion = clip_motion(metric_series(detailed), detailed)
    assert motion == {"a": ClipMotion(0.0, None, 0.2), "c": ClipMotion(0.0, None, 0.0)}
    assert not motion["a"].low and motion["c"].low


def test_section_says_what_it_needs() -> None:
    items = [Item(item_id="a", video="v.mp4", generator="g")]
    no_consistency = ReportInput([_row("a", "mq_dynamic_degree", 0.0)], items, lambda m: True, bootstrap=0)
    assert "rewards stillness" in (motion_section(no_consistency).skipped or "")
    no_motion = ReportInput([_row("a", "pixel_frame_consistency", 1.0)], items, lambda m: True, bootstrap=0)
    assert "no motion measure is stored" in (motion_section(no_motion).skipped or "")
    # Stored but unscored on every clip (noise: nothing the flow can follow): not "no measure stored".
    why = {"unscored_reason": "tracking lost: 11 of 11 consecutive frame pairs show nothing of each other"}
    lost = [_row("a", "pixel_frame_consistency", 1.0),
            ResultRow("a", "mq_dynamic_degree", "h", "1", "ok", None, details=why),
            ResultRow("a", "mq_flow_score", "h", "1", "ok", float("nan"), details=why)]
    skipped = motion_section(ReportInput(lost, items, lambda m: True, bootstrap=0)).skipped
    assert skipped == ("mq_dynamic_degree and mq_flow_score left every clip unscored, so no clip's motion is "
                       f"known; the most common reason: {why['unscored_reason']}")


def test_the_numbers_of_the_consistency_table() -> None:
    items = [Item(item_id=i, video="v.mp4", generator="g") for i in "abc"]
    rows = [_row("a", "pixel_frame_consistency", 0.5), _row("b", "pixel_frame_consistency", 4.0),
            _row("c", "pixel_frame_consistency", 6.0),
            _row("a", "mq_dynamic_degree", 0.0), _row("b", "mq_dynamic_degree", 1.0),
            _row("c", "mq_dynamic_degree", 1.0), _row("a", "mq_flow_score", 0.01),
            _row("b", "mq_flow_score", 0.4)]
    sec = motion_section(ReportInput(rows, items, lambda m: True, bootstrap=0))
    table = sec.tables[0]
    assert table.columns[:6] == ["metric", "group", "n", "mean", "low-motion clips", "mean without them"]
    (row,) = table.rows
    assert [c.text for c in row[:3]] == ["pixel_frame_consistency", "g", "3"]
    assert row[3].value == pytest.approx(3.5) and row[4].text == "1" and row[5].value == pytest.approx(5.0)
    assert row[6].value == pytest.approx(2 / 3) and row[7].value == pytest.approx(0.205)
    low = sec.tables[1]
    assert [r[0].text for r in low.rows] == ["a"]
    assert low.rows[0][5].text == "pixel_frame_consistency=0.5" and low.rows[0][4].text == ""  # no share


def _clip(kind: str) -> np.ndarray:
    base = np.random.default_rng(3).integers(0, 256, (96, 128, 3), dtype=np.uint8)
    base = np.repeat(np.repeat(base[::8, ::8], 8, axis=0), 8, axis=1)  # 8 px texture: flow can follow it
    if kind == "moving":
        return np.stack([np.roll(base, 4 * t, axis=1) for t in range(24)])
    if kind == "frozen":  # a frozen copy: the first frame of the moving clip, held
        return np.repeat(base[None], 24, axis=0)
    frames = np.repeat(base[None], 24, axis=0).copy()  # a speck moves: enough to be measured, barely
    for t in range(24):
        frames[t, 40:56, 8 + t:24 + t] = 255
    return frames


@pytest.mark.slow
def test_a_frozen_clip_is_flagged_as_low_motion_in_the_report(tmp_path: Path) -> None:
    from robojudge.run import score_suite
    from robojudge.video import write_video

    kinds = ["moving", "frozen", "speck"]
    lines = []
    for kind in kinds:
        write_video(tmp_path / f"{kind}.mp4", _clip(kind), fps=16)
        lines.append(json.dumps({"item_id": kind, "video": f"{kind}.mp4", "generator": "g"}))
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    metrics = ["pixel_frame_consistency", "flow_warp_error", "mq_dynamic_degree", "mq_flow_score"]
    score_suite(manifest, metrics, db=db)
    report = write_html_report(db, tmp_path / "report", manifest=manifest, higher_is_better=lambda m: True,
                               bootstrap=0)
    section = next(s for s in report.sections if s.key == "motion")
    assert section.skipped is None, section.skipped
    with (tmp_path / "report" / "tables" / "low_motion.csv").open() as f:
        flagged = {r["item"]: r for r in csv.DictReader(f)}
    assert "frozen" in flagged and "moving" not in flagged
    assert float(flagged["frozen"]["dynamic degree"]) == 0.0
    assert "pixel_frame_consistency=unscored" in flagged["frozen"]["consistency values"]
    # The speck moves enough to be scored, and it is flagged: its near-perfect consistency is no merit.
    assert "speck" in flagged and "pixel_frame_consistency=" in flagged["speck"]["consistency values"]
    assert "unscored" not in flagged["speck"]["consistency values"].split(";")[0]
    assert "Low-motion clips" in report.index.read_text()


def _real_size_clip(moving: bool) -> np.ndarray:
    """1280x720 at 24 fps: a textured arm-sized block reaches for 6 frames at 8 px per frame, then rests."""
    rng = np.random.default_rng(5)
    scene = np.repeat(np.repeat(rng.integers(0, 256, (45, 80, 3), dtype=np.uint8), 16, 0), 16, 1)
    arm = np.repeat(np.repeat(rng.integers(0, 256, (25, 10, 3), dtype=np.uint8), 16, 0), 16, 1)
    frames = []
    for t in range(32):
        x = 400 + 8 * min(t, 6) if moving else 400
        f = scene.copy()
        f[200:600, x:x + 160] = arm
        frames.append(f)
    return np.stack(frames)


@pytest.mark.slow
def test_a_real_size_moving_clip_is_not_flagged_and_its_frozen_copy_is(tmp_path: Path) -> None:
    from robojudge.run import score_suite
    from robojudge.video import write_video

    lines = []
    for kind in ("moving", "frozen"):
        write_video(tmp_path / f"{kind}.mp4", _real_size_clip(kind == "moving"), fps=24)
        lines.append(json.dumps({"item_id": kind, "video": f"{kind}.mp4", "generator": "g"}))
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    score_suite(manifest, ["pixel_frame_consistency", "mq_dynamic_degree", "mq_flow_score"], db=db)
    write_html_report(db, tmp_path / "report", manifest=manifest, higher_is_better=lambda m: True,
                      bootstrap=0)
    with (tmp_path / "report" / "tables" / "consistency_motion.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    with (tmp_path / "report" / "tables" / "low_motion.csv").open() as f:
        flagged = {r["item"]: r for r in csv.DictReader(f)}
    # The reach is too short for VBench's decision (2 of 10 steps move 24 px against 16.9 px at 720p;
    # 3 are needed), as for most recorded episodes, and it is not a still clip.
    assert float(row["dynamic degree"]) == 0.0
    assert "moving" not in flagged
    assert "frozen" in flagged and float(flagged["frozen"]["flow score"]) < FLOW_LOW
