"""Best-of-N over a suite: group its rollouts, pick one per group by a stored score, compare with labels."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge._files import replace_text, replacing
from robojudge.meta import MIN_CLUSTERS
from robojudge.report import unset_name
from robojudge.select._bon import STATISTICS, BestOfNSummary, GroupPick, pick_group, summarize
from robojudge.select._sources import AXES, SelectionScores, label_values, selection_scores
from robojudge.store import ResultRow, SafeCsvWriter
from robojudge.suite import Item, meta_text

GROUP_FIELDS = ("clip_id", "prompt", "instruction", "prompt_variant", "source", "task", "embodiment",
                "regime", "split", "generator", "main_view")
"""Item fields a group key may use (and ``meta.KEY`` for a value of the item's ``meta``).

``prompt`` is the prompt a rollout was generated from: its ``prompt_variant`` when set, else its
``instruction``.
"""


def parse_group(spec: str | Sequence[str]) -> tuple[str, ...]:
    """The grouping fields of ``clip_id,prompt`` (or a list), checked.

    Raises:
        ValueError: No field, a repeated one, or one that is not in :data:`GROUP_FIELDS` or ``meta.KEY``.
    """
    fields = [f.strip() for f in spec.split(",")] if isinstance(spec, str) else [f.strip() for f in spec]
    fields = [f for f in fields if f]
    if not fields:
        raise ValueError("--group needs at least one field, e.g. clip_id,prompt")
    for f in fields:
        if f not in GROUP_FIELDS and not (f.startswith("meta.") and len(f) > 5):
            choices = ", ".join(GROUP_FIELDS)
            raise ValueError(f"--group: cannot group by {f!r}; choose from {choices} or meta.KEY")
    if len(set(fields)) != len(fields):
        raise ValueError(f"--group: a field is repeated in {','.join(fields)}")
    return tuple(fields)


def _value(item: Item, name: str) -> str | None:
    if name.startswith("meta."):
        # as results export and report --by meta.KEY read it: absent, null and blank text are one unset group
        return meta_text(item, name[5:])
    if name == "prompt":
        value: Any = item.prompt_variant if item.prompt_variant is not None else item.instruction
    else:
        value = getattr(item, name)
    if value is None:
        return None
    value = getattr(value, "value", value)  # enums by their value
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def group_key(item: Item, fields: Sequence[str]) -> tuple[str | None, ...]:
    """The values of ``fields`` on ``item`` (None where empty: such items group apart from every value,
    even one spelt ``(unset)``; :func:`shown_keys` names them)."""
    return tuple(_value(item, f) for f in fields)


def shown_keys(keys: Sequence[tuple[str | None, ...]]) -> list[tuple[str, ...]]:
    """``keys`` as printed: an empty field is ``(unset)``, or, where some group's real value of that
    field is spelt so, the name :func:`robojudge.report.unset_name` gives instead."""
    missing = [unset_name(k[f] for k in keys) for f in range(len(keys[0]))] if keys else []
    return [tuple(missing[f] if v is None else v for f, v in enumerate(k)) for k in keys]


@dataclass(frozen=True)
class BestOfN:
    """A Best-of-N selection and, when the suite has labels, its comparison.

    Attributes:
        by: What the pick ranks by, as written.
        described: What that is.
        group_by: The grouping fields.
        label: The label axis compared on (None when the suite has no such label).
        picks: One per group, in the order the groups first appear in the suite.
        summary: The comparison (None without labels).
        sign: 1, or -1 when the stored metric is better lower (picks hold the stored value).
        generators: The ``generator`` of each item that has one (written beside each pick).
    """

    by: str
    described: str
    group_by: tuple[str, ...]
    label: str | None
    picks: list[GroupPick]
    summary: BestOfNSummary | None
    sign: float = 1.0
    generators: dict[str, str] = field(default_factory=dict)

    def pick_counts(self, *, tied: bool = False) -> dict[str, int]:
        """How many groups picked each generator (``(unset)`` for items without one, or another name when a
        generator is named so: :func:`robojudge.report.unset_name`), most first. ``tied``: only the picks
        the tie rule made (several candidates at the top score), which say nothing of a preference."""
        counts: dict[str, int] = {}
        missing = unset_name(self.generators.values())
        for p in self.picks:
            if p.item_id is not None and (p.tied > 1 or not tied):
                g = self.generators.get(p.item_id, missing)
                counts[g] = counts.get(g, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "described": self.described,
            "group_by": list(self.group_by),
            "label": self.label,
            "summary": None if self.summary is None else self.summary.to_dict(),
            "picks_per_generator": self.pick_counts(),
            "tie_picks_per_generator": self.pick_counts(tied=True),
            "picks": [pick_record(self, p) for p in self.picks],
        }


def pick_record(result: BestOfN, p: GroupPick) -> dict[str, Any]:
    """One pick as a flat record: group fields, then the pick (NaN as None, the score as stored), then the
    pick's ``generator`` unless the group has that field already (it is then the group's)."""
    rec = {k: v for k, v in asdict(p).items() if k != "group"}
    rec["score"] = result.sign * p.score if not math.isnan(p.score) else None
    out: dict[str, Any] = dict(zip(result.group_by, p.group, strict=True))
    out.update({k: None if isinstance(v, float) and math.isnan(v) else v for k, v in rec.items()})
    if "generator" not in result.group_by:
        out["generator"] = None if p.item_id is None else result.generators.get(p.item_id)
    return out


def best_of_n(
    items: Sequence[Item],
    rows: Sequence[ResultRow],
    *,
    by: str,
    group: str | Sequence[str] = ("clip_id", "prompt"),
    label: str | None = None,
    bootstrap: int = 2000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    higher_is_better: Callable[[str], bool] | None = None,
    orient: bool | None = None,
    n_folds: int = 5,
    alpha: float = 1.0,
    prediction: str = "expected",
) -> BestOfN:
    """Pick the best rollout of each group of ``items`` by ``by``, and compare with the labels.

    Args:
        items: The suite's items.
        rows: Its stored results.
        by: What to rank by (see :mod:`robojudge.select._sources`).
        group: Grouping fields (see :data:`GROUP_FIELDS`).
        label: Label axis to compare on: ``pa``, ``ia`` or ``overall``; default the axis ``by`` scores,
            else ``overall``.
        bootstrap: Bootstrap replicates over the groups' clips (0: no intervals; see
            :func:`robojudge.select.summarize`).
        seed: Seed of the bootstrap and of the calibrated judge's folds.
        level: Interval coverage.
        higher_is_better: A metric's direction (default :func:`robojudge.metric_info.direction`).
        orient: Overrides the direction of a stored metric.
        n_folds: Folds of the calibrated judge.
        alpha: Its L2 penalty.
        prediction: Its score, ``expected`` or ``class``.

    Raises:
        ValueError: A bad group field, source or label axis, or nothing to read.
    """
    fields = parse_group(group)
    if label is not None and label not in AXES:
        raise ValueError(f"--label must be one of {', '.join(AXES)}, got {label!r}")
    source: SelectionScores = selection_scores(
        by, rows, items, higher_is_better=higher_is_better, orient=orient, n_folds=n_folds, alpha=alpha,
        seed=seed, prediction=prediction,
    )
    axis = label or source.axis or "overall"
    y = label_values(items, axis)
    has_labels = bool(np.isfinite(y).any())
    members: dict[tuple[str | None, ...], list[int]] = {}
    for i, it in enumerate(items):
        members.setdefault(group_key(it, fields), []).append(i)
    picks = []
    clips: list[str | None] = []  # the clip of each group: the bootstrap draws clips with all their groups
    for key, idx in zip(shown_keys(list(members)), members.values(), strict=True):
        ids = [items[i].item_id for i in idx]
        picks.append(pick_group(key, ids, source.scores[idx], y[idx] if has_labels else None,
                                source.tolerance))
        held = {items[i].clip_id for i in idx}
        clips.append(held.pop() if len(held) == 1 else None)  # None: several clips, or none known
    summary = (summarize(picks, clips=clips, bootstrap=bootstrap, seed=seed, level=level) if has_labels
               else None)
    generators = {it.item_id: it.generator for it in items if it.generator}
    return BestOfN(by, source.described, fields, axis if has_labels else None, picks, summary, source.sign,
                   generators)


def best_of_n_suite(manifest: str | Path, *, db: str | None = None, **kwargs: Any) -> BestOfN:
    """:func:`best_of_n` on a suite manifest and its store (by default, read-only, the store of the run
    folder the manifest lies in, else ``runs/<manifest name>/results.sqlite``), or on a run folder (its
    store, and every manifest behind it: :func:`robojudge.report.load_run_results`). Results whose inputs
    changed since they were computed
    are left out (:func:`robojudge.run.stale_rows`). Keyword arguments go to :func:`best_of_n`."""
    if Path(manifest).is_dir():
        from robojudge.report import load_run_results
        from robojudge.run import stale_rows

        run = load_run_results(manifest, db, stale=stale_rows)
        return best_of_n(run.items, run.rows, **kwargs)
    from robojudge.run import load_suite_results

    found = load_suite_results(manifest, db)
    return best_of_n(found.items, found.rows, **kwargs)


def write_picks(result: BestOfN, path: str | Path) -> Path:
    """Write the picks: JSON (with the summary) for ``.json``, else CSV (one row per group)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".json":
        return replace_text(out, json.dumps(result.to_dict(), indent=2) + "\n")
    records = [pick_record(result, p) for p in result.picks]
    columns = [*result.group_by, *(k for k in GroupPick.__dataclass_fields__ if k != "group")]
    if "generator" not in result.group_by:  # else the group's column is the pick's generator already
        columns.append("generator")
    with replacing() as files, files.open(out, newline="") as f:  # the old file or the whole new one
        w = SafeCsvWriter(f)
        w.writerow(columns)
        for rec in records:
            w.writerow(["" if rec.get(c) is None else rec[c] for c in columns])
    return out


