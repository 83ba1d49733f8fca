"""``Retry-After`` is waited for in full, past ``max_backoff_s``, up to ``max_retry_after_s`` and the
request's deadline; a longer wait fails the request at once."""

from __future__ import annotations

import time
from email.utils import formatdate
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
              "max_backoff_s": 0.05, "max_retries": 2, **kw}
    return make_judge(values)


def _limited(after: str) -> tuple[list[float], Any]:
    times: list[float] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        times.append(time.monotonic())
        return Reply("slow down", status=429, headers={"Retry-After": after}) if n == 1 else Reply(OK)

    return times, script


def test_retry_after_is_waited_for_past_max_backoff(make_items: Any, tmp_path: Path) -> None:
    times, script = _limited("0.6")
    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        s = judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=ResponseCache(enabled=False))
    assert s.scored == 1 and len(times) == 2
    assert times[1] - times[0] >= 0.59


def test_retry_after_beyond_the_ceiling_fails_at_once(make_items: Any, tmp_path: Path) -> None:
    times, script = _limited("1000")
    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        started = time.monotonic()
        s = judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=ResponseCache(enabled=False))
        assert time.monotonic() - started < 30 and srv.count == 1
    (row,) = store.rows()
    assert s.failed == 1 and "asked to wait 1000 s (Retry-After), more than max_retry_after_s = 300 s" in (
        row.error or ""
    )


def test_retry_after_past_the_deadline_fails_at_once(make_items: Any, tmp_path: Path) -> None:
    times, script = _limited("5")
    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        j = judge(srv.url, deadline_s=2)
        s = judge_items(make_items(["x"]), j, [PA], store, cache=ResponseCache(enabled=False))
        assert srv.count == 1
    (row,) = store.rows()
    assert s.failed == 1 and "the 5 s Retry-After asks for would pass it" in (row.error or "")


def test_a_retry_after_date_is_measured_from_the_server_s_own_date(make_items: Any, tmp_path: Path) -> None:
    times: list[float] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        times.append(time.monotonic())
        if n > 1:
            return Reply(OK)
        ahead = time.time() + 400  # the server's clock runs 400 s ahead of ours; it asks for 1 s
        return Reply("slow down", status=429, headers={"Date": formatdate(ahead, usegmt=True),
                                                       "Retry-After": formatdate(ahead + 1, usegmt=True)})

    with FakeServer(script) as srv, ResultStore(tmp_path / "r.sqlite") as store:
        s = judge_items(make_items(["x"]), judge(srv.url), [PA], store, cache=ResponseCache(enabled=False))
    # Before: the date was measured against our clock, a 401 s wait, and the request failed at once.
    assert s.scored == 1 and len(times) == 2
    assert 0.99 <= times[1] - times[0] < 30
