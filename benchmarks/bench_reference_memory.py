"""Peak memory of ``iq1_psnr`` for a short clip against a long reference, and of the full reference read.

Run with::

    .venv/bin/python benchmarks/bench_reference_memory.py [--seconds 60] [--size 640x480]
        [--video GEN.mp4 --reference REF.mp4]

Without ``--video``/``--reference`` it writes a 1-s clip and a ``--seconds``-long reference (30 fps,
textured, moving) of ``--size``. Each of two modes runs in a fresh process, so its peak resident
memory (``ru_maxrss``) is its own:

* ``whole``: the pairing as it was until 2026-12-07, every reference frame at the common rate read
  (``sample_frames(reference, fps=rate, max_frames=None)``), then PSNR over the clip's frames and
  0 dB for each reference frame it does not reach;
* ``head``: ``iq1_psnr`` as it is now, which reads only the reference frames the clip is paired with.

Printed per mode: the peak RSS, the RSS of the interpreter with robojudge imported (before reading),
the time, the value and the frames compared/expected; then the ratio of the peaks above the baseline.
The two values must agree: the pairing is the same, only the frames read differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
import numpy as np
from robojudge.metrics import functional as F
from robojudge.metrics.robophys.reference import paired_sampling
from robojudge.run._score import MetricRequest, compute_metric
from robojudge.suite import Item
from robojudge.video import sample_frames

mode, video, reference = sys.argv[1:4]
item = Item(item_id="a", video=video, reference_video=reference)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "whole":
    sampling = paired_sampling(item, None)
    ref = sample_frames(reference, fps=sampling["fps"], max_frames=None).frames
    gen = sample_frames(video, **sampling).frames
    n = min(len(ref), len(gen))
    per = [F.psnr(g, r) for g, r in zip(gen[:n], ref[:n])] + [0.0] * (len(ref) - n)
    value, frames, expected = float(np.mean(per)), n, len(ref)
else:
    row = compute_metric(item, MetricRequest.build("iq1_psnr"))
    if row.status != "ok":
        raise SystemExit(row.error)
    value, frames, expected = row.value, row.details["frames"], row.details["frames_expected"]
took = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"mode": mode, "peak_mb": peak / 1024, "base_mb": base / 1024, "seconds": took,
                  "value": value, "frames": frames, "frames_expected": expected}))
"""


_WRITER = r"""
import sys
from pathlib import Path
import numpy as np
from robojudge.video import write_video

folder, seconds, width, height = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
canvas = np.random.default_rng(0).integers(0, 256, (height + 64, width + 64, 3), dtype=np.uint8)
n = round(30 * seconds)
frames = [canvas[i % 64:i % 64 + height, (3 * i) % 64:(3 * i) % 64 + width] for i in range(n)]
write_video(folder / "reference.mp4", np.stack(frames), fps=30)
write_video(folder / "video.mp4", np.stack(frames[:30]), fps=30)
"""


def _write_clips(folder: Path, seconds: float, width: int, height: int) -> tuple[Path, Path]:
    """A 1-s clip and a ``seconds``-long reference of the same moving texture, written by a process of
    their own: a child started from a parent that held the frames would start from its peak RSS."""
    subprocess.run([sys.executable, "-c", _WRITER, str(folder), str(seconds), str(width), str(height)],
                   check=True)
    return folder / "video.mp4", folder / "reference.mp4"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the written reference")
    parser.add_argument("--size", default="640x480", help="WxH of the written clips")
    parser.add_argument("--video", type=Path, help="a generated clip to use instead of the written one")
    parser.add_argument("--reference", type=Path, help="its reference video")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.video and args.reference:
            video, reference = args.video, args.reference
        else:
            width, height = (int(x) for x in args.size.split("x"))
            video, reference = _write_clips(Path(tmp), args.seconds, width, height)
        runs = {}
        env = {**os.environ, "ROBOJUDGE_FRAME_MEMORY_GIB": "0"}  # no refusal: measure the whole read too
        for mode in ("whole", "head"):
            out = subprocess.run([sys.executable, "-c", _CHILD, mode, str(video), str(reference)],
                                 capture_output=True, text=True, check=True, env=env)
            runs[mode] = json.loads(out.stdout.strip().splitlines()[-1])
            r = runs[mode]
            print(f"{mode:5}: peak {r['peak_mb']:7.0f} MB (interpreter {r['base_mb']:.0f} MB), "
                  f"{r['seconds']:6.1f} s, PSNR {r['value']:.4f} dB over {r['frames']} of "
                  f"{r['frames_expected']} frames")
    above = {m: r["peak_mb"] - r["base_mb"] for m, r in runs.items()}
    print(f"peak above the interpreter: whole {above['whole']:.0f} MB, head {above['head']:.0f} MB, "
          f"ratio {above['whole'] / max(above['head'], 1e-9):.1f}x; "
          f"same value: {runs['whole']['value'] == runs['head']['value']}")


if __name__ == "__main__":
    main()
