"""Sensitivity matrix: how each computed metric responds to each planted failure of the simulator suite.

For every metric robojudge computes itself (provider ``computed``, whatever is registered when this
runs) and every planted failure type of the simulator suite (``robojudge.suite.sim``), the cell is
Spearman's rho between the metric, **oriented so that higher is better** (values of lower-is-better
metrics are negated), and the failure's severity on each rollout (0 where that failure was not planted;
the largest severity where it was planted more than once). A metric that penalizes a failure gets a
negative rho: the worse the failure, the lower the oriented score. Rollouts where a metric failed are
left out of its row; ``n`` says how many remain.

Rerun (builds the suite first if ``SUITE/suite.jsonl`` is missing; MuJoCo needs ``MUJOCO_GL=egl``)::

    MUJOCO_GL=egl .venv/bin/python scripts/sensitivity_matrix.py --suite runs/sim_sensitivity \\
        --out docs/sensitivity.md

``--out`` replaces only the part of the file between its ``sensitivity-matrix`` markers.

Scoring goes through :func:`robojudge.run.score_suite` into ``--run-dir`` (default
``SUITE/_sensitivity``), so a rerun only computes metrics that are new or changed.

Dose-response mode (``--dose teleport,vanish``) answers the same question without the matrix's two
confounders, episode-to-episode differences and failures planted together: for each failure type it
builds its own suite in which every episode is rendered once with no failure (the control) and once
per severity in ``--severities`` with that failure alone, and reports, per metric, Spearman's rho
between the **paired** change (oriented value minus the same episode's control) and the severity,
with the share of planted rollouts whose oriented value fell below their control::

    MUJOCO_GL=egl .venv/bin/python scripts/sensitivity_matrix.py --dose teleport,vanish \
        --suite runs/sim_dose --episodes 6 --size 128 --out docs/sensitivity.md
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robojudge.meta import spearman
from robojudge.metrics import Provider, get_metric, list_metrics
from robojudge.run import score_suite
from robojudge.store import ResultStore
from robojudge.suite import Item, load_suite

#: Failure types in the order of ``robojudge.suite.sim._failures.FAILURE_TYPES`` (PA first, then IA).
FAILURE_ORDER: tuple[str, ...] = (
    "teleport", "vanish", "appear", "duplicate", "flicker", "frozen", "camera_drift", "interpenetration",
    "telekinesis", "floating", "deformation", "stop_short", "wrong_target", "wrong_object", "unrelated",
)
#: |rho| at or above this is marked as a response in the Markdown table.
RESPONSE_RHO = 0.3
#: Markers in a Markdown file between which ``--out`` replaces the table (the rest is kept).
BEGIN, END = "<!-- sensitivity-matrix:begin -->", "<!-- sensitivity-matrix:end -->"
#: The same for the dose-response table.
DOSE_BEGIN, DOSE_END = "<!-- dose-response:begin -->", "<!-- dose-response:end -->"
#: Severities of the dose-response suites.
DOSE_SEVERITIES: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Cell:
    """One metric x failure cell: Spearman's rho (NaN when undefined) and the rollouts it used."""

    rho: float
    n: int
    planted: int


def computed_metric_ids() -> list[str]:
    """Every registered metric that robojudge computes itself, except the random baseline."""
    return [s.id for s in list_metrics() if s.provider is Provider.computed and s.id != "uniform_random"]


def failure_severities(items: Iterable[Item]) -> dict[str, dict[str, float]]:
    """``{failure type: {item id: severity}}`` from each item's ``meta.failures`` (0 where absent)."""
    items = list(items)
    found: dict[str, dict[str, float]] = {}
    for it in items:
        for f in it.meta.get("failures", []):
            sev = found.setdefault(f["type"], {})
            sev[it.item_id] = max(sev.get(it.item_id, 0.0), float(f["severity"]))
    order = [t for t in FAILURE_ORDER if t in found] + sorted(set(found) - set(FAILURE_ORDER))
    return {t: {it.item_id: found[t].get(it.item_id, 0.0) for it in items} for t in order}


def oriented(values: Mapping[str, float], higher_is_better: bool) -> dict[str, float]:
    """Values with the sign flipped for lower-is-better metrics, NaNs dropped."""
    sign = 1.0 if higher_is_better else -1.0
    return {k: sign * v for k, v in values.items() if v is not None and not math.isnan(v)}


