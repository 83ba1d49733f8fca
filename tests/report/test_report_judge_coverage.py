"""Judge tables show how many items each judge was scored on, and compare only like with like."""

import csv

import numpy as np
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.meta import agreement_table
from robojudge.report import judge_coverage, judge_table, judges_report, write_judges
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item


def _row(item, metric, value, status="ok"):
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status=status,
                     value=value if status == "ok" else None, error=None if status == "ok" else "boom")


def _data():
    rng = np.random.default_rng(3)
    n = 40
    pa, ia = rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    items = [Item(item_id=f"i{k}", video="v.mp4", clip_id=f"c{k}", generator="g" if k % 2 else "h",
                  labels={"pa": int(pa[k]), "ia": int(ia[k])}) for k in range(n)]
    rows = []
    for k, it in enumerate(items):
        # 'full' scores every item, one point off on PA; 'easy' only the first 12 items, exactly.
        rows += [_row(it.item_id, "judge:full:pa", float(np.clip(pa[k] + 1, 1, 5))),
                 _row(it.item_id, "judge:full:ia", ia[k])]
        if k < 12:
            rows += [_row(it.item_id, "judge:easy:pa", pa[k]), _row(it.item_id, "judge:easy:ia", ia[k])]
        elif k < 20:
            rows += [_row(it.item_id, "judge:easy:pa", None, "error"),
                     _row(it.item_id, "judge:easy:ia", float("nan"))]
    return items, rows


def test_best_only_among_judges_scored_on_the_same_items(tmp_path):
    items, rows = _data()
    report, table, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    by = {r.judge: r for r in table}
    assert by["easy"].n == {"pa": 12, "ia": 12} and by["easy"].n_unscored == {"pa": 28, "ia": 28}
    assert by["full"].n == {"pa": 40, "ia": 40} and by["full"].n_unscored == {"pa": 0, "ia": 0}
    # 'easy' is perfect on its 12 items, but those are not the items 'full' was scored on.
    assert report.cells["easy"]["pa"].stats["mse"].value == 0.0
    assert ("pa", "mse") in by["full"].best and not by["easy"].best
    assert by["easy"].compared == frozenset() and by["full"].compared == {"pa", "ia", "overall"}
    write_judges(table, report, tmp_path)
    md = (tmp_path / "judges.md").read_text()
    assert "| easy | 24 | 56 |" in md and "not compared" in md and "easy" in md.split("not compared")[1]
    with (tmp_path / "judges.csv").open() as f:
        got = {r["judge"]: r for r in csv.DictReader(f)}
    assert got["easy"]["unscored_pa"] == "28" and got["easy"]["pa_small_n"] == "False"


def test_same_items_judges_are_compared_as_before():
    h = {"pa": np.array([1.0, 2, 3, 4, 5] * 4)}
    pred = {"a": {"pa": h["pa"]}, "b": {"pa": h["pa"] + 1}}
    report = agreement_table(pred, h, bootstrap=0, pairs=[])
    scored = {j: {"pa": np.isfinite(p["pa"])} for j, p in pred.items()}
    rows = {r.judge: r for r in judge_table(report, scored)}
    assert ("pa", "mse") in rows["a"].best and rows["b"].compared == {"pa", "overall"}
    # Without the masks, equal counts stand for equal items (the old behaviour).
    assert ("pa", "mse") in {r.judge: r for r in judge_table(report)}["a"].best


def test_small_n_is_flagged():
    h = {"pa": np.array([1.0, 2, 3, 4, 5, 1, 2, 3])}
    report = agreement_table({"a": {"pa": h["pa"]}}, h, bootstrap=0, pairs=[])
    (row,) = judge_table(report, {"a": {"pa": np.ones(8, bool)}}, [f"c{i}" for i in range(8)])
    assert row.small == {"pa", "overall"}
    big = {"pa": np.tile(h["pa"], 2)}
    report = agreement_table({"a": big}, big, bootstrap=0, pairs=[])
    (row,) = judge_table(report, {"a": {"pa": np.ones(16, bool)}}, ["c1", "c2", "c3", "c4"] * 4)
    assert row.small == {"pa", "overall"}  # 16 items, but only 4 clips
    (row,) = judge_table(report, {"a": {"pa": np.ones(16, bool)}}, [f"c{i}" for i in range(16)])
    assert row.small == frozenset()


def test_coverage_counts_failed_unparsable_and_not_run():
    items, rows = _data()
    cov = {(c.judge, c.axis): c for c in judge_coverage(rows, items)}
    easy_pa, easy_ia = cov["easy", "pa"], cov["easy", "ia"]
    assert (easy_pa.items, easy_pa.scored, easy_pa.failed, easy_pa.unparsable, easy_pa.not_run) == (
        40, 12, 8, 0, 20)
    assert (easy_ia.scored, easy_ia.failed, easy_ia.unparsable, easy_ia.not_run) == (12, 0, 8, 20)


