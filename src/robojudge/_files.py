"""Writing a file in one step: the name of the temporary file it is written to first."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

#: The longest file name (in bytes) of the common file systems (ext4, XFS, APFS, NTFS in UTF-16 units).
NAME_MAX = 255


def temp_beside(target: str | os.PathLike[str], suffix: str = ".tmp") -> Path:
    """A hidden, unused name in ``target``'s folder to write to before renaming onto ``target``
    (``os.replace``: same folder, same file system).

    It starts with ``target``'s name, cut so that the whole name stays within :data:`NAME_MAX` bytes:
    a target whose own name is near the limit (the scan's ``<folder>.jsonl`` of a long prompt-named
    folder) is still writable, where a name 20 bytes longer than the target's was refused.

    >>> name = temp_beside("/out/" + "é" * 126 + ".jsonl").name
    >>> len(name.encode()) <= NAME_MAX and name.startswith(".éé") and name.endswith(".tmp")
    True
    """
    path = Path(target)
    tail = f".{os.getpid()}.{secrets.token_hex(4)}{suffix}"
    room = NAME_MAX - 1 - len(tail.encode())
    head = path.name.encode()[:max(room, 0)].decode("utf-8", errors="ignore")  # a cut character is dropped
    return path.with_name(f".{head}{tail}")
