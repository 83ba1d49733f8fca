"""Which clips two generators were scored on, and the weights that compare them on the same ones.

A leaderboard mean is over a generator's own scored items (RoboJudge Table 8). Two generators scored
on different clips, or with rollout counts per clip that are not in proportion, are then ranked on
different items: easy clips that only one of them has lift its mean, and so do extra rollouts of easy
clips. :func:`pair_coverage` measures this per pair of generators and axis, and
:func:`matched_weights` gives the item weights under which each generator's mean is the mean of its
clip means over the clips every ranked generator has.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robojudge.meta._agreement import FloatArray

IntMatrix = npt.NDArray[np.int64]

#: Up to this share of a generator's mean moved by matching (:attr:`PairCoverage.moved`), a pair scored
#: on different items is a note, not a warning: one failed row of 72 in an otherwise balanced suite
#: (2.6% of a mean's weight) warned in the console, the Markdown and the report as loudly as two
#: generators that share a third of their clips.
MATCHING_NOTE_SHARE = 0.05

#: What :func:`pair_coverage` calls the units items are grouped by: ``clips`` (a shared ``clip_id``),
#: or ``items`` where each item stands alone (a suite without ``clip_id``).
UNITS = ("clips", "items")


@dataclass(frozen=True)
class PairCoverage:
    """The clips two generators were scored on, on one axis.

    Attributes:
        axis: The axis.
        a: One generator (the higher placed in the leaderboard).
        b: The other.
        clips_a: Clips with a scored item of ``a``.
        clips_b: Clips with a scored item of ``b``.
        shared: Clips with a scored item of both.
        rollouts_a: Fewest and most scored items of ``a`` per clip it has.
        rollouts_b: The same for ``b``.
        proportional: On the shared clips, ``a``'s counts per clip are in one proportion to ``b``'s
            (1 and 1 everywhere, or 3 and 1 everywhere): each clip then weighs alike in both means.
        moved: The larger, over the two, of the share of a generator's mean that matching on the
            pair's shared clips moves (half the summed difference between its weights per clip, its
            own items' share, and the matched ones, each shared clip alike): the share of items left
            out, plus what reweighting rollouts out of proportion shifts; 1 when nothing is shared.
        unit: ``clips``, or ``items`` where every clip of the two is one item (no ``clip_id``).
    """

    axis: str
    a: str
    b: str
    clips_a: int
    clips_b: int
    shared: int
    rollouts_a: tuple[int, int]
    rollouts_b: tuple[int, int]
    proportional: bool
    moved: float = 0.0
    unit: str = "clips"

    @property
    def union(self) -> int:
        """Clips with a scored item of either generator."""
        return self.clips_a + self.clips_b - self.shared

    @property
    def matched(self) -> bool:
        """Both generators were scored on the same clips, with rollout counts in proportion."""
        return self.shared == self.clips_a == self.clips_b and self.proportional

    @property
    def serious(self) -> bool:
        """Not :attr:`matched`, and sharing no clip or with more than :data:`MATCHING_NOTE_SHARE` of a
        mean :attr:`moved` by matching: worth a warning rather than a note."""
        return not self.matched and (self.shared == 0 or self.moved > MATCHING_NOTE_SHARE)

    def sentence(self) -> str:
        """What differs, naming the pair, for example ``new and old share 10 of 30 clips: their means
        are over different items``; empty when :attr:`matched`."""
        if self.matched:
            return ""
        if self.shared == 0 and self.unit == "items":
            return (f"{self.a} and {self.b} share no clip (their {self.union} items have no clip_id, so each "
                    "stands alone), so they are compared as independent samples (unpaired)")
        if self.shared == 0:
            return (f"{self.a} and {self.b} share none of their {self.union} clips, so they are compared as "
                    "independent samples (unpaired)")
        share = f"all {self.union}" if self.shared == self.union else f"{self.shared} of {self.union}"
        parts = [f"{self.a} and {self.b} share {share} {self.unit}"]
        if not self.proportional:
            parts.append(f"{self.a} has {_span(self.rollouts_a)} and {self.b} {_span(self.rollouts_b)} "
                         "scored rollouts per clip")
        return "; ".join(parts) + ": their means are over different items"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dictionary."""
        return {"axis": self.axis, "a": self.a, "b": self.b, "clips_a": self.clips_a, "clips_b": self.clips_b,
                "shared": self.shared, "rollouts_a": list(self.rollouts_a),
                "rollouts_b": list(self.rollouts_b), "proportional": self.proportional,
                "matched": self.matched, "moved": self.moved, "unit": self.unit}


