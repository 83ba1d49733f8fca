"""Paired differences between judges (RoboJudge App. E.1), beside Table 2.

Table 2 marks the best point value of each column; whether two judges differ is another question,
answered by the difference of their statistics on the items both scored, with the interval of the
paired replicate differences on the bootstrap draws the table's intervals were taken on
(:func:`robojudge.meta.agreement_table`, as ``robojudge meta agreement`` prints them). Up to
:data:`ALL_PAIRS_UP_TO` judges every pair is compared; past that, each judge against the reference one
(the largest Overall r), so that the pairs grow with the judges, not with their square.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import combinations

import numpy as np

from robojudge.meta import OVERALL, AgreementReport, Estimate, overall
from robojudge.meta._agreement import FloatArray
from robojudge.report._leaderboard import format_estimate, target_title
from robojudge.report._tables import md_escape

#: Up to this many judges (15 pairs) every pair is compared; past it, each judge against the reference.
ALL_PAIRS_UP_TO = 6

#: The columns of the differences: (column name, statistic in the agreement report).
DIFFERENCE_COLUMNS = (("r", "pearson"), ("acc", "exact"), ("mse", "mse"))

#: The sentence under Table 2 on its marks.
BEST_NOT_A_TEST = ("The best value is marked by point estimate; the mark is not a test. Two judges differ "
                   "where the paired difference between them (a - b on the items both scored, in the table "
                   "of differences) has an interval that excludes 0.")


def reference_judge(pred: Mapping[str, Mapping[str, FloatArray]], human: Mapping[str, FloatArray]) -> str:
    """The judge with the largest Overall Pearson r against ``human`` (the first judge on ties; a judge
    without an Overall r comes after every judge with one)."""
    def r(j: str) -> float:
        axes = {a: (pred[j].get(a, np.full(len(h), np.nan)), h) for a, h in human.items()}
        v = overall(axes).pearson
        return -math.inf if math.isnan(v) else v

    judges = list(pred)
    return max(judges, key=lambda j: (r(j), -judges.index(j)))


def difference_pairs(pred: Mapping[str, Mapping[str, FloatArray]], human: Mapping[str, FloatArray]
                     ) -> list[tuple[str, str]]:
    """The judge pairs ``(a, b)`` whose difference ``a - b`` is reported: every pair, in ``pred``'s order,
    up to :data:`ALL_PAIRS_UP_TO` judges; past that, the :func:`reference_judge` against each other one."""
    judges = list(pred)
    if len(judges) <= ALL_PAIRS_UP_TO:
        return list(combinations(judges, 2))
    ref = reference_judge(pred, human)
    return [(ref, j) for j in judges if j != ref]


def excludes_zero(e: Estimate) -> bool | None:
    """Whether a difference's interval lies wholly on one side of 0; None without an interval (no shared
    item, one clip, every resample alike: nothing was tested, which is not "no difference")."""
    if math.isnan(e.low) or math.isnan(e.high):
        return None
    return e.low > 0 or e.high < 0


def shared_text(report: AgreementReport, a: str, b: str, target: str) -> str:
    """The items a difference is taken on, followed by each judge's own count where either scored more."""
    n = report.shared.get((a, b), {}).get(target, 0)
    na, nb = report.cells[a][target].n, report.cells[b][target].n
    return str(n) if na == n and nb == n else f"{n} ({na}/{nb})"


def differs_on(report: AgreementReport, per: Mapping[str, Estimate]) -> str:
    """The columns whose difference excludes 0 (``none`` when every interval holds 0), or ``n/a`` without
    a bootstrap or where no column has an interval (nothing could be tested)."""
    if not report.n_replicates:
        return "n/a"
    tested = {col: excludes_zero(per[stat]) for col, stat in DIFFERENCE_COLUMNS}
    if all(t is None for t in tested.values()):
        return "n/a"
    return ", ".join(col for col, t in tested.items() if t) or "none"


def difference_rows(report: AgreementReport) -> list[list[str]]:
    """One row per pair and target: a, b, target, n, the r, Acc and MSE differences with their intervals,
    and the columns whose interval excludes 0."""
    out = []
    for (a, b), per in report.differences.items():
        for t in (*report.axes, OVERALL):
            out.append([a, b, target_title(t), shared_text(report, a, b, t),
                        *(format_estimate(per[t][stat]) for _, stat in DIFFERENCE_COLUMNS),
                        differs_on(report, per[t])])
    return out


#: Headers of :func:`difference_rows`.
DIFFERENCE_HEADERS = ("a", "b", "target", "n", "r (a - b)", "Acc (a - b)", "MSE (a - b)", "excludes 0")


def differences_intro(report: AgreementReport) -> str:
    """The sentence that says what the table of differences holds."""
    ci = (f"{report.level:.0%} intervals of the paired differences over the same {report.n_replicates} "
          "cluster-bootstrap replicates" if report.n_replicates else "no bootstrap, so no intervals")
    which = "every pair of judges"
    if len(report.judges) > ALL_PAIRS_UP_TO and report.differences:
        ref = next(iter(report.differences))[0]
        which = (f"each judge against {ref}, the one with the largest Overall r (past {ALL_PAIRS_UP_TO} "
                 "judges, not every pair)")
    return (f"Differences a - b for {which}, on the items both judges scored (n; (a/b): each judge's own "
            f"count where either scored more); {ci}. \"excludes 0\" names the columns where the two judges "
            "differ at that level; for MSE a negative difference favours a.")


def differences_markdown(report: AgreementReport) -> list[str]:
    """The Markdown section of the differences (no lines without a pair)."""
    if not report.differences:
        return []
    lines = ["", "## Paired differences between judges", "", differences_intro(report), "",
             "| " + " | ".join(DIFFERENCE_HEADERS) + " |",
             "| --- | --- | --- | ---: | --- | --- | --- | --- |"]
    for row in difference_rows(report):
        lines.append("| " + " | ".join([md_escape(row[0]), md_escape(row[1]), *row[2:]]) + " |")
    return lines


def difference_csv_rows(report: AgreementReport) -> list[list[object]]:
    """``judge_differences.csv``: a header, then one row per pair and target (empty cells for NaN)."""
    head: list[object] = ["a", "b", "target", "n", "n_a", "n_b"]
    for col, _ in DIFFERENCE_COLUMNS:
        head += [col, f"{col}_low", f"{col}_high", f"{col}_excludes_0"]
    rows = [head]
    for (a, b), per in report.differences.items():
        for t in (*report.axes, OVERALL):
            vals: list[object] = [a, b, t, report.shared.get((a, b), {}).get(t, 0),
                                  report.cells[a][t].n, report.cells[b][t].n]
            for _, stat in DIFFERENCE_COLUMNS:
                e = per[t][stat]
                vals += [e.value, e.low, e.high, excludes_zero(e)]
            rows.append(["" if isinstance(v, float) and math.isnan(v) else v for v in vals])
    return rows
