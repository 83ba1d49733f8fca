"""How a judge talks to its model and reads the answer, at the edges: a reply cut off at the token limit,
the per-turn records of a voted row, a voting turn whose request failed, refusals and tool calls, 200
replies that are not JSON, redirects, the token-limit field and extra headers in the judge's identity."""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.judges._openai import endpoint_url
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore, served_models

PA = get_rubric("pa")

DRAFT = ('Frame 1: the gripper is open above the cup. My first impression is {"reasoning": "looks clean", '
         '"physical_adherence": 5}, but in frames 9-12 the cup passes through the finger, so I need to lower')


def judge(url: str, **kw: Any) -> Any:
    return make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": url, "backoff_s": 0.01,
                       "max_backoff_s": 0.02, "max_retries": 2, "timeout_s": 5, **kw})


def completion(content: Any, n: int, *, finish: str = "stop", model: str = "m",
               **message: Any) -> Reply:
    choice = {"index": 0, "message": {"role": "assistant", "content": content, **message},
              "finish_reason": finish}
    return Reply(raw={"id": f"c{n}", "model": model, "choices": [choice]})


def run(items: Any, j: Any, tmp_path: Path, cache: ResponseCache, **kw: Any) -> tuple[Any, list[Any]]:
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = judge_items(items, j, [PA], store, cache=cache, **kw)
        return summary, store.rows()


# -- a reply cut off at max_tokens ----------------------------------------------------------------------

@pytest.mark.parametrize("draft", [f"<think>\n{DRAFT}", DRAFT], ids=["unclosed-think", "untagged-thinking"])
def test_a_reply_cut_off_mid_thought_is_repaired_then_unscored_not_read_from_its_draft(
    draft: str, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: completion(draft, n, finish="length")) as srv:
        summary, rows = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert srv.count == 2  # the reply, then the repair prompt
    assert "cut off at the token limit" in srv.bodies[1]["messages"][-1]["content"]
    (row,) = rows
    assert summary.unscored == 1 and row.value is not None and math.isnan(row.value)
    assert 'finish_reason "length"' in (row.error or "") and "max_tokens" in (row.error or "")
    assert row.details is not None and row.details["truncated"] is True
    assert row.details["turns"][0]["truncated"] is True
    assert row.details["turns"][0]["raw"][0] == draft
    assert summary.truncated == 1


