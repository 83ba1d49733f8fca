"""Results tied to their inputs: a changed input is rescored, the old row kept as superseded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest

from robojudge.metrics import get_metric
from robojudge.run import LocalProcessExecutor, build_requests, score_items
from robojudge.run._fingerprint import inputs_fingerprint, metric_fingerprint, metric_inputs
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


def video(path: Path, level: int, frames: int = 6) -> str:
    """A small video whose frames all have the gray level ``level`` (a folder without a suffix)."""
    write_video(path, np.full((frames, 16, 16, 3), level, np.uint8), fps=8)
    return str(path)


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    with ResultStore(tmp_path / "results.sqlite") as s:
        yield s


def _current(store: ResultStore, metric: str) -> dict[str, ResultRow]:
    return {r.item_id: r for r in store.rows(metric=metric)}


def test_replaced_video_is_rescored_and_the_old_row_kept(store: ResultStore, tmp_path: Path) -> None:
    paths = {"a": video(tmp_path / "a.mp4", 40), "b": video(tmp_path / "b.mp4", 80)}
    items = [Item(item_id=n, video=p, instruction="x") for n, p in paths.items()]
    reqs = build_requests(["test_frames_b", "test_slow"], {"test_slow": {"seconds": 0.0}})
    first = score_items(items, reqs, store)
    assert (first.ok, first.stale) == (4, 0)
    old, other = _current(store, "test_frames_b")["a"], _current(store, "test_frames_b")["b"]
    assert old.value == pytest.approx(40, abs=3) and len(old.fingerprint) == 32

    video(tmp_path / "a.mp4", 200)  # same item id, same path, new content
    second = score_items(items, reqs, store)
    assert (second.total, second.skipped, second.stale, second.ok) == (4, 3, 1, 1)
    new = _current(store, "test_frames_b")["a"]
    assert new.value == pytest.approx(200, abs=3) and new.fingerprint != old.fingerprint
    assert _current(store, "test_frames_b")["b"] == other  # untouched
    kept = [r for r in store.rows(metric="test_frames_b", include_superseded=True) if not r.current]
    assert [(r.item_id, r.value, r.fingerprint) for r in kept] == [("a", old.value, old.fingerprint)]
    assert store.count() == 4 and store.count(include_superseded=True) == 5

    third = score_items(items, reqs, store)
    assert (third.skipped, third.stale, third.computed) == (4, 0, 0)


def test_a_reference_change_rescores_only_metrics_that_read_it(store: ResultStore, tmp_path: Path) -> None:
    ref = video(tmp_path / "r.mp4", 60)
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 50), reference_video=ref)
    reqs = build_requests(["test_needs_reference", "test_frames_a"])
    assert score_items([item], reqs, store).ok == 2
    video(tmp_path / "r.mp4", 90)
    s = score_items([item], reqs, store)
    assert (s.stale, s.skipped, s.ok) == (1, 1, 1)
    superseded = [r.metric for r in store.rows(include_superseded=True) if not r.current]
    assert superseded == ["test_needs_reference"]


def test_an_instruction_change_rescores_metrics_that_read_it(store: ResultStore, tmp_path: Path) -> None:
    path = video(tmp_path / "v.mp4", 50)
    reqs = build_requests(["test_slow", "test_frames_a"], {"test_slow": {"seconds": 0.0}})
    score_items([Item(item_id="a", video=path, instruction="pick the cup")], reqs, store)
    s = score_items([Item(item_id="a", video=path, instruction="pick the red cup")], reqs, store)
    assert (s.stale, s.skipped) == (1, 1)
    assert _current(store, "test_slow")["a"].current


def test_a_moved_file_with_the_same_content_is_not_rescored(store: ResultStore, tmp_path: Path) -> None:
    path = video(tmp_path / "v.mp4", 50)
    reqs = build_requests(["test_frames_a"])
    score_items([Item(item_id="a", video=path)], reqs, store)
    moved = tmp_path / "elsewhere" / "renamed.mp4"
    moved.parent.mkdir()
    shutil.move(path, moved)
    s = score_items([Item(item_id="a", video=str(moved))], reqs, store)
    assert (s.skipped, s.stale, s.computed) == (1, 0, 0)


def test_frame_folders_fingerprint_their_images_and_rate(store: ResultStore, tmp_path: Path) -> None:
    folder = Path(video(tmp_path / "frames", 50))
    assert (folder / "fps.txt").is_file() and len(list(folder.glob("*.png"))) == 6
    item = Item(item_id="a", video=str(folder))
    reqs = build_requests(["test_frames_a"])

    def rerun() -> tuple[int, int]:
        s = score_items([item], reqs, store)
        return s.stale, s.skipped

    assert score_items([item], reqs, store).ok == 1
    (folder / "notes.txt").write_text("not a frame")
    assert rerun() == (0, 1)  # the reader ignores it, so does the fingerprint
    (folder / "fps.txt").write_text("4.0\n")
    assert rerun() == (1, 0)
    assert _current(store, "test_frames_a")["a"].value == 6.0  # 6 frames at 4 fps sampled at 4 fps
    other = Path(video(tmp_path / "other", 200))
    shutil.copyfile(sorted(other.glob("*.png"))[0], sorted(folder.glob("*.png"))[0])
    assert rerun() == (1, 0)
    assert rerun() == (0, 1)


def test_a_per_item_texts_file_rescores_only_the_changed_item(store: ResultStore, tmp_path: Path) -> None:
    captions = tmp_path / "captions.jsonl"

    def write(texts: dict[str, str]) -> None:
        lines = (json.dumps({"item_id": k, "caption": v}) + "\n" for k, v in texts.items())
        captions.write_text("".join(lines))

    write({"a": "grasp", "b": "lift"})
    items = [Item(item_id=n, video="/unused.mp4", instruction="x") for n in ("a", "b")]
    meta = {"caption": "from the manifest"}
    items.append(Item(item_id="c", video="/unused.mp4", instruction="x", meta=meta))
    reqs = build_requests(["test_caption"], {"test_caption": {"captions": str(captions)}})
    assert score_items(items, reqs, store).ok == 3
    write({"a": "grasp", "b": "lift it up", "c": "ignored: meta.caption comes first"})
    s = score_items(items, reqs, store)
    assert (s.stale, s.skipped) == (1, 2)
    values = {k: r.value for k, r in _current(store, "test_caption").items()}
    assert values == {"a": 5.0, "b": 10.0, "c": 17.0}
    items[2] = items[2].model_copy(update={"meta": {"caption": "edited"}})
    s = score_items(items, reqs, store)
    assert (s.stale, s.skipped) == (1, 2)
    assert _current(store, "test_caption")["c"].value == 6.0


def test_a_file_field_of_the_config_is_part_of_the_fingerprint(store: ResultStore, tmp_path: Path) -> None:
    """A config field typed ``Path``, or declared ``input_file``, is an input: its file's content counts."""
    table, notes = tmp_path / "table.bin", tmp_path / "notes.txt"
    table.write_bytes(b"12345")
    notes.write_bytes(b"")
    items = [Item(item_id=n, video="/unused.mp4", instruction="x") for n in ("a", "b")]
    reqs = build_requests(["test_table"], {"test_table": {"table": str(table), "notes": str(notes)}})
    score_items(items, reqs, store)
    table.write_bytes(b"1234567")
    s = score_items(items, reqs, store)
    assert (s.stale, s.ok) == (2, 2)
    assert {r.value for r in store.rows()} == {7.0}
    notes.write_bytes(b"ab")
    s = score_items(items, reqs, store)
    assert (s.stale, s.ok) == (2, 2)
    assert {r.value for r in store.rows()} == {9.0}
    moved = tmp_path / "moved.bin"
    table.rename(moved)  # another path, same content: another config hash, but the same fingerprint
    (req,) = build_requests(["test_table"], {"test_table": {"table": str(moved), "notes": str(notes)}})
    assert metric_fingerprint(items[0], req.spec, req.config) == store.rows()[0].fingerprint


