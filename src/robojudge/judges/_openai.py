"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang...).

Frames are sent as JPEG data URLs in ``image_url`` parts. Requests go out on one
``aiohttp.ClientSession`` on the runner's event loop, with as many pooled connections as the judge's
concurrency. Building a request body (JPEG encoding on the first request of an item, then the JSON)
runs in a worker thread, so the event loop keeps reading replies meanwhile. Against a local server,
aiohttp spent 1.3 ms of client CPU per request where ``httpx.Client`` in a thread pool spent 2.9 ms
and ``httpx.AsyncClient`` 5.5 ms (93 kB bodies; ``benchmarks/bench_judge.py`` measures the whole
runner). The API key is read from the environment variable the judge names, at call time, and only
ever goes into the ``Authorization`` header; error messages are masked
(:class:`~robojudge.judges._secrets.Redactor`) in case the server quotes it back.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from robojudge._chars import escape_controls
from robojudge.judges._backend import (
    BACKENDS,
    BackendError,
    ChatRequest,
    Completion,
    NotJSONError,
    TokenLogprob,
    TransientError,
    out_of_files,
    parse_retry_after,
)
from robojudge.judges._config import JudgeConfig
from robojudge.judges._images import thin_indices
from robojudge.judges._secrets import Redactor

RAW_TEXT = 20_000
"""Longest refusal or tool-call text kept (as a reply's raw text is in a row)."""

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class OpenAIBackend:
    """Chat completions over HTTP (``aiohttp``).

    Args:
        config: The judge; needs ``base_url`` and ``model``.
    """

    name = "openai"
    supports_logprobs = True
    interruptible = True  # cancelling a request just closes its connection

    def __init__(self, config: JudgeConfig) -> None:
        if not config.base_url:
            raise ValueError(
                f"judge {config.name!r}: the openai backend needs base_url (e.g. http://127.0.0.1:8000/v1)"
            )
        if not config.model:
            raise ValueError(f"judge {config.name!r}: the openai backend needs a model name")
        self.config = config
        self._url = endpoint_url(config.base_url)
        # Opened on the first request, on the loop that sends it: a fully cached run never pays
        # for the session or its connections.
        self._session: Any = None
        self._proxy: str | None = None

    @property
    def frame_jpeg_quality(self) -> int:
        """Frames go out as JPEGs at this quality, so the runner may encode them while decoding."""
        return self.config.image_quality

    def start(self) -> None:
        """Open the session now (on the running event loop); otherwise the first request does."""
        self._start()

    def _start(self) -> Any:
        if self._session is None or self._session.closed:
            import aiohttp

            cfg = self.config
            connector = aiohttp.TCPConnector(limit=cfg.concurrency, ttl_dns_cache=300)
            # Proxy variables are read here, once: aiohttp's trust_env would look them (and ~/.netrc)
            # up again on every request, in two worker-thread round trips each.
            self._proxy = env_proxy(self._url)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=cfg.timeout_s)
            )
        return self._session

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self.config.extra_headers}
        key = self.config.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def build_body(self, request: ChatRequest) -> tuple[dict[str, Any], int]:
        """The JSON body for one request, and how many images it carries."""
        content: list[dict[str, Any]] = [{"type": "text", "text": request.user}]
        n_images = 0
        if request.frames is not None:
            urls = request.frames.data_urls(self.config.image_quality)
            keep = thin_indices(len(urls), self.config.max_images)
            for pos, idx in enumerate(keep):
                if pos == 0 and request.first_frame_label:
                    content.append({"type": "text", "text": request.first_frame_label})
                content.append({"type": "image_url", "image_url": {"url": urls[idx]}})
            n_images = len(keep)
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": content})
        messages += [{"role": role, "content": text} for role, text in request.history]
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": request.temperature,
        }
        limit_field = self.config.sampling.token_limit_field
        if limit_field != "none":  # OpenAI's reasoning models refuse max_tokens, and want the other name
            body[limit_field] = request.max_tokens
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.seed is not None:
            body["seed"] = request.seed
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
        body.update(self.config.extra_body)
        return body, n_images

    def encode_body(self, request: ChatRequest) -> tuple[bytes, int]:
        """The request body as JSON bytes, and how many images it carries (blocking)."""
        body, n_images = self.build_body(request)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(), n_images

    async def complete(self, request: ChatRequest) -> Completion:
        import aiohttp

        session = self._start()
        frames = request.frames
        if frames is None or frames.has_jpeg(self.config.image_quality):
            payload, n_images = self.encode_body(request)  # only JSON left to do
        else:  # JPEG encoding too: keep it off the event loop
            payload, n_images = await asyncio.to_thread(self.encode_body, request)
        start = time.perf_counter()
        try:
            # Not followed: a 301/302 would resend the POST as a GET (its failure then blamed on the
            # URL configured), and a 307/308 would send the frames to another server.
            post = session.post(self._url, data=payload, headers=self._headers(), proxy=self._proxy,
                                allow_redirects=False)
            async with post as resp:
                status = resp.status
                retry_after, sent = resp.headers.get("retry-after"), resp.headers.get("date")
                location = resp.headers.get("location")
                content_type = resp.headers.get("content-type", "")
                raw = await self._read_body(resp)
        except TimeoutError:
            raise TransientError(f"timeout after {self.config.timeout_s:g} s") from None
        except aiohttp.ClientError as exc:
            code = out_of_files(exc)
            if code is not None:  # this machine's limit, not the server's failure: the runner stops
                why = f"cannot connect to {self._url}: {os.strerror(code)}"
                raise OSError(code, self._mask(why)) from None
            msg = self._mask(escape_controls(f"connection error: {type(exc).__name__}: {exc}"))
            raise TransientError(msg) from None
        except ValueError as exc:  # aiohttp refusing the request itself, e.g. two sets of credentials
            raise BackendError(self._mask(f"cannot send to {self._url} ({exc})")) from None
        latency = time.perf_counter() - start
        text_body = raw.decode("utf-8", errors="replace")
        if 300 <= status < 400:
            from urllib.parse import urljoin

            target = urljoin(self._url, location) if location else None
            where = escape_controls(target) if target else "no address (no Location)"
            base = base_url_of(target) if target else None
            advice = (f"set base_url to {escape_controls(base)}" if base is not None else
                      "set base_url to the API's new address (the part before /chat/completions)")
            raise BackendError(
                self._mask(f"HTTP {status} from {self._url}: the endpoint redirects to {where}; "
                           f"robojudge does not follow redirects: {advice}"),
                status=status,
            )
        if status != 200:
            # the server's text, shown and stored: an escape sequence in it would rewrite the terminal
            snippet = escape_controls(text_body[:300].replace("\n", " "))
            msg = self._mask(f"HTTP {status} from {self._url}: {snippet}")
            if status in _RETRY_STATUS or status >= 500:
                raise TransientError(msg, parse_retry_after(retry_after, sent), status=status)
            raise BackendError(msg, status=status)
        try:
            return _completion(text_body, self._url, latency, n_images, content_type)
        except NotJSONError as exc:  # retried a few times; the engine counts it once per item
            raise NotJSONError(self._mask(str(exc)), status=status) from None
        except TransientError as exc:  # status 200: the server answered, the breaker leaves it be
            raise TransientError(self._mask(str(exc)), status=status) from None

    async def _read_body(self, resp: Any) -> bytes:
        """The reply body, or :class:`BackendError` when it is over ``max_reply_bytes``.

        A body whose announced length fits is read in one call (the common case, no extra work);
        one announced too long is not read beyond its first bytes; one of unknown length (chunked)
        is read up to the cap plus one byte. A compressed body's announced length is its compressed
        size, and aiohttp decompresses as it reads, so such a body is read like one of unknown
        length: the cap holds for the decompressed bytes.
        """
        cap = self.config.max_reply_bytes
        length = resp.content_length
        if length is not None and resp.headers.get("Content-Encoding", "identity").lower() != "identity":
            length = None
        if length is not None and length <= cap:
            raw = bytes(await resp.read())
            if len(raw) <= cap:
                return raw
            length = len(raw)  # a server that sent more than it announced
            head = raw[:256]
            del raw
        elif length is not None:
            head = await resp.content.read(256)
        else:
            buf = bytearray()
            while len(buf) <= cap:
                chunk = await resp.content.read(cap + 1 - len(buf))
                if not chunk:
                    return bytes(buf)
                buf += chunk
            head = bytes(buf[:256])
            del buf
        resp.close()  # drop the connection with the rest of the body unread
        size = f"{length} bytes" if length is not None else "more than that"
        snippet = escape_controls(head.decode("utf-8", errors="replace").replace("\n", " "))
        raise BackendError(
            self._mask(
                f"reply larger than {_size(cap)} ({size}; raise max_reply_bytes or --max-reply-bytes "
                f"to accept it), first bytes: {snippet}"
            ),
            status=resp.status,
        )

    def _mask(self, message: str) -> str:
        """An error message with credentials masked (built per error: errors are rare)."""
        return Redactor.for_judge(self.config).text(message)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def endpoint_url(base_url: str) -> str:
    """The chat-completions URL under ``base_url``, its query string (``?api-version=``) kept last."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def base_url_of(endpoint: str) -> str | None:
    """The ``base_url`` whose :func:`endpoint_url` is ``endpoint``, or ``None`` when ``endpoint`` is no
    chat-completions URL (its path does not end in ``/chat/completions``)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    if not path.endswith("/chat/completions"):
        return None
    return urlunsplit(parts._replace(path=path.removesuffix("/chat/completions")))


