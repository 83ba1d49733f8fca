"""Score tables from CSV files: what ``robojudge meta agreement`` and ``meta compare`` compute, callable
from Python.

The statistics themselves take arrays (:func:`agreement_table`, :func:`fit_agreement`); these functions
read the files, check them and build the arrays. A bad file is a :class:`ScoreTableError` naming the
file, and where it can the line and the column. pandas is imported when a file is read, so importing
:mod:`robojudge.meta` stays numpy and scipy only.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robojudge import DEFAULT_SEED
from robojudge._chars import unsafe_at, unsafe_kind
from robojudge._files import read_input
from robojudge.meta._fit import FitAgreement, fit_agreement
from robojudge.meta._report import OVERALL, AgreementReport, agreement_table
from robojudge.meta._segments import (
    VERDICT_LEVELS,
    BandAgreement,
    PooledBands,
    SegmentRhoBootstrap,
    VerdictOverlap,
    group_bands,
    orient,
    segment_spearman_bootstrap,
    verdict_levels,
    verdict_overlap,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DISPUTED_CHOICES", "ScoreTableError", "SegmentTable", "TableFit", "agreement_from_csv",
           "fit_from_csv", "read_score_csv", "segments_from_csv"]

_SHOWN_IDS = 5
_TRIMMED_COLUMNS = ("axis",)
"""Columns of ``meta agreement``'s tables read without surrounding spaces: an axis is a short fixed
vocabulary, and a spreadsheet cell ``'PA '`` means ``PA``. Ids (judge, item, clip, source) are read as
written, as a manifest keeps them (``c1`` and ``c1 `` are two clips); ids that differ only by such
spaces get a warning, or a hint where they fail to match."""
_SPACES = " \u00a0"
_RATER_COLUMNS = frozenset({
    "rater", "raterid", "annotator", "annotatorid", "labeler", "labeller", "worker", "workerid",
    "participant", "participantid", "prolificpid", "user", "userid",
})
"""Column names (lower case, without ``_``, ``-`` and spaces) that say a table holds several raters."""
DISPUTED_CHOICES = ("drop", "keep", "only")
"""What ``meta agreement`` does with the items a human table marks in its ``disputed`` column (items
awaiting an adjudication, as ``robojudge annotate export -f scores`` writes them): leave them out (the
default: their human score is a primary label, not a final one), keep them, or keep only them."""
_COMBINE = ("combine the raters' scores into one whole score on the scale first: an adjudicated score "
            "(robojudge annotate), the majority score, or the mean rounded half up (3.5 -> 4, as predictions "
            "are); a median of an even number of raters may fall half-way and needs the same rounding")


class ScoreTableError(ValueError):
    """A score table that cannot be used; the message names the file (and line and column)."""


def read_score_csv(path: str | Path, required: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every column as text, blanks kept as ``''``, header names stripped, the spaces after a comma
    dropped (``a, b`` reads as ``a`` and ``b``, as files written by hand often are).

    ``df.attrs["lines"]`` holds each row's line in the file (where its record starts), which differs
    from the row's place after a blank line or a quoted cell that spans lines.

    Raises:
        ScoreTableError: The file is missing, a folder, unreadable, not UTF-8 (naming the line), not
            CSV, or lacks a ``required`` column.
    """
    import io

    import pandas as pd

    try:
        data = read_input(path)  # once: a pipe or <(...) cannot be read twice
    except FileNotFoundError:
        raise ScoreTableError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ScoreTableError(f"{path}: is a folder, not a CSV file") from None
    except OSError as exc:
        raise ScoreTableError(f"{path}: cannot read: {exc.strerror or exc}") from None
    lines = _check_field_counts(data, path)
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, skipinitialspace=True,
                         index_col=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ScoreTableError(f"{path}: cannot read as CSV: {exc}") from None
    df.columns = [str(c).strip() for c in df.columns]
    if lines is not None and len(lines) == len(df):
        df.attrs["lines"] = lines
    from robojudge.store import ESCAPED_CELL, SafeCsvWriter

    for col in df.columns:  # a cell that a robojudge CSV escaped for spreadsheets reads back as stored
        escaped = df[col].str.match(ESCAPED_CELL)
        if escaped.any():
            df.loc[escaped, col] = df.loc[escaped, col].map(SafeCsvWriter.unescape)
    missing = [c for c in required if c not in df.columns]
    if missing:
        found = ", ".join(df.columns) or "none"
        raise ScoreTableError(f"{path}: missing column(s) {', '.join(missing)}; found {found}")
    return df


