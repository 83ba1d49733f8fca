"""A judge fleet against real local servers: balancing, routing around a failing one, probing, cache."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply

from robojudge.judges import (
    ChatRequest,
    JudgeConfigError,
    ResponseCache,
    get_rubric,
    make_backend,
    make_judge,
)
from robojudge.judges._breaker import CircuitBreaker
from robojudge.judges._fleet import FleetBackend
from robojudge.judges._secrets import Redactor
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

IA, PA = get_rubric("ia"), get_rubric("pa")
REPLY = json.dumps({"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4})


def fleet(*urls: str, concurrency: int = 4, **kw: Any) -> Any:
    values = {
        "name": "f",
        "backend": "openai",
        "model": "fake-vl",
        "endpoints": [{"base_url": u, "concurrency": concurrency} for u in urls],
        "backoff_s": 0.01,
        "max_retries": 3,
        "timeout_s": 2.0,
        **kw,
    }
    return make_judge(values)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Switch:
    """A server script that answers 500 while ``broken`` is set."""

    def __init__(self, broken: bool, delay: float = 0.0) -> None:
        self.broken = threading.Event()
        if broken:
            self.broken.set()
        self.delay = delay

    def __call__(self, body: dict[str, Any], n: int) -> Reply:
        if self.broken.is_set():
            return Reply("overloaded", status=500)
        return Reply(REPLY, delay=self.delay)


# -- configuration --------------------------------------------------------------------------------


def test_the_judge_concurrency_is_the_endpoints_total_and_their_urls_stay_out_of_its_identity() -> None:
    cfg = make_judge(
        {
            "name": "f",
            "model": "m",
            "endpoints": [{"base_url": "http://a/v1", "concurrency": 3}, {"base_url": "http://b/v1"}],
        }
    )
    assert cfg.concurrency == 3 + 4
    one = make_judge({"name": "f", "model": "m", "base_url": "http://c/v1"})
    assert cfg.identity() == one.identity()  # same replies, same cache keys


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"base_url": "http://c/v1"}, "either base_url or endpoints"),
        ({"concurrency": 5}, "disagrees with the endpoints' total 8"),
        ({"backend": "hf"}, "takes no endpoints"),
    ],
)
def test_bad_fleet_declarations_are_refused_with_the_reason(extra: dict[str, Any], message: str) -> None:
    values = {"name": "f", "model": "m", "endpoints": [{"base_url": "http://a/v1"}, {"base_url": "http://b/v1"}]}
    with pytest.raises(JudgeConfigError, match=message) as err:
        make_judge({**values, **extra})
    assert str(err.value).startswith("judge 'f': ")


def test_an_endpoint_field_error_names_the_endpoint() -> None:
    with pytest.raises(JudgeConfigError, match=r"endpoints\.1\.weight"):
        eps = [{"base_url": "http://a"}, {"base_url": "b", "weight": 0}]
        make_judge({"name": "f", "model": "m", "endpoints": eps})


def test_endpoints_are_read_from_a_judges_file(tmp_path: Path) -> None:
    from robojudge.judges import load_judges_file

    path = tmp_path / "robojudge.toml"
    path.write_text(
        '[judges.q]\nmodel = "m"\nprobe_after_s = 5\n'
        '[[judges.q.endpoints]]\nbase_url = "http://a/v1"\nconcurrency = 16\n'
        '[[judges.q.endpoints]]\nbase_url = "http://b/v1"\nconcurrency = 8\nweight = 0.5\n'
    )
    cfg = load_judges_file(path)["q"]
    assert cfg.concurrency == 24 and cfg.probe_after_s == 5
    assert [(e.base_url, e.concurrency, e.weight) for e in cfg.endpoints] == [
        ("http://a/v1", 16, 1.0), ("http://b/v1", 8, 0.5)]
    assert isinstance(make_backend(cfg), FleetBackend)


def test_command_line_servers_replace_the_declared_ones(tmp_path: Path) -> None:
    """--base-url once replaces a declared fleet; several replace a declared server (or fleet)."""
    from robojudge.cli._judge import fleet_endpoints, resolve_judge

    path = tmp_path / "robojudge.toml"
    path.write_text(
        '[judges.q]\nmodel = "m"\n[[judges.q.endpoints]]\nbase_url = "http://a/v1"\nconcurrency = 16\n'
        '[[judges.q.endpoints]]\nbase_url = "http://b/v1"\n'
        '[judges.one]\nmodel = "m"\nbase_url = "http://c/v1"\nconcurrency = 2\n'
    )
    single = resolve_judge("q", path, None, {"base_url": "http://z/v1", "endpoints": None})
    assert single.base_url == "http://z/v1" and single.endpoints == () and single.concurrency == 20
    two = fleet_endpoints(["http://x/v1", "http://y/v1"], 5)
    for name in ("q", "one"):
        cfg = resolve_judge(name, path, None, {"base_url": None, "endpoints": two})
        assert cfg.base_url is None and cfg.concurrency == 10
        got = [(e.base_url, e.concurrency) for e in cfg.endpoints]
        assert got == [("http://x/v1", 5), ("http://y/v1", 5)]
    assert fleet_endpoints(["http://x/v1"], 5) is None  # one server is a plain base_url


def test_a_fleet_survives_the_command_line_overrides_round_trip() -> None:
    """`robojudge judge --judge NAME --timeout 5` re-validates the file's judge from model_dump()."""
    cfg = fleet("http://a/v1", "http://b/v1", concurrency=3)
    again = make_judge({**cfg.model_dump(), "timeout_s": 5.0})
    assert again.endpoints == cfg.endpoints and again.concurrency == 6 and again.timeout_s == 5.0
    with pytest.raises(JudgeConfigError, match="set concurrency per endpoint"):
        make_judge({**cfg.model_dump(), "concurrency": 10})


