"""A small labelled suite for the training tests: 8 clips from 2 sources, 2 generators per clip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from robojudge.video import write_video

SOURCES = ("droid", "egodex")
GENERATORS = ("gen_a", "gen_b")
N_CLIPS = 8  # 4 per source


def _video(path: Path, seed: int, frames: int = 6) -> None:
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 255, size=(frames, 32, 40, 3), dtype=np.uint8)
    write_video(path, arr, fps=4.0)


def write_labelled_suite(root: Path, *, evidence: bool = True) -> Path:
    """Write videos and ``suite.jsonl`` under ``root``; returns the manifest path.

    Clip ``c{k}`` comes from source ``SOURCES[k % 2]``; its two rollouts are ``c{k}-gen_a`` and
    ``c{k}-gen_b``. PA is ``1 + (k + g) % 5`` and IA ``5 - (k % 5)``; even clips carry evidence notes,
    and the last item has no IA label.
    """
    (root / "videos").mkdir(parents=True, exist_ok=True)
    rows = []
    for k in range(N_CLIPS):
        for g, gen in enumerate(GENERATORS):
            item_id = f"c{k}-{gen}"
            video = root / "videos" / f"{item_id}.mp4"
            _video(video, seed=10 * k + g)
            labels: dict[str, object] = {"pa": 1 + (k + g) % 5, "ia": 5 - (k % 5)}
            if evidence and k % 2 == 0:
                labels["evidence"] = f"the gripper of {item_id} passes through the cup"
            rows.append({"item_id": item_id, "video": f"videos/{item_id}.mp4",
                         "instruction": f"put the red cup {k} on the shelf", "clip_id": f"c{k}",
                         "source": SOURCES[k % 2], "generator": gen, "labels": labels})
    rows[-1]["labels"] = {"pa": 2}
    manifest = root / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest
