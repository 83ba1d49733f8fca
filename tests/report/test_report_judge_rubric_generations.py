"""A judge run again with changed rubric files keeps one PA+IA judge per rubric generation.

The new rubrics give new config hashes, so the old rows stay current beside the new ones. The judge's
config without the rubric then held two PA and two IA series, and each was split into a judge of one
axis: no Overall, and no label that `--scores judge:NAME` could take for the current judge.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from robojudge.judges import load_rubric_file, make_judge
from robojudge.judges._mock import MockBackend
from robojudge.meta import OVERALL
from robojudge.report import judge_scores, judge_series, judges_report
from robojudge.run import judge_items
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

RUBRICS = Path(__file__).parents[2] / "src" / "robojudge" / "data" / "rubrics"


def rubric_files(folder: Path, version: str, old: str = "", new: str = "") -> list[Path]:
    """The built-in PA and IA rubrics at ``version``, with ``old`` replaced by ``new`` in PA's text."""
    folder.mkdir()
    out = []
    for axis in ("pa", "ia"):
        text = (RUBRICS / f"{axis}.toml").read_text(encoding="utf-8")
        text = text.replace('version = "1"', f'version = "{version}"', 1)
        if axis == "pa" and old:
            assert old in text
            text = text.replace(old, new)
        (folder / f"{axis}.toml").write_text(text, encoding="utf-8")
        out.append(folder / f"{axis}.toml")
    return out


def _reply(request) -> str:  # PA 4 under the first wording, 2 under the second; IA always 3
    if "instruction_alignment" in request.system + request.user:
        return '{"reasoning": "r", "instruction_alignment": 3}'
    return f'{{"reasoning": "r", "physical_adherence": {2 if "plausible" in request.system else 4}}}'


def _items(tmp_path: Path, n: int = 4) -> list[Item]:
    out = []
    for k in range(n):
        frames = np.full((6, 32, 32, 3), 40 * (k + 1), np.uint8)
        path = tmp_path / f"v{k}.mp4"
        write_video(path, frames, fps=4)
        out.append(Item(item_id=f"i{k}", video=str(path), clip_id=f"c{k}", generator="g", instruction="push",
                        labels={"pa": 4, "ia": 3}))
    return out


def test_rejudged_with_new_rubrics_gives_one_paired_judge_per_generation(tmp_path: Path) -> None:
    items = _items(tmp_path)
    first = [load_rubric_file(p) for p in rubric_files(tmp_path / "rub1", "1")]
    second = [load_rubric_file(p) for p in rubric_files(tmp_path / "rub2", "2", "believable", "plausible")]
    cfg = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": ["unused"]})
    with ResultStore(tmp_path / "r.sqlite") as store:
        for rubrics in (first, second):
            done = judge_items(items, cfg, rubrics, store, backend=MockBackend(cfg, _reply), decode_workers=0)
            assert done.scored == 2 * len(items)
        rows = store.rows()
    judges = judge_series(rows)
    assert [j.label for j in judges] == ["mk [rubrics pa v1, ia v1]", "mk [rubrics pa v2, ia v2]"]
    assert [(j.axes["pa"].key.version, j.axes["ia"].key.version) for j in judges] == [("1", "1"), ("2", "2")]
    report, _, _, _ = judges_report(rows, items, lambda m: True, bootstrap=0, calibrated=False)
    for j in judges:
        assert report.cells[j.label][OVERALL].n == 2 * len(items)  # (item, axis) pairs
    # Before: 4 judges of one axis each, and the labels printed only config hashes.
    np.testing.assert_array_equal(judge_scores(rows, items, "mk [rubrics pa v2, ia v2]")["pa"], [2.0] * 4)
    np.testing.assert_array_equal(judge_scores(rows, items, "mk [rubrics pa v1, ia v1]")["pa"], [4.0] * 4)
    newest = r"2 configurations.*\(the newest rubrics: 'mk \[rubrics pa v2, ia v2\]'"
    with pytest.raises(ValueError, match=newest):
        judge_scores(rows, items, "mk")


def _row(item: str, axis: str, value: float, version: str, digest: str, at: datetime | None,
         model: str = "m") -> ResultRow:
    rubric = {"id": axis, "version": version, "digest": digest}
    config = {"backend": "openai", "model": model, "rubric": rubric}
    return ResultRow(item, f"judge:j:{axis}", f"{model}-{axis}-{digest}", version, "ok", value, config=config,
                     created_at=at)


T0 = datetime(2025, 1, 1)


def _generation(at: datetime | None, pa: tuple[str, str] | None, ia: tuple[str, str] | None, value: float,
                model: str = "m") -> list[ResultRow]:
    rows = []
    for axis, rubric in (("pa", pa), ("ia", ia)):
        if rubric is not None:
            rows += [_row(f"i{k}", axis, value, *rubric, at and at + timedelta(seconds=k), model)
                     for k in range(3)]
    return rows


