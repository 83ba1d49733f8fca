"""Inputs that cannot be read now (a drive not mounted, a share gone) keep the stored results.

A missing or unreadable file changes the fingerprint; before, every stored pair became stale, was
recomputed into error rows that superseded the good ones, and was recomputed again when the drive
came back. Now such pairs are kept and counted as *inputs unavailable*; pairs never stored are
still tried (their error row is the right answer).
"""

from __future__ import annotations

import json
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run import SerialExecutor, build_requests, score_items
from robojudge.run._judge import judge_items
from robojudge.run._status import results_status
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _video(path: Path, level: int) -> str:
    frames = np.full((8, 16, 16, 3), level, np.uint8)
    frames[:, 2:6, 2:6] = 255 - level
    write_video(path, frames, fps=4)
    return str(path)


@pytest.fixture
def drive(tmp_path: Path) -> Path:
    folder = tmp_path / "drive"
    folder.mkdir()
    return folder


def _items(drive: Path, names: str = "ab") -> list[Item]:
    return [Item(item_id=n, video=_video(drive / f"{n}.mp4", 40 * (k + 1)), instruction=f"do {n}")
            for k, n in enumerate(names)]


def _unmount(drive: Path) -> Path:
    away = drive.with_name("unmounted")
    drive.rename(away)  # the paths stay, the files are gone: what an unmounted drive looks like
    return away


def test_a_drive_briefly_gone_keeps_the_stored_results(tmp_path: Path, drive: Path) -> None:
    items = _items(drive)
    reqs = build_requests(["test_frames_a", "test_slow"], {"test_slow": {"seconds": 0.0}})
    with ResultStore(tmp_path / "results.sqlite") as store:
        assert score_items(items, reqs, store).ok == 4
        good = {r.key: r for r in store.rows()}
        away = _unmount(drive)
        new = Item(item_id="c", video=str(drive / "c.mp4"), instruction="do c")
        gone = score_items([*items, new], reqs, store)
        # a and b: test_frames_a reads the video (kept, unavailable); test_slow only the instruction
        assert (gone.unavailable, gone.stale, gone.skipped) == (2, 0, 4)
        assert (gone.ok, gone.failed) == (1, 1)  # c was never stored: tried, its error row says why
        assert "missing" in str(gone.errors[0].error) or "video" in str(gone.errors[0].error)
        assert {k: r for k, r in ((r.key, r) for r in store.rows()) if k in good} == good
        assert store.count(include_superseded=True) == 6  # nothing superseded

        away.rename(drive)
        _video(drive / "c.mp4", 200)
        back = score_items([*items, new], reqs, store)
        assert (back.skipped, back.stale, back.unavailable) == (5, 1, 0)  # only c's failure is redone
        assert back.ok == 1 and {k: r for k, r in ((r.key, r) for r in store.rows()) if k in good} == good


def test_a_changed_then_unavailable_input_is_recomputed_when_back(tmp_path: Path, drive: Path) -> None:
    items = _items(drive)
    (req,) = build_requests(["test_frames_b"])
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items, [req], store)
        _video(drive / "a.mp4", 220)
        away = _unmount(drive)
        assert score_items(items, [req], store).unavailable == 2
        away.rename(drive)
        s = score_items(items, [req], store)
        assert (s.stale, s.skipped, s.ok) == (1, 1, 1)
        assert {r.item_id: round(r.value or 0) for r in store.rows()}["a"] == pytest.approx(220, abs=20)


