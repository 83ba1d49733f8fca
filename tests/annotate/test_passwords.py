"""argon2id hashing with the library's defaults, and the upgrade of weaker hashes at login."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher

from robojudge.annotate import AnnotationService, _passwords, add_annotator
from robojudge.annotate import _schema as s


def test_real_defaults_hash_and_verify(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real hasher, not the suite's cheap one
    stored = _passwords.hash_password("a long passphrase")
    assert stored.startswith("$argon2id$") and "m=65536,t=3,p=4" in stored
    assert _passwords.verify_password(stored, "a long passphrase")
    assert not _passwords.verify_password(stored, "a long passphrasE")
    assert not _passwords.verify_password("not a hash", "a long passphrase")
    assert not _passwords.needs_rehash(stored)
    with pytest.raises(ValueError, match="at least 8"):
        _passwords.hash_password("short")


def test_login_upgrades_a_weak_hash(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    db = f"sqlite:///{tmp_path}/a.sqlite"
    add_annotator(db, "old", password="old password")  # made with the cheap test parameters
    stronger = PasswordHasher(time_cost=2, memory_cost=2048, parallelism=1)
    monkeypatch.setattr(_passwords, "_hasher", lambda: stronger)
    with AnnotationService(db) as svc:
        assert svc.authenticate("old", "old password") is not None
        with svc.db.read() as conn:
            stored = conn.execute(s.annotators.select()).one().password_hash
        assert "m=2048,t=2,p=1" in stored
        assert svc.authenticate("old", "old password") is not None


def test_without_argon2_the_message_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    import sys

    monkeypatch.undo()
    _passwords._hasher.cache_clear()
    monkeypatch.setitem(sys.modules, "argon2", None)  # as if argon2-cffi were not installed
    try:
        with pytest.raises(RuntimeError, match=r"pip install '\.\[web\]' in a robojudge checkout"):
            add_annotator(f"sqlite:///{tmp_path}/a.sqlite", "x", password="long enough")
        # Invites need no hashing: the core install can still set a project up.
        assert add_annotator(f"sqlite:///{tmp_path}/a.sqlite", "y").token
    finally:
        _passwords._hasher.cache_clear()


def test_deactivated_and_reinvited(tmp_path: object) -> None:
    from robojudge.annotate import NotFound, update_annotator

    db = f"sqlite:///{tmp_path}/a.sqlite"
    add_annotator(db, "eve", password="old password")
    with AnnotationService(db) as svc:
        eve = svc.authenticate("eve", "old password")
        assert eve is not None
        update_annotator(db, "eve", active=False)
        assert svc.authenticate("eve", "old password") is None
        with pytest.raises(NotFound):
            svc.annotator(eve.id)  # an open session stops working
        invite = update_annotator(db, "eve", active=True, new_invite=True, role="reviewer")
        assert invite.token and invite.role == "reviewer"
        assert svc.authenticate("eve", "old password") is None  # the old password is gone
        assert svc.accept_invite(invite.token, "new password").role == "reviewer"
        assert svc.authenticate("eve", "new password") is not None
