"""``robojudge aggregate ...``: RoboPhys-3D scores and RoboPhyscore metric selection from a CSV."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import typer
from rich.table import Table

from robojudge.aggregate import (
    DEFAULT_THRESHOLDS,
    Missing,
    Strategy,
    average_full_score,
    load_taxonomy,
    macro_average,
    normalize,
    robophyscore,
    select_metrics,
    threshold_sensitivity,
)
from robojudge.cli._common import console, err_console, fail
from robojudge.taxonomy import unknown_metric_message

app = typer.Typer(help="RoboPhys-3D aggregation: AFS, RoboPhyscore and its metric selection.",
                  no_args_is_help=True)

_LONG = ("metric", "value")


def _split(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _read(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise fail(f"no such file: {path}")
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise fail(f"{path}: cannot read: {exc}") from None


def _to_long(df: pd.DataFrame, keys: list[str], extra: list[str], path: Path) -> pd.DataFrame:
    """Rows ``keys..., metric, value``; metrics are taxonomy ids or names in ``extra``."""
    tax = load_taxonomy()
    missing = [k for k in keys if k not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns))
        raise fail(f"{path}: no column(s) {', '.join(missing)}; columns are {have}")
    if all(c in df.columns for c in _LONG):
        long = df[[*keys, *_LONG]].copy()
        unknown = sorted({str(m) for m in long["metric"].unique()} - set(tax.ids) - set(extra))
        if unknown:
            raise fail(f"{path}: {unknown_metric_message(unknown[0], tax.ids)}"
                       + (f" (and {len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""))
    else:
        cols = [c for c in df.columns if c in tax or c in extra]
        if not cols:
            raise fail(f"{path}: no metric columns; expected RoboPhys-3D metric ids (e.g. iq1_fvd) as "
                       "columns, or a long table with 'metric' and 'value' columns")
        ignored = [str(c) for c in df.columns if c not in cols and c not in keys]
        if ignored:
            err_console.print(f"note: ignoring non-metric column(s): {', '.join(ignored)}", highlight=False)
        long = df.melt(id_vars=keys, value_vars=cols, var_name="metric", value_name="value")
    long["value"] = pd.to_numeric(long["value"], errors="coerce").astype(float)
    return long


def _normalize_long(long: pd.DataFrame, strategy: Strategy) -> pd.DataFrame:
    tax = load_taxonomy()
    out = long.copy()
    for metric, idx in out.groupby("metric").groups.items():
        if metric in tax:
            raw = out.loc[idx, "value"].to_numpy(dtype=float)
            try:
                out.loc[idx, "value"] = normalize(str(metric), raw, strategy=strategy, pool=raw)
            except ValueError as exc:
                raise fail(f"cannot normalize {metric}: {exc}") from None
    return out


def _config_table(long: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean of each metric per group of ``keys`` (one row per group, one column per metric)."""
    if keys:
        return long.groupby([*keys, "metric"], sort=True)["value"].mean().unstack("metric")
    return long.groupby("metric")["value"].mean().to_frame().T


def _columns(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    return {str(c): frame[c].to_numpy(dtype=float) for c in frame.columns}


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
                                "level and AFS NaN) or 'drop' (it leaves the mean)."),
    metrics: str | None = typer.Option(None, "--robophyscore-metrics",
                                       help="Comma-separated RoboPhyscore set [default: the paper's eight]."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output CSV [default: print a table]."),
) -> None:
    """AFS, RoboPhyscore, level and sub-dimension scores per group, in the paper's table conventions.

    subdim_<CODE> is the sum of the sub-dimension's normalized metrics (IQ-1 out of 6), level_<k> the sum
    of its sub-dimension means (level 1 out of 5) and afs the sum of the four level means (out of 4).
    """
    if strategy not in ("table", "percentile"):
        raise fail(f"--strategy must be table or percentile, got {strategy!r}")
    if missing not in ("nan", "drop"):
        raise fail(f"--missing must be nan or drop, got {missing!r}")
    miss: Missing = "nan" if missing == "nan" else "drop"
    keys = _split(by)
    group_keys = keys + ([macro] if macro else [])
    df = _read(inp)
    long = _to_long(df, group_keys, [], inp)
    if not normalized:
        long = _normalize_long(long, "table" if strategy == "table" else "percentile")
    table = _config_table(long, group_keys)
    tax = load_taxonomy()
    selected = _split(metrics) or None
    if selected:
        unknown = [m for m in selected if m not in tax]
        if unknown:
            raise fail(unknown_metric_message(unknown[0], tax.ids))
    try:
        full = average_full_score(_columns(table), missing=miss)
        rps = robophyscore(_columns(table), selected, missing=miss)
    except (KeyError, ValueError) as exc:
        raise fail(str(exc)) from None
    result = pd.DataFrame({"afs": full.afs, "robophyscore": rps}, index=table.index)
    for lv, v in full.level_totals().items():
        result[f"level_{lv}"] = v
    for d, v in full.subdim_totals().items():
        result[f"subdim_{d}"] = v
    if macro:
        result = _macro(result, keys, macro, skipna=miss == "drop")
    result = result.reset_index() if keys else result.reset_index(drop=True)
    if out is not None:
        result.to_csv(out, index=False)
        console.print(f"wrote {len(result)} rows to {out}", highlight=False)
    else:
        typer.echo(result.to_csv(index=False), nl=False)


