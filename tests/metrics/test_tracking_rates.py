"""ta_dyn scores the same motion the same whatever the generated video's frame rate.

Frames picked at a rate the video's own does not divide are unevenly spaced: against a 30-fps
reference, a 16-fps video is compared at 16 fps, and the reference's frames are then 1 and 2 source
frames apart in turn. Per-step speeds of the same motion alternated there, and DYN (Wasserstein
distances of speeds and accelerations) read that as other dynamics: on the scene below, identical
motion scored 0.25 at 16 fps and 0.09 at 24 fps, 1.0 at 30. Both tracks are now read on one even time
grid first.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from robojudge.metrics import get_metric
from robojudge.suite import Item
from robojudge.video import video_warnings, write_video

W, H, OBJ, GRIP, SECONDS = 192, 144, 40, 20, 3.0


def _position(t: float) -> tuple[float, float]:
    """Top-left corner of the object at ``t`` seconds: a reach that eases in and out along an arc."""
    e = (1 - np.cos(np.pi * min(t / SECONDS, 1.0))) / 2
    return 10 + 120 * e, 60 + 30 * np.sin(np.pi * e)


def _textured(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    coarse = rng.integers(0, 256, (max(1, h // 5), max(1, w // 5), 3)).astype(np.uint8)
    return cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)


def _paste(frame: np.ndarray, patch: np.ndarray, x: float, y: float) -> np.ndarray:
    """``patch`` laid over ``frame`` at the sub-pixel corner ``(x, y)`` (bilinear edges)."""
    move = np.float32([[1, 0, x], [0, 1, y]])
    image = cv2.warpAffine(patch.astype(np.float32), move, (W, H), flags=cv2.INTER_LINEAR)
    cover = cv2.warpAffine(np.ones(patch.shape[:2], np.float32), move, (W, H), flags=cv2.INTER_LINEAR)
    return frame * (1 - cover[..., None]) + image * cover[..., None]


def _render(fps: int) -> np.ndarray:
    """The same 3-s motion at ``fps``: every frame shows the scene at its own time ``k / fps``."""
    rng = np.random.default_rng(0)
    background, obj, grip = _textured(rng, H, W), _textured(rng, OBJ, OBJ), _textured(rng, GRIP, OBJ)
    obj[..., 0], grip[..., 2] = 230, 250
    frames = []
    for k in range(int(SECONDS * fps) + 1):
        x, y = _position(k / fps)
        frame = _paste(_paste(background.astype(np.float32), obj, x, y), grip, x, y - GRIP)
        frames.append(np.clip(np.round(frame), 0, 255).astype(np.uint8))
    return np.stack(frames)


def _state(fps: int) -> dict[str, np.ndarray]:
    """The state file of the rendering at ``fps`` (sim layout, identity camera: ``ee_pos`` is (u, v, 1))."""
    n = int(SECONDS * fps) + 1
    masks, ee = np.zeros((n, 1, H, W), np.uint8), np.zeros((n, 3))
    for k in range(n):
        x, y = _position(k / fps)
        xi, yi = round(x), round(y)
        masks[k, 0, yi:yi + OBJ, xi:xi + OBJ] = 3
        masks[k, 0, yi - GRIP:yi, xi:xi + OBJ] = 2
        ee[k] = (x + OBJ / 2, y - GRIP / 2, 1.0)
    return {"masks": masks, "ee_pos": ee, "K": np.eye(3)[None], "R": np.tile(np.eye(3), (n, 1, 1, 1)),
            "t": np.zeros((n, 1, 3)), "keypoint_names": np.array(["gripper"]),
            "keypoints_2d": np.zeros((n, 1, 1, 2)), "keypoints_visible": np.zeros((n, 1, 1), bool),
            "unintended_collision": np.zeros(n, bool), "success": np.ones(n, bool)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rates")
    write_video(root / "ref.mp4", _render(30), fps=30)
    np.savez(root / "ref.npz", **_state(30))  # the reference episode's truth
    np.savez(root / "state.npz", **_state(30))  # frame 0 seeds the tracker: the same at every rate
    for fps in (16, 24, 30):
        write_video(root / f"gen{fps}.mp4", _render(fps), fps=fps)
    write_video(root / "gen16.mkv", _render(16), fps=16)  # time stamps in milliseconds: 1/16 s is 0.063
    return root


def _scores(folder: Path, truth: str, suffix: str = ".mp4") -> dict[int, dict[str, object]]:
    """``ta_dyn``'s details for the video at each rate against the 30-fps reference."""
    spec = get_metric("ta_dyn")
    out = {}
    for fps in (16,) if suffix == ".mkv" else (16, 24, 30):
        item = Item(item_id=f"gen{fps}", video=str(folder / f"gen{fps}{suffix}"),
                    reference_video=str(folder / "ref.mp4"), state=str(folder / "state.npz"))
        score = spec.compute(item, spec.make_config({"truth": truth}))
        assert score.scored and score.details["truth"] == truth
        out[fps] = {"value": score.value, **score.details}
    return out