def test_an_axis_left_unchanged_pairs_with_the_newest_of_the_other() -> None:
    rows = (_generation(T0, ("1", "a1"), ("1", "b1"), 1.0)
            + _generation(T0 + timedelta(hours=1), ("2", "a2"), ("2", "b2"), 2.0)
            # PA changed again; IA did not, so its version-2 rows are the ones judged with it.
            + _generation(T0 + timedelta(hours=2), ("3", "a3"), None, 3.0)
            # and a model judged once: a configuration of its own, labelled as before
            + _generation(T0, ("1", "a1"), ("1", "b1"), 5.0, model="other"))
    got = {j.label: {a: s.key.version for a, s in j.axes.items()} for j in judge_series(rows)}
    assert got == {"j [model=m, rubrics pa v1, ia v1]": {"pa": "1", "ia": "1"},
                   "j [model=m, rubric pa v2]": {"pa": "2"},
                   "j [model=m, rubrics pa v3, ia v2]": {"pa": "3", "ia": "2"},
                   "j [model=other]": {"pa": "1", "ia": "1"}}


def test_reworded_rubrics_under_one_version_are_told_apart_by_digest() -> None:
    rows = (_generation(T0, ("1", "1a2b3c4d5e6f"), ("1", "9f8e7d6c5b4a"), 1.0)
            + _generation(T0 + timedelta(hours=1), ("1", "0a0b0c0d0e0f"), ("1", "9f8e7d6c5b4a"), 2.0))
    assert [j.label for j in judge_series(rows)] == ["j [rubric pa v1 #1a2b3c4d]",
                                                     "j [rubrics pa v1 #0a0b0c0d, ia v1]"]


def test_series_without_stored_times_stay_apart() -> None:
    # No time tells the generations apart: nothing is paired, as before.
    rows = _generation(None, ("1", "a1"), ("1", "b1"), 1.0) + _generation(None, ("2", "a2"), ("2", "b2"), 2.0)
    assert sorted(sorted(j.axes) for j in judge_series(rows)) == [["ia"], ["ia"], ["pa"], ["pa"]]


def test_a_series_was_first_stored_at_its_earliest_row_not_its_first_item_s() -> None:
    # Rows come by item id: the first item's row stood for the series' start though another was older.
    from datetime import UTC, datetime

    from robojudge.report._series import split_series
    from robojudge.store import ResultRow

    early, late = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    rows = [ResultRow("a", "judge:mk:pa", "h", "1", "ok", 3.0, created_at=late),
            ResultRow("b", "judge:mk:pa", "h", "1", "ok", 4.0, created_at=early)]
    (series,) = split_series(rows)
    assert series.first_stored == early


def test_the_newest_rubrics_are_the_last_written_whatever_the_hosts_clocks_said(store_url: str) -> None:
    from datetime import UTC

    from robojudge.report._series import resolve_judge

    url = store_url
    right = datetime.now(UTC)
    with ResultStore(url) as store:
        # Generation 1 judged on a host whose clock ran an hour ahead; then PA's rubric changed and
        # generation 2 was judged on a host with the right clock (IA's rows, unchanged, were kept).
        store.add(_generation(right + timedelta(hours=1), ("1", "a1"), ("1", "b1"), 1.0))
        store.add(_generation(right, ("2", "a2"), None, 2.0))
        rows = store.rows()
    judges = judge_series(rows)
    # Before: the newest PA was taken by created_at, so 'pa v1, ia v1' passed for the judge as last run.
    assert [j.label for j in judges] == ["j [rubric pa v1]", "j [rubrics pa v2, ia v1]"]
    with pytest.raises(ValueError, match=r"the newest rubrics: 'j \[rubrics pa v2, ia v1\]'"):
        resolve_judge(judges, "j")


def test_a_judge_was_first_judged_when_its_last_written_series_began() -> None:
    # A review: JudgeSeries.first_stored took the latest clock time of its series, so a host an hour
    # ahead made the series written first pass for the one that began the judge's generation.
    from datetime import UTC

    early, late = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    cfg = {"model": "m"}
    rows = [ResultRow("a", "judge:mk:pa", "h1", "1", "ok", 3.0, config={**cfg, "rubric": "pa"},
                      created_at=late, row_id=1),
            ResultRow("a", "judge:mk:ia", "h2", "1", "ok", 4.0, config={**cfg, "rubric": "ia"},
                      created_at=early, row_id=2)]
    (judge,) = judge_series(rows)
    assert sorted(judge.axes) == ["ia", "pa"]
    assert judge.first_stored == early  # the IA series was written last, whatever its host's clock said
