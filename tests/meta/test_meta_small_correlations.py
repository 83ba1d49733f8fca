"""Correlations on tiny and degenerate samples (audit s71_smalln, findings 3, 4, 7 and 9).

* One minimum for every correlation in robojudge.meta: 3 pairs (through two points every line fits);
  an undefined one says why.
* The pooled Overall r is undefined when no axis has an r: it measured only the offset between the axes'
  means, so a judge answering PA 2 / IA 5 to every item had r = 1.
* A correlation's interval needs 5 clusters, and a replicate of fewer than 3 distinct clusters has none.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.meta import (
    MIN_CORRELATION_CLUSTERS,
    ClusterBootstrap,
    agreement_table,
    embodiment_agreement,
    fit_agreement,
    kendall,
    overall,
    pearson,
    spearman,
    why_no_correlation,
)

runner = CliRunner()

# Humans rate IA above PA; judge "const" answers PA 2 and IA 5 to every item.
PA = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
IA_FLAT = [4.0] * 6


def test_two_pairs_give_no_correlation_and_three_do() -> None:
    # Two pairs gave r = rho = tau = 1 whatever the scores.
    for f in (pearson, spearman, kendall):
        assert math.isnan(f([1.0, 3.0], [1.0, 2.0]))
        assert math.isnan(f([1.0, 3.0, np.nan], [1.0, 2.0, 5.0]))  # the third pair is unscored
    x, y = [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic)  # 3 / sqrt(28 / 3)
    assert spearman(x, y) == pytest.approx(1.0) and kendall(x, y) == pytest.approx(1.0)
    assert why_no_correlation([1.0, 3.0], [1.0, 2.0]) == "fewer than 3 pairs"
    assert why_no_correlation([2.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == "judge scores are constant"
    assert why_no_correlation([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]) == "human scores are constant"
    assert why_no_correlation([2.0] * 3, [4.0] * 3) == "judge scores and human scores are constant"
    assert why_no_correlation(x, y) is None


def test_fit_and_embodiment_agreement_need_three_pairs() -> None:
    # fit_agreement over 2 rows gave pearson, spearman and R^2 1 and mae_fit 0; embodiment_agreement a
    # robot's rho 1 over 2 videos.
    two = fit_agreement([1.0, 3.0], [2.0, 5.0])
    assert two.n == 2 and two.why == "fewer than 3 pairs"
    fit = (two.pearson, two.spearman, two.r2, two.slope, two.intercept, two.mae_fit)
    assert all(math.isnan(v) for v in fit)
    three = fit_agreement([1.0, 2.0, 3.0], [2.0, 3.0, 5.0])
    lr = stats.linregress([1.0, 2.0, 3.0], [2.0, 3.0, 5.0])
    assert three.why is None and three.r2 == pytest.approx(lr.rvalue ** 2)
    assert three.slope == pytest.approx(1.5)
    assert fit_agreement([0.1] * 4, [1.0, 2.0, 3.0, 4.0]).why == "scores are constant"
    out = embodiment_agreement([0.1, 0.9, 0.5, 0.5, 0.5], [1, 5, 1, 3, 5], ["f", "f", "a", "a", "a"])
    assert math.isnan(out.groups["f"].rho) and out.groups["f"].why == "fewer than 3 videos"
    assert out.groups["f"].rank_accuracy == 1.0  # one ordered pair, ordered right
    assert math.isnan(out.groups["a"].rho) and out.groups["a"].why == "scores are constant"
    assert out.groups["a"].rank_accuracy == 0.0  # every pair tied: errors
    # No rho on either robot, a rank accuracy on both: (1 + 0) / 2 over 2 robots.
    assert (out.defined, out.defined_accuracy) == (0, 2) and out.rank_accuracy == pytest.approx(0.5)


def test_the_overall_r_of_a_judge_with_no_axis_r_is_undefined() -> None:
    # Judge PA 2 / IA 5 against humans PA 1,2,3,... / IA 4: neither axis has an r, and the pooled r was
    # 18 / sqrt(27 * 16) = sqrt(3) / 2 (x deviations +-1.5; y: PA 1, 2, 3 around the pooled mean 3, IA 4).
    const = overall({"pa": ([2.0] * 6, PA), "ia": ([5.0] * 6, IA_FLAT)})
    assert stats.pearsonr([2.0] * 6 + [5.0] * 6, PA + IA_FLAT).statistic == pytest.approx(math.sqrt(3) / 2)
    assert math.isnan(const.pearson) and math.isnan(const.spearman) and math.isnan(const.kendall)
    assert const.no_correlation == ("no axis has a defined correlation; pa: judge scores are constant; "
                                    "ia: judge scores and human scores are constant")
    assert const.mse == pytest.approx(10 / 12)  # squared errors: PA 1, 0, 1, 1, 0, 1; IA 1 six times
    # With PA's r defined the Overall pools as RoboJudge's Table 2 does, IA's offset included.
    vp, vi = [1.0, 3.0, 2.0, 2.0, 1.0, 3.0], [3.0, 5.0, 4.0, 4.0, 3.0, 5.0]
    vary = overall({"pa": (vp, PA), "ia": (vi, IA_FLAT)})
    assert vary.no_correlation is None
    assert vary.pearson == pytest.approx(stats.pearsonr(vp + vi, PA + IA_FLAT).statistic)  # 0.7826
    assert vary.kendall == pytest.approx(stats.kendalltau(vp + vi, PA + IA_FLAT).statistic)
    report = agreement_table({"const": {"pa": [2.0] * 6, "ia": [5.0] * 6}, "vary": {"pa": vp, "ia": vi}},
                             {"pa": PA, "ia": IA_FLAT}, bootstrap=300, seed=0, pairs=[])
    cell = report.cells["const"]["overall"].stats["pearson"]
    assert math.isnan(cell.value) and cell.why == const.no_correlation and math.isnan(cell.low)
    assert report.cells["vary"]["overall"].stats["pearson"].value == pytest.approx(vary.pearson)


def test_a_correlation_interval_needs_five_clusters(tmp_path: Path) -> None:
    # Three items in three clips gave pearson 0.929 [0.929, 1.000]: of the 27 draws, 18 hold two clips
    # (r = +-1) and 6 all three (r = the point). The MSE beside it keeps its interval.
    x, y = [1.0, 2.0, 4.0], [1.0, 3.0, 4.0]
    report = agreement_table({"j": {"pa": x}}, {"pa": y}, bootstrap=500, seed=1, pairs=[])
    st = report.cells["j"]["pa"].stats
    assert st["pearson"].value == pytest.approx(stats.pearsonr(x, y).statistic)
    for k in ("pearson", "spearman"):
        assert math.isnan(st[k].low)
        assert st[k].why == "scored items in 3 cluster(s); a correlation's interval needs at least 5"
    assert st["mse"].why is None and st["mse"].low <= st["mse"].value <= st["mse"].high
    assert MIN_CORRELATION_CLUSTERS == 5


def _brute_pearson(x: np.ndarray, y: np.ndarray, counts: np.ndarray, item_cluster: np.ndarray) -> np.ndarray:
    """Each replicate's r on the expanded sample; NaN under 3 distinct clusters or a constant side."""
    out = np.full(counts.shape[0], np.nan)
    for b, c in enumerate(counts):
        w = c[item_cluster]
        if np.unique(item_cluster[w > 0]).size < 3:
            continue
        xe, ye = np.repeat(x, w), np.repeat(y, w)
        if np.ptp(xe) > 0 and np.ptp(ye) > 0:
            out[b] = stats.pearsonr(xe, ye).statistic
    return out


