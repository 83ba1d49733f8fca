"""The library versions robojudge was tested with travel in the package, and a run says when the installed
ones are other releases.

Found by the packaging audit of 2026-12-06: pip installs OpenCV 5.1 (and PyAV 19 on Python 3.12+) while
the README's and docs' numbers were computed with constraints.txt's OpenCV 5.0 and PyAV 18.1, which ship
in neither the wheel nor the sdist; OpenCV 5.1 moves a demo ``ctg_camera_control`` value from 0.39 to
0.53, and nothing told a pip user.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import av
import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge._tested import TESTED_FFMPEG
from robojudge.cli import app
from robojudge.report._library_section import libraries_section
from robojudge.report._sections import ReportInput
from robojudge.run import TESTED, install_tested, untested_libraries
from robojudge.run._libraries import _core
from robojudge.store import ResultRow
from robojudge.suite import Item
from robojudge.suite._demo import make_synthetic_suite
from robojudge.video import write_video

ROOT = Path(__file__).resolve().parents[2]
AV19 = {"av": "19.0.2", "libavcodec": "63.1.102"}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s#;]+)\s*(#.*)?", line)
        if m:
            pins[m[1].lower()] = m[2]
    return pins


def test_the_tested_versions_are_those_constraints_txt_pins() -> None:
    assert _pins() == TESTED, ("robojudge._tested.TESTED must repeat constraints.txt's pins; update it "
                               "(and TESTED_FFMPEG for a new av) with constraints.txt")


def test_the_tested_ffmpeg_is_the_one_in_the_tested_pyav() -> None:
    if av.__version__ != TESTED["av"]:
        pytest.skip(f"PyAV {av.__version__} installed, not the tested {TESTED['av']}")
    assert {lib: ".".join(map(str, av.library_versions[lib])) for lib in TESTED_FFMPEG} == TESTED_FFMPEG


def test_the_tested_releases_say_nothing_and_a_patch_release_neither() -> None:
    tested = {"opencv": "5.0.0", "av": "18.1.0", "libavcodec": "62.28.102", "libswscale": "9.5.102"}
    assert untested_libraries(tested) == [] and install_tested(tested) is None
    assert untested_libraries({"opencv": "5.0.2", "av": "18.1.7", "libavcodec": "62.28.103"}) == []
    assert untested_libraries({"numpy": "1.26.4"}) == []  # a record without the frame libraries


def test_another_opencv_or_pyav_is_named_with_the_metrics_known_to_move() -> None:
    (cv,) = untested_libraries({"opencv": "5.1.0", "av": "18.1.0", "libavcodec": "62.28.102"})
    assert cv.startswith("OpenCV 5.1.0, not 5.0 as tested: known to move ctg_camera_control, cc_photometric, "
                         "mq_flow_score and mq_dynamic_degree")
    (pyav,) = untested_libraries({"opencv": "5.0.0", **AV19})
    assert pyav.startswith("PyAV 19.0.2 with FFmpeg's libavcodec 63.1.102, not PyAV 18.1 with libavcodec "
                           "62.28 as tested: no metric is known to move")
    assert install_tested({"opencv": "4.11.0", **AV19}) == (
        "pip install 'opencv-python-headless==5.0.0.93' 'av==18.1.0'")


@pytest.fixture()
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Installed versions set by the test: the libraries' version attributes, read afresh."""
    _core.cache_clear()
    monkeypatch.setattr(cv2, "__version__", "5.0.0")
    monkeypatch.setattr(av, "__version__", TESTED["av"])
    monkeypatch.setattr(av, "library_versions", {lib: tuple(map(int, v.split(".")))
                                                 for lib, v in TESTED_FFMPEG.items()})
    yield monkeypatch
    monkeypatch.undo()
    _core.cache_clear()


def _suite(tmp_path: Path) -> Path:
    frames = np.random.default_rng(0).integers(0, 256, (4, 24, 32, 3), dtype=np.uint8)
    write_video(tmp_path / "v.mp4", frames, fps=8)
    (tmp_path / "suite.jsonl").write_text('{"item_id": "a", "video": "v.mp4", "generator": "g"}\n')
    return tmp_path / "suite.jsonl"


def _score(tmp_path: Path, run: str, metric: str = "pixel_frame_consistency") -> tuple[int, str, str]:
    res = CliRunner().invoke(app, ["score", str(_suite(tmp_path)), "-m", metric,
                                   "--run-dir", str(tmp_path / run), "--no-progress", "--workers", "1"])
    return res.exit_code, res.stdout, res.stderr


