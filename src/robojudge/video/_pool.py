"""A process pool for decoding: videos are decoded on other cores, away from the caller's GIL.

A judge run keeps dozens of requests in flight on one event loop; decoding a video in a thread of
that process holds the GIL most of the time (PyAV), which stalls the loop. :class:`DecoderPool` runs
:func:`robojudge.video.prepare_frames` (or any picklable function) in ``spawn``-started worker
processes instead. The pool starts on first use, so a run answered entirely from caches never
starts it, and one pool per worker count is shared for the life of the process
(:func:`shared_decoder`).

A worker that dies (a codec crash on a malformed file) breaks the pool: every call in flight is
then retried once, each in a single-use process of its own, so the video that crashes costs only
its own item and the pool is replaced for the calls after it.

The processes do not import the caller's main module (:func:`robojudge._lifeline.spawn_without_main`):
a script without the ``__main__`` guard is not run again in them.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from robojudge import settings
from robojudge._lifeline import exit_with_parent, join_manager, quiet_worker, spawn_without_main
from robojudge._machine import usable_cpus
from robojudge.settings import DECODE_WORKERS_ENV
from robojudge.video._cache import report_size, report_warnings
from robojudge.video._encode import prepare_frames
from robojudge.video._types import SampledFrames, VideoError

T = TypeVar("T")
_log = logging.getLogger(__name__)

ENV_WORKERS = DECODE_WORKERS_ENV
"""Environment variable that sets the default number of decoder processes (0: decode in threads)."""


def default_decode_workers() -> int:
    """``$ROBOJUDGE_DECODE_WORKERS``, else one process per core but one (at least 1, at most 4).

    Raises:
        ValueError: The variable is set but is not a non-negative integer.
    """
    n = settings.get().decode_workers
    if n is not None:
        return n
    return max(1, min(4, usable_cpus() - 1))


def _warm_up(parent: settings.Settings | None = None) -> None:
    """Run first in each new worker: take the ``parent``'s settings (the frame-memory limit among them:
    one run, one set of values), pay the imports before the first video, decode single-threaded, end
    with the parent process (an orphaned decoder would otherwise wait for work forever), and ignore
    Ctrl-C, which a terminal sends the whole process group: the parent stops the pool (:meth:`close`),
    where each idle worker printed a ``KeyboardInterrupt`` traceback."""
    from robojudge.video._filesample import set_codec_threads

    if parent is not None:
        settings.install(parent)
    quiet_worker()
    set_codec_threads(1)


def _solo_start(parent: settings.Settings) -> None:
    """The start of the process a call is retried alone in: the parent's settings, and an end with it."""
    settings.install(parent)
    exit_with_parent()


