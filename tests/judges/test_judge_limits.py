"""Bounded replies, a per-request deadline and a circuit breaker, against the real local test server."""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any

import pytest
from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

IA = get_rubric("ia")
OK = '{"reasoning": "fine", "instruction_alignment": 4}'


def judge(url: str, **kw: Any) -> Any:
    values = {"name": "t", "backend": "openai", "model": "m", "base_url": url, "concurrency": 2}
    values.update({"backoff_s": 0.01, "max_retries": 2, "timeout_s": 5.0, **kw})
    return make_judge(values)


def _huge_chat(n_bytes: int) -> bytes:
    """A well-formed chat reply of about ``n_bytes`` whose score is valid (so only its size is wrong)."""
    content = json.dumps({"reasoning": "x" * n_bytes, "instruction_alignment": 4})
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()


# -- bounded replies -----------------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_oversized_reply_is_an_error_row_not_a_stored_string(
    make_items: Any, store: ResultStore, cache: ResponseCache, chunked: bool
) -> None:
    body = _huge_chat(3 << 20)
    with FakeServer(lambda b, n: Reply(body=body, chunked=chunked)) as srv:
        s = judge_items(make_items(["big"]), judge(srv.url), [IA], store, cache=cache)
        assert srv.count == 1  # not retried: the same question would get the same answer
    (row,) = store.rows()
    assert row.status == "error" and s.failed == 1
    assert row.error is not None and "reply larger than 1 MiB" in row.error and "first bytes: " in row.error
    assert '{"choices"' in row.error and len(row.error) < 1000
    cache.flush()
    assert cache.path is not None
    cached = sum(f.stat().st_size for f in cache.path.parent.glob(cache.path.name + "*"))
    assert cached < 200_000  # nothing of it was cached


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_cap_counts_decompressed_bytes_of_a_gzip_reply(
    make_items: Any, store: ResultStore, cache: ResponseCache, chunked: bool
) -> None:
    # 5 MB of reasoning squeezes into a few kB: the announced (compressed) length fits the cap,
    # what the client would hold after decompressing does not.
    body = _huge_chat(5_000_000)
    with FakeServer(lambda b, n: Reply(body=body, gzip=True, chunked=chunked)) as srv:
        j = judge(srv.url, max_reply_bytes=64 << 10)
        s = judge_items(make_items(["bomb"]), j, [IA], store, cache=cache)
        assert srv.count == 1
    (row,) = store.rows()
    assert row.status == "error" and s.failed == 1
    assert row.error is not None and "reply larger than 64 KiB" in row.error and '{"choices"' in row.error
    assert len(row.error) < 1000
    cache.flush()
    assert cache.path is not None
    cached = sum(f.stat().st_size for f in cache.path.parent.glob(cache.path.name + "*"))
    assert cached < 200_000  # nothing of it was cached


