"""The weights-free video metrics give the same value, bit for bit, in separate fresh processes.

A value that depends on the process (a memory address, a thread schedule, a random state left
unseeded) passes every in-process test and still changes stored results from run to run: the fast
profile's float32 flow lengths did (cv2.magnitude's lengths moved with the flow's address; see
tests/metrics/test_speed_equivalence.py). Each process here decodes, computes and prints the values;
they must agree as text (``repr`` of the float).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _scene import FPS, clean_frames

from robojudge.video import write_video

METRICS = (
    "cc_photometric", "ctg_camera_control", "flow_motion_magnitude_farneback", "flow_warp_error",
    "mq_dynamic_degree", "mq_flow_score", "mq_temporal_flickering", "pixel_frame_consistency",
    "rbg_stability", "iq1_psnr", "iq1_ssim",
)  # fmt: skip

_COMPUTE = textwrap.dedent(
    """
    import json, sys
    from robojudge.metrics import FrameOptions, get_metric
    from robojudge.run import build_requests
    from robojudge.suite import Item

    video, reference, ids = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    item = Item(item_id="x", video=video, reference_video=reference)
    out = {}
    for profile in ("native", "fast"):
        frames = FrameOptions(profile="fast") if profile == "fast" else None
        for req in build_requests(ids, frames=frames):
            out[f"{profile}:{req.id}"] = repr(get_metric(req.id).compute(item, req.config).value)
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_each_value_is_the_same_in_fresh_processes(tmp_path: Path) -> None:
    frames = clean_frames()
    write_video(tmp_path / "v.mp4", frames, fps=FPS)
    write_video(tmp_path / "r.mp4", frames[::-1].copy(), fps=FPS)
    paths = [str(tmp_path / "v.mp4"), str(tmp_path / "r.mp4")]
    command = [sys.executable, "-c", _COMPUTE, *paths, ",".join(METRICS)]
    runs = []
    for _ in range(3):
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert len(runs[0]) == 2 * len(METRICS)
    assert all(v != "nan" for v in runs[0].values()), runs[0]  # every metric measured this clip
    differ = {k: [r[k] for r in runs] for k in runs[0] if len({r[k] for r in runs}) > 1}
    assert differ == {}
