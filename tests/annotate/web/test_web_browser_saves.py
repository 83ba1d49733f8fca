"""Saves that go wrong, in a real browser (Debian's Chromium, as in test_web_browser.py): the work kept in
the browser when a save is refused or the session ends, a new token after logging in again, a submit that
waits for a failing save, and the player's stop points and views around seeks and pauses.

From the timing audit of 2026-12-07: a closing save refused because of the page's own save still on its
way, and an open page whose session had ended, lost what was typed last; the slider moved while playing
was pulled back to the segment left; a submit pressed while the network failed went out later by itself;
paused views of a multi-view item could show neighbouring frames.

From the review of 2026-12-07 (rev18): a copy whose save had landed (its reply lost with the page) was
offered as "not saved" after the task changed in another browser, and Restore put the older text over the
newer save; a copy kept at the PA stage, restored into the IA form, emptied the IA score, rows 4-6 and
the evidence; the copies stayed in the browser after logging out.
"""

from __future__ import annotations

import time

import pytest
import test_web_browser as browser_tests
from _web_data import FPS, PASSWORD, SECRET, copy_project, hold_first_post
from test_web_browser import VIDEOS, Watched, _open, _stored, log_in, seeked, wait_saved, wait_video

from robojudge.annotate import AnnotationService, LabelValues
from robojudge.annotate.web import create_app
from robojudge.suite._schema import CHECKLIST_ITEMS

pytestmark = pytest.mark.slow

# test_web_browser.py's fixtures: its Chromium, project templates and cheap password hashes
browser, templates, project, _cheap = (browser_tests.browser, browser_tests.templates, browser_tests.project,
                                       browser_tests._cheap)

KEPT = "Object.keys(localStorage).filter(k => k.startsWith('robojudge.unsaved.'))"
BANNER = ".rj-unsaved[role=alert]"


class Gate:
    """Answers draft saves with 502 while shut, as a proxy does when the app behind it is unreachable, and
    counts them; everything else reaches the app."""

    def __init__(self, app):
        self.app = app
        self.shut = False
        self.refused = 0

    async def __call__(self, scope, receive, send):
        if self.shut and scope["type"] == "http" and scope["path"].endswith("/draft"):
            self.refused += 1
            headers = [(b"content-type", b"text/plain")]
            await send({"type": "http.response.start", "status": 502, "headers": headers})
            await send({"type": "http.response.body", "body": b"bad gateway"})
            return
        await self.app(scope, receive, send)


def _served(browser, app):
    """``(context, base URL, watched page)``: ``app`` served, alice logged in, a 1280 x 900 window."""
    return browser_tests.served(browser, app, (1280, 900))


def _open_first(p):
    """Open the first task of the queue once its script has run (a change made before goes unsaved);
    returns its assignment id."""
    p.click("a.rj-open >> nth=0")
    p.wait_for_url("**/task/*")
    wait_video(p)
    return p.url.rsplit("/", 1)[1]


def _wait_until(condition, timeout_s=15.0, what="the condition"):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout_s} s"
        time.sleep(0.1)


def _close_while_refused(context, base, gate, aid, text):
    """Open the task, type ``text`` while every save is refused, close the tab (its closing save refused
    too), then let saves through again."""
    p = context.new_page()
    p.goto(f"{base}/task/{aid}")
    gate.shut = True
    p.fill('textarea[name="evidence"]', text)
    p.get_by_role("alert").filter(has_text="draft not saved: 502").wait_for(timeout=15_000)
    before = gate.refused
    p.close(run_before_unload=True)
    _wait_until(lambda: gate.refused > before, what="the closing save")
    gate.shut = False


