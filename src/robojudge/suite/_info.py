"""Summary counts of a suite: what it holds and how much of it is labelled."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from robojudge.suite._load import Suite
from robojudge.suite._schema import CHECKLIST_ITEMS, Item

UNSET = "(unset)"
"""The name of the group of items without a field (no generator, no task...), unless a real value is
spelt so: see :func:`unset_name`."""


def unset_name(values: Iterable[str | None]) -> str:
    """The name for the items without the field among ``values`` (None: no value): :data:`UNSET`, or the
    first of ``(unset 2)``, ``(unset 3)``... that none of the real values is, so that a value spelt
    ``(unset)`` is never one group with the items that have none (counts here, the report's groups)."""
    taken = {v for v in values if v is not None}
    name, k = UNSET, 1
    while name in taken:
        k += 1
        name = f"(unset {k})"
    return name


def _counts(values: Iterable[str | None]) -> dict[str, int]:
    """Counts, largest first, ties by name; ``None`` counted under :func:`unset_name`."""
    values = list(values)
    missing = unset_name(values)
    c = Counter(missing if v is None else v for v in values)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


@dataclass(frozen=True)
class LabelCoverage:
    """How many items carry each kind of human label.

    Attributes:
        labelled: Items with a ``labels`` object at all.
        pa: Items with a PA score.
        ia: Items with an IA score.
        checklist_full: Items with all six checklist items filled.
        checklist_any: Items with at least one checklist item filled.
        overall: Items with an overall score.
        evidence: Items with non-empty evidence text.
        by_rater: Labelled items per rater (:data:`UNSET` for labels without a rater, or ``(unset 2)``
            when a rater is named ``(unset)``).
    """

    labelled: int = 0
    pa: int = 0
    ia: int = 0
    checklist_full: int = 0
    checklist_any: int = 0
    overall: int = 0
    evidence: int = 0
    by_rater: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteInfo:
    """What :func:`suite_info` reports about a suite.

    Attributes:
        path: The manifest file.
        items: Number of valid items.
        problems: Number of problems found while loading (non-zero only for non-strict loads).
        by_source, by_generator, by_embodiment, by_split: Item counts per value, largest first; items
            without a value under :data:`UNSET`, or under ``(unset 2)`` when a value is spelt ``(unset)``.
        labels: Label coverage.
    """

    path: str
    items: int
    problems: int
    by_source: dict[str, int]
    by_generator: dict[str, int]
    by_embodiment: dict[str, int]
    by_split: dict[str, int]
    labels: LabelCoverage

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (nested dicts, counts as ints)."""
        return asdict(self)


def _coverage(items: list[Item]) -> LabelCoverage:
    labelled = [it.labels for it in items if it.labels is not None]
    full = any_ = 0
    for lab in labelled:
        filled = (
            0
            if lab.checklist is None
            else sum(getattr(lab.checklist, k) is not None for k in CHECKLIST_ITEMS)
        )
        full += filled == len(CHECKLIST_ITEMS)
        any_ += filled > 0
    return LabelCoverage(
        labelled=len(labelled),
        pa=sum(lab.pa is not None for lab in labelled),
        ia=sum(lab.ia is not None for lab in labelled),
        checklist_full=full,
        checklist_any=any_,
        overall=sum(lab.overall is not None for lab in labelled),
        evidence=sum(bool(lab.evidence and lab.evidence.strip()) for lab in labelled),
        by_rater=_counts(lab.rater for lab in labelled),
    )


def suite_info(suite: Suite) -> SuiteInfo:
    """Count a suite's items by source, generator, embodiment and split, and its label coverage."""
    items = suite.items
    return SuiteInfo(
        path=str(suite.path),
        items=len(items),
        problems=len(suite.problems),
        by_source=_counts(it.source for it in items),
        by_generator=_counts(it.generator for it in items),
        by_embodiment=_counts(None if it.embodiment is None else it.embodiment.value for it in items),
        by_split=_counts(it.split for it in items),
        labels=_coverage(items),
    )
