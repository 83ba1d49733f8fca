"""``--executor ray --address``: an address where nothing answers stops within seconds with the
documented error (Ray's own loop retried it for more than ten minutes), and text that is no address is
refused naming ``--address`` and its forms. No Ray instance is started: ``ray.init`` must not be reached."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.run._ray import RayUnavailableError, check_reachable, split_address

HINT = "start a head with `ray start --head --node-ip-address 127.0.0.1`, or use --address local"


@pytest.fixture
def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (taken from the system, then given back)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes no new connection and refuses none: its one-place queue is full, so a connect
    waits (as for a host that drops packets)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = int(srv.getsockname()[1])
    waiting = []
    for _ in range(3):
        c = socket.socket()
        c.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            c.connect(("127.0.0.1", port))
        waiting.append(c)
    time.sleep(0.2)
    yield port
    for c in waiting:
        c.close()
    srv.close()


@pytest.fixture
def no_ray_init(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")

    def init(*args: object, **kwargs: object) -> None:
        pytest.fail(f"ray.init was called ({kwargs.get('address')!r}): an unreachable address must stop "
                    "before Ray")

    monkeypatch.setattr(ray, "init", init)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


@pytest.mark.parametrize(("address", "expected"), [
    ("local", None), ("auto", None), ("127.0.0.1:6379", ("127.0.0.1", 6379)),
    ("ray://head.example:10001", ("head.example", 10001)), ("[::1]:6379", ("::1", 6379)),
])
def test_addresses_split_into_host_and_port(address: str, expected: tuple[str, int] | None) -> None:
    assert split_address(address) == expected


@pytest.mark.parametrize("address", ["foo", "127.0.0.1", "host:", ":6379", "host:port", "host:0",
                                     "host:65536", "host:\u00b2", "::1", "ray://", "ray://host", "[::1]6379",
                                     "http://host:80"])
def test_text_that_is_no_address_names_the_option_and_the_forms(address: str) -> None:
    with pytest.raises(ValueError) as err:
        split_address(address)
    assert str(err.value) == (f"--address {address!r} is not a Ray address; give local, auto, "
                              "ray://HOST:PORT (Ray Client) or HOST:PORT (a cluster's GCS address)")


def test_reachable_only_where_something_accepts(closed_port: int, silent_port: int) -> None:
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        check_reachable(f"127.0.0.1:{srv.getsockname()[1]}", "x")  # something answers: no error
    check_reachable("local", "x")
    with pytest.raises(RayUnavailableError, match=rf"^cannot reach a Ray cluster at 'here' \(.+\); {HINT}"):
        check_reachable(f"127.0.0.1:{closed_port}", "'here'")
    start = time.monotonic()
    with pytest.raises(RayUnavailableError, match=r"\(no answer within 1 s\)"):
        check_reachable(f"ray://127.0.0.1:{silent_port}", "'there'", timeout=1.0)
    assert time.monotonic() - start < 10


def test_the_executor_stops_before_ray_at_an_unreachable_address(no_ray_init: None, closed_port: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.run._ray import RayExecutor

    start = time.monotonic()
    with pytest.raises(RayUnavailableError, match=f"cannot reach a Ray cluster at '127.0.0.1:{closed_port}'"):
        RayExecutor(f"127.0.0.1:{closed_port}")
    with pytest.raises(ValueError, match="--address 'foo' is not a Ray address"):
        RayExecutor("foo")
    # `auto` goes where $RAY_ADDRESS says: that address is checked, and named
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed_port}")
    with pytest.raises(RayUnavailableError,
                       match=rf"at \$RAY_ADDRESS '127.0.0.1:{closed_port}' \(--address auto\)"):
        RayExecutor("auto")
    assert time.monotonic() - start < 20


def test_cli_score_fails_within_seconds(no_ray_init: None, closed_port: int, tmp_path: Path) -> None:
    video = tmp_path / "a.mp4"
    video.write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": str(video)}) + "\n")
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", str(tmp_path / "r.sqlite"),
            "--executor", "ray", "--no-progress", "--address"]
    start = time.monotonic()
    res = CliRunner().invoke(app, [*args, f"127.0.0.1:{closed_port}"])
    assert res.exit_code == 2, res.output
    assert f"error: cannot reach a Ray cluster at '127.0.0.1:{closed_port}'" in res.output
    res = CliRunner().invoke(app, [*args, "foo"])
    assert res.exit_code == 2
    assert "error: --address 'foo' is not a Ray address; give local, auto" in res.output
    assert time.monotonic() - start < 30


def test_ray_init_does_not_take_over_sigterm(monkeypatch: pytest.MonkeyPatch) -> None:
    # ray.init put its own SIGTERM handler in place of robojudge's: `kill PID` on `score --executor ray`
    # ended with Ray's stack dump and exit status 1, not as Ctrl-C (130)
    import signal

    from robojudge._lifeline import terminate_as_interrupt
    from robojudge.run._ray import RayExecutor

    ray = pytest.importorskip("ray")

    def rays_own(signum: int, frame: object) -> None:
        raise SystemExit(1)

    def fake_init(*args: object, **kwargs: object) -> None:
        signal.signal(signal.SIGTERM, rays_own)

    before = signal.getsignal(signal.SIGTERM)
    try:
        terminate_as_interrupt()
        ours = signal.getsignal(signal.SIGTERM)
        monkeypatch.setattr(ray, "is_initialized", lambda: False)
        monkeypatch.setattr(ray, "init", fake_init)
        monkeypatch.setattr(ray, "remote", lambda f: f)
        monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0})
        RayExecutor("local", workers=1)
        assert signal.getsignal(signal.SIGTERM) is ours
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_cluster_wanting_its_auth_token_is_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # the head was up, but the message said to start one (Ray's chained AuthenticationError dropped)
    import socket

    from robojudge.run._ray import RayExecutor

    ray = pytest.importorskip("ray")

    class AuthenticationError(Exception):
        pass

    def fake_init(*args: object, **kwargs: object) -> None:
        try:
            raise AuthenticationError("Ensure that the token for the cluster is available")
        except AuthenticationError as exc:
            raise ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:1") from exc

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", fake_init)
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        address = f"127.0.0.1:{srv.getsockname()[1]}"
        with pytest.raises(RayUnavailableError, match="needs the cluster's auth token. Set RAY_AUTH_MODE"):
            RayExecutor(address)


def test_a_host_named_auth_is_no_token_problem() -> None:
    from robojudge.run._ray import _refused

    error = ConnectionError("Failed to connect to Ray cluster at ray-auth-01:6379")
    said = _refused("'ray-auth-01:6379'", error)
    assert said.startswith("cannot reach a Ray cluster at 'ray-auth-01:6379'")
