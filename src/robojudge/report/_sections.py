"""What the report's sections share (:class:`Section`, :class:`ReportInput`) and the overview section.

Each builder returns a :class:`Section`: its tables and figures, or the reason it is left out
(no labels, no judge, too few items...), so the page always says why a part is missing.

Rows are read per configuration (:mod:`robojudge.report._series`): a metric stored under two
configs or versions is two rows of every table. With a manifest, only rows of the manifest's items
enter the per-item tables; rows of other ids (set-level results such as FVD, stored under ids like
``group:generator=...``, or another suite's items) are listed apart. Without one, every stored id is
an item except the set-level ones, which are listed apart likewise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge.meta import MIN_CLUSTERS, ConfigKey, Estimate, group_bootstrap, group_means, independent_groups
from robojudge.metric_info import NetworkInfo
from robojudge.report._judges import SelfConsistency, judge_coverage, judge_self_consistency
from robojudge.report._leaderboard import (
    Direction,
    Feature,
    clusters_of,
    column,
    known_direction,
    lone_sentences,
    metric_columns,
    strata_of,
)
from robojudge.report._libraries import MixedLibraries, mixed_libraries, mixed_library_note
from robojudge.report._series import (
    JUDGE_AXES,
    JUDGE_PREFIX,
    FailedSeries,
    Series,
    SeriesKey,
    StoredSeries,
    failed_everywhere,
    label_series,
    split_series,
)
from robojudge.report._sizes import MixedSizes, mixed_size_note, mixed_sizes
from robojudge.report._summary import RangeOf, unknown_range
from robojudge.report._tables import Cell, Table, is_approximate, is_small, text
from robojudge.report._unset import generator_groups, generator_of, unset_note
from robojudge.report._video_warnings import tiling_note
from robojudge.store import ResultRow
from robojudge.suite import Item
from robojudge.suite._schema import GROUP_PREFIX
from robojudge.taxonomy import load_taxonomy

#: The networks a stored metric id computes with (:func:`robojudge.metric_info.registry_networks`).
NetworksOf = Callable[[str], Sequence[NetworkInfo]]


def no_networks(metric: str) -> tuple[NetworkInfo, ...]:
    """The report's default: no network known for any metric (the registry is not loaded)."""
    return ()


#: Rows of ids outside the manifest listed at most (the count says how many there are).
MAX_OUTSIDE_ROWS = 200


@dataclass
class Section:
    """One part of the report.

    Attributes:
        key: HTML id and file-name stem.
        title: Heading.
        intro: What the numbers are and how they were made (plain text).
        tables: Tables, also written as CSV, Markdown and LaTeX.
        plots: Inline SVG figures.
        skipped: Why the section has no content (None when it has).
    """

    key: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)
    skipped: str | None = None


