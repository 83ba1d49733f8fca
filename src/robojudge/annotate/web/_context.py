"""What every route of the annotation web app shares: the session, CSRF checks and error pages."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from robojudge.annotate import AnnotationService, NotFound
from robojudge.annotate.web._render import render
from robojudge.annotate.web._security import LoginRateLimiter, Session, SessionCodec, tokens_match

if TYPE_CHECKING:
    from robojudge.annotate import Annotator

__all__ = ["COOKIE", "CSRF_HEADER", "LOGIN_COOKIE", "CsrfRejected", "NotLoggedIn", "WebContext", "client",
           "error_response", "wants_json"]

COOKIE = "rj_session"
LOGIN_COOKIE = "rj_login"
CSRF_HEADER = "X-CSRF-Token"
_TITLES = {401: "Not logged in", 403: "Forbidden", 404: "Not found", 409: "Conflict", 422: "Invalid label",
           429: "Too many attempts", 503: "Not saved"}


class NotLoggedIn(Exception):
    """No valid session: pages redirect to the login page, API and media routes answer 401."""


class CsrfRejected(Exception):
    """A state-changing request without the session's CSRF token."""


@dataclass
class WebContext:
    """What every route shares: the service, the project served, and the session machinery."""

    service: AnnotationService
    project: str
    codec: SessionCodec
    secret: str
    limiter: LoginRateLimiter
    https: bool | None  # None: decide per request from its scheme
    revoked: set[str] = field(default_factory=set)  # logged-out session ids (this process)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def secure(self, request: Request) -> bool:
        return self.https if self.https is not None else request.url.scheme == "https"

    def session(self, request: Request) -> tuple[Annotator, Session]:
        session = self.codec.loads(request.cookies.get(COOKIE))
        if session is None or session.sid in self.revoked:
            raise NotLoggedIn
        try:
            user, generation = self.service.annotator_and_generation(session.user_id)
        except NotFound:  # deleted or deactivated since the cookie was issued
            raise NotLoggedIn from None
        # switched off or given a new invite since: a counter, not a time (no two clocks compared)
        if session.generation != generation:
            raise NotLoggedIn
        return user, session

    def check_csrf(self, request: Request, session: Session, form_token: str | None = None) -> None:
        given = form_token if form_token is not None else request.headers.get(CSRF_HEADER)
        if not tokens_match(session.csrf, given):
            self.service.record_event(session.user_id, "csrf_rejected", {"path": request.url.path},
                                      remote=client(request))
            raise CsrfRejected

    def set_session(self, response: Response, request: Request, session: Session) -> None:
        response.set_cookie(COOKIE, self.codec.dumps(session), max_age=self.codec.max_age_s, httponly=True,
                            samesite="lax", secure=self.secure(request), path="/")

    def revoke(self, sid: str) -> None:
        with self.lock:
            self.revoked.add(sid)


def client(request: Request) -> str | None:
    return request.client.host if request.client else None


def wants_json(request: Request) -> bool:
    return request.url.path.startswith(("/api/", "/media/"))


def error_response(request: Request, status: int, message: str, *, field_name: str | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    if wants_json(request):
        body: dict[str, Any] = {"detail": message}
        if field_name:
            body["field"] = field_name
        return JSONResponse(body, status_code=status, headers=headers)
    html = render("error.html", status=status, title=_TITLES.get(status, "Error"), message=message, user=None,
                  csrf=None)
    return HTMLResponse(html, status_code=status, headers=headers)
