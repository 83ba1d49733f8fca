"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and the benchmark.

``FakeServer(script)`` starts a threaded HTTP server on a free port; ``script(body, n)`` gets the
parsed request body and the 1-based request count and returns a :class:`Reply`. The server counts
requests and the highest number handled at once.

Misbehaviours for the robustness tests: a reply can echo the request's ``Authorization`` header
or its path and query (``echo``), be any bytes (``body``), be gzip-compressed (``gzip``), be sent
chunked without a length (``chunked``), or stall after its headers (``stall``, a server that hangs
mid-reply).
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server sends back: a chat reply (``text``), or an error status with a body."""

    text: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    logprobs: list[dict[str, Any]] | None = None
    raw: Any = None  # a full JSON body to send instead
    echo: bool = False  # replace "{authorization}", "{authorization_urlencoded}", "{path}" in the payload
    body: bytes | None = None  # exactly these bytes as the payload
    chunked: bool = False  # Transfer-Encoding: chunked, no Content-Length
    stall: float = 0.0  # seconds to hang after the headers (and the first chunk, when chunked)
    gzip: bool = False  # Content-Encoding: gzip (Content-Length is then the compressed size)


Script = Callable[[dict[str, Any], int], Reply]


def user_text(body: dict[str, Any]) -> str:
    """All text parts of the request's messages, joined."""
    out = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out += [p.get("text", "") for p in content if p.get("type") == "text"]
    return "\n".join(out)


def n_images(body: dict[str, Any]) -> int:
    return sum(
        1
        for msg in body.get("messages", [])
        if isinstance(msg.get("content"), list)
        for p in msg["content"]
        if p.get("type") == "image_url"
    )


def image_sizes(body: dict[str, Any]) -> set[tuple[int, int]]:
    """(width, height) of every image the request's last message carries."""
    import cv2
    import numpy as np

    out = set()
    for part in body["messages"][-1]["content"]:
        if part["type"] == "image_url":
            raw = base64.b64decode(part["image_url"]["url"].partition(",")[2])
            h, w = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR).shape[:2]
            out.add((w, h))
    return out


class FakeServer:
    """The server; use as a context manager. ``url`` is the ``/v1`` base URL."""

    def __init__(self, script: Script, *, record: bool = True) -> None:
        self.script = script
        self.record = record  # False: bodies are read but neither parsed nor kept (the benchmark)
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # accepted connections whose handler has not finished
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms ACK stalls

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def date_time_string(self, timestamp: float | None = None) -> str:
                # A reply's own "Date" stands in for the server's clock (a server whose clock is off).
                return getattr(self, "reply_date", None) or super().date_time_string(timestamp)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                body = json.loads(raw) if server.record else {}
                with server._lock:
                    server.count += 1
                    n = server.count
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    if server.record:
                        server.bodies.append(body)
                        server.headers.append(dict(self.headers))
                        server.paths.append(self.path)
                try:
                    reply = server.script(body, n)
                    if reply.delay:
                        time.sleep(reply.delay)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                if reply.body is not None:
                    payload = reply.body
                elif reply.raw is not None:
                    payload = json.dumps(reply.raw).encode()
                elif reply.status == 200:
                    choice: dict[str, Any] = {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": "stop",
                    }
                    if reply.logprobs is not None:
                        choice["logprobs"] = {"content": reply.logprobs}
                    payload = json.dumps(
                        {
                            "id": f"cmpl-{n}",
                            "model": body.get("model"),
                            "choices": [choice],
                            "usage": {"prompt_tokens": 100 + n_images(body), "completion_tokens": 20},
                        }
                    ).encode()
                else:
                    payload = json.dumps({"error": {"message": reply.text or "error"}}).encode()
                if reply.echo:
                    auth = self.headers.get("Authorization", "")
                    payload = payload.replace(b"{authorization}", auth.encode())
                    quoted = urllib.parse.quote(auth, safe="")
                    payload = payload.replace(b"{authorization_urlencoded}", quoted.encode())
                    payload = payload.replace(b"{path}", self.path.encode())
                if reply.gzip:
                    payload = gzip.compress(payload)
                try:
                    self.reply_date = reply.headers.get("Date")
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        if k != "Date":
                            self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    if reply.gzip:
                        self.send_header("Content-Encoding", "gzip")
                    if reply.chunked:
                        self.send_header("Transfer-Encoding", "chunked")
                    else:
                        self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if not reply.chunked:
                        if reply.stall:
                            self.wfile.flush()
                            time.sleep(reply.stall)
                        self.wfile.write(payload)
                        return
                    step = 1 << 16
                    for i in range(0, len(payload), step):
                        part = payload[i : i + step]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                        if i == 0 and reply.stall:
                            self.wfile.flush()
                            time.sleep(reply.stall)
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def process_request(self, request: Any, client_address: Any) -> None:
                with server._lock:
                    server.connections += 1
                super().process_request(request, client_address)

            def process_request_thread(self, request: Any, client_address: Any) -> None:
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    with server._lock:
                        server.connections -= 1

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def settle(self, quiet: float = 1.0, timeout: float = 30.0) -> int:
        """Wait until no connection is open and the request count has not moved for ``quiet`` seconds;
        return the count. A killed client's last requests can still be in the server's socket buffers and
        be read (and counted) after the client is gone."""
        end = time.monotonic() + timeout
        last, since = self.count, time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.05)
            with self._lock:
                count, busy = self.count, self.connections
            if count != last or busy:
                last, since = count, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return count
        raise AssertionError(f"the server did not settle in {timeout} s ({self.connections} open)")

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
