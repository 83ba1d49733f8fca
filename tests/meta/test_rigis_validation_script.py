"""scripts/rigis_validation.py: its statistics, table and VLM column on made-up data (no simulator)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from _scripts import load_script
from robojudge.meta import embodiment_agreement

rv = load_script("rigis_validation")


def _rows() -> list[dict]:
    rows = []
    for robot, good in (("fetch", [0.9, 0.8, 0.5, 0.2]), ("adroit", [0.7, 0.7, 0.6, 0.1])):
        for i, (label, g) in enumerate(zip([5, 4, 3, 1], good, strict=True)):
            rows.append({"robot": robot, "item": f"{robot}{i}", "label": label, "rigis": g,
                         "blur": 10.0 - g if robot == "fetch" else math.nan, "flat": 1.0})
    return rows


def test_evaluate_matches_the_meta_function_and_renders() -> None:
    rows = _rows()
    result = rv.evaluate(rows, {"rigis": True, "blur": False, "flat": True})
    want = embodiment_agreement([r["rigis"] for r in rows], [r["label"] for r in rows],
                                [r["robot"] for r in rows])
    assert result["rigis"].rho == pytest.approx(want.rho)
    # fetch is ordered perfectly; adroit ties its two best (an error): 5 of 6 pairs
    assert result["rigis"].groups["fetch"].rank_accuracy == 1.0
    assert result["rigis"].groups["adroit"].rank_accuracy == pytest.approx(5 / 6)
    # a lower-is-better column turned: blur = 10 - rigis on fetch is as good; adroit has no value
    assert result["blur"].groups["fetch"].rho == pytest.approx(1.0)
    assert result["blur"].groups["adroit"].unscored == 4 and result["blur"].rho == pytest.approx(1.0)
    assert result["flat"].groups["fetch"].rank_accuracy == 0.0 and math.isnan(result["flat"].rho)
    table = rv.render(result, ["fetch", "adroit"], {"blur@adroit": "no adroit"}, {"rigis": "multi-view"})
    lines = table.splitlines()
    assert lines[0].startswith("| metric | kind | fetch rho / acc (n) | adroit rho / acc (n)")
    # measured on both robots first; blur's perfect mean covers one robot only and says so
    assert lines[2].startswith("| `rigis` | multi-view | 1.00 / 1.00 (4)")
    assert lines[3].startswith("| `blur` ") and "| 1.00 (1 of 2) | 1.00 (1 of 2) |" in lines[3]
    assert lines[4].startswith("| `flat` ") and "| - / 0.00 (4) |" in lines[4]  # constant: no rho, all errors
    assert "(0, 4 unscored)" in table and "* `blur` on adroit: no adroit" in table


def test_write_table_between_markers(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{rv.BEGIN}\nold\n{rv.END}\nafter\n")
    rv.write_table(doc, "| new |\n")
    assert doc.read_text() == f"intro\n{rv.BEGIN}\n| new |\n{rv.END}\nafter\n"


def test_vlm_column_judges_the_views_side_by_side(tmp_path: Path) -> None:
    from robojudge.judges import JudgeConfig
    from robojudge.judges._cache import ResponseCache
    from robojudge.video import sample_frames, write_video

    rng = np.random.default_rng(0)
    views = {}
    for v in ("cam0", "cam1"):
        write_video(tmp_path / v, rng.integers(0, 256, (6, 16, 20, 3), dtype=np.uint8), fps=10)
        views[v] = v
    row = {"item_id": "r0", "video": "cam0", "views": views, "generator": "oracle"}
    (tmp_path / "suite.jsonl").write_text(json.dumps(row) + "\n")
    grid = rv.side_by_side(tmp_path / "suite.jsonl", tmp_path / "sbs")
    joined = sample_frames(tmp_path / "sbs" / "r0", fps=None, max_frames=None).frames
    assert joined.shape == (6, 16, 40, 3)
    right = sample_frames(tmp_path / "cam1", fps=None, max_frames=None).frames
    assert np.array_equal(joined[:, :, 20:], right)
    reply = '{{"reasoning": "r", "consistency": {}}}'
    # One turn would store the first reply, 2; three turns store their majority, 4.
    judge = JudgeConfig(name="mockvlm", backend="mock", replies=[reply.format(k) for k in (2, 4, 4)])
    with ResponseCache(tmp_path / "cache") as cache:
        values, why = rv.judge_values(grid, tmp_path / "judge", judge, 3, cache=cache)
    assert values == {"r0": 4.0} and why is None


def test_each_mean_says_over_how_many_robots_it_is() -> None:
    # A constant metric has no rho on adroit but a rank accuracy (0, every pair tied): the accuracy mean
    # (1 + 0) / 2 covers both robots, and was labelled "(1 of 2)" with the rho count.
    rows = [{"robot": r, "item": f"{r}{i}", "label": lab, "m": v}
            for r, vals in (("fetch", (0.1, 0.9, 0.5)), ("adroit", (0.5, 0.5, 0.5)))
            for i, (lab, v) in enumerate(zip((1, 5, 3), vals, strict=True))]
    result = rv.evaluate(rows, {"m": True})
    a = result["m"]
    assert (a.defined, a.defined_accuracy) == (1, 2) and a.rank_accuracy == pytest.approx(0.5)
    table = rv.render(result, ["fetch", "adroit"], {}, {"m": "x"})
    assert "| `m` | x | 1.00 / 1.00 (3) | - / 0.00 (3) | 1.00 (1 of 2) | 0.50 |" in table
    assert "No rho (`-`) where a robot has values:\n\n* `m` on adroit: scores are constant\n" in table
