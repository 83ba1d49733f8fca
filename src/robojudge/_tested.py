"""The library versions robojudge's published numbers were computed with, and what differs from them.

The README's and the docs' numbers (the demo's expected output, validation correlations, the
sensitivity suites) were computed with the versions that ``constraints.txt`` pins and ``make`` installs.
pip installs whatever pyproject.toml's ranges allow, so a pip user may compute with a newer OpenCV or
PyAV (FFmpeg) than these; OpenCV 5.1 moved one ``ctg_camera_control`` value of the demo suite from 0.39 to
0.53 (docs/report.md, "Library versions"). :func:`untested_libraries` says which of the frame libraries a
set of versions (``details["libraries"]``, :func:`robojudge.run.library_versions`) has in another minor
release than tested; ``robojudge score`` and ``robojudge demo`` say it for the installed ones, the
report's "Library versions" section for the ones its values were computed with.

:data:`TESTED` repeats constraints.txt's pins (``tests/run/test_tested_versions.py`` fails when the two
differ), and :data:`TESTED_FFMPEG` the FFmpeg libraries inside the tested PyAV wheel (the same test checks
them against PyAV where the tested release is installed).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["KNOWN_TO_MOVE", "TESTED", "TESTED_FFMPEG", "install_tested", "untested_libraries"]

#: constraints.txt's pins, distribution name to version.
TESTED: dict[str, str] = {
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "scikit-image": "0.26.0",
    "opencv-python-headless": "5.0.0.93",
    "opencv-python": "5.0.0.93",
    "av": "18.1.0",
}
#: The FFmpeg decoder and scaler inside PyAV's wheel of :data:`TESTED` (``av.library_versions``).
TESTED_FFMPEG: dict[str, str] = {"libavcodec": "62.28.102", "libswscale": "9.5.102"}

#: The metrics whose values another release of the library (as recorded: ``opencv``, ``av``) is known to
#: move, from docs/report.md "Library versions": OpenCV 5.1 camera control, OpenCV 4.x photometric
#: consistency, the Flow Score and dynamic degree. No PyAV or FFmpeg release is known to move a value.
KNOWN_TO_MOVE: dict[str, tuple[str, ...]] = {
    "opencv": ("ctg_camera_control", "cc_photometric", "mq_flow_score", "mq_dynamic_degree"),
    "av": (),
}


def _minor(version: str) -> str:
    """``"5.1"`` of ``"5.1.0"`` or ``"5.1.0.95"``: the release, without the patch."""
    return ".".join(version.split(".")[:2])


def _tested_opencv() -> str:
    return ".".join(TESTED["opencv-python-headless"].split(".")[:3])  # cv2.__version__: no build number


def untested_libraries(recorded: Mapping[str, str]) -> list[str]:
    """One line per frame library of ``recorded`` (``{"opencv": "5.1.0", "av": "19.0.2", "libavcodec":
    ...}``, names as :func:`robojudge.run.library_versions` writes them) in another minor release than
    tested: OpenCV, and PyAV with the FFmpeg inside it. A library ``recorded`` does not name is not
    compared. Each line names the metrics known to move with that library.

    >>> untested_libraries({"opencv": "5.0.0", "av": "18.1.0", "libavcodec": "62.28.102"})
    []
    >>> untested_libraries({"opencv": "5.1.0"})[0].split(":")[0]
    'OpenCV 5.1.0, not 5.0 as tested'
    """
    return [line for line, _ in _untested(recorded)]


def install_tested(recorded: Mapping[str, str]) -> str | None:
    """The ``pip install`` of the tested releases of the libraries :func:`untested_libraries` names, or
    None when it names none.

    >>> install_tested({"opencv": "5.1.0", "av": "18.1.0"})
    "pip install 'opencv-python-headless==5.0.0.93'"

    The tested PyAV built with another FFmpeg (a conda build) has no ``pip install`` to give:

    >>> install_tested({"av": "18.1.0", "libavcodec": "61.19.100"}) is None
    True
    """
    pins = [pin for _, pin in _untested(recorded) if pin]
    return "pip install " + " ".join(f"'{p}'" for p in pins) if pins else None


def _untested(recorded: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(line, pin)`` of each library :func:`untested_libraries` names (``pin`` empty when installing the
    tested release would change nothing: PyAV of the tested release with another FFmpeg inside)."""
    out = []
    opencv, tested_cv = recorded.get("opencv"), _tested_opencv()
    if opencv is not None and _minor(opencv) != _minor(tested_cv):
        out.append((f"OpenCV {opencv}, not {_minor(tested_cv)} as tested: known to move "
                    + _join(KNOWN_TO_MOVE["opencv"])
                    + " (OpenCV 5.1 moved a ctg_camera_control value of the demo suite from 0.39 to 0.53)",
                    f"opencv-python-headless=={TESTED['opencv-python-headless']}"))
    av, codec = recorded.get("av"), recorded.get("libavcodec")
    av_differs = av is not None and _minor(av) != _minor(TESTED["av"])
    codec_differs = codec is not None and _minor(codec) != _minor(TESTED_FFMPEG["libavcodec"])
    if av_differs or codec_differs:
        have = " with ".join(p for p in (f"PyAV {av}" if av else "",
                                         f"FFmpeg's libavcodec {codec}" if codec else "") if p)
        moved = _join(KNOWN_TO_MOVE["av"])
        out.append((f"{have}, not PyAV {_minor(TESTED['av'])} with libavcodec "
                    f"{_minor(TESTED_FFMPEG['libavcodec'])} as tested: "
                    + (f"known to move {moved}" if moved else "no metric is known to move with it, but "
                       "every metric that reads frames decodes them through it"),
                    # the tested PyAV built with another FFmpeg (conda's): pip has nothing to change
                    f"av=={TESTED['av']}" if av_differs else ""))
    return out


def _join(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