def sensitivity_matrix(
    values: Mapping[str, Mapping[str, float]],
    severities: Mapping[str, Mapping[str, float]],
    higher_is_better: Mapping[str, bool],
) -> dict[str, dict[str, Cell]]:
    """``{metric: {failure: Cell}}``: Spearman rho of the oriented metric against each failure's severity.

    Args:
        values: ``{metric: {item id: raw value}}`` (only scored items).
        severities: ``{failure: {item id: severity}}`` over all items (see :func:`failure_severities`).
        higher_is_better: each metric's direction.
    """
    out: dict[str, dict[str, Cell]] = {}
    for metric, per_item in values.items():
        scored = oriented(per_item, higher_is_better[metric])
        ids = sorted(scored)
        row = {}
        for failure, sev in severities.items():
            x = np.array([scored[i] for i in ids])
            y = np.array([sev.get(i, 0.0) for i in ids])
            row[failure] = Cell(rho=spearman(x, y), n=len(ids), planted=int((y > 0).sum()))
        out[metric] = row
    return out


def stored_results(
    db_url: str, metric_ids: Sequence[str]
) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """``{metric: {item id: value}}`` of the ok rows with a value (an unscored row, NaN, is none), and
    error counts, at each metric's current version."""
    values: dict[str, dict[str, float]] = {m: {} for m in metric_ids}
    errors: dict[str, int] = {}
    versions = {m: get_metric(m).version for m in metric_ids}
    with ResultStore(db_url) as store:
        for row in store.rows():
            if row.metric not in values or row.version != versions[row.metric]:
                continue
            if row.status == "ok" and row.value is not None and math.isfinite(row.value):
                values[row.metric][row.item_id] = row.value
            elif row.status == "error":
                errors[row.metric] = errors.get(row.metric, 0) + 1
    return values, errors


def run_matrix(
    manifest: Path, run_dir: Path, metric_ids: Sequence[str], workers: int = 1
) -> tuple[dict[str, dict[str, Cell]], dict[str, int]]:
    """Score ``manifest`` with ``metric_ids`` into ``run_dir`` (resuming) and build the matrix.

    Returns:
        The matrix (metrics with no scored item are left out) and per-metric counts of error rows.
    """
    run = score_suite(manifest, list(metric_ids), run_dir=run_dir, workers=workers)
    stored, errors = stored_results(run.db_url, metric_ids)
    values = {m: v for m, v in stored.items() if v}
    suite = load_suite(manifest)
    hib = {m: get_metric(m).higher_is_better for m in values}
    return sensitivity_matrix(values, failure_severities(suite.items), hib), errors


@dataclass(frozen=True)
class DoseCell:
    """One metric x failure of a dose-response study.

    Attributes:
        rho: Spearman rho between the paired change (oriented value minus the episode's control)
            and the severity, controls included with change 0 and severity 0.
        dropped: Share of planted rollouts whose oriented value is below their control's.
        n: Rollouts used (controls included).
    """

    rho: float
    dropped: float
    n: int


def dose_profiles(failure: str, severities: Sequence[float] = DOSE_SEVERITIES) -> list[Any]:
    """A control profile (no failure, no benign variation) and one profile per severity of ``failure``."""
    from robojudge.suite.sim import Profile

    control = Profile(f"{failure}@0", 0.0, (1, 1), (0.5, 0.5), (failure,), 0.0, (0.1, 0.1), (),
                      "control: the faithful episode, nothing planted")
    return [control] + [
        Profile(f"{failure}@{s:g}", 1.0, (1, 1), (s, s), (failure,), 0.0, (0.1, 0.1), (),
                f"{failure} alone at severity {s:g}")
        for s in severities
    ]


