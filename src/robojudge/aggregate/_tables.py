"""Metric tables (CSV or Parquet) to RoboPhys-3D scores and selection inputs: what ``robojudge aggregate``
computes, callable from Python.

A table is *wide* (one column per taxonomy metric id) or *long* (``metric`` and ``value`` columns), with
optional grouping columns. :func:`scores_from_table` gives AFS, RoboPhyscore, level and sub-dimension
scores per group; :func:`selection_from_table` gives the per-configuration columns that
:func:`select_metrics` and :func:`threshold_sensitivity` take. A bad table is an
:class:`AggregateInputError` naming the file. pandas is imported when a table is used, so importing
:mod:`robojudge.aggregate` does not load it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from robojudge.aggregate._normalize import Strategy, normalize
from robojudge.aggregate._regimes import macro_average
from robojudge.aggregate._scores import Missing, average_full_score, robophyscore
from robojudge.taxonomy import load_taxonomy, unknown_metric_message

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "AggregateInputError",
    "SelectionInput",
    "read_metric_table",
    "scores_from_table",
    "selection_from_table",
]

_LONG = ("metric", "value")
Note = Callable[[str], None]
"""Receives a remark about the input that is not an error (columns left out)."""


class AggregateInputError(ValueError):
    """A metric table that cannot be aggregated; the message names the file where there is one."""


def read_metric_table(path: str | Path) -> pd.DataFrame:
    """A ``.parquet`` file, else CSV.

    Raises:
        AggregateInputError: The file is missing or cannot be read.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise AggregateInputError(f"no such file: {path}")
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise AggregateInputError(f"{path}: cannot read: {exc}") from None


def is_long(df: pd.DataFrame) -> bool:
    """Whether ``df`` is a long table (``metric`` and ``value`` columns)."""
    return all(c in df.columns for c in _LONG)


def to_long(df: pd.DataFrame, keys: Sequence[str], extra: Sequence[str], source: str | Path,
            note: Note | None = None) -> pd.DataFrame:
    """Rows ``keys..., metric, value`` (values as floats); metrics are taxonomy ids or names in ``extra``.

    Raises:
        AggregateInputError: A key column is missing, a long table names an unknown metric, or a wide
            table has no metric column.
    """
    import pandas as pd

    tax = load_taxonomy()
    missing = [k for k in keys if k not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns))
        raise AggregateInputError(f"{source}: no column(s) {', '.join(missing)}; columns are {have}")
    if is_long(df):
        long = df[[*keys, *_LONG]].copy()
        long["metric"] = long["metric"].astype(str)
        unknown = sorted(set(long["metric"].unique()) - set(tax.ids) - set(extra))
        if unknown and len(unknown) == long["metric"].nunique():
            more = f" (and {len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""
            raise AggregateInputError(f"{source}: {unknown_metric_message(unknown[0], tax.ids)}{more}; "
                                      "no row names a RoboPhys-3D metric")
        if unknown:
            # An export of a run holds the other metrics scored with them (robojudge's own, judges', KIVA):
            # left out, as a wide table's other columns are. A near miss of an id is named as one.
            if note is not None:
                note(f"ignoring the rows of {len(unknown)} metric(s) that are not RoboPhys-3D ids: "
                     + ", ".join(_with_hint(m, tax.ids) for m in unknown))
            long = long[~long["metric"].isin(unknown)]
    else:
        cols = [c for c in df.columns if c in tax or c in extra]
        if not cols:
            raise AggregateInputError(
                f"{source}: no metric columns; expected RoboPhys-3D metric ids (e.g. iq1_fvd) as "
                "columns, or a long table with 'metric' and 'value' columns")
        ignored = [str(c) for c in df.columns if c not in cols and c not in keys]
        if ignored and note is not None:
            note(f"ignoring non-metric column(s): {', '.join(ignored)}")
        long = df.melt(id_vars=list(keys), value_vars=cols, var_name="metric", value_name="value")
    long["value"] = pd.to_numeric(long["value"], errors="coerce").astype(float)
    return long


