"""RoboPhyscore against the human labels per item, as RoboPhys-3D App. D computes it (audit meta F1).

Before: the threshold table compared each generator's RoboPhyscore with the mean of its items' labels,
so 5 generators gave r 0.996 on data whose items agree with their labels at r 0.68; the paper's human
alignment is "at the sample level rather than only on model-level averages" (App. D).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _report_data import higher_is_better
from scipy import stats

from robojudge.report._robophys import sensitivity_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item

SUCCESS = dict(zip("abcde", (0.1, 0.3, 0.5, 0.7, 0.9), strict=True))


def _suite(*, unscored: int = 0) -> tuple[list[ResultRow], list[Item], np.ndarray, np.ndarray]:
    """5 generators x 20 items (the audit's example): iq1_ssim follows the generator's task success with
    item noise, and labels.overall (1-10) follows it with item noise of its own, unrelated to the SSIM.
    The first ``unscored`` items of generator a have no SSIM."""
    rng = np.random.default_rng(0)
    rows, items, ssim_all, human_all = [], [], [], []
    for g in SUCCESS:
        for k in range(20):
            ssim = float(np.clip(SUCCESS[g] + rng.normal(0, 0.15), 0, 1))
            human = round(float(np.clip(1 + 9 * SUCCESS[g] + rng.normal(0, 2.5), 1, 10)), 2)
            it = Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g,
                      labels={"overall": human})
            items.append(it)
            if g == "a" and k < unscored:
                rows.append(ResultRow(it.item_id, "iq1_ssim", "h", "1", "error", None, error="unreadable"))
                ssim = math.nan
            else:
                rows.append(ResultRow(it.item_id, "iq1_ssim", "h", "1", "ok", ssim))
            rows.append(ResultRow(it.item_id, "sim_task_success", "h", "1", "ok", SUCCESS[g]))
            ssim_all.append(ssim)
            human_all.append(human)
    return rows, items, np.array(ssim_all), np.array(human_all)


def _row(sec, threshold_index: int = 0) -> dict[str, object]:
    (table,) = sec.tables
    return {c: cell for c, cell in zip(table.columns, table.rows[threshold_index], strict=True)}


def test_the_human_alignment_is_per_item_as_in_app_d() -> None:
    rows, items, ssim, human = _suite()
    sec = sensitivity_section(ReportInput(rows, items, higher_is_better), thresholds=(0.5,))
    assert sec.skipped is None, sec.skipped
    got = _row(sec)
    assert got["metrics"].text == "iq1_ssim"
    # Each item's RoboPhyscore is its normalized iq1_ssim (identity on [0, 1]), against its own label.
    r = stats.pearsonr(ssim, human).statistic
    assert got["r vs label overall"].value == pytest.approx(r, abs=1e-12)
    assert got["r vs label overall"].value == pytest.approx(0.6792, abs=1e-4)  # the audit's figure
    assert got["rho vs label overall"].value == pytest.approx(stats.spearmanr(ssim, human).statistic,
                                                              abs=1e-12)
    assert got["R^2 vs label overall"].value == pytest.approx(r**2, abs=1e-12)
    fit = stats.linregress(ssim, human)
    mae = np.mean(np.abs(human - (fit.intercept + fit.slope * ssim)))
    assert got["MAE vs label overall"].value == pytest.approx(mae, abs=1e-12)
    assert got["items vs label overall"].text == "100" and got["n"].text == "5"
    # The per-generator means would agree almost perfectly: the number the table gave before.
    means = [(ssim[k * 20:(k + 1) * 20].mean(), human[k * 20:(k + 1) * 20].mean()) for k in range(5)]
    by_gen = stats.pearsonr(*zip(*means, strict=True)).statistic
    assert by_gen > 0.99 and got["r vs label overall"].value < 0.7
    # Task success stays a comparison across the generators (one value per generator, r over 5).
    gen_ssim = [m for m, _ in means]
    assert got["r vs sim_task_success"].value == pytest.approx(
        stats.pearsonr(gen_ssim, list(SUCCESS.values())).statistic, abs=1e-12)
    assert "against a label it is per item, as RoboPhys-3D App. D" in sec.intro


def test_an_item_without_a_kept_metric_has_no_robophyscore() -> None:
    rows, items, ssim, human = _suite(unscored=3)
    got = _row(sensitivity_section(ReportInput(rows, items, higher_is_better), thresholds=(0.5,)))
    ok = np.isfinite(ssim)
    # a, measured on 17 of its 20 items, has no generator mean (eq. 3 runs over the other 4), but each
    # of its 17 measured items still has a RoboPhyscore to set against its label
    assert got["n"].text == "4"
    assert ok.sum() == 97 and got["items vs label overall"].text == "97"
    assert got["r vs label overall"].value == pytest.approx(stats.pearsonr(ssim[ok], human[ok]).statistic,
                                                            abs=1e-12)
