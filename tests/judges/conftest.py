"""Fixtures for the judge tests: tiny videos, a suite of items, a cache folder, a fake server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from robojudge.judges import ResponseCache
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may reach a hub; the default cache folder points into tmp_path."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "default-cache"))


def make_video(path: Path, seed: int, frames: int = 8, fps: float = 4.0) -> Path:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=(1, 1, 3))
    arr = np.empty((frames, 32, 32, 3), dtype=np.uint8)
    for t in range(frames):
        arr[t] = (base + 8 * t) % 256
        arr[t, t * 3 : t * 3 + 4, 4:10] = 255
    return write_video(path, arr, fps=fps)


@pytest.fixture
def make_items(tmp_path: Path) -> Callable[..., list[Item]]:
    """``make_items(["clean", "x"])``: items with instruction ``ITEM:<name>``, each with its own video."""

    def build(names: list[str], frames: int = 8) -> list[Item]:
        folder = tmp_path / "videos"
        folder.mkdir(exist_ok=True)
        out = []
        for i, name in enumerate(names):
            path = folder / f"{name}_{i}.mp4"
            if not path.exists():
                make_video(path, seed=i, frames=frames)
            out.append(Item(item_id=name, video=str(path), instruction=f"ITEM:{name}"))
        return out

    return build


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ResultStore]:
    with ResultStore(f"sqlite:///{tmp_path / 'results.sqlite'}") as s:
        yield s


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    with ResponseCache(tmp_path / "cache") as c:
        yield c


@pytest.fixture
def no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in list(os.environ):
        if k.startswith("RJ_TEST_"):
            monkeypatch.delenv(k)
