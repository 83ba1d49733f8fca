"""How far KIVA's still-robot bound (``robojudge.kiva.STILL_MOTION``) sits from what readers read.

Two sides of the bound, in shares of the image diagonal (``robojudge.kiva.robot_motion``):

* still: a reader reads pictures of a robot that does not move: frames 0 and the middle one of the first
  three reference videos, each repeated 48 times with Gaussian noise of ``--noise`` grey levels added to
  every frame (noise above a grey level or so keeps every frame from being held);
* moving: every reference and rollout of the suites under ``--root``, from the reads cached by
  ``scripts/kiva_read_levers.py ensemble`` (``_tracks_<reader>.pkl``), read and on true keypoints.

Used for docs/kiva.md, "Frozen and still videos". Rerun::

    .venv/bin/python scripts/kiva_still_check.py --root runs/kiva_hold2 \\
        --reader-name reader-hm01h2fail-r4-s2 --readers runs/kiva_val18
"""

from __future__ import annotations

import argparse
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROBOTS = ("fetch", "adroit", "aloha", "franka")


def still_frames(frame: np.ndarray, n: int, noise: float, seed: int = 0) -> np.ndarray:
    """``frame`` repeated ``n`` times with Gaussian noise of ``noise`` grey levels on every copy."""
    rng = np.random.default_rng(seed)
    still = np.repeat(frame[None].astype(np.float32), n, axis=0)
    return np.clip(np.rint(still + rng.normal(0.0, noise, still.shape)), 0, 255).astype(np.uint8)


def suite_motion(reads: dict[str, Any]) -> list[tuple[float, float, str]]:
    """``(read, true, name)`` motion of every reference and rollout in a cache of reads, smallest first."""
    from robojudge.kiva import robot_motion

    out = []
    for group in ("refs", "items"):
        for name, d in reads[group].items():
            diag = float(np.hypot(d["w"], d["h"]))
            out.append((robot_motion(d["pos"], d["vis"], diag),
                        robot_motion(d["true_pos"], d["true_vis"], diag), str(name)))
    return sorted(out)


def still_motion(reader_dir: Path, videos: Sequence[Path], noises: Sequence[float]
                 ) -> list[tuple[str, float]]:
    """``(label, motion)`` of the reader's reads of still pictures made from ``videos``."""
    from robojudge.kiva import held_frames, read_frames, robot_motion
    from robojudge.kiva._reader import load_reader
    from robojudge.video import sample_frames

    reader = load_reader(reader_dir)
    out = []
    for video in videos:
        frames = sample_frames(video, fps=None, max_frames=None).frames
        for t in (0, len(frames) // 2):
            for noise in noises:
                still = still_frames(frames[t], 48, noise)
                assert not held_frames(still)[1:].any(), "noise too low: frames are held"
                tracks = read_frames(reader, still, 30.0)
                out.append((f"{video.name} frame {t} noise {noise:g}",
                            robot_motion(tracks.positions, tracks.visible, tracks.diagonal)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="suites folder, one sub-folder per robot")
    ap.add_argument("--reader-name", required=True, help="reader folder name whose reads are cached")
    ap.add_argument("--readers", type=Path, required=True, help="folder holding ROBOT/READER_NAME")
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--noise", type=float, action="append", default=None)
    args = ap.parse_args(argv)
    noises = args.noise or [2.0, 5.0]
    for robot in args.robots.split(","):
        with open(args.root / robot / f"_tracks_{args.reader_name}.pkl", "rb") as f:
            rows = suite_motion(pickle.load(f))
        read, true, name = rows[0]
        print(f"{robot}: {len(rows)} clips; least motion read {read:.4f} ({name}), "
              f"true {min(r[1] for r in rows):.4f}", flush=True)
        refs = sorted((args.root / robot / "reference").glob("*.mp4"))[:3]
        motions = still_motion(args.readers / robot / args.reader_name, refs, noises)
        print(f"  still pictures: motion {min(m for _, m in motions):.4f}-{max(m for _, m in motions):.4f} "
              f"over {len(motions)} reads", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
