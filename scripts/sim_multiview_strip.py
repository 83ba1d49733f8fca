"""Render docs/img/sim_multiview.png: each planted multi-view failure beside the clean view it replaces.

One ADROIT episode, three views; a profile per failure type at severity 0.8 (each with its own random
stream, so its own failing view and window) and a clean profile that never fails. Each column is one
type, headed by its name, the failing view and the frame shown: top, that view's frame in the middle of
the failure's window as the clean rollout shows it; bottom, as the failing rollout shows it. Rerun::

    MUJOCO_GL=egl .venv/bin/python scripts/sim_multiview_strip.py docs/img/sim_multiview.png
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path


def main(out: str) -> None:
    import numpy as np
    from PIL import Image, ImageDraw

    from robojudge.suite.sim import MULTIVIEW_TYPES, Profile, make_sim_suite
    from robojudge.video import sample_frames

    clean = Profile("clean", 0.0, (1, 1), (0.8, 0.8), ("view_lag",), 0.0, (0.1, 0.1), (), "never fails")
    profiles = [clean] + [Profile(k, 1.0, (1, 1), (0.8, 0.8), (k,), 0.0, (0.1, 0.1), (), k)
                          for k in MULTIVIEW_TYPES]
    with tempfile.TemporaryDirectory() as tmp:
        manifest = make_sim_suite(tmp, seed=1, episodes=1, views=3, size=160, profiles=profiles,
                                  scenes=["relocate"], workers=1)
        rows = {r["generator"]: r for r in map(json.loads, manifest.read_text().splitlines())}

        def frame(gen: str, cam: str, t: int) -> np.ndarray:
            path = str(Path(tmp) / rows[gen]["views"][cam])
            return sample_frames(path, fps=None, max_frames=None).frames[t]

        cols = []
        for kind in MULTIVIEW_TYPES:
            (f,) = rows[kind]["meta"]["failures"]
            cam = f["detail"]["view"]
            t = (f["start"] + f["stop"]) // 2 if kind != "view_lag" else 30
            pair = np.concatenate([frame("clean", cam, t), frame(kind, cam, t)], axis=0)
            band = Image.new("RGB", (pair.shape[1], 16), (255, 255, 255))
            ImageDraw.Draw(band).text((4, 2), f"{kind} ({cam}, t={t})", fill=(0, 0, 0))
            cols.append(np.concatenate([np.asarray(band), pair], axis=0))
    Image.fromarray(np.concatenate(cols, axis=1)).save(out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/img/sim_multiview.png")
