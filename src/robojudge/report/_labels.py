"""How well each stored metric agrees with a suite's labels (human or planted), with bootstrap CIs."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from robojudge.meta import agreement_table
from robojudge.report._leaderboard import AXES, clusters_of, label_scores, metric_features, strata_of
from robojudge.report._tables import md_escape
from robojudge.store import ResultRow
from robojudge.store._export import SafeCsvWriter
from robojudge.suite import Item


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
    # The same oriented item x metric matrix (latest ok row per item and metric, judges left out)
    # that the metric-calibrated judge is fit on.
    names, matrix = metric_features(rows, labelled, higher_is_better)
    if not names:
        return []
    pred = {m: {axis: matrix[:, k] for axis in AXES} for k, m in enumerate(names)}
    report = agreement_table(
        pred,
        label_scores(labelled),
        clusters=clusters_of(labelled),
        strata=strata_of(labelled),
        bootstrap=bootstrap,
        seed=seed,
        pairs=[],
    )
    out = []
    for metric in names:
        for axis in AXES:
            cell = report.cells[metric][axis]
            p, s = cell.stats["pearson"], cell.stats["spearman"]
            out.append(LabelAgreement(metric, axis, cell.n, p.value, p.low, p.high, s.value, s.low, s.high))
    return out


def write_label_agreement(rows: Sequence[LabelAgreement], out_dir: str | Path) -> None:
    """``label_agreement.csv`` and ``label_agreement.md`` in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields = list(LabelAgreement.__dataclass_fields__)
    with (out / "label_agreement.csv").open("w", newline="") as f:
        w = SafeCsvWriter(f)
        w.writerow(fields)
        for r in rows:
            d = asdict(r)
            w.writerow([d[k] for k in fields])
    lines = [
        "| metric | axis | n | Pearson r [95% CI] | Spearman rho [95% CI] |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {md_escape(r.metric)} | {r.axis} | {r.n} | {_ci(r.pearson, r.pearson_low, r.pearson_high)} | "
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
