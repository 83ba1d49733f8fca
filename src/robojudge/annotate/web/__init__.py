"""The annotation web app (``robojudge annotate serve``): server-rendered pages over the annotation service.

FastAPI, Jinja2 and itsdangerous come with the ``web`` extra and load only when :func:`create_app`
is called, so importing this package costs nothing. docs/annotation.md ("Web app") describes the
pages, the security measures and the keyboard shortcuts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from robojudge.annotate.web._folders import MediaCache

__all__ = ["create_app", "is_loopback", "load_secret", "media_cache", "serve"]

WEB_EXTRA_HINT = "the annotation web app needs the web extra: pip install '.[web]' in a robojudge checkout"


def _require_web() -> None:
    try:
        import fastapi  # noqa: F401
        import itsdangerous  # noqa: F401
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401  (form posts)
    except ImportError as exc:
        raise RuntimeError(f"{WEB_EXTRA_HINT} ({exc.name} is missing)") from exc


def load_secret(path: str | os.PathLike[str] | None) -> str:
    """The session-signing secret: read from ``path``, written there first if missing, random if no path.

    Raises:
        ValueError: The file holds fewer than 16 characters.
    """
    import secrets
    from pathlib import Path

    if path is None:
        return secrets.token_urlsafe(32)
    file = Path(path).expanduser()
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
    secret = file.read_text(encoding="utf-8").strip()
    if len(secret) < 16:
        raise ValueError(f"{file}: the session secret must be at least 16 characters long")
    return secret


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def create_app(db_url: str | os.PathLike[str], suite_root: str | os.PathLike[str] | None, secret: str,
               **options: Any) -> FastAPI:
    """Build the web app for the project created from ``suite_root`` (see ``_app.create_app``)."""
    _require_web()
    from robojudge.annotate.web._app import create_app as build

    return build(db_url, suite_root, secret, **options)


def serve(db_url: str | os.PathLike[str], suite_root: str | os.PathLike[str] | None, secret: str, *,
          host: str = "127.0.0.1", port: int = 8080, **options: Any) -> None:
    """Run the web app with uvicorn until interrupted (one process; the service is thread-safe)."""
    _require_web()
    import uvicorn

    from robojudge.annotate.web._folders import remove_left_behind

    app = create_app(db_url, suite_root, secret, **options)
    remove_left_behind()  # what encodes stopped by a killed server left
    try:
        # Idle connections live 30 s, not uvicorn's 5: a busy server (argon2 at a login rush) can take
        # longer than 5 s to read a client's next request, and then closes a connection the client is
        # already reusing.
        uvicorn.run(app, host=host, port=port, server_header=False, log_level="info", proxy_headers=False,
                    timeout_keep_alive=30)
    finally:
        app.state.ctx.service.close()


def media_cache(cache_dir: Path | None = None, *, clean: bool = False) -> MediaCache:
    """What the app's WebM cache holds and which of its encodings no video gives any more; with ``clean``,
    those removed (see ``_folders.media_cache``; needs no web extra)."""
    from robojudge.annotate.web._folders import media_cache as look

    return look(cache_dir, clean=clean)
