"""A metric gives one value for the same frames and time stamps whatever container holds them.

A Matroska/WebM track's rate was its declared default frame duration, MP4's the average: with one stall,
mq_dynamic_degree took every 3rd frame of the MKV and every 2nd of the MP4, and iq1_psnr paired the MKV
with its reference at 25 fps and the MP4 at 16.2 fps (found by an audit of 2026-12-06).
"""

import cv2
import numpy as np

from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import frame_cache, write_video

# 24 frames 40 ms apart, a one-second stall, 24 more (48 / 2.96 s = 16.2 fps on average)
TIMES = [0.04 * i for i in range(24)] + [2.0 + 0.04 * i for i in range(24)]


def _panning(n=48, size=64):
    """Smooth texture panning 1 px a frame: the flow is measurable, so dynamic degree is scored."""
    noise = np.random.default_rng(0).integers(0, 256, (size, size + n, 3), dtype=np.uint8)
    canvas = cv2.GaussianBlur(noise, (0, 0), 2)
    return np.stack([canvas[:, i:i + size] for i in range(n)])


def test_matroska_and_mp4_of_one_clip_score_alike(tmp_path):
    frames = _panning()
    ref = write_video(tmp_path / "ref.mp4", frames, fps=25)
    scores = {}
    for name in ("gap.mp4", "gap.mkv"):  # one encoder (libx264, bit-exact): the same pixels in both
        path = write_video(tmp_path / name, frames, fps=25, timestamps=TIMES)
        item = Item(item_id=name, video=str(path), reference_video=str(ref))
        with frame_cache():
            # Paired by time, the 2.96-s clip outlasts its 1.92-s reference (48 targets against 31): a
            # lower coverage keeps the item scored, to compare the values
            scores[name] = {"mq_dynamic_degree": get_metric("mq_dynamic_degree").compute(item),
                            "iq1_psnr": get_metric("iq1_psnr").compute(
                                item, get_metric("iq1_psnr").make_config({"min_reference_coverage": 0.6}))}
    mp4, mkv = scores["gap.mp4"], scores["gap.mkv"]
    assert mp4["mq_dynamic_degree"].details["stride"] == 2  # round(16.2 / 8); the MKV had 3 (25 fps)
    assert mp4["iq1_psnr"].details["frames_expected"] == 31  # 1.92 s at 16.2 fps; the MKV had 48
    assert mp4["iq1_psnr"].details["frames_unmatched"] == 17  # 48 targets of the clip, 31 of the reference
    for metric in ("mq_dynamic_degree", "iq1_psnr"):
        assert mkv[metric].value == mp4[metric].value
        assert mkv[metric].details == mp4[metric].details
