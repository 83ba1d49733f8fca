"""RoboWorM Table D5 from a CSV file: what ``robojudge meta multiview`` computes, callable from Python.

One row per video: a reference rating (human, or the simulator's planted multi-view score), the
embodiment, and one column per method (RIGIS's continuous score, a VLM judge's majority verdict over its
turns). :func:`multiview_from_csv` reads and checks the file and runs
:func:`robojudge.meta.embodiment_agreement` on every method column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robojudge.meta._multiview import EmbodimentAgreement, embodiment_agreement
from robojudge.meta._tables import ScoreTableError, _check_names, _line, column_numbers, read_score_csv

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLE_D2_VERDICTS", "MultiviewTable", "multiview_from_csv"]

TABLE_D2_VERDICTS: dict[str, float] = {"Bad": 1.0, "Medium": 2.0, "Good": 3.0}
"""RoboWorM's three-level scale of a VLM judge (Table D2) and its levels (Table D4: Bad 1, Medium 2,
Good 3), as the ``roboworm_physics`` and ``roboworm_multiview`` rubrics store them. A column of
``meta multiview`` may hold these words (in any case) instead of their numbers."""


@dataclass(frozen=True)
class MultiviewTable:
    """:func:`multiview_from_csv`'s answer.

    Attributes:
        scores: Per method column, in the order given: agreement per group and its mean over groups.
        higher_is_better: Per method column, its direction as given.
        videos: Rows per group that have a reference rating.
        unlabelled: Rows left out because their reference cell is blank.
        group_column: The column the groups come from (None: one group, ``all``).
        groups: The groups, sorted (the table's column order).
    """

    scores: dict[str, EmbodimentAgreement]
    higher_is_better: dict[str, bool]
    videos: dict[str, int]
    unlabelled: int
    group_column: str | None = None
    groups: list[str] = field(default_factory=list)


def _levels_or_numbers(df: pd.DataFrame, column: str, path: str | Path) -> npt.NDArray[np.float64]:
    """A column of numbers, or of Table D2's verdict words (Bad 1, Medium 2, Good 3, in any case) where
    every filled cell is one; a blank is NaN. A column that mixes words and numbers, or holds another
    word, is an error naming the line (:func:`column_numbers`)."""
    words = {name.casefold(): level for name, level in TABLE_D2_VERDICTS.items()}
    cells = [str(v).strip() for v in df[column]]
    filled = [c for c in cells if c]
    if filled and all(c.casefold() in words for c in filled):
        return np.array([words[c.casefold()] if c else np.nan for c in cells], dtype=np.float64)
    return column_numbers(df, column, path)


def multiview_from_csv(
    path: str | Path,
    scores: Mapping[str, bool],
    *,
    target: str,
    group: str | None = None,
) -> MultiviewTable:
    """Spearman's rho and pairwise rank accuracy of every score column against ``target``, per group and
    averaged over the groups (RoboWorM App. D, Table D5; ``meta multiview``).

    One row per video. ``scores`` maps each method column to whether its higher values are better (a
    lower-is-better column is negated first). Table D5 gives RIGIS's raw continuous score and a VLM
    judge's majority verdict over three turns (Bad 1, Medium 2, Good 3; the words are read too), so a
    three-level judge ties many pairs, and a pair the method ties counts as an error of its rank
    accuracy. A blank score is a video that method left unscored (counted per group); a row with a
    blank ``target`` is left out of every method and counted.

    Raises:
        ScoreTableError: The file cannot be read, lacks a column, names no score or one twice as the
            target, or has a value that is neither a finite number nor a verdict word (naming the line).
    """
    if not scores:
        raise ScoreTableError(f"{path}: name at least one score column")
    if target in scores:
        raise ScoreTableError(f"{path}: column {target!r} is both the target and a score")
    if group is not None and (group == target or group in scores):
        raise ScoreTableError(f"{path}: column {group!r} is the group and also a score or the target")
    df = read_score_csv(path, tuple(dict.fromkeys((target, *scores, *([group] if group else [])))))
    if group:
        _check_names(df, [group], path)
    y = _levels_or_numbers(df, target, path)
    labelled = np.isfinite(y)
    groups = [str(x) for x in df[group]] if group else ["all"] * len(df)
    if group:
        blank = [i for i, g in enumerate(groups) if labelled[i] and not g.strip()]
        if blank:
            raise ScoreTableError(f"{path} {_line(df, blank[0])}, column {group!r}: blank group of a rated "
                                  f"video ({len(blank)} such rows); name its embodiment")
    kept = [g for g, keep in zip(groups, labelled, strict=True) if keep]
    if not kept:
        raise ScoreTableError(f"{path}, column {target!r}: no row has a reference rating")
    out = {name: embodiment_agreement(_levels_or_numbers(df, name, path)[labelled], y[labelled], kept,
                                      higher_is_better=hib)
           for name, hib in scores.items()}
    names = sorted(set(kept))
    return MultiviewTable(out, dict(scores), {g: kept.count(g) for g in names}, int((~labelled).sum()),
                          group, names)
