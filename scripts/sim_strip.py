"""Render a strip of frames from a faithful and a failed sim rollout to a PNG.

Usage: MUJOCO_GL=egl .venv/bin/python scripts/sim_strip.py [OUT.png]   (default docs/img/sim_strip.png)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")


def main(out: Path) -> None:
    from robojudge.suite import load_suite
    from robojudge.suite.sim import make_sim_suite
    from robojudge.video import sample_frames

    with tempfile.TemporaryDirectory() as tmp:
        manifest = make_sim_suite(
            tmp, seed=1, episodes=2, size=160, profiles=["oracle", "glitchy"], workers=1
        )
        rows = []
        for item in load_suite(manifest):
            frames = sample_frames(item.video, fps=None, max_frames=None).frames
            picks = np.linspace(0, len(frames) - 1, 6).round().astype(int)
            strip = np.concatenate([frames[i] for i in picks], axis=1)
            label = f"{item.item_id}  PA {item.labels.pa} IA {item.labels.ia}"  # type: ignore[union-attr]
            fails = ", ".join(f["type"] for f in item.meta["failures"]) or "faithful"
            bar = np.full((22, strip.shape[1], 3), 255, np.uint8)
            cv2.putText(bar, f"{label}: {fails}", (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
            rows.append(np.concatenate([bar, strip], axis=0))
    img = np.concatenate(rows, axis=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    print(f"wrote {out} ({out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/img/sim_strip.png"))