def test_a_config_word_that_names_a_file_here_is_not_an_input(
    store: ResultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only fields that say they hold a path are hashed: a word that happens to name a file in the
    current folder (a tracker called ``lk_flow``, a file ``lk_flow`` here) is not read, so neither
    editing that file nor running from another folder rescores anything."""
    monkeypatch.chdir(tmp_path)
    word = tmp_path / "fast"
    word.write_text("one")
    items = [Item(item_id="a", video="/unused.mp4", instruction="x")]
    reqs = build_requests(["test_table"], {"test_table": {"label": "fast"}})
    assert score_items(items, reqs, store).ok == 1
    word.write_text("two")
    s = score_items(items, reqs, store)
    assert (s.stale, s.skipped) == (0, 1)


def test_a_config_string_too_long_for_a_file_name_does_not_break_planning(
    store: ResultStore, tmp_path: Path
) -> None:
    """Checking whether a 300-byte string names a file raises "File name too long" (OSError)."""
    long = "x" * 300
    items = [Item(item_id="a", video="/unused.mp4", instruction="x")]
    reqs = build_requests(
        ["test_table", "test_caption"], {"test_table": {"label": long}, "test_caption": {"captions": long}}
    )
    s = score_items(items, reqs, store)
    assert (s.ok, s.failed) == (1, 1)  # the caption file cannot be read: that item's row says so
    (failed,) = s.errors
    assert failed.metric == "test_caption" and "File name too long" in str(failed.error)
    assert score_items(items, reqs, store).computed == 0


def test_rows_without_fingerprint_are_kept_unless_asked(store: ResultStore, tmp_path: Path) -> None:
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 50))
    (req,) = build_requests(["test_frames_a"])
    store.add([ResultRow("a", req.id, req.config_hash, req.spec.version, "ok", 123.0)])  # as from schema 1
    s = score_items([item], [req], store)
    assert (s.unknown, s.skipped, s.computed) == (1, 1, 0)
    assert [r.value for r in store.rows()] == [123.0]
    s = score_items([item], [req], store, rescore_unknown=True)
    assert (s.unknown, s.skipped, s.ok) == (1, 0, 1)
    assert [r.value for r in store.rows()] == [3.0]  # 6 frames at 8 fps sampled at 4 fps
    assert [r.value for r in store.rows(include_superseded=True) if not r.current] == [123.0]
    assert score_items([item], [req], store, rescore_unknown=True).computed == 0


def test_a_missing_video_is_retried_once_it_appears(store: ResultStore, tmp_path: Path) -> None:
    item = Item(item_id="a", video=str(tmp_path / "later.mp4"))
    reqs = build_requests(["test_frames_a"])
    assert score_items([item], reqs, store).failed == 1
    assert score_items([item], reqs, store).computed == 0  # still missing: the failure stands
    video(tmp_path / "later.mp4", 50)
    s = score_items([item], reqs, store)
    assert (s.stale, s.ok) == (1, 1)


def test_fingerprints_reach_rows_from_worker_processes(store: ResultStore, tmp_path: Path) -> None:
    paths = [video(tmp_path / f"{n}.mp4", 10 * n) for n in range(4)]
    items = [Item(item_id=f"i{n}", video=p, instruction="x") for n, p in enumerate(paths)]
    reqs = build_requests(["test_frames_a", "test_slow"], {"test_slow": {"seconds": 0.0}})
    score_items(items, reqs, store, executor=LocalProcessExecutor(2))
    by_item = {it.item_id: it for it in items}
    rows = store.rows()
    assert len(rows) == 8
    for row in rows:
        spec = get_metric(row.metric)
        assert row.fingerprint == metric_fingerprint(by_item[row.item_id], spec, row.config or {})


def test_fingerprint_declares_only_what_a_metric_reads(tmp_path: Path) -> None:
    a = Item(item_id="a", video=video(tmp_path / "v.mp4", 50), reference_video=video(tmp_path / "r.mp4", 60),
             instruction="x")
    b = a.model_copy(update={"reference_video": video(tmp_path / "r2.mp4", 160)})
    c = a.model_copy(update={"item_id": "other", "instruction": "y"})
    assert inputs_fingerprint(a, {"video"}) == inputs_fingerprint(b, {"video"})
    assert inputs_fingerprint(a, {"video", "reference"}) != inputs_fingerprint(b, {"video", "reference"})
    assert inputs_fingerprint(a, {"video"}) == inputs_fingerprint(c, {"video"})  # the item id is no input
    assert inputs_fingerprint(a, {"video", "instruction"}) != inputs_fingerprint(c, {"video", "instruction"})
    assert inputs_fingerprint(a, {"video"}) != inputs_fingerprint(a, {"video", "instruction"})


def test_score_command_says_what_was_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from robojudge.cli import build_app

    monkeypatch.setenv("COLUMNS", "200")
    video(tmp_path / "a.mp4", 50)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "a.mp4"}) + "\n")
    db = str(tmp_path / "r.sqlite")
    args = ["score", str(manifest), "-m", "test_frames_a", "--db", db, "--no-progress"]
    assert CliRunner().invoke(build_app("score"), args).exit_code == 0
    video(tmp_path / "a.mp4", 90)
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    assert "1 stored results were recomputed because their inputs changed" in res.output
    with ResultStore(tmp_path / "r.sqlite") as store:
        (req,) = build_requests(["test_frames_a"])
        store.add([ResultRow("b", req.id, req.config_hash, req.spec.version, "ok", 1.0)])
    manifest.write_text(manifest.read_text() + json.dumps({"item_id": "b", "video": "a.mp4"}) + "\n")
    res = CliRunner().invoke(build_app("score"), args)
    assert "1 stored results have no inputs fingerprint" in res.output and "--rescore-unknown" in res.output
    res = CliRunner().invoke(build_app("score"), [*args, "--rescore-unknown"])
    assert "1 stored results without an inputs fingerprint were recomputed" in res.output


@pytest.mark.parametrize("empty", ["", None, "   "])
def test_an_empty_meta_caption_reads_the_file_and_its_edits_rescore(
    store: ResultStore, tmp_path: Path, empty: str | None
) -> None:
    """sa_bleu reads the captions file when meta.caption is empty, None or blank: so does the
    fingerprint (it used to hash only the empty meta value, and an edited file changed nothing)."""
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps({"a": "the robot picks up the red cup"}))
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 50), instruction="pick up the red cup",
                meta={"caption": empty})
    reqs = build_requests(["sa_bleu"], {"sa_bleu": {"captions": str(captions)}})
    first = score_items([item], reqs, store)
    assert first.ok == 1, first.errors
    before = _current(store, "sa_bleu")["a"].value
    captions.write_text(json.dumps({"a": "a dog runs on the beach"}))
    s = score_items([item], reqs, store)
    assert (s.stale, s.ok) == (1, 1)
    after = _current(store, "sa_bleu")["a"].value
    assert after is not None and before is not None and after < before


def test_a_meta_text_the_metric_reads_hides_the_file(store: ResultStore, tmp_path: Path) -> None:
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps({"a": "the robot picks up the red cup"}))
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 50), instruction="pick up the red cup",
                meta={"caption": "the robot picks up a cup"})
    reqs = build_requests(["sa_bleu"], {"sa_bleu": {"captions": str(captions)}})
    assert score_items([item], reqs, store).ok == 1
    captions.write_text(json.dumps({"a": "a dog runs on the beach"}))
    assert score_items([item], reqs, store).skipped == 1  # the file is not read for this item


@pytest.mark.parametrize(("meta", "reads_file"), [
    ({"key_steps": []}, True), ({"key_steps": [" ", ""]}, True), ({"key_steps": "\n"}, True),
    ({"key_steps": ["grasp", "lift"]}, False), ({}, True),
])
def test_meta_steps_follow_sa_clip_s_rule(tmp_path: Path, meta: dict, reads_file: bool) -> None:
    """sa_clip's steps: a list of blank strings is no text (the file is read), as find_steps decides."""
    from robojudge.metrics.learned.hf_text import find_steps

    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps({"a": ["open", "close"]}))
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 50), instruction="x", meta=meta)
    spec = get_metric("sa_clip")
    config = {"steps": str(steps)}
    before = metric_fingerprint(item, spec, config)
    assert (find_steps(item, "key_steps", str(steps), "steps") == ["open", "close"]) == reads_file
    steps.write_text(json.dumps({"a": ["open", "push"]}))
    assert (metric_fingerprint(item, spec, config) != before) == reads_file


