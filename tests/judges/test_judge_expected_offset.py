"""``--scoring expected`` reads the log-probabilities at the score value the parser read, never at a
mention of the score key in the reasoning."""

from __future__ import annotations

import math
from typing import Any

from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, TokenLogprob, expected_score, get_rubric, make_judge
from robojudge.judges._parse import score_char_offset
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

PA = get_rubric("pa")
TRICK = '{"physical_adherence": 2, "reasoning": "clearly not a physical_adherence: 5 video"}'


def _per_char(text: str) -> list[dict[str, Any]]:
    """One token per character; a digit's alternatives: itself (p ~ 0.99) and another digit."""
    out = []
    for ch in text:
        top = [{"token": ch, "logprob": -0.01}]
        if ch.isdigit():
            top.append({"token": "1" if ch == "5" else "5", "logprob": -5.0})
        out.append({"token": ch, "logprob": -0.01, "top_logprobs": top})
    return out


def _tokens(text: str) -> tuple[TokenLogprob, ...]:
    return tuple(
        TokenLogprob(t["token"], t["logprob"], tuple((a["token"], a["logprob"]) for a in t["top_logprobs"]))
        for t in _per_char(text)
    )


def test_offset_is_the_json_value_not_a_mention_in_the_reasoning() -> None:
    assert score_char_offset(TRICK, PA) == TRICK.index("2")
    quoted = (
        '{"reasoning": "not \'physical_adherence\': 5, nor \\"physical_adherence\\": 4", '
        '"physical_adherence": 3}'
    )
    assert score_char_offset(quoted, PA) == quoted.rindex("3")
    thought = '<think>{"physical_adherence": 5}</think>{"physical_adherence": 1}'
    assert score_char_offset(thought, PA) == thought.rindex("1")
    # with the parsed score: only a value spelling that number
    assert score_char_offset(TRICK, PA, 2.0) == TRICK.index("2")
    assert score_char_offset(TRICK, PA, 4.0) is None


def test_expected_score_weighs_the_parsed_value() -> None:
    got = expected_score(TRICK, _tokens(TRICK), PA, 2.0)
    assert got is not None
    value, dist = got
    assert set(dist) == {"2", "5"} and dist["2"] > 0.99 and abs(value - 2) < 0.05


def test_expected_score_refuses_a_token_that_is_not_the_parsed_score() -> None:
    # a parsed score that no written value spells (the tokens are of another reply)
    text = '{"reasoning": "r", "physical_adherence": 4}'
    toks = list(_tokens(text))
    assert expected_score(text, tuple(toks), PA, 3.0) is None
    split = '{"reasoning": "r", "physical_adherence": 10}'
    assert expected_score(split, _tokens(split), PA, 10.0) is None  # "1" then "0": not one token


def test_expected_run_stores_the_score_the_model_wrote(tmp_path: Any, make_items: Any) -> None:
    with FakeServer(lambda body, n: Reply(TRICK, logprobs=_per_char(TRICK))) as srv, \
            ResultStore(tmp_path / "r.sqlite") as store:
        judge = make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": srv.url})
        judge_items(make_items(["x"]), judge, [PA], store, cache=ResponseCache(enabled=False),
                    scoring="expected")
    (row,) = store.rows()
    assert row.details is not None and row.details["scoring_mode"] == "expected"
    assert row.details["argmax"] == 2 and row.value is not None and abs(row.value - 2) < 0.05
    assert not math.isnan(row.value)


def test_expected_run_falls_back_to_argmax_when_no_token_holds_the_score(
    tmp_path: Any, make_items: Any
) -> None:
    # the log-probabilities are of another text than the reply: no token spells the parsed 2
    other = '{"physical_adherence": 5}'
    with FakeServer(lambda body, n: Reply(TRICK, logprobs=_per_char(other))) as srv, \
            ResultStore(tmp_path / "r.sqlite") as store:
        judge = make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": srv.url})
        judge_items(make_items(["x"]), judge, [PA], store, cache=ResponseCache(enabled=False),
                    scoring="expected")
    (row,) = store.rows()
    assert row.value == 2 and row.details is not None and row.details["scoring_mode"] == "argmax"
    assert row.config is not None and "log-probabilities" in row.config["scoring_note"]
    assert "1 of 1" in row.details["expected_unavailable"]
