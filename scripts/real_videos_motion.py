"""The low-motion rule of the report, checked on real robot videos (docs/sensitivity.md).

Three public project repositories hold the clips (fetched snapshots: bare git directories). ``build``
copies their videos out of the snapshots, cuts single-view clips, adds frozen copies of three real
episodes and writes ``OUT/suite.jsonl``; ``summary`` reads ``mq_dynamic_degree`` and ``mq_flow_score``
from the run's store and prints, per generator, how many clips each candidate rule flags::

    .venv/bin/python scripts/real_videos_motion.py build --mirrors /work/.mirror --out runs/real_videos
    (cd runs/real_videos && ../../.venv/bin/robojudge score suite.jsonl \\
        -m mq_dynamic_degree,mq_flow_score --run-dir run)
    .venv/bin/python scripts/real_videos_motion.py summary --out runs/real_videos

The videos are not redistributed: none of the three repositories states a licence.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

#: (snapshot folder under --mirrors, path prefix in HEAD, part of the path dropped, local folder, suffix)
SOURCES = (
    ("sellerbubble+ctrl-world-policy-rollouts", "media/matched_length/", "media/", "ctrlworld", ".mp4"),
    ("sellerbubble+ctrl-world-policy-rollouts", "media/long_horizon/", "media/", "ctrlworld", ".mp4"),
    ("KwaiVGI+RoboMaster", "demos/", "demos/", "robomaster", ".mp4"),
    ("genie-envisioner+genie-envisioner.github.io", "public/carousel/manipulation/",
     "public/carousel/manipulation/", "genie", ".webm"),
)
FLOW_LOW = 0.0531


def _extract(mirrors: Path, raw: Path) -> None:
    for repo, prefix, drop, folder, suffix in SOURCES:
        git = ["git", "--git-dir", str(mirrors / repo / "repo")]
        names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", prefix], check=True,
                               capture_output=True, text=True).stdout.split()
        (raw / folder).mkdir(parents=True, exist_ok=True)
        for name in (n for n in names if n.endswith(suffix)):
            out = raw / folder / name[len(drop):].replace("/", "_")
            if not out.exists():
                out.write_bytes(subprocess.run([*git, "show", f"HEAD:{name}"], check=True,
                                               capture_output=True).stdout)


def _read(path: Path) -> tuple[list[np.ndarray], float]:
    import av

    with av.open(str(path)) as c:
        fps = float(c.streams.video[0].average_rate or 0)
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)], fps


def _write(path: Path, frames: list[np.ndarray], fps: float) -> None:
    """H.264 (crf 18, yuv420p) at ``fps`` rounded, cut to even sizes."""
    import av

    h, w = frames[0].shape[:2]
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=round(fps))
        s.width, s.height, s.pix_fmt = w - w % 2, h - h % 2, "yuv420p"
        s.options = {"crf": "18"}
        for f in frames:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(f[: s.height, : s.width]), format="rgb24")
            for packet in s.encode(frame):
                c.mux(packet)
        for packet in s.encode():
            c.mux(packet)


def build(mirrors: Path, out: Path) -> int:
    raw, clips = out / "raw", out / "clips"
    _extract(mirrors, raw)
    clips.mkdir(parents=True, exist_ok=True)
    items: list[dict[str, Any]] = []

    def add(item_id: str, frames: list[np.ndarray], fps: float, **fields: Any) -> None:
        path = clips / f"{item_id}.mp4"
        if not path.exists():
            _write(path, frames, fps)
        items.append({"item_id": item_id, "video": f"clips/{item_id}.mp4", **fields})

    # Ctrl-World page: three 320x192 views side by side; top row the recorded DROID episode, bottom
    # row the world model's policy-in-loop rollout. The left (exterior) view is kept.
    for p in sorted((raw / "ctrlworld").glob("matched_length_*.mp4")):
        frames, fps = _read(p)
        task, n = p.stem.removeprefix("matched_length_").rsplit("_rollout_", 1)
        common = {"source": "droid", "clip_id": f"{task}_{n}", "task": task, "embodiment": "gripper"}
        add(f"droid_real_{task}_{n}", [f[:192, :320] for f in frames], fps, generator="recorded_droid",
            regime="real", **common)
        add(f"ctrlworld_{task}_{n}", [f[192:, :320] for f in frames], fps, generator="ctrl_world",
            regime="world_model", **common)
    for p in sorted((raw / "ctrlworld").glob("long_horizon_*.mp4")):  # prediction only, one row
        frames, fps = _read(p)
        add("ctrlworld_long_" + p.stem.removeprefix("long_horizon_").replace("_rollout", ""),
            [f[:, :320] for f in frames], fps, generator="ctrl_world_long", source="droid",
            task="pickplace_long", regime="world_model", embodiment="gripper")
    seen: set[str] = set()  # RoboMaster's inputs: mostly one photograph with the trajectory drawn as dots
    for p in sorted((raw / "robomaster").glob("*.mp4")):
        digest = hashlib.sha1(p.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            frames, fps = _read(p)
            add(f"robomaster_{p.stem}", frames, fps, generator="robomaster_demo", regime="demo_input")
    for p in sorted((raw / "genie").glob("*.webm")):  # recorded AgiBot G1 episodes
        frames, fps = _read(p)
        add(f"agibot_{p.stem}", frames, fps, generator="recorded_agibot", regime="real",
            embodiment="bimanual")
        if p.stem == "rollout2":  # the same episode at 1280x720 (pixels repeated): flow scales with size
            add("agibot_rollout2_1280x720", [np.repeat(np.repeat(f, 2, 0), 2, 1) for f in frames[:150]], fps,
                generator="recorded_agibot_2x", regime="real", embodiment="bimanual",
                meta={"note": "first 150 frames upscaled 2x (pixel repeat)"})
    for src, n in (("droid_real_pickplace_01", 88), ("robomaster_long_video_bridge1_s1", 37),
                   ("agibot_rollout2", 100)):  # a frozen copy of a real episode: its first frame, held
        frames, fps = _read(clips / f"{src}.mp4")
        add(f"frozen_{src}", [frames[0]] * n, fps, generator="frozen_copy", regime="frozen", meta={"of": src})
    (out / "suite.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    print(f"{len(items)} items in {out / 'suite.jsonl'}")
    return 0


def summary(out: Path) -> int:
    items = {json.loads(line)["item_id"]: json.loads(line) for line in (out / "suite.jsonl").open()}
    con = sqlite3.connect(f"file:{out / 'run' / 'results.sqlite'}?mode=ro", uri=True)
    rows: dict[str, dict[str, Any]] = defaultdict(dict)
    for item, metric, value, details in con.execute(
            "select item_id, metric, value, details from robojudge_results where superseded_at is null "
            "and status = 'ok' and metric in ('mq_dynamic_degree', 'mq_flow_score')"):
        rows[item][metric] = value
        if metric == "mq_dynamic_degree":
            rows[item]["moving"] = json.loads(details or "{}").get("moving_fraction")
    groups: dict[str, list[tuple[str, float, float, float]]] = defaultdict(list)
    for i, r in rows.items():
        if i in items and {"mq_dynamic_degree", "mq_flow_score", "moving"} <= set(r):
            groups[items[i]["generator"]].append((i, r["mq_dynamic_degree"], r["mq_flow_score"], r["moving"]))
    print("| clips | n | dynamic degree 0 | Flow Score < 0.0531 | no moving step | flagged by 'either' | "
          "flagged by 'both' | flagged now (no moving step) | Flow Score min / median / max | "
          "moving steps min / max |")
    print("| --- |" + " ---: |" * 7 + " --- | --- |")
    for g, rs in sorted(groups.items()):
        d0 = [d < 0.5 for _, d, _, _ in rs]
        fl = [f < FLOW_LOW for _, _, f, _ in rs]
        still = [m <= 0 for _, _, _, m in rs]
        flows = [f for _, _, f, _ in rs]
        moving = [m for _, _, _, m in rs]
        print(f"| {g} | {len(rs)} | {sum(d0)} | {sum(fl)} | {sum(still)} | "
              f"{sum(a or b for a, b in zip(d0, fl, strict=True))} | "
              f"{sum(a and b for a, b in zip(d0, fl, strict=True))} | {sum(still)} | "
              f"{min(flows):.3f} / {statistics.median(flows):.3f} / {max(flows):.3f} | "
              f"{min(moving):.2f} / {max(moving):.2f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("step", choices=["build", "summary"])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="fetched snapshots")
    parser.add_argument("--out", type=Path, default=Path("runs/real_videos"))
    args = parser.parse_args(argv)
    return build(args.mirrors, args.out) if args.step == "build" else summary(args.out)


if __name__ == "__main__":
    sys.exit(main())
