"""``robojudge aggregate ...``: RoboPhys-3D scores and RoboPhyscore metric selection from a CSV."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from robojudge import DEFAULT_SEED
from robojudge._files import replace_text
from robojudge.aggregate import (
    AGREEMENT_STATISTICS,
    CORRELATION_PARTS,
    DEFAULT_THRESHOLDS,
    ROBOPHYSCORE_THRESHOLD,
    AggregateInputError,
    Missing,
    Strategy,
    bootstrap_scores,
    correlations_from_table,
    load_taxonomy,
    read_metric_table,
    scores_from_table,
    select_metrics,
    selection_from_table,
    threshold_sensitivity,
)
from robojudge.cli._common import console, err_console, fail
from robojudge.cli._tables import add_column, print_table
from robojudge.store import SafeCsvWriter

if TYPE_CHECKING:
    import pandas as pd

app = typer.Typer(help="RoboPhys-3D aggregation: AFS, RoboPhyscore and its metric selection.",
                  no_args_is_help=True)


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _note(message: str) -> None:
    err_console.print(f"note: {message}", highlight=False)


@app.command("scores")
def scores_cmd(
    inp: Path = typer.Option(..., "--in", help="CSV (or .parquet): wide (one column per metric id) or "
                             "long ('metric' and 'value' columns)."),
    by: str = typer.Option("", "--by", help="Comma-separated grouping columns; one output row per group."),
    normalized: bool = typer.Option(False, "--normalized", help="Values are already normalized to [0, 1]."),
    strategy: str = typer.Option("table", "--strategy", help="Normalization of raw values: 'table' "
                                 "(Table 13 bounds) or 'percentile' (pool-percentile metrics re-bounded "
                                 "on this file's rows)."),
    macro: str | None = typer.Option(None, "--macro", help="Task-regime column: score each regime, then "
                                     "average the regimes with equal weight."),
    missing: str = typer.Option("nan", "--missing", help="'nan' (a missing metric makes its sub-dimension, "
                                "level and AFS NaN) or 'drop' (it leaves the mean, the totals are scaled "
                                "up from what is present, and n_ columns count it)."),
    metrics: str | None = typer.Option(None, "--robophyscore-metrics",
                                       help="Comma-separated RoboPhyscore set "
                                       "\\[default: the paper's eight]."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output CSV \\[default: print the CSV; as in "
                                    "every CSV robojudge writes, a cell a spreadsheet would run as a "
                                    "formula, such as +modelB, gets a leading ']."),
    bootstrap: int = typer.Option(0, "--bootstrap", min=0, help="Cluster-bootstrap replicates for intervals "
                                  "of afs, robophyscore and level_<k> (<name>_low, <name>_high); 0: none. "
                                  "1000 replicates take about a second on a few hundred rows."),
    cluster: str | None = typer.Option(None, "--cluster", help="With --bootstrap: column of each row's clip "
                                       "(e.g. clip_id), drawn whole and in every group at once, so groups "
                                       "on the same clips are paired \\[default: each item its own]."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
    level: float = typer.Option(0.95, "--level", "--ci", min=0.5, max=0.999, help="Interval coverage."),
    diff: str | None = typer.Option(None, "--diff", help="With --bootstrap: two groups A,B; print A minus B "
                                    "on afs, robophyscore and each level (paired, with its interval and "
                                    "P(A > B)) instead of the table."),
) -> None:
    """AFS, RoboPhyscore, level and sub-dimension scores per group, in the paper's table conventions.

    subdim_<CODE> is the sum of the sub-dimension's normalized metrics (IQ-1 out of 6), level_<k> the sum
    of its sub-dimension means (level 1 out of 5) and afs the sum of the four level means (out of 4).
    Under --missing drop a total missing some of its metrics (sub-dimensions) is the mean of those
    present times the full count, not their sum; n_subdim_<CODE> and n_level_<k> count them.
    With --bootstrap the clusters are drawn within each 'source' where the table has that column, and
    the whole computation (normalization, group means, macro average) is redone per replicate.
    """
    miss, strat = _choices(strategy, missing)
    pair = _split(diff)
    if not bootstrap:
        given = [flag for flag, v in (("--cluster", cluster), ("--diff", diff)) if v is not None]
        if given:
            raise fail(f"{' and '.join(given)} {'need' if len(given) > 1 else 'needs'} --bootstrap N (N "
                       "replicates, e.g. 1000)")
    elif diff is not None and len(pair) != 2:
        raise fail(f"--diff takes two groups, A,B; got {diff!r}")
    try:
        table = read_metric_table(inp)
        if not bootstrap:
            result = scores_from_table(table, by=_split(by), normalized=normalized, strategy=strat,
                                       macro=macro, missing=miss, metrics=_split(metrics) or None, source=inp,
                                       note=_note)
        else:
            found = bootstrap_scores(table, by=_split(by), bootstrap=bootstrap, cluster=cluster, seed=seed,
                                     level=level, diff=(pair[0], pair[1]) if diff is not None else None,
                                     normalized=normalized, strategy=strat, macro=macro, missing=miss,
                                     metrics=_split(metrics) or None, source=inp, note=_note)
            if diff is not None:
                frame = found.differences_frame()
                _write_or_print(_safe_csv(frame), out, f"{len(frame)} differences")
                return
            result = found.table
    except AggregateInputError as exc:
        raise fail(str(exc)) from None
    _write_or_print(_safe_csv(result), out, f"{len(result)} rows")


@app.command("correlations")
def correlations_cmd(
    inp: Path = typer.Option(..., "--in", help="CSV (or .parquet): wide (one column per metric id) or "
                             "long ('metric' and 'value' columns), as for aggregate scores."),
    by: str = typer.Option(..., "--by", help="Comma-separated columns making one configuration (e.g. "
                           "generator,meta.substrate); correlations are taken across configurations."),
    of: str = typer.Option("subdim", "--of", help="What to correlate: 'subdim' (the 18 sub-dimension "
                           "scores, RoboPhys-3D Fig. 3a), 'level' (the four levels, Fig. 3b) or 'metric' "
                           "(the normalized metrics, Fig. 9)."),
    normalized: bool = typer.Option(False, "--normalized", help="Values are already normalized to [0, 1]."),
    strategy: str = typer.Option("table", "--strategy", help="Normalization of raw values: 'table' or "
                                 "'percentile' (as for aggregate scores)."),
    macro: str | None = typer.Option(None, "--macro", help="Task-regime column: each configuration's values "
                                     "are averaged over its regimes with equal weight first."),
    missing: str = typer.Option("nan", "--missing", help="'nan' or 'drop', as for aggregate scores."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output CSV \\[default: print the CSV]."),
) -> None:
    """Pearson correlation matrix across configurations among sub-dimensions, levels or metrics.

    RoboPhys-3D Fig. 3a/3b and Fig. 9: each configuration (a group of --by) gives one value per part; a
    pair is correlated over the configurations where both have a value (at least 3). The CSV has one row
    and one column per part, in taxonomy order; an empty cell has no correlation (a note says why).
    """
    miss, strat = _choices(strategy, missing)
    if of not in CORRELATION_PARTS:
        raise fail(f"--of must be one of {', '.join(CORRELATION_PARTS)}, got {of!r}")
    try:
        corr = correlations_from_table(read_metric_table(inp), by=_split(by), of=of, normalized=normalized,
                                       strategy=strat, macro=macro, missing=miss, source=inp, note=_note)
    except AggregateInputError as exc:
        raise fail(str(exc)) from None
    _write_or_print(_safe_csv(corr.reset_index()), out, f"a {len(corr)}x{len(corr)} correlation matrix")


def _write_or_print(text: str, out: Path | None, what: str) -> None:
    """``text`` (a CSV) into ``out``, replaced whole, saying ``wrote WHAT to OUT``; printed without it."""
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        replace_text(out, text)  # the old file or the whole new one
    except OSError as exc:
        raise fail(f"cannot write {out}: {exc}") from None
    console.print(f"wrote {what} to {out}", highlight=False)


def _choices(strategy: str, missing: str) -> tuple[Missing, Strategy]:
    if strategy not in ("table", "percentile"):
        raise fail(f"--strategy must be table or percentile, got {strategy!r}")
    if missing not in ("nan", "drop"):
        raise fail(f"--missing must be nan or drop, got {missing!r}")
    return ("nan" if missing == "nan" else "drop"), ("table" if strategy == "table" else "percentile")


def _safe_csv(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text (NaN as an empty cell), written like every CSV robojudge writes: a text cell
    a spreadsheet would run as a formula gets a leading ``'`` (:class:`robojudge.store.SafeCsvWriter`).
    A group named ``=HYPERLINK(...)`` comes out of ``results export`` escaped, is read back unescaped,
    and must not leave here as a live formula."""
    buf = io.StringIO()
    w = SafeCsvWriter(buf, lineterminator="\n")
    w.writerow(frame.columns)
    for row in frame.itertuples(index=False, name=None):
        w.writerow("" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in row)
    return buf.getvalue()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4f}"
    return str(v)


