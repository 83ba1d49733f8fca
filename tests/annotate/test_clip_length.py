"""A clip whose header gives no length (a WebM recorded live, as a browser's MediaRecorder writes it) is
split into segments by the length its time stamps measure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from sqlalchemy import select

from _encode import mux_frames
from robojudge.annotate import AnnotationService, init_project, relocate_project
from robojudge.annotate import _schema as s


def _live_webm(path: Path, n: int = 60, fps: int = 30) -> Path:
    """VP9 muxed live, with neither a Duration nor a DefaultDuration, stamped in whole milliseconds: only
    the stamps tell the length."""
    with av.open(str(path), "w", format="webm", options={"live": "1"}) as container:
        stream = container.add_stream("libvpx-vp9")
        stream.width, stream.height, stream.pix_fmt = 32, 24, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        stream.codec_context.framerate = Fraction(0, 1)  # no rate: the muxer writes no DefaultDuration

        def frames() -> Iterator[av.VideoFrame]:
            for i in range(n):
                frame = av.VideoFrame.from_ndarray(np.full((24, 32, 3), 4 * i, np.uint8), format="rgb24")
                frame.pts, frame.time_base = round(i * 1000 / fps), Fraction(1, 1000)
                yield frame

        mux_frames(container, stream, frames())
    return path


def test_a_live_webm_is_split_by_its_measured_length(tmp_path: Path) -> None:
    # init --segments refused the project: "cannot read the clip's length to split it into segments"
    video = _live_webm(tmp_path / "rec.webm")
    with av.open(str(video)) as container:  # the header says nothing of the length
        assert container.duration is None and container.streams.video[0].duration is None
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "rec", "video": "rec.webm", "instruction": "pick"}) + "\n")
    db = f"sqlite:///{tmp_path / 'ann.sqlite'}"
    init_project(manifest, db, "live", segment_s=1.0)
    with AnnotationService(db) as svc, svc.db.read() as conn:
        row = conn.execute(select(s.items.c.duration_s, s.items.c.n_segments)).one()
    # 60 frames at 30 fps, the last stamped 1.967 s and lasting 33 ms: 2 s, not 2.0003 s and a third segment
    assert row.duration_s == pytest.approx(2.0, abs=1e-9) and row.n_segments == 2
    relocate_project(db, "live", manifest)  # the length read again agrees with the one recorded
