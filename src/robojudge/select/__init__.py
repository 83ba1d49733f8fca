"""Best-of-N rollout selection: pick one rollout per group by a judge, a metric or the metric-calibrated
judge, and see what that selector is worth against the labels (regret, top-1 accuracy, a random pick,
the oracle).

* :func:`best_of_n` / :func:`best_of_n_suite` -- the selection over a suite's items and stored rows.
* :func:`pick_group` / :func:`pick_index` / :func:`summarize` / :func:`group_clusters` -- the pure rules
  (docs/selection.md).
* :func:`selection_scores` -- what ``--by`` names, read from the stored rows.
* :func:`write_picks` -- the picks as CSV or JSON.
"""

from robojudge.select._api import (
    GROUP_FIELDS,
    BestOfN,
    best_of_n,
    best_of_n_suite,
    group_key,
    parse_group,
    pick_record,
    summary_rows,
    summary_text,
    write_picks,
)
from robojudge.select._bon import (
    RESAMPLED,
    SKIP_REASONS,
    STATISTICS,
    BestOfNSummary,
    GroupPick,
    group_clusters,
    pick_group,
    pick_index,
    summarize,
)
from robojudge.select._sources import AXES, SelectionScores, label_values, selection_scores

__all__ = [
    "AXES",
    "GROUP_FIELDS",
    "RESAMPLED",
    "SKIP_REASONS",
    "STATISTICS",
    "BestOfN",
    "BestOfNSummary",
    "GroupPick",
    "SelectionScores",
    "best_of_n",
    "best_of_n_suite",
    "group_clusters",
    "group_key",
    "label_values",
    "parse_group",
    "pick_group",
    "pick_index",
    "pick_record",
    "selection_scores",
    "summarize",
    "summary_rows",
    "summary_text",
    "write_picks",
]
