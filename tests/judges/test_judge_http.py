"""The openai backend against a real local HTTP server: parsing, retries, cache, concurrency, secrets."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply, n_images, user_text

from robojudge.judges import FrameSpec, ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

IA, PA = get_rubric("ia"), get_rubric("pa")


def ia(score: Any, reasoning: str = "checked agent, object and goal") -> str:
    return f'{{"reasoning": "{reasoning}", "instruction_alignment": {score}}}'


def judge(url: str, **kw: Any) -> Any:
    values = {
        "name": "t",
        "backend": "openai",
        "model": "fake-vl",
        "base_url": url,
        "concurrency": 4,
        "backoff_s": 0.01,
        "max_retries": 3,
        "timeout_s": 0.5,
        **kw,
    }
    return make_judge(values)


class Scripted:
    """Replies chosen by the ``ITEM:<kind>`` marker in the instruction, with per-kind attempt counts."""

    def __init__(self) -> None:
        self.attempts: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {}

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        text = user_text(body)
        m = re.search(r"ITEM:(\w+)", text)
        kind = m.group(1) if m else "pa"
        repair = len(body["messages"]) > 2
        with self.lock:
            self.attempts[kind] += 1
            k = self.attempts[kind]
            self.times.setdefault(kind, []).append(time.monotonic())
        if kind == "clean" or kind.startswith("item"):
            return Reply(ia(4))
        if kind == "fenced":
            return Reply(f"Here you go:\n```json\n{ia(3)}\n```")
        if kind == "think":
            return Reply(f"<think>the cup {{moves}}</think>\nThe gripper grasps the cup.\n{ia(5)} Done.")
        if kind == "garbage":
            return Reply("I am unable to evaluate videos." if not repair else "Still no.")
        if kind == "range":
            return Reply(ia(2) if repair else ia(9))
        if kind == "limited":
            return Reply("slow down", status=429, headers={"Retry-After": "0.3"}) if k == 1 else Reply(ia(3))
        if kind == "flaky":
            return Reply("oops", status=500) if k <= 2 else Reply(ia(1))
        if kind == "down":
            return Reply("broken", status=503)
        if kind == "slow":
            return Reply(ia(2), delay=1.5 if k == 1 else 0.0)
        if kind == "badreq":
            return Reply("bad request", status=400)
        return Reply('{"reasoning": "pa", "physical_adherence": 3}')


KINDS = ["clean", "fenced", "think", "garbage", "range", "limited", "flaky", "down", "slow", "badreq"]


def test_scripted_replies_end_to_end(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    script = Scripted()
    with FakeServer(script) as srv:
        # The failing kinds come in a row; the breaker (tested in test_judge_limits) would stop them.
        summary = judge_items(make_items(KINDS), judge(srv.url, circuit_breaker=0), [IA], store, cache=cache)
    rows = {r.item_id: r for r in store.rows()}
    assert {k: rows[k].value for k in ("clean", "fenced", "think", "range", "limited", "flaky", "slow")} == {
        "clean": 4,
        "fenced": 3,
        "think": 5,
        "range": 2,
        "limited": 3,
        "flaky": 1,
        "slow": 2,
    }
    assert rows["range"].details is not None and rows["range"].details["parse_status"] == "repaired"
    assert "9" in rows["range"].details["turns"][0]["raw"][0]
    # garbage: unscored (NaN, never 0), with the reason and both raw replies
    g = rows["garbage"]
    assert g.status == "ok" and g.value is not None and math.isnan(g.value)
    assert g.error is not None and "no JSON" in g.error
    assert g.details is not None and g.details["turns"][0]["raw"] == [
        "I am unable to evaluate videos.",
        "Still no.",
    ]
    # transport failures: error rows, one per item, with the cause
    assert rows["down"].status == "error" and "gave up after 4 attempts" in (rows["down"].error or "")
    assert rows["badreq"].status == "error" and "HTTP 400" in (rows["badreq"].error or "")
    assert script.attempts["down"] == 4 and script.attempts["badreq"] == 1
    # Retry-After honoured: the second attempt came at least 0.3 s after the first
    t = script.times["limited"]
    assert t[1] - t[0] >= 0.29
    assert script.attempts["flaky"] == 3 and script.attempts["slow"] == 2
    # the summary counts
    assert (summary.total, summary.scored, summary.unscored, summary.failed) == (10, 7, 1, 2)
    assert summary.stats.retries == 1 + 2 + 3 + 1  # limited, flaky, down, slow
    assert summary.parse_failure_rate == pytest.approx(1 / 8)
    assert summary.stats.prompt_tokens > 0 and summary.latency_per_video_second is not None
    ok = rows["clean"]
    assert ok.metric == "judge:t:ia" and ok.version == IA.version
    assert (
        ok.details is not None
        and ok.details["reasoning"]
        and ok.details["video_seconds"] == pytest.approx(2.0)
    )
    assert ok.config is not None and ok.config["model"] == "fake-vl" and "base_url" not in ok.config


def test_cache_means_a_rerun_sends_nothing(make_items: Any, tmp_path: Path, cache: ResponseCache) -> None:
    items = make_items([f"item{i}" for i in range(6)] + ["garbage"])
    with FakeServer(Scripted()) as srv:
        with ResultStore(tmp_path / "a.sqlite") as a:
            judge_items(items, judge(srv.url), [IA, PA], a, cache=cache)
            first = srv.count
            again = judge_items(items, judge(srv.url), [IA, PA], a, cache=cache)
            assert again.skipped == again.total == 14 and srv.count == first
            values_a = {(r.item_id, r.metric): r.value for r in a.rows()}
        with ResultStore(tmp_path / "b.sqlite") as b:  # a fresh store: everything from the cache
            s = judge_items(items, judge(srv.url), [IA, PA], b, cache=cache)
            assert srv.count == first
            assert s.stats.sent == 0 and s.stats.cache_hits == first
            values_b = {(r.item_id, r.metric): r.value for r in b.rows()}
    assert values_a.keys() == values_b.keys()
    assert all(values_a[k] == values_b[k] or math.isnan(values_a[k]) for k in values_a)  # type: ignore[arg-type]
    assert first == 7 + 7 + 1  # IA and PA per item, plus the repair of the garbage item's IA


def test_concurrency_cap(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    with FakeServer(
        lambda body, n: Reply(ia(3) if "ITEM" in user_text(body) else '{"physical_adherence": 4}', delay=0.08)
    ) as srv:
        s = judge_items(
            make_items([f"item{i}" for i in range(12)]),
            judge(srv.url, concurrency=3),
            [IA, PA],
            store,
            cache=cache,
        )
    assert s.scored == 24
    assert srv.max_in_flight == 3


def test_expected_scoring_from_logprobs(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    def lp(body: dict[str, Any], n: int) -> Reply:
        assert body["logprobs"] is True and body["top_logprobs"] == 10
        toks = ['{"', "reasoning", '":', ' "', "ok", '",', ' "', "instruction", "_alignment", '":', " "]
        content = [{"token": t, "logprob": -0.01, "top_logprobs": []} for t in toks]
        content.append(
            {
                "token": "4",
                "logprob": math.log(0.5),
                "top_logprobs": [
                    {"token": "4", "logprob": math.log(0.5)},
                    {"token": "5", "logprob": math.log(0.25)},
                    {"token": "3", "logprob": math.log(0.25)},
                ],
            }
        )
        content.append({"token": "}", "logprob": -0.01, "top_logprobs": []})
        return Reply('{"reasoning": "ok", "instruction_alignment": 4}', logprobs=content)

    with FakeServer(lp) as srv:
        judge_items(make_items(["clean"]), judge(srv.url), [IA], store, cache=cache, scoring="expected")
    (row,) = store.rows()
    assert row.value == pytest.approx(4.0)  # 0.5*4 + 0.25*5 + 0.25*3
    assert row.details is not None and row.details["argmax"] == 4
    assert row.details["turns"][0]["probs"] == {"3": 0.25, "4": 0.5, "5": 0.25}


def test_expected_falls_back_without_logprobs(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: Reply(ia(2))) as srv:
        judge_items(make_items(["clean"]), judge(srv.url), [IA], store, cache=cache, scoring="expected")
    (row,) = store.rows()
    assert row.value == 2 and row.details is not None and "expected_unavailable" in row.details


def test_self_consistency_samples(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    seen: list[tuple[float, int]] = []

    def by_seed(body: dict[str, Any], n: int) -> Reply:
        seen.append((body["temperature"], body["seed"]))
        return Reply(ia({0: 3, 1: 3, 2: 4}[body["seed"]]))

    with FakeServer(by_seed) as srv:
        s = judge_items(make_items(["item0"]), judge(srv.url), [IA], store, cache=cache, samples=3)
    assert sorted(seen) == [(0.7, 0), (0.7, 1), (0.7, 2)]
    (row,) = store.rows()
    assert row.value == 3 and row.details is not None
    assert row.details["votes"] == [3, 3, 4] and row.details["agreement"] is False
    assert row.details["mean"] == pytest.approx(10 / 3) and row.details["std"] == pytest.approx(
        0.4714, abs=1e-3
    )
    assert s.consistency["ia"].agreement_rate == 0.0
    assert s.consistency["ia"].mean_score_std == pytest.approx(0.4714, abs=1e-3)
    assert row.config is not None and row.config["samples"] == 3


def test_voted_rows_keep_a_winning_turns_reasoning_and_parts(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    # the reasoning and checks shown were turn 0's, here arguing for the score that lost the vote
    logic = get_rubric("sa_logics")

    def by_seed(body: dict[str, Any], n: int) -> Reply:
        seed = body["seed"]
        if "ITEM" in user_text(body):
            return Reply(ia(2 if seed == 0 else 4, f"seed {seed} argues for {2 if seed == 0 else 4}"))
        ok = "true" if seed else "false"
        answers = ", ".join(f'"{c}": {ok}' for c in logic.checks)
        return Reply(f'{{"reasoning": "seed {seed}", {answers}}}')

    with FakeServer(by_seed) as srv:
        judge_items(make_items(["item0"]), judge(srv.url), [IA, logic], store, cache=cache, samples=3)
    rows = {r.metric: r for r in store.rows()}
    ia_row, logic_row = rows["judge:t:ia"], rows["judge:t:sa_logics"]
    assert ia_row.value == 4 and ia_row.details["votes"] == [2, 4, 4]
    assert ia_row.details["reasoning"] == "seed 1 argues for 4"
    assert logic_row.value == 1 and logic_row.details["reasoning"] == "seed 1"
    assert set(logic_row.details["parts"].values()) == {True}


def test_api_key_only_in_the_header(
    make_items: Any, tmp_path: Path, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-DO-NOT-STORE-123"
    monkeypatch.setenv("RJ_TEST_KEY", secret)
    db = tmp_path / "secret.sqlite"
    with FakeServer(lambda body, n: Reply(ia(4))) as srv, ResultStore(db) as st:
        judge_items(make_items(["clean"]), judge(srv.url, api_key_env="RJ_TEST_KEY"), [IA], st, cache=cache)
        assert srv.headers[0]["Authorization"] == f"Bearer {secret}"
    for path in (db, cache.path):
        assert path is not None
        for f in path.parent.glob(path.name + "*"):
            assert secret.encode() not in f.read_bytes()


def test_an_unset_api_key_variable_is_refused_before_any_request(
    make_items: Any, store: ResultStore, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI refused it; the Python runners sent requests without a key and stored 401 error rows."""
    from robojudge.judges import JudgeConfigError

    monkeypatch.delenv("RJ_TEST_KEY_UNSET", raising=False)
    with FakeServer(lambda body, n: Reply(ia(4))) as srv:
        with pytest.raises(JudgeConfigError, match="judge 't': api_key_env: RJ_TEST_KEY_UNSET is not set"):
            judge_items(make_items(["clean"]), judge(srv.url, api_key_env="RJ_TEST_KEY_UNSET"), [IA], store,
                        cache=cache)
        assert srv.bodies == [] and store.rows() == []