@app.command("select")
def select_cmd(
    inp: Path = typer.Option(..., "--in", help="CSV (or .parquet) of per-configuration metric values: wide, "
                             "or long with --by naming the configuration columns."),
    targets: str = typer.Option(",".join(load_taxonomy().task_success), "--targets",
                                help="Comma-separated task-success columns of eq. 3."),
    threshold: float = typer.Option(ROBOPHYSCORE_THRESHOLD, "--threshold",
                                    help="Keep a metric when its minimum Pearson r over the targets is "
                                    "strictly above this (eq. 3)."),
    thresholds: str | None = typer.Option(None, "--thresholds", help="Comma-separated thresholds: print "
                                          "the sensitivity table (Table 16) instead."),
    by: str = typer.Option("", "--by", help="Configuration columns; rows are averaged per configuration."),
    references: str | None = typer.Option(None, "--references", help="Comma-separated columns (e.g. human "
                                          "scores) to report agreement against \\[default: the targets]."),
    normalized: bool = typer.Option(False, "--normalized", help="Values are already normalized to [0, 1]."),
    strategy: str = typer.Option("table", "--strategy", help="Normalization of raw values, as for `aggregate "
                                 "scores`: 'table' (Table 13 bounds) or 'percentile' (pool-percentile "
                                 "metrics, raw HPSv3 rewards among them, re-bounded on this file's rows)."),
    missing: str = typer.Option("nan", "--missing", help="A configuration whose metric lacks values on some "
                                "of its rows or items: 'nan' (no value there, left out of that metric's "
                                "correlations) or 'drop' (the mean of the values there are)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Select RoboPhyscore metrics by their minimum Pearson r with the task-success targets (eq. 3)."""
    if not -1.0 <= threshold <= 1.0:  # NaN too: a Pearson r can never pass it
        raise fail(f"--threshold {threshold}: a Pearson r lies in [-1, 1]")
    tgt = _split(targets)
    miss, strat = _choices(strategy, missing)
    try:
        found = selection_from_table(read_metric_table(inp), tgt, by=_split(by),
                                     references=_split(references), normalized=normalized, strategy=strat,
                                     missing=miss, source=inp, note=_note)
    except AggregateInputError as exc:
        raise fail(str(exc)) from None
    values, ref_values = found.values, found.references
    if thresholds:
        try:
            ths = [float(x) for x in _split(thresholds)] or list(DEFAULT_THRESHOLDS)
        except ValueError:
            raise fail(f"--thresholds expects numbers, got {thresholds!r}") from None
        rows = threshold_sensitivity(values, tgt, ths, references=ref_values,
                                     sample_values=found.sample_values,
                                     sample_references=found.sample_references)
        why = select_metrics(values, tgt, -math.inf).reason  # (a correlation that cannot be computed)
        if why:
            _note(f"no metric can be selected at any threshold: {why}")
        if as_json:
            typer.echo(json.dumps([_row_json(r) for r in rows], indent=2))
        else:
            samples = found.sample_values or {}
            _print_sensitivity(rows, max((len(v) for v in values.values()), default=0),
                               max((len(v) for v in samples.values()), default=0))
        return
    sel = select_metrics(values, tgt, threshold)
    if as_json:
        typer.echo(json.dumps({
            "threshold": threshold, "targets": tgt,
            "selected": list(sel.selected) if sel.selected else None,
            "reason": sel.reason,
            "min_r": {k: _num(v) for k, v in sorted(sel.min_r.items(), key=lambda kv: -_key(kv[1]))},
            "min_r_why": sel.why,
            "n": {k: sel.n[k] for k, _ in sorted(sel.min_r.items(), key=lambda kv: -_key(kv[1]))},
            "configurations": sel.configurations,
            "few_configurations": sel.few_configurations(),
        }, indent=2))
        return
    t = Table(show_edge=False, title=f"eq. 3 at threshold {threshold} (targets: {', '.join(tgt)})")
    add_column(t, "metric", fold=True)
    add_column(t, "min r", justify="right")
    add_column(t, "n", justify="right")
    add_column(t, "kept")
    for m, v in sorted(sel.min_r.items(), key=lambda kv: -_key(kv[1])):
        t.add_row(m, _fmt(v), f"{sel.n[m]} of {sel.configurations}",
                  "yes" if sel.selected and m in sel.selected else "")
    print_table(t)
    if few := sel.few_configurations():
        console.print(f"note: n is the fewest configurations a metric's r with a target rests on (those with "
                      f"both values); under half of the {sel.configurations}, a min r can pass by chance: "
                      + ", ".join(f"{m} ({sel.n[m]})" for m in few), highlight=False, markup=False)
    undefined: dict[str, list[str]] = {}
    for m, why in sel.why.items():
        undefined.setdefault(why, []).append(m)
    for why, names in undefined.items():
        console.print(f"note: no min r ({why}): {', '.join(names)}", highlight=False, markup=False)
    if sel.selected is None:
        why = f" ({sel.reason})" if sel.reason else ""
        console.print(f"no metric passes: RoboPhyscore is undefined at this threshold{why}", highlight=False)


def _key(v: float) -> float:
    return -math.inf if math.isnan(v) else v


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6)


def _row_json(row: Any) -> dict[str, Any]:
    return {
        "threshold": row.threshold,
        "n_metrics": row.n_metrics,
        "selected": list(row.selected) if row.selected else None,
        "agreement": None if row.agreement is None else {
            k: {**{name: _num(v) for name, v in a.statistics().items()}, "n": a.n,
                "level": "sample" if k in row.per_sample else "configuration",
                **({"why": a.why} if a.why is not None else {})}
            for k, a in row.agreement.items()
        },
    }


def _print_sensitivity(rows: list[Any], total: int, samples: int = 0) -> None:
    t = Table(show_edge=False, title="RoboPhyscore threshold sensitivity")
    for c in ("threshold", "reference", *(heading for _, heading, _ in AGREEMENT_STATISTICS), "# metrics",
              "n"):
        add_column(t, c, fold=c == "reference")
    counts = set()
    for row in rows:
        if row.agreement is None:
            t.add_row(f"{row.threshold:g}", "", *(["N/A"] * len(AGREEMENT_STATISTICS)), "0", "")
            continue
        for ref, a in row.agreement.items():
            if ref in row.per_sample:
                n = f"{a.n} of {samples} samples"
            else:
                counts.add(a.n)
                n = f"{a.n} of {total}"
            t.add_row(f"{row.threshold:g}", ref, *map(_fmt, a.statistics().values()), str(row.n_metrics), n)
    print_table(t)
    if any(row.per_sample for row in rows):
        console.print(f"note: agreement with {', '.join(sorted(rows[0].per_sample))} is per sample, as "
                      "RoboPhys-3D App. D compares human scores: each sample's RoboPhyscore (the mean of "
                      "the kept metrics' values there) against its own value, n counting the samples with "
                      "both; eq. 3 selects on the configuration means", highlight=False, markup=False)
    if len(counts) > 1 or any(n < total for n in counts):
        console.print(f"note: n counts the configurations (of {total}) a row's statistics are over: those "
                      "with a value for every kept metric and for the reference; rows with different n are "
                      "over different configurations", highlight=False, markup=False)
    for row in rows:
        chosen = ", ".join(row.selected) if row.selected else "none (RoboPhyscore undefined)"
        console.print(f"{row.threshold:g} ({row.n_metrics}): {chosen}", highlight=False)
    for row in rows:
        for ref, a in (row.agreement or {}).items():
            if a.why is not None:
                console.print(f"note: at {row.threshold:g}, no agreement with {ref}: {a.why}",
                              highlight=False, markup=False)