@dataclass(frozen=True)
class ReportInput:
    """What every section builder reads.

    Attributes:
        rows: Stored result rows.
        items: Suite items (empty when only a store was given).
        higher_is_better: Direction of each stored metric (``KeyError``: unknown).
        bootstrap: Cluster-bootstrap replicates for intervals.
        seed: Seed of the bootstrap and of the calibrated judge's folds.
        native_range: Native range of each stored metric (None: unknown).
        config_key: What configuration a metric's values are stored under (None: the report cannot tell
            a metric's default configuration; :func:`robojudge.metric_info.registry_config_key`).
        networks: The networks each stored metric computes with (none known by default;
            :func:`robojudge.metric_info.registry_networks` gives the weights catalogue's).
        stale: The stored rows left out of ``rows`` because their inputs changed since they were
            computed (:func:`robojudge.run.stale_rows`), for the tables that count them apart.
    """

    rows: Sequence[ResultRow]
    items: Sequence[Item]
    higher_is_better: Direction
    bootstrap: int = 2000
    seed: int = DEFAULT_SEED
    native_range: RangeOf = unknown_range
    config_key: ConfigKey | None = None
    networks: NetworksOf = no_networks
    stale: Sequence[ResultRow] = ()

    @property
    def labelled(self) -> list[Item]:
        return [it for it in self.items if it.labels is not None]

    @cached_property
    def _ids(self) -> set[str]:
        return {it.item_id for it in self.items}

    def _is_item(self, item_id: str) -> bool:
        # Without a manifest every id is taken for an item, except the reserved set-level ones.
        return item_id in self._ids if self.items else not item_id.startswith(GROUP_PREFIX)

    @cached_property
    def all_item_rows(self) -> list[ResultRow]:
        """Rows of the manifest's items (without a manifest: every row but the set-level ones)."""
        return [r for r in self.rows if self._is_item(r.item_id)]

    @cached_property
    def _every_series(self) -> StoredSeries:
        return StoredSeries.of(self.all_item_rows)

    @cached_property
    def hidden(self) -> list[FailedSeries]:
        """Metric configurations that failed on every item: left out of every table but one."""
        return failed_everywhere(self.all_item_rows, self._every_series.metrics)

    @cached_property
    def item_rows(self) -> list[ResultRow]:
        """:attr:`all_item_rows` less those of :attr:`hidden`: what the per-item tables read."""
        hidden = {h.key for h in self.hidden}
        if not hidden:
            return self.all_item_rows
        return [r for r in self.all_item_rows if SeriesKey(r.metric, r.config_hash, r.version) not in hidden]

    @cached_property
    def outside_rows(self) -> list[ResultRow]:
        """Rows of ids that are not manifest items (without a manifest: the set-level rows)."""
        return [r for r in self.rows if not self._is_item(r.item_id)]

    @cached_property
    def stored(self) -> StoredSeries:
        """The per-item rows split into series once, for every section to read (:attr:`item_rows`)."""
        every = self._every_series
        hidden = {h.key for h in self.hidden}
        if not hidden:
            return every
        return StoredSeries(tuple(s for s in every.series if s.key not in hidden),
                            tuple(s for s in every.metrics if s.key not in hidden), every.judges)

    @cached_property
    def mixed_sizes(self) -> list[MixedSizes]:
        """Metric configurations whose per-item rows were computed at several frame sizes, by generator
        (``all`` without a manifest): see :mod:`robojudge.report._sizes`."""
        labels = {s.key: s.label for s in self.stored.series}
        return mixed_sizes(self.item_rows, self.group_of, labels)

    @cached_property
    def groups(self) -> list[str]:
        """The group of each item of :attr:`scope`: its generator (items without one apart, under
        :func:`robojudge.report._unset.unset_name`), or ``all`` without a manifest."""
        return generator_groups(self.scope) if self.items else ["all"] * len(self.scope)

    @cached_property
    def group_of(self) -> dict[str, str]:
        """:attr:`groups` by item id."""
        return {it.item_id: g for it, g in zip(self.scope, self.groups, strict=True)}

    @cached_property
    def group_rows(self) -> list[ResultRow]:
        """The set-level rows of whole groups (ids starting with ``group:``; FVD and the like), which
        are compared across generators as the per-item means are."""
        return [r for r in self.outside_rows if r.item_id.startswith(GROUP_PREFIX)]

    @cached_property
    def mixed_libraries(self) -> list[MixedLibraries]:
        """Metric configurations whose per-item rows, or set-level group rows, were computed with
        different library versions, by generator (``all`` without a manifest; a group row counts under
        its group): see :mod:`robojudge.report._libraries`."""
        group_of = dict(self.group_of)
        group_of |= {r.item_id: str((r.details or {}).get("group", r.item_id)) for r in self.group_rows}
        labels = {s.key: s.label for s in self.stored.series}
        return mixed_libraries([*self.item_rows, *self.group_rows], group_of, labels)

    @cached_property
    def columns(self) -> list[Feature]:
        """Every stored metric configuration as a column over :attr:`scope`."""
        return metric_columns(self.item_rows, self.scope, self.higher_is_better, stored=self.stored)

    @cached_property
    def taxonomy_columns(self) -> list[Feature]:
        """:attr:`columns` and, under the RoboPhys-3D metric it feeds, each judge rubric series that feeds
        one (``judge:NAME:pla_physical_commonsense`` is ``pla_physical_commonsense``, docs/judges.md; a
        user rubric file's ``taxonomy`` comes with its rows as ``details.taxonomy_id``): the columns the
        RoboPhys-3D scores read. A metric fed by two judges, or by a judge and stored itself, is then a
        metric of several configurations, left out there and named."""
        taxonomy = load_taxonomy()
        declared: dict[str, str] = {}
        for r in self.item_rows:
            if r.metric.startswith(JUDGE_PREFIX) and r.metric not in declared and r.details:
                fed = r.details.get("taxonomy_id")
                if isinstance(fed, str) and fed in taxonomy:
                    declared[r.metric] = fed
        out = list(self.columns)
        for s in self.stored.series:
            if not s.metric.startswith(JUDGE_PREFIX):
                continue
            fed = declared.get(s.metric) or taxonomy.fed_by_judge(s.metric)
            if fed is None:
                continue
            values = column(s.values, self.scope)
            if np.isfinite(values).any():
                key = SeriesKey(fed, s.key.config_hash, s.key.version)
                out.append(Feature(replace(s, key=key), known_direction(self.higher_is_better, fed), values))
        return out

    @cached_property
    def scope(self) -> list[Item]:
        """The items the per-item tables run over: the manifest's, or else one per stored item id."""
        if self.items:
            return list(self.items)
        return [Item(item_id=i, video=f"{i}.mp4") for i in sorted({r.item_id for r in self.all_item_rows})]


