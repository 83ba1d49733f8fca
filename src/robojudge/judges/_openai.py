"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang...).

Frames are sent as JPEG data URLs in ``image_url`` parts. Requests run on a synchronous
``httpx.Client`` in a thread pool sized to the judge's concurrency: against a local server that
reached about 80% of the ideal request rate where ``httpx.AsyncClient`` reached about half. The API
key is read from the environment variable the judge names, at call time, and only ever goes into the
``Authorization`` header.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from robojudge.judges._backend import (
    BACKENDS,
    BackendError,
    ChatRequest,
    Completion,
    TokenLogprob,
    TransientError,
    parse_retry_after,
)
from robojudge.judges._config import JudgeConfig
from robojudge.judges._images import jpeg_data_urls, thin_indices

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class OpenAIBackend:
    """Chat completions over HTTP (``httpx.Client`` in a thread pool).

    Args:
        config: The judge; needs ``base_url`` and ``model``.
    """

    name = "openai"
    supports_logprobs = True

    def __init__(self, config: JudgeConfig) -> None:
        if not config.base_url:
            raise ValueError(
                f"judge {config.name!r}: the openai backend needs base_url (e.g. http://127.0.0.1:8000/v1)"
            )
        if not config.model:
            raise ValueError(f"judge {config.name!r}: the openai backend needs a model name")
        self.config = config
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        # Built on the first request: a fully cached run never pays for the client (its TLS setup
        # alone is tens of milliseconds) or the threads.
        self._client: Any = None
        self._pool: ThreadPoolExecutor | None = None

    def _start(self) -> ThreadPoolExecutor:
        if self._pool is None:
            import httpx

            cfg = self.config
            limits = httpx.Limits(max_connections=cfg.concurrency, max_keepalive_connections=cfg.concurrency)
            self._client = httpx.Client(timeout=httpx.Timeout(cfg.timeout_s), limits=limits)
            self._pool = ThreadPoolExecutor(max_workers=cfg.concurrency, thread_name_prefix="robojudge-http")
        return self._pool

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
            urls = jpeg_data_urls(request.frames, self.config.image_quality)
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
            "max_tokens": request.max_tokens,
        }
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.seed is not None:
            body["seed"] = request.seed
        if request.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = request.top_logprobs
        body.update(self.config.extra_body)
        return body, n_images

    async def complete(self, request: ChatRequest) -> Completion:
        pool = self._start()  # on the event loop thread, so built once
        return await asyncio.get_running_loop().run_in_executor(pool, self._complete, request)

    def _complete(self, request: ChatRequest) -> Completion:
        import httpx

        body, n_images = self.build_body(request)  # JPEG encoding happens here, off the event loop
        start = time.perf_counter()
        try:
            resp = self._client.post(self._url, json=body, headers=self._headers())
        except httpx.TimeoutException as exc:
            raise TransientError(
                f"timeout after {self.config.timeout_s:g} s ({type(exc).__name__})"
            ) from None
        except httpx.TransportError as exc:
            raise TransientError(f"connection error: {type(exc).__name__}: {exc}") from None
        latency = time.perf_counter() - start
        if resp.status_code != 200:
            snippet = resp.text[:300].replace("\n", " ")
            msg = f"HTTP {resp.status_code} from {self._url}: {snippet}"
            if resp.status_code in _RETRY_STATUS or resp.status_code >= 500:
                raise TransientError(msg, parse_retry_after(resp.headers.get("retry-after")))
            raise BackendError(msg)
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise TransientError(f"malformed response from {self._url}: {resp.text[:200]!r}") from None
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
            },
        )

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._client.close()
            self._pool, self._client = None, None


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
