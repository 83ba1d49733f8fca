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
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from robojudge._files import read_input
from robojudge.aggregate._normalize import Strategy, normalize
from robojudge.aggregate._regimes import macro_average
from robojudge.aggregate._scores import Missing, average_full_score, robophyscore
from robojudge.store import OUTSIDE_COLUMN, STALE_COLUMN
from robojudge.taxonomy import load_taxonomy, unknown_metric_message

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CORRELATION_PARTS",
    "AggregateInputError",
    "SelectionInput",
    "correlations_from_table",
    "read_metric_table",
    "scores_from_table",
    "selection_from_table",
]

_LONG = ("metric", "value")
#: Column naming the item of a row (an export's); with it, each (item, metric) must appear once.
ITEM = "item_id"
#: Item ids of set-level rows (one value per group, e.g. FVD per generator) start with this.
SET_PREFIX = "group:"
# attrs key of a frame read from CSV: its row i is line i + 2 of the file.
_LINES = "robojudge_csv_lines"
_SHOWN = 5
Note = Callable[[str], None]
"""Receives a remark about the input that is not an error (columns left out)."""


class AggregateInputError(ValueError):
    """A metric table that cannot be aggregated; the message names the file where there is one."""


def read_metric_table(path: str | Path) -> pd.DataFrame:
    """A Parquet file (``.parquet`` or ``.pq``, any case, or a file that starts as Parquet does), else CSV.
    The file is read once, so a pipe, ``<(...)`` or ``-`` (standard input) works as a file does.

    A CSV is read as text, cell for cell: ids and groups keep their spelling (``01``, ``1`` and ``1.0``
    are three groups; ``NA``, ``None`` and ``null`` are names, not missing values), and the metric
    values are parsed later by :func:`to_long`, which names the line of a cell that is not a number. A
    cell that ``results export`` escaped for spreadsheets (``'=x``, ``'-base``: a leading ``'`` before
    ``= + - @``, a tab or a carriage return) is read back as it was stored.

    Raises:
        AggregateInputError: The file is missing or cannot be read.
    """
    import io

    import pandas as pd

    from robojudge.store import ESCAPED_CELL, SafeCsvWriter

    path = Path(path)
    try:
        data = read_input(path)
    except FileNotFoundError:
        raise AggregateInputError(f"no such file: {path}") from None
    except OSError as exc:
        raise AggregateInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() in (".parquet", ".pq") or data[:4] == b"PAR1":  # as results export names it
            return pd.read_parquet(io.BytesIO(data))
        df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise AggregateInputError(f"{path}: cannot read: {str(exc).strip()}") from None
    for col in df.columns:
        escaped = df[col].str.match(ESCAPED_CELL)
        if escaped.any():
            df.loc[escaped, col] = df.loc[escaped, col].map(SafeCsvWriter.unescape)
    df.attrs[_LINES] = True
    return df


def is_long(df: pd.DataFrame) -> bool:
    """Whether ``df`` is a long table (``metric`` and ``value`` columns)."""
    return all(c in df.columns for c in _LONG)


#: Columns of an export that are no metric but that ``--bootstrap`` reads: ``--cluster clip_id`` and the
#: sources the clusters are drawn within.
_BOOTSTRAP_COLUMNS = ("clip_id", "source")