def test_frames_sent(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    bodies: list[dict[str, Any]] = []

    def rec(body: dict[str, Any], n: int) -> Reply:
        bodies.append(body)
        return Reply(ia(4) if "ITEM" in user_text(body) else '{"reasoning": "r", "physical_adherence": 5}')

    items = make_items(["clean"], frames=40)  # 10 s at 4 fps -> capped
    with FakeServer(rec) as srv:
        judge_items(
            items,
            judge(srv.url, max_images=6),
            [IA, PA],
            store,
            cache=cache,
            frames=FrameSpec(fps=2, max_frames=10),
        )
    by_kind = {("ia" if "ITEM" in user_text(b) else "pa"): b for b in bodies}
    assert n_images(by_kind["ia"]) == 6 and n_images(by_kind["pa"]) == 6
    ia_parts = by_kind["ia"]["messages"][1]["content"]
    assert (
        ia_parts[1]["type"] == "text"
        and "initial scene" in ia_parts[1]["text"]
        and ia_parts[2]["type"] == "image_url"
    )
    assert ia_parts[2]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert (
        "ITEM" not in user_text(by_kind["pa"])
        and by_kind["pa"]["temperature"] == 0
        and by_kind["pa"]["seed"] == 0
    )
    rows = {r.metric: r for r in store.rows()}
    assert rows["judge:t:ia"].config is not None and rows["judge:t:ia"].config["frames"] == {
        "fps": 2,
        "max_frames": 10,
        "size": None,
    }


def test_errors_are_retried_on_request(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    state = {"up": False}
    with FakeServer(lambda body, n: Reply(ia(5)) if state["up"] else Reply("down", status=503)) as srv:
        j = judge(srv.url, max_retries=0)
        s = judge_items(make_items(["clean"]), j, [IA], store, cache=cache)
        assert s.failed == 1
        state["up"] = True
        s = judge_items(make_items(["clean"]), j, [IA], store, cache=cache)
        assert s.skipped == 1 and s.computed == 0
        s = judge_items(make_items(["clean"]), j, [IA], store, cache=cache, retry_errors=True)
        assert s.scored == 1
    assert [r.value for r in store.rows()] == [5]


def test_missing_video_and_instruction(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    items = make_items(["clean"])
    items = [
        items[0].model_copy(update={"instruction": None}),
        items[0].model_copy(update={"item_id": "gone", "video": "/nope.mp4"}),
    ]
    with FakeServer(lambda body, n: Reply('{"reasoning": "r", "physical_adherence": 5}')) as srv:
        s = judge_items(items, judge(srv.url), [IA, PA], store, cache=cache)
    rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert rows[("clean", "judge:t:pa")].value == 5
    assert "needs the item's instruction" in (rows[("clean", "judge:t:ia")].error or "")
    assert "video error" in (rows[("gone", "judge:t:pa")].error or "")
    assert s.failed == 3


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://h:8000/v1", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
        ("https://h/openai/v1?api-version=2024-06", "https://h/openai/v1/chat/completions?api-version=2024-06"),
    ],
)
def test_endpoint_url_keeps_the_query_after_the_path(base: str, url: str) -> None:
    from robojudge.judges._openai import endpoint_url

    assert endpoint_url(base) == url
