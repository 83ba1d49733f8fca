"""The FastAPI application: error mapping, security headers and the media route.

Pages live in :mod:`robojudge.annotate.web._pages`, the shared session machinery in
:mod:`robojudge.annotate.web._context`. Every route except the login and invite pages and the static
files needs a valid session; the service (:class:`robojudge.annotate.AnnotationService`) decides what
a logged-in annotator may see and change, and its refusals become 403/404/409/422 here. Handlers are
plain functions: FastAPI runs them in its thread pool, where the blocking database calls belong.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles

from robojudge.annotate import (
    REQUEST_REMOTE,
    AnnotateError,
    AnnotationService,
    Conflict,
    Forbidden,
    InvalidLabel,
    NotFound,
    StorageError,
)
from robojudge.annotate.web._context import CsrfRejected, NotLoggedIn, WebContext, error_response, wants_json
from robojudge.annotate.web._folders import playable
from robojudge.annotate.web._pages import add_pages
from robojudge.annotate.web._ranges import RangeNotSatisfiable, iter_file, parse_range
from robojudge.annotate.web._security import LoginRateLimiter, SessionCodec, security_headers
from robojudge.video import VideoError

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from robojudge.annotate import Annotator

__all__ = ["build_app", "create_app"]

STATIC = Path(__file__).parent / "static"
_TYPES = {
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime",
    ".mkv": "video/x-matroska", ".ogv": "video/ogg", ".png": "image/png", ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif",
}
_STATUS = ((NotFound, 404), (Forbidden, 403), (Conflict, 409), (InvalidLabel, 422))


class SecurityHeaders:
    """Adds the security headers to every response, errors and static files included (plain ASGI), and
    makes the client's address the one audit events of the request are logged with.

    A response that sets no ``Cache-Control`` of its own (pages, redirects, JSON, errors: everything but
    media and the static files) gets ``no-store``: Back after a logout would otherwise show the last task
    from the browser's cache (its instruction and evidence), and Back after a save or submit an old form
    whose version the server no longer holds."""

    def __init__(self, app: ASGIApp, https: bool | None) -> None:
        self.app = app
        self.https = https

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        https = self.https if self.https is not None else scope.get("scheme") == "https"
        extra = [(k.lower().encode(), v.encode()) for k, v in security_headers(https=https).items()]
        static = str(scope.get("path", "")).startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *extra]
                if not static and not any(k.lower() == b"cache-control" for k, _ in headers):
                    headers += [(b"cache-control", b"no-store"), (b"vary", b"Cookie")]
                message["headers"] = headers
            await send(message)

        client = scope.get("client")
        token = REQUEST_REMOTE.set(str(client[0]) if client else None)  # for the audit log
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            REQUEST_REMOTE.reset(token)


def _etag(secret: str, media_id: str, stat: os.stat_result) -> str:
    """A validator that changes with the file but says nothing about its name or place. The change time
    and inode are in it: a clip rewritten or copied over with its old size and time (``rsync -t``, an
    archive) is another clip, and a browser's copy of the old one must not be revalidated."""
    key = f"{media_id}:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}".encode()
    return '"' + hmac.new(secret.encode(), key, hashlib.sha256).hexdigest()[:32] + '"'


def media_response(ctx: WebContext, request: Request, user: Annotator, media_id: str) -> Response:
    """The file behind ``media_id``, whole or one byte range, with no header that names it."""
    try:  # a frame folder, GIF, AVI... is served as a WebM, encoded on first use
        path = playable(ctx.service.media_path(user, media_id))
        stat = path.stat()
    except VideoError:
        raise NotFound("this media's frames cannot be read") from None
    except OSError:  # moved or deleted since the project was made: a 500 and a blank player before
        log.warning("media %s: its file is missing or unreadable", media_id)
        raise NotFound("this media's file is missing on the server (moved or deleted since the project was "
                       "made): tell the project's admin") from None
    size = stat.st_size
    etag = _etag(ctx.secret, media_id, stat)
    headers = {
        "Accept-Ranges": "bytes",
        "ETag": etag,
        "Cache-Control": "private, max-age=3600",
        "Content-Type": _TYPES.get(path.suffix.lower(), "application/octet-stream"),
    }
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    range_header = request.headers.get("range")
    if_range = request.headers.get("if-range")
    if if_range is not None and if_range != etag:  # the client's copy is outdated: send it all
        range_header = None
    try:
        span = parse_range(range_header, size)
    except RangeNotSatisfiable:
        return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    first, last = span if span is not None else (0, size - 1)
    headers["Content-Length"] = str(last - first + 1)
    status = 200
    if span is not None:
        status = 206
        headers["Content-Range"] = f"bytes {first}-{last}/{size}"
    media_type = headers.pop("Content-Type")
    if request.method == "HEAD" or size == 0:
        return Response(status_code=status, headers=headers, media_type=media_type)
    return StreamingResponse(iter_file(path, first, last), status_code=status, headers=headers,
                             media_type=media_type)


