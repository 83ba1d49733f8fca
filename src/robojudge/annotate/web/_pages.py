"""The HTML pages and the draft-autosave endpoint of the annotation web app."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from robojudge.annotate import Conflict, InvalidLabel, LabelValues
from robojudge.annotate.web._context import (
    COOKIE,
    LOGIN_COOKIE,
    CsrfRejected,
    WebContext,
    client,
    error_response,
)
from robojudge.annotate.web._render import render, task_view
from robojudge.annotate.web._security import Session, new_token, tokens_match

if TYPE_CHECKING:
    from robojudge.annotate import Annotator, TaskPage

__all__ = ["add_pages"]

KIND_TITLES = {"label": "Label", "practice": "Practice (training round)", "review": "Cross-review",
               "adjudicate": "Adjudication"}
KIND_ORDER = ("practice", "label", "review", "adjudicate")
MIN_PASSWORD = 8
MAX_FORM_BYTES = 256 * 1024


async def _form(request: Request) -> dict[str, str]:
    """The posted form's text fields (files are refused: nothing here uploads)."""
    if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
        raise InvalidLabel("form", "the form is too large")
    form = await request.form()
    out: dict[str, str] = {}
    for key, value in form.multi_items():
        if not isinstance(value, str):
            raise InvalidLabel(key, "file uploads are not accepted")
        out[key] = value
    return out


def _label_fields(form: dict[str, str]) -> tuple[int, LabelValues]:
    rest = {k: v for k, v in form.items() if k not in ("csrf_token", "base_version")}
    try:
        base = int(form.get("base_version", ""))
    except ValueError:
        raise InvalidLabel("base_version", "missing or not a whole number") from None
    return base, LabelValues.from_form(rest)