def test_credentials_in_endpoint_urls_are_masked() -> None:
    cfg = fleet("http://127.0.0.1:1/v1", "http://user:hunter2secret@127.0.0.1:2/v1?api_key=k3y-value-123")
    red = Redactor.for_judge(cfg)
    assert red.text("refused hunter2secret and k3y-value-123") == "refused *** and ***"


# -- the breaker's probe --------------------------------------------------------------------------


def test_an_open_breaker_with_a_probe_time_lets_one_request_through_later() -> None:
    clock = Clock()
    b = CircuitBreaker(2, "http://x", probe_after_s=10.0, clock=clock)
    down = ConnectionError("refused")
    assert not b.failure(down) and b.failure(down)  # the second in a row opens it
    assert b.message is not None and "probed again after 10 s" in b.message
    assert not b.probe_due()
    clock.now += 10.0
    assert b.probe_due()
    b.start_probe()
    assert not b.probe_due()  # one probe at a time
    b.failure(down)  # the probe failed: out twice as long
    assert b.message is not None and b.probe_at() == clock.now + 20.0
    clock.now += 20.0
    b.start_probe()
    b.success()
    assert b.message is None and b.failures == 0 and b.probe_at() is None


def test_without_a_probe_time_the_breaker_stays_open_for_the_run() -> None:
    clock = Clock()
    b = CircuitBreaker(1, "http://x", clock=clock)
    assert b.failure(ConnectionError("refused"))
    clock.now += 1e9
    assert not b.probe_due() and b.message is not None and "--retry-errors" in b.message


# -- balancing ------------------------------------------------------------------------------------


def test_least_outstanding_for_its_weight_takes_the_next_request() -> None:
    cfg = make_judge(
        {
            "name": "f",
            "model": "m",
            "endpoints": [
                {"base_url": "http://a/v1", "concurrency": 8, "weight": 2.0},
                {"base_url": "http://b/v1", "concurrency": 8},
            ],
        }
    )
    be = FleetBackend(cfg)
    picks = []
    for _ in range(6):  # requests that stay in flight
        m = be.pick(set())
        assert isinstance(m, type(be.members[0]))
        m.outstanding += 1
        m.sent += 1
        picks.append(m.index)
    assert picks.count(0) == 4 and picks.count(1) == 2  # two to one while both are busy
    be.members[0].outstanding = 8  # full
    assert be.pick(set()) is be.members[1]
    be.members[1].outstanding = 8
    assert be.pick(set()) is True  # usable but full: wait
    assert be.pick({0, 1}) is None  # nothing left to try


