"""Masking credentials out of everything a judge server sends back.

A server may quote the request's ``Authorization`` header in an error body or even in a reply
(proxies and debugging servers do), and that text would otherwise reach the result store, exports,
the response cache and the console. :class:`Redactor` replaces, in any text:

* the judge's API key (read from its environment variable), as written, URL-encoded and
  JSON-escaped; keys shorter than :data:`MIN_SECRET` characters are placeholders (vLLM's ``EMPTY``
  is five), and masking them would mangle replies, so they are left alone;
* the values of extra headers whose names say they carry a credential (``*key*``, ``*token*``,
  ``*secret*``, ``*auth*``);
* the credentials in the judge's own ``base_url`` (and its fleet ``endpoints``): its password (or
  its user name when that is all it has: a token), the ``Basic`` header made of them, and the
  values of its key-like query parameters -- these end up in connection errors, in a server's
  echo of the request path and in the circuit breaker's message;
* whatever follows ``Authorization:``, ``api-key:`` and the like (also as JSON or dict keys),
  bearer tokens, the password of a URL and key-like URL query parameters (``key=``, ``api_key=``,
  ``access_token=``, ``sig=``...), even when the key itself is not known.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from robojudge.judges._backend import Completion
from robojudge.judges._config import JudgeConfig

MASK = "***"
MIN_SECRET = 5
"""Shortest literal secret masked, in characters."""

_SECRET_HEADER = re.compile(r"key|token|secret|auth|password|cookie", re.IGNORECASE)
# A header-shaped credential: the name, a ':' or '=' (quotes around either side allowed), an
# optional scheme word, then the value up to a quote, space, comma or closing bracket.
_HEADER_VALUE = re.compile(
    r"""\b((?:proxy-)?authorization|(?:x-)?api[-_]?key|x-auth-token)(["']?\s*[:=]\s*["']?)"""
    r"""(?:(bearer|basic|token|digest)\s+)?[^\s"',;})\]]+""",
    re.IGNORECASE,
)
_KEY_WORDS = ("apikey", "api-key", "api_key")
# Credentials in URLs: a password in the user part, and key-like query parameters.
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s/]+@")
# A parameter name holding one of these words (api_key, X-Amz-Signature, client_secret...).
_PARAM_NAME = r"[\w.-]*(?:key|token|secret|auth|passw|signature|credential)[\w.-]*|sig|code|pwd"
_URL_PARAM = re.compile(rf"([?&](?:{_PARAM_NAME})=)[^&\s\"'#]+", re.IGNORECASE)
_SECRET_PARAM = re.compile(rf"(?:{_PARAM_NAME})", re.IGNORECASE)
# A bare bearer token: at least 8 token characters, so "the bearer of ..." stays as it is.
_BEARER = re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)


def _header_repl(m: re.Match[str]) -> str:
    scheme = f"{m.group(3)} " if m.group(3) else ""
    return f"{m.group(1)}{m.group(2)}{scheme}{MASK}"


def _forms(secret: str) -> list[str]:
    """A secret as it may appear in a body: as is, URL-encoded (two ways) and JSON-escaped."""
    forms = {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        json.dumps(secret)[1:-1],
    }
    return sorted(forms, key=len, reverse=True)  # longest first: no form is left half-masked


class Redactor:
    """Replaces secrets in text with ``***``.

    Args:
        secrets: Literal values to mask (shorter ones than :data:`MIN_SECRET` are ignored).
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms: list[str] = []
        for s in secrets:
            if s and len(s) >= MIN_SECRET:
                forms += [f for f in _forms(s) if f not in forms]
        self._literals = tuple(sorted(forms, key=len, reverse=True))

    @classmethod
    def for_judge(cls, config: JudgeConfig) -> Redactor:
        """The redactor for a judge: its API key and its credential-looking extra headers."""
        values = [config.api_key()]
        values += [v for k, v in config.extra_headers.items() if _SECRET_HEADER.search(k)]
        if config.base_url:
            values += url_secrets(config.base_url)
        for ep in config.endpoints:
            values += url_secrets(ep.base_url)
        return cls(values)

    def text(self, text: str) -> str:
        """``text`` with every secret masked."""
        for lit in self._literals:
            if lit in text:
                text = text.replace(lit, MASK)
        lower = text.lower()  # the patterns are rare: a plain substring test first is ~50x cheaper
        if "authorization" in lower or "auth-token" in lower or any(k in lower for k in _KEY_WORDS):
            text = _HEADER_VALUE.sub(_header_repl, text)
        if "bearer" in lower:
            text = _BEARER.sub(rf"\1 {MASK}", text)
        if "://" in text:
            if "@" in text:
                text = _URL_PASSWORD.sub(rf"\1{MASK}@", text)
            if "=" in text:
                text = _URL_PARAM.sub(rf"\1{MASK}", text)
        return text

    def message(self, error: BaseException | str) -> str:
        """An exception's (or any) message, masked."""
        return self.text(str(error))

    def completion(self, completion: Completion) -> Completion:
        """The completion with its text and string metadata masked (the same object when clean).

        When the text held a secret, the token log-probabilities are dropped: the secret's pieces
        are spread over several tokens there, where no text search finds them.
        """
        strings = [v for v in completion.meta.values() if isinstance(v, str)]
        probe = "\n".join([completion.text, *strings])
        if self.text(probe) == probe:  # the usual case, in one pass (this runs on every cache hit)
            return completion
        text = self.text(completion.text)
        meta = {k: self.text(v) if isinstance(v, str) else v for k, v in completion.meta.items()}
        changes: dict[str, Any] = {"meta": meta}
        if text != completion.text:
            changes.update(text=text, logprobs=None)
        return replace(completion, **changes)


def url_secrets(url: str) -> list[str]:
    """The credentials written into a URL: its password and the ``Basic`` value made with it (or
    its user name, when there is no password: a token), and its key-like query parameter values."""
    parts = urllib.parse.urlsplit(url)
    out: list[str] = []
    user = urllib.parse.unquote(parts.username) if parts.username else ""
    if parts.password is not None:
        password = urllib.parse.unquote(parts.password)
        out += [password, base64.b64encode(f"{user}:{password}".encode()).decode()]
    elif user:
        out += [user, base64.b64encode(f"{user}:".encode()).decode()]
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=False):
        if _SECRET_PARAM.fullmatch(name):
            out.append(value)
    return out
