"""Whether a reader recognises its robot: its confidence on its own robot's videos against other robots' and
robot-free ones, each as a share of its confidence on its references (``robojudge.kiva.CONFIDENCE_RATIO``).

For each robot's reader (``READERS/ROBOT/READER_NAME``) and the suites under ``--root`` (one folder per
robot, with ``reference/`` and ``videos/``), every video is read and its confidence
(``robojudge.kiva.reader_confidence``) divided by the median over the robot's references, as
``robojudge kiva calibrate`` stores it. Rows:

* ``rollouts``: every rollout of the robot's own suite (planted failures included);
* ``blurred`` and ``half-size``: the same rollouts with a Gaussian blur of 1 px, and shrunk to half their
  size and back (stand-ins for a generator that draws softer pictures than the simulator);
* each other robot: its first ``--per-robot`` references;
* ``textured pan`` and ``uniform noise``, the robot-free clips ``robojudge kiva calibrate`` reads
  (``robojudge.kiva._reader.robot_free_clips``), and ``shuffled`` (the robot's first reference, frames in
  random order), all in the first reference's shape.

With ``--real MANIFEST``, also the first ``--per-generator`` videos of each generator of a manifest of
real robot videos (``scripts/real_videos_motion.py build``), a row per generator.

A video is unscored when its share is below ``CONFIDENCE_RATIO``; the last column counts those. Used for
docs/kiva.md, "A robot the reader does not recognise". Rerun (about 15 minutes on 2 cores; 30 with
``--real``)::

    .venv/bin/python scripts/kiva_recognition_check.py --root runs/kiva_hold2 \\
        --readers runs/kiva_val18 --reader-name reader-hm01h2fail-r4-s2 \\
        --real runs/real_videos/suite.jsonl --per-generator 8
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

ROBOTS = ("fetch", "adroit", "aloha", "franka")


def blurred(frames: np.ndarray) -> np.ndarray:
    """Each frame blurred by a Gaussian of 1 px standard deviation."""
    import cv2

    return np.stack([cv2.GaussianBlur(f, (0, 0), 1.0) for f in frames])


def half_size(frames: np.ndarray) -> np.ndarray:
    """Each frame shrunk to half its width and height (area averaging) and brought back (bilinear)."""
    import cv2

    h, w = frames.shape[1:3]
    return np.stack([cv2.resize(cv2.resize(f, (w // 2, h // 2), interpolation=cv2.INTER_AREA), (w, h),
                                interpolation=cv2.INTER_LINEAR) for f in frames])


def robot_free(like: np.ndarray, seed: int = 0) -> dict[str, np.ndarray]:
    """The clips without a robot that calibration reads (``robojudge.kiva._reader.robot_free_clips``:
    ``textured pan``, ``uniform noise``) in ``like``'s shape, and ``like`` itself with its frames shuffled."""
    from robojudge.kiva._reader import robot_free_clips

    shuffled = like[np.random.default_rng(seed).permutation(len(like))]
    return {**robot_free_clips(like.shape, seed), "shuffled": shuffled}


def by_generator(manifest: Path, per_generator: int) -> dict[str, list[Path]]:
    """The first ``per_generator`` videos of each generator of a manifest (``generator`` field), with
    paths made absolute against the manifest's folder."""
    import json

    out: dict[str, list[Path]] = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        videos = out.setdefault(f"real: {row.get('generator', '?')}", [])
        if len(videos) < per_generator:
            videos.append((manifest.parent / row["video"]).resolve())
    return out


def table(rows: Sequence[tuple[str, str, list[float]]], ratio: float) -> list[str]:
    """Markdown rows ``| reader | videos | n | lowest-highest share | unscored |``."""
    out = ["| reader | videos | n | share of the references' confidence | unscored |",
           "|---|---|---|---|---|"]
    for reader, what, values in rows:
        lo, hi = min(values), max(values)
        span = f"{lo:.2f}" if len(values) == 1 else f"{lo:.2f}-{hi:.2f}"
        out.append(f"| {reader} | {what} | {len(values)} | {span} | {sum(v < ratio for v in values)} |")
    return out


def check(readers: Path, reader_name: str, root: Path, robots: Sequence[str], per_robot: int,
          log: Callable[[str], None] = print, extra: Mapping[str, Sequence[Path]] | None = None,
          ) -> list[tuple[str, str, list[float]]]:
    """``(reader robot, videos, shares)`` rows as described in the module docstring; ``extra``: more
    videos by label (``--real``), a row each per reader."""
    from robojudge.kiva import read_frames, reader_confidence
    from robojudge.kiva._reader import load_reader
    from robojudge.video import sample_frames

    def frames_of(video: Path) -> tuple[np.ndarray, float]:
        s = sample_frames(video, fps=None, max_frames=None)
        return s.frames, float(s.source_fps)

    rows: list[tuple[str, str, list[float]]] = []
    for robot in robots:
        reader = load_reader(readers / robot / reader_name)

        def confidence(frames: np.ndarray, fps: float, reader=reader) -> float:  # noqa: ANN001
            return reader_confidence(read_frames(reader, frames, fps))

        refs = sorted((root / robot / "reference").glob("*.mp4"))
        base = float(np.median([confidence(*frames_of(v)) for v in refs]))
        log(f"{robot}: references' confidence {base:.3f} ({len(refs)} videos)")
        own: dict[str, list[float]] = {"rollouts": [], "blurred": [], "half-size": []}
        for video in sorted((root / robot / "videos").glob("*.mp4")):
            frames, fps = frames_of(video)
            own["rollouts"].append(confidence(frames, fps) / base)
            own["blurred"].append(confidence(blurred(frames), fps) / base)
            own["half-size"].append(confidence(half_size(frames), fps) / base)
        rows += [(robot, what, values) for what, values in own.items()]
        for other in robots:
            if other != robot:
                videos = sorted((root / other / "reference").glob("*.mp4"))[:per_robot]
                rows.append((robot, other, [confidence(*frames_of(v)) / base for v in videos]))
        first, fps = frames_of(refs[0])
        for what, frames in robot_free(first).items():
            rows.append((robot, what, [confidence(frames, fps) / base]))
        for label, videos in (extra or {}).items():
            rows.append((robot, label, [confidence(*frames_of(v)) / base for v in videos]))
        for row in rows[-(len(robots) + 5 + len(extra or {})):]:
            log(f"  {row[1]}: {min(row[2]):.2f}-{max(row[2]):.2f}")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    from robojudge.kiva import CONFIDENCE_RATIO

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True, help="suites folder, one sub-folder per robot")
    ap.add_argument("--readers", type=Path, required=True, help="folder holding ROBOT/READER_NAME")
    ap.add_argument("--reader-name", required=True)
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--per-robot", type=int, default=4, help="references read of each other robot")
    ap.add_argument("--real", type=Path, default=None,
                    help="a manifest of real robot videos (scripts/real_videos_motion.py build): the first "
                    "--per-generator videos of each generator are read by every reader too")
    ap.add_argument("--per-generator", type=int, default=8)
    args = ap.parse_args(argv)
    extra = None if args.real is None else by_generator(args.real, args.per_generator)
    rows = check(args.readers, args.reader_name, args.root, args.robots.split(","), args.per_robot,
                 extra=extra)
    print("\n".join(table(rows, CONFIDENCE_RATIO)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
