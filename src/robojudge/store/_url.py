"""Turning what the user typed after ``--db`` into a SQLAlchemy URL, and hiding passwords."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from robojudge.store._errors import StoreError

SUPPORTED_BACKENDS = ("sqlite", "postgresql")
# A URL's password runs to the last @ of the text around it: an @ left unencoded in the password
# (make_url ends it at the first) would otherwise show the rest of it. The user name may hold @ too. An
# @ in a query makes more of the URL hidden, never less.
_PASSWORD_IN_URL = re.compile(r"(://[^:/\s]*:)(\S*)@")
# A query or connection-string key holding "password" (password=, sslpassword=), quoted or not.
_PASSWORD_KEY = re.compile(r"([\w.-]*password[\w.-]*=)('[^']*'|[^&\s]*)", re.IGNORECASE)


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """The URL of the SQLite file at ``path``, escaped so that it names that file whatever characters
    the path holds: pasted in as it is, a ``%20`` in a folder name was decoded (the store went to a
    folder beside it) and a ``?`` began the URL's query (two run folders shared one file).

    >>> sqlite_url("/runs/exp%20a/what?/results.sqlite")
    'sqlite:////runs/exp%2520a/what%3F/results.sqlite'
    >>> parse_url(sqlite_url("/runs/exp%20a/what?/results.sqlite")).database
    '/runs/exp%20a/what?/results.sqlite'
    """
    return URL.create("sqlite", database=os.fspath(path)).render_as_string()


def default_db_url(run_dir: Path) -> str:
    """The SQLite database a run uses when no ``--db`` is given.

    Args:
        run_dir: The run folder.

    Returns:
        ``sqlite:///<absolute run_dir>/results.sqlite``, escaped (:func:`sqlite_url`).
    """
    return sqlite_url(Path(run_dir).expanduser().absolute() / "results.sqlite")


def mask_text(text: str) -> str:
    """Replace with ``***`` the password of any URL written inside ``text`` and the value of any
    ``password=`` (``sslpassword=`` ...) setting.

    >>> mask_text("cannot open postgresql://rj:p@ss@db/x?sslpassword=k3y&sslmode=require: refused")
    'cannot open postgresql://rj:***@db/x?sslpassword=***&sslmode=require: refused'
    """
    return _PASSWORD_KEY.sub(r"\1***", _PASSWORD_IN_URL.sub(r"\1***@", text))


def display_url(url: URL) -> str:
    """The URL as it may be shown to users and written to logs (password hidden).

    SQLite URLs show the file path as it is, without URL escaping, where that text reads back as the
    same file; a path holding ``%``, ``?`` or ``#`` is shown escaped, because the text is also what
    ``ResultStore.url`` and the ``db_url`` of a run hand back to be opened again (pasted as it is, it
    named another file). Other URLs show their password as ``***``, given after the user name or as a
    query setting (``?password=``, ``?sslpassword=``): such a store is opened again with the URL first
    given, not with this text.
    """
    if url.get_backend_name() == "sqlite" and url.database and not url.query:
        plain = f"{url.drivername}:///{url.database}"
        if make_url(plain).database == url.database:
            return plain
    return _PASSWORD_KEY.sub(r"\1***", url.render_as_string(hide_password=True))


def parse_url(url: str | os.PathLike[str]) -> URL:
    """Parse a database URL or a plain file path.

    A value without ``://`` is a filesystem path and means SQLite at that path; an existing folder is
    a run folder and means its ``results.sqlite`` (as :func:`default_db_url`). A bare
    ``postgresql://`` (or ``postgres://``) URL gets the psycopg 3 driver, the one robojudge ships.

    Args:
        url: A SQLAlchemy URL or a path.

    Returns:
        The parsed URL.

    Raises:
        StoreError: The text is not a URL (an @ left unencoded in the password included), or names a
            backend other than SQLite or PostgreSQL.
    """
    if isinstance(url, os.PathLike) or "://" not in url:
        raw = os.fspath(url)
        if not str(raw).strip():
            raise StoreError("no database given: pass a SQLAlchemy URL or a file path")
        path = Path(raw).expanduser().absolute()
        if path.is_dir():  # a run folder: no SQLite file can be a folder
            path = path / "results.sqlite"
        return URL.create("sqlite", database=str(path))
    # make_url ends the password at its first @: the rest of it became the host, or a port it could not
    # read (whose text, quoted in the error, is the password's).
    unencoded_at = "write @ in the password as %40"
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        userinfo = _PASSWORD_IN_URL.search(url)
        why = unencoded_at if userinfo and "@" in userinfo.group(2) else mask_text(str(exc))
        raise StoreError(f"not a database URL: {mask_text(url)} ({why})") from None
    if parsed.host and "@" in parsed.host:
        raise StoreError(f"not a database URL: {mask_text(url)} (an @ in the host: {unencoded_at})")
    # A / or ? after the password's @ ended the host there: the rest of the password became the host,
    # and the database name or the query (which would be shown, and looked up). A later @ is taken for
    # one of the password's, though it may be in the database name or a query value (written %40 too):
    # which of them holds it cannot be told, so the message names all three.
    userinfo = _PASSWORD_IN_URL.search(url)
    if parsed.password is not None and userinfo and "@" in userinfo.group(2):
        raise StoreError(f"not a database URL: {mask_text(url)} (an @ after the host: it may be in the "
                         "password, the database name or the query; write each @ there as %40)")
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    backend = parsed.get_backend_name()
    if backend not in SUPPORTED_BACKENDS:
        raise StoreError(
            f"unsupported database {display_url(parsed)}: robojudge stores results in SQLite or PostgreSQL "
            "(sqlite:///FILE or postgresql+psycopg://USER@HOST/DB)"
        )
    return parsed