def test_work_a_refused_save_lost_is_offered_back_when_the_task_opens_again(browser, project):
    gate = Gate(create_app(project.db, project.suite, SECRET))
    with _served(browser, gate) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        p.check('input[name="pa"][value="4"]')
        wait_saved(p)
        p.close()
        text = "the arm passes through the cup at 2 s"
        _close_while_refused(context, base, gate, aid, text)
        assert _stored(project, aid).evidence is None  # the server never got it
        # opened again: offered, not put back unasked
        p = context.new_page()
        p.goto(f"{base}/task/{aid}")
        banner = p.locator(BANNER)
        banner.wait_for(timeout=15_000)
        assert "Changes made in this browser at " in banner.inner_text()
        assert "were not saved" in banner.inner_text()
        assert p.input_value('textarea[name="evidence"]') == ""
        assert p.get_attribute("form.rj-label-form", "data-saved") is None
        # Restore, by keyboard: the values come back and are saved on the current version
        banner.get_by_role("button", name="Restore").focus()
        p.keyboard.press("Enter")
        assert p.input_value('textarea[name="evidence"]') == text
        assert p.is_checked('input[name="pa"][value="4"]')
        wait_saved(p)
        assert banner.count() == 0 and p.evaluate(KEPT) == []
        stored = _stored(project, aid)
        assert (stored.pa, stored.evidence) == (4, text)
        p.reload()
        wait_video(p)
        assert p.locator(BANNER).count() == 0
        p.close()
        # Discard forgets the kept copy; the server's draft stays as it was
        _close_while_refused(context, base, gate, aid, "a second thought")
        p = context.new_page()
        p.goto(f"{base}/task/{aid}")
        p.locator(BANNER).get_by_role("button", name="Discard").click()
        assert p.locator(BANNER).count() == 0 and p.evaluate(KEPT) == []
        assert p.input_value('textarea[name="evidence"]') == text
        p.reload()
        wait_video(p)
        assert p.locator(BANNER).count() == 0
    assert _stored(project, aid).evidence == text


def test_the_page_works_where_local_storage_refuses(browser, project):
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        context.add_init_script("for (const name of ['getItem', 'setItem', 'removeItem'])"
                                " Storage.prototype[name] = () => { throw new Error('storage is off'); };")
        p = w.page
        aid = _open_first(p)
        p.check('input[name="pa"][value="2"]')
        p.fill('textarea[name="evidence"]', "kept on the server only")
        wait_saved(p)
        w.clean()
    assert _stored(project, aid).evidence == "kept on the server only"


def test_a_save_refused_because_of_the_pages_own_save_is_not_called_a_change_elsewhere(browser, project):
    # The closing save of a tab switch builds on the version the save on its way will make; it arrived
    # first and was refused, and the page said "changed elsewhere: reload", though nothing had.
    held, hold_first = hold_first_post()

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        p.route("**/api/task/*/draft", hold_first)
        p.fill('textarea[name="evidence"]', "FIRST words")
        _wait_until(lambda: held or p.wait_for_timeout(100), what="the first save")
        p.fill('textarea[name="evidence"]', "FIRST words and more")
        with p.expect_response(lambda r: r.url.endswith("/draft") and r.status == 409):
            p.evaluate("""() => {
                Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});
                document.dispatchEvent(new Event('visibilitychange')); }""")
        alert = p.locator(".rj-save-error")
        _wait_until(lambda: alert.inner_text() != "" or p.wait_for_timeout(100), what="the refusal shown")
        assert "changed elsewhere" not in alert.inner_text()
        assert "kept in this browser" in alert.inner_text()
        assert p.evaluate(KEPT) != []
        held[0].continue_()  # the slow save lands: the page goes on from its version
        wait_saved(p)
        assert alert.inner_text() == "" and p.evaluate(KEPT) == []
    assert _stored(project, aid).evidence == "FIRST words and more"


def _expired(p):
    """Wait until the page's session has ended (``/api/csrf`` answers 401)."""
    status = "fetch('/api/csrf').then(r => r.status)"
    _wait_until(lambda: p.evaluate(status) == 401 or p.wait_for_timeout(250), what="the session's end")