def dose_response(
    values: Mapping[str, Mapping[str, float]],
    items: Sequence[Item],
    failure: str,
    higher_is_better: Mapping[str, bool],
) -> dict[str, DoseCell]:
    """``{metric: DoseCell}`` for a suite built from :func:`dose_profiles` (see the module doc).

    Args:
        values: ``{metric: {item id: raw value}}``.
        items: The suite's items; the control of an episode is its item whose generator ends in ``@0``.
        failure: The planted failure type.
        higher_is_better: Each metric's direction.
    """
    out: dict[str, DoseCell] = {}
    for metric, per_item in values.items():
        scored = oriented(per_item, higher_is_better[metric])
        control = {it.clip_id: scored[it.item_id] for it in items
                   if (it.generator or "").endswith("@0") and it.item_id in scored}
        deltas, sevs = [], []
        for it in items:
            if it.item_id not in scored or it.clip_id not in control:
                continue
            sev = max((float(f["severity"]) for f in it.meta.get("failures", []) if f["type"] == failure),
                      default=0.0)
            deltas.append(scored[it.item_id] - control[it.clip_id])
            sevs.append(sev)
        d, y = np.array(deltas), np.array(sevs)
        planted = y > 0
        dropped = float((d[planted] < 0).mean()) if planted.any() else float("nan")
        out[metric] = DoseCell(rho=spearman(d, y) if len(d) > 2 else float("nan"), dropped=dropped, n=len(d))
    return out


def run_dose(
    suite_root: Path, failure: str, metric_ids: Sequence[str], *, episodes: int, size: int, seed: int,
    severities: Sequence[float] = DOSE_SEVERITIES, workers: int = 1,
) -> tuple[dict[str, DoseCell], dict[str, int]]:
    """Build (or reuse) ``suite_root/<failure>`` with :func:`dose_profiles`, score it, return the cells."""
    folder = suite_root / failure
    manifest = folder / "suite.jsonl"
    if not manifest.exists():
        from robojudge.suite.sim import make_sim_suite

        manifest = make_sim_suite(folder, seed=seed, episodes=episodes, views=1, size=size,
                                  profiles=dose_profiles(failure, severities))
    run = score_suite(manifest, list(metric_ids), run_dir=folder / "_run", workers=workers)
    stored, errors = stored_results(run.db_url, metric_ids)
    values = {m: v for m, v in stored.items() if v}
    hib = {m: get_metric(m).higher_is_better for m in values}
    return dose_response(values, load_suite(manifest).items, failure, hib), errors


def render_dose_markdown(cells: Mapping[str, Mapping[str, DoseCell]], *, title: str, intro: str,
                         versions: Mapping[str, str] | None = None) -> str:
    """Dose-response cells as a Markdown table (rows: metrics; columns: failure types).

    ``versions`` (metric id -> version) puts each metric's version in its row, so that a table left
    behind by a version change shows it.
    """
    failures = list(cells)
    metrics = sorted({m for row in cells.values() for m in row})
    head = "| metric | " + " | ".join(failures) + " |"
    sep = "| --- | " + " | ".join("---:" for _ in failures) + " |"
    lines = [title, "", intro, "", head, sep]
    for metric in metrics:
        parts = []
        for f in failures:
            c = cells[f].get(metric)
            if c is None or math.isnan(c.rho):
                parts.append("n/a")
                continue
            text = f"{c.rho:+.2f} ({100 * c.dropped:.0f}%)"
            parts.append(f"**{text}**" if c.rho <= -RESPONSE_RHO else text)
        name = f"`{metric}` v{versions[metric]}" if versions and metric in versions else f"`{metric}`"
        lines.append(f"| {name} | " + " | ".join(parts) + " |")
    return "\n".join(lines) + "\n"


def _fmt(cell: Cell) -> str:
    if math.isnan(cell.rho):
        return "n/a"
    text = f"{cell.rho:+.2f}"
    return f"**{text}**" if cell.rho <= -RESPONSE_RHO else text


def render_markdown(matrix: Mapping[str, Mapping[str, Cell]], *, title: str, intro: str) -> str:
    """The matrix as a Markdown table (rows: metrics; columns: failure types with planted counts)."""
    if not matrix:
        return f"{title}\n\n{intro}\n\n(no metric produced a value)\n"
    failures = list(next(iter(matrix.values())))
    counts = {f: max(row[f].planted for row in matrix.values()) for f in failures}
    head = "| metric | n | " + " | ".join(f"{f} ({counts[f]})" for f in failures) + " |"
    sep = "| --- | ---: | " + " | ".join("---:" for _ in failures) + " |"
    lines = [title, "", intro, "", head, sep]
    for metric in sorted(matrix):
        row = matrix[metric]
        n = next(iter(row.values())).n
        lines.append(f"| `{metric}` | {n} | " + " | ".join(_fmt(row[f]) for f in failures) + " |")
    return "\n".join(lines) + "\n"