def to_long(df: pd.DataFrame, keys: Sequence[str], extra: Sequence[str], source: str | Path,
            note: Note | None = None) -> pd.DataFrame:
    """Rows ``keys..., metric, value`` (values as floats); metrics are taxonomy ids or names in ``extra``.

    Two more columns say where each row came from: ``_row`` (its position in ``df``) and, when ``df``
    has an ``item_id`` column, ``_item``.

    Raises:
        AggregateInputError: A key column is missing or has an empty cell, a long table names an
            unknown metric, a wide table has no metric column, a value is not a number, or an item has
            two rows of one metric (two configurations of it, in an export).
    """
    tax = load_taxonomy()
    twice = sorted({k for k in keys if list(keys).count(k) > 1})
    if twice:
        raise AggregateInputError(f"{source}: column(s) {', '.join(map(repr, twice))} named more than once "
                                  "among the grouping columns (--by and --macro); name each once")
    own = ("_row", "_item", *(_LONG if is_long(df) else ()))
    reserved = [k for k in keys if k in own]
    if reserved:
        what = "a column of every long table" if reserved[0] in _LONG else "a name robojudge uses itself"
        raise AggregateInputError(f"{source}: {reserved[0]!r} cannot group rows ({what}); group by the "
                                  "configuration columns (e.g. generator, regime)")
    missing = [k for k in keys if k not in df.columns]
    if missing:
        have = ", ".join(map(str, df.columns))
        raise AggregateInputError(f"{source}: no column(s) {', '.join(missing)}; columns are {have}")
    df = _without_outside(df.reset_index(drop=True).assign(_row=range(len(df))), note)
    if STALE_COLUMN in df.columns:
        # An export marks the rows whose inputs changed since they were computed: their values describe
        # other files, and the report leaves them out too.
        marked = df[STALE_COLUMN].fillna("").astype(str).str.strip().ne("").to_numpy()
        if marked.any():
            if note is not None:
                shown = ", ".join(df.loc[marked, ITEM].astype(str).head(_SHOWN)) if ITEM in df.columns else ""
                eg = f", e.g. {shown}" if shown else ""
                note(f"leaving out the values of {int(marked.sum())} stale row(s) (inputs changed since "
                     f"computed; the {STALE_COLUMN!r} column){eg}: they count as missing until scored again")
            if is_long(df):  # the item stays in its group, without a value: missing, as an error row is
                df["value"] = df["value"].astype(object).where(~marked, "")
            else:
                df = df[~marked]
    has_item = ITEM in df.columns
    if has_item:
        df["_item"] = df[ITEM]
    ids = [*keys, "_row", *(["_item"] if has_item else [])]
    if has_item and keys:
        # A set-level row of another grouping (FVD per task in an export by generator) has no value
        # for these keys: `results export --by` leaves its cell empty. It is left out, with a note.
        empty = np.zeros(len(df), dtype=bool)
        for k in keys:
            empty |= (df[k].isna() | df[k].astype(str).str.strip().eq("")).to_numpy()
        other = empty & df["_item"].astype(str).str.startswith(SET_PREFIX).to_numpy()
        if other.any():
            if note is not None:
                note(f"leaving out {int(other.sum())} set-level row(s) with an empty {'/'.join(keys)} cell "
                     f"(grouped by another field), e.g. {df.loc[other, '_item'].iloc[0]}")
            df = df[~other]
    for k in dict.fromkeys(keys):
        _check_groups(df, k, source)
    if is_long(df):
        long = df[[*ids, *_LONG]].copy()
        long["metric"] = long["metric"].astype(str)
        fed = _judge_fed(long["metric"].unique(), source, note, _declared(df))
        if fed:
            long["metric"] = long["metric"].replace(fed)
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
        long["value"] = _numbers(df, long, "value", source)
    else:
        fed = _judge_fed([str(c) for c in df.columns], source, note)
        if fed:
            df = df.rename(columns=fed)
        cols = [c for c in df.columns if c in tax or c in extra]
        if not cols:
            raise AggregateInputError(
                f"{source}: no metric columns; expected RoboPhys-3D metric ids (e.g. iq1_fvd) as "
                "columns, or a long table with 'metric' and 'value' columns")
        # (item_id is read: it names the items of the duplicate and coverage checks)
        ignored = [str(c) for c in df.columns
                   if c not in cols and c not in keys and c not in ("_row", "_item", ITEM)]
        if ignored and note is not None:
            boot = [c for c in ignored if c in _BOOTSTRAP_COLUMNS]
            read = (f" (as scores: {' and '.join(boot)} can still give --bootstrap its clusters, with "
                    "--cluster, and their sources)" if boot else "")
            note(f"ignoring non-metric column(s): {', '.join(ignored)}{read}")
        wide = df[list(dict.fromkeys([*ids, *cols]))].copy()
        for c in cols:
            wide[c] = _numbers(df, wide, c, source)
        long = wide.melt(id_vars=ids, value_vars=cols, var_name="metric", value_name="value")
    long["value"] = long["value"].astype(float)
    if has_item:
        _check_duplicates(df, long, [*keys, "_item", "metric"], source, fed)
    return long


def _declared(df: pd.DataFrame) -> dict[str, str]:
    """``{judge id: taxonomy id}`` that an export's ``details`` column declares (``taxonomy_id``, which a
    user rubric file's ``taxonomy`` gives its rows); empty without that column."""
    if "details" not in df.columns or "metric" not in df.columns:
        return {}
    tax = load_taxonomy()
    out: dict[str, str] = {}
    judged = df["metric"].astype(str).str.startswith("judge:").to_numpy()
    for metric, details in zip(df.loc[judged, "metric"].astype(str), df.loc[judged, "details"], strict=True):
        if metric in out or not isinstance(details, str) or "taxonomy_id" not in details:
            continue
        try:
            fed = json.loads(details).get("taxonomy_id")
        except (ValueError, AttributeError):  # not a JSON object: no declaration
            continue
        if isinstance(fed, str) and fed in tax:
            out[metric] = fed
    return out


