"""Writing files in one step: each is written under a temporary name beside it, then renamed onto it.

A file written in place and stopped half-way (a full disk, a size limit, a kill) stays under its final
name cut short, and looks whole to whatever reads it next. Written beside it and renamed once complete,
it is always either the old file or the whole new one. :func:`replacing` does so for a set of files that
belong together (a report's page and its tables), renaming them only once every one is written.

Tables given as input are read whole, once (:func:`read_input`), so a pipe works as a file does.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


def read_input(path: str | os.PathLike[str]) -> bytes:
    """The whole content of an input file, read once: ``-`` is standard input, and a pipe, ``<(...)``
    or ``/dev/stdin`` can be read only once (a second open finds it drained).

    Raises:
        OSError: As :meth:`pathlib.Path.read_bytes` raises it.
    """
    if str(path) == "-":
        return sys.stdin.buffer.read()
    return Path(path).read_bytes()


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


class Staged:
    """The files of one :func:`replacing` block: where each is being written, in the order given."""

    def __init__(self) -> None:
        self._plan: list[tuple[Path, Path | None]] = []  # (target, its temporary file; None: remove it)
        self._last: Path | None = None

    def path(self, target: str | os.PathLike[str]) -> Path:
        """A new temporary name beside ``target`` (its folder created) for code that writes the file
        itself; it is renamed onto ``target`` when the block ends."""
        final = Path(target)
        if final.is_symlink():  # the file it points to is replaced, and the link kept
            final = Path(os.path.realpath(final))
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_beside(final)
        self._plan.append((final, tmp))
        self._last = final
        return tmp

    def open(self, target: str | os.PathLike[str], newline: str | None = None) -> TextIO:
        """``target``'s temporary file, open for UTF-8 text; close it inside the block."""
        return open(self.path(target), "x", encoding="utf-8", newline=newline)

    def write_text(self, target: str | os.PathLike[str], text: str) -> Path:
        """Write ``text`` (UTF-8) for ``target``; returns ``target``."""
        with self.open(target) as fh:
            fh.write(text)
        return Path(target)

    def remove(self, target: str | os.PathLike[str]) -> None:
        """Remove ``target`` when the files are renamed, in its turn (a file the new set no longer has)."""
        self._plan.append((Path(target), None))

    def _commit(self) -> None:
        for final, tmp in self._plan:
            if tmp is None:
                final.unlink(missing_ok=True)
            else:
                with contextlib.suppress(OSError):  # a file replaced keeps its permissions (chmod 600)
                    shutil.copymode(final, tmp)
                os.replace(tmp, final)

    def _discard(self) -> None:
        for _, tmp in self._plan:
            if tmp is not None:
                with contextlib.suppress(OSError):  # (on a read-only file system even this fails)
                    tmp.unlink(missing_ok=True)

    def _named(self, exc: OSError) -> OSError:
        """``exc`` naming the target it was writing: ``write()`` on a full disk names no file, and an
        error opening or renaming a temporary file names the hidden file, not the one asked for."""
        name = exc.filename
        if name is None:
            final = self._last
        elif isinstance(name, str | bytes | os.PathLike):
            temps = {str(tmp): target for target, tmp in self._plan if tmp is not None}
            final = temps.get(os.fsdecode(name))
        else:
            final = None
        if final is None or exc.errno is None:
            return exc
        return OSError(exc.errno, exc.strerror, str(final))


@contextlib.contextmanager
def replacing() -> Iterator[Staged]:
    """Write a set of files so that each is, whatever stops the writing, the old file or the whole new one.

    Each file of the block (:meth:`Staged.write_text`, :meth:`Staged.open`, :meth:`Staged.path`) is
    written under a hidden name beside its target (:func:`temp_beside`). When the block ends without an
    error, they are renamed onto their targets in the order they were given (give the file that points
    at the others last: a report's page after its tables), and :meth:`Staged.remove` removals are made in
    their turn. When it raises (a full disk, Ctrl-C), the temporary files are removed and no target is
    touched. An ``OSError`` is raised again naming the target being written (see :meth:`Staged._named`).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with replacing() as files:
    ...     _ = files.write_text(folder / "table.csv", "a,b\\n")
    ...     _ = files.write_text(folder / "index.html", "<p>see table.csv</p>\\n")
    >>> sorted(p.name for p in folder.iterdir())
    ['index.html', 'table.csv']
    >>> import shutil; shutil.rmtree(folder)
    """
    staged = Staged()
    try:
        yield staged
        staged._commit()
    except OSError as exc:
        named = staged._named(exc)
        if named is exc:
            raise
        raise named from exc
    finally:
        staged._discard()


def replace_text(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``target`` through a temporary file beside it (:func:`replacing`)."""
    with replacing() as files:
        return files.write_text(target, text)
