"""A video whose decoded frames would not fit in memory is refused before decoding, with what to do.

Without the check a long real episode read at native size (every frame, as the flow metrics do) asks
the kernel for tens of GiB and is killed, and the run with it. The budget comes from
``ROBOJUDGE_FRAME_MEMORY_GIB`` or from the memory available (see ``robojudge.video._memory``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robojudge.run import build_requests, score_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import VideoError, sample_frames, write_video
from robojudge.video._memory import available_memory, frame_budget

GIB = 1024**3
W, H, N = 64, 48, 40  # every frame: 64 * 48 * 3 = 9,216 bytes; all of them 368,640


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    canvas = rng.integers(0, 256, (H + 40, W + 80, 3), dtype=np.uint8)
    frames = np.stack([canvas[i % 40:i % 40 + H, 2 * i:2 * i + W] for i in range(N)])
    return write_video(tmp_path / "clip.mp4", frames, fps=10)


def test_a_sampling_over_the_budget_is_refused_before_decoding(clip: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", str(300_000 / GIB))  # between 30 and 40 frames
    with pytest.raises(VideoError) as info:
        sample_frames(clip, fps=None, max_frames=None)
    message = str(info.value)
    assert str(clip) in message and f"{N} frames of {W}x{H} would hold 360 KiB" in message
    assert "more than the 293 KiB allowed (ROBOJUDGE_FRAME_MEMORY_GIB=" in message
    with pytest.raises(VideoError, match=f"{N} frames of {W}x{H} read at 128x96 would hold 1.4 MiB"):
        sample_frames(clip, fps=None, max_frames=None, size=128)
    assert "--max-side 640" in message and "--max-frames" in message
    assert "robojudge metrics info METRIC lists them" in message  # a metric sampling at its own settings
    assert "robojudge judge --size" in message  # judge has no --max-side (an audit of bad input)
    assert "ROBOJUDGE_FRAME_MEMORY_GIB=" in message
    # What fits is read as before: fewer frames, gray (a third of the bytes), or a smaller size.
    assert len(sample_frames(clip, fps=None, max_frames=30)) == 30
    assert sample_frames(clip, fps=None, max_frames=None, gray=True).frames.shape == (N, H, W)
    assert sample_frames(clip, fps=None, max_frames=None, size=32).frames.shape == (N, 24, 32, 3)
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "0")  # no limit
    assert len(sample_frames(clip, fps=None, max_frames=None)) == N


def test_a_frame_folder_is_held_to_the_same_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cv2

    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(N):
        cv2.imwrite(str(folder / f"{i:04d}.png"), np.full((H, W, 3), 5 * i, np.uint8))
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", str(300_000 / GIB))
    with pytest.raises(VideoError, match=f"{N} frames of {W}x{H} would hold"):
        sample_frames(folder, fps=None, max_frames=None)
    assert len(sample_frames(folder, fps=None, max_frames=20)) == 20


def test_the_metric_gets_an_error_row_and_the_run_goes_on(clip: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", str(300_000 / GIB))
    items = [Item(item_id="long", video=str(clip), instruction="push")]
    with ResultStore(tmp_path / "r.sqlite") as store:
        s = score_items(items, build_requests(["cc_photometric", "uniform_random"]), store)
        rows = {r.metric: r for r in store.rows()}
    # cc_photometric reads every frame at native size: refused; the item's other metric is scored.
    assert rows["cc_photometric"].status == "error" and (s.ok, s.failed) == (1, 1)
    error = rows["cc_photometric"].error or ""
    assert error.startswith(f"video error: {clip}: {N} frames of {W}x{H} would hold 360 KiB"), error
    assert rows["uniform_random"].status == "ok"


def test_a_bad_value_names_the_variable(clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "lots")
    with pytest.raises(ValueError, match="ROBOJUDGE_FRAME_MEMORY_GIB='lots': expected a number of GiB >= 0"):
        sample_frames(clip, fps=None, max_frames=None)


def test_available_memory_is_meminfo_capped_by_the_control_group(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemAvailable:    4194304 kB\n")  # 4 GiB
    proc = tmp_path / "cgroup"
    root = tmp_path / "sys"
    # cgroup v2, a job limited to 1 GiB of which 256 MiB is used: 768 MiB left
    proc.write_text("0::/slurm/job7\n")
    (root / "slurm" / "job7").mkdir(parents=True)
    (root / "slurm" / "job7" / "memory.max").write_text(str(GIB))
    (root / "slurm" / "job7" / "memory.current").write_text(str(256 * 1024**2))
    assert available_memory(meminfo, proc, root) == 768 * 1024**2
    (root / "slurm" / "job7" / "memory.max").write_text("max\n")  # no limit: MemAvailable
    assert available_memory(meminfo, proc, root) == 4 * GIB
    # cgroup v1, the memory controller's limit at the mount's root (inside a container)
    proc.write_text("4:memory:/docker/abc\n3:cpu:/\n")
    (root / "memory").mkdir()
    (root / "memory" / "memory.limit_in_bytes").write_text(str(2 * GIB))
    (root / "memory" / "memory.usage_in_bytes").write_text(str(GIB // 2))
    assert available_memory(meminfo, proc, root) == GIB + GIB // 2
    (root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712")  # v1's "no limit"
    assert available_memory(meminfo, proc, root) == 4 * GIB
    # Windows: no /proc, no os.sysconf, no limit
    assert available_memory(tmp_path / "none", tmp_path / "none", root, sysconf_names=()) is None
    monkeypatch.delenv("ROBOJUDGE_FRAME_MEMORY_GIB", raising=False)
    budget = frame_budget()
    assert budget is None or budget[1].startswith("50% of the ")


def test_worker_processes_share_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.video import set_frame_memory_share

    monkeypatch.delenv("ROBOJUDGE_FRAME_MEMORY_GIB", raising=False)
    import robojudge.video._memory as memory

    monkeypatch.setattr(memory, "_memory_room", lambda: (10 * GIB, "memory available now"))
    assert frame_budget() == (5 * GIB, "50% of the 10.0 GiB of memory available now")
    try:
        set_frame_memory_share(0.5)  # what each of 2 workers of a LocalProcessExecutor gets
        assert frame_budget() == (5 * GIB // 2, "50% of the 10.0 GiB of memory available now, shared by 2 "
                                                "worker processes")
        monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "4")  # given: per process, not shared
        assert frame_budget() == (4 * GIB, "ROBOJUDGE_FRAME_MEMORY_GIB=4")
    finally:
        set_frame_memory_share(1.0)
    with pytest.raises(ValueError):
        set_frame_memory_share(0)


@pytest.mark.parametrize("media", ["open", "deep"])
def test_suite_validate_warns_of_a_video_too_large_to_read_whole(clip: Path, monkeypatch: pytest.MonkeyPatch,
                                                                media: str) -> None:
    from robojudge.suite import validate_manifest

    manifest = clip.with_name("suite.jsonl")
    manifest.write_text('{"item_id": "long", "video": "clip.mp4"}\n')
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", str(300_000 / GIB))
    (problem,) = validate_manifest(manifest, media=media)
    assert not problem.is_error and problem.field == "video"
    said = str(problem)
    assert f"its {N} frames of {W}x{H} would hold 360 KiB decoded, more than the 293 KiB allowed" in said
    assert "--max-side 640" in said
    monkeypatch.setenv("ROBOJUDGE_FRAME_MEMORY_GIB", "0")
    assert validate_manifest(manifest, media=media) == []


_UNDER_ULIMIT_V = """
import resource, sys
from robojudge.video import VideoError, sample_frames