def test_after_the_session_ends_and_a_new_login_the_open_page_saves_again(browser, project):
    # The page kept the token of the session that had ended: once logged in again (in another tab),
    # every save was refused as stale until a reload, and the reload dropped what was typed since.
    app = create_app(project.db, project.suite, SECRET, session_max_age_s=5)
    with _served(browser, app) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        p.check('input[name="pa"][value="4"]')
        wait_saved(p)
        _expired(p)
        p.fill('textarea[name="evidence"]', "typed after the session ended")
        p.get_by_role("alert").filter(has_text="log in").wait_for(timeout=15_000)
        log_in(Watched(context, base), base, "alice")  # in another tab
        wait_saved(p)  # the next retry: refused as stale, the new token fetched, sent again
        assert p.inner_text(".rj-save-error") == "" and p.evaluate(KEPT) == []
    stored = _stored(project, aid)
    assert (stored.pa, stored.evidence) == (4, "typed after the session ended")


PA_STAGE = {"pa": 4, **{f"checklist.{c}": 2 for c in CHECKLIST_ITEMS[:3]}}


def test_a_submit_after_the_session_ended_is_offered_back_after_logging_in(browser, project):
    # Submit with an ended session went to the login page, and the IA, its checklist and the evidence,
    # typed since the session ended, were gone.
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        aid = svc.queue(alice)[0].assignment_id
        svc.save_draft(alice, aid, LabelValues.from_form(PA_STAGE), 0)
        svc.reveal_instruction(alice, aid)
    app = create_app(project.db, project.suite, SECRET, session_max_age_s=5)
    with _served(browser, app) as (_context, base, w):
        p = w.page
        p.goto(f"{base}/task/{aid}")
        _expired(p)
        p.check('input[name="ia"][value="3"]')
        for c in CHECKLIST_ITEMS[3:]:
            p.check(f'input[name="checklist.{c}"][value="1"]')
        p.fill('textarea[name="evidence"]', "the cup never reaches the shelf")
        p.click("#submit")
        p.wait_for_url(f"{base}/login")
        assert _stored(project, aid).ia is None
        log_in(w, base, "alice")
        p.goto(f"{base}/task/{aid}")
        p.locator(BANNER).wait_for(timeout=15_000)
        assert not p.is_checked('input[name="ia"][value="3"]')
        p.locator(BANNER).get_by_role("button", name="Restore").click()
        wait_saved(p)
        p.keyboard.press("Control+Enter")
        p.wait_for_url(f"{base}/")
        assert p.evaluate(KEPT) == []
        # a copy left behind for a task since submitted is forgotten where the queue shows it submitted
        p.evaluate("(aid) => localStorage.setItem('robojudge.unsaved.' + aid,"
                   " JSON.stringify({version: 1, values: {}, at: Date.now()}))", aid)
        p.reload()
        assert p.evaluate(KEPT) == []
    with AnnotationService(project.db) as svc:
        task = svc.task(svc.authenticate("alice", PASSWORD), aid)
    assert task.submitted and task.current is not None
    v = task.current.values
    assert (v.pa, v.ia, v.evidence) == (4, 3, "the cup never reaches the shelf")
    assert [v.checklist[c] for c in CHECKLIST_ITEMS] == [2, 2, 2, 1, 1, 1]


def test_a_submit_waiting_for_a_save_that_fails_is_dropped_and_said(browser, project):
    # The submit waited for the autosave on its way; when that failed on the network, nothing was said,
    # and the next successful retry sent the submit by itself, with whatever the form held by then.
    held, hold_first = hold_first_post()

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (_context, _base, w):
        p = w.page
        aid = _open_first(p)
        p.route("**/api/task/*/draft", hold_first)
        for name, value in PA_STAGE.items():
            p.check(f'input[name="{name}"][value="{value}"]')
        _wait_until(lambda: held or p.wait_for_timeout(100), what="the first save")
        p.click("#reveal")  # waits for the save on its way
        held[0].abort("connectionreset")
        alert = p.get_by_role("alert").filter(has_text="not submitted")
        alert.wait_for(timeout=15_000)
        assert "press Submit again" in alert.inner_text()
        wait_saved(p)  # the 3-second retry saves the draft, and that is all
        p.wait_for_timeout(500)
        assert p.locator("#instruction").count() == 0 and p.url.endswith(f"/task/{aid}")
    with AnnotationService(project.db) as svc:
        task = svc.task(svc.authenticate("alice", PASSWORD), aid)
    assert task.stage == "pa" and task.current is not None and task.current.values.pa == 4


