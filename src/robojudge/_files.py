"""Writing files in one step: each is written under a temporary name beside it, then renamed onto it.

A file written in place and stopped half-way (a full disk, a size limit, a kill) stays under its final
name cut short, and looks whole to whatever reads it next. Written beside it and renamed once complete,
it is always either the old file or the whole new one. :func:`replacing` does so for a set of files that
belong together (a report's page and its tables), renaming them only once every one is written.

A file that is a link is replaced where it points, so a link the user made stays one: a leaderboard
written with ``--out board``, ``board/leaderboard.md`` linked into a paper's folder, keeps the paper's copy
up to date. In an output folder the user did not name (``root`` without ``named``: a run folder's default
``report/``, which may have been downloaded or shared with links to ``~/.bashrc`` in it), only links that
stay in that folder are followed (:class:`LinkReplacedWarning`); pass ``--out`` to keep links leading out
of a run folder's report followed. In either kind of output folder, a folder the command writes into that
is a link leading out of it (a report's ``tables/``) is refused (:class:`LinkedFolderError`).

Tables given as input are read whole, once (:func:`read_input`), so a pipe works as a file does.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
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
    _sweep_leftovers(path.parent, head, suffix)
    return path.with_name(f".{head}{tail}")


#: A temporary file untouched this long (seconds) whose process is gone here is a killed writer's
#: leftover (:func:`_sweep_leftovers`). A pid alone cannot tell: a writer in another container or on
#: another host sharing the folder has a pid this machine does not know, and its file was deleted
#: under it (review rev25 F1); a live writer touches its file as it writes, and a staged set of
#: files is renamed within minutes of its last write.
LEFTOVER_AGE_S = 3600.0


def _sweep_leftovers(folder: Path, head: str, suffix: str) -> None:
    """Remove the temporary files a killed process left for the same target (``.<head>.<pid>.<8 hex>
    <suffix>`` whose process is gone and which nothing touched for :data:`LEFTOVER_AGE_S`): a ``kill
    -9`` in the middle of a write leaves one, as big as the output, that no later run would otherwise
    remove. Only names of exactly that shape are looked at; a process that may still run (or another
    user's) keeps its file. POSIX only: Windows has no harmless signal to ask whether a process
    exists."""
    if os.name != "posix":
        return
    shape = re.compile(re.escape(f".{head}.") + r"([0-9]+)\.[0-9a-f]{8}" + re.escape(suffix))
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(f".{head}.")]
    except OSError:
        return  # a folder not there yet or unreadable: writing will say so
    now = time.time()
    for entry in entries:
        found = shape.fullmatch(entry.name)
        if found is None or _running(int(found.group(1))):
            continue
        with contextlib.suppress(OSError):
            if now - entry.stat(follow_symlinks=False).st_mtime >= LEFTOVER_AGE_S:
                (folder / entry.name).unlink()


def _running(pid: int) -> bool:
    """Whether a process ``pid`` may exist on this machine (POSIX), this one included."""
    return pid == os.getpid() or process_exists(pid)


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` may exist on this machine, asked with signal 0 (POSIX only: on Windows
    signal 0 is CTRL_C_EVENT). Another user's process counts as existing; a pid of no process does not.
    A reused pid reads as the old process still running: callers that can tell (the start time, a
    file's age) do so themselves. (The store's in-flight notes ask it too.)"""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's
    except OSError:
        return False
    return True


class LinkReplacedWarning(UserWarning):
    """A file of an output folder was a link leading out of that folder (or to nothing): the new file
    replaced the link instead of what it pointed to."""


class LinkedFolderError(OSError):
    """A folder inside an output folder is a link leading out of it: nothing is written or removed
    through it."""


class PartlyReplacedError(OSError):
    """The renames that end a :func:`replacing` block stopped part way (on Windows, a file held open by
    another program, a spreadsheet showing a CSV, cannot be replaced): ``replaced`` holds the targets
    already replaced or removed, in order; the others are as they were. Otherwise the error it wraps
    (same errno, message and file)."""

    def __init__(self, error: OSError, replaced: Sequence[Path]) -> None:
        if error.errno is None:
            super().__init__(*error.args)
        else:
            super().__init__(error.errno, error.strerror, error.filename)
        self.replaced = tuple(replaced)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


class Staged:
    """The files of one :func:`replacing` block: where each is being written, in the order given.

    With a ``root`` (the output folder the command writes into), a folder on the way that is a link
    leading out of the resolved ``root`` is refused (:class:`LinkedFolderError`). A target's link is
    followed wherever it leads when the user named ``root`` (``named``: their ``--out``, where links are
    theirs); in a folder the command chose itself, only when it resolves inside ``root``, and one leading
    out of it or to nothing is replaced itself (a :class:`LinkReplacedWarning`). Without a root (a single
    file the user named), links are followed.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None, *, named: bool = False) -> None:
        self._plan: list[tuple[Path, Path | None]] = []  # (target, its temporary file; None: remove it)
        self._done: list[Path] = []  # the targets the commit has replaced or removed so far
        self._last: Path | None = None
        self._root = None if root is None else Path(root)
        self._user_named = named

    def _folder_checked(self, target: Path) -> None:
        """Refuse ``target`` when a folder between :attr:`_root` and it is a link leading out of the root
        (one to nothing is refused too: creating its folders would create them where it points)."""
        if self._root is None:
            return
        top = Path(os.path.abspath(self._root))
        where = Path(os.path.abspath(target))
        if not where.is_relative_to(top):
            raise ValueError(f"{target}: not inside the output folder {self._root}")
        real_top = os.path.realpath(top)
        folder = top
        for part in where.relative_to(top).parts[:-1]:
            folder = folder / part
            if not folder.is_symlink():
                continue
            real = os.path.realpath(folder)
            if not folder.is_dir() or not _inside(real, real_top):
                raise LinkedFolderError(
                    f"{folder}: a link to {os.readlink(folder)} ({real}), outside the output folder "
                    f"{self._root}; nothing is written or removed through it (remove the link, or make "
                    "it a folder, and run again)")

    def _through(self, link: Path) -> Path:
        """Where a write to ``link`` (a link) goes: what it points to, or the link itself when that is
        outside a root the user did not name, or missing there."""
        real = os.path.realpath(link)
        if self._root is None or self._user_named:
            return Path(real)
        if link.exists() and _inside(real, os.path.realpath(self._root)):
            return Path(real)
        where = "which does not exist" if not link.exists() else f"outside {self._root}, left as it was"
        warnings.warn(f"{link} was a link to {os.readlink(link)} ({real}), {where}; the link is replaced "
                      "by the new file", LinkReplacedWarning, stacklevel=4)
        return link

    def path(self, target: str | os.PathLike[str]) -> Path:
        """A new temporary name beside ``target`` (its folder created) for code that writes the file
        itself; it is renamed onto ``target`` when the block ends. A link is followed (the file it points
        to is replaced, the link kept), within the root when the block has one (:class:`Staged`)."""
        final = Path(target)
        self._folder_checked(final)
        if final.is_symlink():
            final = self._through(final)
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
        """Remove ``target`` when the files are renamed, in its turn (a file the new set no longer has).
        A link is removed, not what it points to; a folder leading out of the root is refused."""
        self._folder_checked(Path(target))
        self._plan.append((Path(target), None))

    def _commit(self) -> None:
        for final, tmp in self._plan:
            if tmp is None:
                final.unlink(missing_ok=True)
            else:
                with contextlib.suppress(OSError):  # a file replaced keeps its permissions (chmod 600)
                    shutil.copymode(final, tmp)
                os.replace(tmp, final)
            self._done.append(final)

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


def refuse_linked_folders(root: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Raise :class:`LinkedFolderError` when a folder between ``root`` and ``target`` (a file a command
    writes itself, not through :func:`replacing`: a video) is a link leading out of ``root``."""
    Staged(root)._folder_checked(Path(target))


@contextlib.contextmanager
def replacing(root: str | os.PathLike[str] | None = None, *, named: bool = False) -> Iterator[Staged]:
    """Write a set of files so that each is, whatever stops the writing, the old file or the whole new one.

    Each file of the block (:meth:`Staged.write_text`, :meth:`Staged.open`, :meth:`Staged.path`) is
    written under a hidden name beside its target (:func:`temp_beside`). When the block ends without an
    error, they are renamed onto their targets in the order they were given (give the file that points
    at the others last: a report's page after its tables), and :meth:`Staged.remove` removals are made in
    their turn. When it raises (a full disk, Ctrl-C), the temporary files are removed and no target is
    touched. An ``OSError`` is raised again naming the target being written (see :meth:`Staged._named`);
    one raised by the renames themselves, after some targets were replaced, as a
    :class:`PartlyReplacedError` that lists them.

    ``root`` is the output folder the files are written into, if any: a folder in it leading out of it is
    refused, and, unless the user ``named`` it (``--out``), links in it are followed only while they stay
    inside it (:class:`Staged`). Leave it out for a file the user named.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with replacing() as files:
    ...     _ = files.write_text(folder / "table.csv", "a,b\\n")
    ...     _ = files.write_text(folder / "index.html", "<p>see table.csv</p>\\n")
    >>> sorted(p.name for p in folder.iterdir())
    ['index.html', 'table.csv']
    >>> import shutil; shutil.rmtree(folder)
    """
    staged = Staged(root, named=named)
    try:
        yield staged
        staged._commit()
    except OSError as exc:
        as_asked = staged._named(exc)
        if staged._done:  # some targets are the new files already: say which
            raise PartlyReplacedError(as_asked, staged._done) from exc
        if as_asked is exc:
            raise
        raise as_asked from exc
    finally:
        staged._discard()


def replace_text(target: str | os.PathLike[str], text: str, *,
                 root: str | os.PathLike[str] | None = None, named: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``target`` through a temporary file beside it (:func:`replacing`, with
    its ``root`` and ``named``)."""
    with replacing(root, named=named) as files:
        return files.write_text(target, text)
