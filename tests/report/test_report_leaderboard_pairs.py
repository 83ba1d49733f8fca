"""`leaderboard generators` and the report's leaderboard on generators scored on different clips: the
warning, --matched, --pair and every pair's P(a > b) (audit abcompare F1, F2, F4, F6)."""

import csv
import json

import numpy as np
import pytest
from _report_data import stored_suite
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.report import ReportInput, generator_board, label_scores, write_leaderboard
from robojudge.report._label_sections import generators_section
from robojudge.report._leaderboard import leaderboard_markdown
from robojudge.store import ResultRow
from robojudge.suite import Item

_RNG = np.random.default_rng(1)
BASE = _RNG.integers(1, 5, size=30)


def _items(mode):
    """``disjoint``: old on clips 0-19, new on 10-29 (20-29 easy), alike on the 10 shared clips;
    ``noclip``: both on every clip, new one better on every third, and no clip_id."""
    items = []
    if mode == "disjoint":
        base = BASE.copy()
        base[20:] = 5
        for gen, clips in (("old", range(20)), ("new", range(10, 30))):
            items += [Item(item_id=f"ep{c:02d}-{gen}", video="v.mp4", clip_id=f"ep{c:02d}", source="s",
                           generator=gen, labels={"pa": int(base[c]), "ia": int(base[c])}) for c in clips]
    else:
        for c in range(30):
            for gen, up in (("old", 0), ("new", int(c % 3 == 0))):
                items.append(Item(item_id=f"ep{c:02d}-{gen}", video="v.mp4", source="s", generator=gen,
                                  labels={"pa": int(BASE[c]) + up, "ia": int(BASE[c]) + up}))
    return items


def _stored(tmp_path, mode):
    items = _items(mode)
    rows = [ResultRow(item_id=it.item_id, metric="smooth", config_hash="h", version="1", status="ok",
                      value=1.0) for it in items]
    return stored_suite(tmp_path, items, rows)


def test_cli_warns_of_generators_on_different_clips_and_matched_ranks_them_alike(tmp_path):
    manifest, db = _stored(tmp_path, "disjoint")
    runner = CliRunner()
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "200",
                              "--out", str(tmp_path / "lb")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "Warning: new and old share 10 of 30 clips: their means are over different items." in said
    assert "--matched" in said
    md = " ".join((tmp_path / "lb" / "leaderboard.md").read_text().split())
    assert "Warning: new and old share 10 of 30 clips" in md
    with (tmp_path / "lb" / "leaderboard_pairs.csv").open() as f:
        pairs = list(csv.DictReader(f))
    assert {(r["target"], r["a"], r["b"], r["shared_clips"], r["clips_a"], r["matched"]) for r in pairs} == {
        (t, "new", "old", "10", "20", "False") for t in ("pa", "ia", "overall")}

    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "200", "--matched",
                              "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["matched"] and data["matched_clips"] == {"pa": 10, "ia": 10}
    ranks = [e["targets"]["overall"]["rank"] for e in data["entries"]]
    assert ranks == [1, 1]  # alike on the shared clips: a tie
    scores = {e["targets"]["overall"]["score"] for e in data["entries"]}
    assert len(scores) == 1 and abs(scores.pop() - BASE[10:20].mean()) < 1e-9
    assert data["notes"][0].startswith("Matched: each generator's mean is the mean of its clip means")


def test_cli_pair_gives_the_paired_difference_and_json_every_pair(tmp_path):
    manifest, db = _stored(tmp_path, "disjoint")
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "200", "--json",
                                   "--pair", "new,old"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    (paired,) = data["paired"]
    overall = paired["targets"]["overall"]
    assert (paired["a"], paired["b"], overall["difference"], overall["clips"], overall["prob"]) == (
        "new", "old", 0.0, 10, 0.5)
    assert {"target": "overall", "a": "new", "b": "old", "prob": 1.0} in data["pairs"]
    assert data["coverage"][0]["shared"] == 10
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--pair", "new,nobody"])
    assert res.exit_code == 2 and "no generator 'nobody'" in res.output and "new, old" in res.output
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--pair", "new"])
    assert res.exit_code == 2 and "A,B" in res.output


def test_no_shared_clip_id_is_named_with_how_to_pair(tmp_path):
    manifest, db = _stored(tmp_path, "noclip")
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "200",
                                   "--pair", "new,old"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    # Without clip_id each item is its own cluster: "items", and no --matched hint (it would rank nobody).
    assert ("Warning: new and old share no clip (their 60 items have no clip_id, so each stands alone), so "
            "they are compared as independent samples (unpaired).") in said
    assert "same clip_id" in said and "--matched" not in said
    assert "new and old share no scored clip, so there is no paired difference" in said


