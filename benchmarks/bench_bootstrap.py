"""Time the paired cluster bootstrap of :func:`robojudge.meta.agreement_table`.

Run with::

    .venv/bin/python benchmarks/bench_bootstrap.py [--replicates 10000] [--judges 30] [--items 800]

Synthetic data shaped like RoboJudge-Bench: ``--items`` items on two axes (PA, IA) with integer human
scores 1-5, grouped into clips of about 1.4 items in 8 source strata, and ``--judges`` judges whose
scores are noisy copies of the human scores (integers, with 2% unscored at random: ``--missing``).
``--continuous`` gives the judges continuous scores instead, which takes the slower item-level path for
Spearman's rho. Judges that left different items unscored are compared on the items both scored, which
bootstraps both again without the others' items (their Spearman rho from the judges' own cell weights,
for integer scores); ``--missing 0`` times judges that scored every item.

Prints the wall and CPU seconds (all threads of the process; the machines are shared, and the CPU time
follows their load much less) for: drawing the replicate weights, the full report with Spearman, the report
without Spearman (``rank_stats=False``), and the report with no judge-pair differences.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robojudge.meta import ClusterBootstrap, agreement_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=10_000)
    ap.add_argument("--judges", type=int, default=30)
    ap.add_argument("--items", type=int, default=800)
    ap.add_argument("--continuous", action="store_true")
    ap.add_argument("--missing", type=float, default=0.02, help="Share of each judge's scores left blank.")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.items
    clusters = rng.integers(0, max(1, int(n / 1.4)), n)
    strata = clusters % 8
    human = {a: rng.integers(1, 6, n).astype(float) for a in ("pa", "ia")}
    pred: dict[str, dict[str, np.ndarray]] = {}
    for j in range(args.judges):
        pred[f"judge{j:02d}"] = {}
        for a, y in human.items():
            p = y + rng.normal(0, 0.6 + 0.05 * j, n)
            p = p if args.continuous else np.clip(np.round(p), 1, 5)
            p[rng.random(n) < args.missing] = np.nan
            pred[f"judge{j:02d}"][a] = p

    def timed(label: str, **kw: object) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        agreement_table(pred, human, clusters, strata, bootstrap=args.replicates, seed=1, **kw)  # type: ignore[arg-type]
        print(f"{label:<44s} {time.perf_counter() - t0:7.2f} s  ({time.process_time() - c0:7.2f} s CPU)")

    t0, c0 = time.perf_counter(), time.process_time()
    ClusterBootstrap(clusters, strata, args.replicates, seed=1)
    print(f"{'draw weights':<44s} {time.perf_counter() - t0:7.2f} s  ({time.process_time() - c0:7.2f} s CPU)")
    print(f"{args.replicates} replicates x {n} items x 2 axes x {args.judges} judges"
          f" ({'continuous' if args.continuous else 'integer'} judge scores, {args.missing:.0%} unscored)")
    timed("report, Spearman, all judge pairs")
    timed("report, no Spearman, all judge pairs", rank_stats=False)
    timed("report, Spearman, no pairs", pairs=[])


if __name__ == "__main__":
    main()
