"""The acceleration audit (RoboWorM Fig. 5, C2, C3) and FVD sample-size sensitivity (Fig. B3) as report parts.

Tables and figures are built from the results of :mod:`robojudge.meta` (``acceleration_audit``,
``sample_size_sensitivity``); computing them from a suite (scoring, stand-in generators, window
features) is :mod:`robojudge.audit`. In ``robojudge report`` the acceleration section appears when
the manifest declares accelerated generators (``meta.accelerates`` on their items, see
docs/audit.md), with costs from the items' ``meta.generation_seconds`` / ``meta.denoising_steps``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from robojudge.meta import (
    AccelerationAudit,
    ConfigKey,
    SampleSizeResult,
    acceleration_audit,
    audit_scores,
    current_configs,
    declared_accelerations,
    directions,
    manifest_costs,
)
from robojudge.metric_info import NOT_VIDEO_QUALITY
from robojudge.report._plots import _err, _figure, _plain_text, _svg
from robojudge.report._sections import ReportInput, Section, estimate_cell
from robojudge.report._tables import Cell, Table, text

#: The item meta key that names the dense generator an item's generator accelerates (robojudge.meta reads it).
ACCELERATES_KEY = "accelerates"

#: The Q level the report's section asks of a method (``robojudge audit acceleration --min-q``).
DEFAULT_LEVEL = 0.95


_STEM_CHARS = 60


def _stem(name: str) -> str:
    """A generator name made safe for a file stem and an element id (names come from manifests): kept
    where it is short, plain and lower case, else its plain characters (at most 60) and a hash of the
    whole name, so that two names never share a file (``x y`` and ``x_y`` did), not even where the file
    system ignores case (macOS, Windows: ``Wan`` and ``wan`` did), and none is too long for one (a
    250-character name stopped the report)."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "_"
    if safe == name and name == name.lower() and len(name) <= _STEM_CHARS:
        return name
    return f"{safe[:_STEM_CHARS]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _num(v: float, digits: int = 2) -> Cell:
    return Cell(v, digits=digits)


def _intervals(audit: AccelerationAudit) -> str:
    """What the intervals of an audit's tables are: their coverage, replicates and seed."""
    if audit.bootstrap <= 0:
        return "no interval (no bootstrap replicates)"
    return (f"its {audit.ci * 100:g}% paired clip-bootstrap interval ({audit.bootstrap} replicates, "
            f"seed {audit.seed})")


def frontier_table(audit: AccelerationAudit) -> Table:
    """One row per method: speedup, Q with its interval, and its place on the frontier."""
    table = Table(
        f"acceleration_{_stem(audit.dense)}", f"Speed and aggregate retention Q against dense {audit.dense}",
        ["method", "speedup", "basis", "clips", "Q", "frontier", f"Q at least {audit.level:g}"],
        note=("speedup: dense time over the method's time per rollout (basis: wall seconds, else denoising "
              "steps); Q: mean over metrics of the oriented ratio of means on matched clips (1 = dense; "
              f"above 1 scores better than dense), with {_intervals(audit)}. "
              + (f"Largest speedup with Q at least {audit.level:g}: {audit.best}." if audit.best else
                 f"No method reaches Q {audit.level:g}.")),
    )
    for m in audit.methods:
        table.add([text(m.name), _num(m.speedup), text(m.basis), text(m.clips), estimate_cell(m.q, 3),
                   text("yes" if m.name in audit.frontier else ""),
                   text("best" if m.name == audit.best else ("yes" if m.q.value >= audit.level else ""))])
    return table


def retention_table(audit: AccelerationAudit) -> Table:
    """One row per (method, metric): the dense and accelerated means and the retention."""
    table = Table(
        f"retention_{_stem(audit.dense)}", f"Per-metric retention against dense {audit.dense}",
        ["method", "metric", "better", "clips", "dense mean", "method mean", "retention", "note"],
        note="retention: method mean over dense mean where higher is better, dense over method where lower "
             f"is better, on the clips both scored; above 1 = better than dense; with {_intervals(audit)}.",
    )
    for m in audit.methods[1:]:
        for r in m.retentions:
            table.add([text(m.name), text(r.metric), text("higher" if r.higher_is_better else "lower"),
                       text(r.n), _num(r.dense_mean, 4), _num(r.accelerated_mean, 4),
                       estimate_cell(r.retention, 3), text(r.reason or "")])
    return table


#: The least ratio between two labelled ticks of a log axis (closer ones keep the lower).
_TICK_GAP = 1.12


def _log_x(ax: Any, ticks: Sequence[float]) -> None:
    """A log x axis with a tick, labelled as a plain number, at each of ``ticks`` and nowhere else (with
    mathtext off, matplotlib's 10^k labels would show their TeX source; its minor labels left out 4x)."""
    ax.set_xscale("log")
    kept: list[float] = []
    for v in sorted(set(ticks)):  # one of two close speedups (1.05 and 1.09): their labels ran together
        if not kept or v > kept[-1] * _TICK_GAP:
            kept.append(v)
    ax.set_xticks(kept, [f"{v:.3g}" for v in kept])
    ax.set_xticks([], minor=True)


