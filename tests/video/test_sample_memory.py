"""Sampling fills one array for the selection instead of keeping every frame to stack them at the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from _videogen import naive_decode, textured_clip

from robojudge.video import sample_frames, write_video

# Run in a fresh process: its peak resident memory grows by what sampling the clip holds at once.
_PEAK = """
import sys
from pathlib import Path
from robojudge.video import sample_frames

def status(key):
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith(key))
    return int(line.split()[1]) * 1024

sample_frames(sys.argv[2], fps=None, max_frames=None)  # imports and codec set-up before measuring
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) restarts from the current size
before = status("VmRSS:")
frames = sample_frames(sys.argv[1], fps=None, max_frames=None).frames
print((status("VmHWM:") - before) / frames.nbytes)
"""


def test_sampling_holds_the_clip_once(tmp_path: Path) -> None:
    """Peak memory grows by about the frames' own bytes (a list of frames stacked at the end held the
    clip twice, the second copy's memory touched fresh: about 7% of the weights-free set's CPU time on
    an 81-frame 720p clip). The frames are the decoder's, bit for bit, in order."""
    clip, small = tmp_path / "clip.mp4", tmp_path / "small.mp4"
    write_video(clip, textured_clip(40, width=640, height=360), fps=24)  # 28 MB of RGB
    write_video(small, textured_clip(3, width=640, height=360), fps=24)
    out = subprocess.run([sys.executable, "-c", _PEAK, str(clip), str(small)], capture_output=True, text=True,
                         check=True)
    assert float(out.stdout) < 1.5, f"peak grew by {float(out.stdout):.2f}x the frames' bytes"
    got = sample_frames(clip, fps=None, max_frames=None).frames
    assert got.flags.c_contiguous
    assert np.array_equal(got, np.stack(naive_decode(clip)))

