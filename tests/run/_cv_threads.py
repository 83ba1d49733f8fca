"""A task function for the executor tests, importable by spawned workers."""

from __future__ import annotations


def opencv_threads(_: object) -> int:
    """The OpenCV thread count of the process that runs the task."""
    import cv2

    return int(cv2.getNumThreads())


def frame_memory_share(_: object) -> float:
    """The share of the decoded-frame budget the process that runs the task was given."""
    import robojudge.video._memory as memory

    return memory._share
