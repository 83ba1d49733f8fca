"""``results status``: stored rows checked against their inputs as they are now, without writing."""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import build_requests, import_config, import_config_hash, score_items
from robojudge.run._judge import judge_items
from robojudge.run._status import MetricStatus, results_status
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


def _video(path: Path, level: int) -> str:
    frames = np.full((6, 16, 16, 3), level, np.uint8)
    frames[:, 2:6, 2:6] = 255 - level
    write_video(path, frames, fps=8)
    return str(path)


@pytest.fixture
def items(tmp_path: Path) -> list[Item]:
    return [Item(item_id=n, video=_video(tmp_path / f"{n}.mp4", 40 * (k + 1)), instruction=f"do {n}",
                 generator="g")
            for k, n in enumerate(["a", "b", "c"])]


def _counts(status: object, metric: str) -> MetricStatus:
    (found,) = [m for m in status.metrics if m.metric == metric]  # type: ignore[attr-defined]
    return found


def test_status_finds_rows_whose_inputs_changed(items: list[Item], tmp_path: Path) -> None:
    reqs = build_requests(["test_frames_a", "test_slow"], {"test_slow": {"seconds": 0.0}})
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m",
                        "replies": ['{"reasoning": "ok", "instruction_alignment": 3}']})
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        score_items(items, reqs, store)
        judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        fresh = results_status(store, items)
        assert {(m.metric, m.current, m.up_to_date, m.stale) for m in fresh.metrics} == {
            ("test_frames_a", 3, 3, 0), ("test_slow", 3, 3, 0), ("judge:mk:ia", 3, 3, 0)}
        assert fresh.stale == [] and fresh.unknown == []

        _video(tmp_path / "b.mp4", 250)
        changed = [items[0], items[1], items[2].model_copy(update={"instruction": "do something else"})]
        status = results_status(store, changed)
        assert (_counts(status, "test_frames_a").stale, _counts(status, "test_frames_a").up_to_date) == (1, 2)
        assert _counts(status, "test_slow").stale == 1  # c's instruction
        assert _counts(status, "judge:mk:ia").stale == 2  # b's video and c's instruction
        assert sorted((r.item_id, r.metric) for r in status.stale) == [
            ("b", "judge:mk:ia"), ("b", "test_frames_a"), ("c", "judge:mk:ia"), ("c", "test_slow")]

        run = score_items(changed, reqs, store)
        assert run.stale == 2
        after = results_status(store, changed)
        frames = _counts(after, "test_frames_a")
        assert (frames.current, frames.up_to_date, frames.stale, frames.superseded) == (3, 3, 0, 1)
        assert _counts(after, "judge:mk:ia").stale == 2  # not re-judged yet


def test_unknown_imported_and_unchecked_rows(items: list[Item], tmp_path: Path) -> None:
    (req,) = build_requests(["test_frames_a"])
    key = (req.id, req.config_hash, req.spec.version)
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items[:2], [req], store)
        store.add([
            ResultRow("c", *key, "ok", 1.0),  # as from a schema 1 store: no fingerprint
            ResultRow("zz", *key, "ok", 1.0, fingerprint="f"),  # an item the manifest no longer has
            ResultRow("a", "ts_action_planner", import_config_hash(), "1", "ok", 0.5, config=import_config()),
            ResultRow("a", "not_a_metric_here", "h", "1", "error", None, error="x", fingerprint="f"),
            ResultRow("b", "not_a_metric_here", "h", "1", "ok", float("nan"), fingerprint="f",
                      details={"unscored_reason": "nothing moves"}),
        ])
        status = results_status(store, items)
        unchecked = results_status(store, None)  # no manifest: counted, nothing compared
    frames = _counts(status, "test_frames_a")
    assert (frames.current, frames.up_to_date, frames.unknown, frames.not_checked) == (4, 2, 1, 1)
    assert [(r.item_id, r.reason) for r in status.unknown] == [
        ("c", "no inputs fingerprint (stored before schema 2)")]
    assert _counts(status, "ts_action_planner").imported == 1
    other = _counts(status, "not_a_metric_here")
    assert (other.not_checked, other.errors, other.unscored) == (2, 1, 1)  # unscored: ran, NaN
    assert _counts(unchecked, "test_frames_a").not_checked == 3


def test_cli_status_reads_without_writing(items: list[Item], tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "250")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    run_dir = tmp_path / "run"
    with ResultStore(run_dir / "results.sqlite") as store:
        score_items(items, build_requests(["test_frames_a"]), store)
    _video(tmp_path / "a.mp4", 7)
    db = run_dir / "results.sqlite"
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    args = ["results", "status", str(manifest), "--run-dir", str(run_dir), "--stale"]
    res = CliRunner().invoke(build_app("results"), args)
    assert res.exit_code == 0, res.output
    assert "1 stale (inputs changed" in res.output
    assert "total s" in res.output and "median s" in res.output  # the time columns
    assert "a\ttest_frames_a\t" in res.output and "inputs changed" in res.output
    # The database is not written; a reader of a writable folder may leave SQLite's -wal/-shm beside it.
    after = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    assert after["results.sqlite"] == before["results.sqlite"]
    assert set(after) - set(before) <= {"results.sqlite-wal", "results.sqlite-shm"}
    assert not after.get("results.sqlite-wal")  # nothing was logged to be written either
    missing = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db",
                                                        str(tmp_path / "nope.sqlite")])
    assert missing.exit_code == 2 and "no result store" in missing.output
    assert db.exists() and not (tmp_path / "nope.sqlite").exists()


