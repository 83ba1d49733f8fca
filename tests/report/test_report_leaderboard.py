import csv
from dataclasses import replace

import numpy as np
import pytest
from _report_data import stored_suite
from typer.testing import CliRunner

from robojudge.cli._leaderboard import app
from robojudge.report import (
    CALIBRATED,
    generator_board,
    judge_names,
    judge_scores,
    judges_report,
    label_scores,
    leaderboard_markdown,
    write_judges,
    write_leaderboard,
)
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

GENS = {"good": (5, 5), "mid": (3, 4), "bad": (1, 2)}


def _row(item, metric, value):
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status="ok", value=value)


def _data(n_clips=12):
    rng = np.random.default_rng(0)
    items, rows = [], []
    for c in range(n_clips):
        for g, (pa, ia) in GENS.items():
            iid = f"c{c}-{g}"
            items.append(Item(item_id=iid, video="v.mp4", clip_id=f"c{c}", source="s", generator=g,
                              labels={"pa": pa, "ia": ia}))
            rows.append(_row(iid, "smooth", pa + rng.normal(0, 0.3)))  # higher is better
            rows.append(_row(iid, "jitter", -ia + rng.normal(0, 0.3)))  # lower is better
            rows.append(_row(iid, "judge:vlm:pa", float(pa)))
            rows.append(_row(iid, "judge:vlm:ia", float(min(5, ia + 1))))
    return items, rows


def test_generator_board_from_labels_and_judge(tmp_path):
    items, rows = _data()
    board = generator_board(items, label_scores(items), bootstrap=200, seed=0)
    assert board.generators == ("good", "mid", "bad")
    assert board.entries[1].standings["overall"].score.value == pytest.approx(3.5)
    assert judge_names(rows) == ["vlm"]
    jb = generator_board(items, judge_scores(rows, items, "vlm"), bootstrap=0)
    assert jb.entries[0].standings["ia"].score.value == pytest.approx(5.0)
    with pytest.raises(ValueError):
        judge_scores(rows, items, "nobody")
    write_leaderboard(board, tmp_path)
    with (tmp_path / "leaderboard.csv").open() as f:
        got = list(csv.DictReader(f))
    assert [r["generator"] for r in got] == ["good", "mid", "bad"] and got[0]["overall_rank"] == "1"
    assert "| 1 | good |" in (tmp_path / "leaderboard.md").read_text()


def test_judges_table_marks_best_and_adds_calibrated(tmp_path):
    items, rows = _data()
    report, table, cal, _ = judges_report(rows, items, lambda m: m != "jitter", bootstrap=100, seed=0,
                                       n_folds=4)
    assert report.judges == ("vlm", CALIBRATED) and cal is not None
    assert cal.metrics == ("jitter", "smooth")
    by = {r.judge: r for r in table}
    assert ("pa", "r") in by["vlm"].best and ("pa", "mse") in by["vlm"].best  # perfect PA
    assert ("ia", "mse") in by[CALIBRATED].best  # the VLM is one point too generous on IA
    for t in ("pa", "ia", "overall"):
        for col in ("r", "acc", "mse"):
            assert any((t, col) in r.best for r in table)
    # Out-of-fold: no clip's items were predicted by a model trained on that clip.
    for cv in cal.folds.values():
        groups = np.array([it.clip_id for it in items])
        for f in range(cv.n_folds):
            assert not set(groups[cv.fold == f]) & set(groups[cv.fold != f])
    write_judges(table, report, tmp_path, note="note")
    md = (tmp_path / "judges.md").read_text()
    assert "**1.000" in md and CALIBRATED in md
    with (tmp_path / "judges.csv").open() as f:
        got = {r["judge"]: r for r in csv.DictReader(f)}
    assert got["vlm"]["pa_r_best"] == "True" and got["vlm"]["ia_mse_best"] == "False"


def test_no_vlm_judge_still_gives_calibrated_judge():
    items, rows = _data()
    rows = [r for r in rows if not r.metric.startswith("judge:")]
    report, table, _, _ = judges_report(rows, items, lambda m: m != "jitter", bootstrap=0)
    assert [r.judge for r in table] == [CALIBRATED]
    assert report.cells[CALIBRATED]["overall"].stats["pearson"].value > 0.8