def test_kiva_is_rescored_when_what_it_reads_of_an_item_that_has_it_changes(tmp_path: Path) -> None:
    # KIVA declared the video only, but its reader refuses another embodiment or robot spec and measures
    # in 3D on calibrated views: an audit corrected two swapped embodiments, and the store kept 33.33 for
    # an item a fresh run refuses, with 0 stale. Its also_reads are now part of its fingerprint.
    spec = get_metric("kiva")
    assert spec.also_reads == {"views", "embodiment", "robot"}
    config = spec.make_config({})
    clip = video(tmp_path / "v.mp4", 1)
    for name in ("robot.toml", "calib.json", "side.mp4"):
        (tmp_path / name).write_text(name)
    base = Item(item_id="a", video=clip, embodiment="gripper", robot=str(tmp_path / "robot.toml"),
                views={"front": clip, "side": str(tmp_path / "side.mp4")}, main_view="front",
                calibration=str(tmp_path / "calib.json"))
    before = metric_fingerprint(base, spec, config)
    hand = base.model_copy(update={"embodiment": "dexterous_hand"})
    assert metric_fingerprint(hand, spec, config) != before
    assert metric_fingerprint(base.model_copy(update={"calibration": None}), spec, config) != before
    for name in ("robot.toml", "calib.json", "side.mp4"):
        (tmp_path / name).write_text(name + " edited")
        now = metric_fingerprint(base, spec, config)
        assert now != before, name
        before = now
    # A metric that reads none of them is not rescored by them (its fingerprint is as it was).
    plain = get_metric("pixel_frame_consistency")
    pc = plain.make_config({})
    assert plain.also_reads == frozenset()
    assert metric_fingerprint(base, plain, pc) == metric_fingerprint(
        base.model_copy(update={"embodiment": "dexterous_hand", "robot": None}), plain, pc)
    assert metric_fingerprint(base, plain, pc) == inputs_fingerprint(base, plain.inputs, pc.model_dump(),
                                                                     type(pc))