def test_the_summary_counts_cut_off_replies(make_items: Any, tmp_path: Path, cache: ResponseCache,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from robojudge.cli._judge import print_judge_summary

    def script(body: dict[str, Any], n: int) -> Reply:
        if n == 1:  # the first item's reply is cut off; the repair prompt (request 2) answers in full
            return completion(DRAFT, n, finish="length")
        if n == 2:
            return completion('{"reasoning": "slips", "physical_adherence": 2}', n)
        return completion('{"reasoning": "fine", "physical_adherence": 4}', n)

    with FakeServer(script) as srv:
        summary, rows = run(make_items(["a", "b", "c"]), judge(srv.url, concurrency=1), tmp_path, cache)
    assert sorted(r.value for r in rows) == [2, 4, 4]
    assert summary.truncated == 1 and summary.scored == 3
    print_judge_summary("m", summary)
    out = capsys.readouterr().out
    assert "1 judgment had a reply cut off at the token limit" in out and "sampling.max_tokens" in out
    print_judge_summary("m", type(summary)(total=1, scored=1))
    assert "cut off" not in capsys.readouterr().out


def test_a_cut_off_reply_whose_repair_answers_is_scored(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        if n == 1:
            return completion(DRAFT, n, finish="length")
        return completion('{"reasoning": "the cup passes through", "physical_adherence": 2}', n)

    with FakeServer(script) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert row.value == 2 and row.details is not None and row.details["parse_status"] == "repaired"
    assert row.details["truncated"] is True


def test_a_cut_off_reply_that_ends_with_its_answer_is_scored(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    answer = '<think>the cup slips</think>{"reasoning": "slips", "physical_adherence": 3}'
    with FakeServer(lambda body, n: completion(answer, n, finish="length")) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert srv.count == 1 and row.value == 3


@pytest.mark.parametrize(
    "answer",
    [
        '{"reasoning": "cup slips", "physical_adherence": 3}\n\nI hope this evaluation',
        '```json\n{"reasoning": "cup slips", "physical_adherence": 3}\n```\nLet me know if',
        '{"reasoning": "cup slips", "physical_adherence": 3}.',
    ],
    ids=["prose-after", "fenced-then-prose", "full-stop"],
)
def test_a_cut_off_reply_with_text_after_its_answer_is_repaired_not_trusted(
    answer: str, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    # The text cut after an answer may have been revising it (review rev23 F4): one repair prompt asks.
    def script(body: dict[str, Any], n: int) -> Reply:
        if n == 1:
            return completion(answer, n, finish="length")
        return completion('{"reasoning": "cup slips", "physical_adherence": 2}', n)

    with FakeServer(script) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert srv.count == 2 and row.value == 2
    assert row.details is not None and row.details["parse_status"] == "repaired"
    assert row.details["truncated"] is True


# -- votes ----------------------------------------------------------------------------------------------

def _by_seed(scores: dict[int, Any]) -> Any:
    def script(body: dict[str, Any], n: int) -> Reply:
        got = scores[body["seed"]]
        if isinstance(got, Reply):
            return got
        return completion(f'{{"reasoning": "seed {body["seed"]}", "physical_adherence": {got}}}', n,
                          model=f"served-{body['seed']}")
    return script


def test_a_voted_row_keeps_each_turns_record_and_its_served_models(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(_by_seed({0: 4, 1: 4, 2: 2})) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache, samples=3)
    d = row.details
    assert row.value == 4 and d is not None
    assert isinstance(d["turns"], list) and len(d["turns"]) == 3 and d["n_turns"] == 3
    assert [t["raw"][0] for t in d["turns"]] == [f'{{"reasoning": "seed {s}", "physical_adherence": {v}}}'
                                                  for s, v in ((0, 4), (1, 4), (2, 2))]
    assert served_models(d) == ["served-0", "served-1", "served-2"]


@pytest.mark.parametrize("failure", [Reply("bad request: too many images", status=400),
                                     Reply("boom", status=500)], ids=["400", "500"])
def test_a_turn_whose_request_failed_drops_out_of_the_vote_and_is_named(
    failure: Reply, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(_by_seed({0: 4, 1: 4, 2: failure})) as srv:
        j = judge(srv.url, circuit_breaker=0)
        summary, (row,) = run(make_items(["a"]), j, tmp_path, cache, samples=3)
    d = row.details
    assert row.status == "ok" and row.value == 4 and summary.scored == 1 and d is not None
    assert d["votes"] == [4, 4, None] and d["valid_turns"] == 2
    # a transport error is no disagreement: the two turns that answered agree
    assert d["agreement"] is True and d["answered_turns"] == 2
    assert d["failed_turns"] == [3]
    failed = d["turns"][2]
    assert failed["parse_status"] == "request failed" and failed["score"] is None
    assert failed["error"].startswith("request failed: ") and f"HTTP {failure.status}" in failed["error"]
    assert [t["raw"] for t in d["turns"][:2]] == [['{"reasoning": "seed 0", "physical_adherence": 4}'],
                                                   ['{"reasoning": "seed 1", "physical_adherence": 4}']]


def test_turns_that_answered_and_differ_still_disagree_beside_a_failed_one(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    bad = Reply("boom", status=500)
    with FakeServer(_by_seed({0: 4, 1: 3, 2: 4, 3: bad, 4: 4})) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url, circuit_breaker=0), tmp_path, cache, samples=5)
    assert row.details is not None and row.details["agreement"] is False
    assert row.details["answered_turns"] == 4 and row.details["failed_turns"] == [4]


def test_with_most_turns_failed_the_row_is_an_error_that_keeps_the_answered_turn(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    bad = Reply("bad request", status=400)
    with FakeServer(_by_seed({0: 4, 1: bad, 2: bad})) as srv:
        j = judge(srv.url, circuit_breaker=0)
        summary, (row,) = run(make_items(["a"]), j, tmp_path, cache, samples=3)
    assert row.status == "error" and summary.failed == 1
    assert (row.error or "").startswith("request failed for turn 2, 3 of 3 (1 answered")
    d = row.details
    assert d is not None and d["failed_turns"] == [2, 3] and d["turns"][0]["score"] == 4


# -- what a reply holds outside its content -------------------------------------------------------------

def test_a_refusal_is_named_in_the_unscored_reason_and_kept(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: completion(None, n, refusal="I cannot help with that video.")) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert row.value is not None and math.isnan(row.value)
    assert (row.error or "").startswith("unscored: the model refused: I cannot help with that video.")
    assert row.details is not None and row.details["turns"][0]["response"]["refusal"] == (
        "I cannot help with that video.")


def test_a_tool_call_is_named_in_the_unscored_reason_and_kept(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    call = {"id": "t1", "type": "function",
            "function": {"name": "score", "arguments": '{"physical_adherence": 4}'}}
    with FakeServer(lambda body, n: completion(None, n, finish="tool_calls", tool_calls=[call])) as srv:
        _, (row,) = run(make_items(["a"]), judge(srv.url), tmp_path, cache)
    assert "the reply is a tool call, not text: score(" in (row.error or "")
    assert row.details is not None
    assert row.details["turns"][0]["response"]["tool_calls"] == 'score({"physical_adherence": 4})'


# -- what the endpoint answers ---------------------------------------------------------------------------

OK_REPLY = '{"reasoning": "fine", "physical_adherence": 4}'
PAGE = b"<html><body>Please log in to the proxy</body></html>"


@pytest.mark.parametrize(
    "bad",
    [Reply(body=PAGE, headers={"Content-Type": "text/html"}),
     Reply(body=b"", headers={"Content-Type": "application/json"})],
    ids=["html-page", "empty-body"],
)
def test_a_single_200_reply_that_is_not_json_is_retried_and_costs_nothing(
    bad: Reply, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        return bad if n == 1 else completion(OK_REPLY, n)

    # circuit_breaker 1: had the page counted, the breaker would have opened on it
    with FakeServer(script) as srv:
        j = judge(srv.url, concurrency=1, circuit_breaker=1)
        summary, rows = run(make_items(["a", "b", "c"]), j, tmp_path, cache)
    assert srv.count == 4 and summary.failed == 0
    assert [r.value for r in rows] == [4, 4, 4]


def test_a_page_is_retried_twice_only_with_short_waits(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: Reply(body=PAGE, headers={"Content-Type": "text/html"})) as srv:
        # max_retries 6 and backoff_s 5: a 5xx would wait 2.5-5 s, then 5-10 s, ... per item
        j = judge(srv.url, concurrency=1, max_retries=6, backoff_s=5, max_backoff_s=60, circuit_breaker=0)
        started = time.monotonic()
        summary, rows = run(make_items(["a", "b"]), j, tmp_path, cache)
        took = time.monotonic() - started
    assert summary.failed == 2 and srv.count == 6 and took < 6
    assert all("gave up after 3 attempts: HTTP 200" in (r.error or "") for r in rows)


def test_an_endpoint_that_always_answers_with_a_page_opens_the_breaker_after_its_count_of_items(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: Reply(body=PAGE, headers={"Content-Type": "text/html"})) as srv:
        summary, rows = run(make_items([f"i{k}" for k in range(12)]), judge(srv.url, concurrency=1),
                            tmp_path, cache)
    assert summary.failed == 12 and srv.count < 12 * 3
    errors = [r.error or "" for r in rows]
    assert all(f"HTTP 200 from {srv.url}/chat/completions is not a JSON chat completion" in e for e in errors)
    assert all("Content-Type " in e and "Please log in to the proxy" in e for e in errors)
    gave_up = sum("circuit breaker open" not in e for e in errors)
    assert 5 <= gave_up < 12 and all("gave up after 3 attempts" in e for e in errors if "breaker" not in e)


class _Redirect(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(int(self.path.split("/")[1]))
        self.send_header("Location", "http://127.0.0.1:9/v1/chat/completions")  # never reached
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_named_in_the_error_and_not_followed(
    status: int, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{status}/v1"
        _, (row,) = run(make_items(["a"]), judge(url), tmp_path, cache)
    finally:
        server.shutdown()
        server.server_close()
    assert row.status == "error"
    assert (f"HTTP {status} from {url}/chat/completions: the endpoint redirects to "
            "http://127.0.0.1:9/v1/chat/completions") in (row.error or "")
    # the advice, followed, reaches the new address (not .../chat/completions/chat/completions)
    assert "set base_url to http://127.0.0.1:9/v1" in (row.error or "")
    assert endpoint_url("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1/chat/completions"


def test_base_url_of_a_redirect_target() -> None:
    from robojudge.judges._openai import base_url_of

    assert base_url_of("https://h/v1/chat/completions?api-version=2") == "https://h/v1?api-version=2"
    assert base_url_of("https://h/openai/chat/completions/") == "https://h/openai"
    assert base_url_of("https://h/login") is None


# -- the request and the judge's identity ----------------------------------------------------------------

@pytest.mark.parametrize(("field", "sent"), [("max_tokens", {"max_tokens": 4096}),
                                              ("max_completion_tokens", {"max_completion_tokens": 4096}),
                                              ("none", {})])
def test_token_limit_field_names_the_limit_sent(
    field: str, sent: dict[str, int], make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    reply = '{"reasoning": "r", "physical_adherence": 4}'
    j = judge("http://127.0.0.1:1/v1", sampling={"max_tokens": 4096, "token_limit_field": field})
    with FakeServer(lambda body, n: completion(reply, n)) as srv:
        _, (row,) = run(make_items(["a"]), j.model_copy(update={"base_url": srv.url}), tmp_path, cache)
    body = srv.bodies[0]
    assert {k: body[k] for k in ("max_tokens", "max_completion_tokens") if k in body} == sent
    assert row.value == 4


def test_token_limit_field_is_in_the_identity_only_when_not_the_default() -> None:
    plain = judge("http://127.0.0.1:1/v1")
    same = judge("http://127.0.0.1:1/v1", sampling={"token_limit_field": "max_tokens"})
    other = judge("http://127.0.0.1:1/v1", sampling={"token_limit_field": "max_completion_tokens"})
    assert "token_limit_field" not in plain.identity()["sampling"]  # config hashes stored before stay
    assert plain.identity() == same.identity() != other.identity()
    assert other.identity()["sampling"]["token_limit_field"] == "max_completion_tokens"
    with pytest.raises(ValueError, match="token_limit_field"):
        judge("http://127.0.0.1:1/v1", extra_body={"max_completion_tokens": 10})


@pytest.mark.parametrize("field", ["max_completion_tokens", "max_tokens"])
def test_a_token_limit_in_extra_body_is_refused_with_an_accurate_reason(field: str) -> None:
    with pytest.raises(ValueError) as info:
        judge("http://127.0.0.1:1/v1", extra_body={field: 10, "top_k": 5})
    text = str(info.value)
    # under the default field robojudge does not send max_completion_tokens: not "in every request"
    assert "in every request" not in text
    assert f"{field} cannot be set here: robojudge sends the token limit itself" in text
    assert "sampling.token_limit_field" in text and "new config hash" in text
    with pytest.raises(ValueError) as both:
        judge("http://127.0.0.1:1/v1", extra_body={"seed": 1, field: 10})
    assert "seed is set by robojudge in every request" in str(both.value) and field in str(both.value)


def test_a_changed_token_limit_field_asks_the_model_again(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    reply = '{"reasoning": "r", "physical_adherence": 4}'
    with FakeServer(lambda body, n: completion(reply, n)) as srv:
        items = make_items(["a"])
        for field in ("max_tokens", "max_completion_tokens", "max_completion_tokens"):
            j = judge(srv.url, sampling={"token_limit_field": field})
            with ResultStore(tmp_path / f"{field}.sqlite") as store:
                judge_items(items, j, [PA], store, cache=cache)
    assert srv.count == 2  # the third run read the second's reply from the cache


def test_extra_headers_are_transport_only_a_rotated_key_is_the_same_judge(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    old_key, new_key = "azkey-7f3a9c2e5b1d4f60", "azkey-0c1d2e3f4a5b6c7d"
    a = judge("http://127.0.0.1:1/v1", extra_headers={"api-key": old_key})
    b = judge("http://127.0.0.1:1/v1", extra_headers={"api-key": new_key})
    plain = judge("http://127.0.0.1:1/v1")
    # the identity of a judges file with extra_headers is what it was before they joined it
    assert a.identity() == b.identity() == plain.identity()
    reply = '{"reasoning": "r", "physical_adherence": 4}'
    with FakeServer(lambda body, n: completion(reply, n)) as srv:
        rows = []
        for name, j in (("old", a), ("new", b)):
            with ResultStore(tmp_path / f"{name}.sqlite") as store:
                judge_items(make_items(["a", "b"]), j.model_copy(update={"base_url": srv.url}), [PA], store,
                            cache=cache)
                rows += store.rows()
        keys = [{k.lower(): v for k, v in h.items()}.get("api-key") for h in srv.headers]
    # the new key's run read the old key's cached replies: nothing was asked again
    assert srv.count == 2 and keys == [old_key, old_key]
    assert len(rows) == 4 and len({r.config_hash for r in rows}) == 1
    stored = json.dumps([r.config for r in rows] + [r.details for r in rows], default=str)
    assert old_key not in stored and new_key not in stored