def _check_field_counts(data: bytes, path: str | Path) -> list[int] | None:
    """Every record has as many fields as the header. With one more, pandas takes the first column
    as the index and shifts every other column left (the item id then holds the axis), so a trailing
    comma reads as wrong data or as an error about another column. A file that is not UTF-8 is an
    error naming the line of the first byte that is not. Other unreadable files are left to pandas,
    which says why.

    Returns:
        The line each record pandas reads starts on (blank lines skipped, as pandas skips them), or
        None when the file cannot be read here.
    """
    import csv
    import io

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line = data[:at].count(b"\n") + 1
        raise ScoreTableError(
            f"{path} line {line}: not UTF-8 text (byte {data[at:at + 1].hex()} at offset {at}); save the "
            "file as UTF-8 (in Excel: CSV UTF-8)") from None
    starts: list[int] = []
    try:
        reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
        header = next(reader, None)
        if header is None:
            return starts
        while True:
            start = reader.line_num + 1
            record = next(reader, None)
            if record is None:
                return starts
            if not record or (len(record) == 1 and not record[0].strip()):
                continue  # a blank line (spaces only too) is skipped, as pandas skips it
            starts.append(start)
            if not any(cell.strip() for cell in record) or len(record) == len(header):
                continue
            hint = ("a trailing comma or an extra cell?" if len(record) > len(header) else
                    "a missing cell? Leave a blank value as an empty cell between commas")
            raise ScoreTableError(
                f"{path} line {start}: {len(record)} fields where the header has "
                f"{len(header)} ({', '.join(h.strip() for h in header)}); {hint}")
    except csv.Error:
        return None


def _check_names(df: pd.DataFrame, columns: Sequence[str], path: str | Path) -> None:
    """The ``columns`` of ``df`` that hold names (judges, items, axes, clips): a cell with a control
    character (printed raw, a terminal runs it) is an error naming its line and column, as it is in a
    manifest's name fields."""
    for column in columns:
        if column not in df.columns:
            continue
        for i, name in enumerate(df[column]):
            bad = unsafe_at(name)
            if bad is not None:
                raise ScoreTableError(f"{path} {_line(df, i)}, column {column!r}: {name!r} holds "
                                      f"{unsafe_kind(name[bad])} ({name[bad]!r} at position {bad})")


def column_numbers(df: pd.DataFrame, column: str, path: str | Path) -> npt.NDArray[np.float64]:
    """A text column as floats; a blank is NaN, anything else that is not a finite number (``abc``,
    ``nan``, ``inf``) is an error naming its line."""
    import pandas as pd

    raw = df[column].str.strip()
    values: npt.NDArray[np.float64] = pd.to_numeric(
        raw.where(raw != "", None), errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values) & (raw != "").to_numpy())
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} such rows)" if bad.size > 1 else ""
        unparsed = np.isnan(values[i]) and raw.iloc[i].lower() != "nan"
        what = "not a number" if unparsed else "not a finite number"
        raise ScoreTableError(
            f"{path} {_line(df, i)}, column {column!r}: {what}: {df[column].iloc[i]!r}{more}")
    return values


def _rater_column(df: pd.DataFrame) -> str | None:
    """A column that looks like it names raters (``rater``, ``annotator``, ``WorkerId``, ``PROLIFIC_PID``)."""
    for column in df.columns:
        if "".join(c for c in str(column).lower() if c not in "_- ") in _RATER_COLUMNS:
            return str(column)
    return None


def _check_unique(df: pd.DataFrame, keys: list[str], path: str | Path) -> None:
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        lines = [_line(df, int(i)).split()[1] for i in np.flatnonzero(dup.to_numpy())[:_SHOWN_IDS]]
        rater = _rater_column(df) if "judge" not in keys else None
        hint = (f"; the file has a {rater!r} column, which is not read: give one human score per "
                f"(item, axis): {_COMBINE}"
                if rater is not None else
                "; axes are read without surrounding spaces, so a cell 'PA ' names the axis 'PA'")
        raise ScoreTableError(f"{path}: duplicate ({', '.join(keys)}) rows on lines {', '.join(lines)}{hint}")


