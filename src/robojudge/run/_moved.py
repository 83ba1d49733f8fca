"""Results of a configuration that names its files another way: taken over, not computed again.

A metric whose config names a file (KIVA's ``reader``, ``sa_bleu``'s ``captions``) is stored under a
config hash that includes the file's real path (:func:`robojudge.metrics.hashed_values`), so that two
files are two configurations. A project moved to another folder or machine then names the same files by
other paths: another configuration, whose results were computed again, while the old configuration's
rows stayed current beside them and reports listed the metric twice.

Before planning, :func:`take_over_moved` looks, per requested metric with such a field, for the other
configurations stored at the same version whose config differs only in the paths of those fields, and
whose files are not at those paths on this machine (moved: a file still there is another file, another
configuration, and keeps its rows) (a
judge: the path of its local model folder, :func:`take_over_moved_judges`, whose files' digest is part
of its config). An
item's row there whose fingerprint equals the one the request would store now (the same inputs, and
files of the same content: the fingerprint holds their digests, never their paths) is stored again under
the request's configuration, and the original is marked superseded (kept, as superseded rows are). Its
``details`` say where it came from (``taken_over_from``). Rows of other inputs or other file contents are
not taken over: they are computed under the new configuration as any others.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robojudge.metrics import file_fields
from robojudge.run._fingerprint import Fingerprints
from robojudge.store import ResultStore
from robojudge.suite import Item

TAKEN_OVER = "taken_over_from"
"""The ``details`` key of a row taken over from another configuration: that configuration's hash."""


def same_but_paths(stored: Mapping[str, Any] | None, wanted: Mapping[str, Any], paths: Sequence[str]) -> bool:
    """Whether a stored config equals ``wanted`` except for the file paths of ``paths``, each of which
    names nothing on this machine where the two differ (the files moved), or names the same file
    (another spelling: a judge's ``models/tiny`` and its absolute path). A configuration whose file is
    still there and is another file is another configuration (two captions files that agree on most
    items, two copies of one model), and keeps its rows."""
    if not isinstance(stored, Mapping) or set(stored) != set(wanted):
        return False
    for name, value in wanted.items():
        old = stored[name]
        if name not in paths:
            if old != value:
                return False
        elif old != value and (not isinstance(old, str) or not old or not isinstance(value, str) or not value
                               or (_exists(old) and not _same_file(old, value))):
            return False
    return True


def _exists(path: str) -> bool:
    try:
        return os.path.exists(path)
    except (OSError, ValueError):  # a name too long for this file system, a NUL
        return False


def _same_file(a: str, b: str) -> bool:
    """Whether two spellings name one file or folder here (``models/tiny`` and its absolute path)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def take_over(
    store: ResultStore,
    metric: str,
    version: str,
    config_hash: str,
    wanted: dict[str, Any],
    paths: Sequence[str],
    items: Sequence[Item],
    now: Callable[[Item], str | None],
) -> int:
    """Take over, for ``items``, the rows of ``metric`` at ``version`` stored under a configuration that
    differs from ``wanted`` (hash ``config_hash``) only in the fields ``paths``, where the row's
    fingerprint equals ``now(item)`` (None: the item is not to take over). Returns how many."""
    others = [h for h, cfg in store.configurations(metric, version).items()
              if h != config_hash and same_but_paths(cfg, wanted, paths)]
    if not others:
        return 0
    have = set(store.current_fingerprints(metric, config_hash, version))
    taken = 0
    for other in others:
        theirs = store.current_fingerprints(metric, other, version)
        ids = [it.item_id for it in items
               if it.item_id in theirs and it.item_id not in have and theirs[it.item_id]
               and now(it) == theirs[it.item_id]]
        moved = store.move_rows(metric, version, other, config_hash, wanted, ids, note={TAKEN_OVER: other})
        have.update(moved)
        taken += len(moved)
    return taken


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

        def now(item: Item, r: Any = r) -> str | None:
            return prints.metric(item, r.spec, r.config).value if applies(item, r) else None

        taken += take_over(store, r.id, r.spec.version, r.config_hash, r.config.model_dump(mode="json"),
                           paths, items, now)
    return taken


JUDGE_PATHS = ("model", "base_model")
"""A judge's config fields that name its local model folder: they may differ where its files do not."""


def take_over_moved_judges(items: Sequence[Item], plans: Sequence[Any], store: ResultStore,
                           prints: Fingerprints) -> int:
    """:func:`take_over_moved` for judge rubrics (:class:`~robojudge.run._judge_rows.JudgePlan`): a judge
    whose model is a local folder is identified by its files' digest (``model_files``) and its path; the
    same files in another folder where the old one is gone (moved), or the folder spelt another way, take
    over its stored judgments."""
    taken = 0
    for plan in plans:
        for p in (plan, plan.fallback):
            if p is None or not p.config.get("model_files"):
                continue
            taken += take_over(store, p.metric_id, p.version, p.config_hash, p.config, JUDGE_PATHS, items,
                               lambda item: prints.judge(item).value)
    return taken