def test_the_fleet_balances_over_two_servers(make_items: Any, tmp_path: Path) -> None:
    items = make_items([f"item{i}" for i in range(24)])
    with FakeServer(Switch(False, delay=0.03)) as a, FakeServer(Switch(False, delay=0.03)) as b:
        cfg = fleet(a.url, b.url, concurrency=3)
        with ResultStore(tmp_path / "s.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
            s = judge_items(items, cfg, [IA, PA], store, cache=cache, decode_workers=0)
    assert s.scored == 48 and s.failed == 0
    assert a.count + b.count == 48
    assert abs(a.count - b.count) <= 8, (a.count, b.count)  # equal servers: about half each
    assert a.max_in_flight <= 3 and b.max_in_flight <= 3  # each endpoint's own concurrency


# -- failures -------------------------------------------------------------------------------------


def test_the_fleet_routes_around_a_server_that_returns_500s(make_items: Any, tmp_path: Path) -> None:
    items = make_items([f"item{i}" for i in range(30)])
    with FakeServer(Switch(False, delay=0.03)) as good, FakeServer(Switch(True)) as bad:
        cfg = fleet(good.url, bad.url, concurrency=2, circuit_breaker=2, probe_after_s=0.1)
        backend = make_backend(cfg)
        assert isinstance(backend, FleetBackend)
        with ResultStore(tmp_path / "s.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
            s = judge_items(items, cfg, [IA], store, cache=cache, backend=backend, decode_workers=0)
            rows = list(store.rows())
    assert s.scored == 30 and s.failed == 0 and s.stats.retries == 0  # retried on the good one at once
    assert all(r.status == "ok" and r.value == 4 for r in rows)
    good_r, bad_r = backend.report()
    assert bad_r["out"] and not good_r["out"]
    assert bad_r["ok"] == 0 and good_r["ok"] == 30
    # the bad one got its two failures, the requests in flight when it was taken out, and probes
    assert bad.count == bad_r["sent"] <= 2 + 2 + bad_r["probes"]
    assert bad_r["probes"] >= 1  # the run lasts longer than probe_after_s: it was tried again


def _ask(be: FleetBackend, n: int) -> list[Any]:
    async def go() -> list[Any]:
        req = ChatRequest(system="s", user="u", frames=None)
        try:
            return list(await asyncio.gather(*(be.complete(req) for _ in range(n))))
        finally:
            await be.aclose()

    return asyncio.run(go())


def test_an_endpoint_taken_out_is_probed_later_and_back_in_once_it_answers() -> None:
    clock = Clock()
    flaky = Switch(True, delay=0.05)
    with FakeServer(Switch(False, delay=0.05)) as good, FakeServer(flaky) as bad:
        cfg = fleet(good.url, bad.url, concurrency=1, circuit_breaker=2, probe_after_s=5.0)
        be = FleetBackend(cfg, clock=clock)
        be.members[1].sent = -10  # so the next two requests try the bad one first
        replies = [_ask(be, 1)[0] for _ in range(4)]
        assert all(r.text == REPLY for r in replies)
        assert bad.count == 2 and be.members[1].breaker.message is not None  # out after two failures
        _ask(be, 3)
        assert bad.count == 2  # not tried while out
        clock.now += 5.0
        _ask(be, 1)  # the probe: it fails, the request goes to the good one
        assert bad.count == 3 and be.members[1].breaker.probes == 1
        clock.now += 5.0
        _ask(be, 1)
        assert bad.count == 3  # out twice as long now
        flaky.broken.clear()
        clock.now += 5.0
        _ask(be, 1)  # second probe answers
        assert bad.count == 4 and be.members[1].breaker.message is None
        before = bad.count
        _ask(be, 6)  # both busy: each takes about half
        assert bad.count - before >= 2  # in the rotation again


def test_when_every_endpoint_is_out_the_error_says_so_and_when_to_retry() -> None:
    clock = Clock()
    with FakeServer(Switch(True)) as a, FakeServer(Switch(True)) as b:
        cfg = fleet(a.url, b.url, concurrency=1, circuit_breaker=1, probe_after_s=7.0)
        be = FleetBackend(cfg, clock=clock)
        with pytest.raises(Exception, match="HTTP 500"):
            _ask(be, 1)  # tried on both, each taken out
        with pytest.raises(Exception, match="all 2 endpoints of judge 'f' are out") as err:
            _ask(be, 1)
    assert getattr(err.value, "retry_after", None) == pytest.approx(7.0)
    assert a.count == b.count == 1


def test_a_fleet_that_is_down_stops_the_run_as_one_server_would(make_items: Any, tmp_path: Path) -> None:
    items = make_items([f"item{i}" for i in range(10)])
    with FakeServer(Switch(True)) as a, FakeServer(Switch(True)) as b:
        cfg = fleet(a.url, b.url, concurrency=2, circuit_breaker=3, probe_after_s=30.0, backoff_s=5.0)
        with ResultStore(tmp_path / "s.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
            s = judge_items(items, cfg, [IA], store, cache=cache, decode_workers=0)
            errors = [r.error or "" for r in store.rows()]
    assert s.failed == 10 and len(errors) == 10
    assert all("every endpoint of judge 'f' failed 3 attempts in a row" in e for e in errors)
    # each server: its three failures in a row and what was in flight then; no waiting for probes
    assert a.count <= 3 + 2 and b.count <= 3 + 2
    assert s.seconds < 20


def test_a_bad_request_is_not_sent_to_another_endpoint() -> None:
    with FakeServer(lambda b, n: Reply("too long", status=400)) as a, FakeServer(Switch(False)) as b:
        be = FleetBackend(fleet(a.url, b.url, concurrency=1))
        with pytest.raises(Exception, match="HTTP 400"):
            _ask(be, 1)
    assert a.count + b.count == 1


# -- cache ----------------------------------------------------------------------------------------


def test_replies_cached_through_a_fleet_are_hits_for_any_endpoint(make_items: Any, tmp_path: Path) -> None:
    items = make_items([f"item{i}" for i in range(6)])
    servers = FakeServer(Switch(False)), FakeServer(Switch(False)), FakeServer(Switch(False))
    with servers[0] as a, servers[1] as b, servers[2] as c, ResponseCache(tmp_path / "c") as cache:
        with ResultStore(tmp_path / "1.sqlite") as store:
            cold = judge_items(items, fleet(a.url, b.url), [IA], store, cache=cache, decode_workers=0)
            first = {r.item_id: r.value for r in store.rows()}
        single = make_judge({"name": "f", "model": "fake-vl", "base_url": c.url})
        with ResultStore(tmp_path / "2.sqlite") as store:
            warm = judge_items(items, single, [IA], store, cache=cache, decode_workers=0)
            second = {r.item_id: r.value for r in store.rows()}
        with ResultStore(tmp_path / "3.sqlite") as store:  # and the fleet in another order
            again = judge_items(items, fleet(c.url, b.url), [IA], store, cache=cache, decode_workers=0)
    assert cold.stats.sent == 6 and warm.stats.sent == 0 and again.stats.sent == 0
    assert warm.stats.cache_hits == again.stats.cache_hits == 6
    assert c.count == 0 and first == second


def test_each_video_is_encoded_once_for_all_rubrics_and_turns(
    make_items: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robojudge.video import _types

    encoded: list[int] = []
    real = _types.encode_jpeg

    def counting(frame: Any, quality: int) -> bytes:
        encoded.append(quality)
        return real(frame, quality)

    monkeypatch.setattr(_types, "encode_jpeg", counting)
    items = make_items(["a", "b"], frames=8)
    with (
        FakeServer(Switch(False)) as a,
        FakeServer(Switch(False)) as b,
        ResultStore(tmp_path / "s.sqlite") as store,
        ResponseCache(tmp_path / "c") as cache,
    ):
        s = judge_items(items, fleet(a.url, b.url), [IA, PA], store, cache=cache, samples=2, decode_workers=0)
    assert s.stats.sent == 2 * 2 * 2  # items x rubrics x turns
    assert len(encoded) == 2 * 8  # each frame of each video once
