"""Adding clips to a source: each boundary between splits moves one old clip at most (audit train F8)."""

from __future__ import annotations

from robojudge.suite import Item
from robojudge.train import SPLITS, assign_splits


def _items(n: int) -> list[Item]:
    return [Item(item_id=f"c{k}-g", video="x.mp4", clip_id=f"c{k}", source="s") for k in range(n)]


def _crossed(before: dict[str, str], after: dict[str, str], boundary: int) -> list[str]:
    """Old clips on the other side of the boundary after ``boundary``'s split (0: train | val, test)."""
    side = {s: SPLITS.index(s) <= boundary for s in SPLITS}
    return [i for i in before if side[before[i]] != side[after[i]]]


def test_one_more_clip_moves_at_most_one_old_clip_across_each_boundary() -> None:
    # The audit's cases: val 0.15 / test 0.05 from 9 to 10 clips took the only test clip away (largest
    # remainder: [7, 1, 1] -> [8, 2, 0]); val 0.1 / test 0.84 moved two old clips into val at 25 -> 26.
    for fractions in ({"train": 0.8, "val": 0.15, "test": 0.05}, {"train": 0.06, "val": 0.1, "test": 0.84},
                      {"train": 0.65, "val": 0.25, "test": 0.1}, {"train": 0.7, "val": 0.3}):
        for n in range(1, 40):
            for seed in (0, 16):
                before = assign_splits(_items(n), fractions, seed)
                after = assign_splits(_items(n + 1), fractions, seed)
                for boundary in (0, 1):
                    moved = _crossed(before, after, boundary)
                    assert len(moved) <= 1, (fractions, n, seed, boundary, moved)
                for first_or_last in ("train", "test"):  # the end splits never shrink as clips come in
                    had = sum(s == first_or_last for s in before.values())
                    assert sum(s == first_or_last for s in after.values()) >= had, (fractions, n, seed)