def test_replicates_of_fewer_than_three_clusters_are_left_out() -> None:
    # Five one-item clusters: 305 of the 3125 equally likely draws hold 1 or 2 clusters, and those gave
    # r = +-1 at the ends of the interval. Checked against r of every expanded resample.
    x, y = np.array([1.0, 2.0, 4.0, 3.0, 5.0]), np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    report = agreement_table({"j": {"pa": x}}, {"pa": y}, bootstrap=2000, seed=4, pairs=[])
    boot = ClusterBootstrap(np.arange(5), None, 2000, 4)
    reps = _brute_pearson(x, y, boot.counts, boot.item_cluster)
    got = report.cells["j"]["pa"].stats["pearson"]
    ok = reps[np.isfinite(reps)]
    assert got.replicates == ok.size and got.why is None
    assert (got.low, got.high) == pytest.approx(tuple(np.quantile(ok, [0.025, 0.975])))
    # About 9.8% of the draws (305 / 3125) were left out.
    thin = sum(np.unique(np.flatnonzero(c)).size < 3 for c in boot.counts)
    assert thin / 2000 == pytest.approx(305 / 3125, abs=0.02) and got.replicates <= 2000 - thin


def test_the_overall_replicates_follow_the_overall_rule() -> None:
    # IA's labels are constant, so the Overall r rests on PA's: a replicate whose PA draw has no r (fewer
    # than 3 distinct clusters) has no Overall r either, where the pooled offset used to give one.
    rng = np.random.default_rng(2)
    pa = rng.integers(1, 6, 6).astype(float)
    pred_pa = np.clip(pa + rng.integers(-1, 2, 6), 1, 5)
    pred_ia = rng.integers(1, 6, 6).astype(float)
    ia = np.full(6, 4.0)
    report = agreement_table({"j": {"pa": pred_pa, "ia": pred_ia}}, {"pa": pa, "ia": ia}, bootstrap=1000,
                             seed=5, pairs=[])
    boot = ClusterBootstrap(np.arange(6), None, 1000, 5)
    per_pa = _brute_pearson(pred_pa, pa, boot.counts, boot.item_cluster)
    both = np.r_[np.arange(6), np.arange(6)]  # PA's items, then IA's, in their clips
    pooled = _brute_pearson(np.r_[pred_pa, pred_ia], np.r_[pa, ia], boot.counts, both)
    pooled[np.isnan(per_pa)] = np.nan
    ok = pooled[np.isfinite(pooled)]
    got = report.cells["j"]["overall"].stats["pearson"]
    assert got.value == pytest.approx(stats.pearsonr(np.r_[pred_pa, pred_ia], np.r_[pa, ia]).statistic)
    assert got.replicates == ok.size
    assert (got.low, got.high) == pytest.approx(tuple(np.quantile(ok, [0.025, 0.975])))