def add_pages(app: FastAPI, ctx: WebContext) -> None:
    svc = ctx.service

    def page(name: str, request: Request, user: Annotator | None, session: Session | None, status: int = 200,
             **context: Any) -> HTMLResponse:
        csrf = session.csrf if session else None
        html = render(name, user=user, csrf=csrf, kind_titles=KIND_TITLES, **context)
        return HTMLResponse(html, status_code=status)

    def login_page(request: Request, error: str | None = None, status: int = 200,
                   template: str = "login.html", **extra: Any) -> HTMLResponse:
        # A second login tab keeps the first one's token, so either form still works.
        token = ctx.codec.unsign_token(request.cookies.get(LOGIN_COOKIE)) or new_token()
        response = page(template, request, None, None, status, error=error, login_csrf=token, **extra)
        response.set_cookie(LOGIN_COOKIE, ctx.codec.sign_token(token), max_age=3600, httponly=True,
                            samesite="strict", secure=ctx.secure(request), path="/")
        return response

    def check_login_csrf(request: Request, form: dict[str, str]) -> None:
        expected = ctx.codec.unsign_token(request.cookies.get(LOGIN_COOKIE))
        if not tokens_match(expected, form.get("csrf_token")):
            svc.record_event(None, "csrf_rejected", {"path": request.url.path}, remote=client(request))
            raise CsrfRejected

    async def logged_in(request: Request, user: Annotator) -> Response:
        generation = await run_in_threadpool(svc.sessions_generation, user.id)
        session = Session(user.id, user.username, user.role, new_token(), new_token(),  # fresh: no fixation
                          generation)
        response = RedirectResponse("/", status_code=303)
        ctx.set_session(response, request, session)
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request) -> Response:
        return login_page(request)

    @app.post("/login")
    async def login(request: Request) -> Response:
        form = await _form(request)
        await run_in_threadpool(check_login_csrf, request, form)
        username = form.get("username", "").strip()[:200]
        password = form.get("password", "")
        address = client(request) or "?"
        wait = ctx.limiter.reserve(username, address)  # counted as failed until the password is right
        if wait > 0:
            await run_in_threadpool(svc.record_event, None, "rate_limited", {"username": username[:100]},
                                    remote=address)
            return login_page(request, f"Too many failed attempts: try again in {int(wait) + 1} s.", 429)
        user = await run_in_threadpool(svc.authenticate, username, password, remote=address)
        if user is None:
            return login_page(request, "Wrong user name or password.", 401)
        ctx.limiter.succeeded(username, address)
        return await logged_in(request, user)

    @app.get("/invite/{token}", response_class=HTMLResponse)
    def invite_form(token: str, request: Request) -> Response:
        return login_page(request, template="invite.html", token=token, min_length=MIN_PASSWORD)

    @app.post("/invite")
    async def invite(request: Request) -> Response:
        form = await _form(request)
        await run_in_threadpool(check_login_csrf, request, form)
        token, password = form.get("token", ""), form.get("password", "")
        if len(password) < MIN_PASSWORD:
            return login_page(request, f"The password needs at least {MIN_PASSWORD} characters.", 422,
                              template="invite.html", token=token, min_length=MIN_PASSWORD)
        user = await run_in_threadpool(svc.accept_invite, token, password, remote=client(request))
        return await logged_in(request, user)

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        user, session = await run_in_threadpool(ctx.session, request)
        form = await _form(request)
        await run_in_threadpool(ctx.check_csrf, request, session, form.get("csrf_token", ""))
        ctx.revoke(session.sid)
        await run_in_threadpool(svc.record_event, user.id, "logout", None, remote=client(request))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/", response_class=HTMLResponse)
    def queue(request: Request) -> Response:
        user, session = ctx.session(request)
        entries = svc.queue(user, ctx.project)
        groups = [(k, [e for e in entries if e.kind == k]) for k in KIND_ORDER]
        return page("queue.html", request, user, session, groups=[g for g in groups if g[1]])

    def task_page(request: Request, user: Annotator, session: Session, task: TaskPage, status: int = 200,
                  error: str | None = None, error_field: str | None = None) -> HTMLResponse:
        rubric = task.rubric
        view = task_view(task, {c.name: c.text for c in rubric.checklist})
        shown = set(view.editable_axes) | set(view.locked_axes)
        axes = [(a.name, a.text) for key, a in rubric.axes.items() if key in shown]
        shown_examples = [e for e in task.examples if e.axis in shown]
        titles = {k: a.name for k, a in rubric.axes.items()}
        return page("task.html", request, user, session, status, view=view, rubric_axes=axes,
                    examples=shown_examples, axis_titles=titles, verdicts=rubric.verdicts,
                    segment_s=_segment_length(task), error=error, error_field=error_field or "")

    @app.get("/task/{assignment_id}", response_class=HTMLResponse)
    def task(assignment_id: str, request: Request) -> Response:
        user, session = ctx.session(request)
        return task_page(request, user, session, svc.task(user, assignment_id))

    def keep_and_show(request: Request, user: Annotator, session: Session, assignment_id: str,
                      form: dict[str, str], exc: InvalidLabel) -> Response:
        """A refused submit: keep what was typed as a draft and show the page again with the reason."""
        try:
            base, values = _label_fields(form)
            svc.save_draft(user, assignment_id, values, base)
        except (InvalidLabel, Conflict):
            pass
        return task_page(request, user, session, svc.task(user, assignment_id), 422, str(exc), exc.field)

    @app.post("/task/{assignment_id}/submit")
    async def submit(assignment_id: str, request: Request) -> Response:
        user, session = await run_in_threadpool(ctx.session, request)
        form = await _form(request)
        await run_in_threadpool(ctx.check_csrf, request, session, form.get("csrf_token", ""))
        try:
            base, values = _label_fields(form)
            await run_in_threadpool(svc.submit, user, assignment_id, values, base)
        except InvalidLabel as exc:
            return await run_in_threadpool(keep_and_show, request, user, session, assignment_id, form, exc)
        return RedirectResponse("/", status_code=303)

    @app.post("/task/{assignment_id}/reveal")
    async def reveal(assignment_id: str, request: Request) -> Response:
        user, session = await run_in_threadpool(ctx.session, request)
        form = await _form(request)
        await run_in_threadpool(ctx.check_csrf, request, session, form.get("csrf_token", ""))

        def work() -> Response:
            try:
                base, values = _label_fields(form)
                svc.save_draft(user, assignment_id, values, base)
                svc.reveal_instruction(user, assignment_id)
            except InvalidLabel as exc:
                again = svc.task(user, assignment_id)
                return task_page(request, user, session, again, 422, str(exc), exc.field)
            return RedirectResponse(f"/task/{assignment_id}", status_code=303)

        return await run_in_threadpool(work)

    @app.post("/task/{assignment_id}/unplayable")
    async def unplayable(assignment_id: str, request: Request) -> Response:
        """The annotator reports that the task's video does not play (the page offers it only then)."""
        user, session = await run_in_threadpool(ctx.session, request)
        form = await _form(request)
        await run_in_threadpool(ctx.check_csrf, request, session, form.get("csrf_token", ""))
        await run_in_threadpool(svc.report_unplayable, user, assignment_id)
        return RedirectResponse("/", status_code=303)

    @app.post("/api/task/{assignment_id}/draft")
    async def save_draft(assignment_id: str, request: Request) -> Response:
        user, session = await run_in_threadpool(ctx.session, request)
        await run_in_threadpool(ctx.check_csrf, request, session)
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise InvalidLabel("body", "the draft is too large")
        try:
            data = json.loads(body)
        except ValueError:
            raise InvalidLabel("body", "not JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("values"), dict):
            raise InvalidLabel("values", "expected {\"base_version\": n, \"values\": {...}}")
        base = data.get("base_version")
        if isinstance(base, bool) or not isinstance(base, int):
            raise InvalidLabel("base_version", "missing or not a whole number")
        values = LabelValues.from_form(data["values"])
        saved = await run_in_threadpool(svc.save_draft, user, assignment_id, values, base)
        return JSONResponse({"version": saved.version, "status": saved.status})

    @app.get("/api/csrf")
    def csrf_token(request: Request) -> Response:
        """The session's CSRF token, for an open page whose token went stale: the session ended (expiry,
        a restart with a new secret, a logout in another tab) and the annotator logged in again. Only the
        page's own script can read it: no CORS header lets another origin see the reply (and
        ``Cross-Origin-Resource-Policy`` keeps it out of other origins' pages), and a request the browser
        marks as sent from another site is refused outright."""
        user, session = ctx.session(request)
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            svc.record_event(user.id, "csrf_rejected", {"path": request.url.path}, remote=client(request))
            raise CsrfRejected
        return JSONResponse({"csrf": session.csrf}, headers={"Cache-Control": "no-store"})

    # ``:path``: a round name may hold "/" (any text up to 200 characters); the queue's links quote the rest
    @app.get("/rounds/{round_name:path}", response_class=HTMLResponse)
    def round_feedback(round_name: str, request: Request) -> Response:
        user, session = ctx.session(request)
        feedback = svc.round_feedback(user, ctx.project, round_name)
        ag = feedback.agreement
        rows = [("PA and IA", ag.pooled), *((axis.upper(), a) for axis, a in ag.per_axis.items())]
        alpha_keys = {"PA and IA": "pooled", **{axis.upper(): axis for axis in ag.per_axis}}
        return page("feedback.html", request, user, session, round_name=round_name, feedback=feedback,
                    rows=rows, alpha_keys=alpha_keys, pct=_percent, num=_number)

    @app.get("/audit", response_class=HTMLResponse)
    def audit(request: Request) -> Response:
        user, session = ctx.session(request)
        events = svc.audit_events(user, limit=500)  # Forbidden unless admin
        return page("audit.html", request, user, session, events=events)

    @app.exception_handler(404)
    def _missing(request: Request, exc: Exception) -> Response:
        return error_response(request, 404, "no such page")


def _segment_length(task: TaskPage) -> float:
    """The segment length the player pauses at (0: no pause-and-prompt)."""
    if not task.segments:
        return 0.0
    first = task.segments[0]
    return float(first.end_s - first.start_s)


def _percent(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}%"


def _number(x: float | None) -> str:
    return "-" if x is None or x != x else f"{x:.2f}"
