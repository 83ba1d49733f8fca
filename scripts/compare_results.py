"""Compare two exported results.csv files, ignoring what changes on every run (timing, creation time).

    .venv/bin/python scripts/compare_results.py BEFORE.csv AFTER.csv

Rows are matched by (item_id, metric, config_hash); every other column but ``duration_s`` and
``created_at`` must be equal (NaN equals NaN). Exits 0 when they are, 1 with a listing otherwise. Used
to check that a refactor leaves the demo's results untouched.
"""

from __future__ import annotations

import sys

import pandas as pd

KEY = ["item_id", "metric", "config_hash"]
VOLATILE = {"duration_s", "created_at"}


def differences(before: pd.DataFrame, after: pd.DataFrame) -> list[str]:
    """Lines describing each difference; empty when the two tables hold the same results."""
    out: list[str] = []
    if sorted(before.columns) != sorted(after.columns):
        out.append(f"columns differ: {sorted(before.columns)} vs {sorted(after.columns)}")
        return out
    merged = before.merge(after, on=KEY, how="outer", suffixes=("_before", "_after"), indicator=True)
    for side, label in (("left_only", "only before"), ("right_only", "only after")):
        for _, row in merged[merged["_merge"] == side].iterrows():
            out.append(f"{label}: {tuple(row[k] for k in KEY)}")
    both = merged[merged["_merge"] == "both"]
    for col in sorted(set(before.columns) - set(KEY) - VOLATILE):
        a, b = both[f"{col}_before"], both[f"{col}_after"]
        differ = ~((a == b) | (a.isna() & b.isna()))
        for _, row in both[differ].iterrows():
            where = tuple(row[k] for k in KEY)
            out.append(f"{col} of {where}: {row[f'{col}_before']!r} -> {row[f'{col}_after']!r}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (pd.read_csv(p, keep_default_na=True) for p in argv)
    found = differences(before, after)
    for line in found[:200]:
        print(line)
    print(f"{len(before)} and {len(after)} rows; {len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