def _csv(path: Path, rows: list[tuple[str, str, float]], judge: str | None = None) -> Path:
    head = "item_id,axis,score" + (",judge" if judge else "")
    path.write_text(head + "\n" + "".join(f"{i},{a},{s:g}" + (f",{judge}" if judge else "") + "\n"
                                         for i, a, s in rows))
    return path


def test_meta_agreement_says_why_a_correlation_is_undefined(tmp_path: Path) -> None:
    # Constant human scores printed "-" with no reason, and the JSON had no "why".
    human = _csv(tmp_path / "h.csv", [(f"i{k}", a, 3.0 if a == "pa" else 4.0) for k in range(6)
                                      for a in ("pa", "ia")])
    pred = _csv(tmp_path / "p.csv", [(f"i{k}", a, float(1 + k % 5)) for k in range(6) for a in ("pa", "ia")],
                judge="vary")
    r = runner.invoke(app, ["agreement", "--pred", str(pred), "--human", str(human), "--bootstrap", "200",
                            "--json"])
    assert r.exit_code == 0, r.output
    cells = json.loads(r.output)["cells"]["vary"]
    assert cells["pa"]["stats"]["pearson"]["value"] is None
    assert cells["pa"]["stats"]["kendall"]["why"] == "human scores are constant"
    assert cells["overall"]["stats"]["spearman"]["why"] == (
        "no axis has a defined correlation; pa, ia: human scores are constant")
    assert "why" not in cells["pa"]["stats"]["mse"]
    r = runner.invoke(app, ["agreement", "--pred", str(pred), "--human", str(human), "--bootstrap", "200"])
    said = " ".join(r.output.split())
    assert ("note: undefined (human scores are constant): vary pa (pearson, spearman, kendall); vary ia"
            in said)


def test_meta_compare_says_why_over_two_rows(tmp_path: Path) -> None:
    # Two rows printed pearson, spearman and r2 1.0000 and mae_fit 0.0000 under "only 2 complete rows".
    path = tmp_path / "c.csv"
    path.write_text("s,t\n1,2\n3,5\n")
    r = runner.invoke(app, ["compare", "--in", str(path), "--score", "s", "--target", "t", "--json"])
    assert r.exit_code == 0, r.output
    assert "the correlations and the fit are undefined: fewer than 3 pairs (2 complete rows" in r.output
    out = json.loads(r.output[r.output.index("{"):])
    assert out["pearson"] is None and out["r2"] is None and out["mae_fit"] is None
    assert out["why"] == "fewer than 3 pairs"
