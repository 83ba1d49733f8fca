"""Set-level metrics in the result store: group rows, resume, changed groups, export, the CLI."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import robojudge
from robojudge.cli import build_app
from robojudge.metrics import METRICS, SET_METRICS
from robojudge.metrics import _sets as sets
from robojudge.metrics._score import Score
from robojudge.run import library_versions, score_sets_into
from robojudge.store import ResultStore, export_results
from robojudge.suite import Item
from robojudge.video import sample_frames, write_video


def _brightness(path: str) -> float:
    return float(sample_frames(path, fps=4).frames.mean())


@pytest.fixture
def toy() -> Iterator[dict[str, int]]:
    """Two set metrics on the videos; ``calls`` counts the groups each one computed."""
    with METRICS.scratch(), SET_METRICS.scratch():  # gone after the test
        yield _register_toys()


def _register_toys() -> dict[str, int]:
    calls = {"toy_set_gap": 0, "toy_set_rank": 0}

    @sets.set_metric("toy_set_gap", output="group", family="features", inputs={"video", "reference"},
                     higher_is_better=False, native_range=(0.0, None), citation="toy", provider="computed",
                     description="brightness gap between a group's videos and references", min_items=2)
    def gap(group: sets.ItemGroup, config: object) -> sets.SetScores:
        calls["toy_set_gap"] += 1
        gen = np.mean([_brightness(it.video) for it in group.items])
        ref = np.mean([_brightness(r) for r in group.references()])
        return sets.SetScores(group=Score(value=float(abs(gen - ref))))

    @sets.set_metric("toy_set_rank", output="item", family="features", inputs={"video"},
                     higher_is_better=False, native_range=(0.0, None), citation="toy", provider="computed",
                     description="brightness minus the mean brightness of every reference", references="all")
    def rank(group: sets.ItemGroup, config: object) -> sets.SetScores:
        calls["toy_set_rank"] += 1
        pool = np.mean([_brightness(r) for r in group.references(scope="all")])
        values = {it.item_id: Score(value=_brightness(it.video) - pool) for it in group.items}
        return sets.SetScores(items=values)

    return calls


def _video(path: Path, level: int) -> str:
    write_video(path, np.full((4, 16, 16, 3), level, np.uint8), fps=4)
    return str(path)


@pytest.fixture
def items(tmp_path: Path) -> list[Item]:
    out = []
    spec = [("g1", 40, 30), ("g1", 60, 30), ("g2", 100, 150), ("g2", 120, 160)]
    for n, (gen, level, ref) in enumerate(spec):
        reference = _video(tmp_path / f"r{ref}.mp4", ref)
        generated = _video(tmp_path / f"v{n}.mp4", level)
        task = f"t{n % 2}"
        out.append(Item(item_id=f"i{n}", video=generated, reference_video=reference, generator=gen,
                        task=task))
    return out


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ResultStore(tmp_path / "results.sqlite") as s:
        yield s


def test_group_rows_are_stored_and_a_rerun_computes_nothing(toy, items, store) -> None:  # type: ignore[no-untyped-def]
    run = score_sets_into(store, items, ["toy_set_gap"], by="generator")
    assert (run.groups, run.computed, run.skipped) == (2, 2, 0)
    rows = {r.item_id: r for r in store.rows()}
    assert set(rows) == {"group:generator=g1", "group:generator=g2"}
    g1 = rows["group:generator=g1"]
    assert g1.value == pytest.approx(20, abs=2)  # mean of 40 and 60 against 30
    assert g1.config == {"group_by": "generator"} and len(g1.fingerprint) == 32
    assert g1.details == {"group_by": "generator", "group": "g1", "n_items": 2, "n_references": 1,
                          "libraries": library_versions(),  # computed metric: the core libraries
                          "robojudge": robojudge.__version__}  # and the release that computed it
    assert [(r.group, r.item_id) for r in run.rows] == [("g1", None), ("g2", None)]
    assert run.rows[0].value == g1.value

    again = score_sets_into(store, items, ["toy_set_gap"], by="generator")
    assert (again.computed, again.skipped, toy["toy_set_gap"]) == (0, 2, 2)
    assert [(r.group, r.value) for r in again.rows] == [(r.group, r.value) for r in run.rows]


def test_only_changed_groups_are_recomputed(toy, items, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    score_sets_into(store, items, ["toy_set_gap"], by="generator")
    _video(tmp_path / "v0.mp4", 200)  # a member of g1 changes
    run = score_sets_into(store, items, ["toy_set_gap"], by="generator")
    assert (run.computed, run.stale, run.skipped) == (1, 1, 1)
    assert store.count() == 2 and store.count(include_superseded=True) == 3
    (old,) = [r for r in store.rows(include_superseded=True) if not r.current]
    assert old.item_id == "group:generator=g1"
    # A new member of g2 changes g2's membership.
    extra = Item(item_id="i9", video=_video(tmp_path / "v9.mp4", 90), generator="g2",
                 reference_video=items[2].reference_video)
    run = score_sets_into(store, [*items, extra], ["toy_set_gap"], by="generator")
    assert (run.computed, run.stale) == (1, 1)
    assert {r.group: r.n_items for r in run.rows} == {"g1": 2, "g2": 3}
    # A reference change: the group-scoped metric recomputes the group that uses it.
    _video(tmp_path / "r30.mp4", 35)
    run = score_sets_into(store, [*items, extra], ["toy_set_gap"], by="generator")
    assert (run.computed, run.skipped) == (1, 1)


def test_groups_with_a_file_unavailable_now_are_kept(toy, items, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A member's video gone for a while (a drive not mounted) keeps its group's stored value; a group
    never stored is still computed; with the file back nothing is recomputed."""
    score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    good = store.rows()
    video = Path(items[0].video)
    video.rename(tmp_path / "away.mp4")
    run = score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    # g1 of both metrics reads the video; g2 of toy_set_rank does not (only every reference)
    assert (run.unavailable, run.skipped, run.computed, run.stale) == (2, 4, 0, 0)
    assert store.rows() == good and store.count(include_superseded=True) == len(good)
    assert {r.group: r.status for r in run.rows if r.metric == "toy_set_gap"} == {"g1": "ok", "g2": "ok"}
    fresh = score_sets_into(store, items, ["toy_set_gap"], by="task")  # never stored: computed, fails
    assert fresh.computed == 2 and {r.group: r.status for r in fresh.rows} == {"t0": "error", "t1": "ok"}
    (tmp_path / "away.mp4").rename(video)
    back = score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    assert (back.unavailable, back.computed, back.skipped) == (0, 0, 4)
    assert toy == {"toy_set_gap": 4, "toy_set_rank": 2}