def test_cli(tmp_path):
    items, rows = _data(n_clips=6)
    manifest, db = stored_suite(tmp_path, items, rows)
    runner = CliRunner()
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "100",
                              "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    assert "good" in res.output and (tmp_path / "lb" / "leaderboard.md").exists()
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--scores", "calibrated",
                              "--bootstrap", "50", "--folds", "3", "--json"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--scores", "bogus"])
    assert res.exit_code == 2
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "50", "--folds", "3",
                              "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    assert CALIBRATED in res.output and (tmp_path / "lb" / "judges.csv").exists()


def test_judges_table_flags_a_small_overall_like_the_leaderboard():
    from robojudge.report import judge_table
    from robojudge.report._leaderboard import small_standing

    # Six labelled items in six clips: PA and IA rest on 6 items each, the pooled Overall on 12
    # (item, axis) pairs; each axis is small, so the Overall, which needs both, is small too.
    items, rows = _data(n_clips=2)
    items = [it.model_copy(update={"clip_id": it.item_id}) for it in items]
    report, table, _, _ = judges_report(rows, items, lambda m: m != "jitter", calibrated=False, bootstrap=0)
    (vlm,) = table
    assert report.cells["vlm"]["overall"].n == 12
    assert vlm.small == {"pa", "ia", "overall"}
    assert {r.small for r in judge_table(report)} == {frozenset({"pa", "ia", "overall"})}
    board = generator_board(items, judge_scores(rows, items, "vlm"), bootstrap=0)
    # The leaderboard flags the same way (here per generator: 2 items each).
    assert all(small_standing(e, "overall") for e in board.entries)
    # One axis large, the other small: Overall is small.
    items, rows = _data(n_clips=4)  # 12 items in 4 clips
    rows = [r for r in rows if r.metric != "judge:vlm:ia" or r.item_id.startswith(("c0-", "c1-"))]
    _, (vlm,), _, _ = judges_report(rows, items, lambda m: m != "jitter", calibrated=False, bootstrap=0)
    assert vlm.n == {"pa": 12, "ia": 6}
    assert vlm.small == {"pa", "ia", "overall"}  # PA: 12 items but 4 clips
    items, rows = _data(n_clips=5)  # 15 items in 5 clips
    rows = [r for r in rows if r.metric != "judge:vlm:ia" or r.item_id.startswith(("c0-", "c1-", "c2-"))]
    _, (vlm,), _, _ = judges_report(rows, items, lambda m: m != "jitter", calibrated=False, bootstrap=0)
    assert vlm.n == {"pa": 15, "ia": 9}
    assert vlm.small == {"ia", "overall"}


def test_cli_marks_small_cells_and_says_why_the_calibrated_judge_is_missing(tmp_path):
    items, rows = _data(n_clips=1)  # one clip: every cell small, nothing to cross-validate on
    manifest, db = stored_suite(tmp_path, items, rows)
    runner = CliRunner()
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    good = next(line for line in res.output.splitlines() if " good " in line)
    assert good.count("\u2020") == 3  # PA, IA and Overall of 1 item each, as the --out table marks them
    assert "small n: fewer than 10 items or 5 clips" in res.output
    res = runner.invoke(app, ["generators", str(manifest), "--db", db, "--scores", "calibrated"])
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert "needs labelled items of at least 2 clips; the PA labels here come from 1" in said
    res = runner.invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0"])
    assert res.exit_code == 0, res.output  # the VLM judge is still compared
    said = " ".join(res.output.split())
    assert f"{CALIBRATED} left out: the calibrated judge scores each clip" in said
    no_judge = [r for r in rows if not r.metric.startswith("judge:")]
    with ResultStore(f"sqlite:///{tmp_path / 'm.sqlite'}") as store:
        store.add(no_judge)
    res = runner.invoke(app, ["judges", str(manifest), "--db", f"sqlite:///{tmp_path / 'm.sqlite'}"])
    assert res.exit_code == 2
    assert "no judge results to compare, and the calibrated judge" in " ".join(res.output.split())


