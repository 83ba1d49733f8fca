"""``aggregate correlations``: RoboPhys-3D Fig. 3a/3b and Fig. 9, Pearson across configurations.

The paper's appendix E table (25 world-model configurations, normalized values of the 50 metrics) is
the input; the matrices are checked against numpy/scipy on the totals and values worked out here.
"""

import csv
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from robojudge.aggregate import AggregateInputError, correlations_from_table, load_taxonomy
from robojudge.cli._aggregate import app

GOLDEN = Path(__file__).parent / "golden" / "robophys3d_appendix_e_normalized.csv"


@pytest.fixture
def table() -> pd.DataFrame:
    df = pd.read_csv(GOLDEN)
    return df[df["kind"] == "world_model"].drop(columns="kind").reset_index(drop=True)


def _subdim_totals(df: pd.DataFrame) -> pd.DataFrame:
    tax = load_taxonomy()
    return pd.DataFrame({d: df[list(tax.metrics_of(d))].sum(axis=1) for d in tax.subdims})


def test_subdimensions_and_levels_against_numpy(table):
    corr = correlations_from_table(table, by=["model", "condition"], of="subdim", normalized=True)
    tax = load_taxonomy()
    assert list(corr.columns) == list(tax.subdims) and list(corr.index) == list(tax.subdims)
    totals = _subdim_totals(table)
    want = np.corrcoef(totals.to_numpy().T)
    assert np.allclose(corr.to_numpy(), want, atol=1e-12, equal_nan=True)
    a, b = tax.subdims[0], tax.subdims[5]
    assert corr.loc[a, b] == pytest.approx(stats.pearsonr(totals[a], totals[b]).statistic, abs=1e-12)
    levels = correlations_from_table(table, by=["model", "condition"], of="level", normalized=True)
    assert list(levels.columns) == ["1", "2", "3", "4"]
    # a level's total is the sum of its sub-dimensions' means (aggregate scores)
    means = pd.DataFrame({d: totals[d] / len(tax.metrics_of(d)) for d in tax.subdims})
    level_totals = np.array([[means.loc[i, list(tax.subdims_of(lv))].sum() for lv in tax.levels]
                             for i in range(len(means))])
    assert np.allclose(levels.to_numpy(), np.corrcoef(level_totals.T), atol=1e-12)


def test_metrics_in_taxonomy_order(table):
    corr = correlations_from_table(table, by=["model", "condition"], of="metric", normalized=True)
    tax = load_taxonomy()
    assert list(corr.columns) == [m for m in tax.ids if m in table.columns]
    x, y = table["iq1_psnr"], table["cc_photometric"]
    assert corr.loc["iq1_psnr", "cc_photometric"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert np.allclose(np.diag(corr.to_numpy())[np.isfinite(np.diag(corr.to_numpy()))], 1.0)


def test_macro_averages_regimes_first_and_constants_say_so():
    # three generators, two regimes: a generator's value is the mean of its two regimes' means
    rows = []
    vals = {"g1": (0.1, 0.3), "g2": (0.5, 0.9), "g3": (0.2, 0.2), "g4": (0.8, 0.4)}
    other = {"g1": 0.9, "g2": 0.7, "g3": 0.1, "g4": 0.3}
    for g, (r1, r2) in vals.items():
        for regime, v in (("a", r1), ("b", r2)):
            rows.append({"generator": g, "regime": regime, "metric": "iq1_psnr", "value": v})
            rows.append({"generator": g, "regime": regime, "metric": "iq1_ssim", "value": other[g]})
            rows.append({"generator": g, "regime": regime, "metric": "cc_photometric", "value": 0.5})
    notes: list[str] = []
    corr = correlations_from_table(pd.DataFrame(rows), by=["generator"], of="metric", normalized=True,
                                   macro="regime", note=notes.append)
    means = [np.mean(v) for v in vals.values()]
    assert corr.loc["iq1_psnr", "iq1_ssim"] == pytest.approx(np.corrcoef(means, list(other.values()))[0, 1])
    assert math.isnan(corr.loc["cc_photometric", "iq1_psnr"])
    assert any("cc_photometric" in n and "same value in every configuration" in n for n in notes)
    # a part measured in one configuration only is not said to be constant (review rev7 F5)
    one = pd.DataFrame(rows + [{"generator": "g1", "regime": "a", "metric": "iq1_lpips", "value": 0.3}])
    notes.clear()
    corr = correlations_from_table(one, by=["generator"], of="metric", normalized=True, macro="regime",
                                   missing="drop", note=notes.append)
    assert not any("iq1_lpips" in n and "same value" in n for n in notes)
    assert any("iq1_lpips" in n and "fewer than 3 configurations" in n for n in notes), notes


def test_too_few_configurations_and_no_by_are_refused(table):
    two = table[table["model"].isin(["Wan"]) & table["condition"].isin(["GT", "VGGT"])]
    with pytest.raises(AggregateInputError, match="2 configuration"):
        correlations_from_table(two, by=["model", "condition"], normalized=True)
    with pytest.raises(AggregateInputError, match="--by"):
        correlations_from_table(table, by=[], normalized=True)
    with pytest.raises(AggregateInputError, match="--of"):
        correlations_from_table(table, by=["model"], of="axis", normalized=True)


def test_cli_writes_the_matrix(tmp_path, table):
    src = tmp_path / "wide.csv"
    table.to_csv(src, index=False)
    out = tmp_path / "corr.csv"
    res = CliRunner().invoke(app, ["correlations", "--in", str(src), "--by", "model,condition", "--of",
                                   "level", "--normalized", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "4x4 correlation matrix" in res.output
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["level", "1", "2", "3", "4"] and [r[0] for r in rows[1:]] == ["1", "2", "3", "4"]
    printed = CliRunner().invoke(app, ["correlations", "--in", str(src), "--by", "model,condition",
                                       "--of", "level", "--normalized"])
    assert printed.exit_code == 0 and list(csv.reader(io.StringIO(printed.stdout))) == rows
    bad = CliRunner().invoke(app, ["correlations", "--in", str(src), "--by", "model", "--of", "levels"])
    assert bad.exit_code == 2 and "--of must be one of subdim, level, metric" in bad.output


def test_nothing_to_correlate_is_an_error_saying_why():
    # one metric only: every sub-dimension lacks metrics, so under --missing nan each is NaN
    rows = [{"generator": g, "metric": "iq1_psnr", "value": v} for g, v in (("a", .1), ("b", .5), ("c", .9))]
    with pytest.raises(AggregateInputError, match="no subdim has a value.*--missing drop"):
        correlations_from_table(pd.DataFrame(rows), by=["generator"], normalized=True)
    corr = correlations_from_table(pd.DataFrame(rows), by=["generator"], normalized=True, missing="drop")
    assert list(corr.columns) == ["IQ-1"]
