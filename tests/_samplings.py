"""What a metric reads of an item's main video, against what its config declares (the samplings
``robojudge.metrics.prefetch_main_video`` decodes in one pass)."""

from __future__ import annotations

from pathlib import Path

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