def _macro(result: pd.DataFrame, keys: list[str], regime: str, *, skipna: bool) -> pd.DataFrame:
    flat = result.reset_index()
    groups = flat.groupby(keys, sort=True, dropna=False) if keys else [((), flat)]
    rows: list[dict[str, Any]] = []
    for key, part in groups:
        row: dict[str, Any] = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row["n_regimes"] = part[regime].nunique()
        for col in result.columns:
            row[col] = macro_average(part[col].to_numpy(), list(part[regime]), skipna=skipna).value
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.set_index(keys) if keys else frame


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
    threshold: float = typer.Option(0.7, "--threshold", help="Keep a metric when its minimum Pearson r "
                                    "over the targets is strictly above this."),
    thresholds: str | None = typer.Option(None, "--thresholds", help="Comma-separated thresholds: print "
                                          "the sensitivity table (Table 16) instead."),
    by: str = typer.Option("", "--by", help="Configuration columns; rows are averaged per configuration."),
    references: str | None = typer.Option(None, "--references", help="Comma-separated columns (e.g. human "
                                          "scores) to report agreement against [default: the targets]."),
    normalized: bool = typer.Option(False, "--normalized", help="Values are already normalized to [0, 1]."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Select RoboPhyscore metrics by their minimum Pearson r with the task-success targets (eq. 3)."""
    tgt = _split(targets)
    refs = _split(references)
    keys = _split(by)
    df = _read(inp)
    if not keys and all(c in df.columns for c in _LONG):
        raise fail("a long table needs --by naming the configuration columns")
    long = _to_long(df, keys, tgt + refs, inp)
    if not normalized:
        long = _normalize_long(long, "table")
    table = _config_table(long, keys) if keys else _wide_rows(long, len(df))
    cols = _columns(table)
    missing = [t for t in tgt + refs if t not in cols]
    if missing:
        raise fail(f"{inp}: no target/reference column(s) {', '.join(missing)}")
    values = {k: v for k, v in cols.items() if k not in refs or k in tgt}
    ref_values = {r: cols[r] for r in refs} or None
    if thresholds:
        try:
            ths = [float(x) for x in _split(thresholds)] or list(DEFAULT_THRESHOLDS)
        except ValueError:
            raise fail(f"--thresholds expects numbers, got {thresholds!r}") from None
        rows = threshold_sensitivity(values, tgt, ths, references=ref_values)
        if as_json:
            typer.echo(json.dumps([_row_json(r) for r in rows], indent=2))
        else:
            _print_sensitivity(rows)
        return
    sel = select_metrics(values, tgt, threshold)
    if as_json:
        typer.echo(json.dumps({
            "threshold": threshold, "targets": tgt,
            "selected": list(sel.selected) if sel.selected else None,
            "min_r": {k: _num(v) for k, v in sorted(sel.min_r.items(), key=lambda kv: -_key(kv[1]))},
        }, indent=2))
        return
    t = Table(show_edge=False, title=f"eq. 3 at threshold {threshold} (targets: {', '.join(tgt)})")
    t.add_column("metric")
    t.add_column("min r", justify="right")
    t.add_column("kept")
    for m, v in sorted(sel.min_r.items(), key=lambda kv: -_key(kv[1])):
        t.add_row(m, _fmt(v), "yes" if sel.selected and m in sel.selected else "")
    console.print(t)
    if sel.selected is None:
        console.print("no metric passes: RoboPhyscore is undefined at this threshold", highlight=False)


def _wide_rows(long: pd.DataFrame, n: int) -> pd.DataFrame:
    # melt keeps the row order: block i of each metric is row i of the input.
    frame = pd.DataFrame({str(m): g["value"].to_numpy() for m, g in long.groupby("metric", sort=False)})
    if len(frame) != n:  # pragma: no cover - melt always yields n rows per metric
        raise fail("internal error: row count changed while reshaping")
    return frame


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
            k: {"pearson": _num(a.pearson), "spearman": _num(a.spearman), "r2": _num(a.r2),
                "mae": _num(a.mae), "n": a.n}
            for k, a in row.agreement.items()
        },
    }


def _print_sensitivity(rows: list[Any]) -> None:
    t = Table(show_edge=False, title="RoboPhyscore threshold sensitivity")
    for c in ("threshold", "reference", "pearson r", "spearman rho", "R^2", "MAE", "# metrics"):
        t.add_column(c)
    for row in rows:
        if row.agreement is None:
            t.add_row(f"{row.threshold:g}", "", "N/A", "N/A", "N/A", "N/A", "0")
            continue
        for ref, a in row.agreement.items():
            t.add_row(f"{row.threshold:g}", ref, _fmt(a.pearson), _fmt(a.spearman), _fmt(a.r2), _fmt(a.mae),
                      str(row.n_metrics))
    console.print(t)
    for row in rows:
        chosen = ", ".join(row.selected) if row.selected else "none (RoboPhyscore undefined)"
        console.print(f"{row.threshold:g} ({row.n_metrics}): {chosen}", highlight=False)
