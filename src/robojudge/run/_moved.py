"""Results of a configuration that names its files another way: taken over, not computed again.

A metric whose config names a file (KIVA's ``reader``, ``sa_bleu``'s ``captions``) is stored under a
config hash that includes the file's real path (:func:`robojudge.metrics.hashed_values`), so that two
files are two configurations. A project moved to another folder or machine then names the same files by
other paths: another configuration, whose results were computed again, while the old configuration's
rows stayed current beside them and reports listed the metric twice.

Before planning, :func:`take_over_moved` looks, per requested metric with such a field, for the other
configurations stored at the same version whose config differs only in the paths of those fields. An
item's row there whose fingerprint equals the one the request would store now (the same inputs, and
files of the same content: the fingerprint holds their digests, never their paths) is stored again under
the request's configuration, and the original is marked superseded (kept, as superseded rows are). Its
``details`` say where it came from (``taken_over_from``). Rows of other inputs or other file contents are
not taken over: they are computed under the new configuration as any others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robojudge.metrics import file_fields
from robojudge.run._fingerprint import Fingerprints
from robojudge.store import ResultStore
from robojudge.suite import Item

TAKEN_OVER = "taken_over_from"
"""The ``details`` key of a row taken over from another configuration: that configuration's hash."""


def same_but_paths(stored: Mapping[str, Any] | None, wanted: Mapping[str, Any], paths: Sequence[str]) -> bool:
    """Whether a stored config equals ``wanted`` except for the file paths of ``paths`` (both set)."""
    if not isinstance(stored, Mapping) or set(stored) != set(wanted):
        return False
    for name, value in wanted.items():
        if name in paths:
            if bool(stored[name]) != bool(value) or not isinstance(stored[name], str | type(None)):
                return False
        elif stored[name] != value:
            return False
    return True


def take_over_moved(
    items: Sequence[Item],
    requests: Sequence[Any],
    store: ResultStore,
    prints: Fingerprints,
    applies: Callable[[Item, Any], bool],
) -> int:
    """Take over, for ``items``, the rows of configurations that differ from ``requests``' only in the
    paths of the files they name (see the module doc). Returns how many rows were taken over."""
    taken = 0
    for r in requests:
        paths = tuple(file_fields(r.spec.config_type)) if r.spec.config_type is not None else ()
        if not paths:
            continue
        wanted = r.config.model_dump(mode="json")
        others = [h for h, cfg in store.configurations(r.id, r.spec.version).items()
                  if h != r.config_hash and same_but_paths(cfg, wanted, paths)]
        if not others:
            continue
        have = set(store.current_fingerprints(r.id, r.config_hash, r.spec.version))
        for other in others:
            theirs = store.current_fingerprints(r.id, other, r.spec.version)
            ids = [it.item_id for it in items
                   if it.item_id in theirs and it.item_id not in have and theirs[it.item_id]
                   and applies(it, r) and prints.metric(it, r.spec, r.config).value == theirs[it.item_id]]
            moved = store.move_rows(r.id, r.spec.version, other, r.config_hash, wanted, ids,
                                    note={TAKEN_OVER: other})
            have.update(moved)
            taken += len(moved)
    return taken