def test_cli_judges_prints_coverage(tmp_path):
    items, rows = _data()
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add(rows)
    res = CliRunner().invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0",
                                   "--no-calibrated"])
    assert res.exit_code == 0, res.output
    assert "unscored" in res.output and "not compared" in res.output
    line = next(ln for ln in res.output.splitlines() if ln.strip().startswith("easy"))
    assert line.split()[1:3] == ["24", "56"]


def test_a_judge_that_missed_a_few_items_is_still_compared():
    # One failed request of 40 left the exact judge alone in its "same items" group: the noisy judge,
    # scored on all of them, was marked best on PA though the other matched every label.
    rng = np.random.default_rng(1)
    h = {"pa": rng.integers(1, 6, 40).astype(float)}
    exact = h["pa"].copy()
    exact[7] = np.nan  # one failed request
    noisy = np.clip(h["pa"] + rng.choice([-1.0, 0.0, 1.0], 40), 1, 5)
    pred = {"exact": {"pa": exact}, "noisy": {"pa": noisy}}
    report = agreement_table(pred, h, bootstrap=0, pairs=[])
    scored = {j: {"pa": np.isfinite(p["pa"])} for j, p in pred.items()}
    rows = {r.judge: r for r in judge_table(report, scored)}
    assert ("pa", "r") in rows["exact"].best and ("pa", "mse") in rows["exact"].best
    assert "pa" in rows["exact"].compared and "pa" in rows["noisy"].compared
    assert not rows["noisy"].best & {("pa", "r"), ("pa", "mse")}
    # Half of the items is still another set of rollouts: not compared.
    half = {"pa": np.where(np.arange(40) < 20, h["pa"], np.nan)}
    report = agreement_table({**pred, "half": half}, h, bootstrap=0, pairs=[])
    scored = {j: {"pa": np.isfinite(p["pa"])} for j, p in {**pred, "half": half}.items()}
    rows = {r.judge: r for r in judge_table(report, scored)}
    assert rows["half"].compared == frozenset() and not rows["half"].best


def test_judge_table_without_masks_takes_other_counts_for_other_items():
    # Without `scored`, masks stand for counts; judges of other counts made compared_group broadcast
    # arrays of two lengths ("operands could not be broadcast").
    h = {"pa": np.array([1.0, 2, 3, 4, 5] * 8)}
    short = h["pa"].copy()
    short[3] = np.nan
    report = agreement_table({"a": {"pa": h["pa"]}, "b": {"pa": short}}, h, bootstrap=0, pairs=[])
    rows = {r.judge: r for r in judge_table(report)}
    assert "pa" in rows["a"].compared and "pa" not in rows["b"].compared


def _judged(item, name, rubric, value, status="ok", model="m"):
    config = {"backend": "mock", "model": model, "rubric": {"id": rubric, "version": "1", "digest": rubric}}
    return ResultRow(item_id=item, metric=f"judge:{name}:{rubric}", config_hash=f"{name}-{model}-{rubric}",
                     version="1", status=status, value=value if status == "ok" else None,
                     error=None if status == "ok" else "boom", config=config)


def test_coverage_counts_every_rubric_not_only_pa_and_ia():
    # 'full' also judged sa_vlm1 with the same settings: 30 scored, 5 failed, 5 never asked; 'vlm' judged
    # pla_physical_commonsense only (no PA/IA), on 10 items. Only PA and IA had lines (audit reportdata F3).
    items, rows = _data()
    rows = [_judged(r.item_id, r.metric.split(":")[1], r.metric.split(":")[2], r.value, r.status)
            for r in rows]
    for k, it in enumerate(items):
        if k < 30:
            rows.append(_judged(it.item_id, "full", "sa_vlm1", 4.0))
        elif k < 35:
            rows.append(_judged(it.item_id, "full", "sa_vlm1", None, "error"))
        if k < 10:
            rows.append(_judged(it.item_id, "vlm", "pla_physical_commonsense", 0.5, model="other"))
    cov = {(c.judge, c.axis): c for c in judge_coverage(rows, items)}
    sa = cov["full", "sa_vlm1"]
    assert (sa.items, sa.scored, sa.failed, sa.unparsable, sa.not_run) == (40, 30, 5, 0, 5)
    pla = cov["vlm", "pla_physical_commonsense"]
    assert (pla.scored, pla.failed, pla.not_run) == (10, 0, 30)
    assert cov["easy", "pa"].scored == 12  # PA and IA as before
    assert sorted(cov) == sorted([("easy", "pa"), ("easy", "ia"), ("full", "pa"), ("full", "ia"),
                                  ("full", "sa_vlm1"), ("vlm", "pla_physical_commonsense")])
