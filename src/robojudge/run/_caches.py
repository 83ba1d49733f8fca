"""The user cache files, looked at and emptied together: what ``robojudge cache info`` and ``robojudge
cache clear`` call.

Two SQLite files in the user cache folder (``$ROBOJUDGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/robojudge``,
else ``~/.cache/robojudge``) grow with use and are never trimmed by a run:

* ``judge-cache.sqlite``, the judge response cache (:mod:`robojudge.judges._cache`): every reply, and
  every video's frame hashes per sampling. Removing it costs sending those requests again (paid, for a
  hosted judge) and decoding those videos again.
* ``file-hashes.sqlite``, the file-hash cache (:mod:`robojudge.run._filehash`): each input's digest.
  Removing it costs reading each input once more when a run is planned.

Neither holds a result: a result store never reads them, and no stored result changes when they go.
The annotation app's WebM cache (``annotate-media/`` in the same folder) has its own command,
``robojudge annotate cache``.
"""

from __future__ import annotations

import os

from robojudge._sqlite import CacheCleared, CacheFileState
from robojudge.judges import clear_response_cache, response_cache_state
from robojudge.run._filehash import clear_file_hash_cache, file_hash_cache_state

DAY_S = 86400.0


def cache_states(folder: str | os.PathLike[str] | None = None) -> list[CacheFileState]:
    """The judge response cache and the file-hash cache in ``folder`` (default: the user cache
    folder), as they are now: path, size on disk, entries and their ages. Nothing is created or
    changed."""
    return [response_cache_state(folder), file_hash_cache_state(folder)]


def clear_caches(
    folder: str | os.PathLike[str] | None = None,
    *,
    judge: bool = True,
    hashes: bool = True,
    older_than_days: float | None = None,
) -> list[CacheCleared]:
    """Empty the judge response cache (``judge``) and the file-hash cache (``hashes``) in ``folder``
    (default: the user cache folder): remove each file whole, or with ``older_than_days`` only the
    entries written more than that many days ago (an entry's age counts from when it was written, not
    from its last use).

    Raises:
        ValueError: ``older_than_days`` is negative or not a number.
        robojudge._sqlite.CacheFileError: A file or its entries could not be removed (the message
            says which and why); the caches before it in this order were emptied.
    """
    if older_than_days is not None and not older_than_days >= 0:  # (NaN too)
        raise ValueError(f"older_than_days must be a number of days >= 0, not {older_than_days}")
    older_than_s = None if older_than_days is None else older_than_days * DAY_S
    done: list[CacheCleared] = []
    if judge:
        done.append(clear_response_cache(folder, older_than_s=older_than_s))
    if hashes:
        done.append(clear_file_hash_cache(folder, older_than_s=older_than_s))
    return done
