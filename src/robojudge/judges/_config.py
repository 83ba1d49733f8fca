"""Judge declarations: which backend and model, where, how fast, and how to sample.

Judges are declared in a TOML file (default ``robojudge.toml``)::

    [judges.qwen]
    backend = "openai"
    model = "Qwen/Qwen2.5-VL-7B-Instruct"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "VLLM_API_KEY"      # the variable's NAME; the key itself never goes in a file
    concurrency = 8
    max_images = 32

    [judges.qwen.sampling]
    temperature = 0.0
    seed = 0
    max_tokens = 1024

    [judges.qwen.extra_body]          # merged into every request body (vLLM options and the like)
    top_k = 1

    [judges.qwen.prices]              # optional, USD per million tokens
    input_per_mtok = 0.2
    output_per_mtok = 0.8

A judge served by several servers (a fleet) lists them instead of one ``base_url``; each has its
own concurrency and an optional weight (see :mod:`robojudge.judges._fleet`)::

    [[judges.qwen.endpoints]]
    base_url = "http://10.0.0.1:8000/v1"
    concurrency = 16

    [[judges.qwen.endpoints]]
    base_url = "http://10.0.0.2:8000/v1"
    concurrency = 8
    weight = 0.5
"""

from __future__ import annotations

import difflib
import hashlib
import ipaddress
import json
import re
import tomllib
import unicodedata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from robojudge import settings
from robojudge._chars import short_enough
from robojudge.registry import Registry, UnknownNameError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # used with fullmatch: "$" would let a final newline in

def _check_backend(name: str, factory: Any) -> Any:
    # A lazy entry point is imported only when asked for: refuse what cannot make a backend.
    if not callable(factory):
        raise TypeError(f"judge backend {name!r} must be a factory JudgeConfig -> Backend (a class or a "
                        f"function), got {type(factory).__name__}")
    return factory


BACKEND_REGISTRY: Registry[Any] = Registry(
    "judge backend",
    entry_point_group="robojudge.judge_backends",
    extra_modules=lambda: settings.get().plugins,
    check=_check_backend,
)
"""The judge backends by name (typed and documented as ``robojudge.judges._backend.BACKENDS``); kept
here so that a config can check its backend's name when it is read. Besides the built-ins, installed
packages add theirs through the ``robojudge.judge_backends`` entry-point group and the modules named in
``ROBOJUDGE_PLUGINS``."""