def _size(n: int) -> str:
    """A byte count as people write it: ``1 MiB``, ``512 KiB``, ``1500 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def env_proxy(url: str) -> str | None:
    """The proxy the environment sets for ``url`` (``HTTP(S)_PROXY``, ``ALL_PROXY``), or ``None``.

    ``NO_PROXY`` is honoured (so a local vLLM server is reached directly when it lists localhost);
    this is what ``httpx`` and ``requests`` read too.
    """
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


def _completion(body: str, url: str, latency: float, n_images: int, content_type: str = "") -> Completion:
    """A :class:`Completion` from a 200 reply's body; a malformed one is a transient error, and one
    that is not JSON at all a :class:`~robojudge.judges._backend.NotJSONError`."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        kind = escape_controls(content_type.split(";")[0].strip()) or "none"
        snippet = escape_controls(body[:200].replace("\n", " "))
        raise NotJSONError(
            f"HTTP 200 from {url} is not a JSON chat completion (Content-Type {kind}, {len(body)} "
            "characters; check that base_url is the API's address, e.g. ending in /v1, and that no proxy "
            f"or login page answers in its place): {snippet}"
        )
    try:
        choice = data["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise TransientError(f"malformed response from {url}: {body[:200]!r}") from None
    if not isinstance(text, str):  # some servers return a list of content parts
        text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
    usage = data.get("usage") or {}
    return Completion(
        text=text,
        logprobs=_logprobs(choice.get("logprobs")),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_s=latency,
        meta={
            "id": data.get("id"),
            "model": data.get("model"),
            "finish_reason": choice.get("finish_reason"),
            "images": n_images,
            **_outside_content(message),
        },
    )


def _outside_content(message: dict[str, Any]) -> dict[str, str]:
    """What a reply says outside ``content``: a refusal's text, the arguments of its tool calls (the
    engine names them in the row's error; kept as text, so that secrets in them are masked)."""
    out: dict[str, str] = {}
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        out["refusal"] = refusal[:RAW_TEXT]
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        args = []
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                args.append(f"{fn.get('name')}({fn.get('arguments')})")
        if args:
            out["tool_calls"] = "; ".join(args)[:RAW_TEXT]
    return out



def _logprobs(raw: Any) -> tuple[TokenLogprob, ...] | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), list):
        return None
    out = []
    try:
        for tok in raw["content"]:
            top = tuple((str(a["token"]), float(a["logprob"])) for a in tok.get("top_logprobs") or [])
            out.append(TokenLogprob(str(tok["token"]), float(tok["logprob"]), top))
    except (KeyError, TypeError, ValueError):
        return None
    return tuple(out)


BACKENDS.add("openai", OpenAIBackend)