def estimate_cell(e: Estimate, digits: int = 3, *, small: bool = False, approximate: bool = False) -> Cell:
    return Cell(e.value, e.low, e.high, digits=digits, small=small, approximate=approximate)


def _range_text(r: tuple[float | None, float | None] | None) -> str:
    if r is None:
        return "unknown"
    lo, hi = r
    return f"[{'-inf' if lo is None else format(lo, 'g')}, {'inf' if hi is None else format(hi, 'g')}]"


def borrowed_registry_note(series: Sequence[Series], config_key: ConfigKey | None) -> str:
    """The sentence naming the series of a metric version other than the installed one: the registry
    describes only the installed version, so their direction and native range are the installed
    version's, whatever theirs was ("" when every series is of the installed version, or no
    ``config_key`` tells which version that is)."""
    if config_key is None:
        return ""
    borrowed = []
    for s in series:
        try:
            installed = config_key(s.metric, None)[1]
        except (KeyError, ValueError):  # a judge, a metric this robojudge does not register
            continue
        if s.key.version != installed:
            borrowed.append(f"{s.label} (v{s.key.version}: v{installed}'s)")
    if not borrowed:
        return ""
    return (" The metric registry describes only the installed version of each metric, so the direction "
            "(which way is better) and the native range applied throughout this report to the rows of "
            f"another version are the installed version's: {'; '.join(borrowed)}. Should that version have "
            "changed either, its rows are oriented or bounded as the installed version's.")


#: Metric configurations the overview's note on partly measured groups names (the others are counted).
_LISTED = 12


