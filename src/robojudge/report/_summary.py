"""Per-group summaries of stored results, and the report folder.

A summary is one configuration of a metric (metric, config hash, version) over one group. Its
interval is the Student-t interval of the mean, cut at the ends of the metric's native range where
the metric registry knows it (a t-interval of a 0/1 metric over three items would otherwise be
[-0.77, 2.10]); an end some value lies past is not cut (the range does not bound these values), so
the interval keeps its mean and never turns over. ``ci_clipped`` says when it was cut, and
``small_n`` flags groups with fewer than 10 values or 5 clips, where the interval is rough either way.

Rollouts of one clip are not independent (they share the clip's difficulty). Where clips are known and
a group holds several values of one clip (``--by task``, ``source``... put every generator's rollout of
a clip in one group), the t-interval takes clips as the independent units: it is centred on the mean of
the values, with a cluster-robust (CR1) standard error from the clips' sums of deviations and k - 1
degrees of freedom for k clips (``ci_clips``; :func:`robojudge.meta.clustered_mean_interval`). With
clips of equal size that is the t-interval of the clip means. A t-interval over the values themselves
was about a third too narrow and held a simulated true mean 76% of the time. With one value per clip
nothing changes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from robojudge._files import replacing
from robojudge.meta import clustered_mean_interval, mean_confidence_interval
from robojudge.report._provenance import stage_provenance
from robojudge.report._series import SeriesKey, failed_everywhere, label_series, split_series
from robojudge.report._tables import SMALL_MARK, is_small, md_escape, md_prose, small_note
from robojudge.store import STALE_COLUMN, ResultRow, ResultStore, SafeCsvWriter, export_results
from robojudge.suite import Item

#: A metric's native ``(low, high)`` range (either end None: unbounded), or None when unknown.
RangeOf = Callable[[str], tuple[float | None, float | None] | None]


def unknown_range(metric: str) -> None:
    """The range lookup of a caller that knows no metric's range."""
    return None


@dataclass(frozen=True)
class GroupSummary:
    """One configuration of a metric over one group of items (for example one generator).

    Attributes:
        n_failed: Error rows (the metric failed on the item).
        n_unscored: Ok rows without a value (the metric ran and found nothing to measure:
            ``details.unscored_reason`` says why).
        ci_low: Lower end of the t-interval, cut at the native range's lower end unless a value lies
            below it.
        ci_high: Upper end, cut likewise.
        version: The metric version of the rows.
        ci_clipped: The interval was cut at an end of the native range.
        small_n: Fewer than 10 values or 5 clips (when clips are known).
        ci_clips: The number of clips the t-interval took as independent units (a cluster-robust
            interval around ``mean``, k - 1 degrees of freedom), where some clip of the group holds
            several values; None where the interval is over the values (one per clip, or clips unknown).
        constant: Every one of the group's two or more values is the same: its t-interval, of no width,
            would say nothing of how far the mean could be, so none is given (``ci_low``/``ci_high`` NaN),
            as the bootstrap intervals withhold one whose every resample is the same.
        label: The configuration's name, as ``summary.md`` and the HTML report's tables give it: the
            metric id, with what tells its configurations apart when the summarized rows hold several
            (:func:`robojudge.report._series.label_series`).
    """

    metric: str
    config_hash: str
    group: str
    n_ok: int
    n_failed: int
    mean: float
    std: float
    ci_low: float
    ci_high: float
    version: str = ""
    ci_clipped: bool = False
    small_n: bool = False
    n_unscored: int = 0
    label: str = ""
    ci_clips: int | None = None
    constant: bool = False


def cut_to_range(lo: float, hi: float, values: Sequence[float],
                 bounds: tuple[float | None, float | None] | None) -> tuple[float, float, bool]:
    """``(lo, hi)`` cut at the ends of ``bounds`` that every one of ``values`` respects, and whether it was.

    An end that some value lies past (SSIM below 0, kept as computed) does not bound these values, so
    that side stays as computed; the mean, between the smallest and largest value, stays inside.
    """
    if bounds is None or math.isnan(lo) or not values:
        return lo, hi, False
    a = lo if bounds[0] is None or min(values) < bounds[0] else max(lo, bounds[0])
    b = hi if bounds[1] is None or max(values) > bounds[1] else min(hi, bounds[1])
    return a, b, (a, b) != (lo, hi)


