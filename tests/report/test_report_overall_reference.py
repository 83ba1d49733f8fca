"""The report's threshold table (RoboPhys-3D Table 16) against the human score and with all its statistics.

Before: the table took PA and IA as its only human references and left out ``labels.overall``, the
paper's human score (App. D, eq. 11), and it showed Pearson r alone where Table 16 (and ``aggregate
select --thresholds``) give Pearson, Spearman, R^2 and MAE.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from _report_data import higher_is_better
from typer.testing import CliRunner

from robojudge.aggregate import AGREEMENT_STATISTICS
from robojudge.cli._aggregate import app
from robojudge.report._robophys import sensitivity_section
from robojudge.report._sections import ReportInput
from robojudge.report._tables import Table
from robojudge.store import ResultRow
from robojudge.suite import Item

SUCCESS = {"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.9}
SSIM = {"a": 0.25, "b": 0.35, "c": 0.6, "d": 0.65, "e": 0.9}
#: Per item, the mean of three raters' 10-point scores; clip 2 of c and e was not rated.
OVERALL = {"a": (2.33, 3.0, 2.67), "b": (4.67, 5.33, 4.0), "c": (5.0, 7.33, None), "d": (6.67, 6.0, 7.0),
           "e": (9.33, 8.67, None)}


def _items(*, overall: bool = True, axes: bool = True) -> list[Item]:
    out = []
    for g, scores in OVERALL.items():
        for k, o in enumerate(scores):
            labels: dict[str, object] = {}
            if overall and o is not None:
                labels["overall"] = o
            if axes:
                labels["pa"] = 1 + "abcde".index(g)
            out.append(Item(item_id=f"{g}{k}", video="v.mp4", clip_id=f"c{k}", generator=g,
                            labels=labels or None))
    return out


def _rows(items: list[Item]) -> list[ResultRow]:
    rows = []
    for n, it in enumerate(items):
        g = it.generator or ""
        rows.append(ResultRow(it.item_id, "iq1_ssim", "h", "1", "ok", SSIM[g] + 0.01 * (n % 3)))
        rows.append(ResultRow(it.item_id, "iq1_psnr", "h", "1", "ok", 10.0 + 30.0 * SUCCESS[g] + (n % 2)))
        rows.append(ResultRow(it.item_id, "sim_task_success", "h", "1", "ok", SUCCESS[g]))
    return rows


def _table(items: list[Item]) -> Table:
    sec = sensitivity_section(ReportInput(_rows(items), items, higher_is_better), thresholds=(0.5, 1.0))
    assert sec.skipped is None, sec.skipped
    (table,) = sec.tables
    return table


def test_the_human_score_is_a_reference_with_table_16_s_four_statistics(tmp_path: Path) -> None:
    items = _items()
    table = _table(items)
    for ref in ("sim_task_success", "label overall", "label PA"):
        assert [f"{short} vs {ref}" for _, _, short in AGREEMENT_STATISTICS] == [
            "r vs " + ref, "rho vs " + ref, "R^2 vs " + ref, "MAE vs " + ref]
        for _, _, short in AGREEMENT_STATISTICS:
            assert f"{short} vs {ref}" in table.columns
    assert "label IA" not in " ".join(table.columns)  # no item carries IA
    first, undefined = table.rows
    assert first[1].text == "2"
    # (then n, the generators behind the task-success columns, and the items behind each label's)
    stat_cols = table.columns[3:table.columns.index("n")]
    assert table.columns[table.columns.index("n"):] == ["n", "items vs label overall", "items vs label PA"]
    assert [c.text for c in first[-3:]] == ["5", "13", "15"]  # 13 items carry labels.overall
    got = {c: first[table.columns.index(c)].value for c in stat_cols}
    assert all(math.isfinite(v) for v in got.values()), got
    assert all(math.isnan(undefined[table.columns.index(c)].value) for c in stat_cols)

    # The same numbers as `aggregate select --thresholds --references human` on the per-item values the
    # report normalizes (iq1_ssim as is, iq1_psnr / 50): both compare each item's RoboPhyscore with its
    # own human score (RoboPhys-3D App. D), over the 13 items that carry one.
    path = tmp_path / "items.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["generator", "iq1_ssim", "iq1_psnr", "sim_task_success", "human"])
        for it, (ssim, psnr, succ) in zip(items, _triples(_rows(items)), strict=True):
            o = it.labels.overall if it.labels is not None else None
            w.writerow([it.generator, ssim, min(psnr / 50, 1.0), succ, "" if o is None else o])
    res = CliRunner().invoke(app, ["select", "--in", str(path), "--by", "generator", "--normalized",
                                   "--targets", "sim_task_success", "--references", "human",
                                   "--missing", "drop", "--thresholds", "0.5", "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["n_metrics"] == 2
    human = row["agreement"]["human"]
    assert human["n"] == 13 and human["level"] == "sample"
    for name, _, short in AGREEMENT_STATISTICS:
        assert got[f"{short} vs label overall"] == pytest.approx(human[name], abs=1e-6)
    assert human["mae"] > 0 and got["R^2 vs label overall"] == pytest.approx(got["r vs label overall"] ** 2)


def _triples(rows: list[ResultRow]) -> list[tuple[float, float, float]]:
    by: dict[str, dict[str, float]] = {}
    for r in rows:
        assert r.value is not None
        by.setdefault(r.item_id, {})[r.metric] = r.value
    return [(v["iq1_ssim"], v["iq1_psnr"], v["sim_task_success"]) for v in by.values()]


def test_the_intro_says_what_the_human_reference_is_and_how_many_items_carry_it() -> None:
    items = _items()
    sec = sensitivity_section(ReportInput(_rows(items), items, higher_is_better), thresholds=(0.5,))
    assert "'label overall' is RoboPhys-3D's human reference (App. D, eq. 11" in sec.intro
    assert "(13 of 15 items carry one)" in sec.intro
    assert "against a label it is per item, as RoboPhys-3D App. D" in sec.intro
    assert "Spearman rho, R^2 of the least-squares line" in sec.intro
    assert "planted labels" not in sec.intro
    # the simulator's labels (overall = PA + IA, rater "planted") stand in for human scores: said so
    sim = [it.model_copy(update={"labels": it.labels.model_copy(update={"rater": "planted"})})
           if it.labels is not None else it for it in items]
    planted = sensitivity_section(ReportInput(_rows(sim), sim, higher_is_better), thresholds=(0.5,))
    assert "These are planted labels (simulator truth), not human ratings." in planted.intro


def test_labels_no_item_carries_are_no_reference() -> None:
    table = _table(_items(overall=False))
    assert "r vs label PA" in table.columns and "r vs label overall" not in table.columns
    only = _table(_items(axes=False))
    assert "r vs label overall" in only.columns and "r vs label PA" not in only.columns
    none = _table(_items(overall=False, axes=False))
    assert [c for c in none.columns if "label" in c] == []


def test_the_intro_says_when_a_label_covers_fewer_generators() -> None:
    # review rev7 F3: 'label overall' of 3 of 5 generators sat beside columns over all 5, unsaid
    items = [it.model_copy(update={"labels": it.labels.model_copy(update={"overall": None})})
             if it.generator in ("d", "e") and it.labels is not None else it for it in _items()]
    sec = sensitivity_section(ReportInput(_rows(items), items, higher_is_better), thresholds=(0.5,))
    assert "'label overall' on items of 3 of the 5 generators" in sec.intro, sec.intro
    assert "'label PA' on" not in sec.intro
    # per item, two generators' 6 items still give an r (per generator, 2 points gave none)
    two = [it.model_copy(update={"labels": it.labels.model_copy(update={"overall": None})})
           if it.generator in ("c", "d", "e") and it.labels is not None else it for it in _items()]
    sec2 = sensitivity_section(ReportInput(_rows(two), two, higher_is_better), thresholds=(0.5,))
    assert "'label overall' on items of 2 of the 5 generators" in sec2.intro
    (table,) = sec2.tables
    assert math.isfinite(table.rows[0][table.columns.index("r vs label overall")].value)
    assert table.rows[0][table.columns.index("items vs label overall")].text == "6"
    full = sensitivity_section(ReportInput(_rows(_items()), _items(), higher_is_better), thresholds=(0.5,))
    assert "Labels the items of some generators lack" not in full.intro