status = open("/proc/self/status").read().splitlines()
used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (used + int(sys.argv[2]), resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    sample_frames(sys.argv[1], fps=None, max_frames=None)
except VideoError as exc:
    print("refused:", exc)
except MemoryError as exc:
    print("numpy:", exc)
else:
    print("read")
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the virtual size from /proc")
def test_an_address_space_limit_caps_the_budget(tmp_path: Path) -> None:
    frames = np.zeros((100, 240, 320, 3), np.uint8)  # 23 MiB decoded
    clip = write_video(tmp_path / "big.mp4", frames, fps=10)
    env = {k: v for k, v in os.environ.items() if k != "ROBOJUDGE_FRAME_MEMORY_GIB"}
    done = subprocess.run([sys.executable, "-c", _UNDER_ULIMIT_V, str(clip), str(32 * 1024**2)], env=env,
                          capture_output=True, text=True, timeout=120)
    # Before, ulimit -v was not counted: the read went ahead and failed in NumPy ("Unable to allocate").
    assert done.stdout.startswith("refused:"), done.stdout + done.stderr
    assert "100 frames of 320x240 would hold 22.0 MiB" in done.stdout
    assert "this process may still map under its address-space limit (ulimit -v)" in done.stdout
    assert "--max-side 640" in done.stdout


def test_without_proc_the_budget_comes_from_sysconf(tmp_path: Path) -> None:
    # Before, without /proc (macOS, the BSDs) there was no budget at all: a 17 GiB native read of 3,000
    # 1080p frames was let through on a 16 GB laptop, which then swapped.
    none = tmp_path / "none"
    total = next(int(ln.split()[1]) * 1024 for ln in Path("/proc/meminfo").read_text().splitlines()
                 if ln.startswith("MemTotal:"))
    room = available_memory(none, none, none)  # here: SC_AVPHYS_PAGES, the free memory
    assert room is not None and 0 < room <= total

    from robojudge.video._memory import _memory_room

    # macOS has SC_PHYS_PAGES and no SC_AVPHYS_PAGES: the physical memory, as MemTotal counts it
    assert _memory_room(none, none, none, sysconf_names={"SC_PHYS_PAGES"}) == (total, "physical memory")
    _, what = _memory_room(none, none, none, sysconf_names={"SC_PHYS_PAGES", "SC_AVPHYS_PAGES"})
    assert what == "memory available now"


def test_suite_validate_checks_the_budget_of_each_worker_score_will_run(
        clip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The clip's 40 frames hold 368,640 bytes; 1,000,000 bytes of memory available give one worker
    # 500,000 bytes and each of two 250,000. `suite validate` said ok, then `score -w 2` refused the clip.
    from typer.testing import CliRunner

    import robojudge.video._memory as memory
    from robojudge.cli import build_app

    monkeypatch.delenv("ROBOJUDGE_FRAME_MEMORY_GIB", raising=False)
    monkeypatch.setattr(memory, "_memory_room", lambda: (1_000_000, "memory available now"))
    manifest = clip.with_name("suite.jsonl")
    manifest.write_text('{"item_id": "long", "video": "clip.mp4"}\n')
    app = build_app("suite")
    one = CliRunner().invoke(app, ["suite", "validate", str(manifest), "--no-progress"])
    assert one.exit_code == 0 and "ok:" in one.output and "warning" not in one.output, one.output
    two = CliRunner().invoke(app, ["suite", "validate", str(manifest), "--no-progress", "-w", "2"])
    said = " ".join(two.output.split())
    assert two.exit_code == 0 and "(1 warning)" in said, two.output
    assert ("more than the 244 KiB allowed (50% of the 977 KiB of memory available now, shared by 2 worker "
            "processes)") in said
    assert frame_budget() == (500_000, "50% of the 977 KiB of memory available now")  # the share restored
