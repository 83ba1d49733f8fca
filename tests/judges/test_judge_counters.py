"""The end-of-run counters count what happened: attempts actually sent (retries among them, failed
ones too), and cache hits only for replies that were used."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

PA = get_rubric("pa")
OK = '{"reasoning": "r", "physical_adherence": 3}'


def judge(url: str, **kw: Any) -> Any:
    values = {"name": "t", "backend": "openai", "model": "m", "base_url": url, "backoff_s": 0.01,
              "max_backoff_s": 0.02, "max_retries": 3, "circuit_breaker": 0, "timeout_s": 5, **kw}
    return make_judge(values)


def _run(url: str, make_items: Any, tmp_path: Path, **kw: Any) -> Any:
    with ResultStore(tmp_path / "r.sqlite") as store:
        off = ResponseCache(enabled=False)
        return judge_items(make_items(["x"]), judge(url, **kw), [PA], store, cache=off)


def test_malformed_replies_count_as_sent_attempts(make_items: Any, tmp_path: Path) -> None:
    script = lambda body, n: Reply(raw={"nope": 1}) if n <= 2 else Reply(OK)  # noqa: E731
    with FakeServer(script) as srv:
        s = _run(srv.url, make_items, tmp_path)
        assert srv.count == 3
    st = s.stats
    assert (st.sent, st.retries, st.failed_attempts, st.answered, st.cache_hits) == (3, 2, 2, 1, 0)


def test_attempts_that_could_not_connect_are_counted(make_items: Any, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = _run(f"http://127.0.0.1:{port}/v1", make_items, tmp_path, max_retries=2)
    st = s.stats
    assert s.failed == 1 and (st.sent, st.retries, st.failed_attempts, st.answered) == (3, 2, 3, 0)


def test_a_retry_the_breaker_stopped_is_not_counted(make_items: Any, tmp_path: Path) -> None:
    with FakeServer(lambda body, n: Reply("down", status=503)) as srv:
        s = _run(srv.url, make_items, tmp_path, circuit_breaker=1)
        assert srv.count == 1
    assert (s.stats.sent, s.stats.retries, s.stats.failed_attempts) == (1, 0, 1)


def test_a_reasked_reply_is_not_a_cache_hit(make_items: Any, tmp_path: Path, cache: ResponseCache) -> None:
    with FakeServer(lambda body, n: Reply("no idea")) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=cache)
        n = srv.count  # the reply and its repair prompt
        again = judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=cache, retry_errors=True)
        assert srv.count == 2 * n
    assert (again.stats.sent, again.stats.cache_hits, again.stats.answered) == (2, 0, 2)