def _judge_fed(names: Sequence[str], source: str | Path, note: Note | None,
               declared: dict[str, str] | None = None) -> dict[str, str]:
    """``{judge id: taxonomy id}`` for the judge rubric scores among ``names`` that feed a RoboPhys-3D
    metric (``judge:NAME:pla_physical_commonsense``, on the metric's native scale: docs/judges.md; or
    the metric ``declared`` for it, from a user rubric file's ``taxonomy``).

    Raises:
        AggregateInputError: Two of ``names`` would be one metric (two judges of one rubric, or a judge
            and the metric itself): never averaged into one value.
    """
    tax = load_taxonomy()
    declared = declared or {}
    fed = {m: t for m in names if (t := declared.get(m) or tax.fed_by_judge(m)) is not None}
    if not fed:
        return {}
    known = set(tax.ids)
    sources: dict[str, list[str]] = {}
    for m in names:
        if m in fed or m in known:
            sources.setdefault(fed.get(m, m), []).append(m)
    twice = {t: ms for t, ms in sources.items() if len(ms) > 1}
    if twice:
        t, ms = next(iter(sorted(twice.items())))
        raise AggregateInputError(f"{source}: {len(ms)} sources of RoboPhys-3D metric {t!r}: "
                                  f"{', '.join(sorted(ms))}, which are never averaged; keep the rows of one "
                                  "(a judge rubric's score is read as the metric it feeds)")
    if note is not None:
        note("reading judge rubric scores as the RoboPhys-3D metrics they feed: "
             + ", ".join(f"{m} as {t}" for m, t in sorted(fed.items())))
    return fed


def _without_outside(df: pd.DataFrame, note: Note | None) -> pd.DataFrame:
    """``df`` less the rows an export marked as outside its suite (:data:`OUTSIDE_COLUMN`: an item
    removed from the manifest since, a generator renamed), which the report leaves out too: they belong
    to no group of the suite, and their group cell is empty."""
    if OUTSIDE_COLUMN not in df.columns:
        return df
    marked = df[OUTSIDE_COLUMN].fillna("").astype(str).str.strip().ne("").to_numpy()
    if not marked.any():
        return df
    if note is not None:
        ids = list(dict.fromkeys(df.loc[marked, ITEM].astype(str))) if ITEM in df.columns else []
        more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
        eg = f"; items {', '.join(ids[:_SHOWN])}{more}" if ids else ""
        note(f"leaving out {int(marked.sum())} row(s) marked outside the suite the table was exported with "
             f"(the {OUTSIDE_COLUMN!r} column{eg}): they belong to no group of it, and the report leaves "
             "them out too")
    return df[~marked].copy()  # (index labels kept: they are the rows' _row numbers, for line numbers)


def _where(df: pd.DataFrame, row: int) -> str:
    """``line N`` of a table read from CSV (the header is line 1), else ``row N`` (0-based)."""
    return f"line {row + 2}" if df.attrs.get(_LINES) else f"row {row}"


def _item_of(df: pd.DataFrame, row: int) -> str:
    """The item of row ``row`` (its ``_row`` number, which is also its index label in :func:`to_long`)."""
    return f", item {df[ITEM].loc[row]!r}" if ITEM in df.columns else ""


def _check_groups(df: pd.DataFrame, key: str, source: str | Path) -> None:
    col = df[key]
    empty = col.isna() | col.astype(str).str.strip().eq("")
    if empty.any():
        rows = df.index[empty.to_numpy()]
        more = f" (and {rows.size - 1} more rows)" if rows.size > 1 else ""
        raise AggregateInputError(
            f"{source} {_where(df, int(rows[0]))}{_item_of(df, int(rows[0]))}, column {key!r}: empty group "
            f"cell{more}; give every row a group (`results export --by {key}` writes '-' for an item "
            "without the field)")


def _numbers(df: pd.DataFrame, part: pd.DataFrame, column: str, source: str | Path) -> pd.Series:
    """``part[column]`` as floats; blank and ``nan`` are missing, any other text that is no number an
    error naming the file, line, item and column."""
    import pandas as pd

    col = part[column]
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        return col.astype(float)
    text = col.astype(object).where(col.notna(), "").astype(str).str.strip()
    blank = text.eq("") | text.str.lower().eq("nan")
    values = pd.to_numeric(text.where(~blank, "nan"), errors="coerce").astype(float)
    bad = values.isna() & ~blank
    if bad.any():
        rows = part.loc[bad, "_row"].to_numpy()
        first = int(rows[0])
        metric = f", metric {part.loc[bad, 'metric'].iloc[0]!r}" if "metric" in part.columns else ""
        more = f" ({rows.size} such cells)" if rows.size > 1 else ""
        raise AggregateInputError(f"{source} {_where(df, first)}{_item_of(df, first)}{metric}, column "
                                  f"{column!r}: not a number: {text[bad].iloc[0]!r}{more}")
    return values