class DecoderPool:
    """Worker processes that decode videos.

    Args:
        workers: Number of processes (at least 1).
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a decoder pool needs at least one worker, got {workers}")
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._warm: Future[None] | None = None
        self._lock = threading.Lock()
        self.restarts = 0
        self.unavailable: str | None = None

    def _get(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    self.workers, mp_context=spawn_without_main(), initializer=_warm_up,
                    initargs=(settings.get(),),
                )
                self._warm = self._executor.submit(_warm_up)
            return self._executor

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor, self._warm = None, None
                self.restarts += 1
        broken.shutdown(wait=False, cancel_futures=True)

    def start(self) -> None:
        """Start a worker process now, without waiting for it (it otherwise starts on the first call).

        Where processes cannot be started at all (no working semaphores in a locked-down sandbox,
        for one), the reason is kept in :attr:`unavailable`, logged once, and :attr:`ready` stays
        False, so callers that check it keep decoding in threads.
        """
        if self.unavailable is not None:
            return
        try:
            self._get()
        except (OSError, RuntimeError, ValueError, NotImplementedError) as exc:
            self.unavailable = f"{type(exc).__name__}: {exc}"
            _log.warning("decoder processes unavailable (%s); decoding in threads instead", self.unavailable)

    @property
    def ready(self) -> bool:
        """A worker has started and imported the decoder (starting one takes about a second)."""
        warm = self._warm
        return warm is not None and warm.done() and not warm.cancelled() and warm.exception() is None

    async def run(self, fn: Callable[..., T], *args: Any, what: str | Path = "") -> T:
        """``fn(*args)`` in a worker process.

        Args:
            fn: A function of an importable module (not of the main script: the workers do not import
                it).
            *args: Its picklable arguments.
            what: The file the call works on, named in the error if its process dies.

        Raises:
            VideoError: The call's process died twice (once in the pool, once on its own).
            Exception: Whatever ``fn`` raised.
        """
        loop = asyncio.get_running_loop()
        ex = self._get()
        try:
            return await loop.run_in_executor(ex, fn, *args)
        except BrokenProcessPool:
            self._replace(ex)
        # Any call in flight when a worker died lands here, not only the culprit: retry each
        # alone, so only the file that really crashes the decoder fails.
        solo = ProcessPoolExecutor(1, mp_context=spawn_without_main(), initializer=_solo_start,
                                   initargs=(settings.get(),))
        try:
            return await loop.run_in_executor(solo, fn, *args)
        except BrokenProcessPool:
            raise VideoError(what or "?", "the decoder process died on this file (twice)") from None
        finally:
            solo.shutdown(wait=False)

    async def prepare(
        self,
        path: str | Path,
        fps: float | None,
        max_frames: int | None,
        size: int | tuple[int, int] | None,
        jpeg_quality: int | None = None,
        keep_pixels: bool = True,
    ) -> SampledFrames:
        """:func:`robojudge.video.prepare_frames` in a worker process.

        The worker's frame cache is its own, so nothing is shared with the caller's; the frames'
        warnings go to the caller's open :func:`robojudge.video.video_warnings` blocks on arrival.
        """
        got = await self.run(
            prepare_frames, str(path), fps, max_frames, size, jpeg_quality, keep_pixels, what=path
        )
        report_warnings(got.path, got.warnings)
        report_size(got)
        return got

    def close(self) -> None:
        """Stop the worker processes: a call still running gets :data:`CLOSE_WAIT_S` to end, then its
        worker is terminated (its caller has gone: a run stopped by Ctrl-C, which the workers ignore,
        waited for a long decode to finish, 18 s where it took 0.3 s before: review rev10)."""
        with self._lock:
            ex, self._executor, self._warm = self._executor, None, None
        if ex is not None:
            procs = list((getattr(ex, "_processes", None) or {}).values())
            manager = getattr(ex, "_executor_manager_thread", None)
            try:
                ex.shutdown(wait=False, cancel_futures=True)
                deadline = time.monotonic() + CLOSE_WAIT_S
                for proc in procs:
                    proc.join(max(0.0, deadline - time.monotonic()))
            finally:
                # A worker still busy (or a stop that broke off the wait): the workers, which ignore
                # Ctrl-C, would never be told to exit, and the interpreter's exit would wait for them.
                # (terminated here: shutdown has dropped the executor's own list of them)
                for proc in procs:
                    if proc.is_alive():
                        proc.terminate()
                for proc in procs:
                    proc.join(timeout=5.0)
                join_manager(manager)


#: Seconds :meth:`DecoderPool.close` lets a call still running end before it terminates the worker.
CLOSE_WAIT_S = 2.0

_SHARED: dict[int, DecoderPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_decoder(workers: int | None = None) -> DecoderPool | None:
    """The process-wide pool with ``workers`` processes (default :func:`default_decode_workers`).

    Returns ``None`` for 0 workers: the caller decodes in threads of its own process.
    """
    n = default_decode_workers() if workers is None else workers
    if n < 0:
        raise ValueError(f"decode workers must be >= 0, got {n}")
    if n == 0:
        return None
    with _SHARED_LOCK:
        pool = _SHARED.get(n)
        if pool is None:
            pool = _SHARED[n] = DecoderPool(n)
        return pool


@atexit.register
def _close_shared() -> None:
    for pool in list(_SHARED.values()):
        pool.close()