def test_a_submit_waiting_for_a_save_the_server_could_not_store_stays_on_the_page(browser, project):
    # A save answered 503 (the server's disk full) said "draft not saved: ..." and then sent the submit
    # waiting for it anyway, which failed the same way and left the page (audit diskfull F7).
    held, hold_first = hold_first_post()
    full = ('{"detail": "the server could not save: its disk is full. What you entered on a task is kept in '
            'this browser and offered back when you open the task again"}')

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (_context, _base, w):
        p = w.page
        aid = _open_first(p)
        p.route("**/api/task/*/draft", hold_first)
        for name, value in PA_STAGE.items():
            p.check(f'input[name="{name}"][value="{value}"]')
        _wait_until(lambda: held or p.wait_for_timeout(100), what="the first save")
        p.click("#reveal")  # waits for the save on its way
        held[0].fulfill(status=503, content_type="application/json", body=full)
        alert = p.get_by_role("alert").filter(has_text="not submitted")
        alert.wait_for(timeout=15_000)
        assert alert.inner_text() == ("not submitted: the server could not save: its disk is full; your "
                                      "changes are kept in this browser; press Submit again")
        assert p.evaluate(KEPT) == [f"robojudge.unsaved.{aid}"]
        wait_saved(p)  # the 3-second retry saves the draft, and that is all
        p.wait_for_timeout(500)
        assert p.locator("#instruction").count() == 0 and p.url.endswith(f"/task/{aid}")


def _evidence(project, aid):
    """The evidence of the task's latest version (None before the first save)."""
    with AnnotationService(project.db) as svc:
        current = svc.task(svc.authenticate("alice", PASSWORD), aid).current
    return None if current is None else current.values.evidence


def _other_browser(browser, base):
    """A second browser (its own cookies and storage) where alice is logged in: ``(context, page)``."""
    context = browser.new_context()
    w = Watched(context, base)
    log_in(w, base, "alice")
    return context, w.page


def _reopen(context, base, aid):
    """The task in a new tab of ``context``, once its script has run."""
    p = context.new_page()
    p.goto(f"{base}/task/{aid}")
    wait_video(p)
    p.wait_for_function("() => document.readyState === 'complete'")
    return p


DISCARDED = ".rj-unsaved-dropped[role=status]"


def test_a_copy_whose_save_landed_is_not_offered_once_another_browser_changed_the_task(browser, project):
    # The save reached the server but its reply never reached the page (a closing save: the tab was
    # gone), so the copy stayed. After the rater went on in another browser, the first one offered the
    # older text as "not saved", and Restore put it over the newer save.
    def reply_lost(route):
        route.fetch()  # the app stores it
        route.abort("connectionreset")

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        context.route("**/api/task/*/draft", reply_lost)
        p.fill('textarea[name="evidence"]', "typed in browser A")
        _wait_until(lambda: p.wait_for_timeout(100) or _evidence(project, aid) == "typed in browser A",
                    what="the save stored")  # waiting in the page: the route's handler runs meanwhile
        assert p.evaluate(KEPT) != []  # no reply: the copy stays
        context.unroute("**/api/task/*/draft")
        p.close()
        other, q = _other_browser(browser, base)
        q.goto(f"{base}/task/{aid}")
        wait_video(q)
        q.fill('textarea[name="evidence"]', "newer text from browser B")
        wait_saved(q)
        other.close()
        p = _reopen(context, base, aid)
        assert p.locator(BANNER).count() == 0 and p.evaluate(KEPT) == []
        assert "was discarded" in p.locator(DISCARDED).inner_text()
        assert p.input_value('textarea[name="evidence"]') == "newer text from browser B"
    assert _evidence(project, aid) == "newer text from browser B"


