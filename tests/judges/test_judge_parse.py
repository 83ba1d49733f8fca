import math

import pytest

from robojudge.judges import (
    TokenLogprob,
    expected_score,
    find_json_object,
    get_rubric,
    majority_vote,
    parse_reply,
    parse_retry_after,
)
from robojudge.judges._parse import score_char_offset, strip_thinking

PA = get_rubric("pa")


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"reasoning": "fine", "physical_adherence": 4}', 4),
        ('```json\n{"reasoning": "ok", "physical_adherence": 3}\n```', 3),
        ('The gripper melts {sometimes}. Overall:\n{"reasoning": "melts", "physical_adherence": 2}', 2),
        ('<think>maybe {"physical_adherence": 5}?</think>\n{"reasoning": "r", "physical_adherence": 1}', 1),
        ("{'reasoning': 'single quotes', 'physical_adherence': 5}", 5),
        ('{"reasoning": "x", "physical_adherence": 4} Hope this helps!', 4),
        ('{"reasoning": "trailing comma", "physical_adherence": 3,}', 3),
        ('{"reasoning": "a brace } in text {", "physical_adherence": 2}', 2),
        ('{"reasoning": "string score", "physical_adherence": "4"}', 4),
        ('{"reasoning": "float ok", "physical_adherence": 4.0}', 4),
        ('{"reasoning": "cut off", "physical_adherence": 3', 3),
        ('Reasoning first.\n```\n{"physical_adherence": 5, "reasoning": "r"}\n```\nDone.', 5),
    ],
)
def test_parse_accepts(text: str, score: int) -> None:
    res = parse_reply(text, PA)
    assert res.ok, res.error
    assert res.score == score


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("I think it is a four.", "no JSON"),
        ('{"reasoning": "x", "physical_adherence": 7}', "outside 1-5"),
        ('{"reasoning": "x", "physical_adherence": 0}', "outside 1-5"),
        ('{"reasoning": "x", "physical_adherence": 3.5}', "not an integer"),
        ('{"reasoning": "x", "physical_adherence": true}', "not a number"),
        ('{"reasoning": "x", "physical_adherence": "high"}', "not a number"),
        ('{"reasoning": "x", "score": 4}', "no 'physical_adherence'"),
    ],
)
def test_parse_rejects_with_reason(text: str, why: str) -> None:
    res = parse_reply(text, PA)
    assert not res.ok and res.score is None
    assert why in (res.error or "")


def test_find_prefers_object_with_key() -> None:
    obj = find_json_object(
        '{"physical_adherence": 2, "reasoning": "a"} then {"note": 1}', "physical_adherence"
    )
    assert obj == {"physical_adherence": 2, "reasoning": "a"}


def test_expected_score_from_logprobs() -> None:
    text = '{"reasoning": "ok", "physical_adherence": 4}'
    toks = [
        TokenLogprob(t, -0.1)
        for t in ['{"', "reasoning", '":', ' "', "ok", '",', ' "', "physical_adherence", '":', " "]
    ]
    toks.append(
        TokenLogprob("4", math.log(0.6), (("4", math.log(0.6)), ("3", math.log(0.3)), ("x", math.log(0.1))))
    )
    toks.append(TokenLogprob("}", -0.01))
    got = expected_score(text, tuple(toks), PA)
    assert got is not None
    value, dist = got
    assert value == pytest.approx((4 * 0.6 + 3 * 0.3) / 0.9)
    assert set(dist) == {"3", "4"}
    assert expected_score("no score here", tuple(toks[:3]), PA) is None


def test_majority_vote() -> None:
    v = majority_vote([3, 3, 4])
    assert v is not None and v.value == 3 and not v.agreement and v.valid == 3
    assert v.std == pytest.approx(0.4714, abs=1e-3)
    v = majority_vote([2, 2, 2])
    assert v is not None and v.agreement and v.std == 0
    v = majority_vote([2, None, 2])
    assert v is not None and v.value == 2 and not v.agreement and v.valid == 2
    v = majority_vote([1, 5, 4])  # no majority: the score nearest the mean (3.33) wins
    assert v is not None and v.value == 4
    assert majority_vote([None, None]) is None


def test_retry_after() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    # A date is measured from the response's own Date (before: from the local clock, a date in the past)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:02 GMT", "Wed, 21 Oct 2015 07:28:00 GMT") == 2.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:05 -0000", "Wed, 21 Oct 2015 07:28:00 GMT") == 5.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", "garbled") == 0.0  # the local clock then


FENCED_THEN_EXAMPLE = (
    '```json\n{"reasoning": "the cup passes through the table", "physical_adherence": 2}\n```\n'
    'For reference, a flawless video would get {"reasoning": "no flaw", "physical_adherence": 5}.'
)


