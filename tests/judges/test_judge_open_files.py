"""`robojudge judge` and the limit on open files (``ulimit -n``): each request in flight holds a socket.

Each test runs a real process under a lowered RLIMIT_NOFILE against a fake server on 127.0.0.1. Too low
a hard limit is refused in one line before anything is sent or stored; too low a soft limit is raised;
running out of descriptors during a run stops it, keeps what finished, and stores no error row nor blames
the server (a resource audit once found 1,272 of 1,500 judgments stored as errors, the circuit breaker
open on a healthy server, and exit status 0).
"""

from __future__ import annotations

import errno
import json
import resource
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _judge_server import FakeServer, Reply

REPLY = '{"reasoning": "fine", "physical_adherence": 4, "instruction_alignment": 3}'
N = 12


def _limit(soft: int, hard: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return apply


def _manifest(tmp_path: Path, make_items: Callable[..., Any]) -> Path:
    items = make_items([f"item{i:02d}" for i in range(N)])
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it.model_dump(mode="json")) + "\n" for it in items))
    return manifest


def _rows(db: Path) -> list[tuple[Any, ...]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as con:
        try:
            return con.execute("select item_id, status, error from robojudge_results").fetchall()
        except sqlite3.OperationalError:  # no table: nothing was ever stored
            return []


def _judge(tmp_path: Path, manifest: Path, url: str, concurrency: int, soft: int, hard: int,
           ) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable, "-m", "robojudge", "judge", str(manifest), "--backend", "openai", "--model", "m",
        "--base-url", url, "--concurrency", str(concurrency), "--db", f"sqlite:///{tmp_path / 'r.sqlite'}",
        "--cache-dir", str(tmp_path / "cache"), "--decode-workers", "0", "--no-progress",
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, preexec_fn=_limit(soft, hard))


def test_too_low_hard_limit_is_refused_before_anything_is_sent(
    make_items: Callable[..., Any], tmp_path: Path
) -> None:
    manifest = _manifest(tmp_path, make_items)
    with FakeServer(lambda body, n: Reply(REPLY, delay=0.3)) as srv:
        # 200 connections cannot fit in 64 descriptors, and the hard limit allows no more.
        res = _judge(tmp_path, manifest, srv.url, 200, 64, 64)
        sent = srv.count
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    message = " ".join(res.stderr.split())
    assert "needs about 232 open files" in message and "limit is 64" in message, message
    assert "lower --concurrency" in message and "ulimit -n 232" in message
    assert sent == 0
    assert _rows(tmp_path / "r.sqlite") == []


def test_too_low_soft_limit_is_raised_toward_the_hard_one(
    make_items: Callable[..., Any], tmp_path: Path
) -> None:
    manifest = _manifest(tmp_path, make_items)
    # Every request waits, so all 2 * N are in flight at once: 24 sockets on top of what a run holds.
    with FakeServer(lambda body, n: Reply(REPLY, delay=1.0)) as srv:
        res = _judge(tmp_path, manifest, srv.url, 64, 20, 4096)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = _rows(tmp_path / "r.sqlite")
    assert len(rows) == 2 * N and {status for _, status, _ in rows} == {"ok"}, rows
    assert f"{2 * N} judgments: {2 * N} scored, 0 unparsable, 0 failed" in res.stdout


_MID_RUN = textwrap.dedent(
    """
    import json, os, resource, sys
    from robojudge.judges import JudgeConfig, ResponseCache
    from robojudge.run import judge_items
    from robojudge.store import ResultStore
    from robojudge.suite import load_suite

    manifest, db, cache_dir, url = sys.argv[1:5]
    items = load_suite(manifest).items
    judge = JudgeConfig(name="j", backend="openai", model="m", base_url=url, concurrency=2,
                        circuit_breaker=3, max_retries=0)
    held = []

    def exhaust(row, summary):
        # Once a few rows are stored, something else in the process takes every free descriptor.
        if row is not None and summary.scored >= 4 and not held:
            try:
                while True:
                    held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                pass

    out = {}
    with ResultStore(f"sqlite:///{db}") as store, ResponseCache(cache_dir) as cache:
        try:
            judge_items(items, judge, "pa", store, cache=cache, progress=exhaust, decode_workers=0)
            out["raised"] = None
        except Exception as exc:
            out["raised"] = f"{type(exc).__name__}: {exc}"
            out["scored"] = exc.summary.scored
            out["failed"] = exc.summary.failed
            out["breaker"] = exc.summary.stats.stopped
        for fd in held:
            os.close(fd)
    print(json.dumps(out))
    """
)


