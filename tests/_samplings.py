"""What a metric reads of an item's main video, against what its config declares (the samplings
``robojudge.metrics.prefetch_main_video`` decodes in one pass)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import FileFingerprint, frame_cache
from robojudge.video._sample import _DEFAULTS, _sampling_key


def read_and_declared(item: Item, metric: str) -> tuple[set[tuple[object, ...]], set[tuple[object, ...]]]:
    """The frame-cache keys of the main video that ``metric`` (default config) sampled when computed on
    ``item``, and the keys of the samplings its config declares."""
    spec = get_metric(metric)
    cfg = spec.make_config()
    with frame_cache() as cache:
        spec.compute(item, cfg)
        main = FileFingerprint.of(Path(item.video))
        read = {key for fp, key in cache._entries if fp == main}
    declared = {_sampling_key(**{**_DEFAULTS, **kw}) for kw in cfg.main_video_samplings(item)}
    return read, declared


def count_decode_passes(monkeypatch: Any) -> list[str]:
    """A list that gets one entry per pass over a video file's packets from now on (``monkeypatch``, the
    pytest fixture, undoes it): how a test tells one decode from two."""
    from robojudge.video import _filesample as FS

    seen: list[str] = []
    real = FS._Plan._decode

    def counting(ctx: Any, packets: Any, wanted: Any, *rest: Any) -> Any:
        seen.append("pass")
        yield from real(ctx, packets, wanted, *rest)

    monkeypatch.setattr(FS._Plan, "_decode", staticmethod(counting))
    return seen