def summarize(
    rows: Sequence[ResultRow], group_of: Mapping[str, str], *, level: float = 0.95,
    native_range: RangeOf | None = None, cluster_of: Mapping[str, str] | None = None,
) -> list[GroupSummary]:
    """Mean, std and a ``level`` t-interval of each metric configuration per group; failures apart.

    ``group_of`` maps item ids to group names; items it does not know fall in ``"(other)"``. With
    ``native_range`` (metric id -> ``(low, high)`` or None) the interval is cut at the range's ends
    that the group's values respect (see :func:`cut_to_range`);
    ``cluster_of`` (item id -> clip) lets ``small_n`` count clips too, and where a clip holds several of
    a group's values the t-interval takes the clips as units (cluster-robust, k - 1 degrees of freedom;
    see the module's notes and ``GroupSummary.ci_clips``). Each summary carries its configuration's
    label among ``rows``.
    """
    Key = tuple[str, str, str, str]
    values: dict[Key, list[float]] = defaultdict(list)
    clips: dict[Key, set[str]] = defaultdict(set)
    by_clip: dict[Key, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    failed: dict[Key, int] = defaultdict(int)
    unscored: dict[Key, int] = defaultdict(int)
    for r in rows:
        key = (r.metric, r.config_hash, r.version, group_of.get(r.item_id, "(other)"))
        if r.status == "ok" and r.value is not None and not math.isnan(r.value):
            values[key].append(r.value)
            clip = cluster_of.get(r.item_id, r.item_id) if cluster_of is not None else r.item_id
            clips[key].add(clip)
            by_clip[key][clip].append(r.value)
        else:
            (failed if r.status != "ok" else unscored)[key] += 1
            values.setdefault(key, [])
    labels = {x.key: x.label for x in label_series(split_series(rows))}
    out = []
    for (metric, chash, version, group), vals in sorted(values.items()):
        key = (metric, chash, version, group)
        ci = mean_confidence_interval(vals, level)
        lo, hi = ci.low, ci.high
        ci_clips = None
        if cluster_of is not None and len(by_clip[key]) < len(vals):  # some clip holds several values
            ci_clips = len(by_clip[key])
            per_clip = clustered_mean_interval(list(by_clip[key].values()), level)
            lo, hi = per_clip.low, per_clip.high
        # Every value the same, compared as values (the mean of 30 copies of one float can land an ulp off
        # it, giving a std of 2e-16 and a printed interval [v, v]); exactly, since a tolerance took real
        # spreads of tiny or huge values (1e-13 apart, or 2e12 +- 1) for none.
        constant = ci.n >= 2 and max(vals) == min(vals)
        if constant:  # [v, v]: no width, no information (a sample of identical values, not a certainty)
            lo = hi = math.nan
        lo, hi, cut = cut_to_range(lo, hi, vals, native_range(metric) if native_range else None)
        small = is_small(ci.n, len(clips[key]) if cluster_of is not None else None)
        out.append(GroupSummary(metric, chash, group, ci.n, failed[key], ci.mean, ci.std, lo, hi, version,
                                cut, small, unscored[key], labels[SeriesKey(metric, chash, version)],
                                ci_clips, constant))
    return out


#: The interval column of the grouped summary (``summary.md`` and the table ``robojudge report MANIFEST``
#: prints): the HTML report's overview gives cluster-bootstrap intervals of the same means instead.
T_INTERVAL = "95% t-interval"


#: The note under a grouped summary where some group holds several values of one clip.
CLIP_MEANS_NOTE = ("Where a group holds several values of one clip (rollouts of one clip are not "
                   "independent), its t-interval takes the clips as the units: centred on the mean shown, "
                   "with a cluster-robust standard error from the clips and k - 1 degrees of freedom for k "
                   "clips.")


#: The note under a grouped summary where some group's values are all the same.
CONSTANT_NOTE = ("n/a: every value of the group is the same, so a t-interval has no width and says nothing "
                 "of how far the mean could be from that value on other videos.")


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


def summary_markdown(summaries: Sequence[GroupSummary], *, group_label: str = "group",
                     labels: Mapping[SeriesKey, str] | None = None) -> str:
    """A Markdown table of summaries, one row per (metric, group). ``labels`` names each configuration
    (:func:`robojudge.report._series.label_series`: the settings that tell a metric's configurations
    apart); without one, a metric with several is named by its summary's ``label``, else by its config
    hash and version. The interval column names its method (Student t)."""
    several = _several(summaries)
    lines = [
        f"| metric | {group_label} | n | failed | unscored | mean | std | {T_INTERVAL} |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in summaries:
        ci = "n/a" if math.isnan(s.ci_low) else f"[{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]"
        ci += " (cut at the range)" if s.ci_clipped else ""
        ci += f" {SMALL_MARK}" if s.small_n else ""
        key = SeriesKey(s.metric, s.config_hash, s.version)
        name = s.metric if s.metric not in several else (labels or {}).get(key) or s.label or (
            f"{s.metric} [config {s.config_hash[:8]}, v{s.version}]")
        lines.append(
            f"| {md_escape(name)} | {md_escape(s.group)} | {s.n_ok} | {s.n_failed} | {s.n_unscored} | "
            f"{_fmt(s.mean)} | "
            f"{_fmt(s.std)} | {ci} |"
        )
    small = [s for s in summaries if s.small_n]
    if small:
        lines += ["", small_note(any(not math.isnan(s.ci_low) for s in small))]
    if any(s.ci_clips is not None for s in summaries):
        lines += ["", CLIP_MEANS_NOTE]
    if any(s.constant for s in summaries):
        lines += ["", CONSTANT_NOTE]
    return "\n".join(lines) + "\n"


def _several(summaries: Sequence[GroupSummary]) -> set[str]:
    """Metrics with more than one configuration among ``summaries``."""
    keys: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for s in summaries:
        keys[s.metric].add((s.config_hash, s.version))
    return {m for m, k in keys.items() if len(k) > 1}


StaleFinder = Callable[[Sequence[ResultRow], Sequence[Item]], list[ResultRow]]
"""The rows whose inputs changed since they were computed (:func:`robojudge.run.stale_rows`): the report
reads no metric registry itself, so callers that may (the CLI) pass it in."""


def stale_note(stale: Sequence[ResultRow]) -> str | None:
    """The line that says how many results a report or a leaderboard left out as stale, or None."""
    if not stale:
        return None
    n, items = len(stale), len({r.item_id for r in stale})
    return (f"{n} stored result{'s' if n != 1 else ''} of {items} item{'s' if items != 1 else ''} left "
            "out: their inputs (video, reference, instruction...) changed since they were computed; run "
            "the same `robojudge score` (or `judge`) again to compute them anew")


def write_report(
    store: ResultStore,
    out_dir: str | Path,
    group_of: Mapping[str, str],
    *,
    title: str = "robojudge results",
    group_label: str = "generator",
    native_range: RangeOf | None = None,
    cluster_of: Mapping[str, str] | None = None,
    columns: Mapping[str, Callable[[ResultRow], str | None]] | None = None,
    stale: Sequence[ResultRow] = (),
    note: str = "",
    rows: Sequence[ResultRow] | None = None,
    named: bool = True,
    provenance: Mapping[str, Any] | None = None,
) -> list[GroupSummary]:
    """Write ``results.csv`` (long rows), ``summary.csv``, ``summary.md`` and ``errors.csv``: each beside its
    name, renamed into place once all four are written, so a failed write (a full disk) leaves the
    previous ones as they were.

    ``rows``: the store's current rows (``store.rows()``) where the caller has read them already.

    ``columns`` are added to ``results.csv`` after the standard ones (:func:`report_suite` adds the
    manifest's generator, source and clip_id, :func:`robojudge.store.item_columns`, and the
    ``outside_suite`` mark, :func:`robojudge.store.outside_column`).

    ``native_range`` (metric id -> ``(low, high)`` or None; ``robojudge.metric_info.registry_range``
    for the metric registry's) lets the summary cut its intervals at the range; without it nothing
    is cut.

    When ``group_of`` is not empty, rows of ids it does not know (set-level results, another suite)
    are in ``results.csv`` and ``errors.csv`` but not in the summary, which is per item. A metric
    configuration that failed on every item (no ok row) is left out of the summary too, and
    ``summary.md`` names it with its first error; its rows stay in ``errors.csv``.

    ``stale`` rows (their inputs changed since they were computed: :func:`robojudge.run.stale_rows`)
    are left out of the summary, which says how many; ``results.csv`` keeps them, marked in its
    ``stale`` column when ``columns`` are given (a suite is known), as ``robojudge results export
    --suite`` marks them. ``note``: a sentence ``summary.md`` prints above its table (how the items
    without the field are named, say). ``named``: as :func:`robojudge.report.write_html_report`'s.
    ``provenance``: written as ``provenance.json`` with the rest
    (:func:`robojudge.report._provenance.report_provenance`; :func:`report_suite` passes it).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = store.rows() if rows is None else rows
    gone = {r.key for r in stale}
    if columns is not None:
        columns = {**columns, STALE_COLUMN: lambda row: "stale" if row.key in gone else ""}
    outside = [r for r in rows if group_of and r.item_id not in group_of]
    per_item = [r for r in rows if (r.item_id in group_of if group_of else True) and r.key not in gone]
    hidden = failed_everywhere(per_item)
    failed = {h.key for h in hidden}
    shown = [r for r in per_item if SeriesKey(r.metric, r.config_hash, r.version) not in failed]
    summaries = summarize(shown, group_of, native_range=native_range, cluster_of=cluster_of)
    fields = list(GroupSummary.__dataclass_fields__)
    n_err = sum(r.status != "ok" for r in rows)
    md = f"# {md_escape(title)}\n\n{len(rows)} results, {n_err} failed.\n\n"
    if stale:
        md += f"{stale_note(stale)}.\n\n"
    if note:
        md += f"{md_prose(note)}\n\n"
    if outside:
        md += (f"{len(outside)} results belong to ids that are not items of the suite "
               "(set-level results such as FVD, or another suite's items); they are in results.csv, not "
               "in this summary.\n\n")
    md += ("Intervals: the Student-t 95% interval of each mean (where a group holds several values of one "
           "clip, a cluster-robust t-interval around the mean with the clips as units), cut at the "
           "metric's native range where it is known (the HTML report's tables/summary.md gives "
           "cluster-bootstrap percentile intervals of the same means).\n\n")
    md += summary_markdown(summaries, group_label=group_label)
    if hidden:
        md += (f"\n{len(hidden)} metric configurations failed on every item and are not in the table "
               "(their errors are in errors.csv):\n\n")
        md += "".join(f"- {md_escape(h.label)} ({h.items} items): {md_escape(h.first_error)}\n"
                      for h in hidden)
    # Written beside their names and renamed into place once all are whole (results.csv by the export
    # itself, last): a full disk or a kill leaves the previous summary, never a cut one or half of one.
    with replacing(out, named=named) as files:
        with files.open(out / "summary.csv", newline="") as f:
            w = SafeCsvWriter(f)
            w.writerow(fields)
            for s in summaries:
                d = asdict(s)
                # (no value: an empty cell, as every other robojudge CSV writes it; "nan" made polars read
                # the column as text)
                w.writerow(["" if isinstance(d[k], float) and math.isnan(d[k]) else d[k] for k in fields])
        with files.open(out / "errors.csv", newline="") as f:
            w2 = SafeCsvWriter(f)
            w2.writerow(["item_id", "metric", "config_hash", "error"])
            for r in rows:
                if r.status != "ok":
                    w2.writerow([r.item_id, r.metric, r.config_hash, r.error])
        files.write_text(out / "summary.md", md)
        if provenance is not None:
            stage_provenance(files, out, provenance)
        # the rows the summary counts: a second read would add those a run stored meanwhile
        export_results(store, out / "results.csv", "csv", columns=columns, root=out, named=named, rows=rows)
    return summaries
