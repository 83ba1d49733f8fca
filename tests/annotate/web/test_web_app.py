"""The annotation web app through HTTP (FastAPI's TestClient): login, sessions, CSRF, roles, media, blindness.

Every response read here is also checked for the suite's secret names (generators, folders, file names,
manifest item ids) in its body and headers.
"""

from __future__ import annotations

import json
import re
from html import escape

import numpy as np
import pytest
from _web_data import (
    EXAMPLE_TEXT,
    INJECTED,
    PASSWORD,
    SECRET,
    SECRET_DIR,
    cheap_passwords,
    copy_project,
    leaks,
    make_project,
    make_suite,
    running,
)

from robojudge.annotate import (
    AnnotateError,
    AnnotationService,
    LabelValues,
    NotFound,
    add_annotator,
    close_round,
    create_round,
    import_drafts,
)
from robojudge.annotate.web import create_app
from robojudge.annotate.web._security import CSP, LoginRateLimiter
from robojudge.suite import CHECKLIST_ITEMS

fastapi_testclient = pytest.importorskip("fastapi.testclient")

FULL = {"pa": "4", "ia": "3", "checklist.agent_consistency": "2", "checklist.scene_consistency": "1",
        "checklist.interaction_realism": "2", "checklist.agent_match": "2",
        "checklist.object_correctness": "1", "checklist.goal_completion": "0",
        "evidence": "the cup slides at 2 s"}
PA_PART = {k: FULL[k] for k in ("pa", "checklist.agent_consistency", "checklist.scene_consistency",
                                "checklist.interaction_realism")}


@pytest.fixture(scope="module", autouse=True)
def _cheap_passwords():
    with cheap_passwords():
        yield


@pytest.fixture(scope="module")
def template(tmp_path_factory, _cheap_passwords):
    return make_project(tmp_path_factory.mktemp("web_template"))


@pytest.fixture
def project(template, tmp_path):
    return copy_project(template, tmp_path / "db")


@pytest.fixture
def app(project):
    app = create_app(project.db, project.suite, SECRET, limiter=LoginRateLimiter(max_failures=3, window_s=60))
    yield app
    app.state.ctx.service.close()


def client(app, https=False):
    base = "https://127.0.0.1" if https else "http://127.0.0.1"
    return fastapi_testclient.TestClient(app, base_url=base, follow_redirects=False)


def checked(response):
    """The response, after checking that neither body nor headers name a generator, file or folder."""
    found = leaks(response.text if "text" in response.headers.get("content-type", "") or
                  "json" in response.headers.get("content-type", "") else "")
    found += leaks(" ".join(f"{k}: {v}" for k, v in response.headers.items()))
    assert not found, f"{response.request.url} leaks {found}"
    return response


def form_token(html):
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def login(c, user, password=PASSWORD):
    token = form_token(c.get("/login").text)
    return c.post("/login", data={"username": user, "password": password, "csrf_token": token})


def logged_in(app, user, **kw):
    c = client(app, **kw)
    assert login(c, user).status_code == 303
    return c


def tasks(c, kind=None):
    html = checked(c.get("/")).text
    if kind is not None:
        if f'data-kind="{kind}"' not in html:
            return []
        html = html[html.index(f'data-kind="{kind}"'):]
        html = html[: html.index("</table>")]
    return re.findall(r'href="/task/([^"]+)"', html)


def page_csrf(html):
    return re.search(r'<meta name="csrf-token" content="([^"]+)">', html).group(1)


def post_form(c, aid, action, values, base_version=None):
    html = checked(c.get(f"/task/{aid}")).text
    version = re.search(r'name="base_version" value="(\d+)"', html).group(1)
    data = {**values, "csrf_token": page_csrf(html),
            "base_version": str(base_version if base_version is not None else version)}
    return c.post(f"/task/{aid}/{action}", data=data)


def label_item(c, aid):
    assert post_form(c, aid, "reveal", PA_PART).status_code == 303
    r = post_form(c, aid, "submit", FULL)
    assert r.status_code == 303, r.text


# -- login, sessions ---------------------------------------------------------------------------------------


def test_every_page_and_api_route_needs_login(app):
    c = client(app)
    for path in ("/", "/task/abc", "/rounds/r1"):
        r = c.get(path)
        assert r.status_code == 303 and r.headers["location"] == "/login", path
    for method, path in (("get", "/media/abc"), ("post", "/api/task/abc/draft"), ("head", "/media/abc")):
        assert getattr(c, method)(path).status_code == 401, path
    for path in ("/task/abc/submit", "/task/abc/reveal", "/logout"):
        assert c.post(path, data={"csrf_token": "x"}).status_code == 303, path
    assert c.get("/login").status_code == 200 and c.get("/static/app.js").status_code == 200


def test_login_sets_a_signed_httponly_samesite_cookie(app):
    c = client(app)
    r = login(c, "alice")
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = next(v for k, v in r.headers.multi_items() if k == "set-cookie" and v.startswith("rj_session="))
    flags = {f.strip().lower() for f in cookie.split(";")[1:]}
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    assert "alice" in checked(c.get("/")).text
    # a forged cookie (the payload changed, the signature kept) is no session
    value = c.cookies["rj_session"]
    c.cookies.clear()
    c.cookies.set("rj_session", "A" + value[1:])
    assert c.get("/").status_code == 303


def test_cookie_is_secure_over_https(app):
    r = login(client(app, https=True), "alice")
    cookie = next(v for k, v in r.headers.multi_items() if k == "set-cookie" and v.startswith("rj_session="))
    assert "secure" in cookie.lower()
    assert "max-age=31536000" in r.headers["strict-transport-security"]


def test_wrong_password_and_rate_limit(app, project):
    c = client(app)
    assert login(c, "alice", "nope-nope").status_code == 401
    assert login(c, "alice", "nope-nope").status_code == 401
    assert login(c, "alice", "nope-nope").status_code == 401
    r = login(c, "alice")  # the right password, but the limit (3 in this app) is reached
    assert r.status_code == 429 and "Too many" in r.text
    assert login(client(app), "bob").status_code == 303  # another user name is another key
    with AnnotationService(project.db) as svc:
        root = svc.annotator(next(a.id for a in [svc.authenticate("root", PASSWORD)] if a))
        actions = [e.action for e in svc.audit_events(root)]
    assert actions.count("login_failed") == 3 and "rate_limited" in actions and actions.count("login") >= 2


def test_login_form_needs_its_csrf_token(app):
    c = client(app)
    c.get("/login")
    r = c.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": "forged"})
    assert r.status_code == 403
    r = client(app).post("/login", data={"username": "alice", "password": PASSWORD})
    assert r.status_code == 403


