"""Reading joint states of real episodes: ``(T, J)`` positions with the joint names, in a spec's order.

Three layouts are read, by suffix:

* ``.npz``: arrays ``joint_names`` ``(J,)`` and ``joint_pos`` ``(T, J)`` (the simulator suite's state
  files have both, so a state file serves as its own joint states);
* ``.csv``: a header row of joint names, then one row of positions per video frame; other columns
  (a time stamp, say) are ignored;
* ``.npy``: a ``(T, J)`` array whose columns are already in the spec's joint order.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

JOINT_STATE_SUFFIXES = (".npz", ".csv", ".npy")


def _pick(path: Path, names: list[str], columns: np.ndarray, joints: Sequence[str]) -> np.ndarray:
    pos = {n: i for i, n in enumerate(names)}
    missing = [j for j in joints if j not in pos]
    if missing:
        raise ValueError(f"{path}: no positions for joint(s) {missing}; the file has {names}")
    return columns[:, [pos[j] for j in joints]]


def _read_csv(path: Path, joints: Sequence[str]) -> np.ndarray:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty file; expected a header row of joint names")
    header = [h.strip() for h in rows[0]]
    keep = {n: i for i, n in enumerate(header) if n in set(joints)}
    missing = [j for j in joints if j not in keep]
    if missing:
        raise ValueError(f"{path}: line 1: no column for joint(s) {missing}; the header has {header}")
    out = np.empty((len(rows) - 1, len(joints)))
    for r, row in enumerate(rows[1:]):
        for c, j in enumerate(joints):
            cell = row[keep[j]].strip() if keep[j] < len(row) else ""
            try:
                out[r, c] = float(cell)
            except ValueError:
                raise ValueError(f"{path}: line {r + 2}: column {j!r}: {cell!r} is not a number") from None
            if not math.isfinite(out[r, c]):
                raise ValueError(f"{path}: line {r + 2}: column {j!r}: {cell!r} is not finite")
    return out


def load_joint_states(path: str | Path, joints: Sequence[str]) -> np.ndarray:
    """``(T, J)`` float64 joint positions in the order of ``joints`` (a spec's ``joints``).

    Raises:
        ValueError: naming the file (and line and column for CSV), for an unknown suffix, a missing
            joint, a wrong shape or a value that is not a finite number.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in JOINT_STATE_SUFFIXES:
        raise ValueError(
            f"{p}: unknown joint-state format {p.suffix!r}; expected one of {', '.join(JOINT_STATE_SUFFIXES)}"
        )
    if not p.is_file():
        raise ValueError(f"{p}: joint-state file not found")
    if suffix == ".csv":
        return _read_csv(p, joints)
    if suffix == ".npy":
        q = np.load(p, allow_pickle=False)
        if q.ndim != 2 or q.shape[1] != len(joints):
            raise ValueError(
                f"{p}: expected a (frames, {len(joints)}) array in the order {list(joints)}; got {q.shape}"
            )
    else:
        with np.load(p, allow_pickle=False) as z:
            for key in ("joint_names", "joint_pos"):
                if key not in z:
                    raise ValueError(f"{p}: no array {key!r} (has {sorted(z.files)})")
            names = [str(n) for n in z["joint_names"]]
            cols = z["joint_pos"]
        if cols.ndim != 2 or cols.shape[1] != len(names):
            raise ValueError(
                f"{p}: joint_pos is {cols.shape}; expected (frames, {len(names)}), one column per joint_names"
            )
        q = _pick(p, names, cols, joints)
    q = np.asarray(q, dtype=np.float64)
    if not np.all(np.isfinite(q)):
        t, j = np.argwhere(~np.isfinite(q))[0]
        raise ValueError(f"{p}: frame {t}: joint {joints[j]!r} is not finite")
    return q