def test_the_main_view_is_an_input_of_the_metrics_that_read_views(tmp_path: Path) -> None:
    # Multi-view networks take the main view first and KIVA triangulates from it: editing which view
    # is the main one rescores them (a mutation that dropped it from the fingerprint passed every test).
    for name in ("front", "side"):
        (tmp_path / f"{name}.mp4").write_bytes(name.encode())
    views = {"front": str(tmp_path / "front.mp4"), "side": str(tmp_path / "side.mp4")}
    front = Item(item_id="a", video=views["front"], views=views, main_view="front")
    side = front.model_copy(update={"main_view": "side"})
    for metric_id in ("rigis_da3", "rigis_vggt", "kiva"):
        spec = get_metric(metric_id)
        config = spec.make_config({})
        assert metric_fingerprint(front, spec, config) != metric_fingerprint(side, spec, config), metric_id


def test_one_planning_pass_keeps_apart_configs_that_name_different_files(tmp_path: Path) -> None:
    # score plans every row in one pass whose fingerprints are memoised per (item, what is read): kiva
    # on reader A and kiva_rigidity on reader B read the same inputs, but each covers its own reader.
    from robojudge.run._fingerprint import Fingerprints

    (tmp_path / "v.mp4").write_bytes(b"video")
    (tmp_path / "A.pt").write_bytes(b"reader A")
    (tmp_path / "B.pt").write_bytes(b"reader B")
    item = Item(item_id="a", video=str(tmp_path / "v.mp4"))
    kiva, rigidity = get_metric("kiva"), get_metric("kiva_rigidity")
    on_a = kiva.make_config({"reader": str(tmp_path / "A.pt")})
    on_b = rigidity.make_config({"reader": str(tmp_path / "B.pt")})
    prints = Fingerprints()
    planned_a = prints.metric(item, kiva, on_a).value
    planned_b = prints.metric(item, rigidity, on_b).value
    assert planned_a == metric_fingerprint(item, kiva, on_a)
    assert planned_b == metric_fingerprint(item, rigidity, on_b)
    assert planned_a != planned_b