def test_a_copy_built_on_the_pages_own_save_that_landed_is_offered(browser, project):
    # The first save landed (its reply lost), the later edits did not: the server holds a state this page
    # sent, so what came after it is still offered back.
    first = []

    def first_lands(route):
        if not first:
            first.append(route.fetch())
        route.abort("connectionreset")

    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        aid = _open_first(p)
        context.route("**/api/task/*/draft", first_lands)
        p.fill('textarea[name="evidence"]', "first words")
        _wait_until(lambda: p.wait_for_timeout(100) or _evidence(project, aid) == "first words",
                    what="the first save stored")
        p.fill('textarea[name="evidence"]', "first words and the rest")
        p.get_by_role("alert").filter(has_text="offline").wait_for(timeout=15_000)
        p.close()
        context.unroute("**/api/task/*/draft")
        p = _reopen(context, base, aid)
        p.locator(BANNER).get_by_role("button", name="Restore").click()
        wait_saved(p)
        assert p.locator(DISCARDED).count() == 0
    assert _evidence(project, aid) == "first words and the rest"


def test_a_copy_from_the_pa_stage_is_not_offered_in_the_ia_form(browser, project):
    # The instruction was shown in another browser (which saves nothing new, so the version stayed):
    # the PA-stage copy was offered into the IA form.
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        aid = svc.queue(alice)[0].assignment_id
        svc.save_draft(alice, aid, LabelValues.from_form(PA_STAGE), 0)
    gate = Gate(create_app(project.db, project.suite, SECRET))
    with _served(browser, gate) as (context, base, _w):
        _close_while_refused(context, base, gate, aid, "PA-stage note")
        assert _evidence(project, aid) is None
        other, q = _other_browser(browser, base)
        q.goto(f"{base}/task/{aid}")
        wait_video(q)
        q.click("#reveal")
        q.wait_for_selector("#instruction")
        other.close()
        p = _reopen(context, base, aid)
        assert p.locator("#instruction").count() == 1
        assert p.locator(BANNER).count() == 0 and p.evaluate(KEPT) == []
        assert "was discarded" in p.locator(DISCARDED).inner_text()


IA_STAGE = {"ia": 2, **{f"checklist.{c}": v for c, v in zip(CHECKLIST_ITEMS[3:], (0, 1, 2), strict=True)},
            "evidence": "IA-stage evidence"}


def test_restore_leaves_alone_the_fields_the_copy_had_no_control_for(browser, project):
    # A copy holding the PA-stage fields only (as kept before the form's fields were recorded), restored
    # into the IA form, emptied the IA score and rows 4-6, and the emptied form was saved.
    with AnnotationService(project.db) as svc:
        alice = svc.authenticate("alice", PASSWORD)
        aid = svc.queue(alice)[0].assignment_id
        svc.save_draft(alice, aid, LabelValues.from_form(PA_STAGE), 0)
        svc.reveal_instruction(alice, aid)
        svc.save_draft(alice, aid, LabelValues.from_form({**PA_STAGE, **IA_STAGE}), 1)
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        p.evaluate("(aid) => localStorage.setItem('robojudge.unsaved.' + aid, JSON.stringify({version: 2,"
                   " values: {pa: '4', evidence: 'kept text'}, at: Date.now()}))", aid)
        p = _reopen(context, base, aid)
        p.locator(BANNER).get_by_role("button", name="Restore").click()
        wait_saved(p)
        assert p.input_value('textarea[name="evidence"]') == "kept text"
        assert p.is_checked('input[name="ia"][value="2"]')
    v = _stored(project, aid)
    assert (v.pa, v.ia, v.evidence) == (4, 2, "kept text")
    assert [v.checklist[c] for c in CHECKLIST_ITEMS] == [2, 2, 2, 0, 1, 2]


