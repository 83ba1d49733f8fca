"""``aggregate select --by ... --references``: RoboPhyscore against a reference per sample (audit meta F1).

Before: the reference was averaged per configuration with the metrics, so the agreement with human scores
was over a few configuration means, where RoboPhys-3D App. D compares them per sample; on the audit's
5 x 20 example, r 0.996 against 0.68 per sample. Eq. 3's selection stays on the configuration means.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from robojudge.aggregate import selection_from_table
from robojudge.cli._aggregate import app

SUCCESS = dict(zip("abcde", (0.1, 0.3, 0.5, 0.7, 0.9), strict=True))


def _data() -> list[tuple[str, str, float, float]]:
    """(generator, item, ssim, human) for the audit's 5 generators x 20 items."""
    rng = np.random.default_rng(0)
    out = []
    for g in SUCCESS:
        for k in range(20):
            ssim = float(np.clip(SUCCESS[g] + rng.normal(0, 0.15), 0, 1))
            human = round(float(np.clip(1 + 9 * SUCCESS[g] + rng.normal(0, 2.5), 1, 10)), 2)
            out.append((g, f"{g}{k}", ssim, human))
    return out


def _wide(tmp_path: Path) -> Path:
    path = tmp_path / "wide.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["generator", "item_id", "iq1_ssim", "sim_task_success", "human"])
        for g, item, ssim, human in _data():
            w.writerow([g, item, ssim, SUCCESS[g], human])
    return path


ARGS = ["--by", "generator", "--normalized", "--targets", "sim_task_success", "--references", "human",
        "--thresholds", "0.5"]


def test_the_reference_is_compared_per_sample(tmp_path: Path) -> None:
    data = _data()
    ssim = np.array([d[2] for d in data])
    human = np.array([d[3] for d in data])
    res = CliRunner().invoke(app, ["select", "--in", str(_wide(tmp_path)), *ARGS, "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["selected"] == ["iq1_ssim"]
    got = row["agreement"]["human"]
    assert got["level"] == "sample" and got["n"] == 100
    assert got["pearson"] == pytest.approx(stats.pearsonr(ssim, human).statistic, abs=1e-6)
    assert got["pearson"] == pytest.approx(0.6792, abs=1e-4)
    assert got["spearman"] == pytest.approx(stats.spearmanr(ssim, human).statistic, abs=1e-6)
    # (over the 5 configuration means it was 0.996)
    means = pd.DataFrame(data, columns=["g", "i", "s", "h"]).groupby("g")[["s", "h"]].mean()
    assert stats.pearsonr(means["s"], means["h"]).statistic > 0.99
    shown = CliRunner().invoke(app, ["select", "--in", str(_wide(tmp_path)), *ARGS])
    assert "100 of 100 samples" in shown.stdout
    assert "note: agreement with human is per sample" in " ".join(shown.stdout.split())


def test_a_set_level_metric_gives_each_sample_its_configuration_s_value(tmp_path: Path) -> None:
    # A long export: iq1_ssim per item, iq1_fvd per generator (item id group:...), human per item.
    rows = []
    for g, item, ssim, human in _data()[:60]:  # generators a, b, c
        rows += [(g, item, "iq1_ssim", ssim), (g, item, "human", human), (g, item, "ts_vlm2", SUCCESS[g])]
    fvd = {"a": 1500.0, "b": 900.0, "c": 300.0}
    rows += [(g, f"group:generator={g}", "iq1_fvd", v) for g, v in fvd.items()]
    df = pd.DataFrame(rows, columns=["generator", "item_id", "metric", "value"])
    found = selection_from_table(df, ["ts_vlm2"], by=["generator"], references=["human"])
    assert found.references is None and found.sample_references is not None
    assert found.sample_values is not None
    n = len(found.sample_references["human"])
    assert n == 60
    # iq1_fvd normalized as 1 - x / 2000 (Table 13), each item taking its generator's
    want = np.repeat([1 - v / 2000 for v in fvd.values()], 20)
    assert found.sample_values["iq1_fvd"] == pytest.approx(want)
    # samples in (generator, item id) order, each its own SSIM and human score
    by_item = sorted(_data()[:60], key=lambda d: (d[0], d[1]))
    assert found.sample_values["iq1_ssim"] == pytest.approx([d[2] for d in by_item])
    assert found.sample_references["human"] == pytest.approx([d[3] for d in by_item])


def test_a_long_table_without_item_id_stays_on_configuration_means(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["generator", "metric", "value"])
        for g, _, ssim, human in _data():
            w.writerows([(g, "iq1_ssim", ssim), (g, "human", human), (g, "sim_task_success", SUCCESS[g])])
    res = CliRunner().invoke(app, ["select", "--in", str(path), *ARGS, "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    got = row["agreement"]["human"]
    assert got["level"] == "configuration" and got["n"] == 5
    assert "cannot pair its rows into samples" in " ".join(res.stderr.split())
    assert not math.isnan(got["pearson"]) and got["pearson"] > 0.99


def test_blank_reference_cells_compared_per_sample_are_not_called_nan(tmp_path: Path) -> None:
    """The --missing note said every generator's human reference was NaN when a few human cells were
    blank, though the reference is compared per sample over the labelled ones (review rev26 F2)."""
    path = _wide(tmp_path)
    lines = path.read_text().splitlines()
    for k in range(1, len(lines), 4):  # every fourth item unlabelled
        lines[k] = lines[k].rsplit(",", 1)[0] + ","
    path.write_text("\n".join(lines) + "\n")
    notes: list[str] = []
    found = selection_from_table(pd.read_csv(path), ["sim_task_success"], by=["generator"],
                                 references=["human"], normalized=True, note=notes.append)
    assert found.sample_references is not None
    assert int(np.isfinite(found.sample_references["human"]).sum()) == 75
    assert not any("human" in n and "NaN" in n for n in notes), notes
