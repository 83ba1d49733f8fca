"""The annotation web app (``robojudge annotate serve``): server-rendered pages over the annotation service.

FastAPI, Jinja2 and itsdangerous come with the ``web`` extra and load only when :func:`create_app`
is called, so importing this package costs nothing. docs/annotation.md ("Web app") describes the
pages, the security measures and the keyboard shortcuts.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["create_app", "serve"]

WEB_EXTRA_HINT = "the annotation web app needs the web extra: pip install 'robojudge[web]'"


def _require_web() -> None:
    try:
        import fastapi  # noqa: F401
        import itsdangerous  # noqa: F401
        import jinja2  # noqa: F401
        import python_multipart  # noqa: F401  (form posts)
    except ImportError as exc:
        raise RuntimeError(f"{WEB_EXTRA_HINT} ({exc.name} is missing)") from exc


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

    app = create_app(db_url, suite_root, secret, **options)
    try:
        uvicorn.run(app, host=host, port=port, server_header=False, log_level="info", proxy_headers=False)
    finally:
        app.state.ctx.service.close()
