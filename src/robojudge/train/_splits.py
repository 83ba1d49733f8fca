"""Train/validation/test splits by clip, stratified by source.

All rollouts of one source clip (same ``clip_id``; an item without one is its own clip) land in one
split, so a judge is never validated on a clip it was trained on. Within each source the clips are
put in the order of a hash of (seed, source, clip id) and cut by the fractions, rounding by largest
remainder, so every source is split in (about) the same proportions. A clip's place in that order
does not depend on the other clips: adding one clip to a source moves at most one other clip across
each boundary between splits, k clips at most k (a shuffle of the whole list moved most of them).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

from robojudge.suite import Item

SPLITS = ("train", "val", "test")


def clip_key(item: Item) -> str:
    """The clip an item belongs to: its ``clip_id``, else the item itself. (Not its reference video: one
    reference may serve a whole task, and its path would put local folders into shared records.)"""
    return item.clip_id or f"item:{item.item_id}"


def source_key(item: Item) -> str:
    return item.source or "unknown"


def _counts(n: int, fractions: Sequence[float]) -> list[int]:
    """``n`` clips cut by ``fractions`` (summing to 1), largest remainder first, earlier splits on ties."""
    raw = [n * f for f in fractions]
    counts = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return counts


def _rank(seed: int, source: str, clip: str) -> tuple[str, str]:
    """A clip's place in its source's order: a hash of its own id, the seed and the source (the id
    itself breaks the tie of equal hashes)."""
    digest = hashlib.sha256(f"{seed}\0{source}\0{clip}".encode()).hexdigest()
    return digest, clip


def assign_splits(items: Sequence[Item], fractions: Mapping[str, float], seed: int = 0) -> dict[str, str]:
    """``{item_id: split}`` for every item, by clip, stratified by source.

    Args:
        items: The items to split.
        fractions: Share of clips per split name (``train``, ``val``, ``test``); they must sum to 1.
            A clip's source is that of its first item.
        seed: Same seed, same split. A clip's split depends on the seed, its source, its own id and
            the number of clips of its source, not on the other clips' ids.

    Raises:
        ValueError: Unknown split names, negative fractions or a sum other than 1.
    """
    unknown = set(fractions) - set(SPLITS)
    if unknown:
        raise ValueError(f"unknown split(s) {sorted(unknown)}; use {', '.join(SPLITS)}")
    if any(f < 0 for f in fractions.values()) or not math.isclose(sum(fractions.values()), 1.0, abs_tol=1e-9):
        raise ValueError(f"split fractions must be >= 0 and sum to 1, got {dict(fractions)}")
    names = [s for s in SPLITS if fractions.get(s, 0.0) > 0]
    clips: dict[str, list[Item]] = {}
    for it in items:
        clips.setdefault(clip_key(it), []).append(it)
    by_source: dict[str, list[str]] = {}
    for clip, members in clips.items():
        by_source.setdefault(source_key(members[0]), []).append(clip)
    out: dict[str, str] = {}
    for source in sorted(by_source):
        keys = sorted(by_source[source], key=lambda clip: _rank(seed, source, clip))
        start = 0
        for name, count in zip(names, _counts(len(keys), [fractions[n] for n in names]), strict=True):
            for clip in keys[start : start + count]:
                for it in clips[clip]:
                    out[it.item_id] = name
            start += count
    return out