def test_the_same_motion_scores_the_same_at_16_24_and_30_fps(folder: Path) -> None:
    scores = _scores(folder, "reference_state")  # what "auto" picks with the reference's state file
    for fps, details in scores.items():
        assert details["selected"] == "ee"
        parts = details["tracks"]["ee"]  # type: ignore[index]
        # The grids' speeds differ by tracker noise only (under 2e-4 of the frame per step; the uneven
        # picks made it 1.2e-3 at 16 fps and 2.3e-3 at 24).
        assert parts["w_velocity"] < 5e-4 and parts["w_acceleration"] < 5e-4, (fps, parts)
    # 30 fps against 30 fps is the same-rate value; 16 and 24 fps scored 0.25 and 0.09 before.
    assert scores[30]["value"] == pytest.approx(1.0)
    assert scores[16]["value"] == pytest.approx(scores[30]["value"], abs=1e-3)
    assert scores[24]["value"] == pytest.approx(scores[30]["value"], abs=1e-3)
    # Read on a grid at the common rate, the lower of 30 fps and the video's own.
    assert {fps: details.get("time_grid_fps") for fps, details in scores.items()} == {16: 16, 24: 24, 30: 30}


def test_with_a_tracked_reference_the_end_effector_scores_the_same_at_every_rate(folder: Path) -> None:
    # Both tracks from the tracker. The end effector (a point track) scores 1 at every rate, as at the
    # same rate; the object's region track differs by up to a pixel between renderings at two rates,
    # which DYN alone cannot tell from other motion (its score stays below 1 there: tracker noise). Before,
    # the end effector scored 0.23 at 16 fps and 0.09 at 24.
    scores = _scores(folder, "tracked_reference")
    ee = {fps: details["tracks"]["ee"]["score"] for fps, details in scores.items()}  # type: ignore[index]
    assert ee[30] == 1.0 and ee[16] == pytest.approx(1.0, abs=1e-3) and ee[24] == pytest.approx(1.0, abs=1e-3)


def test_time_stamps_rounded_by_the_container_are_read_on_the_frame_grid(folder: Path) -> None:
    # Matroska stores 1/16 s as 0.063 s: read as the 16-fps frame it is, the same frames score the same
    # in MP4 (stamps in 1/16384 s) and Matroska, not with a jitter of half a millisecond.
    mp4, mkv = _scores(folder, "reference_state")[16], _scores(folder, "reference_state", ".mkv")[16]
    assert mkv["tracks"]["ee"] == mp4["tracks"]["ee"]  # type: ignore[index]


@pytest.mark.parametrize("metric", ["ta_hsd", "ol_average_precision"])
def test_an_fps_above_the_videos_own_rate_is_lowered_to_it(folder: Path, metric: str) -> None:
    # fps=30 on a 16-fps video against the 30-fps reference: the video kept its own 49 frames and the
    # reference gave 91, paired by index; ta_* left the item unscored ("its trajectory ends early", though
    # it covers the same 3 s) and ol_* scored AP 0.06 instead of 0.63. Now both are read at 16 fps.
    item = Item(item_id="gen16", video=str(folder / "gen16.mp4"), reference_video=str(folder / "ref.mp4"),
                state=str(folder / "state.npz"))
    spec = get_metric(metric)
    default = spec.compute(item)
    with video_warnings() as warned:
        high = spec.compute(item, spec.make_config({"fps": 30}))
    assert high.scored, high.details
    assert high.value == pytest.approx(default.value)
    rates = {k: high.details[k] for k in ("pairing_fps", "fps_configured", "video_fps", "reference_fps")}
    assert rates == {"pairing_fps": 16.0, "fps_configured": 30.0, "video_fps": 16.0, "reference_fps": 30.0}
    assert any("fps=30 is above the video's own 16 fps" in w for w in warned)
    assert default.details["pairing_fps"] == 16.0 and default.details["fps_configured"] is None
