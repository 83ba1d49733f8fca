"""Loading a judge's frames through a decoder process, as a judge run does for videos it must isolate."""

from __future__ import annotations

import asyncio
from pathlib import Path

from robojudge.judges import FrameLoader, FrameSpec, ResponseCache
from robojudge.video import DecoderPool, SampledFrames


def load_in_decoder(video: str | Path, cache: ResponseCache, jpeg_quality: int) -> SampledFrames:
    """The frames of ``video`` as a one-process decoder pool gives them (only their JPEGs cross over)."""
    pool = DecoderPool(1)
    try:
        frames = FrameLoader(video, FrameSpec(), cache, decoder=pool, jpeg_quality=jpeg_quality)

        async def load_when_ready() -> SampledFrames:
            pool.start()
            while not pool.ready:
                await asyncio.sleep(0.05)
            return await frames.load()

        return asyncio.run(load_when_ready())
    finally:
        pool.close()