def test_two_login_tabs_both_work(app):
    c = client(app)
    first = form_token(c.get("/login").text)
    second = form_token(c.get("/login").text)
    assert first == second
    r = c.post("/login", data={"username": "alice", "password": PASSWORD, "csrf_token": first})
    assert r.status_code == 303


def test_logout_ends_the_session_even_for_a_copied_cookie(app):
    c = logged_in(app, "alice")
    stolen = c.cookies["rj_session"]
    html = c.get("/").text
    assert c.post("/logout", data={"csrf_token": "wrong"}).status_code == 403
    assert c.post("/logout", data={"csrf_token": page_csrf(html)}).status_code == 303
    other = client(app)
    other.cookies.set("rj_session", stolen)
    assert other.get("/").status_code == 303


def test_invite_link_sets_the_password_once(app, project):
    invite = add_annotator(project.db, "dave", "annotator")
    c = client(app)
    html = c.get(f"/invite/{invite.token}").text
    r = c.post("/invite", data={"token": invite.token, "password": "short", "csrf_token": form_token(html)})
    assert r.status_code == 422
    html = c.get(f"/invite/{invite.token}").text
    data = {"token": invite.token, "password": "a long password", "csrf_token": form_token(html)}
    r = c.post("/invite", data=data)
    assert r.status_code == 303 and "dave" in c.get("/").text
    c2 = client(app)
    html = c2.get(f"/invite/{invite.token}").text
    r = c2.post("/invite", data={**data, "password": "another password", "csrf_token": form_token(html)})
    assert r.status_code == 404
    assert login(client(app), "dave", "a long password").status_code == 303


# -- headers, blindness, escaping ------------------------------------------------------------------------


def test_security_headers_everywhere(app):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    media = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{aid}").text).group(1)
    for path in ("/login", "/", f"/task/{aid}", "/static/app.js", f"/media/{media}", "/nope", "/api/nope"):
        r = checked(c.get(path))
        assert r.headers["content-security-policy"] == CSP, path
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
        assert r.headers["x-frame-options"] == "DENY"
    assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP


def test_pages_redirects_and_api_replies_are_not_stored_by_the_browser(app):
    # Back after a logout showed the last task (instruction, evidence) from the browser's cache, and Back
    # after a submit an editable form built on an old version.
    c = client(app)
    token = form_token(c.get("/login").text)
    replies = {"login redirect": c.post("/login", data={"username": "alice", "password": PASSWORD,
                                                        "csrf_token": token})}
    aid = tasks(c)[0]
    html = c.get(f"/task/{aid}").text
    media = re.search(r'src="/media/([^"]+)"', html).group(1)
    csrf = page_csrf(html)
    replies |= {"queue": c.get("/"), "task": c.get(f"/task/{aid}"), "missing": c.get("/nope"),
                "draft": c.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"pa": "4"}},
                                headers={"X-CSRF-Token": csrf}),
                "reveal redirect": post_form(c, aid, "reveal", PA_PART),
                "submit redirect": post_form(c, aid, "submit", FULL),
                "logout redirect": c.post("/logout", data={"csrf_token": csrf})}
    replies["task after logout"] = c.get(f"/task/{aid}")
    for what, r in replies.items():
        assert r.status_code < 500 and r.headers.get("cache-control") == "no-store", (what, r.status_code)
        assert r.headers.get("vary") == "Cookie", what
    c = logged_in(app, "alice")
    assert c.get(f"/media/{media}").headers["cache-control"] == "private, max-age=3600"  # blind media
    assert "no-store" not in c.get("/static/app.js").headers.get("cache-control", "")


def test_no_page_inline_script_or_style(app):
    c = logged_in(app, "alice")
    for path in ["/", *(f"/task/{a}" for a in tasks(c))]:
        html = c.get(path).text
        assert re.findall(r"<script(?![^>]*\bsrc=)", html) == [], path
        assert " style=" not in html and "<style" not in html and "onclick" not in html


def test_injected_script_in_the_instruction_is_text(app):
    c = logged_in(app, "alice")
    for aid in tasks(c):
        assert post_form(c, aid, "reveal", PA_PART).status_code == 303
    pages = [checked(c.get(f"/task/{aid}")).text for aid in tasks(c)]
    shown = [p for p in pages if "window.__pwned" in p]
    assert len(shown) == 1
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=x onerror=" in shown[0]
    assert INJECTED not in shown[0] and "<script>window" not in shown[0]


def test_pa_stage_hides_the_instruction_and_initial_frame(app):
    c = logged_in(app, "alice")
    for aid in tasks(c):
        html = checked(c.get(f"/task/{aid}")).text
        assert 'id="instruction"' not in html and "in the bowl" not in html and "__pwned" not in html
        assert 'name="ia"' not in html and 'id="pa-hint"' in html


def test_media_is_opaque_and_ranged(app, project):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{aid}").text).group(1)
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        data = svc.media_path(alice, media_id).read_bytes()
    size = len(data)
    assert size > 1000
    r = checked(c.get(f"/media/{media_id}"))
    assert r.status_code == 200 and r.content == data
    assert r.headers["accept-ranges"] == "bytes" and r.headers["content-length"] == str(size)
    assert r.headers["content-type"] == "video/webm"
    for banned in ("content-disposition", "last-modified", "server"):
        assert banned not in r.headers
    etag = r.headers["etag"]
    assert re.fullmatch(r'"[0-9a-f]{32}"', etag)
    r = checked(c.get(f"/media/{media_id}", headers={"Range": "bytes=100-299"}))
    assert r.status_code == 206 and r.content == data[100:300]
    assert r.headers["content-range"] == f"bytes 100-299/{size}" and r.headers["content-length"] == "200"
    r = c.get(f"/media/{media_id}", headers={"Range": "bytes=-50"})
    assert r.status_code == 206 and r.content == data[-50:]
    r = c.get(f"/media/{media_id}", headers={"Range": f"bytes={size - 10}-"})
    assert r.status_code == 206 and r.content == data[-10:]
    r = c.get(f"/media/{media_id}", headers={"Range": f"bytes={size}-"})
    assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{size}"
    r = c.get(f"/media/{media_id}", headers={"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert r.status_code == 200 and r.content == data
    r = c.get(f"/media/{media_id}", headers={"Range": "bytes=0-9", "If-Range": etag})
    assert r.status_code == 206 and r.content == data[:10]
    assert c.get(f"/media/{media_id}", headers={"If-None-Match": etag}).status_code == 304
    r = c.head(f"/media/{media_id}")
    assert r.status_code == 200 and r.headers["content-length"] == str(size) and r.content == b""
    assert c.get("/media/not-a-media-id").status_code == 404


def test_a_clip_rewritten_with_its_old_size_and_time_is_sent_again(tmp_path):
    import os
    import time

    project = make_project(tmp_path)  # its own suite: this test rewrites a clip
    app = create_app(project.db, project.suite, SECRET)
    c = logged_in(app, "alice")
    media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{tasks(c)[0]}").text).group(1)
    with AnnotationService(project.db) as svc:
        path = svc.media_path(svc.authenticate("alice", PASSWORD), media_id)
    etag = c.get(f"/media/{media_id}").headers["etag"]
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[-200:-100] = bytes(100)
    time.sleep(0.05)  # past the kernel's coarse clock tick, so the rewrite's change time differs
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # its old time put back (rsync -t, an archive)
    # Before: the ETag was size and mtime only, so the browser's copy of the old clip was confirmed (304).
    r = c.get(f"/media/{media_id}", headers={"If-None-Match": etag})
    assert r.status_code == 200 and r.content == data and r.headers["etag"] != etag
    app.state.ctx.service.close()


def test_annotators_see_only_their_own_work(app):
    alice = logged_in(app, "alice")
    eve = logged_in(app, "eve")
    assert tasks(eve) == []
    aid = tasks(alice)[0]
    html = alice.get(f"/task/{aid}").text
    media_id = re.search(r'src="/media/([^"]+)"', html).group(1)
    assert checked(eve.get(f"/task/{aid}")).status_code == 403
    assert eve.get(f"/media/{media_id}").status_code == 403
    eve_csrf = page_csrf(eve.get("/").text)
    r = eve.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"pa": 1}},
                 headers={"X-CSRF-Token": eve_csrf})
    assert r.status_code == 403
    r = eve.post(f"/task/{aid}/submit", data={**FULL, "csrf_token": eve_csrf, "base_version": "0"})
    assert r.status_code == 403
    # bob's cross-review appears only once alice submitted; her task itself stays closed to him
    bob = logged_in(app, "bob")
    assert tasks(bob) == []
    assert bob.get(f"/task/{aid}").status_code == 403
    label_item(alice, aid)
    assert len(tasks(bob, "review")) == 1
    assert bob.get(f"/task/{aid}").status_code == 403


# -- CSRF on writes, drafts, the protocol -----------------------------------------------------------------


def test_writes_without_the_csrf_token_are_refused_and_store_nothing(app):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    csrf = page_csrf(c.get(f"/task/{aid}").text)
    assert c.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"pa": 2}}).status_code == 403
    r = c.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"pa": 2}},
               headers={"X-CSRF-Token": csrf[:-2] + "zz"})
    assert r.status_code == 403
    assert c.post(f"/task/{aid}/reveal", data={**PA_PART, "base_version": "0"}).status_code == 403
    other = logged_in(app, "alice")  # the same user's other session has another token
    r = c.post(f"/task/{aid}/reveal", data={**PA_PART, "base_version": "0",
                                              "csrf_token": page_csrf(other.get("/").text)})
    assert r.status_code == 403
    html = c.get(f"/task/{aid}").text
    assert 'name="base_version" value="0"' in html and "checked" not in html


