"""A throwaway PostgreSQL server for the tests that need one.

``postgres_url`` (session scope) gives the URL of an empty database on a running server:

* If ``ROBOJUDGE_TEST_POSTGRES_URL`` is set, that server is used as it is.
* Otherwise the Debian PostgreSQL binaries (``/usr/lib/postgresql/*/bin``, else ``initdb`` on
  ``PATH``) start a private server: a fresh cluster in a temporary folder, listening on
  127.0.0.1 on a free port, with its Unix socket inside that folder. PostgreSQL refuses to run as
  root, so under root the cluster belongs to the ``postgres`` user and every command runs through
  ``runuser -u postgres --``; an ordinary user runs it as themselves. The server is stopped and the
  folder deleted when the session ends, whatever the outcome of the tests.

When no server can be had the tests are skipped, except in CI (``CI`` set and not false), where
they fail: CI must exercise PostgreSQL.

``postgres_db_url`` (function scope) gives each test its own new, empty schema in that database
(selected through the URL's ``search_path`` option) and drops it afterwards, so tests never see
each other's tables.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

ENV_URL = "ROBOJUDGE_TEST_POSTGRES_URL"
SESSION_DB = "robojudge_test"
_SERVER_USER = "postgres"
_START_TIMEOUT_S = 60


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str) -> NoReturn:
    if _in_ci():
        pytest.fail(
            f"PostgreSQL tests cannot run: {reason}. CI must run them: install Debian's postgresql "
            f"package and run the tests as root, or set {ENV_URL} to a server URL.",
            pytrace=False,
        )
    pytest.skip(f"no PostgreSQL server for the tests: {reason} (or set {ENV_URL})")


def _find_bindir() -> Path | None:
    def major(initdb: str) -> float:
        name = Path(initdb).parent.parent.name
        try:
            return float(name)
        except ValueError:
            return 0.0

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=major, reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(on_path)
    for initdb in candidates:
        bindir = Path(initdb).parent
        if (bindir / "pg_ctl").is_file():
            return bindir
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _admin_connect(url: str):  # type: ignore[no-untyped-def]
    """An autocommit psycopg connection for CREATE/DROP DATABASE."""
    import psycopg
    from sqlalchemy.engine import make_url

    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    return psycopg.connect(conninfo, autocommit=True, connect_timeout=15)


def _with_search_path(url: str, schema: str) -> str:
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    query = dict(parsed.query)
    query["options"] = f"-csearch_path={schema}"
    return parsed.set(query=query).render_as_string(hide_password=False)


class LocalPostgres:
    """One private PostgreSQL cluster: ``start()`` it, use ``url``, ``stop()`` it (idempotent)."""

    def __init__(self, bindir: Path, run_as: str | None) -> None:
        self.bindir = bindir
        self.run_as = run_as
        self.root: Path | None = None
        self.port = 0

    @property
    def datadir(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{SESSION_DB}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", self.run_as, "--"] if self.run_as else []
        env = dict(os.environ, LC_ALL="C", LANG="C")
        env.pop("PGDATA", None)
        return subprocess.run(
            [*prefix, *args],
            cwd=self.root,
            env=env,
            check=check,
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT_S + 30,
        )

    def start(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="rj-pg-"))
        if self.run_as:
            user = pwd.getpwnam(self.run_as)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run(
            str(self.bindir / "initdb"),
            "-D", str(self.datadir),
            "-A", "trust",
            "-U", "postgres",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip
        last_error = ""
        for _attempt in range(3):  # the free port may be taken between probing and binding
            self.port = _free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
            )
            proc = self._run(
                str(self.bindir / "pg_ctl"),
                "-D", str(self.datadir),
                "-l", str(self.root / "server.log"),
                "-o", options,
                "-w", "-t", str(_START_TIMEOUT_S),
                "start",
                check=False,
            )  # fmt: skip
            if proc.returncode == 0:
                break
            last_error = self._log_tail() or proc.stderr or proc.stdout
            self._force_stop()
        else:
            raise RuntimeError(f"PostgreSQL did not start: {last_error}")
        with _admin_connect(self.url.replace(f"/{SESSION_DB}", "/postgres")) as conn:
            conn.execute(f'CREATE DATABASE "{SESSION_DB}"')

    def _log_tail(self) -> str:
        assert self.root is not None
        log = self.root / "server.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    def _postmaster_pid(self) -> int | None:
        pidfile = self.datadir / "postmaster.pid"
        try:
            return int(pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _force_stop(self) -> None:
        """Stop whatever server runs on the data folder: fast, then immediate, then SIGKILL."""
        if self.root is None or not self.datadir.exists():
            return
        for mode in ("fast", "immediate"):
            proc = self._run(
                str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "-t", "30", "stop",
                check=False,
            )  # fmt: skip
            if proc.returncode == 0 or self._postmaster_pid() is None:
                return
        pid = self._postmaster_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # its backends exit when they see the postmaster gone
            time.sleep(0.5)

    def stop(self) -> None:
        if self.root is None:
            return
        try:
            self._force_stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


def _local_server() -> LocalPostgres:
    bindir = _find_bindir()
    if bindir is None:
        _unavailable("PostgreSQL binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin or PATH")
    run_as: str | None = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(_SERVER_USER)
        except KeyError:
            _unavailable(f"running as root but there is no {_SERVER_USER!r} user to own the server")
        if shutil.which("runuser") is None:
            _unavailable("running as root but runuser is not installed")
        run_as = _SERVER_USER
    return LocalPostgres(bindir, run_as)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL (``postgresql+psycopg://...``) of an empty database on a running PostgreSQL server."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("the psycopg package is not installed (pip install '.[postgres]' in a robojudge "
                     "checkout)")
    external = os.environ.get(ENV_URL, "").strip()
    if external:
        yield external
        return
    server = _local_server()
    atexit.register(server.stop)  # backstop should the session end without fixture teardown
    try:
        try:
            server.start()
        except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
            detail = getattr(exc, "stderr", None) or exc
            _unavailable(f"could not start a local PostgreSQL server: {detail}")
        yield server.url
    finally:
        server.stop()
        atexit.unregister(server.stop)


@pytest.fixture
def postgres_db_url(postgres_url: str) -> Iterator[str]:
    """URL of an empty schema of its own for this test, on the ``postgres_url`` database.

    The schema is made the connection's ``search_path`` through the URL (``?options=...``), so
    anything connecting with this URL sees only this test's tables. A schema costs milliseconds
    where a new database costs about a third of a second. It is dropped after the test.
    """
    name = f"rj_test_{uuid.uuid4().hex[:12]}"
    with _admin_connect(postgres_url) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    try:
        yield _with_search_path(postgres_url, name)
    finally:
        with _admin_connect(postgres_url) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def icu_db_url(postgres_url: str) -> Iterator[str]:
    """A new database whose text sorts by ICU's en-US collation (the tests' server is made with C): for
    tests of an order that must not follow the database's collation."""
    import psycopg  # (postgres_url has checked it is installed)
    from sqlalchemy.engine import make_url

    name = f"rj_icu_{uuid.uuid4().hex[:12]}"
    with _admin_connect(postgres_url) as conn:
        try:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")
        except psycopg.Error as exc:  # a server before PostgreSQL 15, or built without ICU
            pytest.skip(f"this PostgreSQL server cannot make an ICU database: {exc}")
    try:
        yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with _admin_connect(postgres_url) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
