"""The browser audit of 2026-12-07 (annoweb2), in a real browser (Debian's Chromium, as in
test_web_browser.py): Back after a logout showed the last task from the browser's cache; a save whose reply
was lost was called a change made elsewhere and stalled the page; a double click on a slow network landed on
a 409 page; a video that cannot play left a blank player whose labels were exported as real ones.
"""

from __future__ import annotations

import pytest
import test_web_browser as browser_tests
from _web_data import SECRET
from test_web_browser import log_in, wait_saved
from test_web_browser_saves import _evidence, _open_first, _served

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