def test_an_open_page_gets_the_new_sessions_token_after_logging_in_again(app, project):
    # An open task page kept the token of a session that had ended: after logging in again (in another
    # tab) every save was refused as stale until a reload, and the reload dropped what was typed.
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    old = page_csrf(c.get(f"/task/{aid}").text)
    assert c.post("/logout", data={"csrf_token": old}).status_code == 303
    r = c.get("/api/csrf")
    assert r.status_code == 401 and r.json() == {"detail": "log in first"}
    assert login(c, "alice").status_code == 303
    draft = {"base_version": 0, "values": {"pa": "2"}}
    r = c.post(f"/api/task/{aid}/draft", json=draft, headers={"X-CSRF-Token": old})
    assert r.status_code == 403 and r.json()["field"] == "csrf_token"  # the page knows to fetch a token
    r = checked(c.get("/api/csrf"))
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    assert "access-control-allow-origin" not in r.headers
    assert r.headers["cross-origin-resource-policy"] == "same-origin"
    fresh = r.json()["csrf"]
    assert fresh != old and fresh == page_csrf(c.get("/").text)
    r = c.post(f"/api/task/{aid}/draft", json=draft, headers={"X-CSRF-Token": fresh})
    assert r.json()["version"] == 1
    # a request the browser says another site made gets no token, and is logged
    r = c.get("/api/csrf", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and "csrf" not in r.json()
    with AnnotationService(project.db) as svc:
        events = [(e.actor, e.action, e.detail) for e in svc.audit_events(svc.authenticate("root", PASSWORD))]
    assert ("alice", "csrf_rejected", {"path": "/api/csrf"}) in events


def test_draft_autosave_survives_a_closed_tab(app):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    csrf = page_csrf(c.get(f"/task/{aid}").text)

    def send(base, values):
        body = {"base_version": base, "values": values}
        return c.post(f"/api/task/{aid}/draft", json=body, headers={"X-CSRF-Token": csrf})

    typed = {"checklist.agent_consistency": "1", "evidence": "arm <b>bends</b>"}
    r = checked(send(0, {"pa": "2", **typed}))
    assert r.status_code == 200 and r.json() == {"version": 1, "status": "draft"}
    assert send(1, {"pa": "3", **typed}).json()["version"] == 2
    r = send(1, {"pa": "5"})  # built on a version that is no longer the latest
    assert r.status_code == 409
    r = send(2, {"pa": "9"})
    assert r.status_code == 422 and r.json()["field"] == "pa"
    # a new browser session (the tab was closed) shows the saved draft
    html = logged_in(app, "alice").get(f"/task/{aid}").text
    assert re.search(r'name="pa" value="3"\s+checked', html)
    assert re.search(r'name="checklist.agent_consistency" value="1"\s+checked', html)
    assert "arm &lt;b&gt;bends&lt;/b&gt;" in html and 'name="base_version" value="2"' in html


def test_a_save_reveal_or_submit_sent_again_after_it_was_stored_is_not_a_conflict(app, project):
    # its reply lost, a closing save stored after a reload, a double click: the same write on the same base
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    csrf = page_csrf(c.get(f"/task/{aid}").text)

    def send(base, values):
        return c.post(f"/api/task/{aid}/draft", json={"base_version": base, "values": values},
                      headers={"X-CSRF-Token": csrf})

    assert send(0, {"pa": "2"}).json() == {"version": 1, "status": "draft"}
    r = send(0, {"pa": "2"})
    assert r.status_code == 200 and r.json() == {"version": 1, "status": "draft"}
    assert send(0, {"pa": "3"}).status_code == 409  # other values on that base: a change elsewhere
    # a double click on "Fix PA and show the instruction", then on Submit: both posts carry the page's base
    assert post_form(c, aid, "reveal", PA_PART, base_version=1).status_code == 303
    assert post_form(c, aid, "reveal", PA_PART, base_version=1).status_code == 303
    assert post_form(c, aid, "submit", FULL, base_version=2).status_code == 303
    r = post_form(c, aid, "submit", FULL, base_version=2)
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert post_form(c, aid, "submit", {**FULL, "evidence": "other"}, base_version=2).status_code == 409
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        history = svc.history(alice, aid)
        assert [(v.version, v.status) for v in history] == [(1, "draft"), (2, "draft"), (3, "submitted")]
        # stored and audited once
        assert sum(e.action == "submitted" for e in svc.audit_events(svc.authenticate("root", PASSWORD))) == 1


def test_a_refused_submit_sent_again_gets_its_reason_again(app, project):
    # typed and pressed Submit at once (no autosave yet), then pressed again on a slow network: the first
    # refusal kept the values as a draft (version 2), and the second post still names version 1
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    assert post_form(c, aid, "reveal", PA_PART, base_version=0).status_code == 303  # version 1, IA stage
    incomplete = {**PA_PART, "ia": "3", "evidence": "typed, then Submit at once"}  # IA checklist missing
    for _ in range(2):
        r = post_form(c, aid, "submit", incomplete, base_version=1)
        assert r.status_code == 422 and "missing: checklist.agent_match" in r.text, r.status_code
    # other values on that old base are still a change made elsewhere
    assert post_form(c, aid, "submit", FULL, base_version=1).status_code == 409
    assert post_form(c, aid, "submit", FULL, base_version=2).status_code == 303
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        assert [(v.version, v.status) for v in svc.history(alice, aid)] == [
            (1, "draft"), (2, "draft"), (3, "submitted")]


def test_reveal_needs_pa_then_locks_it(app):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    r = post_form(c, aid, "reveal", {"pa": "4"})
    assert r.status_code == 422 and 'id="form-error"' in r.text and 'id="instruction"' not in r.text
    assert post_form(c, aid, "reveal", PA_PART).status_code == 303
    html = checked(c.get(f"/task/{aid}")).text
    assert 'id="instruction"' in html and 'name="ia"' in html
    assert '<input type="hidden" name="pa" value="4">' in html and 'type="radio" name="pa"' not in html
    r = post_form(c, aid, "submit", {**FULL, "pa": "1"})  # PA may not change once the instruction is seen
    assert r.status_code == 422
    r = post_form(c, aid, "submit", {k: v for k, v in FULL.items() if k != "checklist.goal_completion"})
    assert r.status_code == 422 and "goal_completion" in r.text
    assert post_form(c, aid, "submit", FULL).status_code == 303
    html = c.get(f"/task/{aid}").text
    assert 'id="submitted"' in html and "data-draft-url" not in html
    assert post_form(c, aid, "submit", FULL).status_code == 409  # once only


def test_the_keys_help_names_the_checklist_rows_the_keys_set(app, project):
    # On a label's IA stage the keys set the three editable IA rows (4-6 on screen), but the help said
    # "rows 1-3 ... (Shift: rows 4-6)", and Shift did nothing there.
    def keys_help(html):
        return re.search(r'<h3 id="rj-keys">Keys</h3>.*?<pre>(.*?)</pre>', html, re.S).group(1)

    alice, bob = logged_in(app, "alice"), logged_in(app, "bob")
    aid = tasks(alice)[0]
    said = keys_help(alice.get(f"/task/{aid}").text)
    assert "checklist rows 1-3 to 0 / 1 / 2\n" in said  # PA stage: three rows
    assert post_form(alice, aid, "reveal", PA_PART).status_code == 303
    said = keys_help(alice.get(f"/task/{aid}").text)
    assert "checklist rows 4-6 (1-3 are fixed) to 0 / 1 / 2\n" in said and "Shift: rows" not in said
    assert post_form(alice, aid, "submit", FULL).status_code == 303
    said = keys_help(checked(bob.get(f"/task/{tasks(bob, 'review')[0]}")).text)
    assert "checklist rows 1-3 to 0 / 1 / 2 (Shift: rows 4-6)" in said  # all six rows can be set


def test_free_text_takes_the_direction_of_its_own_script(app):
    # The instruction, the evidence and the notes were laid out in the page's left-to-right direction:
    # an Arabic or Hebrew instruction's full stop was drawn at its far left end (next to its first
    # word, for a reader of it). dir="auto" gives each its own text's direction.
    alice, bob = logged_in(app, "alice"), logged_in(app, "bob")
    aid = tasks(alice)[0]
    html = checked(alice.get(f"/task/{aid}")).text
    assert re.search(r'<textarea name="evidence" dir="auto"', html)
    assert post_form(alice, aid, "reveal", PA_PART).status_code == 303
    html = checked(alice.get(f"/task/{aid}")).text
    assert '<div class="rj-instruction" id="instruction" dir="auto">' in html
    for aid in tasks(alice):
        label_item(alice, aid)
    html = checked(bob.get(f"/task/{tasks(bob, 'review')[0]}")).text
    assert re.search(r'<textarea name="note" dir="auto"', html)
    assert '<td dir="auto">the cup slides at 2 s</td>' in html  # the first annotation's evidence


def test_label_review_adjudicate_flow(app, project):
    alice, bob, carol = (logged_in(app, u) for u in ("alice", "bob", "carol"))
    for aid in tasks(alice):
        label_item(alice, aid)
    reviews = tasks(bob, "review")
    assert len(reviews) == 3
    html = checked(bob.get(f"/task/{reviews[0]}")).text
    assert "first annotation (by alice" in html and "the cup slides at 2 s" in html
    assert 'type="radio" name="pa"' in html and 'type="radio" name="ia"' in html  # the reviewer rates both
    for aid in reviews:
        r = post_form(bob, aid, "submit", {**FULL, "pa": "5", "note": "PA is fine to me"})
        assert r.status_code == 303, r.text
    adjudications = tasks(carol, "adjudicate")
    assert len(adjudications) == 3
    html = checked(carol.get(f"/task/{adjudications[0]}")).text
    assert "first annotation (by alice" in html and "cross-review (by bob" in html
    assert "PA is fine to me" in html
    for aid in adjudications:
        assert post_form(carol, aid, "submit", {**FULL, "pa": "5", "note": "bob is right"}).status_code == 303
    with AnnotationService(project.db) as svc:
        root = svc.authenticate("root", PASSWORD)
        actions = [e.action for e in svc.audit_events(root, limit=1000)]
    assert actions.count("submitted") == 9


def test_multiview_and_segments(tmp_path, _cheap_passwords):
    project = make_project(tmp_path, multiview=True, segment_s=3, reviewers=False)
    app = create_app(project.db, project.suite, SECRET)
    try:
        c = logged_in(app, "alice")
        pages = [checked(c.get(f"/task/{a}")).text for a in tasks(c)]
        mv = [p for p in pages if p.count("<video") == 2]
        assert len(mv) == 1 and "front" in mv[0] and "wrist" in mv[0]
        # RoboWorM: physics clips get 3-second segments, multi-view clips one verdict for the whole video
        assert 'data-segment="0.0"' in mv[0] and "segments." not in mv[0]
        single = [p for p in pages if p.count("<video") == 1]
        assert len(single) == 3
        assert all('data-segment="3.0"' in p and 'name="segments.1"' in p for p in single)
        aid = next(a for a, p in zip(tasks(c), pages, strict=True) if p.count("<video") == 1)
        r = post_form(c, aid, "reveal", PA_PART)
        assert r.status_code == 303
        r = post_form(c, aid, "submit", {**FULL, "segments.0": "good"})
        assert r.status_code == 422 and "segments.1" in r.text
        r = post_form(c, aid, "submit", {**FULL, "segments.0": "good", "segments.1": "bad"})
        assert r.status_code == 303
    finally:
        app.state.ctx.service.close()


def test_reference_examples_are_pinned_with_their_video(tmp_path, _cheap_passwords):
    project = make_project(tmp_path, reviewers=False, example=True)
    app = create_app(project.db, project.suite, SECRET)
    try:
        c = logged_in(app, "alice")
        assert len(tasks(c)) == 2  # the pinned item is not dealt
        html = checked(c.get(f"/task/{tasks(c)[0]}")).text
        aside = html[html.index('<aside class="rj-pinned">'):]
        assert "Reference examples" in aside and "PA 2" in aside
        assert "the cup &lt;b&gt;melts&lt;/b&gt; into the table at 1 s" in aside and EXAMPLE_TEXT not in aside
        media = re.findall(r'src="/media/([^"]+)"', aside)
        assert len(media) == 1 and checked(c.get(f"/media/{media[0]}")).status_code == 200
    finally:
        app.state.ctx.service.close()


def test_training_round_feedback_page(tmp_path, _cheap_passwords):
    project = make_project(tmp_path, reviewers=False)
    create_round(project.db, "p1", "r1", ["alice", "eve"], ["item-0", "item-1"])
    scores = {"alice": [(5, 4), (2, 2)], "eve": [(1, 4), (2, 3)]}
    with AnnotationService(project.db) as svc:
        for who, pairs in scores.items():
            actor = svc.authenticate(who, PASSWORD)
            practice = [e for e in svc.queue(actor) if e.kind == "practice"]
            assert len(practice) == 2
            by_item = sorted(practice, key=lambda e: e.item_id)  # opaque, but the same for both trainees
            for entry, (pa, ia) in zip(by_item, pairs, strict=True):
                aid = entry.assignment_id
                base = {"pa": pa, **{f"checklist.{c}": 1 for c in CHECKLIST_ITEMS[:3]}}
                svc.save_draft(actor, aid, LabelValues.from_form(base), 0)
                svc.reveal_instruction(actor, aid)
                full = {**base, "ia": ia, "evidence": f"{who} <i>saw</i>",
                        **{f"checklist.{c}": 1 for c in CHECKLIST_ITEMS[3:]}}
                svc.submit(actor, aid, LabelValues.from_form(full), svc.task(actor, aid).version)
    app = create_app(project.db, project.suite, SECRET)
    try:
        alice, bob = logged_in(app, "alice"), logged_in(app, "bob")
        assert alice.get("/rounds/r1").status_code == 403  # trainees see it once the round is closed
        html = checked(bob.get("/rounds/r1")).text
        assert 'id="agreement"' in html
        close_round(project.db, "p1", "r1")
        html = checked(alice.get("/rounds/r1")).text
        # items x axes: (5,1) (4,4) (2,2) (2,3): exact 2/4, within one 3/4, mean |diff| (4+0+0+1)/4
        row = re.search(r"<tr><th>PA and IA</th>(.*?)</tr>", html, re.S).group(1)
        assert re.findall(r"<td>([^<]*)</td>", row)[:4] == ["4", "50.0%", "75.0%", "1.25"]
        assert 'id="disagreements"' in html and "&lt;i&gt;saw&lt;/i&gt;" in html
        assert '<td dir="auto">alice &lt;i&gt;saw&lt;/i&gt;</td>' in html  # evidence in its own direction
        # 75% within one is below the 80% threshold; a trainee sees only their own line, and the other
        # trainee's evidence without the name
        assert html.count("not yet") == 1 and "<th>alice</th>" in html and "<th>eve</th>" not in html
        assert "<td>another trainee</td>" in html and "<td>eve</td>" not in html
        html = checked(bob.get("/rounds/r1")).text
        assert html.count("not yet") == 2 and "<td>eve</td>" in html
        assert alice.get("/rounds/nope").status_code == 404
        assert _empty_headers(html) == []
        html = checked(alice.get("/")).text  # the practice queue, with its round column
        assert 'data-kind="practice"' in html and _empty_headers(html) == []
    finally:
        app.state.ctx.service.close()


def test_round_feedback_links_work_for_any_round_name(tmp_path, _cheap_passwords):
    # The queue wrote the name into the link as it was: "/", "?", "#" and "%" broke it (a 404).
    import httpx

    project = make_project(tmp_path, reviewers=False)
    # "/" was left as it was: a browser (and httpx) drops "." and ".." segments, so "spring/../autumn"
    # opened the round "autumn" and "v1/.." a 404
    names = ["r 1/é?x#y", "r%2F2", "<b>&", "autumn", "spring/../autumn", "v1/..", "a/./b"]
    for k, name in enumerate(names):
        create_round(project.db, "p1", name, ["alice", "eve"], [f"item-{k % 3}"])
    app = create_app(project.db, project.suite, SECRET)
    # served by uvicorn: the TestClient decodes a path twice, so "%25" would reach the app as "/"
    with running(app) as base, httpx.Client(base_url=base) as alice, httpx.Client(base_url=base) as bob:
        for c, user in ((alice, "alice"), (bob, "bob")):  # bob, a reviewer, reads open rounds
            token = form_token(c.get("/login").text)
            assert c.post("/login", data={"username": user, "password": PASSWORD, "csrf_token": token}
                          ).status_code == 303
        html = checked(alice.get("/")).text
        links = [link.replace("&amp;", "&") for link in
                 re.findall(r'<a href="(/rounds/[^"]*)">feedback</a>', html)]
        assert len(links) == len(names), links
        shown = []
        for link in links:
            r = checked(bob.get(link))
            assert r.status_code == 200, (link, r.status_code)
            shown.append(re.search(r"<h1>(.*?)</h1>", r.text, re.S).group(1).strip())
        # each link opens the round it names, and every round is reached once
        assert sorted(shown) == sorted(f"Training round {escape(n)}" for n in names), shown
    app.state.ctx.service.close()


def _empty_headers(html):
    return re.findall(r"<th[^>]*>\s*</th>", html)


def test_every_queue_column_has_a_header(app):
    # The link column's header cell was empty: a screen reader announced the links under no column
    # (axe: empty-table-header, a11y audit of 2026-12-06).
    html = checked(logged_in(app, "alice").get("/")).text
    assert "rj-open" in html and _empty_headers(html) == []


def test_model_draft_prefills_and_changes_are_recorded(app, project, tmp_path):
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text("".join(f'{{"item_id": "item-{i}", "pa": {{"label": 2}}, "ia": {{"label": 4}}}}\n'
                              for i in range(3)))
    assert import_drafts(project.db, project.name, drafts) == 3
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    html = checked(c.get(f"/task/{aid}")).text
    assert 'id="model-draft"' in html and re.search(r'name="pa" value="2"\s+checked', html)
    assert post_form(c, aid, "reveal", {**PA_PART, "pa": "2"}).status_code == 303
    html = c.get(f"/task/{aid}").text
    assert re.search(r'name="ia" value="4"\s+checked', html)  # the model's IA survives the PA save
    assert post_form(c, aid, "submit", {**FULL, "pa": "2", "ia": "5"}).status_code == 303
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        last = svc.history(alice, aid)[-1]
    assert last.status == "submitted" and dict(last.from_draft) == {"pa": True, "ia": False}


def test_audit_log_page_for_admins_only(app):
    c = client(app)
    assert login(c, "alice", "not her password").status_code == 401
    alice = logged_in(app, "alice")
    assert checked(alice.get("/audit")).status_code == 403
    assert alice.post("/logout", data={"csrf_token": "forged"}).status_code == 403
    assert 'href="/audit"' not in alice.get("/").text
    root = logged_in(app, "root")
    assert 'href="/audit"' in root.get("/").text
    html = checked(root.get("/audit")).text
    rows = re.findall(r"<tr><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td>", html)
    expected = {("root", "login"), ("alice", "login"), ("alice", "login_failed"), ("alice", "csrf_rejected")}
    assert expected <= set(rows)


@pytest.mark.parametrize("name", ["frames_ep", "ep.gif", "ep.avi", "ep.webp"])
def test_a_video_no_browser_plays_is_served_as_webm_encoded_once(tmp_path, monkeypatch, name):
    """A frame folder, and GIF, AVI and animated WebP files (a video element plays none of them), are
    served as their WebM encoding."""
    import json as _json

    from PIL import Image

    from robojudge.annotate import assign, init_project
    from robojudge.video import sample_frames, write_video

    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    ramp = np.linspace(0, 60, 30)[None, :, None] + np.zeros((24, 30, 3))
    frames = np.stack([ramp + 20 * i for i in range(9)]).astype(np.uint8)  # 30 x 24, brighter each frame
    (tmp_path / "suite").mkdir()
    if name.endswith(".webp"):
        images = [Image.fromarray(f) for f in frames]
        images[0].save(tmp_path / "suite" / name, save_all=True, append_images=images[1:], duration=1000 // 6,
                       lossless=True)
    else:
        write_video(tmp_path / "suite" / name, frames, fps=6)  # a folder: PNGs and fps.txt
    manifest = tmp_path / "suite" / "suite.jsonl"
    manifest.write_text(_json.dumps({"item_id": "ep", "video": name, "instruction": "lift the cup",
                                     "generator": "secret-gen"}) + "\n")
    db = f"sqlite:///{tmp_path / 'ann.sqlite'}"
    init_project(manifest, db, "p1", seed=1)
    add_annotator(db, "alice", "annotator", password=PASSWORD)
    assign(db, "p1", ["alice"])
    app = create_app(db, manifest, SECRET)
    try:
        c = logged_in(app, "alice")
        media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{tasks(c)[0]}").text).group(1)
        r = checked(c.get(f"/media/{media_id}"))
        assert r.status_code == 200 and r.headers["content-type"] == "video/webm"
        encoded = list((tmp_path / "cache" / "annotate-media").glob("*.webm"))
        assert len(encoded) == 1 and encoded[0].read_bytes() == r.content
        back = sample_frames(encoded[0], fps=None, max_frames=None)
        # GIF delays are whole centiseconds (17, 17, 16...): its average rate is near 6 fps, not 6
        assert back.frames.shape == frames.shape and back.source_fps == pytest.approx(6, rel=0.05)
        assert np.abs(back.frames.astype(int) - frames).mean() < 8  # lossy, but the same frames in order
        stamp = encoded[0].stat().st_mtime_ns
        assert c.get(f"/media/{media_id}", headers={"Range": "bytes=0-9"}).status_code == 206
        assert encoded[0].stat().st_mtime_ns == stamp  # served from the cache, not encoded again
    finally:
        app.state.ctx.service.close()


# -- an audit of the web app (2026-12-06) ---------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "--3", "9" * 5000, "٣"])
def test_odd_digit_strings_are_a_422_naming_the_field(app, value):
    # str.isdigit() took them and int() raised a bare ValueError: a 500 and a dropped connection
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    csrf = page_csrf(c.get(f"/task/{aid}").text)
    r = c.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"pa": value}},
               headers={"X-CSRF-Token": csrf})
    assert r.status_code == 422 and r.json()["field"] == "pa", r.text
    r = c.post(f"/api/task/{aid}/draft", json={"base_version": 0, "values": {"segments.²": "good"}},
               headers={"X-CSRF-Token": csrf})
    assert r.status_code == 422 and r.json()["field"] == "segments.²", r.text


def test_a_video_moved_away_after_init_is_a_404_saying_so(app, project):
    c = logged_in(app, "alice")
    aid = tasks(c)[0]
    media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{aid}").text).group(1)
    with AnnotationService(project.db) as svc:
        path = svc.media_path(svc.authenticate("alice", PASSWORD), media_id)
    moved = path.with_name(path.name + ".moved")
    path.rename(moved)
    try:
        r = checked(c.get(f"/media/{media_id}"))
        assert r.status_code == 404 and "missing on the server" in r.json()["detail"]
    finally:
        moved.rename(path)


@pytest.mark.parametrize("damaged", ["wrist", "front"])
def test_a_damaged_view_of_a_multiview_item_is_warned_of(tmp_path, damaged):
    # Only the main view's header was read: a truncated side view passed init and add-items without a
    # warning, and the app then switched the task off (review rev30 F5).
    import warnings

    from robojudge.annotate import UnreadableClipWarning, add_items, init_project

    suite = make_suite(tmp_path, multiview=True)
    (clip,) = (tmp_path / SECRET_DIR).glob(f"*_mv_{damaged}.webm")
    clip.write_bytes(clip.read_bytes()[:200])  # the container header, no frames
    with pytest.warns(UnreadableClipWarning, match=rf"1 item\(s\).*'item-mv' \(view '{damaged}'\)"):
        init_project(suite, f"sqlite:///{tmp_path / 'a.sqlite'}", "p1")
    rows = [json.loads(line) for line in suite.read_text().splitlines()]
    (mv,) = [r for r in rows if r["item_id"] == "item-mv"]
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows if r is not mv))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableClipWarning)  # the single-view items read fine
        init_project(suite, f"sqlite:///{tmp_path / 'b.sqlite'}", "p1")
    suite.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.warns(UnreadableClipWarning, match=rf"'item-mv' \(view '{damaged}'\)"):
        assert add_items(f"sqlite:///{tmp_path / 'b.sqlite'}", "p1") == ["item-mv"]


