"""Resource limits for the tests of writes that fail half-way and of too many open files.

``RLIMIT_FSIZE`` makes a write that would take a file past N bytes write what fits and fail with EFBIG,
as a full disk fails with ENOSPC: from ``write()``, naming no file (Python ignores SIGXFSZ, which would
otherwise end the process). A limit applies to the whole process: the tests set one around a single call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")  # (POSIX only)


@contextmanager
def file_size_limit(n: int) -> Iterator[None]:
    """No file of this process grows past ``n`` bytes while the block runs."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (n, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def limited(kind: str, n: int) -> Callable[[], None]:
    """A ``preexec_fn`` that starts a subprocess with the soft limit ``kind`` (``"fsize"``: bytes a file
    may hold; ``"nofile"``: open files) at ``n``."""
    which = {"fsize": resource.RLIMIT_FSIZE, "nofile": resource.RLIMIT_NOFILE}[kind]

    def set_limit() -> None:
        resource.setrlimit(which, (n, resource.getrlimit(which)[1]))

    return set_limit


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too), by its path in it, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
