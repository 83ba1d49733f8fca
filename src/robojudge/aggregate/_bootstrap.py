"""Cluster-bootstrap intervals for AFS, RoboPhyscore and the level totals per group, and the paired
difference of two groups (``aggregate scores --bootstrap``).

Each replicate redraws the clusters (clips, given as a column; by default each item, or each row of a
table without ``item_id``) with replacement, within each ``source`` where the table has that column,
with :class:`robojudge.meta.ClusterBootstrap`, as the generator leaderboard and ``meta agreement`` do.
A row then counts as often as its cluster was drawn, and the whole of :func:`scores_from_table` is done
again on those counts: the pool percentiles of ``strategy="percentile"``, each group's metric means
with their missing-value rule, the sums of eq. 2 and eq. 4 and the macro average over regimes. One
draw serves every group, so the difference of two groups is paired on the clips they share.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge.aggregate._normalize import (
    POOL_NORMALIZED_RAW,
    POOL_PERCENTILES,
    Strategy,
    affine_clip,
    normalize,
)
from robojudge.aggregate._scores import Missing, average_full_score, robophyscore
from robojudge.aggregate._tables import (
    ITEM,
    SET_PREFIX,
    AggregateInputError,
    Note,
    _where,
    scores_from_table,
    to_long,
)
from robojudge.meta import (
    CONSTANT_WHYS,
    ClusterBootstrap,
    constant_replicates,
    interval_gate,
    lone_clusters_note,
    share_above,
    summarize_replicates,
)
from robojudge.taxonomy import load_taxonomy

if TYPE_CHECKING:
    import pandas as pd

FloatArray = npt.NDArray[np.float64]

#: The column that stratifies the resampling where a table has it, as in the rest of robojudge.
STRATA_COLUMN = "source"
#: The statistics whose difference :func:`bootstrap_scores` gives for two groups, in this order (the
#: level totals follow them, as the table has them).
DIFFERENCE_STATISTICS = ("afs", "robophyscore", "level_1", "level_2", "level_3", "level_4")
# Replicates and rows handled at once are kept under this many cells (memory, not results).
_CELLS = 4_000_000
_SHOWN = 5


@dataclass(frozen=True)
class ScoreDifference:
    """``a`` minus ``b`` on one statistic, on the same cluster draws (paired).

    Attributes:
        statistic: ``"afs"``, ``"robophyscore"`` or ``"level_<k>"``.
        a: The first group's label, ``b`` the second's (``/`` joins the values of several ``by`` columns).
        value: The difference of the point estimates.
        low: Lower end of its percentile interval (NaN where withheld, with ``why``).
        high: Upper end.
        prob_a_above: Share of the replicates, where both groups have a value, in which ``a`` scores above
            ``b``; a tie (equal up to rounding, 1e-12) counts one half, so two groups equal on every clip
            give 0.5. NaN where the bootstrap cannot say (too few clusters or defined replicates).
        n_clusters: Clusters behind the thinner of the two groups.
        n_shared: Clusters holding rows of both groups: the pairing rests on those.
        why: Why no interval is shown (or no difference: a group without a value), or None.
        replicates: Replicates the interval rests on where fewer than drawn, else None.
    """

    statistic: str
    a: str
    b: str
    value: float
    low: float
    high: float
    prob_a_above: float
    n_clusters: int
    n_shared: int
    why: str | None = None
    replicates: int | None = None


@dataclass(frozen=True)
class BootstrapScores:
    """Output of :func:`bootstrap_scores`.

    Attributes:
        table: :func:`scores_from_table`'s frame with ``<name>_low`` and ``<name>_high`` after ``afs``,
            ``robophyscore`` and each ``level_<k>`` (NaN where withheld; ``why`` says why).
        differences: One :class:`ScoreDifference` per statistic of :data:`DIFFERENCE_STATISTICS` (those
            the table has) when two groups were named, else empty.
        why: ``(group label, statistic) -> reason`` for every interval withheld from a value.
        n_replicates: Replicates drawn.
        seed: Their seed.
        level: Coverage of the intervals.
        n_clusters: Clusters resampled.
        n_strata: Strata they were resampled within (1 without a ``source`` column).
        n_lone_clusters: Clusters alone in their stratum (:func:`robojudge.meta.lone_clusters_note`).
        cluster: The column the clusters came from (None: the item, or the row).
        strata: The column the strata came from, or None.
        replicates: Statistic (those with intervals, and the ``subdim_<CODE>`` totals) -> its value in
            every replicate, ``(n_replicates, groups)``, the groups in the rows' order of ``table``: for
            a statistic of your own over the same draws.
    """

    table: pd.DataFrame = field(repr=False)
    differences: tuple[ScoreDifference, ...]
    why: dict[tuple[str, str], str]
    n_replicates: int
    seed: int | None
    level: float
    n_clusters: int
    n_strata: int
    n_lone_clusters: int = 0
    cluster: str | None = None
    strata: str | None = None
    replicates: dict[str, FloatArray] = field(default_factory=dict, repr=False)

    def differences_frame(self) -> pd.DataFrame:
        """:attr:`differences` as a frame, one row per statistic (the CSV of ``aggregate scores --diff``)."""
        import pandas as pd

        return pd.DataFrame([{
            "statistic": d.statistic, "a": d.a, "b": d.b, "difference": d.value, "low": d.low,
            "high": d.high, "p_a_above_b": d.prob_a_above, "n_clusters": d.n_clusters,
            "n_shared_clusters": d.n_shared, "why": d.why or ""} for d in self.differences],
            columns=["statistic", "a", "b", "difference", "low", "high", "p_a_above_b", "n_clusters",
                     "n_shared_clusters", "why"])


@dataclass
class _Rows:
    """The long table as arrays: per row its cell (group, or group and regime), output group, metric,
    raw value and cluster (-1: a set-level row, held fixed)."""

    cell: npt.NDArray[np.intp]
    group: npt.NDArray[np.intp]
    metric: npt.NDArray[np.object_]
    value: FloatArray
    cluster: npt.NDArray[np.intp]
    n_cells: int
    n_groups: int
    cell_group: npt.NDArray[np.intp]
    labels: list[str]


def bootstrap_scores(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    bootstrap: int = 1000,
    cluster: str | None = None,
    seed: int | None = DEFAULT_SEED,
    level: float = 0.95,
    diff: tuple[str, str] | None = None,
    normalized: bool = False,
    strategy: Strategy = "table",
    macro: str | None = None,
    missing: Missing = "nan",
    metrics: Sequence[str] | None = None,
    source: str | Path = "table",
    note: Note | None = None,
) -> BootstrapScores:
    """:func:`scores_from_table` with percentile cluster-bootstrap intervals for ``afs``, ``robophyscore``
    and ``level_<k>``, and the paired difference of two groups (``aggregate scores --bootstrap``).

    Args:
        df: A wide or long metric table, as for :func:`scores_from_table`.
        by: Grouping columns; one output row per group.
        bootstrap: Replicates (at least 1).
        cluster: Column holding each row's cluster (e.g. ``clip_id``): the rows of a cluster are drawn
            together, in every group, so groups on the same clips are compared on the same draws. None:
            each item is its own cluster (each row, in a table without ``item_id``). Where the table has
            a ``source`` column the clusters are drawn within each source. Set-level rows (``group:...``
            items, such as FVD per generator) belong to no clip: they keep their value in every replicate,
            so their own uncertainty is left out (``note`` says so).
        seed: Seed of the draws (default :data:`robojudge.DEFAULT_SEED`; None: fresh ones).
        level: Coverage of the intervals.
        diff: Two group labels ``(a, b)``: adds ``a`` minus ``b`` on AFS, RoboPhyscore and each level.
        normalized: As in :func:`scores_from_table`, and so are ``strategy``, ``macro``, ``missing``,
            ``metrics``, ``source`` and ``note`` (which also hears of withheld intervals).

    Returns:
        A :class:`BootstrapScores`. An interval is withheld (NaN, reason in ``why``) where the group's
        values lie in fewer than :data:`robojudge.meta.MIN_CLUSTERS` clusters, where fewer than half of
        the replicates give it a value, or where every replicate gives the same value.

    Raises:
        AggregateInputError: A bad table (as for :func:`scores_from_table`), a bad ``cluster`` column, a
            cluster in two sources, ``bootstrap`` below 1, a ``level`` outside (0, 1) or an unknown group
            in ``diff``.
    """
    if bootstrap < 1:
        raise AggregateInputError(f"the bootstrap needs at least 1 replicate, got {bootstrap}")
    if not 0 < level < 1:
        raise AggregateInputError(f"the interval level must lie in (0, 1), got {level}")
    keys = list(by)
    point = scores_from_table(df, by=keys, normalized=normalized, strategy=strategy, macro=macro,
                              missing=missing, metrics=metrics, source=source, note=note)
    frame = df.reset_index(drop=True)
    frame.attrs = dict(df.attrs)  # (whether row i is line i + 2 of a CSV, for the messages)
    long = to_long(df, keys + ([macro] if macro else []), [], source)  # (its notes were given above)
    rows, labels, strata = _rows(frame, long, keys, macro, cluster, source)
    boot_rows = rows.cluster >= 0
    boot = ClusterBootstrap(labels[boot_rows], None if strata is None else strata[boot_rows], bootstrap, seed)
    rows.cluster[boot_rows] = boot.item_cluster
    selected = list(metrics) if metrics else None
    reps = {name: np.full((bootstrap, rows.n_groups), np.nan) for name in _statistics(point, subdims=True)}
    step = max(1, _CELLS // max(1, len(rows.value)))
    for span, counts in boot.count_chunks(step):
        for name, values in _replicate(rows, counts, normalized, strategy, missing, selected, macro).items():
            if name in reps:
                reps[name][span] = values

    clusters = np.array([np.unique(rows.cluster[(rows.group == g) & boot_rows & np.isfinite(rows.value)]).size
                         for g in range(rows.n_groups)], dtype=np.int64)
    table = point.copy()
    why: dict[tuple[str, str], str] = {}
    partial: list[str] = []
    for name in _statistics(point):
        rep = reps[name]
        value = point[name].to_numpy(dtype=float)
        low, high, _ = summarize_replicates(rep.T, level)
        keep, reason, used = interval_gate(np.isfinite(rep).sum(axis=0), clusters, bootstrap,
                                        constant=constant_replicates(rep.T),
                                        one_per_stratum=boot.one_per_stratum)
        keep &= np.isfinite(value)
        for g in np.flatnonzero(keep):
            if used[g] is not None:
                partial.append(f"{rows.labels[g]} {name} {used[g]} of {bootstrap}")
        for g in np.flatnonzero(~keep & np.isfinite(value)):
            why[(rows.labels[g], name)] = str(reason[g])
        at = table.columns.get_loc(name) + 1
        table.insert(at, f"{name}_low", np.where(keep, low, np.nan))
        table.insert(at + 1, f"{name}_high", np.where(keep, high, np.nan))
    differences = () if diff is None else _differences(diff, rows, reps, point, clusters, boot, level, source)
    if note is not None:
        _notes(note, why, differences, boot, rows, cluster, "items" if "_item" in long.columns else "rows",
               strata is not None)
        if partial:
            more = f" and {len(partial) - _SHOWN} more" if len(partial) > _SHOWN else ""
            note(f"some intervals rest on fewer replicates than drawn (the others draw none of the "
                 f"group's clips with a value): {', '.join(partial[:_SHOWN])}{more}")
    return BootstrapScores(table, differences, why, bootstrap, seed, level, boot.n_clusters, boot.n_strata,
                           boot.n_lone_clusters, cluster, STRATA_COLUMN if strata is not None else None, reps)


def _statistics(point: pd.DataFrame, subdims: bool = False) -> list[str]:
    """The columns of ``point`` that get an interval; with ``subdims``, the sub-dimension totals too (their
    replicates are kept, without intervals: 36 more columns would bury the headline ones)."""
    return [c for c in point.columns if c in ("afs", "robophyscore") or str(c).startswith("level_")
            or (subdims and str(c).startswith("subdim_"))]


def _text(frame: pd.DataFrame, column: str) -> npt.NDArray[np.object_]:
    col = frame[column]
    text = col.astype(object).where(col.notna(), "").astype(str).str.strip()
    return np.asarray(text.to_numpy(), dtype=object)


def _rows(frame: pd.DataFrame, long: pd.DataFrame, keys: list[str], macro: str | None, cluster: str | None,
          source: str | Path) -> tuple[_Rows, npt.NDArray[np.object_], npt.NDArray[np.object_] | None]:
    """The long table's rows as :class:`_Rows`, with each row's cluster and stratum label; with item ids,
    completed by a NaN row for every (item, metric) of a group that has no row, so that an item drawn
    without a value counts as missing, as :func:`~robojudge.aggregate._tables.coverage` counts it."""
    import pandas as pd

    at = long["_row"].to_numpy(dtype=np.intp)
    has_item = "_item" in long.columns
    is_set = (long["_item"].astype(str).str.startswith(SET_PREFIX).to_numpy() if has_item
              else np.zeros(len(long), dtype=bool))
    if cluster is not None:
        if cluster not in frame.columns:
            raise AggregateInputError(f"{source}: no column {cluster!r} to take the clusters from "
                                      f"(--cluster); columns are {', '.join(map(str, frame.columns))}")
        labels = _text(frame, cluster)[at]
        empty = (labels == "") & ~is_set
        if empty.any():
            first = int(at[empty][0])
            item = f", item {frame[ITEM].iloc[first]!r}" if ITEM in frame.columns else ""
            raise AggregateInputError(f"{source} {_where(frame, first)}{item}, column {cluster!r}: empty "
                                      "cluster cell; give every row its clip (the rows of one clip share a "
                                      "value), or leave out --cluster")
    elif has_item:
        labels = long["_item"].astype(str).to_numpy(dtype=object)
    else:
        labels = np.asarray([f"row {r}" for r in at], dtype=object)
    strata = _text(frame, STRATA_COLUMN)[at] if STRATA_COLUMN in frame.columns else None
    work = pd.DataFrame({"metric": long["metric"].astype(str).to_numpy(),
                         "value": long["value"].to_numpy(float), "label": labels,
                         "stratum": strata if strata is not None else "", "at": at, "set": is_set})
    cell_keys = keys + ([macro] if macro else [])
    work["cell"] = long.groupby(cell_keys, sort=True).ngroup().to_numpy() if cell_keys else 0
    work["group"] = long.groupby(keys, sort=True).ngroup().to_numpy() if keys else 0
    _check_clusters(frame, work, cluster, strata is not None, source)
    if has_item:
        work["item"] = long["_item"].astype(str).to_numpy()
        items = work[~work["set"]]
        per = items.drop_duplicates(["cell", "item"])[["cell", "item", "label", "stratum", "at", "group"]]
        grid = per.merge(items[["cell", "metric"]].drop_duplicates(), on="cell")
        have = items[["cell", "item", "metric"]].assign(_have=True)
        grid = grid.merge(have, on=["cell", "item", "metric"], how="left")
        absent = grid[grid["_have"].isna()].drop(columns="_have").assign(value=np.nan, set=False)
        work = pd.concat([work, absent[work.columns]], ignore_index=True) if len(absent) else work
    if keys:  # (each group's label from its first row: the values of its keys, joined by "/")
        _, leads = np.unique(work["group"].to_numpy()[:len(long)], return_index=True)
        labels_out = ["/".join(map(str, long[keys].iloc[i])) for i in leads]
    else:
        labels_out = ["all rows"]
    cell_group = np.zeros(int(work["cell"].max()) + 1 if len(work) else 0, dtype=np.intp)
    cell_group[work["cell"].to_numpy()] = work["group"].to_numpy()
    out = _Rows(cell=work["cell"].to_numpy(dtype=np.intp), group=work["group"].to_numpy(dtype=np.intp),
                metric=work["metric"].to_numpy(dtype=object), value=work["value"].to_numpy(dtype=float),
                cluster=np.where(work["set"].to_numpy(dtype=bool), -1, 0).astype(np.intp),
                n_cells=len(cell_group), n_groups=len(labels_out), cell_group=cell_group, labels=labels_out)
    return (out, work["label"].to_numpy(dtype=object),
            work["stratum"].to_numpy(dtype=object) if strata is not None else None)


def _check_clusters(frame: pd.DataFrame, work: pd.DataFrame, cluster: str | None, stratified: bool,
                    source: str | Path) -> None:
    """Each item in one cluster, each cluster in one source; the error names two lines that disagree."""
    part = work[~work["set"]]
    what = f"column {cluster!r}" if cluster else "item"
    if cluster is not None and ITEM in frame.columns:
        items = frame[ITEM].astype(str).to_numpy()[part["at"].to_numpy()]
        spread = part.assign(_item=items).groupby("_item")["label"].nunique()
        if (spread > 1).any():
            item = spread[spread > 1].index[0]
            lines = part[items == item].drop_duplicates("label")["at"].head(2).tolist()
            raise AggregateInputError(f"{source}: item {item!r} is in two clusters of {what} "
                                      f"({', '.join(_where(frame, int(r)) for r in lines)}); an item's rows "
                                      "belong to one clip")
    if stratified:
        spread = part.groupby("label")["stratum"].nunique()
        if (spread > 1).any():
            label = spread[spread > 1].index[0]
            lines = part[part["label"] == label].drop_duplicates("stratum")["at"].head(2).tolist()
            sources = [str(part.loc[part["at"] == r, "stratum"].iloc[0]) for r in lines]
            raise AggregateInputError(
                f"{source}: cluster {label!r} ({what}) lies in two sources: {_where(frame, int(lines[0]))} "
                f"has {STRATA_COLUMN} {sources[0]!r}, {_where(frame, int(lines[1]))} {sources[1]!r}; the "
                f"bootstrap draws clips within each {STRATA_COLUMN}, so a clip belongs to one")


def _weighted_percentiles(x: FloatArray, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The bounds of :func:`~robojudge.aggregate.percentile_bounds` for each row of ``weights``: the
    percentiles of ``x`` with each value repeated as often as its row weight says (numpy's linear
    interpolation, the same arithmetic), NaN where fewer than two distinct values are drawn."""
    ok = np.isfinite(x)
    order = np.argsort(x[ok], kind="stable")
    xs = x[ok][order]
    w = weights[:, ok][:, order]
    cum = np.cumsum(w, axis=1)
    n = cum[:, -1] if xs.size else np.zeros(len(weights))
    ends = []
    for q in POOL_PERCENTILES:
        pos = q / 100.0 * np.maximum(n - 1, 0)
        k0 = np.floor(pos)
        t = pos - k0
        j0 = np.minimum((cum <= k0[:, None]).sum(axis=1), max(xs.size - 1, 0))
        j1 = np.minimum((cum <= np.minimum(k0 + 1, n - 1)[:, None]).sum(axis=1), max(xs.size - 1, 0))
        a, b = (xs[j0], xs[j1]) if xs.size else (np.full(len(n), np.nan), np.full(len(n), np.nan))
        d = b - a
        ends.append(np.where(t >= 0.5, b - d * (1 - t), a + d * t))  # (numpy's lerp, for equal results)
    lo, hi = ends
    bad = ~(hi > lo) | (n <= 0)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def _replicate(rows: _Rows, counts: npt.NDArray[np.int32], normalized: bool, strategy: Strategy,
               missing: Missing, selected: list[str] | None, macro: str | None) -> dict[str, FloatArray]:
    """Every statistic per output group, ``(b, n_groups)``, for a block of cluster ``counts``."""
    tax = load_taxonomy()
    b = counts.shape[0]
    weights = np.ones((b, len(rows.value)))
    drawn = rows.cluster >= 0
    weights[:, drawn] = counts[:, rows.cluster[drawn]]
    means: dict[str, FloatArray] = {}
    for metric in dict.fromkeys(rows.metric.tolist()):
        mine = np.flatnonzero(rows.metric == metric)
        x, w = rows.value[mine], weights[:, mine]
        spec = tax[metric]
        pooled = (not normalized and strategy == "percentile"
                  and (spec.uses_pool_percentiles or metric in POOL_NORMALIZED_RAW))
        if pooled:
            lo, hi = _weighted_percentiles(x, w)
            with np.errstate(invalid="ignore"):
                v = affine_clip(x[None, :], lo[:, None], hi[:, None], spec.higher_is_better)  # type: ignore[arg-type]
        else:
            v = np.broadcast_to(x if normalized else normalize(metric, x, strategy=strategy, pool=x), w.shape)
        ok = np.isfinite(v)
        onehot = np.zeros((len(mine), rows.n_cells))
        onehot[np.arange(len(mine)), rows.cell[mine]] = 1.0
        total = (w * np.where(ok, v, 0.0)) @ onehot
        n = (w * ok) @ onehot
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, total / n, np.nan)
        if missing == "nan":  # a drawn row without a value leaves its cell's mean undefined
            mean[((w * ~ok) @ onehot) > 0] = np.nan
        means[metric] = mean
    full = average_full_score(means, missing=missing)
    stats: dict[str, FloatArray] = {"afs": full.afs,
                                    "robophyscore": robophyscore(means, selected, missing=missing)}
    stats.update({f"level_{lv}": v for lv, v in full.level_totals().items()})
    stats.update({f"subdim_{d}": v for d, v in full.subdim_totals().items()})
    if not macro:
        return stats
    skip = missing == "drop"
    out: dict[str, FloatArray] = {}
    for name, v in stats.items():
        res = np.full((b, rows.n_groups), np.nan)
        for g in range(rows.n_groups):
            part = v[:, rows.cell_group == g]
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (a replicate without any regime's value)
                res[:, g] = np.nanmean(part, axis=1) if skip else part.mean(axis=1)
        out[name] = res
    if skip:  # the AFS is the sum of the averaged levels, as in scores_from_table
        out["afs"] = np.sum([out[f"level_{lv}"] / len(tax.subdims_of(lv)) for lv in tax.levels], axis=0)
    return out


def _differences(diff: tuple[str, str], rows: _Rows, reps: dict[str, FloatArray], point: pd.DataFrame,
                 clusters: npt.NDArray[np.int64], boot: ClusterBootstrap, level: float,
                 source: str | Path) -> tuple[ScoreDifference, ...]:
    a_label, b_label = diff
    idx = []
    for name in (a_label, b_label):
        if name not in rows.labels:
            close = difflib.get_close_matches(name, rows.labels, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            more = " ..." if len(rows.labels) > 20 else ""
            raise AggregateInputError(f"{source}: no group {name!r} to compare{hint}; groups are "
                                      f"{', '.join(rows.labels[:20])}{more}")
        idx.append(rows.labels.index(name))
    a, b = idx
    if a == b:
        raise AggregateInputError(f"--diff names group {a_label!r} twice; name two groups")
    held = rows.cluster >= 0
    shared = np.intersect1d(rows.cluster[held & (rows.group == a)],
                            rows.cluster[held & (rows.group == b)]).size
    out = []
    for name in DIFFERENCE_STATISTICS:
        if name not in reps:
            continue
        ra, rb = reps[name][:, a], reps[name][:, b]
        value = float(point[name].iloc[a] - point[name].iloc[b])
        d = ra - rb
        both = np.isfinite(d)
        low, high, _ = summarize_replicates(d[None, :], level)
        flat = constant_replicates(d[None, :])
        n = int(min(clusters[a], clusters[b]))
        keep, reason, used = interval_gate(np.array([both.sum()]), np.array([n]), boot.n_replicates,
                                           constant=flat, one_per_stratum=boot.one_per_stratum)
        prob = float(share_above(ra, rb))  # (ties, equal up to rounding, count one half)
        kept = bool(keep[0]) and math.isfinite(value)
        if not (kept or (reason[0] in CONSTANT_WHYS and math.isfinite(value))):
            prob = math.nan
        lacking = [g for g, i in ((a_label, a), (b_label, b)) if not math.isfinite(point[name].iloc[i])]
        why = (f"{' and '.join(lacking)} {'have' if len(lacking) > 1 else 'has'} no {name}" if lacking
               else None if kept else str(reason[0]))
        out.append(ScoreDifference(name, a_label, b_label, value, float(low[0]) if kept else math.nan,
                                   float(high[0]) if kept else math.nan, prob, n, int(shared), why,
                                   used[0] if kept else None))
    return tuple(out)


def _notes(note: Note, why: dict[tuple[str, str], str], differences: Sequence[ScoreDifference],
           boot: ClusterBootstrap, rows: _Rows, cluster: str | None, unit: str, stratified: bool) -> None:
    """``unit``: what is its own cluster without ``cluster`` (``"items"`` or ``"rows"``)."""
    what = (f"clusters of {cluster!r}" if cluster is not None
            else f"{unit} (each its own cluster; --cluster COL draws the rows of a clip together)")
    strata = f" within {boot.n_strata} {STRATA_COLUMN}(s)" if stratified else ""
    note(f"bootstrap: {boot.n_replicates} replicates drawing {boot.n_clusters} {what}{strata}; the same "
         "draws serve every group")
    if (rows.cluster < 0).any():
        note("set-level rows (group:... items) belong to no clip: they keep their value in every replicate, "
             "so the intervals leave out their own uncertainty")
    by_reason: dict[str, dict[str, list[str]]] = {}
    for (group, stat), reason in why.items():
        by_reason.setdefault(reason, {}).setdefault(group, []).append(stat)
    for reason, groups in by_reason.items():
        shown = "; ".join(f"{g} ({', '.join(s)})" for g, s in list(groups.items())[:_SHOWN])
        more = f" and {len(groups) - _SHOWN} more group(s)" if len(groups) > _SHOWN else ""
        note(f"no interval for {shown}{more}: {reason}")
    lone = lone_clusters_note(boot.n_lone_clusters, boot.n_clusters)
    if lone:
        note(lone)
    for d in differences:
        if d.n_shared == 0:
            note(f"{d.a} and {d.b} share no cluster: their difference is taken over different clips, not "
                 "paired (give the rows of one clip the same --cluster value)")
            break