@_plain_text
def frontier_plot(audit: AccelerationAudit) -> str:
    """Speedup (x, log scale) against Q (y) per method, the Pareto frontier (ringed, and joined when it has
    several methods) and the Q level; the methods without a speedup or a Q are named under the figure."""
    fig, ax = _figure(5.4, 3.8)
    pts = [(m.name, m.speedup, m.q) for m in audit.methods
           if not (math.isnan(m.speedup) or math.isnan(m.q.value))]
    for k, (name, s, q) in enumerate(pts):
        ax.errorbar([s], [q.value], yerr=_err(q.value, q.low, q.high), fmt="o", capsize=3, color=f"C{k % 10}")
        ax.annotate(name, (s, q.value), textcoords="offset points", xytext=(5, 5), fontsize=8)
    front = sorted((s, q.value) for name, s, q in pts if name in audit.frontier)
    if front:  # (a frontier of one method had no mark at all)
        ax.scatter([f[0] for f in front], [f[1] for f in front], s=150, facecolors="none", edgecolors="#555",
                   lw=1, label="frontier", zorder=3)
    if len(front) > 1:
        ax.plot([f[0] for f in front], [f[1] for f in front], color="#888", lw=1, ls="--")
    ax.axhline(audit.level, color="#c00", lw=0.8, ls=":", label=f"Q = {audit.level:g}")
    _log_x(ax, [s for _, s, _ in pts])
    ax.set(xlabel="speedup over dense (log scale)", ylabel="aggregate retention Q",
           title=f"Speed-quality frontier: {audit.dense}")
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    # (a method of unknown speedup vanished from the figure, its table row left the only trace)
    unknown = [f"{m.name} ({'speedup unknown' if math.isnan(m.speedup) else 'no Q'})" for m in audit.methods
               if math.isnan(m.speedup) or math.isnan(m.q.value)]
    return _svg(fig, f"frontier-{_stem(audit.dense)}", f"Q against speedup over dense {audit.dense}, per "
                "method, with the frontier", f"Not drawn: {', '.join(unknown)}." if unknown else "")


def audit_section(audits: Sequence[AccelerationAudit], *, skipped: str | None = None) -> Section:
    """The acceleration section from computed audits (one per world model)."""
    sec = Section("acceleration", "Acceleration audit")
    if not audits:
        sec.skipped = skipped or "no acceleration audit was computed"
        return sec
    sec.intro = (
        "Each accelerated generator against the dense rollouts of its world model, on clips both rendered "
        "(RoboWorM, Fig. 5 and Figs. C2-C3): the speedup over dense, each metric's retention and their "
        "mean, Q (Q = 1 for dense). The frontier holds the methods no other is both faster and better than; "
        "see docs/audit.md for the definitions.")
    for a in audits:
        sec.tables += [frontier_table(a), retention_table(a)]
        sec.plots.append(frontier_plot(a))
    return sec


def acceleration_section(inp: ReportInput, *, config_key: ConfigKey | None = None) -> Section:
    """The report's acceleration section, for the audits the manifest declares (``meta.accelerates``).

    A declaration that cannot be audited (a dense generator no item has, two rollouts of a generator for
    one clip) costs only its own audit: the others are built, and the section's text names the items
    and the value they declare.

    Each metric enters Q under one configuration, chosen as ``robojudge audit acceleration`` chooses it
    (:func:`robojudge.meta.current_configs`): its only stored one, else its default one, which
    ``config_key`` tells, else the report input's (the report does not load the metric registry: without
    either, a metric stored under several configurations is left out). The section's text says what was
    left out.
    """
    config_key = config_key if config_key is not None else inp.config_key
    plans = declared_accelerations(inp.items) if inp.items else {}
    if not plans:
        return audit_section([], skipped=(
            "no item declares an accelerated generator (meta.accelerates: the dense generator; "
            "`robojudge audit standins` makes such items, docs/audit.md)"))
    generators = {it.generator for it in inp.items if it.generator}
    audits, problems, left = [], [], []
    not_quality: set[str] = set()
    for dense, methods in plans.items():
        if dense not in generators:
            problems.append(_unknown_dense(inp, dense, sorted(generators)))
            continue
        gens = [dense, *methods]
        ids = {it.item_id for it in inp.items if it.generator in gens}
        measured = [r for r in inp.item_rows if r.metric not in NOT_VIDEO_QUALITY]
        not_quality.update(r.metric for r in inp.item_rows  # as audit acceleration: Q reads the video
                           if r.metric in NOT_VIDEO_QUALITY and r.item_id in ids)
        keep, notes = current_configs(measured, ids, config_key=config_key)
        left += [f"{n} (against {dense})" if len(plans) > 1 else n for n in notes]
        rows = [r for r in measured if (r.metric, r.config_hash, r.version) in keep]
        try:
            got = audit_scores(rows, inp.items, gens)
        except ValueError as exc:
            problems.append(f"the audit against dense {dense!r} ({', '.join(methods)}): {exc}")
            continue
        known = {label: mid for label, mid in got.metric_ids.items() if _knows(inp, mid)}
        if not known:
            continue
        audits.append(acceleration_audit(
            dense, got.scores, directions(known, inp.higher_is_better), manifest_costs(inp.items, gens),
            methods, level=DEFAULT_LEVEL, strata=got.strata, bootstrap=inp.bootstrap, seed=inp.seed))
    note = ("Not audited: " + "; ".join(problems) + ".") if problems else ""
    if left:
        note = (f"{note} Each metric enters Q under one configuration (`robojudge audit acceleration --set` "
                f"audits another): {'; '.join(left)}.").strip()
    if not_quality:
        note = (f"{note} Left out of Q as they do not measure the video (a random baseline, the simulator's "
                f"own record): {', '.join(sorted(not_quality))}.").strip()
    if not audits:
        none = (f"no metric with a known direction is {'left to audit' if left else 'stored'} for these "
                "generators")
        return audit_section([], skipped=note if problems else (f"{none}. {note}" if note else none))
    sec = audit_section(audits)
    if note:
        sec.intro = f"{sec.intro} {note}"
    return sec