def agreement_from_csv(
    pred: str | Path,
    human: str | Path,
    *,
    bootstrap: int = 10_000,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    scale: tuple[int, int] = (1, 5),
    rank_stats: bool = True,
    disputed: str = "drop",
    warn: Callable[[str], None] | None = None,
) -> AgreementReport:
    """Agreement of judge scores with human scores read from two CSV files (``meta agreement``).

    Args:
        pred: Judge scores: ``item_id, axis, score`` and optionally ``judge`` (else the file's stem
            names the one judge). A blank score is an unscored item.
        human: Human scores: ``item_id, axis, score`` and optionally ``clip_id`` (the bootstrap
            cluster, else the item), ``source`` (the stratum) and ``disputed`` (the axes on which a
            cross-review disputes the item's primary label, ``pa;ia``; blank for a final label).
        bootstrap, seed, level, scale, rank_stats: As :func:`agreement_table`.
        disputed: One of :data:`DISPUTED_CHOICES`: ``"drop"`` leaves out the items whose ``disputed``
            cell is set, and the judge rows on them, so the judges are compared with final labels only
            (as the annotation tool's manifest export leaves them unlabelled); ``"keep"`` compares with
            their primary labels too (measuring the cross-reviewers of ``annotate export -f scores``
            needs it: without those items a reviewer is scored only where they came within one point
            of the primary label); ``"only"`` compares on those items alone. Without the column every
            row is a final label (``"only"`` is then an error).
        warn: Receives remarks that are not errors (item ids that differ only by case, item or clip
            ids that differ only in Unicode composition, ids that differ only by surrounding spaces),
            and how many items and rows of each file ``disputed`` left out or kept.

    Raises:
        ScoreTableError: A file cannot be read, has a bad or duplicate row, a blank item id or judge, a
            score that is not a finite number, a human score outside ``scale`` or a judge score that
            rounds outside it
            (axes are read without surrounding spaces, ids as written), an axis named ``overall`` or two
            axes that differ only by case, an item whose rows give different ``clip_id`` or ``source``
            values, a clip in two sources, or ``pred`` scores an item/axis that has no human score; a
            ``disputed`` cell that is not a list of the file's axes, or differs between an item's rows;
            ``disputed="only"`` without such items, ``"drop"`` leaving no item, or no judge row left.
        ValueError: ``disputed`` is not one of :data:`DISPUTED_CHOICES`.
    """
    if disputed not in DISPUTED_CHOICES:
        raise ValueError(f"disputed must be one of {', '.join(DISPUTED_CHOICES)}, got {disputed!r}")
    pred, human = Path(pred), Path(human)
    hdf = read_score_csv(human, ("item_id", "axis", "score"))
    pdf = read_score_csv(pred, ("item_id", "axis", "score"))
    for df in (hdf, pdf):  # a spreadsheet cell "PA " names the axis PA
        for column in _TRIMMED_COLUMNS:
            df[column] = df[column].str.strip(_SPACES)
    hdf["_score"] = column_numbers(hdf, "score", human)
    pdf["_score"] = column_numbers(pdf, "score", pred)
    _check_scale(hdf, scale, human)
    _check_pred_scale(pdf, scale, pred)
    _check_ids(hdf, human)
    _check_ids(pdf, pred, ("item_id", "judge"))
    blank = np.flatnonzero(np.isnan(hdf["_score"].to_numpy(dtype=np.float64)))
    if blank.size and warn is not None:
        shown = ", ".join(f"{_line(hdf, int(i))} (item {hdf['item_id'].iloc[int(i)]!r})"
                          for i in blank[:_SHOWN_IDS])
        warn(f"{human}: {blank.size} row(s) without a human score, left out of every statistic: {shown}")
    for df, path, what in ((hdf, human, "human scores"), (pdf, pred, "judge scores")):
        if df.empty:  # the statistics said "need at least one axis and one judge", naming the human file
            raise ScoreTableError(f"{path}: no rows of {what} (only the header)")
    for df, path in ((hdf, human), (pdf, pred)):
        _check_axes(df, path)
    _check_names(hdf, ("item_id", "axis", "clip_id", "source"), human)
    _check_names(pdf, ("judge", "item_id", "axis"), pred)
    if "judge" not in pdf.columns:
        pdf["judge"] = pred.stem
    _check_unique(hdf, ["item_id", "axis"], human)
    _check_unique(pdf, ["judge", "item_id", "axis"], pred)
    _check_case(hdf, pdf, human, pred, warn)
    if "clip_id" in hdf.columns:  # a blank clip is the item's own cluster, as without the column
        own = hdf["clip_id"].str.strip() == ""
        hdf.loc[own, "clip_id"] = "\0item " + hdf.loc[own, "item_id"]  # no clip a user names
    if "source" in hdf.columns:
        _check_sources(hdf, human)
    for col in ("clip_id", "source"):
        if col in hdf.columns:
            _check_per_item(hdf, col, human)
    if "clip_id" in hdf.columns and "source" in hdf.columns:
        _check_clip_sources(hdf, human)
    hdf, pdf = _select_disputed(hdf, pdf, human, pred, disputed, warn)

    items = list(dict.fromkeys(hdf["item_id"]))
    axes = list(dict.fromkeys(hdf["axis"]))
    index = {item: i for i, item in enumerate(items)}
    known = set(zip(hdf["item_id"], hdf["axis"], strict=True))
    extra = [(i, a) for i, a in zip(pdf["item_id"], pdf["axis"], strict=True) if (i, a) not in known]
    if extra:
        shown = ", ".join(f"{i}/{a}" for i, a in list(dict.fromkeys(extra))[:_SHOWN_IDS])
        # Ids that look alike but are composed differently (NFC against NFD: one file typed, the other
        # from macOS file names): printed as they are, the two look the same, so say it and show them.
        composed = {unicodedata.normalize("NFC", i): i for i in items}
        twins = [(i, composed[n]) for i in dict.fromkeys(i for i, _ in extra)
                 if (n := unicodedata.normalize("NFC", i)) in composed and composed[n] != i]
        hint = "" if not twins else (
            f"; {len(twins)} of their item ids equal one of {human} once composed alike (NFC/NFD, as macOS "
            "writes file names): " + ", ".join(f"{ascii(a)}/{ascii(b)}" for a, b in twins[:_SHOWN_IDS])
            + "; spell them one way")
        trimmed = {i.strip(_SPACES): i for i in items}
        spaced = [(i, trimmed[t]) for i in dict.fromkeys(i for i, _ in extra)
                  if (t := i.strip(_SPACES)) in trimmed and trimmed[t] != i]
        if spaced:
            hint += (f"; {len(spaced)} of their item ids differ from one of {human} only by surrounding "
                     "spaces (" + ", ".join(f"{a!r}/{b!r}" for a, b in spaced[:_SHOWN_IDS])
                     + "), and ids are compared as written: remove the spaces")
        raise ScoreTableError(
            f"{pred}: {len(extra)} row(s) have no human score in {human} (item/axis: {shown}){hint}")

    h_arrays = {a: np.full(len(items), np.nan) for a in axes}
    for item, axis, value in zip(hdf["item_id"], hdf["axis"], hdf["_score"], strict=True):
        h_arrays[axis][index[item]] = value
    judges = list(dict.fromkeys(pdf["judge"]))
    p_arrays = {j: {a: np.full(len(items), np.nan) for a in axes} for j in judges}
    for j, item, axis, value in zip(pdf["judge"], pdf["item_id"], pdf["axis"], pdf["_score"], strict=True):
        p_arrays[j][axis][index[item]] = value

    first = hdf.drop_duplicates("item_id").set_index("item_id").loc[items]
    clusters = first["clip_id"].to_numpy() if "clip_id" in hdf.columns else np.array(items)
    named = "source" in hdf.columns and bool(hdf["source"].str.strip().any())
    strata = first["source"].to_numpy() if named else None
    try:
        return agreement_table(p_arrays, h_arrays, clusters, strata, bootstrap=bootstrap, seed=seed,
                               level=level, scale=scale, rank_stats=rank_stats)
    except ValueError as exc:
        raise ScoreTableError(f"{human}: {exc}") from None


