"""How well each stored metric agrees with a suite's labels (human or planted), with bootstrap CIs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge._files import replacing
from robojudge.meta import MIN_CORRELATION_PAIRS, agreement_table
from robojudge.report._leaderboard import (
    AXES,
    Direction,
    clusters_of,
    label_scores,
    metric_columns,
    strata_of,
)
from robojudge.report._series import StoredSeries
from robojudge.report._tables import Cell, _num, is_small, md_escape, small_note
from robojudge.store import ResultRow, SafeCsvWriter
from robojudge.suite import Item

#: A correlation over fewer items than this is not given: through two points every line fits, so a
#: Pearson or Spearman of two items is +-1 whatever the metric is worth (robojudge.meta's rule).
MIN_CORRELATION_ITEMS = MIN_CORRELATION_PAIRS


#: Two series are compared for a best value when their scored items overlap this much (the shared items
#: over the items either was scored on): a few failed requests leave a judge comparable, half a suite not.
COMPARED_OVERLAP = 0.95


def compared_group(masks: Mapping[str, np.ndarray]) -> list[str]:
    """Of series scored on the items ``masks`` mark, those compared for a best value: the series scored
    on the same items as the largest set scored on exactly the same items (ties: more items, then the
    first), give or take :data:`COMPARED_OVERLAP` (shared items over the items either was scored on). A
    series scored on other items is not compared: its r rests on other rollouts; one that missed a few
    items (failed requests: 36 of 2,000 left each VLM judge alone, and a weaker one was marked best) is.
    Series with nothing scored never are."""
    groups: dict[bytes, list[str]] = {}
    for name, m in masks.items():
        if m.any():
            groups.setdefault(np.packbits(m).tobytes() + bytes([m.size % 8]), []).append(name)
    if not groups:
        return []
    ref = masks[max(groups.values(), key=lambda names: (len(names), int(masks[names[0]].sum())))[0]]
    out = []
    for name, m in masks.items():
        if m.size != ref.size:  # (masks standing for counts, judge_table without ``scored``: other items)
            continue
        shared, either = int((m & ref).sum()), int((m | ref).sum())
        if m.any() and shared >= COMPARED_OVERLAP * either:
            out.append(name)
    return out


@dataclass(frozen=True)
class LabelAgreement:
    """One metric configuration against one label axis.

    Correlations are oriented so that higher means agreement, except for a metric whose direction is
    unknown (``oriented`` False): its correlations are of the values as stored.

    Attributes:
        metric: The configuration's label (the metric id when it has one configuration).
        n_clusters: Clips among the ``n`` items.
        compared: Whether the row takes part in the best-value comparison of its axis: oriented, with
            correlations, and scored on the same items as the largest such group of rows, give or take
            5% (:func:`compared_group`); r over other items is not comparable.
        no_interval: Why its correlations show no interval though they have a value (too few clips,
            every resample alike); None otherwise. Said under ``label_agreement.md``, not a CSV column.
    """

    metric: str
    axis: str
    n: int
    pearson: float
    pearson_low: float
    pearson_high: float
    spearman: float
    spearman_low: float
    spearman_high: float
    oriented: bool = True
    n_clusters: int = 0
    compared: bool = False
    no_interval: str | None = None

    @property
    def small(self) -> bool:
        """Whether it rests on few items or clips (:func:`~robojudge.report._tables.is_small`): rough."""
        return is_small(self.n, self.n_clusters)


def label_agreement(
    rows: Sequence[ResultRow],
    items: Sequence[Item],
    higher_is_better: Direction,
    *,
    bootstrap: int = 2000,
    seed: int = DEFAULT_SEED,
    stored: StoredSeries | None = None,
) -> list[LabelAgreement]:
    """Pearson and Spearman of each stored metric configuration with the items' PA and IA labels.

    A lower-is-better metric is negated first, as RoboJudge App. B.3 does for correlations, so a
    positive value means the metric ranks rollouts like the labels; a metric of unknown direction is
    correlated as stored and marked. Each configuration of a metric is its own row. Intervals come
    from the paired cluster bootstrap over ``clip_id`` within ``source`` (RoboJudge App. E.1); items
    without a clip id are their own cluster. ``stored``: the rows already split
    (``StoredSeries.of(rows)``), read instead of ``rows``. Over fewer than
    :data:`MIN_CORRELATION_ITEMS` items both correlations are NaN (two points give +-1 by construction).
    """
    labelled = [it for it in items if it.labels is not None]
    if not labelled:
        return []
    # The same item x configuration columns (judges left out) that the metric-calibrated judge uses.
    feats = metric_columns(rows, labelled, higher_is_better, stored=stored)
    if not feats:
        return []
    human = label_scores(labelled)
    clusters = clusters_of(labelled)
    pred = {f.label: {axis: f.oriented for axis in AXES} for f in feats}
    report = agreement_table(pred, human, clusters=clusters, strata=strata_of(labelled),
                             bootstrap=bootstrap, seed=seed, pairs=[])
    out = []
    for axis in AXES:
        masks = {f.label: np.isfinite(f.values) & np.isfinite(human[axis]) for f in feats}
        group = set(compared_group({f.label: masks[f.label] for f in feats if f.direction is not None
                                    and report.cells[f.label][axis].n >= MIN_CORRELATION_ITEMS}))
        for f in feats:
            cell = report.cells[f.label][axis]
            p, s = cell.stats["pearson"], cell.stats["spearman"]
            n_clusters = len({clusters[i] for i in np.flatnonzero(masks[f.label])})
            r, rho = (p.value, p.low, p.high), (s.value, s.low, s.high)
            if cell.n < MIN_CORRELATION_ITEMS:
                r = rho = (math.nan, math.nan, math.nan)
            withheld = next((e.why for e in (p, s) if e.why and math.isfinite(e.value) and math.isnan(e.low)
                             and cell.n >= MIN_CORRELATION_ITEMS), None)
            out.append(LabelAgreement(f.label, axis, cell.n, *r, *rho, f.direction is not None, n_clusters,
                                      f.label in group, withheld))
    order = {f.label: k for k, f in enumerate(feats)}
    return sorted(out, key=lambda r: (order[r.metric], AXES.index(r.axis)))


def write_label_agreement(rows: Sequence[LabelAgreement], out_dir: str | Path, *, named: bool = True) -> None:
    """``label_agreement.csv`` and ``label_agreement.md`` in ``out_dir``; ``named`` as
    :func:`robojudge.report.write_leaderboard`'s.

    As the report's tables (``tables/metric_agreement.*``): a correlation without a value is an empty CSV
    cell (a spreadsheet read ``nan`` as text), a ``small_n`` column flags a row on few items or clips, the
    Markdown marks it with a dagger and its key, and says why an interval is withheld (audit reportdata
    F4)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields = [k for k in LabelAgreement.__dataclass_fields__ if k != "no_interval"]
    lines = [
        "| metric | axis | n | Pearson r [95% CI] | Spearman rho [95% CI] |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for r in rows:
        pearson = Cell(r.pearson, r.pearson_low, r.pearson_high, digits=2, small=r.small).marked()
        spearman = Cell(r.spearman, r.spearman_low, r.spearman_high, digits=2, small=r.small).marked()
        lines.append(f"| {md_escape(r.metric) + ('' if r.oriented else ' (as stored)')} | {r.axis} "
                     f"| {r.n} | {pearson} | {spearman} |")
    notes = []
    marked = [r for r in rows if r.small]
    if marked:
        notes.append(small_note(any(not math.isnan(r.pearson_low) for r in marked)))
    withheld: dict[str, list[str]] = {}
    for r in rows:
        if r.no_interval:
            withheld.setdefault(r.no_interval, []).append(f"{md_escape(r.metric)} {r.axis.upper()}")
    notes += [f"No interval for {', '.join(named)}: {md_escape(why)}." for why, named in withheld.items()]
    with replacing(out, named=named) as files:  # both whole, or (on an error) the old ones untouched
        with files.open(out / "label_agreement.csv", newline="") as f:
            w = SafeCsvWriter(f)
            w.writerow([*fields, "small_n"])
            for r in rows:
                d = asdict(r)
                w.writerow([*(_num(d[k]) if isinstance(d[k], float) else d[k] for k in fields), r.small])
        files.write_text(
            out / "label_agreement.md",
            "# Metrics against the suite's labels\n\nCorrelations are oriented so that positive means the "
            "metric ranks rollouts like the labels (a metric of unknown direction is marked 'as stored' and "
            "correlated as it is); intervals are paired cluster-bootstrap percentiles.\n\n"
            + "".join(f"{n}\n\n" for n in notes)
            + "\n".join(lines)
            + "\n",
        )