def summary_rows(result: BestOfN) -> list[tuple[str, str, str]]:
    """``(statistic, value with interval, meaning)`` rows of the summary (empty without labels)."""
    s = result.summary
    if s is None:
        return []
    out = []
    for name, meaning in STATISTICS:
        e = s.stats[name]
        value = "-" if math.isnan(e.value) else f"{e.value:.3f}"
        if not math.isnan(e.low):
            value += f" [{e.low:.3f}, {e.high:.3f}]"
        out.append((name, value, meaning))
    return out


def summary_text(result: BestOfN) -> str:
    """One paragraph on what was picked and compared."""
    n = len(result.picks)
    head = f"Best-of-N by {result.described}, groups by {','.join(result.group_by)}: {n} groups"
    s = result.summary
    if s is None:
        alone = sum(p.n < 2 for p in result.picks)
        lone = (f" {alone} of the groups {'has' if alone == 1 else 'have'} one rollout, so nothing is chosen "
                "there (--group sets what makes a group)." if alone else "")
        return head + "; the suite has no labels to compare the picks with." + lone + _per_generator(result)
    skipped = ", ".join(f"{k} {v}" for k, v in s.skipped.items() if v)
    whys = {name: e.why for name, e in s.stats.items() if e.why}  # withheld (robojudge.meta.interval_gate)
    if s.n_clusters < MIN_CLUSTERS and whys:  # too few clusters to resample
        ci = (f"no intervals: a bootstrap over groups needs at least {MIN_CLUSTERS} compared groups"
              if s.resampled == "groups" else
              f"no intervals: the compared groups lie in {s.n_clusters} {_clusters_word(s)}, and a bootstrap "
              f"needs at least {MIN_CLUSTERS}")
    else:
        ci = (f"{s.level:.0%} percentile intervals over {s.n_replicates} bootstrap replicates of "
              f"{_resampled_text(s)}" if s.n_replicates else "no intervals")
        # A statistic the same in every resample (every pick at the oracle): its interval is withheld.
        for why in dict.fromkeys(whys.values()):
            ci += f"; no interval for {', '.join(n for n, w in whys.items() if w == why)}: {why}"
    mean_n = f" (mean N {s.mean_n:.2f}{f'; ties broken by item id in {s.ties}' if s.ties else ''})"
    text = f"{head}, {s.evaluated} compared on {result.label} labels{mean_n if s.evaluated else ''}"
    text += (f"; left out: {skipped}" if skipped else "") + f"; {ci}."
    return text + _per_generator(result)


def _clusters_word(s: BestOfNSummary) -> str:
    if s.resampled == "clips":
        return "clip" if s.n_clusters == 1 else "clips"
    return "cluster" if s.n_clusters == 1 else "clusters"


def _resampled_text(s: BestOfNSummary) -> str:
    """What the bootstrap drew, as the summary says it."""
    if s.resampled == "clips":
        if s.n_clusters == s.evaluated:
            return "clips (one compared group per clip)"
        return f"clips ({s.n_clusters} clips, each drawn with all of its compared groups)"
    if s.resampled == "groups":
        return "groups (no compared group lies within one clip, so the groups are taken as independent)"
    return (f"clips, each with all of its compared groups, and of the groups that span several clips, each "
            f"on its own ({s.n_clusters} clusters)")


def _per_generator(result: BestOfN) -> str:
    counts = result.pick_counts()
    if not result.generators or not counts:
        return ""
    text = " Picks per generator: " + ", ".join(f"{g} {n}" for g, n in counts.items())
    tied = result.pick_counts(tied=True)
    if tied:  # (a pick among tied candidates goes to the smallest item id: no preference)
        text += "; of these, made by the tie rule (smallest item id): " + ", ".join(
            f"{g} {n}" for g, n in tied.items())
    return text + "."
