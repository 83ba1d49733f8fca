"""Per-group summaries of stored results, and the report folder."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from robojudge.meta import mean_confidence_interval
from robojudge.report._tables import md_escape
from robojudge.store import ResultRow, ResultStore, export_results
from robojudge.store._export import SafeCsvWriter


@dataclass(frozen=True)
class GroupSummary:
    """One metric over one group of items (for example one generator)."""

    metric: str
    config_hash: str
    group: str
    n_ok: int
    n_failed: int
    mean: float
    std: float
    ci_low: float
    ci_high: float


def summarize(
    rows: Sequence[ResultRow], group_of: Mapping[str, str], *, level: float = 0.95
) -> list[GroupSummary]:
    """Mean, std and a ``level`` t-interval of each metric per group; failures are counted apart.

    ``group_of`` maps item ids to group names; items it does not know fall in ``"(other)"``.
    """
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    failed: dict[tuple[str, str, str], int] = defaultdict(int)
    for r in rows:
        key = (r.metric, r.config_hash, group_of.get(r.item_id, "(other)"))
        if r.status == "ok" and r.value is not None and not math.isnan(r.value):
            values[key].append(r.value)
        else:
            failed[key] += 1
            values.setdefault(key, [])
    out = []
    for (metric, chash, group), vals in sorted(values.items()):
        ci = mean_confidence_interval(vals, level)
        out.append(
            GroupSummary(metric, chash, group, ci.n, failed[(metric, chash, group)], ci.mean, ci.std,
                         ci.low, ci.high)
        )
    return out


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3f}"


def summary_markdown(summaries: Sequence[GroupSummary], *, group_label: str = "group") -> str:
    """A Markdown table of summaries, one row per (metric, group)."""
    lines = [
        f"| metric | {group_label} | n | failed | mean | std | 95% CI |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for s in summaries:
        ci = "n/a" if math.isnan(s.ci_low) else f"[{_fmt(s.ci_low)}, {_fmt(s.ci_high)}]"
        lines.append(
            f"| {md_escape(s.metric)} | {md_escape(s.group)} | {s.n_ok} | {s.n_failed} | {_fmt(s.mean)} | "
            f"{_fmt(s.std)} | {ci} |"
        )
    return "\n".join(lines) + "\n"


def write_report(
    store: ResultStore,
    out_dir: str | Path,
    group_of: Mapping[str, str],
    *,
    title: str = "robojudge results",
    group_label: str = "generator",
) -> list[GroupSummary]:
    """Write ``results.csv`` (long rows), ``summary.csv``, ``summary.md`` and ``errors.csv``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = store.rows()
    export_results(store, out / "results.csv", "csv")
    summaries = summarize(rows, group_of)
    fields = list(GroupSummary.__dataclass_fields__)
    with (out / "summary.csv").open("w", newline="") as f:
        w = SafeCsvWriter(f)
        w.writerow(fields)
        for s in summaries:
            d = asdict(s)
            w.writerow([d[k] for k in fields])
    with (out / "errors.csv").open("w", newline="") as f:
        w2 = SafeCsvWriter(f)
        w2.writerow(["item_id", "metric", "config_hash", "error"])
        for r in rows:
            if r.status != "ok":
                w2.writerow([r.item_id, r.metric, r.config_hash, r.error])
    n_err = sum(r.status != "ok" for r in rows)
    md = f"# {md_escape(title)}\n\n{len(rows)} results, {n_err} failed.\n\n"
    md += summary_markdown(summaries, group_label=group_label)
    (out / "summary.md").write_text(md)
    return summaries
