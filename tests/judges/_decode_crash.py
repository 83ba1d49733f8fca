"""A planted decoder crash for the judge tests: a ``sitecustomize`` module that makes ``av.open`` segfault
on any file whose name starts with ``crash``, in every Python process started with its folder on
``PYTHONPATH`` (decoder processes and Ray workers included)."""

from __future__ import annotations

import textwrap
from pathlib import Path

SITECUSTOMIZE = textwrap.dedent("""
    import ctypes
    import os

    import av

    _open = av.open

    def _open_or_crash(file, *args, **kwargs):
        if os.path.basename(str(file)).startswith("crash"):
            ctypes.string_at(0)  # a real segfault, as a broken native decoder gives
        return _open(file, *args, **kwargs)

    av.open = _open_or_crash
""")


def plant(folder: Path) -> Path:
    """``folder`` (made if missing) holding the ``sitecustomize`` module; put it on ``PYTHONPATH``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder
