"""How well each stored metric agrees with a suite's labels (human or planted), with bootstrap CIs."""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from robojudge.meta import agreement_table
from robojudge.store import ResultRow
from robojudge.suite import Item

AXES = ("pa", "ia")


@dataclass(frozen=True)
class LabelAgreement:
    """One metric against one label axis. Correlations are oriented so that higher means agreement."""

    metric: str
    axis: str
    n: int
    pearson: float
    pearson_low: float
    pearson_high: float
    spearman: float
    spearman_low: float
    spearman_high: float


def label_agreement(
    rows: Sequence[ResultRow],
    items: Sequence[Item],
    higher_is_better: Callable[[str], bool],
    *,
    bootstrap: int = 2000,
    seed: int = 0,
) -> list[LabelAgreement]:
    """Pearson and Spearman of each metric with the items' PA and IA labels.

    A lower-is-better metric is negated first, as RoboJudge App. B.3 does for correlations, so a
    positive value always means the metric ranks rollouts like the labels. Intervals come from the
    paired cluster bootstrap over ``clip_id`` within ``source`` (RoboJudge App. E.1); items without
    a clip id are their own cluster.
    """
    labelled = [it for it in items if it.labels is not None]
    if not labelled:
        return []
    index = {it.item_id: i for i, it in enumerate(labelled)}
    human = {
        axis: np.array([_label(it, axis) for it in labelled], dtype=float) for axis in AXES
    }
    pred: dict[str, dict[str, np.ndarray]] = {}
    for r in rows:
        if r.metric.startswith("judge:"):  # judges have their own table (see _leaderboard.judges_report)
            continue
        if r.item_id not in index or r.status != "ok" or r.value is None or math.isnan(r.value):
            continue
        values = pred.setdefault(r.metric, {a: np.full(len(labelled), np.nan) for a in AXES})
        sign = 1.0 if higher_is_better(r.metric) else -1.0
        for axis in AXES:
            values[axis][index[r.item_id]] = sign * r.value
    if not pred:
        return []
    report = agreement_table(
        pred,
        human,
        clusters=[it.clip_id or f"item:{it.item_id}" for it in labelled],
        strata=[it.source or "" for it in labelled],
        bootstrap=bootstrap,
        seed=seed,
        pairs=[],
    )
    out = []
    for metric in sorted(pred):
        for axis in AXES:
            cell = report.cells[metric][axis]
            p, s = cell.stats["pearson"], cell.stats["spearman"]
            out.append(LabelAgreement(metric, axis, cell.n, p.value, p.low, p.high, s.value, s.low, s.high))
    return out


def _label(item: Item, axis: str) -> float:
    value = getattr(item.labels, axis, None)
    return math.nan if value is None else float(value)


def write_label_agreement(rows: Sequence[LabelAgreement], out_dir: str | Path) -> None:
    """``label_agreement.csv`` and ``label_agreement.md`` in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "label_agreement.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(LabelAgreement.__dataclass_fields__))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))
    lines = [
        "| metric | axis | n | Pearson r [95% CI] | Spearman rho [95% CI] |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r.metric} | {r.axis} | {r.n} | {_ci(r.pearson, r.pearson_low, r.pearson_high)} | "
            f"{_ci(r.spearman, r.spearman_low, r.spearman_high)} |"
        )
    (out / "label_agreement.md").write_text(
        "# Metrics against the suite's labels\n\nCorrelations are oriented so that positive means the "
        "metric ranks rollouts like the labels; intervals are paired cluster-bootstrap percentiles.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def _ci(v: float, lo: float, hi: float) -> str:
    if math.isnan(v):
        return "n/a"
    return f"{v:.2f}" if math.isnan(lo) else f"{v:.2f} [{lo:.2f}, {hi:.2f}]"
