"""Peak memory and time of the Kendall tau-b interval on continuous scores, the sign matrix made a block
of rows at a time (as robojudge does) against made whole (as it was before 2026-12-06).

Run with::

    .venv/bin/python benchmarks/bench_kendall_memory.py [--n 2000,4000,8000] [--bootstrap 2000]

Each (n, way) runs in a child process of its own, so that its peak resident memory (``ru_maxrss``) is
its own; the two ways run side by side for each n, on the same scores and draws, and must give the same
tau-b and interval. The metric-calibrated judge's expected scores are continuous, so every item is a cell
of its own: whole, the sign matrix is cells x cells.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
import numpy as np
from robojudge.meta import _kendall
from robojudge.meta import kendall_interval
n, bootstrap, whole = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "whole"
if whole:
    _kendall._BLOCK_ENTRIES = 1 << 62  # one block: the whole sign matrix at once
rng = np.random.default_rng(0)
y = rng.integers(1, 6, n).astype(float)
x = y + rng.normal(0, 1, n)
start = time.perf_counter()
e = kendall_interval(x, y, bootstrap=bootstrap, seed=0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
took = time.perf_counter() - start
print(json.dumps({"s": took, "mb": peak, "value": e.value, "low": e.low, "high": e.high}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2000,4000,8000", help="Scored items, comma-separated.")
    parser.add_argument("--bootstrap", type=int, default=2000)
    args = parser.parse_args()
    print(f"{'n':>6} {'way':>7} {'seconds':>8} {'peak MB':>8}  tau-b [interval]")
    for n in (int(v) for v in args.n.split(",")):
        got = {}
        for way in ("blocks", "whole"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(args.bootstrap), way],
                                 capture_output=True, text=True, check=True)
            got[way] = r = json.loads(out.stdout)
            print(f"{n:>6} {way:>7} {r['s']:>8.1f} {r['mb']:>8.0f}  {r['value']:.6f} [{r['low']:.6f}, "
                  f"{r['high']:.6f}]")
        same = all(got["blocks"][k] == got["whole"][k] for k in ("value", "low", "high"))
        print(f"{n:>6} memory ratio whole/blocks {got['whole']['mb'] / got['blocks']['mb']:.2f}, "
              f"time ratio {got['whole']['s'] / got['blocks']['s']:.2f}, same values: {same}")


if __name__ == "__main__":
    main()
