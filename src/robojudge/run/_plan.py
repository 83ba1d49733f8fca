"""Resume planning shared by metric scoring and judging: what is missing from the store, or stale.

A unit of work (a metric with its config, a judge rubric) is done for an item when the store holds
a current row for it whose fingerprint equals the fingerprint of the item's inputs now. A row with
another fingerprint is *stale*: its inputs changed, the work is redone and the new row supersedes
it. A row without a fingerprint (stored before schema version 2), or with one of an older recipe
(:attr:`Fingerprint.legacy`), is *unknown*: kept and counted,
and redone only with ``rescore_unknown`` -- recomputing it could cost days of model time for
results that are most likely still right, so that is the user's call.

When a file the unit reads cannot be read now (missing or unreadable: a drive not mounted, a share
gone), its stored row is kept and counted as *inputs unavailable*, not as stale: redoing it would
only store an error row over a good result, and the next run with the file back would redo it
once more. A unit never stored is still done (its error row says what is missing), and a stored row
whose fingerprint equals the current one (an error stored while the file was missing) is up to date.
The runners store an error row whose file went away after planning under the fingerprint of its
inputs at that moment (file missing), not the planned one, so it is tried again once the file is
back. The store itself takes any row with new inputs: an error for inputs that really changed (a
replaced video that no longer decodes) is the right result and supersedes the old value.

A unit may also not *apply* to an item (``applies``): ``--metrics all`` brings in metrics that need
a simulator state or a reference video, which a suite of bare videos does not have. Such a pair is
neither done nor stored, only counted per metric in ``not_applicable``; a row stored for it earlier
is left as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from robojudge.run._fingerprint import Fingerprint
from robojudge.store import ResultStore
from robojudge.suite import Item

_log = logging.getLogger(__name__)

W = TypeVar("W")
StoreKey = tuple[str, str, str]
"""(metric id, config hash, version): with the item id, the key of a stored result."""
_NONE = Fingerprint("")


@dataclass
class Pending(Generic[W]):
    """What :func:`plan_pending` found.

    Attributes:
        todo: Per item with work to do: the item, its pending units and their fingerprints.
        skipped: (item, unit) pairs already stored from the same inputs, or kept with an unknown
            fingerprint.
        skipped_errors: Those of ``skipped`` whose stored row is a failure (kept until
            ``retry_errors``).
        stale: Pairs stored from other inputs; they are in ``todo``.
        unknown: Pairs stored without a fingerprint; in ``todo`` only with ``rescore_unknown``.
        unavailable: Stored pairs whose inputs cannot be read now; kept (counted in ``skipped``).
        not_applicable: Per unit id (the first part of its store key), the items it does not apply
            to; those pairs are in no other count.
        lacking: Per unit id, what those items lack (an input, ``meta.caption``) and how many lack it,
            where the caller says (:func:`robojudge.run._score` fills it for metrics).
        rescored_libraries: Stored rows computed with other library versions, superseded before
            planning so that they are computed again (the scorer's ``rescore_libraries``).
        other_libraries: Stored rows kept that were computed with other library versions than installed
            (counted when they are not recomputed).
        taken_over: Stored rows of a configuration that names the same files by other paths, stored
            again under the requested one before planning (:mod:`robojudge.run._moved`).
        other_versions: Per (metric, stored version, installed version), the stored rows of another
            version of a metric on items it is to be computed for now (an upgrade changed the metric):
            they are kept, and the installed version is computed beside them.
    """

    todo: list[tuple[Item, tuple[W, ...], tuple[str, ...]]] = field(default_factory=list)
    skipped: int = 0
    skipped_errors: int = 0
    stale: int = 0
    unknown: int = 0
    unavailable: int = 0
    not_applicable: dict[str, int] = field(default_factory=dict)
    lacking: dict[str, dict[str, int]] = field(default_factory=dict)
    rescored_libraries: int = 0
    other_libraries: int = 0
    taken_over: int = 0
    other_versions: dict[tuple[str, str, str], int] = field(default_factory=dict)


def plan_pending(
    items: Sequence[Item],
    work: Sequence[W],
    key: Callable[[W], StoreKey],
    store: ResultStore,
    fingerprint: Callable[[Item, W], Fingerprint] | None,
    *,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
    unscored: bool = False,
    also: Callable[[W], StoreKey | None] | None = None,
    applies: Callable[[Item, W], bool] | None = None,
) -> Pending[W]:
    """For each item, the units of ``work`` the store has no up-to-date row for.

    Args:
        items: The items, with absolute paths.
        work: The units of work.
        key: A unit's store key.
        store: The result store.
        fingerprint: The fingerprint of what a unit reads of an item now (and whether a file of it
            cannot be read); ``None`` = do not compare inputs, any stored row counts as done.
        retry_errors: Delete the stored failures of ``work`` on ``items`` first, so they count as missing
            (those of other items, another manifest's in a shared store, are left as they are).
        rescore_unknown: Redo pairs whose stored row has no fingerprint.
        unscored: With ``retry_errors``, also delete ok rows without a value (unparsable judgments).
        also: Another key a unit's result may be stored under (a judge's argmax fallback of an
            expected score); a row there counts as the unit's own, by the same rules.
        applies: Whether a unit applies to an item (``None``: every unit applies to every item);
            pairs it refuses are only counted (``Pending.not_applicable``), never fingerprinted.
    """
    stored: dict[StoreKey, dict[str, str]] = {}
    # The items each key has a stored value (ok row) for: a skipped pair with none is a kept failure,
    # which the summary counts (a rerun after fixing what failed said "0 failed" and did nothing).
    valued: dict[StoreKey, set[str]] = {}
    ids = [item.item_id for item in items]

    def read(k: StoreKey) -> None:
        # Of these items only: every stored row of the metric (other manifests', earlier blocks') was
        # read for each block of a large manifest, the driver's memory growing with the store.
        stored[k] = store.current_fingerprints(*k, item_ids=ids)
        valued[k] = (set(store.current_fingerprints(*k, include_errors=False, item_ids=ids))
                     if stored[k] and not retry_errors else set(stored[k]))

    for w in work:
        k = key(w)
        if retry_errors:
            store.clear_errors(*k, item_ids=ids, unscored=unscored)
        read(k)
        other = also(w) if also is not None else None
        if other is not None and other not in stored:
            read(other)
    plan: Pending[W] = Pending()
    for item in items:
        pending: list[W] = []
        prints: list[str] = []
        for w in work:
            if applies is not None and not applies(item, w):
                uid = key(w)[0]
                plan.not_applicable[uid] = plan.not_applicable.get(uid, 0) + 1
                continue
            fp = _NONE if fingerprint is None else fingerprint(item, w)
            other = also(w) if also is not None else None
            keys = [k for k in (key(w), other) if k is not None]
            found = (stored[k].get(item.item_id) for k in keys)
            have = {h for h in found if h is not None}
            kept = True
            if not have:
                kept = False
            elif fp.value in have or fingerprint is None:
                pass
            elif fp.unavailable:
                plan.unavailable += 1
            elif have == {""} or (fp.legacy is not None and fp.legacy in have):
                # (stored without a fingerprint, or with one of the recipe before what this metric reads
                # was all covered: nothing says its inputs changed)
                plan.unknown += 1
                kept = not rescore_unknown
            else:
                plan.stale += 1
                kept = False
            if kept:
                plan.skipped += 1
                if not any(item.item_id in valued[k] for k in keys):
                    plan.skipped_errors += 1
                continue
            pending.append(w)
            prints.append(fp.value)
        if pending:
            plan.todo.append((item, tuple(pending), tuple(prints)))
    _log.debug("planned %d items x %d units: %d to compute (%d stale), %d already stored, %d not applicable",
               len(items), len(work), sum(len(p) for _, p, _ in plan.todo), plan.stale, plan.skipped,
               sum(plan.not_applicable.values()))
    return plan


def pending_per_item(
    items: Sequence[Item],
    work: Sequence[W],
    key: Callable[[W], StoreKey],
    store: ResultStore,
    *,
    fingerprint: Callable[[Item, W], Fingerprint] | None = None,
    retry_errors: bool = False,
    rescore_unknown: bool = False,
) -> tuple[list[tuple[Item, tuple[W, ...]]], int]:
    """For each item, the units of ``work`` still to do; and how many pairs are stored and current.

    Without ``fingerprint`` any stored row counts as done (inputs are not compared). See
    :func:`plan_pending`.
    """
    plan = plan_pending(
        items, work, key, store, fingerprint, retry_errors=retry_errors, rescore_unknown=rescore_unknown
    )
    return [(item, units) for item, units, _ in plan.todo], plan.skipped