def _with_hint(metric: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(metric, known, n=1, cutoff=0.8)
    return f"{metric} (did you mean {close[0]}?)" if close else metric


def normalize_long(long: pd.DataFrame, strategy: Strategy) -> pd.DataFrame:
    """Taxonomy metrics' values normalized to [0, 1] (other rows as they are).

    Raises:
        AggregateInputError: A metric's values cannot be normalized.
    """
    tax = load_taxonomy()
    out = long.copy()
    for metric, idx in out.groupby("metric").groups.items():
        if metric in tax:
            raw = out.loc[idx, "value"].to_numpy(dtype=float)
            try:
                out.loc[idx, "value"] = normalize(str(metric), raw, strategy=strategy, pool=raw)
            except ValueError as exc:
                raise AggregateInputError(f"cannot normalize {metric}: {exc}") from None
    return out


def config_table(long: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Mean of each metric per group of ``keys`` (one row per group, one column per metric)."""
    if keys:
        return long.groupby([*keys, "metric"], sort=True)["value"].mean().unstack("metric")
    return long.groupby("metric")["value"].mean().to_frame().T


def table_columns(frame: pd.DataFrame) -> dict[str, npt.NDArray[np.float64]]:
    """Each column of ``frame`` as a float array, by name."""
    return {str(c): frame[c].to_numpy(dtype=float) for c in frame.columns}


def scores_from_table(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    normalized: bool = False,
    strategy: Strategy = "table",
    macro: str | None = None,
    missing: Missing = "nan",
    metrics: Sequence[str] | None = None,
    source: str | Path = "table",
    note: Note | None = None,
) -> pd.DataFrame:
    """AFS, RoboPhyscore, ``level_<k>`` and ``subdim_<CODE>`` per group of ``by`` (``aggregate scores``).

    Args:
        df: A wide or long metric table.
        by: Grouping columns; one output row per group (the groups' mean of each metric).
        normalized: The values are already in [0, 1]; else they are normalized by ``strategy``.
        strategy: ``"table"`` (Table 13 bounds) or ``"percentile"`` (pool percentiles of this table).
        macro: A task-regime column: score each regime, then average the regimes with equal weight.
        missing: ``"nan"`` (a missing metric makes its sub-dimension, level and AFS NaN) or ``"drop"``.
        metrics: The RoboPhyscore set (default: the paper's eight).
        source: Names the table in error messages (its file).
        note: Receives remarks that are not errors (ignored columns).

    Raises:
        AggregateInputError: A bad table, an unknown metric id or a set that cannot be scored.
    """
    import pandas as pd

    keys = list(by)
    group_keys = keys + ([macro] if macro else [])
    long = to_long(df, group_keys, [], source, note)
    if not normalized:
        long = normalize_long(long, strategy)
    table = config_table(long, group_keys)
    tax = load_taxonomy()
    selected = list(metrics) if metrics else None
    if selected:
        unknown = [m for m in selected if m not in tax]
        if unknown:
            raise AggregateInputError(unknown_metric_message(unknown[0], tax.ids))
    try:
        full = average_full_score(table_columns(table), missing=missing)
        rps = robophyscore(table_columns(table), selected, missing=missing)
    except (KeyError, ValueError) as exc:
        raise AggregateInputError(str(exc)) from None
    result = pd.DataFrame({"afs": full.afs, "robophyscore": rps}, index=table.index)
    for lv, v in full.level_totals().items():
        result[f"level_{lv}"] = v
    for d, v in full.subdim_totals().items():
        result[f"subdim_{d}"] = v
    if macro:
        result = _macro(result, keys, macro, skipna=missing == "drop")
    return result.reset_index() if keys else result.reset_index(drop=True)


def _macro(result: pd.DataFrame, keys: list[str], regime: str, *, skipna: bool) -> pd.DataFrame:
    import pandas as pd

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


@dataclass(frozen=True)
class SelectionInput:
    """Per-configuration columns for :func:`select_metrics` / :func:`threshold_sensitivity`.

    Attributes:
        values: Metric and target columns by name.
        references: Reference columns to report agreement against, or None (the targets).
    """

    values: dict[str, npt.NDArray[np.float64]]
    references: dict[str, npt.NDArray[np.float64]] | None


def selection_from_table(
    df: pd.DataFrame,
    targets: Sequence[str],
    *,
    by: Sequence[str] = (),
    references: Sequence[str] = (),
    normalized: bool = False,
    source: str | Path = "table",
    note: Note | None = None,
) -> SelectionInput:
    """The columns ``aggregate select`` selects from: one row per configuration (``by``), else per row.

    Raises:
        AggregateInputError: A long table without ``by``, a bad table, or a missing target/reference.
    """
    import pandas as pd

    keys, tgt, refs = list(by), list(targets), list(references)
    if not keys and is_long(df):
        raise AggregateInputError("a long table needs --by naming the configuration columns")
    long = to_long(df, keys, tgt + refs, source, note)
    if not normalized:
        long = normalize_long(long, "table")
    if keys:
        table = config_table(long, keys)
    else:
        # melt keeps the row order: block i of each metric is row i of the input.
        table = pd.DataFrame({str(m): g["value"].to_numpy() for m, g in long.groupby("metric", sort=False)})
    cols = table_columns(table)
    absent = [t for t in tgt + refs if t not in cols]
    if absent:
        raise AggregateInputError(f"{source}: no target/reference column(s) {', '.join(absent)}")
    values = {k: v for k, v in cols.items() if k not in refs or k in tgt}
    return SelectionInput(values, {r: cols[r] for r in refs} or None)
