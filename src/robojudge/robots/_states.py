"""Reading joint states of real episodes: ``(T, J)`` positions with the joint names, in a spec's order.

Three layouts are read, by suffix:

* ``.npz``: arrays ``joint_names`` ``(J,)`` and ``joint_pos`` ``(T, J)`` (the simulator suite's state
  files have both, so a state file serves as its own joint states);
* ``.csv``: a header row of joint names, then one row of positions per video frame; other columns
  (a time stamp, say) are ignored, and a joint's column may appear only once;
* ``.npy``: a ``(T, J)`` array whose columns are already in the spec's joint order.
"""

from __future__ import annotations

import csv
import difflib
import math
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

JOINT_STATE_SUFFIXES = (".npz", ".csv", ".npy")


def frame_mismatch(rows: int, frames: int | None) -> str | None:
    """The problem of joint states of ``rows`` rows for a video of ``frames`` frames (one row a frame);
    None when they agree or the frame count is unknown."""
    if frames is None or rows == frames:
        return None
    return f"joint_states has {rows} rows, video has {frames} frames (one row per frame of video)"


def _missing(where: str, missing: list[str], names: list[str]) -> ValueError:
    """The error for joints the file lacks, with the closest name the file has for a misspelt one."""
    hints = []
    for j in missing:
        close = difflib.get_close_matches(j, [n for n in names if n], n=1, cutoff=0.8)
        if close:
            hints.append(f"{close[0]!r} for {j!r}?")
    hint = f" (did you mean {', '.join(hints)})" if hints else ""
    return ValueError(f"{where} joint(s) {missing}{hint}; the file has {names}")


def _duplicate(names: list[str], joints: Sequence[str]) -> str | None:
    """The first joint of ``joints`` named twice in ``names``."""
    seen: set[str] = set()
    for n in names:
        if n in seen and n in joints:
            return n
        seen.add(n)
    return None


def _pick(path: Path, names: list[str], columns: np.ndarray, joints: Sequence[str]) -> np.ndarray:
    twice = _duplicate(names, joints)
    if twice is not None:
        raise ValueError(f"{path}: field joint_names: joint {twice!r} is named twice")
    pos = {n: i for i, n in enumerate(names)}
    missing = [j for j in joints if j not in pos]
    if missing:
        raise _missing(f"{path}: no positions for", missing, names)
    return columns[:, [pos[j] for j in joints]]


def _read_csv(path: Path, joints: Sequence[str]) -> np.ndarray:
    with path.open(newline="", encoding="utf-8-sig") as f:  # a BOM, as Windows tools write
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path}: empty file; expected a header row of joint names")
    header = [h.strip() for h in rows[0]]
    twice = _duplicate(header, joints)
    if twice is not None:
        raise ValueError(f"{path}: line 1: column {twice!r} appears twice in the header")
    keep = {n: i for i, n in enumerate(header) if n in set(joints)}
    missing = [j for j in joints if j not in keep]
    if missing:
        raise _missing(f"{path}: line 1: no column for", missing, header)
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
        ValueError: naming the file (and line and column for CSV), for an unknown suffix, a file that is
            empty or not of its format, a missing joint (with the closest name the file has), a joint
            named twice, a wrong shape, no rows, or a value that is not a finite number.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in JOINT_STATE_SUFFIXES:
        raise ValueError(
            f"{p}: unknown joint-state format {p.suffix!r}; expected one of {', '.join(JOINT_STATE_SUFFIXES)}"
        )
    if not p.is_file():
        raise ValueError(f"{p}: joint-state file not found")
    try:
        if suffix == ".csv":
            q = _read_csv(p, joints)
        elif suffix == ".npy":
            q = np.load(p, allow_pickle=False)
            if q.ndim != 2 or q.shape[1] != len(joints):
                want = f"({len(joints)} columns, in the order {list(joints)})"
                raise ValueError(f"{p}: expected a (frames, {len(joints)}) array {want}; got {q.shape}")
        else:
            with np.load(p, allow_pickle=False) as z:
                for key in ("joint_names", "joint_pos"):
                    if key not in z:
                        raise ValueError(f"{p}: no array {key!r} (has {sorted(z.files)})")
                names = [str(n) for n in z["joint_names"]]
                cols = z["joint_pos"]
            if cols.ndim != 2 or cols.shape[1] != len(names):
                raise ValueError(
                    f"{p}: joint_pos is {cols.shape}; expected (frames, {len(names)}), one column per "
                    "joint_names"
                )
            q = _pick(p, names, cols, joints)
    except (EOFError, OSError, zipfile.BadZipFile) as exc:
        # numpy raises EOFError for an empty file (which click would turn into a bare "Aborted.")
        raise ValueError(f"{p}: empty or not a valid {suffix} ({type(exc).__name__}: {exc})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not a text file of comma-separated values") from None
    except ValueError as exc:
        if str(exc).startswith(f"{p}:"):
            raise
        raise ValueError(f"{p}: empty or not a valid {suffix} ({exc})") from None
    try:
        q = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{p}: joint positions are not numbers (dtype {q.dtype})") from None
    if not len(q):
        raise ValueError(f"{p}: no rows of joint positions; expected one per frame of the video")
    if not np.all(np.isfinite(q)):
        t, j = np.argwhere(~np.isfinite(q))[0]
        raise ValueError(f"{p}: frame {t}: joint {joints[j]!r} is not finite")
    return q