def test_a_clip_whose_header_cannot_be_read_is_warned_of_and_can_be_reported(tmp_path, _cheap_passwords):
    from typer.testing import CliRunner

    from robojudge.annotate import UnreadableClipWarning, init_project, project_status
    from robojudge.cli import build_app

    made = make_project(tmp_path / "made")
    (broken,) = (made.suite.parent / SECRET_DIR).glob("*_take1.webm")  # item-1's
    broken.write_bytes(broken.read_bytes()[:200])  # the container header, no frames
    with pytest.warns(UnreadableClipWarning, match=r"1 item\(s\) whose clip's header cannot.*'item-1'"):
        init_project(made.suite, f"sqlite:///{tmp_path / 'other.sqlite'}", "p2")
    res = CliRunner().invoke(build_app("annotate"), ["annotate", "init", str(made.suite), "--db",
                                                     str(tmp_path / "cli.sqlite"), "--name", "p3"])
    assert res.exit_code == 0 and "warning: " in res.output and "'item-1'" in res.output, res.output

    app = create_app(made.db, made.suite, SECRET)
    try:
        alice, eve = logged_in(app, "alice"), logged_in(app, "eve")
        aids = tasks(alice, "label")
        html = alice.get(f"/task/{aids[0]}").text
        assert 'class="rj-media-error" role="alert" hidden' in html and 'id="report-unplayable"' in html
        r = eve.post(f"/task/{aids[0]}/unplayable", data={"csrf_token": page_csrf(eve.get("/").text)})
        assert r.status_code == 403  # not eve's task
        r = alice.post(f"/task/{aids[0]}/unplayable", data={"csrf_token": page_csrf(html)})
        assert r.status_code == 303 and r.headers["location"] == "/"
        label_item(alice, aids[1])
        html = alice.get(f"/task/{aids[1]}").text
        assert 'id="report-unplayable"' not in html  # submitted: nothing to report instead
        r = alice.post(f"/task/{aids[1]}/unplayable", data={"csrf_token": page_csrf(html)})
        assert r.status_code == 409
    finally:
        app.state.ctx.service.close()
    reported = project_status(made.db, "p1").unplayable  # the manifest id of alice's first task
    assert len(reported) == 1 and reported[0] in ("item-0", "item-1", "item-2")
    res = CliRunner().invoke(build_app("annotate"), ["annotate", "status", "--db", made.db, "-p", "p1"])
    assert res.exit_code == 0, res.output
    assert f"1 item(s) reported in the app as a video that cannot be played: {reported[0]}" in res.output
    # the admin mends the file and alice labels the task: the report is cleared (it stayed listed for good)
    app = create_app(made.db, made.suite, SECRET)
    try:
        label_item(logged_in(app, "alice"), aids[0])
    finally:
        app.state.ctx.service.close()
    assert project_status(made.db, "p1").unplayable == ()
    res = CliRunner().invoke(build_app("annotate"), ["annotate", "status", "--db", made.db, "-p", "p1"])
    assert res.exit_code == 0 and "cannot be played" not in res.output, res.output


