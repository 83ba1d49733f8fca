"""A reply that cannot be used costs its own judgment only: a huge score is out of range (repair
prompt, then unscored), a reply that trips a bug fails its rubric's row and not the item's others,
and ``--retry-errors`` asks again past a cached reply that led to an error row."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply, user_text

import robojudge.judges._engine as engine_module
from robojudge.judges import ResponseCache, get_rubric, make_judge, parse_reply
from robojudge.judges._rubric import Rubric
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

PA, IA = get_rubric("pa"), get_rubric("ia")
HUGE = "9" * 400


def judge(url: str) -> Any:
    return make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": url, "backoff_s": 0.01})


def _reply(body: dict[str, Any], pa: str, ia: str) -> Reply:
    key = "instruction_alignment" if "instruction_alignment" in user_text(body) else "physical_adherence"
    return Reply(f'{{"reasoning": "r", "{key}": {ia if key == "instruction_alignment" else pa}}}')


def test_huge_integer_is_out_of_range_not_an_exception() -> None:
    for digits in (HUGE, "9" * 5000, "-" + "9" * 5000):
        got = parse_reply(f'{{"reasoning": "r", "physical_adherence": {digits}}}', PA)
        assert got.score is None and got.error is not None and "outside 1-5" in got.error
        assert len(got.error) < 200  # the number is not quoted in full


def test_huge_scores_are_unscored_rows_and_retry_errors_asks_again(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    state = {"score": HUGE}
    with FakeServer(lambda body, n: _reply(body, state["score"], state["score"])) as srv, \
            ResultStore(tmp_path / "r.sqlite") as store:
        first = judge_items(make_items(["x"]), judge(srv.url), [PA, IA], store, cache=cache)
        assert (first.unscored, first.failed) == (2, 0) and srv.count == 4  # each with its repair prompt
        rows = store.rows()
        assert all(r.status == "ok" and r.value is not None and math.isnan(r.value) for r in rows)
        assert all("outside 1-5" in (r.error or "") for r in rows)
        state["score"] = "3"
        again = judge_items(make_items(["x"]), judge(srv.url), [PA, IA], store, cache=cache,
                            retry_errors=True)
        assert again.scored == 2 and srv.count == 6
        assert sorted(r.value for r in store.rows()) == [3, 3]


def test_a_rubric_whose_reply_trips_a_bug_fails_alone_and_is_asked_again(
    make_items: Any, tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine_module.parse_reply

    def buggy(text: str, rubric: Rubric) -> Any:
        if '"physical_adherence": 2' in text:
            raise RuntimeError("a parser bug")
        return real(text, rubric)

    monkeypatch.setattr(engine_module, "parse_reply", buggy)
    state = {"pa": "2"}
    with FakeServer(lambda body, n: _reply(body, state["pa"], "4")) as srv, \
            ResultStore(tmp_path / "r.sqlite") as store:
        first = judge_items(make_items(["x"]), judge(srv.url), [PA, IA], store, cache=cache)
        rows = {r.metric: r for r in store.rows()}
        assert rows["judge:t:ia"].status == "ok" and rows["judge:t:ia"].value == 4  # not discarded
        assert rows["judge:t:pa"].status == "error"
        assert "judge raised RuntimeError: a parser bug" in (rows["judge:t:pa"].error or "")
        assert (first.scored, first.failed) == (1, 1) and srv.count == 2
        # the reply that led to the error is not replayed from the cache: it is asked again
        state["pa"] = "5"
        again = judge_items(make_items(["x"]), judge(srv.url), [PA, IA], store, cache=cache,
                            retry_errors=True)
        assert again.scored == 1 and again.skipped == 1 and srv.count == 3
        rows = {r.metric: r for r in store.rows()}
        assert rows["judge:t:pa"].status == "ok" and rows["judge:t:pa"].value == 5


def test_a_judgment_that_raises_keeps_its_notes_and_where_it_was_raised(
    make_items: Any, tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    def buggy(text: str, rubric: Rubric) -> Any:
        exc = RuntimeError("a parser bug")
        exc.add_note("while reading the reply's score")
        raise exc

    monkeypatch.setattr(engine_module, "parse_reply", buggy)
    with FakeServer(lambda body, n: _reply(body, "2", "4")) as srv, \
            ResultStore(tmp_path / "r.sqlite") as store:
        judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=cache)
        (row,) = store.rows()
    # Before: "judge raised RuntimeError: a parser bug" and no details of where (audit logging F3).
    assert row.error == "judge raised RuntimeError: a parser bug (while reading the reply's score)"
    where = row.details["traceback"]
    assert "in buggy" in where and "test_judge_reply_failures.py" in where