def test_report_section_warns_and_lists_every_pair(tmp_path):
    items = _items("disjoint")
    sec = generators_section(ReportInput([], items, lambda m: True, bootstrap=100))
    board, pairs = sec.tables
    assert "Warning: new and old share 10 of 30 clips" in board.note
    assert [(r[0].text, r[1].text, r[2].text, r[4].text) for r in pairs.rows] == [
        (t, "new", "old", "10") for t in ("PA", "IA", "Overall")]


def test_matched_files_say_so(tmp_path):
    items = _items("disjoint")
    board = generator_board(items, label_scores(items), bootstrap=100, matched=True)
    write_leaderboard(board, tmp_path)
    md = " ".join((tmp_path / "leaderboard.md").read_text().split())
    assert "Matched: each generator's mean is the mean of its clip means" in md and "Warning" not in md


def _metric_store(tmp_path, metric):
    """Both generators on 30 clips; new's value is old's + 0.02 + N(0, 0.005) on every clip (old ~
    U(0.3, 0.9), as the audit's imported metric)."""
    rng = np.random.default_rng(5)
    items, rows = [], []
    for c in range(30):
        v = rng.uniform(0.3, 0.9)
        for gen, value in (("old", v), ("new", v + 0.02 + rng.normal(0, 0.005))):
            iid = f"ep{c:02d}-{gen}"
            items.append(Item(item_id=iid, video="v.mp4", clip_id=f"ep{c:02d}", source="s", generator=gen))
            rows.append(ResultRow(item_id=iid, metric=metric, config_hash="h", version="1", status="ok",
                                  value=value))
    return stored_suite(tmp_path, items, rows)


def test_a_stored_metric_ranks_generators_by_its_direction_with_a_paired_difference(tmp_path):
    # Higher is better: new ahead; the marginal intervals overlap, the paired difference does not reach 0.
    manifest, db = _metric_store(tmp_path, "uniform_random")
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--scores",
                                   "metric:uniform_random", "--bootstrap", "500", "--json",
                                   "--pair", "new,old"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["higher_is_better"] and [e["generator"] for e in data["entries"]] == ["new", "old"]
    diff = data["paired"][0]["targets"]["overall"]
    assert diff["low"] < diff["difference"] < diff["high"] and abs(diff["difference"] - 0.02) < 0.003
    assert 0 < diff["low"] < 0.02 < diff["high"]
    assert diff["prob"] == 1.0 and diff["clips"] == 30
    new, old = (e["targets"]["overall"] for e in data["entries"])
    assert new["low"] < old["high"]  # (the per-generator intervals alone would not tell them apart)


def test_a_lower_is_better_metric_ranks_the_lower_mean_first(tmp_path):
    manifest, db = _metric_store(tmp_path, "pixel_frame_consistency")
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--scores",
                                   "metric:pixel_frame_consistency", "--bootstrap", "500", "--json",
                                   "--pair", "new,old"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert not data["higher_is_better"]
    assert [e["generator"] for e in data["entries"]] == ["old", "new"]  # old is 0.02 lower: better
    old, new = (e["targets"]["overall"] for e in data["entries"])
    assert old["score"] < new["score"] and old["low"] <= old["score"] <= old["high"]
    diff = data["paired"][0]["targets"]["overall"]
    assert abs(diff["difference"] - 0.02) < 0.003 and diff["prob"] == 0.0  # new - old, and new is worse
    assert 0 < diff["low"] < diff["high"]
    assert {"target": "overall", "a": "old", "b": "new", "prob": 1.0} in data["pairs"]
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--scores",
                                   "metric:pixel_frame_consistency", "--bootstrap", "100"],
                             env={"COLUMNS": "200"})
    assert "Lower is better: the lowest mean ranks first" in " ".join(res.output.split())


def test_one_failed_row_of_a_balanced_suite_is_a_note_not_a_warning(tmp_path):
    # 12 clips x 2 generators x 3 rollouts, one of 72 rows failed: matching would move 2.6% of beta's mean
    # (one clip with 2 rollouts instead of 3). That printed "Warning: ..." and the --matched hint.
    items, rows = [], []
    for c in range(12):
        for gen in ("alpha", "beta"):
            for r in range(3):
                iid = f"c{c}-{gen}-{r}"
                items.append(Item(item_id=iid, video="v.mp4", clip_id=f"c{c}", source="s", generator=gen,
                                  labels={"pa": 1 + (c + r) % 5, "ia": 1 + (c + r) % 5}))
                failed = iid == "c3-beta-1"
                rows.append(ResultRow(item_id=iid, metric="iq1_psnr", config_hash="h", version="4",
                                      status="error" if failed else "ok", value=None if failed else 20.0 + c,
                                      error="x" if failed else None))
    manifest, db = stored_suite(tmp_path, items, rows)
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "100", "--scores",
                                   "metric:iq1_psnr"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert ("Note: beta and alpha share all 12 clips; beta has 2-3 and alpha 3 scored rollouts per clip: "
            "their means are over different items.") in said
    assert "Warning" not in said and "--matched" not in said
    data = json.loads(CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "100",
                                               "--scores", "metric:iq1_psnr", "--json"]).output)
    (cov,) = {(c["moved"], c["unit"]) for c in data["coverage"]}
    assert abs(cov[0] - (0.5 * (11 * abs(3 / 35 - 1 / 12) + abs(2 / 35 - 1 / 12)))) < 1e-12
    assert cov[1] == "clips"