def test_gzip_reply_within_the_cap_is_read(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    body = _huge_chat(40_000)  # 40 kB decompressed, under a 64 KiB cap
    with FakeServer(lambda b, n: Reply(body=body, gzip=True)) as srv:
        j = judge(srv.url, max_reply_bytes=64 << 10)
        judge_items(make_items(["zipped"]), j, [IA], store, cache=cache)
    (row,) = store.rows()
    assert row.status == "ok" and row.value == 4


def test_reply_cap_is_configurable_and_long_texts_are_clipped_in_rows(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    body = _huge_chat(3 << 20)
    with FakeServer(lambda b, n: Reply(body=body)) as srv:
        judge_items(make_items(["big"]), judge(srv.url, max_reply_bytes=8 << 20), [IA], store, cache=cache)
    (row,) = store.rows()
    assert row.status == "ok" and row.value == 4
    assert len(json.dumps(row.details)) < 100_000  # the 3 MB reasoning and raw text are clipped


def test_cap_is_validated() -> None:
    with pytest.raises(ValueError, match="max_reply_bytes: Input should be greater than or equal to 1024"):
        make_judge({"name": "t", "max_reply_bytes": 10})


# -- deadline ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stall", [False, True], ids=["no-headers", "stalled-body"])
def test_deadline_bounds_a_hung_server_across_retries(
    make_items: Any, store: ResultStore, cache: ResponseCache, stall: bool
) -> None:
    # The bounds leave room for what else the call does on a loaded machine (the first call in a process
    # starts the decoder process and imports; up to 6.7 s seen at load 15 on 2 cores): the attempts alone,
    # without the deadline, would take 24 s.
    hang = Reply(OK, stall=3.0) if stall else Reply(OK, delay=3.0)
    j = judge("", timeout_s=0.4, max_retries=60, backoff_s=0.05, deadline_s=1.0)
    items = make_items(["hung"])  # (encoding the video is not timed)
    with FakeServer(lambda b, n: hang) as srv:
        j = j.model_copy(update={"base_url": srv.url})
        t0 = time.monotonic()
        judge_items(items, j, [IA], store, cache=cache)
        took = time.monotonic() - t0
        assert srv.count <= 3  # without the deadline: 61 attempts of 0.4 s each
    (row,) = store.rows()
    assert row.status == "error" and "deadline" in (row.error or "") and "1 s" in (row.error or "")
    assert took < 12.0  # without the deadline: over 24 s


def test_deadline_shorter_than_the_attempt_timeout_cuts_the_attempt(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    items = make_items(["hung"])  # (encoding the video is not timed)
    with FakeServer(lambda b, n: Reply(OK, delay=30.0)) as srv:
        t0 = time.monotonic()
        j = judge(srv.url, timeout_s=60, deadline_s=0.3)
        judge_items(items, j, [IA], store, cache=cache)
        took = time.monotonic() - t0
    (row,) = store.rows()
    # without the deadline the attempt waits out the 30-s reply; the bound leaves room for a loaded machine
    assert row.status == "error" and "deadline" in (row.error or "") and took < 15.0


# -- circuit breaker -----------------------------------------------------------------------------------


def test_breaker_stops_sending_to_a_failing_endpoint(
    make_items: Any, store: ResultStore, cache: ResponseCache, caplog: pytest.LogCaptureFixture
) -> None:
    items = make_items([f"item{i}" for i in range(30)])
    caplog.set_level(logging.WARNING)
    with FakeServer(lambda b, n: Reply("down", status=500)) as srv:
        s = judge_items(items, judge(srv.url, max_retries=3, circuit_breaker=5), [IA], store, cache=cache)
        sent = srv.count
    assert sent <= 5 + 2  # the threshold, plus what was in flight (concurrency 2) when it opened
    rows = store.rows()
    assert len(rows) == 30 and all(r.status == "error" for r in rows) and s.failed == 30
    stopped = [r for r in rows if "circuit breaker" in (r.error or "")]
    assert len(stopped) >= 25 and len({r.error for r in stopped}) == 1
    assert "--retry-errors" in (stopped[0].error or "") and "HTTP 500" in (stopped[0].error or "")
    notes = [r for r in caplog.records if "circuit breaker" in r.getMessage()]
    assert len(notes) == 1  # said once, not once per item
    assert s.stats.stopped is not None and "circuit breaker" in s.stats.stopped
    # later, with the server back, --retry-errors judges them all
    with FakeServer(lambda b, n: Reply(OK)) as srv:
        s = judge_items(items, judge(srv.url, circuit_breaker=5), [IA], store, cache=cache, retry_errors=True)
    assert s.scored == 30 and {r.value for r in store.rows()} == {4.0}


def test_breaker_on_connection_refused(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    j = judge(f"http://127.0.0.1:{port}/v1", max_retries=2, circuit_breaker=3)
    s = judge_items(make_items([f"item{i}" for i in range(10)]), j, [IA], store, cache=cache)
    assert s.failed == 10 and s.stats.stopped is not None and "connection error" in s.stats.stopped
    assert sum("circuit breaker" in (r.error or "") for r in store.rows()) >= 6


def test_breaker_of_one_attempt_says_attempt(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    # it said "failed 1 attempts in a row"
    with FakeServer(lambda b, n: Reply("down", status=500)) as srv:
        s = judge_items(make_items(["a"]), judge(srv.url, max_retries=0, circuit_breaker=1), [IA], store,
                        cache=cache)
    assert s.stats.stopped is not None and " failed 1 attempt in a row (last: HTTP 500" in s.stats.stopped


def test_breaker_counts_consecutive_failures_only(
    make_items: Any, store: ResultStore, cache: ResponseCache
) -> None:
    # every other request fails and 429s do not count: a threshold of 2 is never reached
    def flaky(body: dict[str, Any], n: int) -> Reply:
        if n % 4 == 1:
            return Reply("busy", status=429, headers={"Retry-After": "0"})
        return Reply("oops", status=503) if n % 4 == 2 else Reply(OK)

    j = judge("", concurrency=1, max_retries=10, circuit_breaker=2)
    with FakeServer(flaky) as srv:
        s = judge_items(
            make_items([f"item{i}" for i in range(6)]), j.model_copy(update={"base_url": srv.url}), [IA],
            store, cache=cache,
        )
    assert s.scored == 6 and s.stats.stopped is None


def _first_n_fail(n_bad: int, bad: Reply) -> Any:
    return lambda body, n: bad if n <= n_bad else Reply(OK)


@pytest.mark.parametrize(
    "bad",
    [
        Reply("context length exceeded", status=400),
        Reply("payload too large", status=413),
        Reply("content filtered", status=422),
        Reply(body=_huge_chat(20_000)),  # over the 16 KiB cap below, with status 200
        Reply(raw={"not": "a chat reply"}),  # 200, but no choices
    ],
    ids=["400", "413", "422", "oversized", "malformed"],
)
def test_breaker_ignores_failures_of_single_items(
    make_items: Any, store: ResultStore, cache: ResponseCache, bad: Reply
) -> None:
    # Eight items in a row the server cannot take, then fine: the endpoint works, so nothing stops.
    items = make_items([f"item{i:02d}" for i in range(12)])
    j = judge("", concurrency=1, max_retries=0, circuit_breaker=5, max_reply_bytes=16 << 10)
    with FakeServer(_first_n_fail(8, bad)) as srv:
        s = judge_items(items, j.model_copy(update={"base_url": srv.url}), [IA], store, cache=cache)
        assert srv.count == 12
    assert s.stats.stopped is None and s.failed == 8 and s.scored == 4
    assert not any("circuit breaker" in (r.error or "") for r in store.rows())


@pytest.mark.parametrize("status", [401, 403, 404, 407])
def test_breaker_opens_on_an_endpoint_that_refuses_everyone(
    make_items: Any, store: ResultStore, cache: ResponseCache, status: int
) -> None:
    # a wrong key or a wrong URL fails every item the same way: stop after the threshold
    items = make_items([f"item{i:02d}" for i in range(12)])
    j = judge("", concurrency=1, max_retries=0, circuit_breaker=5)
    with FakeServer(lambda b, n: Reply("no", status=status)) as srv:
        s = judge_items(items, j.model_copy(update={"base_url": srv.url}), [IA], store, cache=cache)
        assert srv.count == 5
    assert s.stats.stopped is not None and f"HTTP {status}" in s.stats.stopped and s.failed == 12


def test_breaker_zero_disables_it(make_items: Any, store: ResultStore, cache: ResponseCache) -> None:
    with FakeServer(lambda b, n: Reply("down", status=500)) as srv:
        judge_items(
            make_items([f"item{i}" for i in range(4)]), judge(srv.url, max_retries=1, circuit_breaker=0),
            [IA], store, cache=cache,
        )
        assert srv.count == 8  # every item, every attempt


def test_breaker_open_skips_decoding_of_unseen_videos(
    make_items: Any, store: ResultStore, cache: ResponseCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    import robojudge.judges._frames as frames_mod

    decoded: list[str] = []
    real = frames_mod.decode_frames

    def counting(path: Any, *a: Any, **k: Any) -> Any:
        decoded.append(str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(frames_mod, "decode_frames", counting)
    items = make_items([f"item{i}" for i in range(20)])
    j = judge("", concurrency=1, max_retries=0, circuit_breaker=2)
    with FakeServer(lambda b, n: Reply("down", status=500)) as srv:
        j = j.model_copy(update={"base_url": srv.url})
        judge_items(items, j, [IA], store, cache=cache, decode_workers=0)
    assert len(store.rows()) == 20 and len(decoded) <= 2 + 2  # threshold + items in flight