def test_status_and_cli_count_unavailable_inputs(tmp_path: Path, drive: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI an item whose video is missing is left out by the manifest check; a captions
    file on the drive is not checked there, so its metric's rows reach the planner."""
    monkeypatch.setenv("COLUMNS", "250")
    (tmp_path / "videos").mkdir()
    items = _items(tmp_path / "videos")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    captions = drive / "captions.json"
    captions.write_text(json.dumps({"a": "grasp", "b": "lift"}))
    db = str(tmp_path / "results.sqlite")
    args = ["score", str(manifest), "-m", "test_caption", "--set", f"test_caption.captions={captions}",
            "--db", db, "--no-progress"]
    assert CliRunner().invoke(build_app("score"), args).exit_code == 0
    away = _unmount(drive)
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    assert "2 stored results were kept because their inputs cannot be read now" in res.output
    with ResultStore(db, read_only=True) as store:
        status = results_status(store, items)
        assert [r.status for r in store.rows()] == ["ok", "ok"]
    (counts,) = status.metrics
    assert (counts.current, counts.up_to_date, counts.stale, counts.unavailable) == (2, 0, 0, 2)
    assert sorted(r.item_id for r in status.unavailable) == ["a", "b"] and status.stale == []
    status_args = ["results", "status", str(manifest), "--db", db, "--stale"]
    res = CliRunner().invoke(build_app("results"), status_args)
    assert res.exit_code == 0, res.output
    assert "2 with inputs unavailable" in res.output and "inputs cannot be read now" in res.output
    away.rename(drive)
    with ResultStore(db, read_only=True) as store:
        (counts,) = results_status(store, items).metrics
    assert (counts.up_to_date, counts.unavailable) == (2, 0)


def test_judgments_of_unavailable_videos_are_kept(tmp_path: Path, drive: Path) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    items = _items(drive)
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        assert judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0).scored == 2
        good = store.rows()
        away = _unmount(drive)
        gone = judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        assert (gone.unavailable, gone.skipped, gone.computed) == (2, 2, 0)
        assert store.rows() == good and store.count(include_superseded=True) == 2
        away.rename(drive)
        back = judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        assert (back.skipped, back.computed, back.stale, back.unavailable) == (2, 0, 0, 0)


class _UnmountFirst(SerialExecutor):
    """Runs the planned tasks after the drive went away: an outage between planning and computing."""

    def __init__(self, drive: Path) -> None:
        self.drive = drive

    def map_unordered(self, fn, tasks, on_crash):  # type: ignore[no-untyped-def]
        _unmount(self.drive)
        return super().map_unordered(fn, tasks, on_crash)


def test_an_input_gone_while_computing_is_tried_again_when_back(tmp_path: Path, drive: Path) -> None:
    """A result that failed because its file vanished after planning keeps the fingerprint of the
    inputs as they were when it failed (missing), so a run with the file back tries it again."""
    items = _items(drive)
    (req,) = build_requests(["test_frames_b"])
    with ResultStore(tmp_path / "results.sqlite") as store:
        score_items(items[:1], [req], store)
        _video(drive / "a.mp4", 230)  # a changes: stale; b is new
        failed = score_items(items, [req], store, executor=_UnmountFirst(drive))
        assert (failed.stale, failed.failed) == (1, 2)
        drive.with_name("unmounted").rename(drive)
        back = score_items(items, [req], store)
        assert (back.stale, back.ok, back.skipped) == (2, 2, 0)
        assert {r.item_id: r.status for r in store.rows()} == {"a": "ok", "b": "ok"}


def test_a_judged_video_gone_while_judging_is_judged_again_when_back(tmp_path: Path, drive: Path) -> None:
    from robojudge.judges._mock import MockBackend

    class UnmountOnStart(MockBackend):
        def start(self) -> None:  # called once planning is done, before the first video is decoded
            _unmount(drive)

    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    items = _items(drive, "a")
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0,
                            backend=UnmountOnStart(judge))
        assert first.failed == 1
        drive.with_name("unmounted").rename(drive)
        back = judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        assert (back.stale, back.scored) == (1, 1)


def test_missing_weights_are_named_as_what_cannot_be_read(tmp_path: Path, drive: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # A model metric's rows read where its weights are not (scored on a GPU box, read on a laptop) were
    # "inputs cannot be read now (missing or unreadable)", though the video is at hand.
    from robojudge.store import ResultRow

    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "no-weights"))
    items = _items(drive, "a")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow("a", "clip_frame_consistency", "h", "1", "ok", 0.9, fingerprint="f" * 64),
                   ResultRow("a", "test_frames_a", "h", "1", "ok", 1.0, fingerprint="f" * 64)])
        status = results_status(store, items)
    reasons = {r.metric: r.reason for r in status.unavailable}
    assert "the network weights clip_vit_b32 are not on this machine" in reasons["clip_frame_consistency"]
    assert "test_frames_a" not in reasons  # a weights-free metric's inputs are all here: stale, not unknown
