"""Time of the metric-calibrated judge's ordinal fit with BLAS held to one thread (as robojudge does)
against BLAS on its default threads (as it was before 2026-12-06).

Run with::

    .venv/bin/python benchmarks/bench_ordinal_fit.py [--items 2400] [--features 22] [--repeats 5]

Both ways fit the same planted data side by side in this process and must give the same slopes (to
1e-8). SciPy's L-BFGS-B calls LAPACK on tiny matrices every iteration, and OpenBLAS waking its threads
for each made a fit many times slower (scipy issues 22438, 23191); the gap grows with a busy machine.
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np

from robojudge.meta import _calibrated


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2400)
    ap.add_argument("--features", type=int, default=22)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.items, args.features))
    y = np.clip(np.round(3 + x[:, 0] - 0.5 * x[:, 1] + rng.normal(size=args.items)), 1, 5)
    one_thread = _calibrated._one_blas_thread
    coefs, took = {}, {}
    for way in ("one thread", "default threads", "one thread (again)"):
        _calibrated._one_blas_thread = one_thread if way.startswith("one") else contextlib.nullcontext
        start = time.perf_counter()
        for _ in range(args.repeats):
            model = _calibrated.fit_ordinal_logit(x, y)
        took[way] = (time.perf_counter() - start) / args.repeats
        coefs[way] = model.coef
    _calibrated._one_blas_thread = one_thread
    assert all(np.allclose(c, coefs["one thread"], atol=1e-8) for c in coefs.values())
    info = [lib for lib in _calibrated._threadpools().info() if lib["user_api"] == "blas"]
    blas = ", ".join(f"{lib['internal_api']} {lib['version']} ({lib['num_threads']} threads)" for lib in info)
    print(f"{args.items} items x {args.features} features, BLAS: {blas}")
    for way, s in took.items():
        print(f"  {way:20s} {s * 1e3:8.1f} ms per fit")
    print(f"  default / one thread: {took['default threads'] / took['one thread']:.1f}x")


if __name__ == "__main__":
    main()