def _disputed_items(df: pd.DataFrame, path: Path) -> set[str]:
    """The items whose ``disputed`` cell is set: a list of the file's axes separated by ``;`` (``pa``,
    ``pa;ia``), the same on every row of the item. Anything else (``no``, ``0``, ``pa;``) is an error
    naming the line: read as a mark, a hand-written "no" would leave the item out."""
    if "disputed" not in df.columns:
        return set()
    df["disputed"] = df["disputed"].str.strip(_SPACES)
    _check_per_item(df, "disputed", path)
    axes = set(df["axis"])
    marked: set[str] = set()
    for i, (item, cell) in enumerate(zip(df["item_id"], df["disputed"], strict=True)):
        if not cell:
            continue
        wrong = [a for a in (x.strip(_SPACES) for x in cell.split(";")) if a not in axes]
        if wrong:
            raise ScoreTableError(
                f"{path} {_line(df, i)}, item {item!r}, column 'disputed': {cell!r} is not a list of the "
                f"file's axes ({', '.join(sorted(axes))}) separated by ';' ({wrong[0]!r} is not one); the "
                "column marks the items awaiting an adjudication with the disputed axes, and is blank for "
                "a final label")
        marked.add(item)
    return marked


def _keep_rows(df: pd.DataFrame, keep: npt.NDArray[np.bool_]) -> pd.DataFrame:
    """The rows of ``df`` where ``keep`` holds, each with its line in the file (see :func:`_line`)."""
    out = df[keep].reset_index(drop=True)
    lines = df.attrs.get("lines")
    out.attrs["lines"] = None if lines is None else [n for n, k in zip(lines, keep, strict=True) if k]
    return out


def _select_disputed(hdf: pd.DataFrame, pdf: pd.DataFrame, human: Path, pred: Path, mode: str,
                     warn: Callable[[str], None] | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of both tables that ``disputed=mode`` compares (see :func:`agreement_from_csv`); how many
    items and rows it left out, or with ``keep`` kept, is said to ``warn``."""
    marked = _disputed_items(hdf, human)
    if mode == "only" and not marked:
        why = "has no 'disputed' column" if "disputed" not in hdf.columns else "marks no item as disputed"
        raise ScoreTableError(f"{human}: {why}, so --disputed only leaves nothing to compare (the column "
                              "comes with the human.csv of robojudge annotate export -f scores)")
    if not marked:
        return hdf, pdf
    h_on = hdf["item_id"].isin(marked).to_numpy()
    p_on = pdf["item_id"].isin(marked).to_numpy()
    awaiting = f"{len(marked)} item(s) await an adjudication (a 'disputed' cell set)"
    if mode == "keep":
        if warn is not None:
            warn(f"{human}: {awaiting}: compared with their primary label all the same, which a cross-review "
                 f"disputes ({int(h_on.sum())} row(s) of {human.name}, {int(p_on.sum())} of {pred.name})")
        return hdf, pdf
    keep_h, keep_p = (~h_on, ~p_on) if mode == "drop" else (h_on, p_on)
    if not keep_h.any():
        raise ScoreTableError(f"{human}: all {awaiting}, so --disputed drop leaves nothing to compare; "
                              "adjudicate them, or compare with their primary labels with --disputed keep")
    if not keep_p.any():
        marks = f"the {len(marked)} item(s) {human} marks as awaiting an adjudication"
        raise ScoreTableError(
            f"{pred}: every judge row is on one of {marks}, which --disputed drop leaves out; "
            "--disputed keep compares them" if mode == "drop" else
            f"{pred}: no judge row is on one of {marks}, the only ones --disputed only compares")
    if warn is not None:
        rows = f"{int((~keep_h).sum())} row(s) of {human.name} and {int((~keep_p).sum())} of {pred.name}"
        if mode == "drop":
            warn(f"{human}: {awaiting}: their human score is a primary label a cross-review disputes, not a "
                 f"final label, so they are left out, with {rows}; --disputed keep compares with them too")
        else:
            n_final = len(set(hdf["item_id"]) - marked)
            warn(f"{human}: {n_final} item(s) with a final label (no 'disputed' cell) left out, as "
                 f"--disputed only asks, with {rows}")
    return _keep_rows(hdf, keep_h), _keep_rows(pdf, keep_p)


def _line(df: pd.DataFrame, i: int) -> str:
    """``line N``: where row ``i`` of ``df`` starts in its file (see :func:`read_score_csv`)."""
    lines = df.attrs.get("lines")
    return f"line {lines[i] if lines is not None else i + 2}"  # else: header, and 1-based numbering


def _check_scale(df: pd.DataFrame, scale: tuple[int, int], path: Path) -> None:
    """Human scores are whole points of the scale. One outside it would be clipped and count as a
    match; exact-match accuracy and the confusion matrix round only the predictions, so a human 3.5
    would be rounded too (up, to 4) and a prediction 0.5 away would count as exact."""
    values = df["_score"].to_numpy(dtype=np.float64)
    checks = [
        ((values < scale[0]) | (values > scale[1]),
         f"is outside the scale {scale[0]}..{scale[1]}{{more}}; fix the label or give the scale with "
         "--scale LOW,HIGH"),
        (np.isfinite(values) & (values != np.round(values)),
         "is not a whole number{more}; the statistics compare whole points of the scale: " + _COMBINE),
    ]
    for wrong, why in checks:
        bad = np.flatnonzero(wrong)
        if bad.size:
            i = int(bad[0])
            more = f" ({bad.size} such rows)" if bad.size > 1 else ""
            raise ScoreTableError(
                f"{path} {_line(df, i)}, item {df['item_id'].iloc[i]!r}, column 'score': human score "
                f"{df['score'].iloc[i].strip()} " + why.format(more=more))


def _check_pred_scale(df: pd.DataFrame, scale: tuple[int, int], path: Path) -> None:
    """Judge scores round into the scale, as human scores must lie in it: exact and within-one accuracy
    round a prediction half up and clip it into the scale, so a 0-10 judge's 10 would match a human 5.
    A score that rounds into the scale (5.4 on 1..5) is kept; the clip then changes nothing."""
    values = df["_score"].to_numpy(dtype=np.float64)
    rounded = np.floor(values + 0.5)
    bad = np.flatnonzero((rounded < scale[0]) | (rounded > scale[1]))
    if bad.size:
        i = int(bad[0])
        more = f" ({bad.size} such rows)" if bad.size > 1 else ""
        raise ScoreTableError(
            f"{path} {_line(df, i)}, item {df['item_id'].iloc[i]!r}, axis {df['axis'].iloc[i]!r}, column "
            f"'score': judge score {df['score'].iloc[i].strip()} is outside the scale {scale[0]}..{scale[1]}"
            f"{more}; accuracy would clip it into the scale and count it as a match: put the judge's scores "
            "on the human scale first, or give the scale both use with --scale LOW,HIGH")


def _check_ids(df: pd.DataFrame, path: Path, columns: Sequence[str] = ("item_id",)) -> None:
    """No blank cell in ``columns``: a blank judge cell in the judges' file (a spreadsheet that names the
    judge once per block) would be a judge of its own, named ''."""
    for col in columns:
        if col not in df.columns:
            continue
        what = col.replace("_", " ")
        blank = np.flatnonzero((df[col].str.strip() == "").to_numpy())
        if blank.size:
            more = f" ({blank.size} such rows)" if blank.size > 1 else ""
            raise ScoreTableError(f"{path} {_line(df, int(blank[0]))}, column {col!r}: blank {what}{more}")


def _check_sources(df: pd.DataFrame, path: Path) -> None:
    """Either every row names its source (stratum) or none does: a blank among named sources would be
    a stratum of its own, named ''."""
    blank = (df["source"].str.strip() == "").to_numpy()
    if blank.any() and not blank.all():
        i = int(np.flatnonzero(blank)[0])
        raise ScoreTableError(f"{path} {_line(df, i)}, item {df['item_id'].iloc[i]!r}, column 'source': "
                              f"blank while other rows name a source ({int(blank.sum())} such rows); give "
                              "every row its source, or drop the column")


def _check_axes(df: pd.DataFrame, path: Path) -> None:
    for i, axis in enumerate(df["axis"]):
        if axis.strip().lower() == OVERALL:
            raise ScoreTableError(f"{path} {_line(df, i)}, column 'axis': {axis!r} is the name of the pooled "
                                  "Overall, not an axis; rename the axis")
    by_fold: dict[str, dict[str, int]] = {}
    for i, axis in enumerate(df["axis"]):
        by_fold.setdefault(axis.lower(), {}).setdefault(axis, i)
    for spellings in by_fold.values():
        if len(spellings) > 1:
            shown = ", ".join(f"{a!r} ({_line(df, i)})" for a, i in spellings.items())
            raise ScoreTableError(f"{path}, column 'axis': axes {shown} differ only by case; axis names are "
                                  "compared exactly, so spell each axis one way")


def _check_case(hdf: pd.DataFrame, pdf: pd.DataFrame, human: Path, pred: Path,
                warn: Callable[[str], None] | None) -> None:
    """Axes of the two files must match exactly; item ids that differ only by case, item or clip ids
    that differ only in how their characters are composed (NFC/NFD), and ids (judge, item, clip,
    source) that differ only by surrounding spaces get a warning."""
    h_axes = set(hdf["axis"])
    for i, axis in enumerate(pdf["axis"]):
        twin = [a for a in h_axes if a != axis and a.lower() == axis.lower()]
        if axis not in h_axes and twin:
            raise ScoreTableError(f"{pred} {_line(pdf, i)}, column 'axis': axis {axis!r} differs only by "
                                  f"case from {twin[0]!r} in {human}; spell each axis one way")
    if warn is None:
        return
    named = [(hdf, human, "item_id"), (pdf, pred, "item_id")]
    named += [(hdf, human, c) for c in ("clip_id", "source") if c in hdf.columns]
    if "judge" in pdf.columns:
        named.append((pdf, pred, "judge"))
    kinds = {"item_id": "items", "clip_id": "clips", "source": "sources", "judge": "judges"}
    for df, path, column in named:
        spaced = _space_twins(df[column])
        what = column.replace("_", " ")
        if spaced:
            shown = ", ".join(f"{a!r}/{b!r}" for a, b in spaced[:_SHOWN_IDS])
            warn(f"{path}: {len(spaced)} {what}(s) differ from another only by surrounding spaces ({shown}); "
                 f"they are compared as written, as different {kinds[column]}")
        if column in ("source", "judge"):
            continue
        by_case, composed = _twins(df[column], fold=column == "item_id")
        if by_case:
            shown = ", ".join(f"{a!r}/{b!r}" for a, b in by_case[:_SHOWN_IDS])
            warn(f"{path}: {len(by_case)} {what}(s) differ from another only by case ({shown}); they are "
                 "compared exactly, as different items")
        if composed:  # ascii(): printed as they are, the two look the same
            shown = ", ".join(f"{ascii(a)}/{ascii(b)}" for a, b in composed[:_SHOWN_IDS])
            warn(f"{path}: {len(composed)} {what}(s) differ from another only in how their characters are "
                 f"composed (NFC/NFD, as macOS writes file names: {shown}); they are compared exactly, as "
                 f"different {'clips' if column == 'clip_id' else 'items'}")


def _space_twins(values: Iterable[str]) -> list[tuple[str, str]]:
    """``(first, other)`` spellings of one name that are equal once surrounding spaces are removed."""
    by_trim: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for value in dict.fromkeys(values):
        first = by_trim.setdefault(value.strip(_SPACES), value)
        if first != value:
            out.append((first, value))
    return out


def _twins(values: Iterable[str], *, fold: bool) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(first, other)`` spellings of one name: those equal once case-folded (with ``fold``), and those
    equal once composed (NFC: ``é`` one character, or ``e`` and an accent); blanks are skipped."""
    by_form: dict[str, str] = {}
    by_fold: dict[str, str] = {}
    by_case: list[tuple[str, str]] = []
    composed: list[tuple[str, str]] = []
    for value in dict.fromkeys(values):
        if not value.strip():
            continue
        form = unicodedata.normalize("NFC", value)
        first = by_form.setdefault(form, value)
        if first != value:
            composed.append((first, value))
        elif fold and (first := by_fold.setdefault(form.casefold(), value)) != value:
            by_case.append((first, value))
    return by_case, composed


def _check_per_item(df: pd.DataFrame, column: str, path: Path) -> None:
    """Every row of an item names the same ``column`` value (its clip, its source)."""
    first: dict[str, tuple[str, int]] = {}
    for i, (item, value) in enumerate(zip(df["item_id"], df[column], strict=True)):
        seen = first.setdefault(item, (value, i))
        if seen[0] != value:
            raise ScoreTableError(
                f"{path}, item {item!r}, column {column!r}: {_line(df, seen[1])} gives {seen[0]!r} and "
                f"{_line(df, i)} gives {value!r}; every row of an item must name the same {column}")


def _check_clip_sources(df: pd.DataFrame, path: Path) -> None:
    """A clip (bootstrap cluster) lies in one source (stratum)."""
    first: dict[str, tuple[str, int]] = {}
    for i, (clip, source) in enumerate(zip(df["clip_id"], df["source"], strict=True)):
        seen = first.setdefault(clip, (source, i))
        if seen[0] != source:
            raise ScoreTableError(
                f"{path}, clip_id {clip!r}: {_line(df, seen[1])} puts it in source {seen[0]!r} and "
                f"{_line(df, i)} in "
                f"{source!r}; a clip (bootstrap cluster) must lie in one source (stratum)")


@dataclass(frozen=True)
class TableFit:
    """:func:`fit_from_csv`'s answer: the fit, and how many rows a blank value left out."""

    fit: FitAgreement
    dropped: int


def fit_from_csv(
    path: str | Path,
    score: str,
    target: str,
    score_range: tuple[float, float] | None = None,
    target_range: tuple[float, float] | None = None,
) -> TableFit:
    """Linear-fit agreement of the ``score`` column against the ``target`` column (``meta compare``).

    Rows with a blank value in either column are left out and counted.

    Raises:
        ScoreTableError: The file cannot be read, lacks a column, has a value that is not a number, or
            one outside the range given for its column.
    """
    df = read_score_csv(path, (score, target))
    x = column_numbers(df, score, path)
    y = column_numbers(df, target, path)
    used = np.isfinite(x) & np.isfinite(y)  # a row left out for a blank is not checked either
    for col, v, bounds in ((score, x, score_range), (target, y, target_range)):
        if bounds is None:
            continue
        lo, hi = bounds
        bad = np.flatnonzero(used & ((v < lo) | (v > hi)))
        if bad.size:
            raise ScoreTableError(
                f"{path} {_line(df, int(bad[0]))}, column {col!r}: {float(v[bad[0]]):g} is outside the range "
                f"[{lo:g}, {hi:g}] given for it ({bad.size} value(s) outside)")
    dropped = int(np.sum(~(np.isfinite(x) & np.isfinite(y))))
    return TableFit(fit_agreement(x, y, score_range, target_range), dropped)


@dataclass(frozen=True)
class SegmentTable:
    """:func:`segments_from_csv`'s answer.

    Attributes:
        rho: Spearman's rho of every score per group, macro and micro, with intervals and (with a
            reference) the paired differences (:func:`robojudge.meta.segment_spearman_bootstrap`).
        bands: Per score and group, the calibrated three-band overlap, or why it could not be computed
            (too few videos of a level); empty without a video column.
        pooled: Per score, macro and micro overlap over the groups (None when a group has none).
        segments: Segments per group.
        verdicts: Per group, segments per verdict.
        clusters_from: The column the bootstrap clusters come from (``"row"``: each segment its own).
        turn_means: Per voted judge, the column of its mean level over turns, which its rho is taken on.
        voted: Per voted judge, the overlap of its majority verdict taken as it is (RoboWorM Table D4);
            a voted judge has no calibrated bands.
    """

    rho: SegmentRhoBootstrap
    bands: dict[str, dict[str, BandAgreement | str]]
    pooled: dict[str, PooledBands | None]
    segments: dict[str, int]
    verdicts: dict[str, dict[str, int]]
    clusters_from: str
    turn_means: dict[str, str] = field(default_factory=dict)
    voted: dict[str, VerdictOverlap] = field(default_factory=dict)


#: RoboWorM Table D4's verdict levels of a VLM (Bad 1, Medium 2, Good 3), as robojudge's roboworm_physics
#: rubric stores them.
TABLE_D4_VERDICTS = (1.0, 2.0, 3.0)