def _unknown_dense(inp: ReportInput, dense: str, generators: list[str]) -> str:
    """Which items declare ``dense`` in meta.accelerates although no item has that generator."""
    ids = [it.item_id for it in inp.items if it.meta.get(ACCELERATES_KEY) == dense]
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    return (f"item(s) {shown} declare meta.accelerates {dense!r}, which no item's generator is "
            f"(generators: {', '.join(generators)})")


def _knows(inp: ReportInput, metric: str) -> bool:
    try:
        inp.higher_is_better(metric)
    except KeyError:
        return False
    return True


def sample_size_table(result: SampleSizeResult, statistic: str = "FVD") -> Table:
    """Per generator and n: the mean statistic over draws with its spread; last rows the flip shares."""
    table = Table(
        "sample_size", f"{statistic} against the number of windows n",
        ["generator", "windows", "all windows", *[f"n={n}" for n in result.ns]],
        note=(f"mean over random subsets of n windows [percentile interval of the draws]; 'all windows' is "
              f"{statistic} on every window of the generator. flip share: of the generator pairs compared "
              "at n (both with at least n windows; counted in the last row), those ordered differently by "
              "the mean at n than by 'all windows'; per draw: the same with single subsets, averaged. "
              "Empty: n exceeds the windows."),
    )
    for g, pts in result.curves.items():
        cells = [Cell(p.mean, p.low, p.high, digits=3) if not math.isnan(p.mean) else text("") for p in pts]
        table.add([text(g), text(result.windows[g]), _num(result.full[g], 3), *cells])
    table.add([text("flip share"), text(""), text(""), *[_num(f, 2) for f in result.flips]])
    table.add([text("flip share per draw"), text(""), text(""), *[_num(f, 2) for f in result.draw_flips]])
    if result.pairs:  # (a result built without them has none to show)
        table.add([text("generator pairs compared"), text(""), text(""), *[text(k) for k in result.pairs]])
    return table


@_plain_text
def sample_size_plot(result: SampleSizeResult, statistic: str = "FVD") -> str:
    """The statistic against n per generator (mean and percentile band of the draws)."""
    fig, ax = _figure(5.4, 3.8)
    ns: set[int] = set()
    for k, (g, pts) in enumerate(result.curves.items()):
        ok = [p for p in pts if not math.isnan(p.mean)]
        if not ok:
            continue
        ns |= {p.n for p in ok}
        color = f"C{k % 10}"
        ax.plot([p.n for p in ok], [p.mean for p in ok], marker="o", color=color, label=g)
        ax.fill_between([p.n for p in ok], [p.low for p in ok], [p.high for p in ok], color=color, alpha=0.15)
        ax.axhline(result.full[g], color=color, lw=0.7, ls=":")
    # Ticks only at the n with data (those past every generator's windows stretched the axis).
    _log_x(ax, sorted(ns))
    empty = [n for n in result.ns if n not in ns]
    note = f"No generator has n = {', '.join(map(str, empty))} windows, so no point there." if empty else ""
    ax.set(xlabel="windows n (log scale)", ylabel=statistic, title=f"{statistic} sensitivity to sample size")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _svg(fig, "sample-size", f"{statistic} against the number of windows n, per generator", note)


def sample_size_section(result: SampleSizeResult, statistic: str = "FVD", features: str = "") -> Section:
    """FVD sample-size sensitivity (RoboWorM Fig. B3) from a computed result."""
    sec = Section("sample_size", f"{statistic} sample-size sensitivity")
    sec.intro = (f"{statistic} of each generator re-scored against one fixed reference set while the number "
                 "of windows n varies (RoboWorM, Fig. B3); dotted lines: the value on all of a generator's "
                 "windows. A large flip share means rankings at unmatched sample sizes are not to be trusted."
                 + (f" Features: {features}." if features else ""))
    sec.tables.append(sample_size_table(result, statistic))
    sec.plots.append(sample_size_plot(result, statistic))
    return sec