def test_logging_out_forgets_the_copies_kept_in_this_browser(browser, project):
    # On a shared browser, the next person could read the last rater's kept text in the browser's storage.
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (context, base, w):
        p = w.page
        _open_first(p)
        p.evaluate("localStorage.setItem('robojudge.shortcuts', 'off')")
        context.route("**/api/task/*/draft", lambda route: route.abort("connectionrefused"))
        p.fill('textarea[name="evidence"]', "a private remark")
        p.get_by_role("alert").filter(has_text="offline").wait_for(timeout=15_000)
        assert len(p.evaluate(KEPT)) == 1
        p.click("form[action='/logout'] button")
        p.wait_for_url(f"{base}/login")
        assert p.evaluate(KEPT) == []
        assert p.evaluate("localStorage.getItem('robojudge.shortcuts')") == "off"  # a preference, not work


_SLIDE = """(frame) => { const s = document.querySelector('.rj-seek'); s.value = String(frame);
  s.dispatchEvent(new Event('input', {bubbles: true})); }"""


def test_the_slider_moved_while_playing_stops_at_the_end_of_the_segment_landed_in(browser, templates,
                                                                                  tmp_path):
    project = copy_project(templates["mv"], tmp_path / "db")
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (_context, base, w):
        p = w.page
        _open(p, base, 1)  # 4 s: segments 0-3 s and 3-4 s
        # forward, into the last segment: it plays on to the end; the segment left is not prompted
        p.click(".rj-play")
        p.wait_for_function(f"() => {VIDEOS}[0].currentTime > 0.3", timeout=15_000)
        p.evaluate(_SLIDE, 35)
        p.wait_for_selector('.rj-segment[data-index="1"].rj-prompt', timeout=5_000)
        assert p.locator(".rj-segment.rj-prompt").count() == 1
        assert p.evaluate(f"{VIDEOS}[0].ended")
        # back, from the last segment into the first: it stops at the first one's end, and prompts it
        p.evaluate(f"window.rjPlayer.seekFrame({3 * FPS + 3})")
        seeked(p)
        p.click(".rj-play")
        p.wait_for_function(f"() => {VIDEOS}[0].currentTime > {3 * FPS + 5} / {FPS}", timeout=15_000)
        p.evaluate(_SLIDE, 5)
        p.wait_for_selector('.rj-segment[data-index="0"].rj-prompt', timeout=6_000)
        seeked(p)
        assert p.evaluate(f"{VIDEOS}[0].paused")
        assert p.get_attribute(".rj-player", "data-frame") == str(3 * FPS - 1)


def test_paused_views_of_a_multiview_item_show_the_same_frame(browser, templates, tmp_path):
    # Pausing stopped each view where it was; while playing, the followers may lag up to half a frame,
    # so the paused views could show neighbouring frames.
    project = copy_project(templates["mv"], tmp_path / "db")
    with _served(browser, create_app(project.db, project.suite, SECRET)) as (_context, base, w):
        p = w.page
        _open(p, base, 2)
        p.click(".rj-play")
        p.wait_for_function(f"() => {VIDEOS}[0].currentTime > 0.3", timeout=15_000)
        # the follower a little ahead (within the half frame tolerated while playing), then a pause
        p.evaluate(f"() => {{ const [a, b] = {VIDEOS}; a.currentTime = 1.28; b.currentTime = 1.31;"
                   " window.rjPlayer.pause(); }")
        p.wait_for_function(f"() => {VIDEOS}.every(v => v.paused)")
        seeked(p)
        times = p.evaluate(f"{VIDEOS}.map(v => v.currentTime)")
        assert times == [pytest.approx(1.25, abs=1e-3)] * 2, times  # both on frame 12, at its middle
        assert p.get_attribute(".rj-player", "data-frame") == "12"