def _voted_columns(df: pd.DataFrame, name: str, mean_column: str, path: str | Path
                   ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A voted judge's verdict levels (0 Good, 1 Medium, 2 Bad, NaN none) from its majority column, and its
    mean level over turns, checked: verdicts on Table D4's 1-3 scale, means inside it, both or neither."""
    majority = column_numbers(df, name, path)
    mean = column_numbers(df, mean_column, path)
    off = np.flatnonzero(np.isfinite(majority) & ~np.isin(majority, TABLE_D4_VERDICTS))
    if off.size:
        i = int(off[0])
        raise ScoreTableError(
            f"{path} {_line(df, i)}, column {name!r}: {majority[i]:g} is not a verdict of RoboWorM Table D4 "
            "(Bad 1, Medium 2, Good 3); a voted judge's column holds its majority verdict")
    out = np.flatnonzero(np.isfinite(mean) & ((mean < 1.0) | (mean > 3.0)))
    if out.size:
        i = int(out[0])
        raise ScoreTableError(f"{path} {_line(df, i)}, column {mean_column!r}: {mean[i]:g} is outside 1..3, "
                              "the verdict scale its turns were given on (Bad 1, Medium 2, Good 3)")
    odd = np.flatnonzero(np.isfinite(majority) != np.isfinite(mean))
    if odd.size:
        i = int(odd[0])
        blank, given = (mean_column, name) if np.isfinite(majority[i]) else (name, mean_column)
        raise ScoreTableError(f"{path} {_line(df, i)}, column {blank!r}: blank where column {given!r} has a "
                              "value; a segment a voted judge scored has both its majority and its turn mean")
    return 3.0 - majority, mean


def segments_from_csv(
    path: str | Path,
    scores: dict[str, bool],
    *,
    verdict: str = "verdict",
    group: str | None = None,
    clip: str | None = None,
    video: str | None = None,
    reference: str | None = None,
    replicates: int = 2000,
    draws: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    turn_means: Mapping[str, str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> SegmentTable:
    """Segment-level agreement of score columns with Good/Medium/Bad verdicts (``meta segments``).

    One row per segment. ``scores`` maps each score column to whether its higher values are better
    (then it is negated: the statistics take scores oriented so that higher is worse). Rho per group
    (``group`` column, else one group ``all``) with intervals from a cluster bootstrap over ``clip``
    (else ``video``, else each row on its own), and, with a ``video`` column, RoboWorM's calibrated
    three-band overlap (Table D4). A blank score is a segment that score did not measure.

    ``turn_means`` names the voted judges (a VLM asked over several turns): score column -> column of its
    mean level over the turns. Its score column holds the majority verdict on Table D4's scale (Bad 1,
    Medium 2, Good 3; higher is better, so the score must be marked so). As in Table D4, its rho is taken
    on the turn mean and its overlap on the majority verdict taken as it is (:attr:`SegmentTable.voted`),
    not on calibrated bands.

    A blank ``clip`` cell is a clip of its own: the segment's video where there is a ``video`` column,
    else the segment alone; ``warn`` receives how many there were. A blank ``group`` or ``video`` cell is
    an error: read as a name, it would be one group or one video of every blank segment.

    Raises:
        ScoreTableError: The file cannot be read, lacks a column, has a score that is not a number or a
            verdict other than Good, Medium or Bad (naming the line), a blank group or video cell, or
            ``reference`` is not a score; a voted judge is not a score, is not higher-is-better, or has a
            verdict off Table D4's scale.
    """
    voted_means = dict(turn_means or {})
    if not scores:
        raise ScoreTableError(f"{path}: name at least one score column")
    if reference is not None and reference not in scores:
        raise ScoreTableError(f"{path}: reference {reference!r} is not one of the scores: "
                              f"{', '.join(scores)}")
    for name in voted_means:
        if name not in scores:
            raise ScoreTableError(f"{path}: turn mean given for {name!r}, which is not one of the scores: "
                                  f"{', '.join(scores)}")
        if not scores[name]:
            raise ScoreTableError(f"{path}: the voted judge {name!r} gives Table D4's verdicts (Bad 1, "
                                  "Medium 2, Good 3), where higher is better: mark it so (on the command "
                                  f"line, --score {name}:higher-better)")
    needed = (verdict, *scores, *voted_means.values(), *(c for c in (group, clip, video) if c))
    df = read_score_csv(path, tuple(dict.fromkeys(needed)))
    _check_names(df, [c for c in (group, clip, video) if c], path)
    for col, what in ((group, "group"), (video, "video")):
        if col and (blank := np.flatnonzero((df[col].str.strip() == "").to_numpy())).size:
            more = f" ({blank.size} such rows)" if blank.size > 1 else ""
            raise ScoreTableError(f"{path} {_line(df, int(blank[0]))}, column {col!r}: blank {what}{more}; "
                                  f"name the segment's {what}: blank cells would be read as one {what}, "
                                  "named ''")
    where = [f"{path} {_line(df, i)}, column {verdict!r}" for i in range(len(df))]
    try:
        levels = verdict_levels([v.strip() for v in df[verdict]], where)
    except ValueError as exc:
        raise ScoreTableError(str(exc)) from None
    oriented = {name: orient(column_numbers(df, name, path), hib) for name, hib in scores.items()
                if name not in voted_means}
    groups = [str(x) for x in df[group]] if group else ["all"] * len(df)
    # RoboWorM Table D4: a VLM's rho on its mean level over turns, its overlap on the majority verdict.
    ranked = dict(oriented)
    voted: dict[str, VerdictOverlap] = {}
    for name, mean_column in voted_means.items():
        own_levels, mean = _voted_columns(df, name, mean_column, path)
        ranked[name] = orient(mean, True)
        voted[name] = verdict_overlap(own_levels, levels, groups)
    ranked = {name: ranked[name] for name in scores}  # the order the scores were given in
    cluster_col = clip or video
    clusters = [str(x) for x in df[cluster_col]] if cluster_col else [str(i) for i in range(len(df))]
    if clip:  # a blank clip is a clip of its own (its video's, else the segment's), never one named ''
        own = [i for i, c in enumerate(clusters) if not c.strip()]
        for i in own:  # ("\0": no clip a user names)
            clusters[i] = f"\0video {df[video].iloc[i]}" if video else f"\0row {i}"
        if own and warn is not None:
            each = "its video" if video else "the segment alone"
            warn(f"{path}: {len(own)} segment(s) with a blank {clip!r} cell, each taken as a clip of its own "
                 f"({each}) in the bootstrap: {', '.join(_line(df, i) for i in own[:_SHOWN_IDS])}"
                 + (f" and {len(own) - _SHOWN_IDS} more" if len(own) > _SHOWN_IDS else ""))
    try:
        rho = segment_spearman_bootstrap(ranked, levels, groups, clusters, reference=reference,
                                         replicates=replicates, seed=seed, level=level)
    except ValueError as exc:
        raise ScoreTableError(f"{path}: {exc}") from None
    bands: dict[str, dict[str, BandAgreement | str]] = {}
    pooled: dict[str, PooledBands | None] = {}
    if video:
        videos = [f"{a}\x00{v}" for a, v in zip(groups, df[video], strict=True)]
        for name, s in oriented.items():
            bands[name], pooled[name] = group_bands(s, levels, groups, videos, draws=draws, seed=seed,
                                                    level=level)
    names = sorted(set(groups))
    g = np.asarray(groups, dtype=object)
    counts = {grp: int(np.sum(g == grp)) for grp in names}
    verdicts = {grp: {name: int(np.sum((g == grp) & (levels == k))) for name, k in VERDICT_LEVELS.items()}
                for grp in names}
    return SegmentTable(rho, bands, pooled, counts, verdicts, cluster_col or "row", voted_means, voted)