def test_tiny_boards_print_only_what_there_is(tmp_path):
    # One item per generator, each in its own clip: no interval, so the key under the table must not
    # call one rough; one generator: no adjacent pair, where an empty pairs table was printed.
    items = [Item(item_id=g, video="v.mp4", clip_id=f"c{g}", source="s", generator=g,
                  labels={"pa": pa, "ia": pa}) for g, pa in (("gA", 5), ("gB", 3), ("gC", 1))]
    board = generator_board(items, label_scores(items), bootstrap=100)
    md = leaderboard_markdown(board)
    assert "\u2020 small n: fewer than 10 items or 5 clips, so the value is rough." in md
    assert "interval is rough" not in md and "## Adjacent pairs" in md
    alone = generator_board(items[:1], label_scores(items[:1]), bootstrap=100)
    assert alone.adjacent == () and "Adjacent pairs" not in leaderboard_markdown(alone)
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(db):
        pass
    for chosen, pairs in ((items, True), (items[:1], False)):
        manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in chosen))
        res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "100"])
        assert res.exit_code == 0, res.output
        said = " ".join(res.output.split())
        assert "so the value is rough" in said and "interval is rough" not in said
        assert ("adjacent pairs" in said) == pairs
    few, _ = _data(n_clips=4)
    scores = label_scores(few)  # the same labels in every clip: shift one clip, so resamples differ
    scores = {a: v + np.array([it.clip_id == "c0" for it in few]) for a, v in scores.items()}
    many = generator_board(few, scores, bootstrap=100)
    assert "so the interval is rough" in leaderboard_markdown(many)  # 4 clips: intervals, and small


def test_calibrated_board_warns_of_metrics_read_at_several_sizes(tmp_path):
    # The warning compared --scores with "metric-calibrated" (the judge's table name), not "calibrated",
    # so it never showed.
    import dataclasses
    import json

    items, rows = _data(n_clips=6)
    rows = [dataclasses.replace(r, details={"frame_size": "1280x720" if "good" in r.item_id else "320x256"})
            if r.metric == "smooth" else r for r in rows]
    manifest, db = stored_suite(tmp_path, items, rows)
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--scores", "calibrated",
                                   "--bootstrap", "0", "--json"])
    assert res.exit_code == 0, res.output
    assert "smooth was computed at different frame sizes" in json.loads(res.output)["warning"]


def _upgraded(rows, metric, new="2"):
    """``rows`` with ``metric`` also stored under version ``new`` (same values), written after them."""
    return [*rows, *(replace(r, version=new) for r in rows if r.metric == metric)]


def test_the_calibrated_judge_reads_one_version_of_a_metric_stored_under_two():
    from robojudge.report import calibrated_scores

    # Before, the earlier version's rows and an upgrade's rescore were two features of one metric: on
    # identical values it weighed twice, and the judge scored otherwise than on a fresh store.
    items, rows = _data()
    rows = [r for r in rows if not r.metric.startswith("judge:")]
    fresh = [replace(r, version="2") if r.metric == "smooth" else r for r in rows]
    hib = lambda m: m != "jitter"  # noqa: E731
    want = calibrated_scores(fresh, items, hib, n_folds=4)
    got = calibrated_scores(_upgraded(rows, "smooth"), items, hib, n_folds=4)
    for a in ("pa", "ia"):
        np.testing.assert_array_equal(got.scores[a], want.scores[a])
    assert want.metrics == ("jitter", "smooth") and want.left_out == ()
    assert got.metrics == ("jitter", "smooth [v2]") and got.left_out == ("smooth v1",)
    # The installed version where it is stored, written first or not.
    installed = calibrated_scores(_upgraded(rows, "smooth"), items, hib, n_folds=4,
                                  config_key=lambda m, values: ("h", "1"))
    assert installed.metrics == ("jitter", "smooth [v1]") and installed.left_out == ("smooth v2",)