def _storage_failed(request: Request, exc: StorageError) -> Response:
    """503 for a database that could not be read or written: the server's fault, for a while. The page
    says what happened and that the work typed is kept in the browser (app.js keeps a copy of every task
    form and offers it back); the database and its folder go to the server's log only, as a folder named
    after a generator would unblind the annotator."""
    log.error("%s %s: %s", request.method, request.url.path, exc)
    why = ("the server could not save: its disk is full" if exc.disk_full else
           "the server could not read or write its database")
    return error_response(request, 503, f"{why}. What you entered on a task is kept in this browser and "
                          "offered back when you open the task again: try again later, and tell the "
                          "project's administrator", headers={"Retry-After": "60"})


def build_app(ctx: WebContext) -> FastAPI:
    app = FastAPI(title="robojudge annotation", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.ctx = ctx

    @app.exception_handler(NotLoggedIn)
    def _not_logged_in(request: Request, exc: NotLoggedIn) -> Response:
        if wants_json(request):
            return error_response(request, 401, "log in first")
        return RedirectResponse("/login", status_code=303)

    @app.exception_handler(CsrfRejected)
    def _csrf(request: Request, exc: CsrfRejected) -> Response:
        # "field" marks the refusal as a stale token (the page then fetches /api/csrf and tries again),
        # unlike a 403 for a task that is not the annotator's
        return error_response(request, 403, "the form's security token is missing or stale: reload the page",
                              field_name="csrf_token")

    @app.exception_handler(AnnotateError)
    def _refused(request: Request, exc: AnnotateError) -> Response:
        if isinstance(exc, StorageError):
            return _storage_failed(request, exc)
        status = next((code for cls, code in _STATUS if isinstance(exc, cls)), 400)
        return error_response(request, status, str(exc), field_name=getattr(exc, "field", None))

    @app.api_route("/media/{media_id}", methods=["GET", "HEAD"])
    def media(media_id: str, request: Request) -> Response:
        user, _ = ctx.session(request)
        return media_response(ctx, request, user, media_id)

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    add_pages(app, ctx)
    app.add_middleware(SecurityHeaders, https=ctx.https)
    return app


def create_app(
    db_url: str | os.PathLike[str],
    suite_root: str | os.PathLike[str] | None,
    secret: str,
    *,
    project: str | None = None,
    https: bool | None = None,
    limiter: LoginRateLimiter | None = None,
    session_max_age_s: int = 12 * 3600,
) -> FastAPI:
    """The annotation web app for one project.

    Args:
        db_url: The database holding the annotation tables (SQLite path/URL or PostgreSQL URL).
        suite_root: The project's suite manifest. Without ``project`` it picks the project made from
            it; with ``project`` it may be the suite at another place than where the project was made
            (moved, or on another machine): files are then served from there, once the suite is checked
            to be the project's (:meth:`AnnotationService.use_suite`).
        secret: Signs the session cookies (at least 16 characters; keep it across restarts to keep
            people logged in).
        project: The project's name, when several come from the same suite or the suite moved.
        https: Mark cookies Secure and send HSTS. ``None`` decides per request from its scheme.
        limiter: The login rate limit (default: 5 failures per user name and address in 5 minutes).
        session_max_age_s: How long a login lasts.

    Returns:
        The FastAPI application; ``app.state.ctx`` is its :class:`WebContext`, and
        ``app.state.ctx.service.close()`` releases the database when the app is done.
    """
    service = AnnotationService(db_url, create=False)  # a mistyped --db made an empty database
    try:
        if project is not None and suite_root is not None:  # the suite may have moved since init
            info = service.use_suite(project, suite_root)
        elif project is not None:
            info = service.project(project)
        elif suite_root is not None:
            info = service.project_for_suite(suite_root)
        else:
            raise ValueError("name the project or the suite it was created from")
    except BaseException:
        service.close()
        raise
    ctx = WebContext(
        service=service,
        project=info.name,
        codec=SessionCodec(secret, max_age_s=session_max_age_s),
        secret=secret,
        limiter=limiter or LoginRateLimiter(),
        https=https,
    )
    return build_app(ctx)