def _http_url(url: str | None) -> str | None:
    """``url`` if it is an http(s) URL with a host (``None`` and "" mean none); else ``ValueError``."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        shown = re.sub(r"[^/@]*@", "***@", url.split("?", 1)[0].split("#", 1)[0])  # no credentials
        raise ValueError(f"{shown!r} is not an http:// or https:// URL (for example http://127.0.0.1:8000/v1)")
    return url


class JudgeConfigError(ValueError):
    """A judges file or inline judge that cannot be used."""


class Sampling(BaseModel):
    """Decoding settings; deterministic by default (temperature 0, fixed seed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = 0
    max_tokens: int = Field(default=1024, ge=1)
    token_limit_field: Literal["max_tokens", "max_completion_tokens", "none"] = Field(
        default="max_tokens",
        description="the request field that carries max_tokens (openai backend): OpenAI's reasoning "
        "models (o-series, GPT-5) refuse max_tokens and take max_completion_tokens; none sends no limit",
    )
    sample_temperature: float = Field(
        default=0.7, gt=0.0, le=2.0, description="temperature used for samples > 1 when temperature is 0"
    )

    def identity(self) -> dict[str, Any]:
        """The settings as they enter a judge's identity: ``token_limit_field`` only when it is not
        ``max_tokens``, so judges declared without it keep their config hashes and cache keys."""
        out = self.model_dump(mode="json")
        if self.token_limit_field == "max_tokens":
            del out["token_limit_field"]
        return out


class Prices(BaseModel):
    """Token prices in USD per million tokens; cost is recorded when set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(default=0.0, ge=0.0)
    output_per_mtok: float = Field(default=0.0, ge=0.0)

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        return (
            (prompt_tokens or 0) * self.input_per_mtok + (completion_tokens or 0) * self.output_per_mtok
        ) / 1e6


class Endpoint(BaseModel):
    """One server of a judge fleet.

    Attributes:
        base_url: Its OpenAI-compatible URL, e.g. ``http://10.0.0.1:8000/v1``.
        concurrency: Requests in flight to it at once.
        weight: Relative share of the load: the fleet sends the next request where
            ``(outstanding + 1) / weight`` is smallest, so a server of weight 2 carries twice the
            requests of one of weight 1 once both are busy.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(min_length=1)
    concurrency: int = Field(default=4, ge=1, le=1024)
    weight: float = Field(default=1.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _valid_url(cls, v: str) -> str:
        return _http_url(v) or v


_SET_BY_ROBOJUDGE = {
    "model": "model",
    "messages": "a rubric (--rubric-file)",
    "temperature": "sampling.temperature",
    "top_p": "sampling.top_p",
    "seed": "sampling.seed",
    "max_tokens": "sampling.max_tokens",
    "max_completion_tokens": 'sampling.max_tokens with sampling.token_limit_field = "max_completion_tokens"',
    "logprobs": "--scoring expected",
    "top_logprobs": "top_logprobs",
}
"""Request body fields robojudge writes itself, and where each is set instead of ``extra_body``."""

_TOKEN_LIMIT_FIELDS = frozenset({"max_tokens", "max_completion_tokens"})
"""The two names the token limit may go out under (``sampling.token_limit_field``): robojudge sends one
of them, or neither, not both in every request."""

_NO_FLEET = frozenset({"hf", "mock"})
"""Backends that serve from this process and so take no endpoints."""


class JudgeConfig(BaseModel):
    """One judge: a backend, a model and how to call it.

    Attributes:
        name: Judge name; stored metric ids are ``judge:<name>:<rubric>``.
        backend: ``openai``, ``hf`` or ``mock`` (or a registered plugin backend).
        model: Model name as the server or transformers knows it (a local folder for ``hf``).
        base_url: OpenAI-compatible endpoint, e.g. ``http://127.0.0.1:8000/v1``.
        api_key_env: Name of the environment variable holding the API key (never the key).
        concurrency: Requests in flight at once.
        max_images: Most images per request; more frames are thinned uniformly (first kept).
        timeout_s: Longest one attempt may take, connecting, sending and reading the reply.
        deadline_s: Longest one request may take, all its attempts and the waits between them.
        max_reply_bytes: Largest reply body read; a bigger one fails its item (without retries).
        circuit_breaker: Failed attempts in a row (of the endpoint's own: no reply, 5xx, 401/403/
            404/405/407/408, a redirect; a 200 reply that is not JSON once per item whose attempts
            all ended so; not a 400/413/422 or a bad 200 reply of one request) after which
            nothing more is sent to the endpoint in this run (its remaining items get error rows);
            0 never stops.
        max_retries: Retries of 429/5xx/timeouts/connection errors before the item fails (of a 200
            reply that is not JSON, at most 2).
        backoff_s: First retry delay; doubles each retry, with jitter, capped at ``max_backoff_s``.
        max_backoff_s: Longest wait between retries of our own choosing (a ``Retry-After`` is
            waited for in full, up to ``max_retry_after_s``).
        max_retry_after_s: Longest ``Retry-After`` honoured; a server asking for a longer wait
            fails the request at once (no retry sooner than it asked). The deadline still applies.
        top_logprobs: Alternatives per token requested for ``--scoring expected``.
        image_quality: JPEG quality of frames sent over HTTP.
        endpoints: Several servers of the same model instead of one ``base_url`` (a fleet). The
            judge's ``concurrency`` is then the sum of theirs; ``circuit_breaker`` counts per
            endpoint, and one taken out is probed again after ``probe_after_s``.
        probe_after_s: Seconds a fleet endpoint stays out before one request probes it again;
            each failed probe doubles the wait (up to ten times this).
        device: ``hf`` only: ``auto`` (GPU when present), ``cpu`` or ``cuda``.
        dtype: ``hf`` only: ``auto``, ``float32``, ``bfloat16`` or ``float16``.
        revision: ``hf`` only: the model repository commit to load (pinned weights).
        model_files: Set by robojudge when judging (never in a judges file): the digest of the files of
            a local model folder (``hf``), part of the judge's identity.
        stage: Training stage of the model (``base``, ``sft``, ``rl``, ``sft+rl``; RoboJudge Table
            3): the judges leaderboard lays judges of one ``base_model`` out by stage.
        base_model: The model a trained judge started from (default: ``model``, for a ``base``).
        replies: ``mock`` only: scripted replies, used in turn.
        sampling: Decoding settings.
        extra_body: Extra JSON merged into each request body; not the fields robojudge sets itself
            (``model``, ``messages``, ``temperature``, ``top_p``, ``seed``, ``max_tokens``,
            ``max_completion_tokens``, ``logprobs``, ``top_logprobs``).
        extra_headers: Extra HTTP headers: transport only, not part of the identity or the cache key
            (an ``api-key`` header is masked in messages; prefer ``api_key_env``). A header that picks
            the model or its weights belongs in ``model`` or ``base_url`` instead.
        prices: Token prices for cost accounting.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    backend: str = "openai"
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = Field(default=4, ge=1, le=1024)
    max_images: int = Field(default=32, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)
    deadline_s: float = Field(default=300.0, gt=0)
    max_reply_bytes: int = Field(default=1 << 20, ge=1024)
    circuit_breaker: int = Field(default=5, ge=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_s: float = Field(default=1.0, ge=0)
    max_backoff_s: float = Field(default=60.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0)
    top_logprobs: int = Field(default=10, ge=1, le=20)
    image_quality: int = Field(default=90, ge=10, le=100)
    endpoints: tuple[Endpoint, ...] = ()
    probe_after_s: float = Field(default=30.0, gt=0)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    revision: str | None = None
    stage: Literal["base", "sft", "rl", "sft+rl"] | None = None
    base_model: str | None = None
    model_files: str | None = Field(
        default=None, description="set by robojudge, not in a judges file: the digest of a local model "
        "folder's files (`hf`), so that new weights in the same folder are another judge")
    replies: list[str] = Field(default_factory=list)
    sampling: Sampling = Field(default_factory=lambda: Sampling())
    extra_body: dict[str, Any] = Field(default_factory=dict)
    extra_headers: dict[str, str] = Field(default_factory=dict)
    prices: Prices | None = None

    @model_validator(mode="before")
    @classmethod
    def _fleet_concurrency(cls, values: Any) -> Any:
        """With endpoints, the judge's concurrency is the sum of theirs (the runner sizes its work
        queue by it); one given as well must agree."""
        if not isinstance(values, dict) or not values.get("endpoints"):
            return values
        eps = values["endpoints"]
        if not isinstance(eps, (list, tuple)):
            return values  # the field's own validation says what is wrong
        if values.get("base_url"):
            raise ValueError("give either base_url or endpoints, not both")
        if values.get("backend", "openai") in _NO_FLEET:
            raise ValueError(f"the {values['backend']} backend runs in this process and takes no endpoints")
        total = 0
        for ep in eps:
            c = ep.get("concurrency", 4) if isinstance(ep, dict) else getattr(ep, "concurrency", 4)
            if not isinstance(c, int):
                return values  # reported by the endpoint's own validation
            total += c
        given = values.get("concurrency")
        if given is not None and given != total:
            raise ValueError(
                f"concurrency {given} disagrees with the endpoints' total {total}: with endpoints, "
                "set concurrency per endpoint"
            )
        return {**values, "concurrency": total}

    @field_validator("name")
    @classmethod
    def _valid_name(cls, v: str) -> str:
        short_enough("judge name", v)
        if not _NAME.fullmatch(v):
            raise ValueError(f"judge name {v!r} may hold ASCII letters (A-Z, a-z), digits, '_', '.', '-' "
                             "only, starting with a letter or a digit")
        return v

    @field_validator("base_url")
    @classmethod
    def _valid_url(cls, v: str | None) -> str | None:
        return _http_url(v)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(
                f"api_key_env must be the NAME of an environment variable, got {v[:4]!r}...; "
                "put the key itself in that variable"
            )
        return v

    @field_validator("extra_body")
    @classmethod
    def _not_set_by_robojudge(cls, v: dict[str, Any]) -> dict[str, Any]:
        # Merged last into the body, these replaced what robojudge sends and stores (the seeds that tell
        # a vote's turns apart, the model the row names) without a word.
        taken = [k for k in v if k in _SET_BY_ROBOJUDGE and k not in _TOKEN_LIMIT_FIELDS]
        problems = []
        if taken:
            use = "; ".join(f"{k}: use {_SET_BY_ROBOJUDGE[k]}" for k in taken)
            problems.append(f"{', '.join(taken)} {'is' if len(taken) == 1 else 'are'} set by robojudge in "
                            f"every request and cannot be overridden here ({use})")
        for k in (k for k in v if k in _TOKEN_LIMIT_FIELDS):
            # robojudge sends one of the two (or neither) as sampling.token_limit_field says; the other
            # merged here would go out beside it, and the server would pick one of its own choosing
            problems.append(
                f"{k} cannot be set here: robojudge sends the token limit itself, sampling.max_tokens, under "
                "the name sampling.token_limit_field gives (max_tokens by default, max_completion_tokens, or "
                f"none for no limit): use {_SET_BY_ROBOJUDGE[k]} (a judge moved so from extra_body gets a "
                "new config hash, and its items are judged again)"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return v

    def api_key(self) -> str | None:
        """The API key from the environment, or ``None`` (read at call time, never stored)."""
        return settings.secret(self.api_key_env) if self.api_key_env else None

    def api_key_problem(self) -> str | None:
        """Why the variable ``api_key_env`` names gives no usable key now, else ``None``: it is unset or
        empty, or the key holds a control character (a line break read from a file with it).

        The command line refuses to start then: without a key no ``Authorization`` header goes out,
        and a typo in the name would only show up as failed requests (401s) later; a key with a line
        break fails every request before it leaves. A name that looks like a key itself is shown by
        its first 4 characters only.
        """
        name = self.api_key_env
        if not name:
            return None
        key = settings.secret(name)
        what = "not set" if key is None else "empty" if not key.strip() else None
        if what is not None and looks_like_key(name):
            return (f"api_key_env: {name[:4]!r}... ({len(name)} characters) is {what}; it looks like an API "
                    "key: put the key in an environment variable and give that variable's name here")
        if what is not None:
            return f"api_key_env: {name} is {what} (set it to the API key, or remove api_key_env)"
        assert key is not None
        bad = next((c for c in key if unicodedata.category(c) == "Cc"), None)
        if bad is None:
            return None
        rest = key.rstrip("\r\n")
        if rest != key and all(unicodedata.category(c) != "Cc" for c in rest):
            where = "ends with a line break"
        else:
            where = f"holds a control character (U+{ord(bad):04X})"
        return (f"api_key_env: the key in {name} {where}, which no HTTP header may carry; strip it from the "
                "variable")

    def identity(self) -> dict[str, Any]:
        """What decides a judge's answers (for config hashes and caches): no URL, key or speed knobs."""
        return {
            "backend": self.backend,
            "model": self.model,
            "max_images": self.max_images,
            "image_quality": self.image_quality,
            "sampling": self.sampling.identity(),
            "extra_body": self.extra_body,
            **({"revision": self.revision} if self.revision else {}),
            # only when set, so judges declared without them keep their config hashes; a model's
            # weights in a local folder, and a dtype other than auto, change its answers
            **({"model_files": self.model_files} if self.model_files else {}),
            **({"dtype": self.dtype} if self.backend == "hf" and self.dtype != "auto" else {}),
            **({"stage": self.stage, "base_model": self.base_model or self.model} if self.stage else {}),
            # a mock judge's answers are its scripted replies: other replies are another judge
            **({"replies": self.replies} if self.backend == "mock" else {}),
        }


_KEY_PREFIXES = ("hf_", "gsk_", "sk_", "sk-", "ghp_", "gho_", "ghs_", "github_pat_", "xai-", "nvapi-",
                 "pplx-", "r8_", "AIza", "AKIA")
"""How common API keys begin (Hugging Face, Groq, OpenAI/Anthropic/Stripe, GitHub, xAI, NVIDIA, Perplexity,
Replicate, Google, AWS)."""


def looks_like_key(name: str) -> bool:
    """Whether ``name``, given as a variable's name, looks like an API key itself: 16 characters or more
    with a known key prefix, or mixing lower and upper case with digits, or 32 or more without an ``_``.

    >>> looks_like_key("gsk_9fQ2xLr7TzK1mN4pW8vB3cY6dH0jS5aE"), looks_like_key("OPENAI_API_KEY")
    (True, False)
    """
    if len(name) < 16:
        return False
    if name.startswith(_KEY_PREFIXES):
        return True
    kinds = (str.islower, str.isupper, str.isdigit)
    mixed = all(any(kind(c) for c in name) for kind in kinds)
    return mixed or (len(name) >= 32 and "_" not in name)


_OTHER_SERVICES: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = (
    (("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"), "Hugging Face",
     ("huggingface.co", "huggingface.cloud", "hf.space")),
    (("GITHUB_TOKEN", "GH_TOKEN"), "GitHub", ("github.com", "github.ai", "githubusercontent.com",
                                              "models.inference.ai.azure.com")),
    (("AWS_",), "AWS", ("amazonaws.com", "api.aws")),
    (("AZURE_",), "Azure", ("azure.com", "azure.net", "azure-api.net", "windows.net")),
    (("GCP_", "GOOGLE_APPLICATION_CREDENTIALS"), "Google Cloud", ("googleapis.com", "google.com")),
    (("SSH_AUTH_SOCK",), "SSH", ()),
    # The judge providers' own keys: the ones a user most likely holds, and so the ones a judges file from
    # someone else would name for its own server. Pointing an OpenAI-compatible server at one is allowed
    # (a warning only).
    (("OPENAI_API_KEY",), "OpenAI", ("openai.com",)),
    (("ANTHROPIC_API_KEY",), "Anthropic", ("anthropic.com",)),
    (("GEMINI_API_KEY", "GOOGLE_API_KEY"), "Google", ("googleapis.com",)),
    (("MISTRAL_API_KEY",), "Mistral", ("mistral.ai",)),
    (("GROQ_API_KEY",), "Groq", ("groq.com",)),
    (("TOGETHER_API_KEY",), "Together AI", ("together.xyz", "together.ai")),
    (("OPENROUTER_API_KEY",), "OpenRouter", ("openrouter.ai",)),
    (("DEEPSEEK_API_KEY",), "DeepSeek", ("deepseek.com",)),
    (("XAI_API_KEY",), "xAI", ("x.ai",)),
    (("FIREWORKS_API_KEY",), "Fireworks AI", ("fireworks.ai",)),
)
"""Environment variables that hold another service's secret (a name ending in ``_`` is a prefix: every
``AWS_...``), whose service, and the hosts of that service (itself and its subdomains) where the secret
belongs. ``SSH_AUTH_SOCK`` is the SSH agent's socket and belongs to no server. A server on this machine
is never warned of (:func:`_this_machine`): what runs there can read the environment anyway."""


def endpoint_urls(config: JudgeConfig) -> tuple[str, ...]:
    """The URLs a judge sends its requests (frames, prompts and key) to: its fleet's, else its
    ``base_url``; none for a backend that runs in this process (``hf``, ``mock``)."""
    if config.backend in _NO_FLEET:
        return ()
    if config.endpoints:
        return tuple(ep.base_url for ep in config.endpoints)
    return (config.base_url,) if config.base_url else ()


def shown_endpoint(url: str) -> str:
    """``scheme://host[:port]`` of an endpoint URL: where it sends, without credentials, path or query.

    >>> shown_endpoint("https://user:pw@api.example.com:8443/v1?key=abc")
    'https://api.example.com:8443'
    """
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:  # a port out of range: the URL is refused when the request is built
        port = None
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def _this_machine(host: str) -> bool:
    """Whether ``host`` is this machine: ``localhost``, a loopback address (``127.0.0.0/8``, ``::1``) or
    the unspecified address (``0.0.0.0``, ``::``), which a client on Linux and macOS connects to as this
    machine.

    >>> [_this_machine(h) for h in ("localhost", "127.0.0.2", "::1", "0.0.0.0", "10.0.0.1", "example.com")]
    [True, True, True, True, False, False]
    """
    if host.lower().rstrip(".") == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _served_by(host: str, hosts: tuple[str, ...]) -> bool:
    """Whether ``host`` is one of ``hosts`` or a subdomain of one."""
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in hosts)