def test_a_file_a_config_names_is_one_configuration_however_it_is_spelt(
    store: ResultStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One captions file named three ways gave three configurations and three full recomputes, and a
    # relative name stored in the config was read against whatever folder `results status` ran from.
    (tmp_path / "s").mkdir()
    captions = tmp_path / "s" / "captions.jsonl"
    captions.write_text(json.dumps({"item_id": "a", "caption": "grasp"}) + "\n")
    items = [Item(item_id="a", video="/unused.mp4", instruction="x")]
    monkeypatch.chdir(tmp_path / "s")
    (tmp_path / "link").symlink_to(tmp_path / "s")  # the same folder reached through a symbolic link
    linked = str(tmp_path / "link" / "captions.jsonl")
    spellings = ["captions.jsonl", "./captions.jsonl", str(captions), linked]
    done = [score_items(items, build_requests(["test_caption"], {"test_caption": {"captions": name}}), store)
            for name in spellings]
    assert [(d.ok, d.skipped) for d in done] == [(1, 0), (0, 1), (0, 1), (0, 1)]
    (row,) = store.rows(metric="test_caption")
    assert row.config is not None and row.config["captions"] == str(captions)  # stored absolute
    # From another folder the stored name still finds the file: the row stays current.
    monkeypatch.chdir("/")
    (req,) = build_requests(["test_caption"], {"test_caption": {"captions": row.config["captions"]}})
    assert metric_fingerprint(items[0], req.spec, req.config) == row.fingerprint
    # Another file is another configuration: runs alternating between two files (two readers of one
    # robot, two caption sources) keep both, and the third computes nothing.
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"item_id": "a", "caption": "lift it"}) + "\n")
    runs = [score_items(items, build_requests(["test_caption"], {"test_caption": {"captions": str(f)}}),
                        store) for f in (other, captions, other)]
    assert [(r.ok, r.stale, r.skipped) for r in runs] == [(1, 0, 0), (0, 0, 1), (0, 0, 1)]
    assert len({r.config_hash for r in store.rows(metric="test_caption")}) == 2


def test_a_model_metric_is_rescored_when_its_weights_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pointing ROBOJUDGE_WEIGHTS at another RAFT file gave 0.559 against 1.978 for one video, and the
    # stored row stayed "already stored": the weights were recorded nowhere.
    from robojudge import settings

    spec = get_metric("flow_motion_magnitude_raft")
    (name,) = spec.weights
    filename = "raft_large_C_T_V1-22a6c225.pth"
    config = spec.make_config({})
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 9))

    def using(folder: Path, content: bytes | None) -> tuple[str, bool]:
        if content is not None:
            (folder / name).mkdir(parents=True, exist_ok=True)
            (folder / name / filename).write_bytes(content)
        monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(folder))
        settings.reload()
        found = metric_inputs(item, spec, config)
        return found.value, found.unavailable

    a, missing_a = using(tmp_path / "wa", b"weights A")
    b, _ = using(tmp_path / "wb", b"weights B")
    same, _ = using(tmp_path / "wc", b"weights A")  # a copy of A elsewhere: the same weights
    assert a != b and a == same and not missing_a
    gone, unavailable = using(tmp_path / "empty", None)
    assert gone not in (a, b) and unavailable  # stored rows are kept, as for an input file gone
    # A metric that loads no network has no such part.
    plain = get_metric("pixel_frame_consistency")
    assert plain.weights == () and metric_inputs(item, plain, plain.make_config({})).unavailable is False


def test_weights_are_looked_for_once_a_minute_not_once_an_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Finding weights scans the hub cache: once per item and metric, planning 200 items took 10 s.
    from robojudge import settings
    from robojudge.run import _fingerprint as fpm

    calls: list[str] = []
    weights = tmp_path / "raft.pth"
    weights.write_bytes(b"weights")

    def found(name: str) -> Path | None:
        calls.append(name)
        return weights

    monkeypatch.setattr(fpm, "_weights_path", found)
    monkeypatch.setattr(fpm, "_weights_memo", {})
    spec = get_metric("flow_motion_magnitude_raft")
    config = spec.make_config({})
    items = [Item(item_id=f"i{k}", video=video(tmp_path / f"v{k}.mp4", 12 * k)) for k in range(20)]
    prints = {metric_inputs(it, spec, config).value for it in items}
    assert len(prints) == 20 and calls == ["raft_things"]
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path))  # another weights folder: looked for again
    settings.reload()
    metric_inputs(items[0], spec, config)
    assert calls == ["raft_things", "raft_things"]
    monkeypatch.setattr(fpm, "WEIGHTS_TTL_S", 0.0)  # and after the time is up
    metric_inputs(items[0], spec, config)
    assert len(calls) == 3
    # Weights not found are not remembered: fetched a moment later, they are found at once.
    monkeypatch.setattr(fpm, "WEIGHTS_TTL_S", 60.0)
    monkeypatch.setattr(fpm, "_weights_memo", {})
    monkeypatch.setattr(fpm, "_weights_path", lambda name: calls.append(name))
    assert metric_inputs(items[1], spec, config).unavailable
    assert metric_inputs(items[2], spec, config).unavailable and len(calls) == 5


