"""``--retry-errors`` re-asks unscored judgments past the cache; argmax fallbacks never share a config
with true expected scores, and a rerun does not ask again for them."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from _judge_server import FakeServer, Reply, user_text

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

IA, TS = get_rubric("ia"), get_rubric("ts_vlm2")


def judge(url: str, **kw: Any) -> Any:
    values = {"name": "t", "backend": "openai", "model": "m", "base_url": url, "concurrency": 2}
    values.update({"backoff_s": 0.01, "max_retries": 1, "circuit_breaker": 0, **kw})
    return make_judge(values)


def ia(score: int) -> str:
    return f'{{"reasoning": "looked", "instruction_alignment": {score}}}'


def _kind(body: dict[str, Any]) -> str:
    m = re.search(r"ITEM:(\w+)", user_text(body))
    return m.group(1) if m else ""


# -- --retry-errors and unscored rows -----------------------------------------------------------------


def test_retry_errors_reasks_unscored_past_the_cached_reply(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    state = {"fixed": False}
    asked: list[str] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        asked.append(_kind(body))
        if _kind(body) == "garbage" and not state["fixed"]:
            return Reply("I would rather not say.")
        return Reply(ia(5 if _kind(body) == "garbage" else 3))

    items = make_items(["clean", "garbage"])
    with FakeServer(script) as srv:
        first = judge_items(items, judge(srv.url), [IA], store, cache=cache)
        assert first.unscored == 1 and asked.count("garbage") == 2  # the reply and its repair
        state["fixed"] = True
        again = judge_items(items, judge(srv.url), [IA], store, cache=cache)
        assert again.skipped == 2 and asked.count("garbage") == 2  # a plain rerun keeps it
        retried = judge_items(items, judge(srv.url), [IA], store, cache=cache, retry_errors=True)
    # re-asked although both its replies were cached; the scored item was not asked again
    assert asked.count("garbage") == 3 and asked.count("clean") == 1
    assert retried.scored == 1 and retried.skipped == 1 and retried.unscored == 0
    rows = {r.item_id: r for r in store.rows()}
    assert rows["garbage"].value == 5 and rows["clean"].value == 3 and len(store.rows()) == 2
    assert rows["garbage"].details is not None and rows["garbage"].details["cached"] is False


def test_retry_errors_still_unparsable_stays_one_unscored_row(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: Reply("no")) as srv:
        judge_items(make_items(["garbage"]), judge(srv.url), [IA], store, cache=cache)
        n = srv.count
        s = judge_items(make_items(["garbage"]), judge(srv.url), [IA], store, cache=cache, retry_errors=True)
        assert srv.count == n + 2 and s.unscored == 1
    (row,) = store.rows()
    assert row.value is not None and math.isnan(row.value)


# -- scoring modes -------------------------------------------------------------------------------------


def _logprob_reply(score: int) -> Reply:
    toks = ['{"', "reasoning", '":', ' "', "ok", '",', ' "', "instruction", "_alignment", '":', " "]
    content = [{"token": t, "logprob": -0.01, "top_logprobs": []} for t in toks]
    half = math.log(0.5)
    top = [{"token": str(score), "logprob": half}, {"token": str(score + 1), "logprob": half}]
    content += [{"token": str(score), "logprob": math.log(0.5), "top_logprobs": top}]
    content += [{"token": "}", "logprob": -0.01, "top_logprobs": []}]
    return Reply(f'{{"reasoning": "ok", "instruction_alignment": {score}}}', logprobs=content)


def test_argmax_fallback_gets_its_own_config_and_resume_skips_it(
    make_items: Any, tmp_path: Path
) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        return _logprob_reply(3) if _kind(body) == "withlp" else Reply(ia(2))

    items = make_items(["withlp", "nolp"])
    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        off = ResponseCache(enabled=False)  # so a rerun that asked would reach the server
        s = judge_items(items, judge(srv.url), [IA], store, cache=off, scoring="expected")
        assert s.scored == 2
        rows = {r.item_id: r for r in store.rows()}
        exp, fb = rows["withlp"], rows["nolp"]
        assert exp.value == 3.5 and fb.value == 2
        assert exp.config is not None and fb.config is not None
        assert exp.config["scoring"] == "expected" and "scoring_note" not in exp.config
        assert fb.config["scoring"] == "argmax" and "log-probabilities" in fb.config["scoring_note"]
        assert exp.config_hash != fb.config_hash and exp.metric == fb.metric and exp.version == fb.version
        assert exp.details is not None and exp.details["scoring_mode"] == "expected"
        assert fb.details is not None and fb.details["scoring_mode"] == "argmax"
        # resume: neither is asked again, the fallback included (the planner keys on "expected")
        sent = srv.count
        again = judge_items(items, judge(srv.url), [IA], store, cache=off, scoring="expected")
        assert srv.count == sent and again.skipped == 2 and again.computed == 0
        # a genuine argmax run is yet another config: it does not reuse the fallback rows either
        judge_items(items, judge(srv.url), [IA], store, cache=off, scoring="argmax")
        hashes = {r.config_hash for r in store.rows()}
        assert len(hashes) == 3


def test_samples_with_some_turns_lacking_logprobs_fall_back_whole(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    # seed 0 has log-probabilities, seed 1 has not: the value may not mix the two modes
    def script(body: dict[str, Any], n: int) -> Reply:
        return _logprob_reply(3) if body["seed"] == 0 else Reply(ia(3))

    with FakeServer(script) as srv:
        j = judge(srv.url)
        judge_items(make_items(["x"]), j, [IA], store, cache=cache, scoring="expected", samples=2)
    (row,) = store.rows()
    assert row.value == 3 and row.config is not None and row.config["scoring"] == "argmax"
    assert row.details is not None and row.details["scoring_mode"] == "argmax"
    assert "1 of 2" in row.details["expected_unavailable"]


def test_expected_on_a_checks_rubric_is_planned_as_argmax(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    bodies: list[dict[str, Any]] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        bodies.append(body)
        return Reply('{"reasoning": "done", "task_success": true}')

    with FakeServer(script) as srv:
        judge_items(make_items(["x"]), judge(srv.url), [TS], store, cache=cache, scoring="expected")
    (row,) = store.rows()
    assert row.value == 1 and row.config is not None and row.config["scoring"] == "argmax"
    assert "scoring_note" not in row.config  # expected scoring does not apply to checks at all
    assert row.details is not None and row.details["scoring_mode"] == "argmax"
    assert "logprobs" not in bodies[0]  # nothing asked that cannot be used


def test_top_logprobs_is_part_of_an_expected_configuration() -> None:
    # An expected score weighs the score token's alternatives: asking for 1 or 5 gives other values
    # (3.0 against 3.17 in an audit), and the rows were kept as already stored.
    from robojudge.judges import FrameSpec
    from robojudge.run._judge_rows import JudgePlan

    def plan(top: int | None, scoring: str) -> Any:
        kw = {} if top is None else {"top_logprobs": top}
        return JudgePlan.build(judge("http://127.0.0.1:9", **kw), IA, FrameSpec(), scoring, 1, 0.0)

    default, ten, five = plan(None, "expected"), plan(10, "expected"), plan(5, "expected")
    assert "top_logprobs" not in default.config and default.config_hash == ten.config_hash  # (hash kept)
    assert five.config["top_logprobs"] == 5 and five.config_hash != default.config_hash
    # Its argmax fallback weighs no alternatives: one configuration whatever was asked for.
    assert five.fallback is not None and default.fallback is not None
    assert five.fallback.config_hash == default.fallback.config_hash
    # Argmax scoring reads no alternatives: the setting does not split its configuration.
    assert plan(5, "argmax").config_hash == plan(None, "argmax").config_hash


def test_a_rerun_counts_the_failures_it_keeps(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    """Audit config F2: the failures a plain rerun keeps are counted apart in ``skipped``, so the summary
    can say that ``--retry-errors`` asks them again."""
    state = {"down": True}

    def script(body: dict[str, Any], n: int) -> Reply:
        if _kind(body) == "broken" and state["down"]:
            return Reply("down", status=400)
        return Reply(ia(3))

    items = make_items(["clean", "broken"])
    with FakeServer(script) as srv:
        first = judge_items(items, judge(srv.url), [IA], store, cache=cache)
        assert first.failed == 1 and first.scored == 1
        state["down"] = False
        again = judge_items(items, judge(srv.url), [IA], store, cache=cache)
        assert again.skipped == 2 and again.skipped_errors == 1
        retried = judge_items(items, judge(srv.url), [IA], store, cache=cache, retry_errors=True)
    assert retried.scored == 1 and retried.skipped == 1 and retried.skipped_errors == 0