def _other_service(name: str) -> tuple[str, tuple[str, ...]] | None:
    """The service whose secret the variable ``name`` holds (:data:`_OTHER_SERVICES`), and its hosts."""
    for names, service, hosts in _OTHER_SERVICES:
        if any(name.startswith(n) if n.endswith("_") else name == n for n in names):
            return service, hosts
    return None


def key_warnings(config: JudgeConfig) -> list[str]:
    """What is risky about where a judge sends its key, one sentence each: the key (or credentials in the
    URL) going over plain ``http://`` to a host that is not this machine, where anyone on the way can
    read it; and ``api_key_env`` naming another service's secret (``HF_TOKEN``, ``GITHUB_TOKEN``,
    ``AWS_...``, a judge provider's ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``) for an
    endpoint that is neither that service nor this machine, which is how a judges file from someone else
    takes a secret that was never meant for its server.

    >>> key_warnings(make_judge({"name": "j", "model": "m", "base_url": "https://evil.example/v1",
    ...                          "api_key_env": "HF_TOKEN"}))  # doctest: +NORMALIZE_WHITESPACE
    ["judge 'j' sends HF_TOKEN, a Hugging Face secret, as its API key to https://evil.example, which is
      not Hugging Face: check the judges file, and give the judge a variable of its own"]
    """
    out: list[str] = []
    urls = endpoint_urls(config)
    name = config.api_key_env
    for url in urls:
        parts = urlsplit(url)
        sent = f"the key in {name}" if name else "the credentials in its URL" if parts.username else None
        if sent and parts.scheme.lower() == "http" and not _this_machine(parts.hostname or ""):
            out.append(f"judge {config.name!r} sends {sent} over plain http:// to {shown_endpoint(url)}, "
                       "which is not this machine: anyone on the way can read it (use https://)")
    other = _other_service(name) if name else None
    if other is not None:
        service, hosts = other
        foreign = [url for url in urls
                   if not _served_by(host := urlsplit(url).hostname or "", hosts) and not _this_machine(host)]
        if foreign:
            shown = ", ".join(shown_endpoint(url) for url in foreign)
            article = "an" if service[0] in "AEIOU" else "a"
            out.append(f"judge {config.name!r} sends {name}, {article} {service} secret, as its API key to "
                       f"{shown}, which is not {service}: check the judges file, and give the judge a "
                       "variable of its own")
    return out