def test_running_out_of_descriptors_mid_run_stops_it_and_blames_no_one(
    make_items: Callable[..., Any], tmp_path: Path
) -> None:
    manifest = _manifest(tmp_path, make_items)
    db = tmp_path / "r.sqlite"
    with FakeServer(lambda body, n: Reply(REPLY, delay=0.3)) as srv:
        res = subprocess.run(
            [sys.executable, "-c", _MID_RUN, str(manifest), str(db), str(tmp_path / "cache"), srv.url],
            capture_output=True, text=True, timeout=300, preexec_fn=_limit(256, 256),
        )
        sent = srv.count
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["raised"] is not None, out
    limit = "OpenFilesError: this process's limit on open files (256, `ulimit -n`)"
    assert out["raised"].startswith(limit), out
    assert "raise `ulimit -n` or lower --concurrency" in out["raised"]
    assert "cannot open: [Errno 24]" in out["raised"]  # the next video to decode, in this process
    assert out["failed"] == 0 and out["breaker"] is None, out  # not the server's fault, not an item's
    rows = _rows(db)
    # What finished is stored, nothing else: the rest is judged by the next run.
    assert {status for _, status, _ in rows} == {"ok"}, rows
    assert 4 <= len(rows) == out["scored"] < N, rows
    assert sent < N


_CONNECT = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from robojudge.judges import JudgeConfig, JudgeEngine, ResponseCache, get_rubric, make_backend

    url, cache_dir = sys.argv[1:3]
    judge = JudgeConfig(name="j", backend="openai", model="m", base_url=url, circuit_breaker=1,
                        max_retries=2, backoff_s=0.01)

    async def main():
        with ResponseCache(cache_dir) as cache:
            engine = JudgeEngine(judge, make_backend(judge), cache)
            first = await engine.judge(get_rubric("ia"), "open the drawer", None)  # (imports done)
            assert first.status == "ok", first
            held = []
            try:  # no descriptor left for the request's socket
                while True:
                    held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                pass
            try:
                result = await engine.judge(get_rubric("pa"), "stack the blocks", None)
                out = {"raised": None, "error": result.error}
            except OSError as exc:
                out = {"raised": exc.errno, "error": str(exc)}
            for fd in held:
                os.close(fd)
            await engine.backend.aclose()
            out.update(breaker=engine.breaker.message, failures=engine.breaker.failures,
                       sent=engine.stats.sent, failed_attempts=engine.stats.failed_attempts)
            print(json.dumps(out))

    asyncio.run(main())
    """
)


def test_no_socket_for_a_request_is_not_the_servers_failure(tmp_path: Path) -> None:
    """The socket that cannot be opened here (EMFILE) is neither retried nor counted by the breaker, which
    used to open at once on the healthy server ("Cannot connect to host ... [Too many open files]")."""
    # The connection of the first request is closed after it: the second needs a socket of its own.
    with FakeServer(lambda body, n: Reply(REPLY, headers={"Connection": "close"})) as srv:
        res = subprocess.run([sys.executable, "-c", _CONNECT, srv.url, str(tmp_path / "cache")],
                             capture_output=True, text=True, timeout=120, preexec_fn=_limit(256, 256))
        assert srv.count == 1
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["raised"] == errno.EMFILE, out
    assert "cannot connect to http://127.0.0.1:" in out["error"] and "Too many open files" in out["error"]
    assert out["breaker"] is None and out["failures"] == 0 and out["failed_attempts"] == 0, out
    assert out["sent"] == 2  # the first request, then one attempt of the second: not retried


def test_suite_prompts_refuses_a_concurrency_the_limit_cannot_hold(tmp_path: Path) -> None:
    (tmp_path / "v.mp4").write_bytes(b"")
    manifest = tmp_path / "suite.jsonl"
    row = {"item_id": "a", "video": "v.mp4", "instruction": "open the drawer"}
    manifest.write_text(json.dumps(row) + "\n")
    out = tmp_path / "prompts.jsonl"
    with FakeServer(lambda body, n: Reply("The gripper pulls the drawer open.")) as srv:
        judges = tmp_path / "judges.toml"
        judges.write_text(f'[judges.lm]\nbackend = "openai"\nmodel = "m"\nbase_url = "{srv.url}"\n'
                          "concurrency = 200\n")
        res = subprocess.run(
            [sys.executable, "-m", "robojudge", "suite", "prompts", str(manifest), "--out", str(out),
             "--judge", "lm", "--judges", str(judges), "--cache-dir", str(tmp_path / "cache")],
            capture_output=True, text=True, timeout=120, preexec_fn=_limit(64, 64),
        )
        sent = srv.count
    assert res.returncode == 2, res.stdout + res.stderr
    message = " ".join(res.stderr.split())
    assert "judge 'lm' at concurrency 200 needs about 232 open files" in message, message
    assert sent == 0 and not out.exists()
