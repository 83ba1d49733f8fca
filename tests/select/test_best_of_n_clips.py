"""Best-of-N intervals resample clips, not groups, where groups lie inside clips (``--group clip_id,prompt``).

Groups of one clip share its quality, so a bootstrap that drew groups one by one took three prompts of
a clip as three independent draws: in simulation (30-100 clips x 3 prompts) the intervals of
``selected``, ``random`` and ``oracle`` held the truth only 79-85% of the time, whatever the number of
clips. A replicate now draws whole clips, each with all of its groups; a group spread over several clips
(or without one) stays a cluster of its own.

The sharpest check is a suite whose three prompts per clip are exact copies: drawing clips, it must give
the intervals of the suite with one prompt per clip, to the last digit (the same draws), where drawing
groups gave narrower ones.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from robojudge.meta import ClusterBootstrap
from robojudge.select import (
    STATISTICS,
    best_of_n,
    group_clusters,
    pick_group,
    summarize,
    summary_text,
)
from robojudge.store import ResultRow
from robojudge.suite import Item

# Per clip: (score, label) of three candidates; the clips differ in quality (labels) and in how well
# the score picks.
CLIPS = [
    [(3, 5), (2, 4), (1, 3)],
    [(1, 2), (3, 1), (2, 2)],
    [(2, 4), (3, 4), (1, 5)],
    [(3, 2), (1, 3), (2, 1)],
    [(1, 5), (2, 5), (3, 4)],
    [(2, 1), (1, 1), (3, 3)],
    [(3, 4), (2, 2), (1, 2)],
    [(1, 3), (3, 5), (2, 4)],
]


def _suite(prompts: int) -> tuple[list[Item], list[ResultRow]]:
    """Every clip of CLIPS with ``prompts`` copies of its candidates, one group per (clip, prompt)."""
    items, rows = [], []
    for c, cands in enumerate(CLIPS):
        for p in range(prompts):
            for k, (score, label) in enumerate(cands):
                item_id = f"c{c}-p{p}-{k}"
                items.append(Item(item_id=item_id, video=f"{item_id}.mp4", clip_id=f"clip{c}",
                                  prompt_variant=f"p{p}", instruction="stack the cups",
                                  labels={"pa": label, "ia": label}))
                rows.append(ResultRow(item_id, "judge:qwen:pa", "h", "1", "ok", float(score)))
    return items, rows


def _ends(stats: dict) -> list[float]:
    return [x for name, _ in STATISTICS for x in (stats[name].low, stats[name].high)]


def test_copies_of_a_clip_are_drawn_together() -> None:
    one = best_of_n(*_suite(1), by="judge:qwen:pa", group="clip_id,prompt", bootstrap=400, seed=4)
    three = best_of_n(*_suite(3), by="judge:qwen:pa", group="clip_id,prompt", bootstrap=400, seed=4)
    assert one.summary is not None and three.summary is not None
    assert (one.summary.evaluated, three.summary.evaluated) == (8, 24)
    assert three.summary.resampled == "clips" and three.summary.n_clusters == 8
    # The copies add no information: the same eight clips, the same draws, the same intervals.
    assert _ends(three.summary.stats) == pytest.approx(_ends(one.summary.stats))
    # Drawing the 24 groups one by one (what the summary did before) narrows every absolute mean.
    by_group = summarize(three.picks, bootstrap=400, seed=4)
    assert by_group.resampled == "groups" and by_group.n_clusters == 24
    for name in ("selected", "random", "oracle"):
        wide, narrow = three.summary.stats[name], by_group.stats[name]
        assert narrow.high - narrow.low < 0.8 * (wide.high - wide.low), name
    text = summary_text(three)
    assert "95% percentile intervals over 400 bootstrap replicates of clips (8 clips, each drawn with all " \
           "of its compared groups)" in text
    summary = three.to_dict()["summary"]
    assert (summary["resampled"], summary["n_clusters"]) == ("clips", 8)
    json.dumps(three.to_dict())  # JSON-ready
    # One group per clip: the clips are the groups, and the summary says so.
    assert one.summary.resampled == "clips" and "of clips (one compared group per clip)" in summary_text(one)


def test_the_replicates_draw_each_clip_with_all_of_its_groups() -> None:
    clips = ["c1", "c1", "c2", None, "c3", "c2", "c3"]  # one group with candidates in several clips
    codes, kind = group_clusters(clips)
    assert codes.tolist() == [0, 0, 1, 2, 3, 1, 3] and kind == "clips and groups"
    assert group_clusters([None, None]) == (pytest.approx([0, 1]), "groups")
    assert group_clusters(["b", "a", "b"])[1] == "clips"
    rng = np.random.default_rng(0)
    picks = [pick_group((f"g{i}",), ["x", "y", "z"], rng.normal(size=3), rng.integers(1, 6, 3))
             for i in range(len(clips))]
    s = summarize(picks, clips=clips, bootstrap=300, seed=9, level=0.9)
    assert (s.resampled, s.n_clusters) == ("clips and groups", 4)
    counts = ClusterBootstrap(codes, n_replicates=300, seed=9).counts  # (B, clusters)
    selected = []
    for row in counts:  # each replicate: every group of a drawn clip, as often as the clip was drawn
        drawn = [p for p, c in zip(picks, codes, strict=True) for _ in range(int(row[c]))]
        selected.append(np.mean([p.label for p in drawn]))
    assert s.stats["selected"].low == pytest.approx(np.quantile(selected, 0.05))
    assert s.stats["selected"].high == pytest.approx(np.quantile(selected, 0.95))
    with pytest.raises(ValueError, match=r"clips must have one entry per pick \(7\), got 2"):
        summarize(picks, clips=["c1", "c2"])


def test_groups_in_two_clips_get_no_interval() -> None:
    items, rows = _suite(3)
    keep = {"clip0", "clip1"}
    items = [it for it in items if it.clip_id in keep]
    res = best_of_n(items, rows, by="judge:qwen:pa", group="clip_id,prompt", bootstrap=200, seed=0)
    assert res.summary is not None and res.summary.evaluated == 6 and res.summary.n_clusters == 2
    for name, e in res.summary.stats.items():
        assert math.isnan(e.low) and math.isnan(e.high), name
        assert e.why == "scored items in 2 cluster(s); an interval needs at least 3", name
    assert "no intervals: the compared groups lie in 2 clips, and a bootstrap needs at least 3" \
        in summary_text(res)


def test_groups_across_clips_are_each_their_own_cluster() -> None:
    # Grouped by prompt alone, each group holds candidates of every clip: no clip to draw.
    res = best_of_n(*_suite(3), by="judge:qwen:pa", group="prompt", bootstrap=200, seed=0)
    assert res.summary is not None and res.summary.evaluated == 3
    assert (res.summary.resampled, res.summary.n_clusters) == ("groups", 3)
    assert "bootstrap replicates of groups (no compared group lies within one clip, so the groups are " \
           "taken as independent)" in summary_text(res)