def test_score_says_once_on_stderr_that_opencv_is_untested(
    tmp_path: Path, installed: pytest.MonkeyPatch
) -> None:
    code, out, err = _score(tmp_path, "tested")
    assert code == 0, out + err
    assert "untested" not in out + err
    installed.setattr(cv2, "__version__", "5.1.0")
    _core.cache_clear()
    code, out, err = _score(tmp_path, "cv51")
    assert code == 0, out + err
    said = "untested library: OpenCV 5.1.0, not 5.0 as tested: known to move ctg_camera_control"
    assert err.count(said) == 1
    assert "pip install 'opencv-python-headless==5.0.0.93' computes with the tested versions" in err
    assert "untested" not in out and "PyAV" not in err


def test_score_says_nothing_when_its_metrics_read_no_frames(
    tmp_path: Path, installed: pytest.MonkeyPatch
) -> None:
    # uniform_random records no frame library: OpenCV cannot move its values
    installed.setattr(cv2, "__version__", "5.1.0")
    _core.cache_clear()
    code, out, err = _score(tmp_path, "cv51", "uniform_random")
    assert code == 0, out + err
    assert "untested" not in out + err
    code, out, err = _score(tmp_path, "cv51", "uniform_random,pixel_frame_consistency")
    assert code == 0, out + err
    assert err.count("untested library: OpenCV 5.1.0") == 1


def test_the_tested_pyav_with_another_ffmpeg_gets_no_pip_line(
    tmp_path: Path, installed: pytest.MonkeyPatch
) -> None:
    # a conda build: PyAV of the tested release around another FFmpeg; pip has nothing to change
    installed.setattr(av, "library_versions", {"libavcodec": (61, 19, 100), "libswscale": (8, 3, 100)})
    _core.cache_clear()
    code, out, err = _score(tmp_path, "conda")
    assert code == 0, out + err
    assert err.count("untested library: PyAV 18.1.0 with FFmpeg's libavcodec 61.19.100") == 1
    assert "pip install" not in err and "built with another FFmpeg" in err


@pytest.mark.slow
def test_demo_says_it_of_pyav_and_ffmpeg(tmp_path: Path, installed: pytest.MonkeyPatch) -> None:
    out = tmp_path / "demo"
    (out / "suite").mkdir(parents=True)
    (out / "suite" / "SUITE_KIND").write_text("synthetic\n")
    make_synthetic_suite(out / "suite", episodes=2)
    installed.setattr(av, "__version__", "19.0.2")
    installed.setattr(av, "library_versions", {"libavcodec": (63, 1, 102), "libswscale": (10, 1, 102)})
    _core.cache_clear()
    res = CliRunner().invoke(app, ["demo", "--out", str(out), "--no-progress", "--workers", "1"])
    assert res.exit_code == 0, res.output
    said = ("untested library: PyAV 19.0.2 with FFmpeg's libavcodec 63.1.102, not PyAV 18.1 with libavcodec "
            "62.28 as tested: no metric is known to move with it")
    assert res.stderr.count(said) == 1
    assert "pip install 'av==18.1.0' computes" in res.stderr and "untested" not in res.stdout


def _row(item: str, libraries: str) -> ResultRow:
    return ResultRow(item, "m", "h", "1", "ok", 1.0, details={"libraries": libraries})


def test_the_report_names_the_untested_libraries_the_values_were_computed_with() -> None:
    items = [Item(item_id=i, video="v.mp4", generator=g) for i, g in (("a", "g1"), ("b", "g2"))]
    tested = "numpy 2.4.6, opencv 5.0.0, av 18.1.0, libavcodec 62.28.102"
    same = libraries_section(ReportInput([_row("a", tested), _row("b", tested)], items, lambda m: True,
                                         bootstrap=0))
    assert same.skipped is not None and "Untested" not in same.intro
    new = tested.replace("opencv 5.0.0", "opencv 5.1.0")
    sec = libraries_section(ReportInput([_row("a", new), _row("b", new)], items, lambda m: True,
                                        bootstrap=0))
    assert sec.skipped is None and not sec.tables
    assert sec.intro.startswith("Untested libraries: values were computed with OpenCV 5.1.0, not 5.0 as "
                                "tested: known to move ctg_camera_control")
    assert "0.39 to 0.53) (the values of m)." in sec.intro  # which of the report's metrics it computed
    assert sec.intro.endswith("Otherwise every compared value of each metric was computed with the same "
                              "library versions.")
    mixed = libraries_section(ReportInput([_row("a", tested), _row("b", new)], items, lambda m: True,
                                          bootstrap=0))
    assert [c.text for c in mixed.tables[0].rows[0]][:2] == ["m", "opencv"]
    assert mixed.intro.count("Untested libraries: values were computed with OpenCV 5.1.0") == 1