def test_a_moved_suite_is_served_from_its_new_place(tmp_path, _cheap_passwords):
    # Before, every video of a project whose suite folder moved was a 404, and serve SUITE pointed to init.
    project = make_project(tmp_path / "laptop")
    new = tmp_path / "server" / "suite" / "suite.jsonl"
    new.parent.parent.mkdir()
    (tmp_path / "laptop" / "suite").rename(new.parent)
    listed = r"'p1' \(3 items\) from .*/laptop/suite/suite.jsonl, which is not on this machine"
    with pytest.raises(NotFound, match=listed):
        create_app(project.db, new, SECRET)
    app = create_app(project.db, new, SECRET, project="p1")
    try:
        c = logged_in(app, "alice")
        for aid in tasks(c):
            media_id = re.search(r'src="/media/([^"]+)"', c.get(f"/task/{aid}").text).group(1)
            r = checked(c.get(f"/media/{media_id}"))
            svc = app.state.ctx.service
            path = svc.media_path(svc.authenticate("alice", PASSWORD), media_id)
            assert path.parent == new.parent / SECRET_DIR
            assert r.status_code == 200 and r.content == path.read_bytes()
    finally:
        app.state.ctx.service.close()
    new.write_text(new.read_text().replace("put the block 1", "put the brick 1"))  # another suite
    with pytest.raises(AnnotateError, match=r"not the suite of project 'p1' .*'item-1' field instruction"):
        create_app(project.db, new, SECRET, project="p1")