def test_rows_fingerprinted_before_the_weights_were_covered_are_kept_not_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Adding the weights (and KIVA's also_reads) to the recipe made every stored model-metric row
    # "stale: inputs changed", and the report left them all out. Such a row is unknown: kept.
    from robojudge import settings
    from robojudge.run._status import results_status, stale_rows

    (tmp_path / "w" / "raft_things").mkdir(parents=True)
    (tmp_path / "w" / "raft_things" / "raft_large_C_T_V1-22a6c225.pth").write_bytes(b"weights")
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "w"))
    settings.reload()
    spec = get_metric("flow_motion_magnitude_raft")
    config = spec.make_config({})
    item = Item(item_id="a", video=video(tmp_path / "v.mp4", 9))
    now = metric_inputs(item, spec, config)
    old = inputs_fingerprint(item, spec.inputs, config.model_dump(mode="json"), spec.config_type)
    assert now.legacy == old != now.value
    row = ResultRow("a", spec.id, spec.config_hash(config), spec.version, "ok", 1.5,
                    config=config.model_dump(mode="json"), fingerprint=old)
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([row])
        status = results_status(store, [item])
        assert stale_rows(store.rows(), [item]) == []
        reqs = build_requests([spec.id])
        kept = score_items([item], reqs, store)
        assert (kept.unknown, kept.stale, kept.ok + kept.failed) == (1, 0, 0)
    (m,) = [m for m in status.metrics if m.metric == spec.id]
    assert (m.unknown, m.stale, m.up_to_date) == (1, 0, 0)
    assert "older recipe" in status.unknown[0].reason


def test_a_row_read_where_its_weights_are_not_is_still_checked_against_its_video(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scored on a GPU machine, read on a laptop without the weights: a video replaced since kept its old
    # value current in status, export, report and leaderboards (the weights' absence turned the check off).
    from robojudge import settings
    from robojudge.metrics import METRICS, Score, metric
    from robojudge.run import _fingerprint as fpm
    from robojudge.run._status import results_status, stale_rows

    weights = tmp_path / "w" / "raft_things" / "raft_large_C_T_V1-22a6c225.pth"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"weights A")

    def weights_in(folder: Path) -> None:
        monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(folder))
        settings.reload()
        monkeypatch.setattr(fpm, "_weights_memo", {})

    meta = dict(family="baseline", higher_is_better=True, native_range=(None, None), version="1",
                citation="robojudge test suite", description="test-only metric")
    item = Item(item_id="a", video=video(tmp_path / "a.mp4", 40))
    other = Item(item_id="b", video=video(tmp_path / "b.mp4", 90))
    with METRICS.scratch(), ResultStore(tmp_path / "r.sqlite") as store:
        metric("test_netted", inputs={"video"}, weights=("raft_things",), **meta)(  # type: ignore[arg-type]
            lambda it, config: Score(value=float(len(it.item_id))))
        weights_in(tmp_path / "w")
        done = score_items([item, other], build_requests(["test_netted"]), store)
        assert done.ok == 2
        recorded = {r.item_id: (r.details or {}).get("network_weights") for r in store.rows()}
        assert recorded == {"a": {"raft_things": fpm.file_digest(weights)}, "b": recorded["a"]}
        # A row that records nothing (stored before rows recorded their weights) is read as before.
        (old,) = [r for r in store.rows() if r.item_id == "b"]
        store.add([ResultRow("c", old.metric, old.config_hash, old.version, "ok", 1.0, config=old.config,
                             fingerprint=old.fingerprint)])
        legacy = Item(item_id="c", video=other.video)

        weights_in(tmp_path / "laptop")  # the weights are not here
        items = [item, other, legacy]
        status = results_status(store, items)
        (m,) = status.metrics
        assert (m.up_to_date, m.stale, m.unavailable) == (2, 0, 1)
        assert [r.item_id for r in status.unavailable] == ["c"]
        assert stale_rows(store.rows(), items) == []

        video(tmp_path / "a.mp4", 200)  # the video is replaced
        status = results_status(store, items)
        (m,) = status.metrics
        assert (m.up_to_date, m.stale, m.unavailable) == (1, 1, 1)
        assert [r.item_id for r in status.stale] == ["a"]
        assert [r.item_id for r in stale_rows(store.rows(), items)] == ["a"]
        # A run here cannot compute it without its weights: it keeps the row, as for any file gone.
        kept = score_items(items, build_requests(["test_netted"]), store)
        assert (kept.ok, kept.failed, kept.unavailable) == (0, 0, 3)
        # Each unavailable row says why: the weights where it records none, else its own file.
        (tmp_path / "b.mp4").rename(tmp_path / "away.mp4")
        reasons = {r.item_id: r.reason for r in results_status(store, items).unavailable}
        assert "the network weights raft_things are not on this machine" in reasons["c"]
        assert reasons["b"] == "inputs cannot be read now (missing or unreadable)"
        (tmp_path / "away.mp4").rename(tmp_path / "b.mp4")

        weights_in(tmp_path / "w")  # back where the weights are: recomputed there
        again = score_items(items, build_requests(["test_netted"]), store)
        assert (again.stale, again.ok, again.unknown) == (1, 1, 0)
        # Other weights here are another result, recorded digests or not.
        weights.write_bytes(b"weights B")
        weights_in(tmp_path / "w")  # (weights are looked for once a minute)
        status = results_status(store, items)
        assert status.metrics[0].stale == 3