def test_an_answer_set_off_then_another_in_a_sentence_is_unclear_not_guessed() -> None:
    # A fenced answer, then another score inside a sentence: an example (audit judgeproto F5: the example's
    # 5 was read) or a correction (review rev23 F1: "so I revise it to {...}" was read as the first, once
    # set-off answers came first). Neither is guessed: the reply is unusable, and the repair prompt asks.
    res = parse_reply(FENCED_THEN_EXAMPLE, PA)
    assert res.score is None and "gives two answers, 2 set off and then 5" in (res.error or "")
    revised = ('{"reasoning": "stable", "physical_adherence": 4}\nLooking again at frame 9 the cup sinks, so '
               'I revise my answer to {"reasoning": "cup sinks", "physical_adherence": 2}.')
    assert parse_reply(revised, PA).score is None
    same = '{"physical_adherence": 4}\nThat is, {"physical_adherence": 4} as asked.'
    assert parse_reply(same, PA).score == 4  # the same score twice is no doubt
    # of several fenced answers, the last; a fence without the key does not hide a later answer
    two = '```json\n{"physical_adherence": 1}\n```\nRevised:\n```json\n{"physical_adherence": 4}\n```'
    assert parse_reply(two, PA).score == 4
    other = '```python\n{"x": 1}\n```\n{"reasoning": "r", "physical_adherence": 3}'
    assert parse_reply(other, PA).score == 3


@pytest.mark.parametrize(
    "text",
    [
        '<think>My first impression is {"reasoning": "clean", "physical_adherence": 5}, but wait',
        '<think>fine</think>\n <THINK>draft {"physical_adherence": 5}',
    ],
)
def test_an_unclosed_think_holds_no_answer(text: str) -> None:
    assert strip_thinking(text).strip() == ""
    res = parse_reply(text, PA)
    assert not res.ok and res.error == "no JSON object in the reply"
    assert score_char_offset(text, PA) is None


def test_ends_with_object() -> None:
    from robojudge.judges._parse import ends_with_object

    assert ends_with_object('<think>x</think>{"physical_adherence": 3}\n')
    assert ends_with_object('```json\n{"physical_adherence": 3}\n```')
    assert not ends_with_object('{"physical_adherence": 3} and then I reconsidered')
    assert not ends_with_object('{"reasoning": "cut", "physical_adherence": 3')
    assert not ends_with_object('{"physical_adherence": 3}<think>more')


# -- the final answer: the last object valid under the rubric ------------------------------------------

@pytest.mark.parametrize(
    ("text", "score"),
    [
        # the format repeated in a fence, then the answer without one
        ('You asked for this format:\n```json\n{"physical_adherence": 1, "reasoning": "..."}\n```\n'
         'Here is my evaluation.\n{"physical_adherence": 4, "reasoning": "gripper stable"}', 4),
        ('The instruction says to answer as\n```\n{"reasoning": "<text>", "physical_adherence": 3}\n```\n'
         'Frames 1-8 show a stable arm. Answer: {"reasoning": "stable arm", "physical_adherence": 5}', 5),
        ('Schema reminder: ```{"physical_adherence": 5}``` means perfect.\n'
         'Final: {"physical_adherence": 2, "reasoning": "melting"}', 2),
        # a last answer out of range makes the reply unusable (the repair prompt asks again): the draft
        # before it is not scored in its place (review rev23 F2)
        ('{"reasoning": "r", "physical_adherence": 3}\nOn reflection:\n{"physical_adherence": 9}', None),
        # a real score beside a reasoning left as the placeholder is an answer (review rev23 F3)
        ('{"reasoning": "<your reasoning>", "physical_adherence": 4}', 4),
        # the score itself left as the placeholder is an echo, no answer
        ('{"reasoning": "r", "physical_adherence": "<1-5>"}', None),
    ],
    ids=["fenced-format-then-plain", "quoted-instruction", "inline-fence-then-final", "out-of-range-last",
         "placeholder-reasoning", "placeholder-score"],
)
def test_the_answer_is_the_last_object_past_echoes_of_the_format(text: str, score: float | None) -> None:
    res = parse_reply(text, PA)
    assert res.score == score
    if score is not None:
        assert score_char_offset(text, PA) == text.rindex(str(score))
    else:
        said = res.error or ""
        assert "outside 1-5" in said or "repeats the answer format" in said


@pytest.mark.parametrize(
    ("rubric", "reply", "text"),
    [
        ("caption", 'Format:\n```json\n{"caption": "<one sentence>"}\n```\n'
         '{"caption": "A robot arm lifts the red cup and places it on the tray."}',
         "A robot arm lifts the red cup and places it on the tray."),
        ("key_steps", 'You asked for:\n```\n{"steps": "<step 1 ; step 2 ; ...>"}\n```\n'
         'Answer: {"steps": "reach the cup ; grasp it ; lift it"}', "reach the cup ; grasp it ; lift it"),
        # the echo after the answer is skipped too
        ("caption", '{"caption": "pick up the cup"}\nas asked: {"caption": "<one sentence>"}',
         "pick up the cup"),
    ],
)
def test_an_echo_of_the_rubrics_own_format_line_is_not_the_answer(rubric: str, reply: str, text: str) -> None:
    res = parse_reply(reply, get_rubric(rubric))
    assert res.ok and res.parts == {"text": text} and res.score == len(text.split())
    alone = parse_reply('{"caption": "<one sentence>"}', get_rubric("caption"))
    assert not alone.ok
    assert alone.error == "the JSON only repeats the answer format (caption = '<one sentence>')"


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('I do not need to <think> at length here; the arm is stable.\n{"physical_adherence": 4}', 4),
        ('{"reasoning": "the model was told to skip <think> tags", "physical_adherence": 4}', 4),
        ('No <think> section needed.\n```json\n{"physical_adherence": 3}\n```', 3),
    ],
)
def test_a_think_tag_that_does_not_open_the_reply_is_text(text: str, score: float) -> None:
    assert parse_reply(text, PA).score == score
    assert strip_thinking(text) == text
    assert score_char_offset(text, PA) == text.rindex(str(score))