def test_a_lowered_role_stops_open_reviews_and_adjudications(app, project):
    from robojudge.annotate import update_annotator

    alice, bob = logged_in(app, "alice"), logged_in(app, "bob")
    for aid in tasks(alice):
        label_item(alice, aid)
    for aid in tasks(bob, "review"):
        assert post_form(bob, aid, "submit", FULL).status_code == 303
    carol = logged_in(app, "carol")
    adjudication = tasks(carol, "adjudicate")[0]
    assert carol.get(f"/task/{adjudication}").status_code == 200
    update_annotator(project.db, "carol", role="annotator")
    assert carol.get(f"/task/{adjudication}").status_code == 403  # it showed both assessments
    html = checked(carol.get(f"/task/{adjudication}")).text
    assert "needs the role adjudicator or admin; yours is annotator" in html
    with AnnotationService(project.db) as svc:
        carol_now = svc.authenticate("carol", PASSWORD)
        with pytest.raises(Exception, match="needs the role adjudicator"):
            svc.submit(carol_now, adjudication, LabelValues(pa=5, ia=5), 0)
    update_annotator(project.db, "carol", role="adjudicator")
    assert carol.get(f"/task/{adjudication}").status_code == 200


def test_a_new_invite_or_switching_off_ends_the_sessions_for_good(app, project):
    from robojudge.annotate import update_annotator

    c = logged_in(app, "alice")
    assert c.get("/").status_code == 200
    update_annotator(project.db, "alice", active=False)
    update_annotator(project.db, "alice", active=True)
    r = c.get("/")  # the same cookie worked again once she was switched back on
    assert r.status_code == 303 and r.headers["location"] == "/login"
    again = logged_in(app, "alice")  # a new login is a new session
    assert again.get("/").status_code == 200
    update_annotator(project.db, "alice", new_invite=True)  # a password reset
    assert again.get("/").status_code == 303


def test_parallel_wrong_passwords_are_limited_too():
    # checked before any was counted, 30 guesses sent at once all reached the password check
    import threading

    lim = LoginRateLimiter(max_failures=5, window_s=300)
    allowed: list[bool] = []
    barrier = threading.Barrier(30)

    def attempt() -> None:
        barrier.wait()
        allowed.append(lim.reserve("root", "1.2.3.4") == 0)

    threads = [threading.Thread(target=attempt) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert allowed.count(True) == 5
    lim.succeeded("root", "1.2.3.4")  # the right password clears the key
    assert lim.reserve("root", "1.2.3.4") == 0


def test_serve_neither_creates_a_database_nor_misses_a_dotted_suite_path(project, tmp_path):
    from robojudge.annotate import NotFound

    typo = tmp_path / "typo.sqlite"
    with pytest.raises(NotFound, match="does not exist"):
        create_app(f"sqlite:///{typo}", project.suite, SECRET)
    assert not typo.exists()
    dotted = project.suite.parent / ".." / project.suite.parent.name / project.suite.name
    app = create_app(project.db, dotted, SECRET)  # init stored the path with '..' folded
    app.state.ctx.service.close()


def test_the_audit_log_has_the_address_of_refusals_reveals_and_submits(app, project):
    # the service logged them without the request's address ('' on /audit), which the docs promise
    alice, eve = logged_in(app, "alice"), logged_in(app, "eve")
    aid = tasks(alice)[0]
    media_id = re.search(r'src="/media/([^"]+)"', alice.get(f"/task/{aid}").text).group(1)
    assert eve.get(f"/task/{aid}").status_code == 403
    assert eve.get(f"/media/{media_id}").status_code == 403
    label_item(alice, aid)
    with AnnotationService(project.db) as svc:
        events = svc.audit_events(svc.authenticate("root", PASSWORD), limit=1000)
    by_action: dict[str, set[str | None]] = {}
    for e in events:
        by_action.setdefault(e.action, set()).add(e.remote)
    for action in ("forbidden", "media_denied", "instruction_revealed", "submitted"):
        assert by_action.get(action) == {"testclient"}, (action, by_action.get(action))
    with AnnotationService(project.db) as svc:  # outside a request nothing is made up
        svc.record_event(None, "note", {"x": 1})
        assert svc.audit_events(svc.authenticate("root", PASSWORD), limit=5)[1].remote is None


def test_ending_sessions_compares_no_clocks(app, project, monkeypatch):
    # the first version compared the admin command's clock with the server's: with the admin's machine
    # 30 s ahead, a login right after a new invite was logged out at once
    from datetime import timedelta

    from robojudge.annotate import _db, update_annotator

    ahead = _db.now() + timedelta(seconds=30)
    monkeypatch.setattr(_db, "now", lambda: ahead)
    update_annotator(project.db, "alice", active=False)
    update_annotator(project.db, "alice", active=True)
    c = logged_in(app, "alice")
    assert c.get("/").status_code == 200
    with AnnotationService(project.db) as svc:
        assert svc.sessions_generation(svc.authenticate("alice", PASSWORD).id) == 1


def test_a_database_that_cannot_save_is_a_503_naming_no_path(app, project, monkeypatch):
    # Audit diskfull F7: a submit on a full disk was a 400 (the annotator's fault) whose page showed the
    # database's path, "sqlite:////.../ann.sqlite: database or disk is full".
    import shutil

    from _limits import file_size_limit

    c = logged_in(app, "alice")
    aid = tasks(c, "label")[0]
    assert post_form(c, aid, "reveal", PA_PART).status_code == 303
    html = c.get(f"/task/{aid}").text
    data = {**FULL, "csrf_token": page_csrf(html),
            "base_version": re.search(r'name="base_version" value="(\d+)"', html).group(1)}
    folder = project.db.removeprefix("sqlite:///").rsplit("/", 1)[0]

    def full(path):  # the disk holding the database has 4 KiB left
        return shutil._ntuple_diskusage(1 << 30, (1 << 30) - 4096, 4096)

    monkeypatch.setattr(shutil, "disk_usage", full)
    with file_size_limit(0):  # no file grows: SQLite's writes fail as on a full disk
        page = checked(c.post(f"/task/{aid}/submit", data=data))
        draft = c.post(f"/api/task/{aid}/draft", headers={"X-CSRF-Token": page_csrf(html)},
                       json={"base_version": int(data["base_version"]), "values": {**FULL, "ia": "2"}})
    assert page.status_code == 503 and page.headers["retry-after"] == "60"
    assert "the server could not save: its disk is full. What you entered on a task is kept in this " \
           "browser" in page.text
    assert draft.status_code == 503
    assert draft.json()["detail"].startswith("the server could not save: its disk is full. ")
    for text in (page.text, draft.text):
        assert folder not in text and "sqlite" not in text and "ann.sqlite" not in text
    monkeypatch.undo()
    assert c.post(f"/task/{aid}/submit", data=data).status_code == 303  # space again: the same form goes