def _check_duplicates(df: pd.DataFrame, long: pd.DataFrame, by: list[str], source: str | Path,
                      fed: dict[str, str] | None = None) -> None:
    """Each (groups, item, metric) once: two rows of one are never averaged into one value. ``fed``:
    the judge ids read as the metric they feed (:func:`_judge_fed`), named in the messages."""
    dup = long[long.duplicated(by, keep=False)]
    if dup.empty:
        return
    first = dup.groupby(by, sort=False)
    n_pairs = first.ngroups
    key, rows = next(iter(first))
    row_ids = sorted(int(r) for r in rows["_row"])
    lines = ", ".join(_where(df, r) for r in row_ids[:_SHOWN])
    item, metric = key[-2], key[-1]
    judged = sorted(j for j, t in (fed or {}).items() if t == metric)
    # (no row of the file names a metric a judge feeds: its rows are the judge's)
    what = f"metric {metric!r}" + (f" (from {', '.join(judged)})" if judged else "")
    more = f"; {n_pairs - 1} more (item, metric) pairs have several rows" if n_pairs > 1 else ""
    if "version" in df.columns:
        versions = sorted({str(df["version"].loc[r]) for r in row_ids})
        hashes = {str(df["config_hash"].loc[r]) for r in row_ids} if "config_hash" in df.columns else set()
        if len(versions) > 1 and len(hashes) <= 1:
            raise AggregateInputError(
                f"{source}: item {item!r}, {what}: stored under {len(versions)} versions of the "
                f"metric (version {', '.join(versions)}; {lines}), which are never averaged{more}; "
                + ("a judge run again with a changed rubric keeps its earlier rubric version's rows:"
                   if judged else "an earlier robojudge's rows stay current beside the new version's: "
                   "export with `robojudge results export --installed-versions`, or")
                + " keep the rows of one version (filter the export on its version column)")
    if "config_hash" in df.columns:
        configs = sorted({str(df["config_hash"].loc[r]) for r in row_ids})
        if len(configs) > 1:
            raise AggregateInputError(
                f"{source}: item {item!r}, {what}: stored under {len(configs)} configurations "
                f"(config_hash {', '.join(configs)}; {lines}), which are never averaged{more}; keep the rows "
                "of one configuration (filter the export on its config_hash column, or export a store "
                "scored with one configuration of the metric)")
    raise AggregateInputError(f"{source}: item {item!r}, {what}: {len(row_ids)} rows ({lines}), "
                              f"which are never averaged{more}; keep one row per item and metric")