def test_a_moved_project_s_file_settings_take_over_their_results(tmp_path: Path) -> None:
    # A project moved to another folder named its captions file (or KIVA reader) by another path: another
    # configuration, computed again, and the old one's rows stayed current beside it (reports listed the
    # metric twice, best-of-N and aggregate refused it).
    from robojudge.run._moved import TAKEN_OVER

    def texts(folder: Path, captions: dict[str, str]) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "captions.jsonl"
        path.write_text("".join(json.dumps({"item_id": k, "caption": v}) + "\n" for k, v in captions.items()))
        return path

    items = [Item(item_id=n, video="/unused.mp4", instruction="x") for n in ("a", "b", "c")]
    laptop = texts(tmp_path / "laptop", {"a": "grasp", "b": "lift it", "c": "push"})
    with ResultStore(tmp_path / "results.sqlite") as store:
        asked = {"test_caption": {"captions": str(laptop)}}
        first = score_items(items, build_requests(["test_caption"], asked), store)
        assert first.ok == 3
        (old_hash,) = {r.config_hash for r in store.rows()}
        # The project moves: the same file elsewhere, but item c's caption was edited on the way.
        laptop.unlink()
        moved = texts(tmp_path / "cluster" / "proj", {"a": "grasp", "b": "lift it", "c": "push it"})
        reqs = build_requests(["test_caption"], {"test_caption": {"captions": str(moved)}})
        again = score_items(items, reqs, store)
        assert (again.taken_over, again.ok, again.skipped) == (2, 1, 2)
        current = {r.item_id: r for r in store.rows()}
        assert {r.config_hash for r in current.values()} == {reqs[0].config_hash} != {old_hash}
        assert {k: (r.details or {}).get(TAKEN_OVER) for k, r in current.items()} == {
            "a": old_hash, "b": old_hash, "c": None}
        assert current["a"].config is not None and current["a"].config["captions"] == str(moved)
        kept = [r for r in store.rows(include_superseded=True) if not r.current]
        assert sorted(r.item_id for r in kept) == ["a", "b"] and {r.config_hash for r in kept} == {old_hash}
        # c's old row (another caption) is another result: it stays under its configuration.
        assert store.current_fingerprints("test_caption", old_hash, "1").keys() == {"c"}
        # Nothing is taken over twice, and a third run computes nothing.
        third = score_items(items, reqs, store)
        assert (third.taken_over, third.ok, third.skipped) == (0, 0, 3)


def test_another_file_that_is_still_there_keeps_its_rows(tmp_path: Path) -> None:
    # Two captions files that agree on most items: the second's run took the first's rows (a per-item
    # text is all the fingerprint holds of them), and running the first again took them back.
    def texts(name: str, captions: dict[str, str]) -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps({"item_id": k, "caption": v}) + "\n" for k, v in captions.items()))
        return str(path)

    items = [Item(item_id=n, video="/unused.mp4", instruction="x") for n in ("a", "b", "c")]
    first = texts("a.jsonl", {"a": "grasp", "b": "lift it", "c": "push"})
    second = texts("b.jsonl", {"a": "grasp", "b": "lift it", "c": "push it"})
    with ResultStore(tmp_path / "results.sqlite") as store:
        for path, ok in ((first, 3), (second, 3), (first, 0)):
            done = score_items(items, build_requests(["test_caption"], {"test_caption": {"captions": path}}),
                               store)
            assert (done.taken_over, done.ok) == (0, ok)
        assert len(store.rows()) == 6 and len(store.rows(include_superseded=True)) == 6


def test_rows_taken_over_are_rescored_for_their_libraries_in_the_same_run(tmp_path: Path) -> None:
    from robojudge.run import library_versions

    old = tmp_path / "old" / "captions.jsonl"
    old.parent.mkdir()
    old.write_text(json.dumps({"item_id": "a", "caption": "grasp"}) + "\n")
    items = [Item(item_id="a", video="/unused.mp4", instruction="x")]
    with ResultStore(tmp_path / "results.sqlite") as store:
        (req,) = build_requests(["test_caption"], {"test_caption": {"captions": str(old)}})
        assert library_versions(req.spec) is not None
        score_items(items, [req], store)
        (row,) = store.rows()
        with store._write() as conn:  # as computed with another NumPy (details.libraries differs)
            from sqlalchemy import update

            from robojudge.store._schema import results_table as t
            conn.execute(update(t).values(details={**(row.details or {}), "libraries": "numpy 0.1"}))
        new = tmp_path / "new" / "captions.jsonl"
        new.parent.mkdir()
        old.rename(new)
        reqs = build_requests(["test_caption"], {"test_caption": {"captions": str(new)}})
        done = score_items(items, reqs, store, rescore_libraries=True)
        assert (done.taken_over, done.rescored_libraries, done.ok) == (1, 1, 1)
        (now,) = store.rows()
        assert (now.details or {}).get("libraries") != "numpy 0.1"


