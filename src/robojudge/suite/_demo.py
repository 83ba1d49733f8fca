"""A small built-in suite of synthetic rollouts, so ``robojudge demo`` and the tests have real videos.

Each episode is a top-down 2D scene drawn with OpenCV: a two-finger gripper moves to a block, closes,
carries it to a target square and lets go. "Generators" alter the same episode in known ways, so the
videos carry planted failures with a known ranking. The simulator-grounded suite (its own module)
supersedes this one as the demo once it lands; this stays as a fast, dependency-free fixture.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from robojudge.video import write_video

W, H = 256, 192
FPS = 8.0
N_FRAMES = 33  # 4 s at 8 fps, plus the first frame

COLORS = {"red": (220, 50, 50), "blue": (50, 90, 220), "green": (40, 170, 70)}


@dataclass(frozen=True)
class Episode:
    """Positions per frame: gripper centre, block centre, whether the gripper is closed."""

    gripper: np.ndarray  # (T, 2) float
    block: np.ndarray  # (T, 2) float
    closed: np.ndarray  # (T,) bool
    target: tuple[int, int]
    color: str


def _plan_episode(rng: np.random.Generator, color: str) -> Episode:
    start = np.array([rng.uniform(30, 70), rng.uniform(30, 60)])
    block0 = np.array([rng.uniform(70, 120), rng.uniform(110, 160)])
    target = (int(rng.uniform(170, 225)), int(rng.uniform(40, 150)))
    t = np.arange(N_FRAMES)
    reach, grasp, carry = 10, 14, 28  # frame where each phase ends
    gripper = np.zeros((N_FRAMES, 2))
    block = np.zeros((N_FRAMES, 2))
    for i in t:
        if i <= reach:
            s = i / reach
            g = start + (block0 - start) * (3 * s**2 - 2 * s**3)  # smooth start and stop
        elif i <= grasp:
            g = block0
        elif i <= carry:
            s = (i - grasp) / (carry - grasp)
            g = block0 + (np.array(target, float) - block0) * (3 * s**2 - 2 * s**3)
        else:
            g = np.array(target, float)
        gripper[i] = g
        block[i] = g if grasp <= i <= carry else (block0 if i < grasp else np.array(target, float))
    closed = (t >= grasp - 1) & (t <= carry)
    return Episode(gripper, block, closed, target, color)


def _background(rng: np.random.Generator) -> np.ndarray:
    # A wooden-looking table: low-frequency texture so codecs and pixel metrics see real content.
    noise = rng.normal(0, 1, (H // 8, W // 8)).astype(np.float32)
    tex = cv2.resize(noise, (W, H), interpolation=cv2.INTER_CUBIC)
    base = np.stack([150 + 12 * tex, 120 + 10 * tex, 90 + 8 * tex], axis=-1)
    return np.clip(base, 0, 255).astype(np.uint8)


def _draw(bg: np.ndarray, ep: Episode, i: int, *, block_visible: bool = True) -> np.ndarray:
    img = bg.copy()
    tx, ty = ep.target
    cv2.rectangle(img, (tx - 16, ty - 16), (tx + 16, ty + 16), (240, 240, 240), 2)
    if block_visible:
        bx, by = ep.block[i].round().astype(int)
        cv2.rectangle(img, (bx - 9, by - 9), (bx + 9, by + 9), COLORS[ep.color], -1)
    gx, gy = ep.gripper[i].round().astype(int)
    gap = 10 if ep.closed[i] else 16
    cv2.rectangle(img, (gx - gap - 4, gy - 14), (gx - gap, gy + 10), (40, 40, 40), -1)
    cv2.rectangle(img, (gx + gap, gy - 14), (gx + gap + 4, gy + 10), (40, 40, 40), -1)
    cv2.rectangle(img, (gx - gap - 4, gy - 20), (gx + gap + 4, gy - 14), (60, 60, 60), -1)
    return img


def _render(bg: np.ndarray, ep: Episode, hidden: range = range(0)) -> np.ndarray:
    return np.stack([_draw(bg, ep, i, block_visible=i not in hidden) for i in range(N_FRAMES)])


# Each generator: (episode, background, rng) -> frames, and its planted labels (pa, ia, evidence).
Generator = Callable[[Episode, np.ndarray, np.random.Generator], np.ndarray]


def _faithful(ep: Episode, bg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return _render(bg, ep)


def _flicker(ep: Episode, bg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    frames = _render(bg, ep).astype(np.int16)
    for i in rng.choice(np.arange(2, N_FRAMES), size=8, replace=False):
        frames[i] += int(rng.choice([-1, 1]) * rng.uniform(45, 70))
    return np.clip(frames, 0, 255).astype(np.uint8)


def _teleport(ep: Episode, bg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    block = ep.block.copy()
    jump = int(rng.integers(5, 12))
    block[jump:14] += np.array([rng.uniform(40, 60), rng.uniform(-50, -30)])
    return _render(bg, Episode(ep.gripper, block, ep.closed, ep.target, ep.color))


def _vanish(ep: Episode, bg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    start = int(rng.integers(16, 20))
    return _render(bg, ep, hidden=range(start, start + 8))


def _stalled(ep: Episode, bg: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # The arm stops halfway to the block and the video freezes: consistent pixels, task not done.
    stop = int(rng.integers(5, 8))
    frames = _render(bg, ep)
    frames[stop:] = frames[stop]
    return frames


GENERATORS: dict[str, tuple[Generator, int, int, str]] = {
    "faithful": (_faithful, 5, 5, "smooth reach, grasp, carry and place"),
    "flicker": (_flicker, 3, 5, "global brightness flicker on several frames"),
    "teleport": (_teleport, 2, 4, "the block jumps away before it is grasped, then jumps back"),
    "vanish": (_vanish, 2, 3, "the block disappears from the gripper while it is carried"),
    "stalled": (_stalled, 4, 1, "the arm stops before reaching the block; frames freeze"),
}


def make_synthetic_suite(out_dir: str | Path, *, episodes: int = 4, seed: int = 0) -> Path:
    """Write the synthetic demo suite to ``out_dir`` and return the manifest path.

    The suite holds ``episodes * len(GENERATORS)`` rollouts, a reference video per episode, and one
    deliberately broken video (a truncated file) to show that a bad item costs only itself.
    Output is deterministic for a seed.
    """
    out = Path(out_dir)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []
    for e in range(episodes):
        color = list(COLORS)[e % len(COLORS)]
        ep = _plan_episode(rng, color)
        bg = _background(rng)
        clip = f"ep{e:02d}"
        ref = f"reference/{clip}.mp4"
        write_video(out / ref, _render(bg, ep), fps=FPS)
        instruction = f"pick up the {color} block and place it in the white square"
        for name, (gen, pa, ia, evidence) in GENERATORS.items():
            frames = gen(ep, bg, np.random.default_rng([seed, e, len(name)]))
            rel = f"videos/{clip}_{name}.mp4"
            write_video(out / rel, frames, fps=FPS)
            rows.append(
                {
                    "item_id": f"{clip}-{name}",
                    "video": rel,
                    "instruction": instruction,
                    "reference_video": ref,
                    "source": "synthetic-2d",
                    "clip_id": clip,
                    "generator": name,
                    "embodiment": "gripper",
                    "task": "pick_and_place",
                    "split": "test",
                    "labels": {"pa": pa, "ia": ia, "evidence": evidence, "rater": "planted"},
                }
            )
    # A broken rollout: the first third of a real mp4. Its index declares all the frames, the data holds
    # only the first few, so sampling it is a "truncated" error and the item costs only its own rows.
    good = (out / rows[0]["video"]).read_bytes()  # type: ignore[operator]
    (out / "videos" / "broken_truncated.mp4").write_bytes(good[: len(good) // 3])
    rows.append(
        {
            "item_id": "ep00-broken",
            "video": "videos/broken_truncated.mp4",
            "instruction": rows[0]["instruction"],
            "source": "synthetic-2d",
            "clip_id": "ep00",
            "generator": "broken",
            "embodiment": "gripper",
            "split": "test",
        }
    )
    manifest = out / "suite.jsonl"
    # Written last and whole (a temporary file renamed over it): a build killed before the end leaves
    # no manifest, so the next build starts again instead of reusing half a suite.
    partial = manifest.with_name(manifest.name + ".partial")
    partial.write_text("".join(json.dumps(r) + "\n" for r in rows))
    partial.replace(manifest)
    return manifest