def test_another_grouping_is_another_config(toy, items, store) -> None:  # type: ignore[no-untyped-def]
    score_sets_into(store, items, ["toy_set_gap"], by="generator")
    run = score_sets_into(store, items, ["toy_set_gap"], by="task")
    assert run.computed == 2
    ids = sorted(r.item_id for r in store.rows())
    assert ids == ["group:generator=g1", "group:generator=g2", "group:task=t0", "group:task=t1"]
    assert len({r.config_hash for r in store.rows()}) == 2
    one = score_sets_into(store, items, ["toy_set_gap"], by=None)
    assert [r.group for r in one.rows] == ["all"]
    assert "group:all" in {r.item_id for r in store.rows()}


def test_per_item_set_metric_reading_every_reference(toy, items, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    run = score_sets_into(store, items, ["toy_set_rank"], by="generator")
    assert run.computed == 2 and [r.item_id for r in run.rows] == ["i0", "i1", "i2", "i3"]
    stored = {r.item_id: r for r in store.rows()}
    assert set(stored) == {"i0", "i1", "i2", "i3"}
    assert stored["i0"].fingerprint == stored["i1"].fingerprint != stored["i2"].fingerprint
    assert score_sets_into(store, items, ["toy_set_rank"], by="generator").computed == 0
    # g2's reference changes; g1's items are scored against every reference, so both groups rerun.
    _video(tmp_path / "r150.mp4", 10)
    run = score_sets_into(store, items, ["toy_set_rank"], by="generator")
    assert (run.computed, run.stale) == (2, 2)


def test_failed_groups_are_kept_until_retried(toy, items, store) -> None:  # type: ignore[no-untyped-def]
    lonely = items[:3]  # g2 has one item: below min_items
    run = score_sets_into(store, lonely, ["toy_set_gap"], by="generator")
    assert [r.status for r in run.rows] == ["ok", "error"]
    assert "needs at least 2 items" in (run.rows[1].error or "")
    assert score_sets_into(store, lonely, ["toy_set_gap"], by="generator").computed == 0
    assert score_sets_into(store, lonely, ["toy_set_gap"], by="generator", retry_errors=True).computed == 1


def test_group_ids_cannot_collide_with_manifest_items() -> None:
    with pytest.raises(ValueError, match="may not start with 'group:'"):
        Item(item_id="group:generator=g1", video="v.mp4")


def test_export_and_cli(toy, items, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "200")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    run_dir = tmp_path / "run"
    args = ["metrics", "sets", str(manifest), "--metrics", "toy_set_gap", "--run-dir", str(run_dir)]
    res = CliRunner().invoke(build_app("metrics"), args)
    assert res.exit_code == 0, res.output
    assert "2 groups: 2 computed (0 because their items changed), 0 already stored" in res.output
    res = CliRunner().invoke(build_app("metrics"), args)
    assert "2 groups: 0 computed (0 because their items changed), 2 already stored" in res.output
    assert "g1" in res.output and "g2" in res.output
    with ResultStore(run_dir / "results.sqlite", read_only=True) as store:
        n = export_results(store, tmp_path / "export.csv")
    table = pd.read_csv(tmp_path / "export.csv")
    assert n == 2 and sorted(table["item_id"]) == ["group:generator=g1", "group:generator=g2"]
    res = CliRunner().invoke(build_app("metrics"), [*args[:5], "--no-store", "--by", "task"])
    assert res.exit_code == 0 and "t0" in res.output and "computed" not in res.output
    with ResultStore(run_dir / "results.sqlite", read_only=True) as store:
        assert store.count() == 2


def test_status_checks_group_rows(toy, items, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from robojudge.run._status import results_status

    score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    fresh = {m.metric: (m.current, m.up_to_date, m.stale) for m in results_status(store, items).metrics}
    assert fresh == {"toy_set_gap": (2, 2, 0), "toy_set_rank": (4, 4, 0)}
    _video(tmp_path / "v3.mp4", 5)  # in g2
    status = results_status(store, items)
    assert {m.metric: (m.up_to_date, m.stale) for m in status.metrics} == {
        "toy_set_gap": (1, 1), "toy_set_rank": (2, 2)}
    assert sorted(r.item_id for r in status.stale) == ["group:generator=g2", "i2", "i3"]


def test_group_rows_read_where_their_weights_are_not_are_checked_against_their_videos(  # type: ignore[no-untyped-def]
    toy, items, store, tmp_path, monkeypatch
) -> None:
    # A set metric's rows record the weights they were computed with: read where those are not
    # installed, a member's replaced video makes its group stale (it stayed current: unavailable).
    from robojudge import settings
    from robojudge.run import _fingerprint as fpm
    from robojudge.run._status import results_status, stale_rows

    @sets.set_metric("toy_set_netted", output="group", family="features", inputs={"video"},
                     higher_is_better=False, native_range=(0.0, None), citation="toy", provider="computed",
                     description="brightness of a group, with a network", weights=("raft_things",))
    def netted(group: sets.ItemGroup, config: object) -> sets.SetScores:
        value = float(np.mean([_brightness(it.video) for it in group.items]))
        return sets.SetScores(group=Score(value=value))

    def weights_in(folder: Path) -> None:
        monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(folder))
        settings.reload()
        monkeypatch.setattr(fpm, "_weights_memo", {})

    found = tmp_path / "w" / "raft_things" / "raft_large_C_T_V1-22a6c225.pth"
    found.parent.mkdir(parents=True)
    found.write_bytes(b"weights")
    weights_in(tmp_path / "w")
    score_sets_into(store, items, ["toy_set_netted"], by="generator")
    assert {str((r.details or {}).get("network_weights")) for r in store.rows()} == {
        str({"raft_things": fpm.file_digest(found)})}
    weights_in(tmp_path / "laptop")

    def counts() -> list[tuple[int, int, int]]:
        return [(m.up_to_date, m.stale, m.unavailable) for m in results_status(store, items).metrics]

    assert counts() == [(2, 0, 0)]
    _video(tmp_path / "v3.mp4", 5)  # in g2
    assert counts() == [(1, 1, 0)]
    assert [r.item_id for r in stale_rows(store.rows(), items)] == ["group:generator=g2"]


def test_group_column_lists_the_registry_once(toy, items, store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from robojudge.run._sets import group_column

    score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    listed = [0]
    list_sets = SET_METRICS.values

    def counted() -> object:
        listed[0] += 1
        return list_sets()

    monkeypatch.setattr(SET_METRICS, "values", counted)
    cell = group_column(items, "generator")
    cells = sorted((r.item_id, cell(r)) for r in store.rows())
    assert cells == [("group:generator=g1", "g1"), ("group:generator=g2", "g2"),
                     ("i0", "g1"), ("i1", "g1"), ("i2", "g2"), ("i3", "g2")]
    assert listed[0] <= 1


def test_one_config_hash_for_stored_rows_and_the_out_file(toy, items, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``metrics sets --out`` rows and stored rows of the same metric and grouping carry the same
    config hash (the store's, which includes the grouping)."""
    stored = score_sets_into(store, items, ["toy_set_gap", "toy_set_rank"], by="generator")
    loose = sets.score_sets(items, ["toy_set_gap", "toy_set_rank"], by="generator")
    assert {(r.metric, r.config_hash) for r in loose} == {(r.metric, r.config_hash) for r in stored.rows}
    assert {r.config_hash for r in loose} == {r.config_hash for r in store.rows()}
    by_task = sets.score_sets(items, ["toy_set_gap"], by="task")
    assert {r.config_hash for r in by_task} != {r.config_hash for r in loose if r.metric == "toy_set_gap"}
    out = sets.write_set_rows(loose, tmp_path / "sets.jsonl")
    written = {json.loads(line)["config_hash"] for line in out.read_text().splitlines()}
    assert written == {r.config_hash for r in store.rows()}


def test_group_rows_record_library_versions_and_rescore_them(toy, items, store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Set-level rows record the versions they were computed with, as per-item rows do; a report flags a
    metric whose group rows differ, and --rescore-libraries computes those groups again."""
    from robojudge.report._sections import ReportInput
    from robojudge.run import _sets as run_sets

    real = run_sets.library_versions
    calls = iter(range(100))
    # the first group computed (g1 of toy_set_gap) gets an older OpenCV, the others the installed one
    monkeypatch.setattr(run_sets, "library_versions", lambda spec: real(spec).replace(
        "opencv ", "opencv 0.0.0-" if next(calls) == 0 else "opencv "))
    score_sets_into(store, items, ["toy_set_gap"])
    monkeypatch.setattr(run_sets, "library_versions", real)
    rows = {r.item_id: r for r in store.rows() if r.metric == "toy_set_gap"}
    assert rows["group:generator=g2"].details["libraries"] == library_versions()
    assert "opencv 0.0.0-" in rows["group:generator=g1"].details["libraries"]
    mixed = ReportInput(store.rows(), items, lambda m: False, bootstrap=0).mixed_libraries
    assert [(m.key.metric, m.libraries, sorted(m.by_group)) for m in mixed] == [
        ("toy_set_gap", ("opencv",), ["g1", "g2"])]

    from robojudge.run._status import results_status
    assert [m.other_libraries for m in results_status(store, items).metrics] == [1]
    assert score_sets_into(store, items, ["toy_set_gap"]).computed == 0  # an upgrade keeps what is stored
    assert toy["toy_set_gap"] == 2
    again = score_sets_into(store, items, ["toy_set_gap"], rescore_libraries=True)
    assert (again.rescored_libraries, again.computed, toy["toy_set_gap"]) == (1, 1, 3)  # g1 only
    assert not ReportInput(store.rows(), items, lambda m: False, bootstrap=0).mixed_libraries
    old = [r for r in store.rows(include_superseded=True) if r.item_id == "group:generator=g1"]
    assert len(old) == 2  # the old row is kept, superseded
    done = score_sets_into(store, items, ["toy_set_gap"], rescore_libraries=True)
    assert (done.rescored_libraries, done.computed) == (0, 0)


def _manifest(path: Path, items: list[Item]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    return path


def test_two_manifests_with_one_generator_do_not_replace_its_row(toy, items, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two manifests holding other videos of generator g1 meet in one store: the second would replace
    the row of ``group:generator=g1`` computed over the first's videos with one over its own. It is
    refused, naming the group; a later manifest with every member of the first is scored."""
    run_dir = tmp_path / "run"
    first = _manifest(tmp_path / "a" / "suite.jsonl", items[:1] + items[2:])  # g1: i0; g2: i2, i3
    other = _manifest(tmp_path / "b" / "suite.jsonl", items[1:2])  # g1: i1 only
    args = ["metrics", "sets", "--metrics", "toy_set_gap", "--run-dir", str(run_dir)]
    res = CliRunner().invoke(build_app("metrics"), [*args[:2], str(first), *args[2:]])
    assert res.exit_code == 0, res.output
    with ResultStore(run_dir / "results.sqlite", read_only=True) as store:
        before = {r.item_id: r.value for r in store.rows()}
    res = CliRunner().invoke(build_app("metrics"), [*args[:2], str(other), *args[2:]])
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert "'group:generator=g1' has 1 member(s)" in text and "(e.g. 'i0')" in text
    with ResultStore(run_dir / "results.sqlite", read_only=True) as store:
        assert {r.item_id: r.value for r in store.rows()} == before  # nothing replaced
        assert len(store.manifests()) == 1  # and the refused manifest was not noted
    # a manifest holding the first one's g1 video and a new one: the group grew, and is recomputed
    grown = _manifest(tmp_path / "c" / "suite.jsonl", items[:2])
    res = CliRunner().invoke(build_app("metrics"), [*args[:2], str(grown), *args[2:]])
    assert res.exit_code == 0, res.output
    assert "1 computed (1 because their items changed)" in " ".join(res.output.split())
    # per-item set metrics are kept by item id, so they never collide and are not refused
    res = CliRunner().invoke(build_app("metrics"), ["metrics", "sets", str(other), "--metrics",
                                                    "toy_set_rank", "--run-dir", str(run_dir)])
    assert res.exit_code == 0, res.output


def test_a_group_whose_video_changed_while_computed_is_not_stored(
    tmp_path: Path, items: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its value, of the new file or of a mix, is not stored under the old files' fingerprint (which
    the old file, put back, would find up to date): the group stays to compute, the other is stored,
    and the CLI says which."""
    monkeypatch.setenv("COLUMNS", "200")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    args = ["metrics", "sets", str(manifest), "--metrics", "toy_set_gap", "--run-dir", str(tmp_path / "run")]
    rewrites = {"g1": 1}
    with METRICS.scratch(), SET_METRICS.scratch():
        _register_toys()
        spec = SET_METRICS.get("toy_set_gap")

        def rewrite_then_compute(group: sets.ItemGroup, config: object) -> sets.SetScores:
            if rewrites.get(group.key):
                rewrites[group.key] -= 1
                _video(Path(group.items[0].video), 250)  # a new render lands while the group is computed
            return spec.fn(group, config)

        SET_METRICS.add("toy_set_gap", dataclasses.replace(spec, fn=rewrite_then_compute), replace=True)
        res = CliRunner().invoke(build_app("metrics"), args)
        assert res.exit_code == 0, res.output
        said = "1 not stored: a file they read changed while they were computed (toy_set_gap on g1)"
        assert said in res.output
        with ResultStore(tmp_path / "run" / "results.sqlite") as store:
            assert [r.item_id for r in store.rows()] == ["group:generator=g2"]
            again = score_sets_into(store, items, ["toy_set_gap"], by="generator")
        assert (again.changed, again.computed, again.skipped) == ([], 1, 1)
        assert sorted(r.group for r in again.rows) == ["g1", "g2"]