def test_leaderboard_judges_reads_the_installed_version_and_names_the_one_left_out(tmp_path):
    from robojudge.metric_info import registry_config_key

    items, rows = _data(n_clips=6)
    chash, version = registry_config_key("pixel_frame_consistency", None)
    # The installed version stored first, an older one's rows after it (another robojudge on the store).
    now = [replace(r, metric="pixel_frame_consistency", config_hash=chash, version=version)
           for r in rows if r.metric == "smooth"]
    older = [replace(r, version="1") for r in now]
    assert version != "1"
    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with ResultStore(db) as store:
        store.add([r for r in rows if r.metric != "smooth"] + now)
        store.add(older)
    res = CliRunner().invoke(app, ["judges", str(manifest), "--db", db, "--bootstrap", "0", "--folds", "3"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert f"on jitter, pixel_frame_consistency [v{version}];" in said
    assert ("One version per metric, the installed one where stored; left out: pixel_frame_consistency "
            "v1.") in said
    # Without the registry's config_key (from Python), the version written last is read.
    from robojudge.report import calibrated_scores

    with ResultStore(db) as store:
        stored = store.rows()
    cal = calibrated_scores(stored, items, lambda m: m != "jitter", n_folds=3)
    assert cal.left_out == (f"pixel_frame_consistency v{version}",)


def test_generators_and_best_of_n_read_the_installed_version_of_a_metric_too(tmp_path):
    # A review: only leaderboard judges and the report read the installed version of a metric stored
    # under two; leaderboard generators --scores calibrated and select best-of-n --by calibrated read the
    # version written last (here an older robojudge's noise) and ranked the worst generator first.
    import json

    from robojudge.cli import app as root
    from robojudge.metric_info import registry_config_key

    chash, version = registry_config_key("pixel_frame_consistency", None)
    assert version != "1"
    rng = np.random.default_rng(0)
    items, now, older = [], [], []
    for c in range(8):
        for g, (pa, ia) in {"good": (5, 5), "mid": (3, 4), "bad": (1, 2)}.items():
            iid = f"c{c}-{g}"
            items.append(Item(item_id=iid, video="v.mp4", clip_id=f"c{c}", source="s", generator=g,
                              labels={"pa": pa, "ia": ia}))
            now.append(ResultRow(iid, "pixel_frame_consistency", chash, version, "ok",
                                 (pa + ia) / 10 + rng.normal(0, 0.02)))
            noise = float(rng.uniform(0, 1))
            older.append(ResultRow(iid, "pixel_frame_consistency", chash, "1", "ok", noise))
    manifest, db = stored_suite(tmp_path, items, now + older)  # the old version's rows written last
    runner = CliRunner()
    res = runner.invoke(root, ["leaderboard", "generators", str(manifest), "--db", db, "--scores",
                               "calibrated", "--bootstrap", "0", "--folds", "4", "--json"])
    assert res.exit_code == 0, res.output
    ranks = {e["generator"]: e["targets"]["overall"]["rank"] for e in json.loads(res.stdout)["entries"]}
    assert ranks == {"good": 1, "mid": 2, "bad": 3}, ranks
    res = runner.invoke(root, ["select", "best-of-n", str(manifest), "--db", db, "--by", "calibrated",
                               "--group", "clip_id", "--folds", "4"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "left out: pixel_frame_consistency v1" in said and "Picks per generator: good 8" in said


def test_a_calibrated_board_names_what_the_judge_was_fit_on_in_every_output(tmp_path):
    # The generators board ranked by the calibrated judge said neither its features, the versions left
    # out, its penalty nor its folds, though `leaderboard judges` said all of them: the same command then
    # ranked otherwise after an upgrade, in the same words.
    import json

    items, rows = _data(n_clips=6)
    manifest, db = stored_suite(tmp_path, items, [*rows, *(replace(r, version="0") for r in rows
                                                           if r.metric == "smooth")])
    args = ["generators", str(manifest), "--db", db, "--scores", "calibrated", "--bootstrap", "0",
            "--folds", "3", "--alpha", "0.5"]
    sentence = (f"{CALIBRATED}: ordinal logistic regression (alpha 0.5, expected score) on jitter, "
                "smooth [v1]; out-of-fold scores from 3-fold cross-validation grouped by clip, no VLM. One "
                "version per metric, the installed one where stored; left out: smooth v0.")
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    assert sentence in " ".join(res.output.split())
    assert sentence in " ".join((tmp_path / "lb" / "leaderboard.md").read_text().split())
    with (tmp_path / "lb" / "leaderboard.csv").open() as f:
        assert {r["scores_from"] for r in csv.DictReader(f)} == {sentence}
    res = CliRunner().invoke(app, [*args, "--json"])
    fitted = json.loads(res.stdout)["calibrated"]
    assert fitted["metrics"] == ["jitter", "smooth [v1]"] and fitted["left_out"] == ["smooth v0"]
    assert (fitted["alpha"], fitted["folds"], fitted["prediction"]) == (0.5, 3, "expected")
    # Labels say nothing of a fit, and the CSV keeps its columns.
    res = CliRunner().invoke(app, ["generators", str(manifest), "--db", db, "--bootstrap", "0", "--out",
                                   str(tmp_path / "lab")])
    assert res.exit_code == 0 and CALIBRATED not in res.output
    assert "scores_from" not in (tmp_path / "lab" / "leaderboard.csv").read_text()
