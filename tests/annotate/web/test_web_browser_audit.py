"""The browser audit of 2026-12-07 (annoweb2), in a real browser (Debian's Chromium, as in
test_web_browser.py): Back after a logout showed the last task from the browser's cache; a save whose reply
was lost was called a change made elsewhere and stalled the page; a double click on a slow network landed on
a 409 page; a video that cannot play left a blank player whose labels were exported as real ones.
"""

from __future__ import annotations

import asyncio

import pytest
import test_web_browser as browser_tests
from _web_data import PASSWORD, SECRET, SECRET_DIR, make_project
from test_web_browser import log_in, wait_saved, wait_video
from test_web_browser_saves import _evidence, _open_first, _served, _wait_until

from robojudge.annotate import AnnotationService, LabelValues, project_status
from robojudge.annotate.web import create_app

pytestmark = pytest.mark.slow

browser, templates, project, _cheap = (browser_tests.browser, browser_tests.templates, browser_tests.project,
                                       browser_tests._cheap)


def _fix_pa(p):
    p.focus("body")
    for key in "4qaz":
        p.keyboard.press(key)
    wait_saved(p)
    p.click("#reveal")
    p.wait_for_selector("#instruction")


def test_back_after_logging_out_shows_no_task(browser, project):
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        _fix_pa(p)
        p.fill('textarea[name="evidence"]', "PRIVATE EVIDENCE TEXT")
        wait_saved(p)
        p.goto(f"{base}/")
        p.click("form.rj-logout button")
        p.wait_for_url(f"{base}/login")
        for _ in range(2):
            p.go_back()
            p.wait_for_load_state()
            p.wait_for_timeout(300)
            assert p.locator("#instruction").count() == 0, p.url
            assert "PRIVATE EVIDENCE TEXT" not in p.content(), p.url
        log_in(w, base, "alice")  # the work itself is on the server
    assert _evidence(project, aid) == "PRIVATE EVIDENCE TEXT"


def test_a_save_whose_reply_was_lost_is_not_called_a_change_elsewhere(browser, project):
    # The save is stored, its reply never comes; the page sends the same state again on the same base.
    lost = []

    def reply_lost(route):
        if route.request.method == "POST" and not lost:
            lost.append(route.fetch().status)  # the app stores it
            route.abort("connectionreset")
        else:
            route.continue_()

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        p.route("**/api/task/*/draft", reply_lost)
        p.fill('textarea[name="evidence"]', "typed once")
        _wait_until(lambda: p.wait_for_timeout(100) or lost, what="the first save")
        assert lost == [200]
        wait_saved(p)  # the retry (every 3 s) is answered with the stored version
        alert = p.locator(".rj-save-error").inner_text()
        assert "changed elsewhere" not in alert, alert
        p.fill('textarea[name="evidence"]', "typed twice")
        wait_saved(p)
        assert p.locator(".rj-save-error").inner_text() == ""
    assert _evidence(project, aid) == "typed twice"


def test_a_change_elsewhere_says_the_pages_text_will_not_be_offered_back(browser, project):
    # The refusal said "your changes are kept in this browser and offered back"; reloaded as it advised,
    # the page dropped them (the other save is newer) and the evidence typed was gone.
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        with AnnotationService(project.db) as svc:  # another browser saves first
            svc.save_draft(svc.authenticate("alice", PASSWORD), aid, LabelValues(pa=2), 0)
        p.fill('textarea[name="evidence"]', "typed in the stale tab")
        live = p.get_by_role("alert").filter(has_text="changed elsewhere")
        live.wait_for(timeout=15_000)
        said = live.inner_text()
        assert "will not be offered back" in said and "copy any text" in said and "reload" in said
        p.reload()
        wait_video(p)
        assert p.locator(".rj-unsaved").count() == 0  # as it said
        assert p.input_value('textarea[name="evidence"]') == ""


class SlowForms:
    """Answers the reveal and submit posts a second late, as a slow network does."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        forms = ("/reveal", "/submit")
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"].endswith(forms):
            await asyncio.sleep(1.0)
        await self.app(scope, receive, send)


def _click_twice(p, button):
    """Two clicks 0.4 s apart, the page still waiting for the first post's reply."""
    p.evaluate("""(sel) => { const b = document.querySelector(sel);
        setTimeout(() => b.click(), 0); setTimeout(() => b.click(), 400); }""", button)


def test_a_double_click_on_a_slow_network_lands_on_the_next_page(browser, project):
    with _served(browser, SlowForms(create_app(project.db, project.suite, SECRET))) as (context, base, w):
        p = w.page
        _open_first(p)
        p.focus("body")
        for key in "4qaz":
            p.keyboard.press(key)
        _click_twice(p, "#reveal")
        p.wait_for_selector("#instruction", timeout=15_000)
        wait_video(p)
        p.focus("body")
        for key in "3qaz":
            p.keyboard.press(key)
        wait_saved(p)
        _click_twice(p, "#submit")
        p.wait_for_url(f"{base}/", timeout=15_000)
        p.wait_for_timeout(1_500)  # a second post would land now
        assert p.url == f"{base}/" and p.locator("h1").inner_text() == "Your queue"
        w.clean()


def test_a_video_that_cannot_play_says_so_and_can_be_reported_instead_of_labelled(browser, tmp_path):
    # A truncated clip left a blank player reading "frame 0 / 74", and the labels given on it were
    # exported as real ones.
    made = make_project(tmp_path)
    for clip in (made.suite.parent / SECRET_DIR).glob("*.webm"):
        clip.write_bytes(clip.read_bytes()[:200])  # the container header, no frames
    with _served(browser, create_app(made.db, made.suite, SECRET)) as (context, base, w):
        p = w.page
        p.click("a.rj-open >> nth=0")
        p.wait_for_url("**/task/*")
        aid = p.url.rsplit("/", 1)[1]
        alert = p.locator(".rj-media-error[role=alert]")
        alert.wait_for(state="visible", timeout=15_000)
        assert "cannot be played" in alert.inner_text()
        assert p.locator("#reveal").is_disabled() and p.locator('input[name="pa"]').first.is_disabled()
        p.focus("body")
        p.keyboard.press("4")
        p.keyboard.press("Control+Enter")
        p.wait_for_timeout(500)
        assert p.url.endswith(f"/task/{aid}") and p.locator('input[name="pa"]:checked').count() == 0
        p.click("#report-unplayable")
        p.wait_for_url(f"{base}/")
    status = project_status(made.db, made.name)
    assert len(status.unplayable) == 1 and status.by_kind["label"]["submitted"] == 0
    with AnnotationService(made.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        assert svc.task(alice, aid).version == 0  # nothing saved from the switched-off form