def _span(low_high: tuple[int, int]) -> str:
    low, high = low_high
    return str(low) if low == high else f"{low}-{high}"


def clip_counts(scored: npt.NDArray[np.bool_], code: npt.NDArray[np.intp], n_groups: int,
                clip: npt.NDArray[np.intp], n_clips: int) -> IntMatrix:
    """``(groups, clips)``: how many of each group's items in each clip are ``scored``."""
    out = np.zeros((n_groups, n_clips), dtype=np.int64)
    np.add.at(out, (code[scored], clip[scored]), 1)
    return out


def pair_coverage(axis: str, a: str, b: str, counts_a: IntMatrix, counts_b: IntMatrix,
                  unit: str = "clips") -> PairCoverage:
    """:class:`PairCoverage` from two generators' scored items per clip (:func:`clip_counts` rows);
    ``unit`` (:data:`UNITS`) is what the clips are."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    has_a, has_b = counts_a > 0, counts_b > 0
    both = has_a & has_b
    # Proportional on the shared clips: n_a(c) / n_b(c) the same for every c, compared cross-multiplied.
    ca, cb = counts_a[both], counts_b[both]
    proportional = bool(np.all(ca * cb[:1] == cb * ca[:1])) if both.any() else True

    def span(counts: IntMatrix, has: npt.NDArray[np.bool_]) -> tuple[int, int]:
        return (int(counts[has].min()), int(counts[has].max())) if has.any() else (0, 0)

    moved = max(_moved(counts_a, both), _moved(counts_b, both))
    return PairCoverage(axis, a, b, int(has_a.sum()), int(has_b.sum()), int(both.sum()),
                        span(counts_a, has_a), span(counts_b, has_b), proportional, moved, unit)


def _moved(counts: IntMatrix, shared: npt.NDArray[np.bool_]) -> float:
    """The share of a generator's mean that matching on the ``shared`` clips moves: half the summed
    difference between each clip's weight in its mean (its share of the items) and in the matched one
    (each shared clip alike, the others none); 1 when no clip is shared, 0 without items."""
    total = int(counts.sum())
    if total == 0:
        return 0.0
    if not shared.any():
        return 1.0
    matched = np.where(shared, 1.0 / int(shared.sum()), 0.0)
    return float(0.5 * np.abs(counts / total - matched).sum())


def matched_weights(counts: IntMatrix, code: npt.NDArray[np.intp], clip: npt.NDArray[np.intp],
                    scored: npt.NDArray[np.bool_]) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Item weights for means of clip means over the clips every group with a scored item has.

    ``counts`` is :func:`clip_counts` of ``scored`` (one axis). A scored item of group g in a shared
    clip c weighs ``1 / counts[g, c]``, so each of g's shared clips weighs 1 in its weighted mean; every
    other item weighs 0.

    Returns:
        ``(weights, shared)``: a weight per item and, per clip, whether every such group has it.
    """
    present = counts.sum(axis=1) > 0
    shared = np.all(counts[present] > 0, axis=0) if present.any() else np.zeros(counts.shape[1], dtype=bool)
    with np.errstate(divide="ignore"):
        per_item = 1.0 / counts[code, clip]
    weights: FloatArray = np.where(scored & shared[clip], per_item, 0.0)
    return weights, shared
