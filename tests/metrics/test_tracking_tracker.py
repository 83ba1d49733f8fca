"""The weights-free tracker on synthetic videos with a known path (written and decoded as mp4)."""

import numpy as np
import pytest

from robojudge.metrics.tracking import Target, TrackSeed, get_tracker
from robojudge.video import sample_frames, write_video

SIZE, FRAMES, SIDE = 96, 30, 10


def path(t: np.ndarray) -> np.ndarray:
    """True top-left corner of the square at frame t: drifts right, bobs up and down (pixels)."""
    return np.stack([15 + 1.8 * t, 40 + 12 * np.sin(t / 5)], axis=-1)


def background() -> np.ndarray:
    rng = np.random.default_rng(0)
    noise = rng.integers(90, 160, size=(SIZE // 4, SIZE // 4), dtype=np.uint8)
    gray = np.kron(noise, np.ones((4, 4), np.uint8))  # 4x4 gray blocks: texture, no colour
    return np.repeat(gray[..., None], 3, axis=2)


def render(hidden: range = range(0)) -> tuple[np.ndarray, np.ndarray]:
    frames, corners = [], path(np.arange(FRAMES, dtype=np.float64))
    for t in range(FRAMES):
        img = background().copy()
        if t not in hidden:
            x, y = np.round(corners[t]).astype(int)
            img[y : y + SIDE, x : x + SIDE] = (200, 30, 30)
        frames.append(img)
    return np.stack(frames), np.round(corners) + SIDE / 2  # centre of the drawn square


def seed_for(frames: np.ndarray, centre: np.ndarray) -> TrackSeed:
    mask = np.zeros((SIZE, SIZE), bool)  # the drawn square on frame 0, as a simulator would give it
    x, y = np.round(path(np.zeros(1))[0]).astype(int)
    mask[y : y + SIDE, x : x + SIDE] = True
    return TrackSeed((Target("square", (float(centre[0]), float(centre[1])), mask=mask),), (SIZE, SIZE))


@pytest.fixture()
def decoded(tmp_path):
    def write(frames: np.ndarray) -> np.ndarray:
        out = write_video(tmp_path / "square.mp4", frames, fps=10)
        return sample_frames(out, fps=None, max_frames=None).frames

    return write


def test_follows_a_moving_square(decoded):
    frames, centre = render()
    video = decoded(frames)
    tracks = get_tracker().track(video, seed_for(video, centre[0]))
    err = np.linalg.norm(tracks.points[:, 0] - centre, axis=1)
    # Tolerance: the mask centroid after mp4 compression moves by well under a pixel.
    assert np.all(np.isfinite(err)) and err.max() < 1.5 and np.median(err) < 0.75
    assert tracks.confidence.min() > 0.5
    w = tracks.boxes[:, 0, 2] - tracks.boxes[:, 0, 0]
    assert np.allclose(w, SIDE, atol=1.0)  # box keeps the square's size


def test_lost_under_occlusion_and_redetected(decoded):
    hidden = range(12, 17)
    frames, centre = render(hidden)
    video = decoded(frames)
    tracks = get_tracker().track(video, seed_for(video, centre[0]))
    pts = tracks.points[:, 0]
    assert np.isnan(pts[list(hidden)]).all()  # no phantom position while the square is gone
    assert (tracks.confidence[list(hidden), 0] == 0).all()
    after = np.linalg.norm(pts[hidden.stop :] - centre[hidden.stop :], axis=1)
    assert after.max() < 1.5  # found again on its first frame back, where it had moved ~9 px
    assert tracks.info["redetections"] == 1 and tracks.info["lost_frames"] == len(hidden)


def test_point_target_on_a_textured_patch(decoded):
    rng = np.random.default_rng(3)
    patch = rng.integers(0, 255, size=(14, 14, 3), dtype=np.uint8)
    frames, corners = [], np.stack([20 + 1.5 * np.arange(FRAMES), 30 + 0.8 * np.arange(FRAMES)], axis=1)
    for t in range(FRAMES):
        img = np.full((SIZE, SIZE, 3), 128, np.uint8)
        x, y = np.round(corners[t]).astype(int)
        img[y : y + 14, x : x + 14] = patch
        frames.append(img)
    video = decoded(np.stack(frames))
    truth = np.round(corners) + 7.0
    support = np.zeros((SIZE, SIZE), bool)
    support[30:44, 20:34] = True
    seed = TrackSeed((Target("p", (27.0, 37.0), support=support),), (SIZE, SIZE))
    pts = get_tracker().track(video, seed).points[:, 0]
    assert np.linalg.norm(pts - truth, axis=1).max() < 1.5


def test_empty_mask_is_never_found(decoded):
    frames, centre = render()
    video = decoded(frames)
    empty = Target("nothing", (5.0, 5.0), mask=np.zeros((SIZE, SIZE), bool))
    seed = TrackSeed((empty, *seed_for(video, centre[0]).targets), (SIZE, SIZE))
    tracks = get_tracker().track(video, seed)
    assert np.isnan(tracks.points[:, 0]).all() and (tracks.confidence[:, 0] == 0).all()
    assert np.isfinite(tracks.points[:, 1]).all()  # the other target is unaffected


def test_seed_and_video_must_agree():
    seed = TrackSeed((Target("p", (1.0, 1.0)),), (32, 32))
    with pytest.raises(ValueError, match="seed is for 32x32"):
        get_tracker().track(np.zeros((2, 16, 16, 3), np.uint8), seed)
    with pytest.raises(ValueError, match="unique"):
        TrackSeed((Target("p", (1.0, 1.0)), Target("p", (2.0, 2.0))), (32, 32))
