"""Best-of-N on a hand-worked table: picks, ties, skipped groups, regret, top-1 and the random pick.

The table (score, label) per candidate, groups keyed by (clip_id, prompt):

  G1 (c1, p1): a (4, 3), b (2, 5), c (3, 4)
      pick a (label 3); random = (3 + 5 + 4) / 3 = 4; oracle 5; regret 2; top-1 0; random top-1 1/3
  G2 (c1, p2): d (5, 4), e (1, 2)
      pick d (label 4); random 3; oracle 4; regret 0; top-1 1; random top-1 1/2
  G3 (c2, p1): h (3, 2), f (3, 5), g (unscored, 5), i (1, 1)
      f and h tie at 3: the smaller id, f, is picked (label 5); g is never picked (no score);
      random = (2 + 5 + 5 + 1) / 4 = 3.25; oracle 5; regret 0; top-1 1 (f is at the best label, as
      g is); random top-1 2/4
  G4 (c3, p1): j (2, 3)                       -> left out: one candidate
  G5 (c4, p1): k (unscored, 2), l (unscored, 4) -> left out: no candidate scored
  G6 (c5, p1): m (1, 2), n (2, unlabelled)      -> picks n, left out: unlabelled candidate

Over G1-G3:
  selected      = (3 + 4 + 5) / 3      = 4
  random        = (4 + 3 + 3.25) / 3   = 3.41667
  oracle        = (5 + 4 + 5) / 3      = 4.66667
  gain          = 4 - 3.41667          = 0.58333
  regret        = (2 + 0 + 0) / 3      = 0.66667
  random_regret = (1 + 1 + 1.75) / 3   = 1.25
  top1          = (0 + 1 + 1) / 3      = 0.66667
  random_top1   = (1/3 + 1/2 + 1/2) / 3 = 4/9
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from robojudge.meta import ClusterBootstrap
from robojudge.select import (
    best_of_n,
    parse_group,
    pick_group,
    pick_index,
    selection_scores,
    summarize,
    summary_text,
    write_picks,
)
from robojudge.store import ResultRow
from robojudge.suite import Item

NAN = math.nan
# group -> [(item id, score, label)]
TABLE = {
    ("c1", "p1"): [("a", 4, 3), ("b", 2, 5), ("c", 3, 4)],
    ("c1", "p2"): [("d", 5, 4), ("e", 1, 2)],
    ("c2", "p1"): [("h", 3, 2), ("f", 3, 5), ("g", NAN, 5), ("i", 1, 1)],
    ("c3", "p1"): [("j", 2, 3)],
    ("c4", "p1"): [("k", NAN, 2), ("l", NAN, 4)],
    ("c5", "p1"): [("m", 1, 2), ("n", 2, NAN)],
}
GENERATOR = {i: "wm-a" if i in "adfjkm" else "wm-b" for cands in TABLE.values() for i, _, _ in cands}
EXPECTED = {
    "selected": 4.0,
    "random": 10.25 / 3,
    "oracle": 14 / 3,
    "gain": 4.0 - 10.25 / 3,
    "regret": 2 / 3,
    "random_regret": 1.25,
    "top1": 2 / 3,
    "random_top1": 4 / 9,
}


def _picks() -> list:
    out = []
    for key, cands in TABLE.items():
        ids = [c[0] for c in cands]
        out.append(pick_group(key, ids, [c[1] for c in cands], [c[2] for c in cands]))
    return out


def test_the_pick_is_the_highest_score_and_ties_go_to_the_smallest_item_id() -> None:
    assert pick_index(["a", "b", "c"], [4, 2, 3]) == 0
    assert pick_index(["h", "f", "g", "i"], [3, 3, NAN, 1]) == 1  # f < h
    assert pick_index(["z", "y"], [NAN, NAN]) is None
    assert pick_index(["b", "a"], [-1.0, NAN]) == 0  # an unscored candidate is never picked


def test_scores_within_the_tolerance_tie() -> None:
    # The calibrated judge's last digits are noise: b won by 1e-8 and the pick counted as no tie.
    scores = [3.0, 3.0 - 1e-8, 2.0]
    assert pick_index(["b", "a", "c"], scores) == 0
    assert pick_index(["b", "a", "c"], scores, tolerance=1e-4) == 1
    pick = pick_group(("g",), ["b", "a", "c"], scores, [3, 3, 3], tolerance=1e-4)
    assert (pick.item_id, pick.tied, pick.score) == ("a", 2, 3.0 - 1e-8)
    with pytest.raises(ValueError, match="tolerance"):
        pick_index(["a"], [1.0], tolerance=math.nan)


def test_each_group_against_the_hand_worked_values() -> None:
    g1, g2, g3, g4, g5, g6 = _picks()
    assert (g1.item_id, g1.label, g1.random_label, g1.oracle_label) == ("a", 3, 4, 5)
    assert (g1.regret, g1.top1) == (2, 0)
    assert g1.random_top1 == pytest.approx(1 / 3)
    assert (g2.item_id, g2.random_label, g2.regret, g2.top1, g2.random_top1) == ("d", 3, 0, 1, 0.5)
    assert (g3.item_id, g3.tied, g3.n, g3.n_scored) == ("f", 2, 4, 3)
    assert (g3.random_label, g3.regret, g3.top1, g3.random_top1) == (3.25, 0, 1, 0.5)
    assert [g.skipped for g in (g1, g2, g3, g4, g5, g6)] == [
        "", "", "", "one candidate", "no candidate scored", "unlabelled candidate"]
    assert g4.item_id == "j" and g5.item_id is None and g6.item_id == "n"
    assert math.isnan(g6.regret)


def test_the_summary_against_the_hand_worked_means() -> None:
    s = summarize(_picks(), bootstrap=0)
    assert (s.groups, s.evaluated, s.ties) == (6, 3, 1)
    assert s.skipped == {"one candidate": 1, "no candidate scored": 1, "unlabelled candidate": 1}
    assert s.mean_n == pytest.approx(3.0)
    for name, value in EXPECTED.items():
        assert s.stats[name].value == pytest.approx(value), name
        assert math.isnan(s.stats[name].low)


def test_the_intervals_are_percentiles_of_means_over_resampled_groups() -> None:
    picks = _picks()
    s = summarize(picks, bootstrap=400, seed=3, level=0.9)
    done = [p for p in picks if p.evaluated]
    counts = ClusterBootstrap(np.arange(len(done)), n_replicates=400, seed=3).counts
    regrets = []
    for row in counts:  # each replicate: the groups drawn, as often as drawn
        drawn = [p for p, c in zip(done, row, strict=True) for _ in range(int(c))]
        regrets.append(np.mean([p.regret for p in drawn]))
    assert s.stats["regret"].low == pytest.approx(np.quantile(regrets, 0.05))
    assert s.stats["regret"].high == pytest.approx(np.quantile(regrets, 0.95))
    assert s.stats["regret"].low <= EXPECTED["regret"] <= s.stats["regret"].high


def test_no_evaluated_group_gives_nan_not_zero() -> None:
    s = summarize([pick_group(("x",), ["a"], [1.0], [3.0])])
    assert s.evaluated == 0 and math.isnan(s.stats["regret"].value)


# -- over a suite's items and stored rows ------------------------------------------------------------


def _suite() -> tuple[list[Item], list[ResultRow]]:
    items, rows = [], []
    for (clip, prompt), cands in TABLE.items():
        for item_id, score, label in cands:
            labels = None if math.isnan(label) else {"pa": int(label), "ia": int(label)}
            items.append(Item(item_id=item_id, video=f"{item_id}.mp4", clip_id=clip, prompt_variant=prompt,
                              instruction="stack the cups", labels=labels, generator=GENERATOR[item_id]))
            for axis in ("pa", "ia"):
                if not math.isnan(score):
                    rows.append(ResultRow(item_id, f"judge:qwen:{axis}", "h", "1", "ok", float(score)))
            # a lower-is-better metric: its negated score, so it picks what the judge picks
            if not math.isnan(score):
                rows.append(ResultRow(item_id, "jitter", "m", "1", "ok", -float(score)))
    return items, rows


def test_best_of_n_by_a_stored_judge_matches_the_hand_worked_table() -> None:
    items, rows = _suite()
    res = best_of_n(items, rows, by="judge:qwen", group="clip_id,prompt", bootstrap=0)
    assert res.label == "overall" and res.group_by == ("clip_id", "prompt")
    assert [p.item_id for p in res.picks] == ["a", "d", "f", "j", None, "n"]
    assert res.summary is not None
    for name, value in EXPECTED.items():
        assert res.summary.stats[name].value == pytest.approx(value), name
    assert res.pick_counts() == {"wm-a": 4, "wm-b": 1}  # a, d, f, j and n


def test_picks_made_by_the_tie_rule_are_counted_apart() -> None:
    # A judge that gives every rollout the same score "preferred" wm-a in every group (smallest item id).
    items, rows = _suite()
    flat = [dataclasses.replace(r, value=3.0) if r.metric.startswith("judge:") else r for r in rows]
    res = best_of_n(items, flat, by="judge:qwen", group="clip_id,prompt", bootstrap=0)
    # a, d, f and m by the tie rule; j alone in its group, no tie.
    assert res.pick_counts() == {"wm-a": 5} and res.pick_counts(tied=True) == {"wm-a": 4}
    assert res.to_dict()["tie_picks_per_generator"] == {"wm-a": 4}
    assert summary_text(res).endswith(
        "Picks per generator: wm-a 5; of these, made by the tie rule (smallest item id): wm-a 4.")
    res = best_of_n(items, rows, by="judge:qwen", group="clip_id,prompt", bootstrap=0)
    assert res.pick_counts(tied=True) == {"wm-a": 1}  # f: tied with g at 3


def test_a_lower_is_better_metric_picks_its_smallest_value() -> None:
    items, rows = _suite()
    res = best_of_n(items, rows, by="jitter", bootstrap=0, higher_is_better=lambda m: m != "jitter")
    assert [p.item_id for p in res.picks] == ["a", "d", "f", "j", None, "n"]
    assert res.picks[0].score == 4.0 and res.sign == -1.0  # oriented: higher is better
    assert res.to_dict()["picks"][0]["score"] == -4.0  # written as stored


def test_a_direction_is_given_only_for_a_metric_the_registry_does_not_know() -> None:
    items, rows = _suite()
    registered = best_of_n(items, rows, by="jitter", bootstrap=0, higher_is_better=lambda m: False)

    def unknown(metric: str) -> bool:
        raise KeyError(metric)

    given = best_of_n(items, rows, by="jitter", bootstrap=0, higher_is_better=unknown, orient=False)
    assert [p.item_id for p in given.picks] == [p.item_id for p in registered.picks]
    # before: --higher-is-better reversed a registered lower-is-better metric without a word, and was
    # ignored for the judge, the labels and the calibrated judge
    with pytest.raises(ValueError, match="metric 'jitter' is registered as lower is better; "
                                         "--higher-is-better is only for a stored metric"):
        best_of_n(items, rows, by="jitter", bootstrap=0, higher_is_better=lambda m: False, orient=True)
    for by, source in (("judge:qwen", "judge"), ("judge:qwen:pa", "judge"), ("labels:pa", "labels"),
                       ("calibrated", "calibrated")):
        with pytest.raises(ValueError, match=f"--lower-is-better is only for a stored metric the registry "
                                             f"does not know; {source} scores are always higher-is-better"):
            best_of_n(items, rows, by=by, bootstrap=0, orient=False)


def test_the_labels_as_selector_have_no_regret() -> None:
    items, rows = _suite()
    res = best_of_n(items, rows, by="labels:pa", bootstrap=0)
    assert res.summary is not None and res.label == "pa"
    assert res.summary.stats["regret"].value == 0.0 and res.summary.stats["top1"].value == 1.0


def test_without_labels_there_are_picks_and_no_summary() -> None:
    items, rows = _suite()
    bare = [it.model_copy(update={"labels": None}) for it in items]
    res = best_of_n(bare, rows, by="judge:qwen:pa", bootstrap=0)
    assert res.summary is None and res.label is None
    assert [p.item_id for p in res.picks] == ["a", "d", "f", "j", None, "n"]
    # G4 has one candidate: picked, but nothing was chosen there, and the summary says so.
    assert "1 of the groups has one rollout, so nothing is chosen there" in summary_text(res)


@pytest.mark.parametrize(
    ("by", "message"),
    [
        ("nothing", "no stored results under that metric id"),
        ("judge:other", "no scored rows of judge 'other'"),
        ("labels:both", "the axis must be one of pa, ia, overall"),
        ("jitter", "direction of metric 'jitter' is unknown"),
    ],
)
def test_bad_sources_say_what_is_wrong(by: str, message: str) -> None:
    items, rows = _suite()

    def unknown(metric: str) -> bool:
        raise KeyError(metric)

    with pytest.raises(ValueError, match=message):
        selection_scores(by, rows, items, higher_is_better=unknown)


def test_a_judge_with_one_axis_has_no_overall_to_pick_by() -> None:
    items, rows = _suite()
    pa_only = [r for r in rows if r.metric != "judge:qwen:ia"]
    with pytest.raises(ValueError, match="no IA score on this suite, so no Overall; pick by judge:qwen:pa"):
        best_of_n(items, pa_only, by="judge:qwen")
    assert best_of_n(items, pa_only, by="judge:qwen:pa").picks[0].item_id == "a"
    # its rows for other items only: no axis to advise (it advised judge:qwen:pa, which could not work)
    elsewhere = [dataclasses.replace(r, item_id="z") if r.metric.startswith("judge:qwen") else r
                 for r in rows]
    with pytest.raises(ValueError, match="judge 'qwen' has no score on any item of this suite"):
        best_of_n(items, elsewhere, by="judge:qwen")


def test_an_unknown_label_axis_is_refused() -> None:
    items, rows = _suite()
    with pytest.raises(ValueError, match="--label must be one of pa, ia, overall, got 'both'"):
        best_of_n(items, rows, by="judge:qwen", label="both")


def test_group_fields_are_checked() -> None:
    assert parse_group("clip_id, prompt") == ("clip_id", "prompt")
    assert parse_group(["meta.seed"]) == ("meta.seed",)
    with pytest.raises(ValueError, match="cannot group by 'colour'"):
        parse_group("clip_id,colour")
    with pytest.raises(ValueError, match="repeated"):
        parse_group("clip_id,clip_id")


def test_a_blank_meta_value_is_the_unset_group_as_in_export_and_report() -> None:
    # "", "  " and no key were three groups here and one unset group ('-') in results export and report
    # --by meta.KEY, so the picks were made within other groups than the tables show.
    items, rows = _suite()
    arms = {"a": "", "b": "  ", "c": None, "d": "left", "e": 3}
    marked = [it.model_copy(update={"meta": {} if arms[it.item_id] is None else {"arm": arms[it.item_id]}})
              for it in items if it.item_id in arms]
    res = best_of_n(marked, rows, by="judge:qwen", group="meta.arm", bootstrap=0)
    assert [p.group for p in res.picks] == [("(unset)",), ("left",), ("3",)]
    assert res.picks[0].item_id == "a"  # the highest score of a, b and c (4, 2 and 3), one group


def test_prompt_is_the_variant_else_the_instruction() -> None:
    items, rows = _suite()
    plain = [it.model_copy(update={"prompt_variant": None}) for it in items]
    res = best_of_n(plain, rows, by="judge:qwen", group="prompt", bootstrap=0)
    assert [p.group for p in res.picks] == [("stack the cups",)]  # one group: every candidate
    assert res.picks[0].item_id == "d"  # the highest score of all (5)


def test_picks_are_written_as_csv_and_json(tmp_path: Path) -> None:
    items, rows = _suite()
    res = best_of_n(items, rows, by="judge:qwen", bootstrap=100)
    write_picks(res, tmp_path / "picks.csv")
    with (tmp_path / "picks.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["item_id"] for r in table] == ["a", "d", "f", "j", "", "n"]
    assert table[0]["clip_id"] == "c1" and table[0]["prompt"] == "p1" and table[0]["regret"] == "2.0"
    assert [r["generator"] for r in table] == ["wm-a", "wm-a", "wm-a", "wm-a", "", "wm-b"]
    write_picks(res, tmp_path / "picks.json")
    data = json.loads((tmp_path / "picks.json").read_text())
    assert data["summary"]["stats"]["regret"]["value"] == pytest.approx(2 / 3)
    assert data["picks"][4]["item_id"] is None and data["picks"][5]["regret"] is None


def test_the_metric_calibrated_judge_can_pick() -> None:
    items, rows = _suite()
    # a metric that follows the labels: the calibrated judge learns it and picks the best-labelled rollouts
    rows = [r for r in rows if r.metric != "jitter"]
    for it in items:
        if it.labels is not None and it.labels.pa is not None:
            rows.append(ResultRow(it.item_id, "sharp", "s", "1", "ok", float(it.labels.pa)))
    res = best_of_n(items, rows, by="calibrated:pa", n_folds=2, bootstrap=0, higher_is_better=lambda m: True)
    assert res.described.startswith("metric-calibrated judge (pa")
    assert res.summary is not None and res.summary.evaluated == 4  # G5 is scored by the metric too
    assert res.summary.stats["regret"].value < res.summary.stats["random_regret"].value


# -- the command --------------------------------------------------------------------------------------


def test_the_command_prints_the_summary_and_writes_the_picks(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from robojudge.cli import app
    from robojudge.store import ResultStore

    items, rows = _suite()
    manifest = tmp_path / "suite.jsonl"
    for it in items:  # the manifest only needs the files to exist
        (tmp_path / it.video).write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add(rows)
    runner = CliRunner()
    out = tmp_path / "picks.csv"
    cmd = ["select", "best-of-n", str(manifest), "--db", db]
    res = runner.invoke(app, [*cmd, "--by", "judge:qwen", "--group", "clip_id,prompt", "--bootstrap", "200",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())  # as printed, whatever the width it was wrapped at
    assert "6 groups, 3 compared on overall labels" in text
    # G1 and G2 lie in clip c1, G3 in c2: a bootstrap over two clips gives no interval.
    assert "regret" in text and "0.667 " in text and "0.667 [" not in text
    assert "no intervals: the compared groups lie in 2 clips, and a bootstrap needs at least 3" in text
    assert ("Picks per generator: wm-a 4, wm-b 1; of these, made by the tie rule (smallest item id): "
            "wm-a 1.") in text
    assert out.exists() and len(out.read_text().splitlines()) == 1 + 6
    res = runner.invoke(app, [*cmd, "--by", "judge:nobody"])
    assert res.exit_code == 2 and "no scored rows of judge 'nobody'" in res.output
    res = runner.invoke(app, [*cmd, "--by", "judge:qwen", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["summary"]["evaluated"] == 3


def test_a_metric_spelt_as_the_leaderboard_spells_it_is_read() -> None:
    # `leaderboard generators --scores metric:ID` names a stored metric so; `select --by metric:ID` said it
    # was not stored, in a message that listed it among the stored metrics.
    items, rows = _suite()

    def lower(metric: str) -> bool:
        return metric != "jitter"

    bare = selection_scores("jitter", rows, items, higher_is_better=lower)
    spelt = selection_scores("metric:jitter", rows, items, higher_is_better=lower)
    np.testing.assert_array_equal(spelt.scores, bare.scores)
    assert spelt.sign == bare.sign == -1.0
    picked = [[p.item_id for p in best_of_n(items, rows, by=by, higher_is_better=lower).picks]
              for by in ("metric:jitter", "jitter")]
    assert picked[0] == picked[1] and len(picked[0]) > 3