def test_a_rerun_counts_the_kept_rows_of_other_library_versions(tmp_path: Path) -> None:
    # Rescoring on an install with another OpenCV kept every row and said only "already stored"; values
    # can differ by tens of percent between OpenCV releases (audit s69_deps 5).
    captions = tmp_path / "captions.jsonl"
    captions.write_text("".join(json.dumps({"item_id": n, "caption": "grasp"}) + "\n" for n in ("a", "b")))
    items = [Item(item_id=n, video="/unused.mp4", instruction="x") for n in ("a", "b")]
    reqs = build_requests(["test_caption"], {"test_caption": {"captions": str(captions)}})
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items, reqs, store)
        row = next(r for r in store.rows() if r.item_id == "a")
        with store._write() as conn:  # as computed with another NumPy (details.libraries differs)
            from sqlalchemy import update

            from robojudge.store._schema import results_table as t
            conn.execute(update(t).where(t.c.item_id == "a")
                         .values(details={**(row.details or {}), "libraries": "numpy 0.1"}))
        again = score_items(items, reqs, store)
        assert (again.skipped, again.other_libraries, again.ok) == (2, 1, 0)
        done = score_items(items, reqs, store, rescore_libraries=True)
        assert (done.rescored_libraries, done.other_libraries, done.ok) == (1, 0, 1)
        assert score_items(items, reqs, store).other_libraries == 0


def test_score_says_it_kept_rows_of_other_library_versions(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from robojudge.cli import build_app
    from robojudge.store._schema import results_table as t

    manifest = tmp_path / "suite.jsonl"
    (tmp_path / "v.mp4").write_bytes(b"not opened")
    manifest.write_text(json.dumps({"item_id": "a", "video": "v.mp4"}) + "\n")
    db = tmp_path / "results.sqlite"
    args = ["score", str(manifest), "--db", str(db), "-m", "uniform_random"]
    first = CliRunner().invoke(build_app("score"), args)
    assert first.exit_code == 0, first.output
    with ResultStore(db) as store:
        (row,) = store.rows()
        with store._write() as conn:
            from sqlalchemy import update

            conn.execute(update(t).values(details={**(row.details or {}), "libraries": "numpy 0.1"}))
    again = CliRunner().invoke(build_app("score"), args)
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "1 stored results kept were computed with other library versions than installed here" in said
    assert "--rescore-libraries recomputes them" in said


def test_the_references_own_state_file_is_an_input_of_the_metrics_that_read_it(tmp_path: Path) -> None:
    # The tracking metrics read the reference's simulator state (`<reference>.npz`, the truth its tracks
    # are checked against): a replaced one makes their rows stale, and leaves a metric that never reads
    # it (iq1_psnr) current.
    (tmp_path / "gen.mp4").write_bytes(b"generated video bytes")
    (tmp_path / "ref.mp4").write_bytes(b"reference video bytes")
    np.savez(tmp_path / "gen.npz", x=np.zeros(3))
    np.savez(tmp_path / "ref.npz", x=np.zeros(3))
    item = Item(item_id="a", video=str(tmp_path / "gen.mp4"), reference_video=str(tmp_path / "ref.mp4"),
                state=str(tmp_path / "gen.npz"))
    specs = [get_metric(m) for m in ("ta_hsd", "ol_average_precision", "iq1_psnr")]
    before = [metric_fingerprint(item, s, s.make_config({})) for s in specs]
    np.savez(tmp_path / "ref.npz", x=np.ones(3))
    after = [metric_fingerprint(item, s, s.make_config({})) for s in specs]
    assert [b != a for b, a in zip(before, after, strict=True)] == [True, True, False]


def test_a_set_metrics_reference_pool_gives_one_fingerprint_in_every_process(tmp_path: Path) -> None:
    # Two `robojudge metrics sets` runs are two processes with two string-hash seeds: the pool's digests
    # must not come out in set order, or every run finds the stored set-level rows stale.
    import os
    import subprocess
    import sys

    refs = []
    for i in range(6):
        (tmp_path / f"ref{i}.mp4").write_bytes(f"reference {i}".encode())
        refs.append(str(tmp_path / f"ref{i}.mp4"))
    (tmp_path / "gen.mp4").write_bytes(b"generated")
    code = (
        "from robojudge.metrics import get_metric\n"
        "from robojudge.run._fingerprint import set_inputs\n"
        "from robojudge.suite import Item\n"
        f"items = [Item(item_id='a', video={str(tmp_path / 'gen.mp4')!r})]\n"
        f"print(set_inputs(get_metric('pixel_frame_consistency'), items, {{}}, pool={refs!r}).value)\n"
    )
    seen = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, ROBOJUDGE_CACHE_DIR=str(tmp_path / "cache"))
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True)
        seen.add(done.stdout.strip())
    assert len(seen) == 1 and "" not in seen, seen
