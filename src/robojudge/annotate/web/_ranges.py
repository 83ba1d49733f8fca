"""HTTP range requests (RFC 9110 Sec. 14) over a file: parsing the header and reading the bytes.

Browsers seek in a video by asking for a byte range; a server that answers only 200 with the whole
file makes seeking restart the download (and Safari refuses to play at all). Only single ranges are
served: a multi-range request gets the whole file, which the RFC allows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["CHUNK", "RangeNotSatisfiable", "iter_file", "parse_range"]

CHUNK = 256 * 1024
_RANGE = re.compile(r"^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$", re.IGNORECASE)


class RangeNotSatisfiable(ValueError):
    """The range lies wholly past the end of the file (answer 416 with ``Content-Range: bytes */size``)."""


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The inclusive byte range ``(first, last)`` a ``Range`` header asks of a file of ``size`` bytes.

    Returns ``None`` when the whole file should be sent: no header, a unit other than bytes, a
    malformed or multi-range value (ignoring those is what the RFC asks). Raises
    :class:`RangeNotSatisfiable` when the range starts at or past the end, or is a suffix of 0 bytes.
    """
    if not header:
        return None
    match = _RANGE.match(header)
    if match is None:
        return None
    first_s, last_s = match.groups()
    if not first_s and not last_s:
        return None
    if not first_s:  # "bytes=-N": the last N bytes
        n = int(last_s)
        if n == 0 or size == 0:
            raise RangeNotSatisfiable(header)
        return max(0, size - n), size - 1
    first = int(first_s)
    if last_s and int(last_s) < first:
        return None
    if first >= size:
        raise RangeNotSatisfiable(header)
    last = size - 1 if not last_s else int(last_s)
    return first, min(last, size - 1)


def iter_file(path: Path, first: int, last: int, chunk: int = CHUNK) -> Iterator[bytes]:
    """The bytes ``first..last`` (inclusive) of ``path``, ``chunk`` bytes at a time."""
    with path.open("rb") as fh:
        fh.seek(first)
        left = last - first + 1
        while left > 0:
            data = fh.read(min(chunk, left))
            if not data:  # the file shrank under us: stop rather than loop
                return
            left -= len(data)
            yield data