def short_hash(value: Any) -> str:
    """A 16-hex-digit hash of JSON-able ``value``, independent of key order."""
    canon = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canon.encode()).hexdigest()[:16]


def make_judge(values: dict[str, Any]) -> JudgeConfig:
    """Validate plain values into a :class:`JudgeConfig`; errors name the judge and the field.

    The backend must be registered (:data:`robojudge.judges.BACKENDS`): a misspelt one is an error
    here, with the names it may have meant, rather than when the run starts.
    """
    name = values.get("name", "?")
    try:
        config = JudgeConfig.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {_message(e['msg'])}" if e["loc"] else _message(e["msg"])
            for e in exc.errors(include_url=False)
        )
        raise JudgeConfigError(f"judge {name!r}: {problems}") from None
    if config.backend not in BACKEND_REGISTRY:
        unknown = UnknownNameError(BACKEND_REGISTRY.kind, config.backend, BACKEND_REGISTRY.names())
        raise JudgeConfigError(f"judge {name!r}: backend: {unknown}")
    return config


def _message(msg: str) -> str:
    """A pydantic message without the "Value error, " it puts before a validator's own words."""
    return msg.removeprefix("Value error, ")


def _local_folders(values: dict[str, Any], root: Path) -> dict[str, str]:
    """An ``hf`` judge's ``model`` and ``base_model`` given as a relative path of a folder beside the
    judges file, as that folder's absolute path: paths in a judges file are read against its folder, as
    a manifest's are (from another working folder, ``models/tiny`` was taken for a hub id). Anything
    else is kept; another backend's ``model`` is the name a server serves, never a path."""
    out: dict[str, str] = {}
    if values.get("backend") != "hf":
        return out
    for key in ("model", "base_model"):
        value = values.get(key)
        if not isinstance(value, str) or not value or Path(value).is_absolute():
            continue
        try:
            folder = root / value
            if folder.is_dir():
                out[key] = str(folder.resolve())
        except (OSError, ValueError):  # a name too long, a NUL: not a folder
            continue
    return out


