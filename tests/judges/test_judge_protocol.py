"""How a judge talks to its model and reads the answer, at the edges: a reply cut off at the token limit,
the per-turn records of a voted row, a voting turn whose request failed, refusals and tool calls, 200
replies that are not JSON, redirects, the token-limit field and extra headers in the judge's identity."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _judge_server import FakeServer, Reply

from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore

PA = get_rubric("pa")

DRAFT = ('Frame 1: the gripper is open above the cup. My first impression is {"reasoning": "looks clean", '
         '"physical_adherence": 5}, but in frames 9-12 the cup passes through the finger, so I need to lower')


def judge(url: str, **kw: Any) -> Any:
    return make_judge({"name": "t", "backend": "openai", "model": "m", "base_url": url, "backoff_s": 0.01,
                       "max_backoff_s": 0.02, "max_retries": 2, "timeout_s": 5, **kw})


def completion(content: Any, n: int, *, finish: str = "stop", model: str = "m",
               **message: Any) -> Reply:
    choice = {"index": 0, "message": {"role": "assistant", "content": content, **message},
              "finish_reason": finish}
    return Reply(raw={"id": f"c{n}", "model": model, "choices": [choice]})


def run(items: Any, j: Any, tmp_path: Path, cache: ResponseCache, **kw: Any) -> tuple[Any, list[Any]]:
    with ResultStore(tmp_path / "r.sqlite") as store:
        summary = judge_items(items, j, [PA], store, cache=cache, **kw)
        return summary, store.rows()


# -- what the endpoint answers ---------------------------------------------------------------------------

def test_a_200_reply_that_is_not_json_fails_fast_and_opens_the_breaker(
    make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    page = b"<html><body>Please log in to the proxy</body></html>"
    with FakeServer(lambda body, n: Reply(body=page, headers={"Content-Type": "text/html"})) as srv:
        summary, rows = run(make_items([f"i{k}" for k in range(8)]), judge(srv.url, concurrency=1),
                            tmp_path, cache)
    assert summary.failed == 8 and srv.count == 5  # one attempt per item, until the breaker opens
    errors = [r.error or "" for r in rows]
    assert all(f"HTTP 200 from {srv.url}/chat/completions is not a JSON chat completion" in e for e in errors)
    assert all("Content-Type " in e and "Please log in to the proxy" in e for e in errors)
    assert sum("circuit breaker open" in e for e in errors) == 3


class _Redirect(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(int(self.path.split("/")[1]))
        self.send_header("Location", "http://127.0.0.1:9/v1/chat/completions")  # never reached
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_named_in_the_error_and_not_followed(
    status: int, make_items: Any, tmp_path: Path, cache: ResponseCache
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{status}/v1"
        _, (row,) = run(make_items(["a"]), judge(url), tmp_path, cache)
    finally:
        server.shutdown()
        server.server_close()
    assert row.status == "error"
    assert (f"HTTP {status} from {url}/chat/completions: the endpoint redirects to "
            "http://127.0.0.1:9/v1/chat/completions") in (row.error or "")
    assert "set base_url" in (row.error or "")
