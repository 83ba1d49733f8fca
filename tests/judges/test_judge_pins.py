"""What a judge sends and the keys it stores under must not change with the code around them.

Stored replies are found again by their request key, and a warm rerun skips decoding by the key of
its video's remembered frame hashes. The values here were computed before the frame types were
merged into one (issue 13): if a key changes, every cached reply would be asked again.

The video is a PNG frame folder, so the decoded pixels (and so the frame hashes) do not depend on a
codec build.
"""

from __future__ import annotations

import base64
import os
import sqlite3
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from _judge_server import FakeServer, Reply

from robojudge.judges import FrameSpec, JudgeConfig, ResponseCache, get_rubric, make_judge, short_hash
from robojudge.judges._cache import CACHE_FILE
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

PA, IA = get_rubric("pa"), get_rubric("ia")

#: Reply keys of PA and IA on the folder below with judge ``pin`` (mock backend, whose reply cannot be
#: parsed, so each rubric also sends its repair request), computed with the code of 071c8a8.
PINNED_MOCK_KEYS = {
    "26e3005d8f4dcc45341030a2b37ee70a1f012f8ae1bd3c16df1ad1ce8e023d4e",
    "412e9f38c4de3f5f05c3e3e9aeec3661b442ef7b2423cade0a15438501d58bd8",
    "67c7670338c2d8383a5d02a6c2e63cf7f32a780d26635f1e2b73c65acf0b7ccc",
    "c721ed5a80aa2bd8872040b43d56627312e26eb923139f4b66ba762fbbd31cd1",
}
#: The same keys since a mock judge's scripted replies joined its identity (a changed script is another
#: judge); with the replies left out of the identity the keys above still come out, so nothing else of
#: the key changed.
PINNED_MOCK_KEYS_WITH_REPLIES = {
    "3d1891131628daaba4779167faa94c09a6e1a36f1bcc9fc339c2d2c52263d988",
    "53eeca3b02a96ff2da19790817d9b282e4f12f84047a4eec0208e8f0417acbaf",
    "adeffdd427e4af5f340cfabbd53a20986d016c831efea45e4bec0a8c932c3483",
    "c889a97535d30c43fa1b03c9df81ccb068222246247e26d48a47198b57150038",
}
#: What the cache remembers of that folder: its frame hashes (BLAKE2b-96 over shape and pixels),
#: length (6 frames at 4 fps: last time stamp 1.25 s plus one frame) and warnings (none: fps.txt is there).
PINNED_FRAMES = {
    "hashes": [
        "d6229ba1cdfe98ad6727a3e7",
        "9fa73978bdfb88b570157d19",
        "4167df1acb5fc5db6ef3f5fe",
        "806c7681dbb043e84997197f",
        "0fdcf0a5c59b14e8942f2043",
        "873adae5d7a71d5e52e78ec1",
    ],
    "video_seconds": 1.5,
    "warnings": [],
}


def _pixels() -> np.ndarray:
    rng = np.random.default_rng(13)
    frames = rng.integers(0, 256, size=(6, 24, 40, 3), dtype=np.uint8)
    frames[:, 4:12, 6:20] = np.arange(6, dtype=np.uint8)[:, None, None, None] * 40
    return frames


@pytest.fixture
def folder_item(tmp_path: Path) -> Item:
    folder = write_video(tmp_path / "clip", _pixels(), fps=4.0)
    return Item(item_id="pin", video=str(folder), instruction="put the red block in the bowl")


def _keys(folder: Path, table: str) -> set[str]:
    with sqlite3.connect(folder / CACHE_FILE) as db:
        return {k for (k,) in db.execute(f"SELECT key FROM {table}")}  # noqa: S608 - fixed table names


def _file_key_by_definition(path: Path, spec: FrameSpec) -> str:
    st = os.stat(path)
    parts: list[Any] = [os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                        st.st_ctime_ns]
    with os.scandir(path) as it:
        parts += sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns, e.stat().st_ctime_ns)
                        for e in it if e.is_file())
    return short_hash([parts, spec.as_dict()])


def test_reply_and_frame_keys_are_pinned(
    folder_item: Item, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unparsable = '{"reasoning": "r", "x": 1}'
    cfg = make_judge({"name": "pin", "backend": "mock", "model": "m", "replies": [unparsable]})
    with ResultStore(tmp_path / "s.sqlite") as store, ResponseCache(tmp_path / "c") as cache:
        judge_items([folder_item], cfg, [PA, IA], store, cache=cache, decode_workers=0)
    assert _keys(tmp_path / "c", "replies") == PINNED_MOCK_KEYS_WITH_REPLIES
    identity = JudgeConfig.identity
    monkeypatch.setattr(JudgeConfig, "identity", lambda self: {
        k: v for k, v in identity(self).items() if k != "replies"})
    with ResultStore(tmp_path / "s2.sqlite") as store, ResponseCache(tmp_path / "c2") as cache:
        judge_items([folder_item], cfg, [PA, IA], store, cache=cache, decode_workers=0)
    assert _keys(tmp_path / "c2", "replies") == PINNED_MOCK_KEYS
    file_key = _file_key_by_definition(Path(folder_item.video), FrameSpec())
    assert _keys(tmp_path / "c", "frames") == {file_key}
    with ResponseCache(tmp_path / "c") as cache:
        assert cache.get_frames(file_key) == PINNED_FRAMES


def _urls_by_definition(frames: np.ndarray, quality: int) -> list[str]:
    out = []
    for rgb in frames:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
        assert ok
        out.append("data:image/jpeg;base64," + base64.b64encode(buf.tobytes()).decode("ascii"))
    return out


@pytest.mark.parametrize("workers", [0, 1])
def test_openai_request_images_are_opencv_jpegs_of_the_frames(
    folder_item: Item, tmp_path: Path, workers: int
) -> None:
    """Decoded here or in a worker process, the request carries the same JPEG data URLs."""
    want = _urls_by_definition(_pixels(), 70)
    reply = '{"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 3}'
    with FakeServer(lambda body, n: Reply(reply)) as srv, ResponseCache(tmp_path / "c") as cache:
        cfg = make_judge(
            {"name": "o", "backend": "openai", "model": "m", "base_url": srv.url, "image_quality": 70}
        )
        with ResultStore(tmp_path / "s.sqlite") as store:
            judge_items([folder_item], cfg, [PA, IA], store, cache=cache, decode_workers=workers)
        bodies = list(srv.bodies)
    assert len(bodies) == 2
    for body in bodies:
        parts = body["messages"][-1]["content"]
        assert [p["image_url"]["url"] for p in parts if p["type"] == "image_url"] == want