def _first_table(key: str, value: Any) -> str:
    """The header of the first table under top-level ``key`` as a file writes it (``judge.m.sampling``
    for ``[judge.m.sampling]``, whose parents TOML makes implicitly), or ``key`` for a plain key."""
    path = [key]
    while isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        sub, value = next(iter(value.items()))
        path.append(sub)
    return ".".join(path)


def _refuse_other_tables(path: Path, data: dict[str, Any]) -> None:
    """Refuse a top-level table or key other than ``[judges]``: nothing reads it, so a ``[judge.m.sampling]``
    typo left the judge at its default temperature without a word (keys misspelt inside a judge's own
    table are refused by its config already).

    Raises:
        JudgeConfigError: Naming the file, the table and the one meant.
    """
    others = [k for k in data if k != "judges"]
    if not others:
        return
    key = others[0]
    found = _first_table(key, data[key])
    kind = "table" if isinstance(data[key], dict) else "key"
    if difflib.get_close_matches(key.lower(), ["judges"], n=1, cutoff=0.6):
        meant = "judges" + found[len(key):]
        hint = f"did you mean [{meant}]?" if kind == "table" else f"did you mean {meant}?"
    elif key in JudgeConfig.model_fields:
        hint = f"a judge's {key} goes in its own table: [judges.NAME.{key}]" if kind == "table" else \
            f"a judge's {key} goes in its own table: {key} = ... under [judges.NAME]"
    else:
        hint = "nothing reads it"
    shown = f"[{found}]" if kind == "table" else repr(found)
    raise JudgeConfigError(
        f"{path}: unknown top-level {kind} {shown} ({hint}); a judges file declares each judge as a "
        "[judges.NAME] table and holds nothing else"
    )


def load_judges_file(path: str | Path) -> dict[str, JudgeConfig]:
    """All judges declared in a TOML file, by name.

    Raises:
        JudgeConfigError: Missing or invalid file, or an invalid judge.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))  # a BOM, as Windows tools write
    except FileNotFoundError:
        raise JudgeConfigError(
            f"no judges file at {p} (declare judges there, or pass --backend/--model)"
        ) from None
    except OSError as exc:
        raise JudgeConfigError(f"cannot read {p}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise JudgeConfigError(f"{p}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise JudgeConfigError(f"{p}: not a judges file (TOML text): byte {exc.start} is not UTF-8") from None
    _refuse_other_tables(p, data)
    table = data.get("judges", {})
    if not isinstance(table, dict):
        raise JudgeConfigError(f"{p}: [judges] must be a table of judges")
    out: dict[str, JudgeConfig] = {}
    for name, values in table.items():
        if not isinstance(values, dict):
            raise JudgeConfigError(f"{p}: judges.{name} must be a table")
        try:
            out[name] = make_judge({**values, **_local_folders(values, p.parent), "name": name})
        except JudgeConfigError as exc:
            raise JudgeConfigError(f"{p}: {exc}") from None
    return out
