"""Intervals of the AFS and the RoboPhyscore in the report's RoboPhys-3D table.

The table gave point values only, and its bold was read as a ranking. Now the AFS and the default
RoboPhyscore carry cluster-bootstrap intervals (clips resampled, as the leaderboard does), checked here
against the same draws replayed the slow way: each replicate's items listed out and averaged with the
public aggregate functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _report_data import higher_is_better

from robojudge.aggregate import average_full_score, load_taxonomy, normalize, robophyscore
from robojudge.meta import ClusterBootstrap
from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item

METRICS = ("iq1_psnr", "cc_photometric", "ol_average_recall")


def _suite(n_clips: int, seed: int = 0) -> tuple[list[Item], list[ResultRow]]:
    rng = np.random.default_rng(seed)
    items, rows = [], []
    for g, shift in (("alpha", 0.0), ("beta", 2.0)):
        for k in range(n_clips):
            it = Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g)
            items.append(it)
            psnr = 25 + shift + 3 * rng.standard_normal()
            rows += [ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", psnr),
                     ResultRow(it.item_id, "cc_photometric", "h", "1", "ok", 5 + rng.standard_normal()),
                     ResultRow(it.item_id, "ol_average_recall", "h", "1", "ok",
                               float(np.clip(0.5 + 0.1 * shift + 0.2 * rng.standard_normal(), 0, 1)))]
    return items, rows


def _replayed(items: list[Item], rows: list[ResultRow], replicates: int, seed: int):
    """AFS and default RoboPhyscore intervals per generator, each replicate built item by item."""
    value = {(r.item_id, r.metric): r.value for r in rows}
    norm = {m: normalize(m, np.array([value[it.item_id, m] for it in items]), strategy="percentile")
            for m in METRICS}
    clips = [it.clip_id for it in items]
    boot = ClusterBootstrap(clips, [""] * len(items), replicates, seed)
    tax = load_taxonomy()
    have = [m for m in tax.robophyscore_default if m in METRICS]
    out = {}
    for g in ("alpha", "beta"):
        afs, rps = [], []
        for b in range(replicates):
            drawn = [i for i, it in enumerate(items) if it.generator == g
                     for _ in range(boot.counts[b, boot.item_cluster[i]])]
            means = {m: float(np.mean(norm[m][drawn])) for m in METRICS}
            full = average_full_score(means, missing="drop")
            afs.append(sum(float(full.levels[lv]) for lv in (1, 2, 3) if np.isfinite(full.levels[lv])))
            rps.append(float(robophyscore(means, have, missing="drop")))
        out[g] = (np.percentile(afs, [2.5, 97.5]), np.percentile(rps, [2.5, 97.5]))
    return out


def test_afs_and_robophyscore_intervals_match_the_draws_replayed_item_by_item() -> None:
    items, rows = _suite(12)
    inp = ReportInput(rows, items, higher_is_better, bootstrap=200, seed=7)
    (table,) = robophys_section(inp).tables
    by = {r[0].text: r for r in table.rows}
    rps_col = next(i for i, c in enumerate(table.columns)
                   if c.startswith("RoboPhyscore (") and "eq. 3" not in c)
    expected = _replayed(items, rows, 200, 7)
    for g, (afs_ci, rps_ci) in expected.items():
        afs, rps = by[g][1], by[g][rps_col]
        assert (afs.low, afs.high) == pytest.approx(tuple(afs_ci), abs=1e-12)
        assert (rps.low, rps.high) == pytest.approx(tuple(rps_ci), abs=1e-12)
        assert afs.low < afs.value < afs.high
    assert "cluster-bootstrap percentile intervals (200 replicates, clips (clip_id)" in table.note
    assert "[" in table.rows[0][1].formatted()  # shown, not only kept in the CSV


def test_intervals_are_withheld_for_a_generator_on_two_clips_and_without_replicates() -> None:
    items, rows = _suite(8)
    few = [it for it in items if it.generator == "alpha" or it.clip_id in ("c0", "c1")]
    kept = {it.item_id for it in few}
    (table,) = robophys_section(ReportInput([r for r in rows if r.item_id in kept], few, higher_is_better,
                                            bootstrap=100)).tables
    by = {r[0].text: r for r in table.rows}
    assert math.isnan(by["beta"][1].low) and math.isfinite(by["alpha"][1].low)
    assert "Withheld under 3 clips: beta (2 clips)" in table.note
    (none,) = robophys_section(ReportInput(rows, items, higher_is_better, bootstrap=0)).tables
    assert all(math.isnan(r[1].low) for r in none.rows)
    assert "No intervals: the report was made without bootstrap replicates" in none.note


def test_more_clips_give_narrower_afs_intervals() -> None:
    widths = []
    for n in (6, 60):
        items, rows = _suite(n, seed=3)
        (table,) = robophys_section(ReportInput(rows, items, higher_is_better, bootstrap=300)).tables
        widths.append(np.mean([r[1].high - r[1].low for r in table.rows]))
    assert widths[1] < 0.6 * widths[0]