def _with_hint(metric: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(metric, known, n=1, cutoff=0.8)
    return f"{metric} (did you mean {close[0]}?)" if close else metric


def normalize_long(long: pd.DataFrame, strategy: Strategy, source: str | Path = "table") -> pd.DataFrame:
    """Taxonomy metrics' values normalized to [0, 1] (other rows as they are).

    Raises:
        AggregateInputError: A metric's values cannot be normalized (the message names ``source``).
    """
    tax = load_taxonomy()
    out = long.copy()
    for metric, idx in out.groupby("metric").groups.items():
        if metric in tax:
            raw = out.loc[idx, "value"].to_numpy(dtype=float)
            try:
                out.loc[idx, "value"] = normalize(str(metric), raw, strategy=strategy, pool=raw)
            except ValueError as exc:
                raise AggregateInputError(f"{source}: cannot normalize {metric}: {exc}") from None
    return out


def config_table(long: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Mean of each metric per group of ``keys`` (one row per group, one column per metric)."""
    if keys:
        return long.groupby([*keys, "metric"], sort=True)["value"].mean().unstack("metric")
    return long.groupby("metric")["value"].mean().to_frame().T


def coverage(long: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per group of ``keys`` and metric: ``have`` (values present) and ``expected`` (values it should have).

    With an ``_item`` column (a table with ``item_id``), a per-item metric should have a value for
    every item of its group (the items with a row of any metric there), and a set-level metric (rows of
    ``group:...`` ids) for each of its rows. Without it, every row of the metric should have a value.
    """
    import pandas as pd

    by = [*keys, "metric"]
    present = long["value"].notna()
    if "_item" not in long.columns:
        grouped = long.assign(_have=present).groupby(by, sort=True)
        return pd.DataFrame({"have": grouped["_have"].sum(), "expected": grouped.size()})
    is_set = long["_item"].astype(str).str.startswith(SET_PREFIX)
    items = long[~is_set]
    have_items = items[present[~is_set]].groupby(by, sort=True)["_item"].nunique()
    per_item = items.groupby(by, sort=True)["_item"].nunique()  # metrics with item rows
    if keys:
        n_items = items.groupby(list(keys), sort=True)["_item"].nunique()
        expected_items = pd.Series(
            [int(n_items.get(k[0] if len(keys) == 1 else k[:-1], 0)) for k in per_item.index],
            index=per_item.index, dtype=int)
    else:
        expected_items = pd.Series(int(items["_item"].nunique()), index=per_item.index, dtype=int)
    sets = long[is_set].assign(_have=present[is_set]).groupby(by, sort=True)
    out = pd.concat([
        pd.DataFrame({"have": have_items.reindex(per_item.index, fill_value=0), "expected": expected_items}),
        pd.DataFrame({"have": sets["_have"].sum(), "expected": sets.size()}),
    ])
    return out[~out.index.duplicated(keep="first")].astype(int)


def _outside_unit(normalized: pd.DataFrame, raw: np.ndarray, tol: float = 1e-9, *,
                  given: bool = False) -> str | None:
    """A note naming the metrics with normalized values outside [0, 1], or None. The affine rules
    (identity, one minus, the Likert map) keep such values as they are, so that a raw value outside
    the metric's range (an SSIM of 1.7, a 0 on a 1-5 scale: other units, or another metric's column)
    stays visible; it also moves sub-dimensions and levels outside their own ranges. ``given``: the
    values came in as normalized (``--normalized``), so raw ones are the likely cause."""
    values = normalized["value"].to_numpy(dtype=float)
    bad = np.isfinite(values) & ((values < -tol) | (values > 1 + tol))
    if not bad.any():
        return None
    parts = []
    for metric in sorted(set(normalized.loc[bad, "metric"])):
        mine = bad & (normalized["metric"] == metric).to_numpy()
        first = raw[mine][0]
        parts.append(f"{metric} ({int(mine.sum())}, e.g. {'' if given else 'raw '}{first:g})")
    if given:
        return (f"values given as normalized (--normalized) lie outside [0, 1]: {', '.join(parts)}; kept as "
                "they are, so sub-dimensions and levels leave their ranges: are they raw values? (leave "
                "out --normalized to normalize them)")
    return (f"normalized values outside [0, 1]: {', '.join(parts)}; kept as they are, so sub-dimensions and "
            "levels can leave their ranges: check the raw values' units")


def _partial_note(partial: pd.DataFrame, missing: Missing) -> str:
    shown = []
    for idx, r in partial.head(_SHOWN).iterrows():
        parts = idx if isinstance(idx, tuple) else (idx,)
        group = "/".join(map(str, parts[:-1])) or "all rows"
        shown.append(f"{group}: {parts[-1]} {int(r['have'])} of {int(r['expected'])}")
    more = f" and {len(partial) - _SHOWN} more" if len(partial) > _SHOWN else ""
    what = ("so each is NaN under --missing nan (--missing drop averages the values there are)"
            if missing == "nan" else "each averaged over the values there are (--missing drop)")
    return (f"{len(partial)} (group, metric) pair(s) lack values for some rows or items, {what}: "
            f"{'; '.join(shown)}{more}")


def _grouped(long: pd.DataFrame, keys: Sequence[str], missing: Missing, note: Note | None) -> pd.DataFrame:
    """:func:`config_table`, where a (group, metric) that lacks values for some of the group's rows or
    items is NaN under ``missing="nan"`` (its mean would rest on the measured ones, perhaps the best),
    and the mean of what there is under ``"drop"``; ``note`` hears of every such pair."""
    table = config_table(long, keys)
    cover = coverage(long, keys)
    partial = cover[cover["have"] < cover["expected"]]
    if not partial.empty:
        if missing == "nan":
            for idx in partial.index:
                parts = idx if isinstance(idx, tuple) else (idx,)
                row = parts[:-1] if len(parts) > 2 else parts[0] if len(parts) == 2 else table.index[0]
                table.loc[row, parts[-1]] = np.nan
        if note is not None:
            note(_partial_note(partial, missing))
    return table


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
        missing: ``"nan"`` (a missing metric makes its sub-dimension, level and AFS NaN; a metric that
            lacks a value for some rows or items of a group is missing for that group) or ``"drop"``
            (the group's mean of the values there are). ``note`` hears of every partial group. Under
            ``"drop"`` a total over fewer metrics (sub-dimensions) than the taxonomy's is their mean
            times the full count; ``n_subdim_<CODE>`` and ``n_level_<k>`` columns count what it rests
            on (with ``macro``, the fewest of any regime), and ``note`` hears of every such total.
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
    raw_values = long["value"].to_numpy(dtype=float)
    if not normalized:
        long = normalize_long(long, strategy, source)
    if note is not None:
        outside = _outside_unit(long, raw_values, given=normalized)
        if outside:
            note(outside)
    table = _grouped(long, group_keys, missing, note)
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
    if missing == "drop":  # a total over fewer parts than the paper's is scaled up: say what it rests on
        for lv, n in full.level_counts.items():
            result[f"n_level_{lv}"] = n
        for d, n in full.subdim_counts.items():
            result[f"n_subdim_{d}"] = n
        # The RoboPhyscore's metrics with a value: fewer than its set's, it is the mean of those (eq. 4
        # over another set), said as the totals' parts are.
        cols = table_columns(table)
        ids = selected or list(tax.robophyscore_default)
        result["n_robophyscore"] = np.sum([np.isfinite(cols[m]) if m in cols else np.zeros(len(table), bool)
                                           for m in ids], axis=0).astype(np.int64)
    if macro:
        result = _macro(result, keys, macro, skipna=missing == "drop", note=note)
    size = len(selected or tax.robophyscore_default)
    if missing == "drop" and note is not None and (scaled := _scaled_note(result, keys, size)):
        note(scaled)
    return result.reset_index() if keys else result.reset_index(drop=True)


#: What :func:`correlations_from_table` correlates: sub-dimension scores (RoboPhys-3D Fig. 3a), level
#: scores (Fig. 3b) or normalized metrics (Fig. 9).
CORRELATION_PARTS = ("subdim", "level", "metric")

#: Fewest configurations a correlation is taken over.
MIN_CONFIGURATIONS = 3


def correlations_from_table(
    df: pd.DataFrame,
    *,
    by: Sequence[str],
    of: str = "subdim",
    normalized: bool = False,
    strategy: Strategy = "table",
    macro: str | None = None,
    missing: Missing = "nan",
    source: str | Path = "table",
    note: Note | None = None,
) -> pd.DataFrame:
    """Pearson correlation, across configurations, among sub-dimension scores, level scores or metrics
    (``aggregate correlations``): RoboPhys-3D Fig. 3a (the 18 sub-dimensions), Fig. 3b (the four levels)
    and Fig. 9 (the 50 metrics), all "computed across the model-reconstruction configurations".

    A configuration is a group of ``by`` (e.g. ``generator,meta.substrate``). Sub-dimensions and levels
    are the totals of :func:`scores_from_table` (same ``normalized``, ``strategy``, ``macro`` and
    ``missing``); metrics are their normalized group means (Table 13 bounds, so that a lower-is-better
    metric is turned round as it is in the totals), macro-averaged over ``macro`` regimes with equal weight
    where given. Each pair is taken over the configurations where both have a value (at least
    :data:`MIN_CONFIGURATIONS`, else NaN), and a part with the same value in every configuration has no
    correlation (NaN); ``note`` hears of both.

    Returns:
        A square frame, one row and one column per part in taxonomy order (sub-dimension codes such as
        ``IQ-1``, levels ``1`` to ``4``, or metric ids), leaving out parts without any value.

    Raises:
        AggregateInputError: A bad table, no ``by``, an unknown ``of``, or fewer than
            :data:`MIN_CONFIGURATIONS` configurations.
    """
    import pandas as pd

    if of not in CORRELATION_PARTS:
        raise AggregateInputError(f"--of must be one of {', '.join(CORRELATION_PARTS)}, got {of!r}")
    keys = list(by)
    if not keys:
        raise AggregateInputError("correlations are taken across configurations: give the columns that "
                                  "make one (--by generator, or --by generator,meta.substrate as RoboPhys-3D "
                                  "does)")
    tax = load_taxonomy()
    if of == "metric":
        group_keys = keys + ([macro] if macro else [])
        long = to_long(df, group_keys, [], source, note)
        if not normalized:
            long = normalize_long(long, strategy, source)
        table = _grouped(long, group_keys, missing, note)
        if macro:  # equal weight per regime; under --missing nan a regime without a value makes it NaN
            grouped = table.groupby(level=keys if len(keys) > 1 else keys[0], sort=True)
            means = grouped.mean()
            if missing == "nan":
                means = means.mask(table.isna().groupby(level=keys if len(keys) > 1 else keys[0]).any())
            table = means
        frame = table[[m for m in tax.ids if m in table.columns]]
    else:
        scores = scores_from_table(df, by=keys, normalized=normalized, strategy=strategy, macro=macro,
                                   missing=missing, source=source, note=note)
        prefix = "subdim_" if of == "subdim" else "level_"
        cols = [c for c in scores.columns if c.startswith(prefix)]
        frame = scores[cols].rename(columns=lambda c: c[len(prefix):])
    frame = frame.astype(float).dropna(axis=1, how="all")
    if frame.shape[1] == 0:  # (audit combos: printed a bare header, exit 0)
        why = (" (under --missing nan a sub-dimension or level missing any of its metrics is NaN: "
               "--missing drop scores what there is)" if of != "metric" and missing == "nan" else "")
        raise AggregateInputError(f"{source}: no {of} has a value in any configuration{why}")
    n = len(frame)
    if n < MIN_CONFIGURATIONS:
        raise AggregateInputError(f"{source}: {n} configuration(s) of --by {','.join(keys)}; a correlation "
                                  f"across configurations needs at least {MIN_CONFIGURATIONS}")
    corr = frame.corr(method="pearson", min_periods=MIN_CONFIGURATIONS)
    if note is not None:
        flat = [str(c) for c in frame.columns  # (a part measured in fewer configurations: the pair note)
                if frame[c].nunique(dropna=True) == 1 and frame[c].count() >= MIN_CONFIGURATIONS]
        if flat:
            note(f"no correlation for {', '.join(flat[:_SHOWN])}"
                 f"{f' and {len(flat) - _SHOWN} more' if len(flat) > _SHOWN else ''}: the same value in "
                 "every configuration")
        counts = frame.notna().astype(int)
        pairs = counts.T @ counts
        few = [(a, b) for i, a in enumerate(frame.columns) for b in frame.columns[i + 1:]
               if pairs.loc[a, b] < MIN_CONFIGURATIONS]
        if few:
            shown = ", ".join(f"{a}/{b}" for a, b in few[:_SHOWN])
            more = f" and {len(few) - _SHOWN} more" if len(few) > _SHOWN else ""
            note(f"no correlation for {len(few)} pair(s) with values in fewer than {MIN_CONFIGURATIONS} "
                 f"configurations together: {shown}{more}")
    corr.index.name = of
    corr.columns.name = None
    return pd.DataFrame(corr)


def _scaled_note(result: pd.DataFrame, keys: Sequence[str], size: int) -> str:
    """The totals of ``result`` (``--missing drop``) that rest on fewer metrics or sub-dimensions than the
    taxonomy gives them, and the RoboPhyscores over fewer than the ``size`` metrics of their set, as a
    note ("" when none does)."""
    tax = load_taxonomy()
    full = {f"level_{lv}": len(tax.subdims_of(lv)) for lv in tax.levels}
    full.update({f"subdim_{d}": len(tax.metrics_of(d)) for d in tax.subdims})
    set_size = max(size, 1)
    groups: list[str] = []
    count = 0
    for idx, row in result.iterrows():
        parts = idx if isinstance(idx, tuple) else (idx,)
        short = [f"{col} {int(row[f'n_{col}'])} of {n}" for col, n in full.items() if 0 < row[f"n_{col}"] < n]
        if "n_robophyscore" in row.index and 0 < row["n_robophyscore"] < set_size:
            short.append(f"robophyscore {int(row['n_robophyscore'])} of {set_size}")
        if short:
            count += len(short)
            more = f" and {len(short) - 3} more" if len(short) > 3 else ""
            group = "/".join(map(str, parts)) if keys else "all rows"
            groups.append(f"{group}: {', '.join(short[:3])}{more}")
    if not count:
        return ""
    more = f"; and {len(groups) - _SHOWN} more group(s)" if len(groups) > _SHOWN else ""
    return (f"under --missing drop, {count} total(s) rest on fewer parts than the paper's (metrics, counted "
            "in n_subdim_<CODE>; sub-dimensions, in n_level_<k>): each is the mean of the parts present "
            "times the full count, not their sum; a robophyscore over fewer metrics than its set "
            f"(n_robophyscore) is the mean of those present: {'; '.join(groups[:_SHOWN])}{more}")


def _macro(result: pd.DataFrame, keys: list[str], regime: str, *, skipna: bool,
           note: Note | None = None) -> pd.DataFrame:
    """Each column's equal-weight mean over regimes (Sec. 4.2). Under ``skipna`` (``--missing drop``) a
    regime without a value leaves a column's mean, and the AFS is the sum of the row's own averaged
    levels: averaging each regime's AFS would leave out, from the AFS alone, a regime missing a whole
    level (its AFS is NaN), so the AFS would rest on the regimes where the group is measured best."""
    import pandas as pd

    tax = load_taxonomy()
    flat = result.reset_index()
    groups = flat.groupby(keys, sort=True, dropna=False) if keys else [((), flat)]
    rows: list[dict[str, Any]] = []
    gaps: list[str] = []
    for key, part in groups:
        row: dict[str, Any] = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        row["n_regimes"] = part[regime].nunique()
        lacking: dict[str, list[str]] = {}
        for col in result.columns:
            if col.startswith("n_"):  # (--missing drop) the fewest parts any regime's value rests on
                counts = part[col][part[col] > 0]
                row[col] = int(counts.min()) if len(counts) else 0
                continue
            row[col] = macro_average(part[col].to_numpy(), list(part[regime]), skipna=skipna).value
            if skipna and col != "afs" and part[col].notna().any():  # (had by one regime, not another)
                for reg in part.loc[part[col].isna(), regime].astype(str):
                    lacking.setdefault(reg, []).append(str(col))
        if skipna:
            levels = [row[f"level_{lv}"] / len(tax.subdims_of(lv)) for lv in tax.levels]
            row["afs"] = math.fsum(levels) if not any(math.isnan(v) for v in levels) else math.nan
        group = "/".join(str(row[k]) for k in keys) if keys else "all rows"
        gaps += [f"{group}: regime {reg} lacks {', '.join(cols[:3])}" + (f" and {len(cols) - 3} more"
                 if len(cols) > 3 else "") for reg, cols in lacking.items()]
        rows.append(row)
    if gaps and note is not None:
        more = f" and {len(gaps) - _SHOWN} more" if len(gaps) > _SHOWN else ""
        note(f"under --missing drop each column averages the regimes that have it, and afs is the sum of the "
             f"averaged levels; {len(gaps)} (group, regime) pair(s) lack columns: {'; '.join(gaps[:_SHOWN])}"
             f"{more}")
    frame = pd.DataFrame(rows)
    return frame.set_index(keys) if keys else frame


@dataclass(frozen=True)
class SelectionInput:
    """Per-configuration columns for :func:`select_metrics` / :func:`threshold_sensitivity`.

    Attributes:
        values: Metric and target columns by name.
        references: Reference columns (one value per configuration) to report agreement against, or None
            (the targets, unless ``sample_references`` are given).
        sample_values: With ``by`` and references: each metric's normalized value per sample (a row of a
            wide table, an item of a long one), a set-level metric's being its configuration's; else None.
        sample_references: The references per sample, aligned with ``sample_values``; they take the
            place of ``references`` (RoboPhys-3D App. D compares human scores per sample).
    """

    values: dict[str, npt.NDArray[np.float64]]
    references: dict[str, npt.NDArray[np.float64]] | None
    sample_values: dict[str, npt.NDArray[np.float64]] | None = None
    sample_references: dict[str, npt.NDArray[np.float64]] | None = None


def selection_from_table(
    df: pd.DataFrame,
    targets: Sequence[str],
    *,
    by: Sequence[str] = (),
    references: Sequence[str] = (),
    normalized: bool = False,
    strategy: Strategy = "table",
    missing: Missing = "nan",
    source: str | Path = "table",
    note: Note | None = None,
) -> SelectionInput:
    """The columns ``aggregate select`` selects from: one row per configuration (``by``), else per row.

    ``strategy`` and ``missing`` mean what they mean in :func:`scores_from_table`: a configuration whose
    metric lacks values on some of its rows or items has no value for it under ``"nan"`` (left out of
    that metric's correlations) rather than the mean of its measured ones.

    With ``by`` and ``references``, the references are kept per sample (each row of a wide table, each
    item of a long one with ``item_id``) with the metrics' values there, as RoboPhys-3D App. D compares
    RoboPhyscore with human scores per sample, not on per-configuration means. A long table without
    ``item_id`` cannot pair a row's metrics into samples: its references are averaged per configuration,
    and ``note`` says so.

    Raises:
        AggregateInputError: A long table without ``by``, a bad table, or a missing target/reference.
    """
    import pandas as pd

    keys, tgt, refs = list(by), list(targets), list(references)
    if not keys and is_long(df):
        raise AggregateInputError("a long table needs --by naming the configuration columns")
    long = to_long(df, keys, tgt + refs, source, note)
    raw_values = long["value"].to_numpy(dtype=float)
    if not normalized:
        long = normalize_long(long, strategy, source)
    if note is not None:
        ours = long["metric"].isin(load_taxonomy().ids).to_numpy()  # (targets and references as given)
        outside = _outside_unit(long[ours], raw_values[ours], given=normalized)
        if outside:
            note(outside)
    held: list[str] = []  # _grouped's note on missing values, said once the references' level is known
    if keys:
        table = _grouped(long, keys, missing, None if note is None else held.append)
    else:
        # melt keeps the row order: block i of each metric is row i of the input.
        table = pd.DataFrame({str(m): g["value"].to_numpy() for m, g in long.groupby("metric", sort=False)})
    cols = table_columns(table)
    absent = [t for t in tgt + refs if t not in cols]
    if absent:
        raise AggregateInputError(f"{source}: no target/reference column(s) {', '.join(absent)}")
    values = {k: v for k, v in cols.items() if k not in refs or k in tgt}
    samples = _samples(long, keys, table, wide=not is_long(df)) if keys and refs else None
    if note is not None and held:
        if samples is None:
            for line in held:
                note(line)
        else:  # references compared per sample: their configuration means (and gaps in them) are unused
            per_config = long[~long["metric"].isin([r for r in refs if r not in tgt])]
            _grouped(per_config, keys, missing, note)
    if keys and refs and samples is None and note is not None:
        note(f"agreement with {', '.join(refs)} is over configuration means: a long table without "
             f"{ITEM!r} cannot pair its rows into samples (RoboPhys-3D App. D compares human scores per "
             "sample; add the item_id column)")
    if samples is not None:
        sample_cols = table_columns(samples)
        return SelectionInput(values, None, {k: v for k, v in sample_cols.items() if k not in refs},
                              {r: sample_cols[r] for r in refs})
    return SelectionInput(values, {r: cols[r] for r in refs} or None)


def _samples(long: pd.DataFrame, keys: Sequence[str], table: pd.DataFrame, *,
             wide: bool) -> pd.DataFrame | None:
    """One row per sample (an item where the table has ``item_id``, else a row of a wide table) and one
    column per metric, or None for a long table without ``item_id``. A set-level metric (rows of
    ``group:...`` ids, such as FVD per generator) has one value per configuration, ``table``'s, which
    each of the configuration's samples takes."""
    import pandas as pd

    if "_item" in long.columns:
        sample = "_item"
        is_set = long["_item"].astype(str).str.startswith(SET_PREFIX)
    elif wide:
        sample, is_set = "_row", pd.Series(False, index=long.index)
    else:
        return None
    items = long[~is_set]
    out = items.groupby([*keys, sample, "metric"], sort=True)["value"].mean().unstack("metric")
    for m in sorted(set(long.loc[is_set, "metric"]) - set(items["metric"])):
        configs = out.index.droplevel(sample)
        out[m] = table[m].reindex(configs).to_numpy(dtype=float)
    return out