def overview_section(inp: ReportInput) -> Section:
    """Counts, the per-group mean of every stored configuration, judge coverage and set-level rows."""
    sec = Section("overview", "Overview")
    rows = inp.all_item_rows
    if not inp.rows:
        sec.skipped = "the result store holds no rows; run `robojudge score` or `robojudge judge` first"
        return sec
    items = inp.scope
    series = inp.stored.series
    n_err = sum(r.status != "ok" for r in rows)
    label = "generator" if inp.items else "group"
    # Generators sharing no clip are resampled each among its own clips, as on the leaderboard
    # (robojudge.meta.group_bootstrap, which group_means draws through).
    apart = (", and within each generator, since no clip holds items of two"
             if inp.bootstrap and inp.items and independent_groups(clusters_of(items), inp.groups) else "")
    ci = (f"{0.95:.0%} cluster-bootstrap percentile intervals ({inp.bootstrap} replicates, clips resampled "
          f"within sources{apart}), which stay inside the values' range; a group whose values lie in "
          f"fewer than {MIN_CLUSTERS} clips has none, and so does one whose values are all alike (every "
          "resample then gives the same mean, so the bootstrap cannot measure its uncertainty)"
          if inp.bootstrap else "no intervals")
    sec.intro = (f"{len(rows)} stored results ({n_err} failed) over {len({r.item_id for r in rows})} items "
                 f"and {len(series)} metric or judge-rubric configurations; {len(inp.labelled)} items carry "
                 "PA/IA labels. "
                 + (f"Means per generator with {ci}. " if inp.items else
                    f"No suite manifest was given, so items have no generator or labels: one group; {ci}. ")
                 + "A metric stored under several configs or versions has one row per configuration, "
                 "labelled with what differs; 'failed' counts error rows and 'unscored' ok rows without a "
                 "value. 'range' is the metric's native range where the metric registry knows it.")
    if inp.items:
        sec.intro += (unset_note(map(generator_of, items)) + mixed_size_note(inp.mixed_sizes)
                      + mixed_library_note(inp.mixed_libraries))
    groups_of = inp.groups
    groups = sorted(set(groups_of))
    # The file names its interval: report/summary.md of `report MANIFEST` gives Student-t ones.
    how = f" [{0.95:.0%} cluster-bootstrap interval]" if inp.bootstrap else ""
    borrowed = borrowed_registry_note(series, inp.config_key)
    sec.intro += borrowed
    # Each group's own n and failed follow the means: a mean over some of a group's items only (the rest
    # failed or unscored) is over other items than its neighbours' (audit aggedge F2).
    table = Table("summary", f"Mean{how} of every stored configuration per {label}",
                  ["metric", "range", "n", "failed", "unscored", *groups,
                   *(f"{part} {g}" for g in groups for part in ("n", "failed"))],
                  note=f"Intervals: {ci}.{borrowed}", labels=("metric",))  # (a group may be named "judge")
    size = {g: groups_of.count(g) for g in groups}
    partly: list[str] = []
    outside: list[str] = []
    if series:
        x = np.stack([column(s.values, items) for s in series], axis=1)
        clusters, strata = clusters_of(items), strata_of(items)
        means = group_means(x, groups_of, clusters, strata, bootstrap=inp.bootstrap, seed=inp.seed)
        for k, s in enumerate(series):
            rng = inp.native_range(s.metric)
            cells = []
            for g in groups:
                m = means[g][k]
                # A percentile interval of bootstrap means lies within the observed values: no cut needed.
                # group_means withholds one over one or two clips, or whose every resample is alike
                # (GroupMean.why: the rule of every other interval in the report).
                small = m.n > 0 and is_small(m.n, m.n_clusters)
                cells.append(Cell(m.mean, m.low, m.high, digits=2, small=small,
                                  approximate=is_approximate(m.n, m.n_clusters)) if m.n else text(""))
            failed = {g: 0 for g in groups}
            for item_id in s.failed:
                if (g_of := inp.group_of.get(item_id)) is not None:
                    failed[g_of] += 1
            counts = [text(x) for g in groups for x in (means[g][k].n, failed[g])]
            table.add([text(s.label), text(_range_text(rng)), text(len(s.values)), text(len(s.failed)),
                       text(len(s.unscored)), *cells, *counts])
            if rng is not None:  # (a row stored by an older robojudge, or written to the store directly)
                lo, hi = (-math.inf if rng[0] is None else rng[0]), (math.inf if rng[1] is None else rng[1])
                out_of = [v for v in s.values.values() if math.isfinite(v) and not lo <= v <= hi]
                if out_of:
                    outside.append(f"{s.label} ({len(out_of)}, e.g. {out_of[0]:g}, range {_range_text(rng)})")
            short = [f"{g} {means[g][k].n} of {size[g]}" + (f" ({failed[g]} failed)" if failed[g] else "")
                     for g in groups if 0 < means[g][k].n < size[g]]
            if short and len(groups) > 1:
                partly.append(f"{s.label}: {', '.join(short)}")
        if outside:
            table.note += (" Values outside the metric's native range ('range'), kept as they are in the "
                           "means: "
                           f"{'; '.join(outside)}.")
        if partly:
            more = f"; and {len(partly) - _LISTED} more" if len(partly) > _LISTED else ""
            table.note += (" Measured on some items only (the others failed or unscored), so a "
                           f"{label}'s mean "
                           f"is over those, perhaps its easiest, and means side by side are over different "
                           f"items ('n {label}' and 'failed {label}' count them): "
                           f"{'; '.join(partly[:_LISTED])}{more}."
                           + (" `robojudge leaderboard generators --scores metric:ID --matched` compares "
                              "generators on the clips all of them have." if inp.items else ""))
        if inp.bootstrap:  # clips alone in their source: drawn once in every replicate (lone_clusters_note)
            probe, _ = group_bootstrap(clusters, groups_of, strata, n_replicates=1)
            table.note = " ".join([table.note, *lone_sentences(probe.n_lone_clusters, probe.n_clusters)])
    tiled = tiling_note(inp.all_item_rows, inp.group_of, groups) if inp.items else ""
    table.note += tiled
    sec.intro += tiled
    sec.tables.append(table)
    if inp.hidden:
        sec.tables.append(_hidden_table(inp.hidden))
        sec.intro += (f" {len(inp.hidden)} metric configurations failed on every item and are left out of "
                      "every table but the one listing them with their first error (all errors: errors.csv "
                      "or `robojudge results export`).")
    coverage = judge_coverage(inp.item_rows, items, stored=inp.stored, stale=inp.stale)
    if coverage:
        cov = Table("judge_coverage", "What each judge configuration did, per rubric",
                    ["judge", "rubric", "items", "scored", "unparsable", "failed", "stale", "not run"],
                    note="Over the suite's items: scored, answered without a readable score, failed "
                    "(request errors), stale (judged before the video or instruction changed: left out until "
                    "judged again) or never asked.")
        for c in coverage:
            rubric = c.axis.upper() if c.axis in JUDGE_AXES else c.axis
            cov.add([text(c.judge), text(rubric), text(c.items), text(c.scored), text(c.unparsable),
                     text(c.failed), text(c.stale), text(c.not_run)])
        sec.tables.append(cov)
    consistency = judge_self_consistency(inp.item_rows, items, stored=inp.stored)
    if consistency:
        con = Table("judge_self_consistency", "Judge self-consistency across turns (RoboWorM Table D3)",
                    ["judge", "rubric", "scale", "items", "turns", "agree %", "score std",
                     "latency per video s"],
                    note="Per judge configuration and rubric, over the suite's items judged with several "
                    "turns (--samples), in every run that stored them (RoboWorM App. D, Tables D2-D3): the "
                    "share whose turns all gave the same score, the mean standard deviation of the turns' "
                    "scores on that rubric's scale (rubrics are never pooled: a 1-3 verdict and a 1-5 score "
                    "spread differently), and the mean request seconds, all turns together, per second of "
                    "video judged. Scale: that of a built-in rubric judged unchanged, else blank."
                    + _partial_note(consistency))
        for sc in consistency:
            turns = "/".join(map(str, sc.turns))
            scale = f"{sc.scale[0]:g}-{sc.scale[1]:g}" if sc.scale is not None else ""
            con.add([text(sc.judge), text(sc.rubric), text(scale), text(sc.items), text(turns),
                     Cell(100 * sc.agreement_rate, digits=1), Cell(sc.mean_std, digits=3),
                     Cell(sc.latency_per_video_s, digits=3)])
        sec.tables.append(con)
    if inp.outside_rows:
        sec.tables.append(_outside_table(inp.outside_rows))
        n_out = len(inp.outside_rows)
        what = ("of the suite (set-level results such as FVD, or another suite's items)" if inp.items else
                f"(set-level results such as FVD, stored under ids starting with {GROUP_PREFIX!r})")
        sec.intro += (f" {n_out} {'row belongs' if n_out == 1 else 'rows belong'} to ids that are not items "
                      f"{what}; they stay out of the per-item tables and are listed in the last table.")
    return sec


