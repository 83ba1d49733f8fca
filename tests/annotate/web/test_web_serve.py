"""`robojudge annotate serve`: the secret file, loopback by default, a real server answering."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import httpx
import pytest
from _web_data import cheap_passwords, free_port, make_project, make_suite
from typer.testing import CliRunner

from robojudge.annotate.web import is_loopback, load_secret
from robojudge.cli import app as cli_app


def test_load_secret(tmp_path):
    assert load_secret(None) != load_secret(None) and len(load_secret(None)) >= 40
    path = tmp_path / "deep" / "secret"
    first = load_secret(path)
    assert len(first) >= 40 and load_secret(path) == first  # kept across restarts
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    short = tmp_path / "short"
    short.write_text("abc\n")
    with pytest.raises(ValueError, match="at least 16"):
        load_secret(short)


HOSTS = [("127.0.0.1", True), ("localhost", True), ("::1", True), ("0.0.0.0", False), ("192.168.1.4", False),
         ("example.org", False)]


@pytest.mark.parametrize(("host", "loop"), HOSTS)
def test_is_loopback(host, loop):
    assert is_loopback(host) is loop


def test_serve_without_a_project_fails_clearly(tmp_path):
    from robojudge.annotate import add_annotator

    suite = make_suite(tmp_path / "suite")
    db = tmp_path / "a.sqlite"
    args = ["annotate", "serve", str(suite), "--db", str(db)]
    result = CliRunner().invoke(cli_app, args)  # a mistyped --db: said, and no file made
    assert result.exit_code == 2 and f"database file {db} does not exist" in result.output, result.output
    assert not db.exists()
    add_annotator(str(db), "root", "admin", password="a-long-password")  # a database without the project
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code != 0
    assert "no annotation project was created from" in result.output


@pytest.mark.slow
def test_serve_runs_a_real_server(tmp_path):
    with cheap_passwords():
        project = make_project(tmp_path, reviewers=False)
    port = free_port()
    secret = tmp_path / "secret"
    cmd = [sys.executable, "-m", "robojudge", "annotate", "serve", str(project.suite), "--db", project.db,
           "--port", str(port), "--secret-file", str(secret)]
    # What encodes stopped by a server killed an hour ago left in the WebM cache goes at the start; the
    # file of an encode going on now (another server's) stays.
    media = tmp_path / "cache" / "annotate-media"
    media.mkdir(parents=True)
    killed, running = media / f"{'1' * 32}.4242.1.part.webm", media / f"{'2' * 32}.4343.1.part.webm"
    for path in (killed, running):
        path.write_bytes(b"half")
    os.utime(killed, (time.time() - 7200, time.time() - 7200))
    env = {**os.environ, "ROBOJUDGE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/login", timeout=2)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"the server did not come up: {proc.stdout.read()}") from None
                time.sleep(0.2)
        assert r.status_code == 200 and "Log in" in r.text
        assert "server" not in r.headers and r.headers["x-content-type-options"] == "nosniff"
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 303
        assert secret.exists() and stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert not killed.exists() and running.exists()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, 9)
            proc.wait()
