"""Judge rows carry the fingerprint of what the judge read: a changed video or instruction is re-judged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._fingerprint import judge_fingerprint
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

REPLY = '{"reasoning": "fine", "instruction_alignment": 4}'


def _video(path: Path, level: int) -> str:
    frames = np.full((8, 32, 32, 3), level, np.uint8)
    frames[:, 4:8, 4:8] = 255 - level
    write_video(path, frames, fps=4)
    return str(path)


def test_changed_inputs_are_judged_again(tmp_path: Path) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    ia = get_rubric("ia")
    items = [Item(item_id=n, video=_video(tmp_path / f"{n}.mp4", 30 * (i + 1)), instruction=f"task {n}")
             for i, n in enumerate(["a", "b", "c"])]
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert first.scored == 3
        rows = {r.item_id: r for r in store.rows()}
        assert all(rows[it.item_id].fingerprint == judge_fingerprint(it) for it in items)

        again = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert (again.skipped, again.computed) == (3, 0)

        _video(tmp_path / "a.mp4", 200)  # new content under the same item id
        items[1] = items[1].model_copy(update={"instruction": "another task"})
        third = judge_items(items, judge, [ia], store, cache=cache, decode_workers=0)
        assert (third.skipped, third.scored) == (1, 2)
        superseded = sorted(r.item_id for r in store.rows(include_superseded=True) if not r.current)
        assert superseded == ["a", "b"]
        assert store.count() == 3
        expected = {it.item_id: judge_fingerprint(it) for it in items}
        assert {r.item_id: r.fingerprint for r in store.rows()} == expected


@pytest.mark.parametrize("field", ["reference_video", "state"])
def test_inputs_a_judge_does_not_read_change_nothing(tmp_path: Path, field: str) -> None:
    item = Item(item_id="a", video=_video(tmp_path / "a.mp4", 40), instruction="x")
    other = tmp_path / "other.bin"
    other.write_bytes(b"anything")
    assert judge_fingerprint(item) == judge_fingerprint(item.model_copy(update={field: str(other)}))


def test_judgments_without_fingerprint_are_kept_unless_asked(tmp_path: Path) -> None:
    from robojudge.store import ResultRow

    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    ia = get_rubric("ia")
    item = Item(item_id="a", video=_video(tmp_path / "a.mp4", 60), instruction="task")
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items([item], judge, [ia], store, cache=cache, decode_workers=0)
        assert first.scored == 1
        (row,) = store.rows()
        # The same judgment as a store from before schema 2 holds it: no fingerprint, another value.
        with ResultStore(tmp_path / "old.sqlite") as old:
            old.add([ResultRow(row.item_id, row.metric, row.config_hash, row.version, "ok", 2.0,
                               config=row.config)])
            kept = judge_items([item], judge, [ia], old, cache=cache, decode_workers=0)
            assert (kept.skipped, kept.computed) == (1, 0)
            assert [r.value for r in old.rows()] == [2.0]
            redone = judge_items(
                [item], judge, [ia], old, cache=cache, decode_workers=0, rescore_unknown=True
            )
            assert redone.scored == 1
            assert [r.value for r in old.rows()] == [4.0]
            assert [r.value for r in old.rows(include_superseded=True) if not r.current] == [2.0]


def test_a_video_changed_while_it_is_judged_is_judged_again(tmp_path: Path) -> None:
    """What the judge said is not stored under the fingerprint the run planned with (the old file's),
    nor under the new file's (the judge saw the old frames): the item stays to judge, and the next
    run judges the video that is there then."""
    from robojudge.judges._mock import MockBackend

    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    ia = get_rubric("ia")
    path = _video(tmp_path / "a.mp4", 40)
    item = Item(item_id="a", video=path, instruction="task")
    planned = judge_fingerprint(item)

    def rewrite_then_reply(request: object) -> str:
        _video(Path(path), 220)  # a new render lands while the judge looks at the old frames
        return REPLY

    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items([item], judge, [ia], store, cache=cache, decode_workers=0,
                            backend=MockBackend(judge, rewrite_then_reply))
        assert (first.scored, first.changed_inputs, first.changed_items) == (0, 1, ["a"])
        assert store.rows() == [] and judge_fingerprint(item) != planned
        again = judge_items([item], judge, [ia], store, cache=cache, decode_workers=0)
        assert (again.stale, again.scored, again.skipped, again.changed_inputs) == (0, 1, 0, 0)
        assert store.rows()[0].fingerprint == judge_fingerprint(item)


@pytest.mark.parametrize("scoring", ["argmax", "expected"])
def test_the_judge_fingerprint_is_taken_once_per_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scoring: str
) -> None:
    """It does not depend on the rubric: one per item for planning, rows and fallback lookups, and one
    more per judged item to check that its video did not change while it was judged."""
    from robojudge.run import _fingerprint

    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
    rubrics = [get_rubric("ia"), get_rubric("pa"), get_rubric("ts_vlm2")]
    items = [Item(item_id=n, video=_video(tmp_path / f"{n}.mp4", 40 + 50 * k), instruction="task")
             for k, n in enumerate("ab")]
    taken: list[str] = []
    digest = _fingerprint.file_digest

    def counted(path: str) -> str:
        taken.append(Path(path).name)
        return digest(path)

    monkeypatch.setattr(_fingerprint, "file_digest", counted)
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        judge_items(items, judge, rubrics, store, cache=cache, decode_workers=0, scoring=scoring)
        assert sorted(taken) == ["a.mp4", "a.mp4", "b.mp4", "b.mp4"]
        taken.clear()
        again = judge_items(items, judge, rubrics, store, cache=cache, decode_workers=0, scoring=scoring)
        assert again.skipped == 6 and sorted(taken) == ["a.mp4", "b.mp4"]


def test_judge_summary_counts_stale_and_unknown_and_the_cli_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import typer
    from typer.testing import CliRunner

    from robojudge.cli._judge import judge as judge_cmd
    from robojudge.store import ResultRow

    monkeypatch.setenv("COLUMNS", "200")
    app = typer.Typer()
    app.command("judge")(judge_cmd)
    app.command("noop")(lambda: None)
    items = [Item(item_id=n, video=_video(tmp_path / f"{n}.mp4", 40 + 50 * k), instruction="task")
             for k, n in enumerate("ab")]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(exclude_none=True)) + "\n" for it in items))
    judges = tmp_path / "robojudge.toml"
    judges.write_text(f'[judges.mk]\nbackend = "mock"\nmodel = "m"\nreplies = [{json.dumps(REPLY)}]\n')
    db = tmp_path / "results.sqlite"
    args = ["judge", str(manifest), "--judge", "mk", "--judges", str(judges), "--rubric", "ia", "--db",
            str(db), "--no-progress", "--decode-workers", "0", "--cache-dir", str(tmp_path / "cache")]
    assert CliRunner().invoke(app, args).exit_code == 0
    _video(tmp_path / "a.mp4", 230)
    with ResultStore(db) as store:
        (b,) = [r for r in store.rows() if r.item_id == "b"]
    with ResultStore(tmp_path / "plain.sqlite") as plain:  # b's row as a store from before schema 2 holds it
        plain.add([ResultRow("b", b.metric, b.config_hash, b.version, "ok", 1.0, config=b.config)])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "1 stored results were recomputed because their inputs changed" in res.output
    res = CliRunner().invoke(app, [*args[:9], str(tmp_path / "plain.sqlite"), *args[10:]])
    assert res.exit_code == 0, res.output
    assert "1 stored results have no inputs fingerprint" in res.output

    with ResultStore(tmp_path / "plain.sqlite") as plain, ResponseCache(tmp_path / "cache") as cache:
        judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": [REPLY]})
        kept = judge_items(items, judge, [get_rubric("ia")], plain, cache=cache, decode_workers=0)
        assert (kept.unknown, kept.stale, kept.skipped) == (1, 0, 2)


def test_retry_errors_clears_each_rubric_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": ["no idea"]})
    item = Item(item_id="a", video=_video(tmp_path / "a.mp4", 60), instruction="task")
    cleared: list[tuple[str, bool]] = []
    clear = ResultStore.clear_errors

    def counted(self: ResultStore, metric: str, *args: object, unscored: bool = False, **kw: object) -> int:
        cleared.append((metric, unscored))
        return clear(self, metric, *args, unscored=unscored, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ResultStore, "clear_errors", counted)
    with ResultStore(tmp_path / "results.sqlite") as store, ResponseCache(tmp_path / "cache") as cache:
        first = judge_items([item], judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
        assert first.unscored == 1 and cleared == []
        again = judge_items([item], judge, [get_rubric("ia")], store, cache=cache, decode_workers=0,
                            retry_errors=True)
        assert again.unscored == 1 and store.count(include_superseded=True) == 1
    assert cleared == [("judge:mk:ia", True)]