def test_status_work_does_not_grow_with_rows_per_metric(
    items: list[Item], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry is listed once per call, not once per row, and metrics that read the same
    inputs share one fingerprint per item (as when scoring)."""
    from robojudge.metrics import SET_METRICS
    from robojudge.run import _fingerprint

    reqs = build_requests(["test_frames_a", "test_frames_b"])
    listed, read = [0], [0]
    list_sets, read_inputs = SET_METRICS.values, _fingerprint.read_inputs

    def counted_list() -> object:
        listed[0] += 1
        return list_sets()

    def counted_read(*args: object, **kw: object) -> object:
        read[0] += 1
        return read_inputs(*args, **kw)  # type: ignore[arg-type]

    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items, reqs, store)
        monkeypatch.setattr(SET_METRICS, "values", counted_list)
        monkeypatch.setattr(_fingerprint, "read_inputs", counted_read)
        status = results_status(store, items)
    assert {m.metric: m.up_to_date for m in status.metrics} == {"test_frames_a": 3, "test_frames_b": 3}
    assert listed[0] <= 1 and read[0] == 3


def test_status_totals_and_medians_the_seconds_of_current_rows(tmp_path: Path) -> None:
    key = ("m", "h", "1")
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.add([ResultRow(i, *key, "ok", 1.0, duration_s=s, fingerprint="f")
                   for i, s in (("a", 1.0), ("b", 4.0), ("c", 10.0))])
        store.add([ResultRow("d", *key, "error", None, error="x", duration_s=2.0, fingerprint="f"),
                   ResultRow("a", "ts_action_planner", import_config_hash(), "1", "ok", 0.5,
                             config=import_config())])
        store.add([ResultRow("a", *key, "ok", 2.0, duration_s=100.0, fingerprint="g")])  # supersedes a
        status = results_status(store, None)
    m = _counts(status, "m")
    assert (m.current, m.superseded) == (4, 1)
    assert m.seconds == pytest.approx(100.0 + 4.0 + 10.0 + 2.0)  # the superseded row's 1 s is not
    assert m.median_s == pytest.approx((4.0 + 10.0) / 2)
    imported = _counts(status, "ts_action_planner")
    assert (imported.seconds, imported.median_s) == (0.0, None)  # computed elsewhere: no time here


def test_a_renamed_item_is_a_row_of_another_id_and_an_item_without_a_row(items: list[Item],
                                                                        tmp_path: Path) -> None:
    """After renaming 'a' in the manifest, 'current' still said 3 for 3 items: the run looked complete,
    while one row belonged to an id no longer in the manifest and the renamed item had none."""
    reqs = build_requests(["test_frames_a"], {})
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items, reqs, store)
        assert _counts(results_status(store, items), "test_frames_a").no_row == 0
        renamed = [items[0].model_copy(update={"item_id": "a-renamed"}), *items[1:], Item(
            item_id="new", video=items[1].video)]
        status = results_status(store, renamed)
    counts = _counts(status, "test_frames_a")
    assert (counts.current, counts.not_checked, counts.other_ids, counts.no_row) == (3, 1, 1, 2)
    key = (counts.metric, counts.config_hash, counts.version)
    assert status.other_ids[key] == ["a"] and status.no_row[key] == ["a-renamed", "new"]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in renamed))
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db",
                                                    str(tmp_path / "results.sqlite")])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert ("test_frames_a [" in said and "1 row(s) of ids not in the manifest (a); 2 manifest item(s) "
            "without a row (a-renamed, new)" in said)


def test_no_row_is_not_counted_for_group_rows_nor_unknown_metrics_and_judges_point_to_judge(
        items: list[Item], tmp_path: Path) -> None:
    """A set metric this process does not know (a plugin not loaded) had every manifest item counted
    as without a row, with a hint to `score`; a judge's missing items are `judge`'s to compute."""
    rows = [ResultRow("group:generator=g", "plugin_set", "h", "1", "ok", 1.0,
                      config={"group_by": "generator"}, fingerprint="x"),
            ResultRow("a", "plugin_item", "h", "1", "ok", 1.0, fingerprint="x"),
            ResultRow("a", "judge:mk:ia", "h", "1", "ok", 3.0, fingerprint="x")]
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.add(rows)
        status = results_status(store, items)
    no_row = {m.metric: m.no_row for m in status.metrics}
    assert no_row == {"plugin_set": 0, "plugin_item": 0, "judge:mk:ia": 2}
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db",
                                                    str(tmp_path / "results.sqlite")])
    said = " ".join(res.output.split())
    assert ("judge:mk:ia [h]: 2 manifest item(s) without a row (b, c) (new or renamed items: "
            "`robojudge judge`") in said
    assert "plugin_set [" not in said and "plugin_item [" not in said


def test_score_says_it_computes_again_beside_rows_of_an_older_version(
    items: list[Item], tmp_path: Path
) -> None:
    # An upgrade audit: after a metric's version bump, `score` printed "0 already stored" and computed
    # every item again without a word about the kept rows of the old version.
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db = tmp_path / "results.sqlite"
    (req,) = build_requests(["uniform_random"])
    with ResultStore(db) as store:
        store.add([ResultRow(it.item_id, "uniform_random", "oldhash", "0", "ok", 0.5) for it in items[:2]])
    res = CliRunner().invoke(build_app("score"), ["score", str(manifest), "-m", "uniform_random", "--db",
                                                  str(db), "--workers", "1", "--no-progress"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert (f"2 stored results of uniform_random are of version 0 (this robojudge computes version "
            f"{req.spec.version}): computed again beside them, which are kept") in said
    with ResultStore(db) as store:  # computed now: a rerun has nothing to say
        assert score_items(items, [req], store).other_versions == {}


def test_rows_of_an_older_metric_version_are_flagged(items: list[Item], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # After a version bump the old rows were shown "up to date", 0 stale, and nothing said the next
    # `score` would compute the metric again.
    monkeypatch.setenv("COLUMNS", "250")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    db = tmp_path / "results.sqlite"
    with ResultStore(db) as store:
        score_items(items, build_requests(["test_frames_a"]), store)
        rows = store.rows(metric="test_frames_a")
        store.add([ResultRow(r.item_id, r.metric, r.config_hash, "0", "ok", r.value, config=r.config,
                             fingerprint=r.fingerprint) for r in rows])  # as stored by version 0
        status = results_status(store, items)
    old = [m for m in status.metrics if m.metric == "test_frames_a" and m.version == "0"][0]
    now = [m for m in status.metrics if m.metric == "test_frames_a" and m.version == "1"][0]
    assert old.old_version and old.installed_version == "1" and not now.old_version
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(db)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "0 (now 1)" in said
    # Both versions are stored here (as after an upgrade and a rescore): the next run computes nothing,
    # and the line says the old rows stay, not that a run computes the metric again.
    assert "3 row(s) of version 0 stay beside the version-1 rows; no run replaces them" in said
    assert "computes the metric again" not in said
    # The same when the version bump also changed the config hash (a field added): the line said a run
    # would compute the metric again, for ever, and the footer counted the old rows among those
    # --rescore-unknown recomputes (it computes only the installed version).
    bumped = tmp_path / "bumped.sqlite"
    with ResultStore(bumped) as store:
        store.add(rows)
        store.add([ResultRow(r.item_id, r.metric, "oldhash", "0", "ok", r.value, config=r.config)
                   for r in rows])  # version 0, another config, no fingerprint (stored before schema 2)
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(bumped)])
    said = " ".join(res.output.split())
    assert "3 row(s) of version 0 stay beside the version-1 rows" in said
    assert "computes the metric again" not in said and "0 without an inputs fingerprint" in said
    old_db = tmp_path / "old.sqlite"
    with ResultStore(old_db) as store:
        store.add([ResultRow(r.item_id, r.metric, r.config_hash, "0", "ok", r.value, config=r.config,
                             fingerprint=r.fingerprint) for r in rows])  # version 0 alone
    only_old = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db",
                                                         str(old_db)])
    assert ("3 row(s) of version 0; this robojudge computes version 1, so the next `robojudge score` "
            "computes the metric again") in " ".join(only_old.output.split())
    # Rescored in part: the items left at version 0 are named as such, not as new or renamed.
    with ResultStore(old_db) as store:
        store.add([r for r in rows if r.item_id == "a"])
    part = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(old_db)])
    assert ("2 manifest item(s) without a row (b, c) (new or renamed items, or items stored at an older "
            "version only") in " ".join(part.output.split())


def test_status_tells_a_live_run_in_flight_from_an_ended_one(tmp_path: Path) -> None:
    # every note was said to be "computed alone in a child process by the next run", a live run's too
    from _in_flight import note_from_ended_process

    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": n, "video": str(video)}) + "\n" for n in ("a", "b")))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.note_in_flight("a", ["m1"])  # this test process: a run still going on here
    note_from_ended_process(db, {"b": ["m2"]})  # a process that has ended: a crash or a kill
    with ResultStore(db) as store:
        status = results_status(store, None)
    assert status.in_flight == {"a": ["m1"], "b": ["m2"]} and status.in_flight_ended == {"b": ["m2"]}
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", str(db)])
    said = " ".join(res.output.split())
    assert "in flight (being computed now by a run on this machine): a (m1)" in said
    assert ("in flight when a run ended in a crash, a kill or a store that went away (or noted by a run on "
            "another machine): b (m2); the next run computes each alone in a child process") in said