def write_table(path: Path, table: str, begin: str = BEGIN, end: str = END) -> None:
    """Write ``table`` between the markers of an existing file at ``path``, or as the whole file."""
    from robojudge.report._tables import write_between_markers

    write_between_markers(path, table, begin, end)


def main(argv: Sequence[str] | None = None) -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--suite", type=Path, default=Path("runs/sim_sensitivity"), help="suite folder")
    parser.add_argument("--episodes", type=int, default=10, help="episodes when building the suite")
    parser.add_argument("--size", type=int, default=256, help="image size when building the suite")
    parser.add_argument("--seed", type=int, default=0, help="seed when building the suite")
    parser.add_argument("--run-dir", type=Path, default=None, help="run folder [default: SUITE/_sensitivity]")
    parser.add_argument("--metrics", default="", help="comma-separated ids [default: every computed metric]")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--dose", default="", help="comma-separated failure types: dose-response mode")
    parser.add_argument("--severities", default=",".join(f"{x:g}" for x in DOSE_SEVERITIES),
                        help="severities of the dose-response suites")
    parser.add_argument("--out", type=Path, default=None,
                        help="Markdown file: the table replaces the part between its sensitivity-matrix "
                             "markers, or the whole file if it has none [default: stdout]")
    args = parser.parse_args(argv)

    if args.dose:
        return _main_dose(args)
    manifest = args.suite / "suite.jsonl"
    if not manifest.exists():
        from robojudge.suite.sim import make_sim_suite

        print(f"building the simulator suite in {args.suite} ...", flush=True)
        manifest = make_sim_suite(args.suite, seed=args.seed, episodes=args.episodes, views=1, size=args.size)
    metric_ids = [m for m in args.metrics.split(",") if m] or computed_metric_ids()
    run_dir = args.run_dir or args.suite / "_sensitivity"
    matrix, errors = run_matrix(manifest, run_dir, metric_ids, args.workers)
    n_items = len(load_suite(manifest))
    skipped = sorted(set(metric_ids) - set(matrix))
    intro = (f"Suite: `{manifest}` ({n_items} rollouts). Cells: Spearman rho between the metric oriented "
             f"so that higher is better and the failure's severity (0 where not planted); column headers "
             f"give how many rollouts carry that failure. Bold: rho <= -{RESPONSE_RHO} (the metric drops "
             f"as the failure worsens).")
    if skipped:
        intro += " Not in the table (no value on any rollout): " + ", ".join(
            f"`{m}` ({errors.get(m, 0)} errors)" for m in skipped) + "."
    text = render_markdown(matrix, title="### Sensitivity matrix", intro=intro)
    if args.out:
        write_table(args.out, text)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


def _main_dose(args: argparse.Namespace) -> int:
    failures = [f for f in args.dose.split(",") if f]
    severities = [float(x) for x in args.severities.split(",") if x]
    metric_ids = [m for m in args.metrics.split(",") if m] or computed_metric_ids()
    cells = {}
    for failure in failures:
        print(f"{failure}: building/scoring {args.suite / failure} ...", flush=True)
        cells[failure], _ = run_dose(args.suite, failure, metric_ids, episodes=args.episodes, size=args.size,
                                     seed=args.seed, severities=severities, workers=args.workers)
    intro = (f"{args.episodes} episodes per failure type (seed {args.seed}, {args.size} px), each rendered "
             f"once with nothing planted (the control) and once per severity "
             f"{', '.join(f'{x:g}' for x in severities)} with that failure alone. Cells: Spearman rho "
             f"between the paired change (metric oriented so that higher is better, minus the same "
             f"episode's control) and the severity, controls counted with change 0; in brackets, the share "
             f"of planted rollouts that scored below their control. Bold: rho <= -{RESPONSE_RHO}. "
             f"Each row names the metric version it was measured with.")
    shown = {m for per_failure in cells.values() for m in per_failure}
    if skipped := sorted(set(metric_ids) - shown):
        intro += " Not in the table (no value on any rollout): " + ", ".join(f"`{m}`" for m in skipped) + "."
    versions = {m: get_metric(m).version for m in metric_ids}
    text = render_dose_markdown(cells, title="### Dose-response (one failure at a time, paired)", intro=intro,
                                versions=versions)
    if args.out:
        write_table(args.out, text, DOSE_BEGIN, DOSE_END)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
