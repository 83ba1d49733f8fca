"""Frame-rate ablation: one judge run at several sampling rates, agreement per rate (RoboJudge Table 9).

Each rate is judged as its own judge, named ``<judge>-fps<rate>`` (``-fpsnative`` for every decoded
frame), so the runs sit side by side in the store and resume independently; everything else about
the judge (model, rubric, decoding, frame cap) stays the same. The agreement of each run with the
suite's labels comes from :func:`robojudge.meta.agreement_table` on one shared bootstrap draw, so
differences between rates are paired.

Running the judge at each rate is :func:`robojudge.ablation.run_fps_ablation`, a top-level module
that wires :mod:`robojudge.run` to this table (report/ does not import run/).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from robojudge import DEFAULT_SEED
from robojudge.meta import OVERALL, AgreementReport, agreement_table
from robojudge.report._judges import JUDGE_COLUMNS, JudgeRow, judge_scores, judge_table
from robojudge.report._leaderboard import clusters_of, label_scores, strata_of
from robojudge.report._series import judge_series, resolve_judge, split_judge_id
from robojudge.report._tables import Cell, Table, text
from robojudge.store import ResultStore
from robojudge.suite import Item

if TYPE_CHECKING:
    from robojudge.run import JudgeRunSummary

_TITLES = {"pa": "PA", "ia": "IA", OVERALL: "Overall"}


def fps_judge_name(judge: str, fps: float | None) -> str:
    """The stored judge name of one rate: ``vlm-fps4``, ``vlm-fps0.5``, ``vlm-fpsnative``."""
    return f"{judge}-fps{'native' if fps is None else format(fps, 'g')}"


@dataclass(frozen=True)
class FpsAblation:
    """Output of :func:`robojudge.ablation.run_fps_ablation` (or of :func:`tabulate_fps_ablation`).

    Attributes:
        judge: The base judge's name.
        rates: The sampling rates, in the order given (None = native).
        names: The stored judge name of each rate.
        report: Agreement of every rate with the labels (judges = ``names``).
        rows: The Table 2 rows of ``report`` (best per column marked across rates).
        runs: What each judge run did, by rate name (empty when only tabulated).
        left_out: The stored judge names of the rates given that have no scored row (every reply
            unparsable, or every request failed); they are not in ``rates``, ``names`` or the table.
    """

    judge: str
    rates: tuple[float | None, ...]
    names: tuple[str, ...]
    report: AgreementReport
    rows: tuple[JudgeRow, ...]
    runs: dict[str, JudgeRunSummary]
    left_out: tuple[str, ...] = ()

    def table(self) -> Table:
        """Table 9 layout: one row per rate with r, Acc and MSE per target, best per column bold."""
        targets = (*self.report.axes, OVERALL)
        cols = ["fps", "n", "unscored"] + [f"{_TITLES[t]} {n}" for t in targets for n in ("r", "Acc", "MSE")]
        note = "The same judge at each sampling rate; best per column bold."
        if self.left_out:
            note += (f" Left out, with no scored judgment (every reply unparsable or every request failed): "
                     f"{', '.join(self.left_out)}.")
        if any(set(targets) - row.compared for row in self.rows):
            note += (" Best is marked only among rates scored on the same items; a rate scored on other "
                     "items is not compared.")
        table = Table("fps_ablation", f"Frame-rate ablation of judge {self.judge} (RoboJudge Table 9)", cols,
                      note=note)
        for rate, row in zip(self.rates, self.rows, strict=True):
            n = min(row.n.values()) if row.n else 0
            cells: list[Cell] = [text("native" if rate is None else format(rate, "g")), text(n),
                                 text(sum(row.n_unscored.values()))]
            for t in targets:
                for col, _, _ in JUDGE_COLUMNS:
                    e = row.cells[t, col]
                    cells.append(Cell(e.value, e.low, e.high, best=(t, col) in row.best,
                                      small=t in row.small, approximate=t in row.approximate))
            table.add(cells)
        return table


def tabulate_fps_ablation(store: ResultStore, items: Sequence[Item], judge: str,
                          rates: Sequence[float | None], *, bootstrap: int = 2000, seed: int = DEFAULT_SEED,
                          runs: dict[str, JudgeRunSummary] | None = None) -> FpsAblation:
    """Agreement with the labels of every rate's stored run of ``judge``.

    A rate whose stored run has no scored judgment (every reply unparsable, every request failed) is left
    out of the table and named in :attr:`FpsAblation.left_out`, as ``robojudge judge`` counts such a run
    and goes on; the other rates are compared.

    Raises:
        ValueError: No labelled items, a rate with no stored rows, or no rate with a scored judgment
            (:class:`NoRateScoredError`).
    """
    labelled = [it for it in items if it.labels is not None]
    if not labelled:
        raise ValueError("the suite has no PA/IA labels to compare the frame rates with")
    stored = store.rows()
    series = judge_series(stored)
    kept = [(r, fps_judge_name(judge, r)) for r in rates]
    left_out = tuple(name for _, name in kept if not resolve_judge(series, name).n_scored)
    if len(left_out) == len(kept):
        first = min(r.metric for r in stored if (split_judge_id(r.metric) or ("",))[0] == left_out[0])
        raise NoRateScoredError(left_out, first)
    kept = [(r, name) for r, name in kept if name not in left_out]
    rates, names = [r for r, _ in kept], tuple(name for _, name in kept)
    pred = {name: judge_scores(stored, labelled, name) for name in names}
    human = label_scores(labelled)
    clusters = clusters_of(labelled)
    report = agreement_table(pred, human, clusters, strata_of(labelled),
                             bootstrap=bootstrap, seed=seed, pairs=[], rank_stats=False)
    scored = {j: {a: np.isfinite(p[a]) & np.isfinite(human[a]) for a in human} for j, p in pred.items()}
    return FpsAblation(judge, tuple(rates), names, report, tuple(judge_table(report, scored, clusters)),
                       dict(runs or {}), left_out)


class NoRateScoredError(ValueError):
    """No rate of a frame-rate ablation has a scored judgment to compare with the labels; ``names`` are
    the rates' stored judge names, whose rows ``robojudge results export`` lists, and ``runs`` what each
    rate's run did (filled in by :func:`robojudge.ablation.run_fps_ablation`)."""

    def __init__(self, names: Sequence[str], first: str) -> None:
        self.names = tuple(names)
        self.runs: dict[str, JudgeRunSummary] = {}  # what each rate's run did, where one ran
        super().__init__(f"no frame rate has a scored judgment ({', '.join(self.names)}: every reply was "
                         f"unparsable or every request failed), so nothing is compared; `robojudge results "
                         f"export --metric {first} -o -` lists the stored replies and errors of the first")
