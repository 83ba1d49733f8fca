"""Identical requests in flight at once are sent once: the others wait for its reply."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item

PA = get_rubric("pa")


def _items(make_items: Any, n: int) -> list[Item]:
    video = make_items(["A"])[0].video
    # PA does not show the judge the instruction: every item asks the same question
    return [Item(item_id=f"p{i}", video=str(video), instruction=f"variant {i}") for i in range(n)]


def judge(url: str, **kw: Any) -> Any:
    values = {"name": "t", "backend": "openai", "model": "m", "base_url": url, "concurrency": 8,
              "max_retries": 0, **kw}
    return make_judge(values)


def test_identical_requests_are_sent_once(tmp_path: Path, make_items: Any, cache: ResponseCache) -> None:
    reply = '{"reasoning": "r", "physical_adherence": 4}'
    # The reply waits long enough for all ten requests to be planned while the first is out, on a machine
    # other work keeps busy too (at 0.3 s, under a load of 15, three items came after the reply was cached:
    # shared 6, not 9).
    with FakeServer(lambda body, n: Reply(reply, delay=2.0)) as srv, ResultStore(tmp_path / "r.sqlite") as st:
        s = judge_items(_items(make_items, 10), judge(srv.url), [PA], st, cache=cache)
        assert srv.count == 1
    assert s.scored == 10 and [r.value for r in st.rows()] == [4] * 10
    assert (s.stats.sent, s.stats.answered, s.stats.cache_hits, s.stats.shared) == (1, 1, 9, 9)
    details = [r.details or {} for r in st.rows()]
    assert sum(1 for d in details if d["cached"]) == 9


def test_waiters_share_the_failure_of_the_request_they_waited_for(
    tmp_path: Path, make_items: Any, cache: ResponseCache
) -> None:
    with FakeServer(lambda body, n: Reply("bad request", status=400, delay=0.3)) as srv, \
            ResultStore(tmp_path / "r.sqlite") as st:
        s = judge_items(_items(make_items, 5), judge(srv.url), [PA], st, cache=cache)
        assert srv.count == 1
    assert s.failed == 5 and all("HTTP 400" in (r.error or "") for r in st.rows())


def test_without_a_cache_identical_requests_are_still_sent_once(tmp_path: Path, make_items: Any) -> None:
    lock = threading.Lock()
    seen: list[int] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        with lock:
            seen.append(n)
        return Reply('{"reasoning": "r", "physical_adherence": 2}', delay=0.3)

    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as st:
        s = judge_items(_items(make_items, 6), judge(srv.url), [PA], st, cache=ResponseCache(enabled=False))
        assert srv.count == 1 and s.scored == 6


def test_sampled_turns_without_a_seed_are_each_asked(tmp_path: Path, make_items: Any,
                                                     cache: ResponseCache) -> None:
    # samples=3 at a temperature, seed unset: three turns at the same settings. Without something to
    # tell them apart they had one cache key, so every turn got the first turn's reply (no vote).
    replies = iter([f'{{"reasoning": "r", "physical_adherence": {s}}}' for s in (2, 4, 4)])
    lock = threading.Lock()

    def script(body: dict[str, Any], n: int) -> Reply:
        with lock:
            return Reply(next(replies), delay=0.1)

    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as st:
        cfg = judge(srv.url, sampling={"temperature": 0.7, "seed": None})
        s = judge_items(_items(make_items, 1), cfg, [PA], st, cache=cache, samples=3)
        assert srv.count == 3
        (row,) = st.rows()
    assert s.stats.sent == 3 and s.stats.cache_hits == 0
    assert row.value == 4 and sorted(row.details["votes"]) == [2, 4, 4]
    with ResultStore(tmp_path / "again.sqlite") as st:  # a rerun reads each turn's own reply back
        again = judge_items(_items(make_items, 1), cfg, [PA], st, cache=cache, samples=3)
        (row,) = st.rows()
    assert again.stats.cache_hits == 3 and sorted(row.details["votes"]) == [2, 4, 4]
