"""Session signing, CSRF token comparison and the login rate limit, without a server."""

import time

import pytest

from robojudge.annotate.web._security import LoginRateLimiter, Session, SessionCodec, new_token, tokens_match

SECRET = "s" * 32


def test_session_round_trip_and_tamper():
    codec = SessionCodec(SECRET)
    s = Session(7, "ann", "annotator", new_token(), new_token())
    value = codec.dumps(s)
    assert codec.loads(value) == s
    # flipping any character of the payload or signature breaks it
    for i in (3, len(value) // 2, len(value) - 2):
        forged = value[:i] + ("A" if value[i] != "A" else "B") + value[i + 1 :]
        assert codec.loads(forged) is None
    assert SessionCodec("t" * 32).loads(value) is None  # another server's secret
    assert codec.loads("") is None and codec.loads(None) is None and codec.loads("garbage") is None


def test_session_expires():
    codec = SessionCodec(SECRET, max_age_s=-1)  # every value is already too old
    assert codec.loads(codec.dumps(Session(1, "a", "admin", "c", "s"))) is None


def _signed_at(monkeypatch, codec, offset_s):
    """A session and a login token signed when this server's clock read ``offset_s`` from now."""
    real = time.time
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: real() + offset_s)
        return codec.dumps(Session(1, "a", "admin", "c", "s")), codec.sign_token("t")


def test_a_clock_stepped_back_a_little_keeps_the_session(monkeypatch):
    codec = SessionCodec(SECRET, max_age_s=600)
    # Signed 30 s "in the future": the server's clock was stepped back 30 s since the login.
    # Before: itsdangerous refused any negative age, and the annotator was logged out.
    session, token = _signed_at(monkeypatch, codec, 30)
    assert codec.loads(session) is not None and codec.unsign_token(token) == "t"
    session, token = _signed_at(monkeypatch, codec, 300)  # minutes ahead: refused
    assert codec.loads(session) is None and codec.unsign_token(token) is None
    session, _ = _signed_at(monkeypatch, codec, -605)  # and an old session still expires
    assert codec.loads(session) is None


def test_short_secret_refused():
    with pytest.raises(ValueError, match="16 characters"):
        SessionCodec("short")


def test_tokens_match():
    t = new_token()
    assert tokens_match(t, t)
    assert not tokens_match(t, t[:-1] + ("x" if t[-1] != "x" else "y"))
    assert not tokens_match(t, None) and not tokens_match(None, None) and not tokens_match("", "")
    assert new_token() != new_token() and len(new_token()) >= 40


def test_rate_limit_window_and_keys():
    now = [1000.0]
    lim = LoginRateLimiter(max_failures=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        assert lim.retry_after("Ann", "1.2.3.4") == 0
        lim.failed("Ann", "1.2.3.4")
    assert lim.retry_after("ann", "1.2.3.4") == pytest.approx(60)  # usernames fold case
    assert lim.retry_after("ann", "5.6.7.8") == 0  # another address is another key
    assert lim.retry_after("bob", "1.2.3.4") == 0
    now[0] += 30
    assert lim.retry_after("ann", "1.2.3.4") == pytest.approx(30)
    now[0] += 30  # the three failures leave the window together
    assert lim.retry_after("ann", "1.2.3.4") == 0
    for _ in range(3):
        lim.failed("ann", "1.2.3.4")
    assert lim.retry_after("ann", "1.2.3.4") == pytest.approx(60)
    lim.succeeded("ann", "1.2.3.4")
    assert lim.retry_after("ann", "1.2.3.4") == 0


def test_rate_limit_memory_is_bounded():
    now = [0.0]
    lim = LoginRateLimiter(max_failures=2, window_s=10, max_keys=50, clock=lambda: now[0])
    for i in range(200):
        lim.failed(f"u{i}", "ip")
        now[0] += 1
    assert len(lim._failures) <= 60
