"""Password hashing with argon2id (argon2-cffi, part of the ``web`` extra, imported when first used)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from argon2 import PasswordHasher

MIN_PASSWORD_LENGTH = 8


@cache
def _hasher() -> PasswordHasher:
    try:
        from argon2 import PasswordHasher
    except ImportError:
        raise RuntimeError("annotator passwords need argon2-cffi: pip install '.[web]' in a robojudge "
                           "checkout") from None
    return PasswordHasher()


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (salted; the string holds the parameters).

    Raises:
        ValueError: The password is shorter than :data:`MIN_PASSWORD_LENGTH` characters.
    """
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    return _hasher().hash(password)


def verify_password(stored: str, password: str) -> bool:
    """Whether ``password`` matches the ``stored`` hash; a malformed hash never matches."""
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

    try:
        return bool(_hasher().verify(stored, password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """True when ``stored`` was made with weaker parameters than the current defaults."""
    return bool(_hasher().check_needs_rehash(stored))


@cache
def dummy_hash() -> str:
    """A hash checked for unknown usernames, so that a login takes as long whether or not the user exists."""
    return _hasher().hash("not-a-real-password")