def test_metric_scores_name_a_set_level_metric_and_the_installed_version_first():
    from robojudge.metrics import get_metric
    from robojudge.report._score_sources import metric_scores

    items = [Item(item_id=f"i{k}", video="v.mp4", generator=g) for k, g in enumerate(["a", "b", "a", "b"])]
    installed = get_metric("iq1_psnr").version
    rows = [ResultRow(item_id=it.item_id, metric="iq1_psnr", config_hash="h", version=v, status="ok",
                      value=30.0) for it in items for v in ("3", installed)]
    # iq1_fvd is stored once per group: it was reported missing, with advice to score it again.
    rows.append(ResultRow(item_id="set:all", metric="iq1_fvd", config_hash="h", version="2", status="ok",
                          value=123.0))

    def direction(metric):
        return get_metric(metric).higher_is_better

    with pytest.raises(ValueError) as info:
        metric_scores(rows, items, direction, "iq1_fvd")
    assert str(info.value).startswith("iq1_fvd is a set-level metric (one value per group of items")
    assert "cannot rank generators item by item" in str(info.value)
    assert "score it first" not in str(info.value)
    # Two versions: the example names the installed one (v3 sorted first and was the example).
    with pytest.raises(ValueError) as info:
        metric_scores(rows, items, direction, "iq1_psnr")
    said = str(info.value)
    assert f"iq1_psnr [v{installed}], iq1_psnr [v3]" in said
    assert said.endswith(f"'metric:iq1_psnr [v{installed}]'")


def test_a_metric_board_says_what_its_overall_and_pairs_are(tmp_path):
    # Audit aggedge F7: a metric's board was headed "Overall = (PA + IA) / 2 (Table 8)", and its pairs "the
    # upper generator scores higher" two lines below "every P(a > b) counts the lower score as the better".
    manifest, db = _metric_store(tmp_path, "pixel_frame_consistency")
    out = tmp_path / "lb"
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--scores",
                                   "metric:pixel_frame_consistency", "--bootstrap", "200", "-o", str(out)],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    md = (out / "leaderboard.md").read_text()
    assert "(PA + IA) / 2" not in md and "Table 8" not in md
    assert "Overall = the mean of pixel_frame_consistency itself per generator" in md
    assert "scores higher" not in md and "the upper generator scores lower (the better here)" in md
    assert "P(upper scores lower (the better here))" in " ".join(res.output.split())
    # Labels keep Table 8's wording.
    items = _items("same")
    board = generator_board(items, label_scores(items), bootstrap=50)
    text = leaderboard_markdown(board)
    assert "Overall = (PA + IA) / 2 per generator (RoboJudge Table 8)" in text and "scores higher" in text

def test_a_metric_stored_at_an_older_version_only_is_ranked_with_its_version_named(tmp_path):
    # An upgrade audit: a store upgraded but not rescored holds iq1_psnr version 1 only; the terminal
    # leaderboard ranked by it without naming the version (the report's summary did).
    from robojudge.metrics import get_metric

    installed = get_metric("iq1_psnr").version
    items = [Item(item_id=f"c{c}-{g}", video="v.mp4", clip_id=f"c{c}", source="s", generator=g)
             for c in range(4) for g in ("alpha", "beta")]
    rows = [ResultRow(item_id=it.item_id, metric="iq1_psnr", config_hash="h", version="1", status="ok",
                      value=20.0 + k) for k, it in enumerate(items)]
    manifest, db = stored_suite(tmp_path, items, rows)
    args = ["generators", str(manifest), "--db", db, "--bootstrap", "50", "--scores", "metric:iq1_psnr"]
    res = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    said = " ".join(res.output.split())
    assert res.exit_code == 0, res.output
    assert ("iq1_psnr read at version 1, the only one stored; this robojudge computes version "
            f"{installed}") in said
    data = json.loads(CliRunner().invoke(app, [*args, "--json"]).output)
    assert data["version_note"].startswith("iq1_psnr read at version 1")
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "lb")])
    assert "read at version 1" in (tmp_path / "lb" / "leaderboard.md").read_text()
