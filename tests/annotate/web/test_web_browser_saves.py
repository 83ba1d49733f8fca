"""Timing in a real browser (Debian's Chromium, as in test_web_browser.py): the player's stop points and
views around seeks and pauses.

From the timing audit of 2026-12-07: the slider moved while playing was pulled back to the segment left;
paused views of a multi-view item could show neighbouring frames.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import test_web_browser as browser_tests
from _web_data import FPS, SECRET, copy_project, running
from test_web_browser import VIDEOS, Watched, _open, log_in, seeked

from robojudge.annotate.web import create_app

pytestmark = pytest.mark.slow

# test_web_browser.py's fixtures: its Chromium, project templates and cheap password hashes
browser, templates, project, _cheap = (browser_tests.browser, browser_tests.templates, browser_tests.project,
                                       browser_tests._cheap)


@contextmanager
def _served(browser, app, viewport=(1280, 900)):
    """``(context, base URL, watched page)``: ``app`` served, alice logged in."""
    with running(app) as base:
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        try:
            w = Watched(context, base)
            log_in(w, base, "alice")
            yield context, base, w
        finally:
            context.close()


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
