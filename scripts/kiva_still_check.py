"""How far KIVA's still-robot bound (``robojudge.kiva.STILL_MOTION``) sits from what readers read.

Two sides of the bound, in shares of the image diagonal (``robojudge.kiva.robot_motion``):

* still: a reader reads pictures of a robot that does not move: frames 0 and the middle one of the first
  three reference videos, each repeated 48 times with Gaussian noise of ``--noise`` grey levels added to
  every frame (noise above a grey level or so keeps every frame from being held);
* moving: every reference and rollout of the suites under ``--root``, from the reads cached by
  ``scripts/kiva_read_levers.py ensemble`` (``_tracks_<reader>.pkl``), read and on true keypoints.

With ``--untrackable ROBOT``, also what ``kiva`` gives pictures that robot's reader cannot follow (uniform
noise, a near-black picture with noise, a reference with its frames shuffled) and the same reference in
order, with a copy of the reader calibrated on the suite's references.

Used for docs/kiva.md, "Frozen and still videos". Rerun::

    .venv/bin/python scripts/kiva_still_check.py --root runs/kiva_hold2 \\
        --reader-name reader-hm01h2fail-r4-s2 --readers runs/kiva_val18 --untrackable adroit
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kiva_read_levers import _load, reads_cache  # noqa: E402  (the cache `ensemble` wrote, read as it reads it)

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


def untrackable(reader_dir: Path, manifest: Path, reference: Path) -> dict[str, tuple[float, str | None]]:
    """``kiva`` (value, unscored reason) of clips a reader cannot follow and of ``reference`` itself, scored
    with a copy of the reader calibrated on ``manifest``'s references (the reader itself is not touched)."""
    import shutil
    import tempfile

    from robojudge.kiva import calibrate_reader
    from robojudge.metrics import get_metric
    from robojudge.suite import Item
    from robojudge.video import sample_frames, write_video

    sampled = sample_frames(reference, fps=None, max_frames=None)
    ref, fps = sampled.frames, float(sampled.source_fps)
    rng = np.random.default_rng(0)
    clips = {"uniform noise": rng.integers(0, 256, ref.shape, dtype=np.uint8),
             "near-black with noise": np.clip(rng.normal(10, 3, ref.shape), 0, 255).astype(np.uint8),
             "black": np.zeros_like(ref),
             "reference, frames shuffled": ref[rng.permutation(len(ref))],
             "reference": ref}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "reader"
        shutil.copytree(reader_dir, copy)
        calibrate_reader(copy, manifest)
        spec = get_metric("kiva")
        cfg = spec.make_config({"reader": str(copy)})
        for k, (name, frames) in enumerate(clips.items()):
            write_video(Path(tmp) / f"clip{k}", frames, fps=fps)  # PNG frames: lossless
            score = spec.compute(Item(item_id=f"clip{k}", video=str(Path(tmp) / f"clip{k}")), cfg)
            out[name] = (score.value, score.details.get("unscored_reason"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="suites folder, one sub-folder per robot")
    ap.add_argument("--reader-name", required=True, help="reader folder name whose reads are cached")
    ap.add_argument("--readers", type=Path, required=True, help="folder holding ROBOT/READER_NAME")
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--noise", type=float, action="append", default=None)
    ap.add_argument("--untrackable", choices=ROBOTS, default=None,
                    help="also score clips this robot's reader cannot follow")
    args = ap.parse_args(argv)
    noises = args.noise or [2.0, 5.0]
    for robot in args.robots.split(","):
        rows = suite_motion(_load(reads_cache(args.root / robot, args.reader_name)))
        read, true, name = rows[0]
        print(f"{robot}: {len(rows)} clips; least motion read {read:.4f} ({name}), "
              f"true {min(r[1] for r in rows):.4f}", flush=True)
        refs = sorted((args.root / robot / "reference").glob("*.mp4"))[:3]
        motions = still_motion(args.readers / robot / args.reader_name, refs, noises)
        print(f"  still pictures: motion {min(m for _, m in motions):.4f}-{max(m for _, m in motions):.4f} "
              f"over {len(motions)} reads", flush=True)
    if args.untrackable:
        folder = args.root / args.untrackable
        reference = sorted((folder / "reference").glob("*.mp4"))[0]
        for name, (value, why) in untrackable(args.readers / args.untrackable / args.reader_name,
                                              folder / "suite.jsonl", reference).items():
            print(f"{args.untrackable} {name}: kiva {value:.1f}" + (f" ({why})" if why else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
