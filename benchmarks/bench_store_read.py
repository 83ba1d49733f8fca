"""Peak memory and time of reading a store's rows as robojudge does (one decoded config per distinct
config text, the strings of the details shared between rows) against the reads before: every row
decoding its own config and details (before 2026-12-06), and configs shared but not the details'
strings (2026-12-06).

Run with::

    .venv/bin/python benchmarks/bench_store_read.py [--items 8000] [--metrics 25]

A store of ``items x metrics`` rows is written to a temporary SQLite file, each row with a config of
about 160 characters and details of about 600 (the sizes of the demo store's rows). Each way reads
every row in a child process of its own, so that its peak resident memory (``ru_maxrss``) is its own,
and all must read the same rows.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import hashlib, json, resource, sys, time
from sqlalchemy import select
from robojudge.store import ResultStore, _store
from robojudge.store._schema import results_table
url, way = sys.argv[1], sys.argv[2]
start = time.perf_counter()
with ResultStore(url, read_only=True) as store:
    if way == "per row":  # the read before: the JSON column decoded on every row
        c = results_table.c
        stmt = select(results_table).where(_store.CURRENT).order_by(c.item_id, c.metric, c.created_at, c.id)
        with store._read() as conn:
            rows = [_store._row_from_record(rec) for rec in conn.execute(stmt).mappings()]
    elif way == "config":  # configs shared, each row's details its own strings
        _store._shared = lambda value, strings: value
        rows = store.rows()
    else:
        rows = store.rows()
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
digest = hashlib.sha256(repr([(r.key, r.value, r.config, r.details) for r in rows]).encode()).hexdigest()
print(json.dumps({"s": took, "mb": peak, "rows": len(rows), "digest": digest}))
"""


def _fill(url: str, items: int, metrics: int) -> None:
    import numpy as np

    from robojudge.store import ResultRow, ResultStore

    rng = np.random.default_rng(0)
    with ResultStore(url) as store:
        for first in range(0, items, 200):  # 200 items a transaction
            store.add([
                ResultRow(f"item{i:06d}", f"metric_{m:02d}", f"h{m:02d}", "3", "ok", float(rng.normal()),
                          duration_s=0.5,
                          config={"max_side": None, "fps": 8.0, "flow": "farneback", "window": 15,
                                  "levels": 3, "reference": "reference_video", "threshold": 0.25,
                                  "metric": f"metric_{m:02d}", "pairs": "consecutive"},
                          details={"per_segment": [round(float(v), 6) for v in rng.normal(size=24)],
                                   "frames": 81, "fps": 16.0, "size": [1280, 720], "notes": "ok",
                                   "libraries": {"opencv": "4.13.0", "numpy": "2.4.6"}})
                for i in range(first, min(first + 200, items)) for m in range(metrics)
            ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=8000)
    ap.add_argument("--metrics", type=int, default=25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'results.sqlite'}"
        _fill(url, args.items, args.metrics)
        got = {}
        for way in ("now", "config", "per row"):
            out = subprocess.run([sys.executable, "-c", CHILD, url, way], check=True, capture_output=True,
                                 text=True).stdout
            got[way] = json.loads(out.strip().splitlines()[-1])
    assert len({r["digest"] for r in got.values()}) == 1, "the ways read different rows"
    print(f"{got['now']['rows']} rows ({args.items} items x {args.metrics} metrics)")
    names = {"now": "configs and details' strings shared", "config": "configs shared",
             "per row": "each row its own"}
    for way, r in got.items():
        print(f"  {names[way]:38s} {r['s']:6.1f} s  peak {r['mb']:7.0f} MB")
    for way in ("config", "per row"):
        print(f"  {names[way]} / now: {got[way]['s'] / got['now']['s']:.2f}x time, "
              f"{got[way]['mb'] / got['now']['mb']:.2f}x memory")


if __name__ == "__main__":
    main()
