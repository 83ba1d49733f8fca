"""What the RoboPhys-3D table's AFS and RoboPhyscore intervals add to the report's section.

Run with::

    .venv/bin/python benchmarks/bench_robophys_intervals.py [--items 5000] [--generators 20] [--metrics 30]
        [--bootstrap 2000] [--repeats 3]

Synthetic data: ``--items`` items spread over ``--generators`` generators, each generator's items on
clips shared with the others (clip_id), in 3 sources, ``--metrics`` RoboPhys-3D taxonomy metrics with
uniform values. The section is built from a :class:`ReportInput` directly, once without replicates (the
baseline: the same table with no intervals) and once with ``--bootstrap`` replicates, side by side in
this process, best of ``--repeats``; the ratio is what to compare across machines. On the 2-core
development machine (2026-12-07, loaded): 5,000 items x 30 metrics, 2,000 replicates, the intervals
themselves took 0.4 s (0.9 s before their sums were taken per clip, sparse).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robojudge.aggregate import load_taxonomy
from robojudge.metric_info import direction
from robojudge.report._robophys import robophys_section
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--generators", type=int, default=20)
    ap.add_argument("--metrics", type=int, default=30)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    ids = list(load_taxonomy().ids)[: args.metrics]
    rng = np.random.default_rng(0)
    items, rows = [], []
    for g in range(args.generators):
        for k in range(args.items // args.generators):
            it = Item(item_id=f"g{g}_{k}", video="v.mp4", clip_id=f"c{k}", generator=f"gen{g}",
                      source=f"s{k % 3}")
            items.append(it)
            rows += [ResultRow(it.item_id, m, "h", "1", "ok", float(rng.random())) for m in ids]
    best = {}
    for replicates in (0, args.bootstrap):
        inp = ReportInput(rows, items, direction, bootstrap=replicates)
        took = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            sec = robophys_section(inp)
            took.append(time.perf_counter() - start)
        best[replicates] = min(took)
        assert sec.tables, sec.skipped
    base, with_ci = best[0], best[args.bootstrap]
    print(f"{len(items)} items, {args.generators} generators, {len(ids)} metrics")
    print(f"section without intervals: {base:.2f} s; with {args.bootstrap} replicates: {with_ci:.2f} s "
          f"(ratio {with_ci / base:.2f}, intervals {with_ci - base:.2f} s)")


if __name__ == "__main__":
    main()