def _partial_note(consistency: Sequence[SelfConsistency]) -> str:
    """Which agreement rates rest on fewer turns for some items, a turn's request having failed."""
    parts = [f"{sc.judge} {sc.rubric}: {sc.partial} of {sc.items}" for sc in consistency if sc.partial]
    if not parts:
        return ""
    return (" Items with a turn whose request failed agree or not over the turns that answered (a "
            "transport error is no disagreement; an unparsable reply is one): " + "; ".join(parts) + ".")


def _hidden_table(hidden: Sequence[FailedSeries]) -> Table:
    table = Table("failed_everywhere", "Metrics that failed on every item (left out of the tables)",
                  ["metric", "items", "first error"],
                  note="No item has a value or an ok row for these configurations; often an input the items "
                  "lack (a state file, a reference video) or weights missing here.")
    for h in hidden:
        table.add([text(h.label), text(h.items), text(h.first_error)])
    return table


def _outside_table(rows: Sequence[ResultRow]) -> Table:
    shown = sorted(rows, key=lambda r: (r.item_id, r.metric, r.config_hash, r.version))[:MAX_OUTSIDE_ROWS]
    series = label_series(split_series(shown))
    label = {s.key: s.label for s in series}
    note = "Rows whose item id is not in the suite manifest."
    if len(rows) > len(shown):
        note += f" The first {len(shown)} of {len(rows)}; `robojudge results export` writes them all."
    table = Table("set_level", "Results of ids outside the suite (set-level and others)",
                  ["item", "metric", "value", "status"], note=note)
    for r in shown:
        value = Cell(math.nan if r.value is None else r.value, digits=4)
        table.add([text(r.item_id), text(label[SeriesKey(r.metric, r.config_hash, r.version)]), value,
                   text(r.status)])
    return table
