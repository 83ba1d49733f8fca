"""The versions of the libraries a computed value comes from, recorded with every scored row.

A metric's value depends on more than its code and config: OpenCV's optical flow, tracking and
RANSAC, FFmpeg's decoder and scaler, NumPy's and SciPy's arithmetic. A new release of one of them can
move values, mostly in their last digits but by tens of percent for OpenCV's DIS flow and tracking
(docs/report.md, "Library versions"), and a metric whose values lie close together (camera control's
0.997-0.999 on the simulator's rollouts) can then change order: on the dose-response suites of
docs/sensitivity.md, OpenCV 5.0.0 and 5.1.0 give every `ctg_camera_control` value different last
digits, and one of 24 floating-object rollouts moves from below its control to above it.

The runner therefore stores, in each scored row's details, the versions it was computed with
(``details["libraries"]``, :func:`library_versions`). They are not part of the row's key: an upgrade
does not discard stored results. The report instead warns when values it compares were computed with
different versions (section "Library versions", :mod:`robojudge.report`), and ``score_items(...,
rescore_libraries=True)`` (``robojudge score --rescore-libraries``) recomputes them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from typing import Any

from robojudge.metrics import Input, MetricSpec, Provider
from robojudge.store import parse_libraries
from robojudge.video import READER_VERSION

#: Distributions every computed metric may read through (the core install), by the name shown.
CORE = {"numpy": "numpy", "scipy": "scipy", "scikit-image": "scikit-image"}
#: The libraries under frame reading (names as recorded), which a metric that reads no frames does
#: not record (:func:`reads_frames`); the report reads one absent from a record as no difference.
FRAME_LIBRARIES = frozenset({"opencv", "av", "libavcodec", "libswscale", "robojudge-video"})
#: What the network-backed metrics read through as well (those installed).
MODEL = {"torch": "torch", "torchvision": "torchvision", "transformers": "transformers", "pyiqa": "pyiqa"}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def _core() -> tuple[tuple[str, str], ...]:
    """``(name, version)`` of the core libraries in this process: NumPy, SciPy, OpenCV (the module that
    imports as ``cv2``, whichever of its wheels provides it), PyAV and the FFmpeg decoder and scaler
    under it, scikit-image, and robojudge's video reader over them."""
    import av
    import cv2

    found = [(name, _version(dist)) for name, dist in CORE.items()]
    found.append(("opencv", cv2.__version__))
    found.append(("av", av.__version__))
    libs = getattr(av, "library_versions", {}) or {}
    for lib in ("libavcodec", "libswscale"):
        if lib in libs:
            found.append((lib, ".".join(str(p) for p in libs[lib])))
    # robojudge's own reader on top of them: a change of which frames it gives is a change as a new
    # decoder release would be (robojudge.video.READER_VERSION).
    found.append(("robojudge-video", READER_VERSION))
    return tuple((n, v) for n, v in found if v)


@functools.cache
def _model() -> tuple[tuple[str, str], ...]:
    return tuple((name, v) for name, dist in MODEL.items() if (v := _version(dist)))


#: The inputs read as frames (through PyAV, FFmpeg, OpenCV and robojudge's video reader).
FRAME_INPUTS = frozenset({Input.video, Input.reference, Input.views, Input.initial_frame})


def reads_frames(spec: MetricSpec[Any]) -> bool:
    """Whether ``spec`` reads any video frame: a required frame input, the views it may read, or a
    network (which reads frames). ``sim_task_success`` reads only a state file, ``uniform_random``
    nothing."""
    return (bool(spec.inputs & FRAME_INPUTS) or "views" in spec.also_reads
            or spec.provider is not Provider.computed)


def library_versions(spec: MetricSpec[Any] | None = None) -> str:
    """The libraries a value of ``spec`` is computed with in this process, ``"name version"`` pairs
    joined by ``", "`` (the network libraries too for a ``model`` metric): what the runner stores as
    ``details["libraries"]``. A metric that reads no frames (:func:`reads_frames`) records NumPy, SciPy
    and scikit-image only, so that an OpenCV or FFmpeg release does not mark its rows as computed with
    other versions.

    >>> "opencv " in library_versions()
    True
    >>> from robojudge.metrics import get_metric
    >>> library_versions(get_metric("sim_task_success")).startswith("numpy ")
    True
    >>> "opencv" in library_versions(get_metric("sim_task_success"))
    False
    """
    pairs = _core()
    if spec is not None and not reads_frames(spec):
        pairs = tuple((name, v) for name, v in pairs if name not in FRAME_LIBRARIES)
    pairs += _model() if spec is not None and spec.provider is Provider.model else ()
    return ", ".join(f"{name} {version}" for name, version in pairs)


def _without_frame_libraries(record: str) -> dict[str, str]:
    """The ``name: version`` pairs of a record (``details["libraries"]``) but the frame libraries."""
    return {name: v for name, v in parse_libraries(record).items() if name not in FRAME_LIBRARIES}


def same_libraries(spec: MetricSpec[Any]) -> Callable[[str], bool]:
    """Whether a record (``details["libraries"]``) names the libraries installed here for ``spec``: its
    :func:`library_versions`; and for a metric that reads no frames, any record whose other libraries
    are those installed, whatever frame libraries it names (its rows stored before 2026-12-06 named
    them too, of whichever release was installed then), so that they are not taken for other versions.

    >>> from robojudge.metrics import get_metric
    >>> same = same_libraries(get_metric("sim_task_success"))
    >>> same(library_versions()), same(library_versions().replace("opencv ", "opencv 0."))
    (True, True)
    >>> same_libraries(get_metric("iq1_psnr"))(library_versions().replace("opencv ", "opencv 0."))
    False
    """
    now = library_versions(spec)
    if reads_frames(spec):
        return now.__eq__
    core = _without_frame_libraries(now)
    return lambda record: record == now or _without_frame_libraries(record) == core
