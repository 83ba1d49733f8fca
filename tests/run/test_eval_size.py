"""One evaluation size for every video (issue 14 item 6, item 3's max_side, item 9's frame cap).

A row records the size its metric read the item's main video at (``details["frame_size"]``);
``--size`` scales every video's longer side to one value for the metrics that read frames at native
size, ``--max-side`` only scales down large ones, ``--max-frames`` reads the start of each video. The
other metrics keep their own fixed sizes. Settings at their default leave config hashes (and so the
stored results) as they were.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.metrics import FrameOptions, get_metric, takes_frame_options
from robojudge.metrics import functional as F
from robojudge.metrics._registry import hash_config_values
from robojudge.run import build_requests, score_suite
from robojudge.store import ResultStore
from robojudge.video import frame_cache, frame_sizes, sample_frames, write_video

NATIVE = ("cc_photometric", "ctg_camera_control", "mq_dynamic_degree", "mq_flow_score",
          "mq_temporal_flickering", "rbg_stability")


def _moving(w: int, h: int, n: int = 10, seed: int = 0) -> np.ndarray:
    """A textured scene panning 2 px per frame: flow metrics have something to measure."""
    rng = np.random.default_rng(seed)
    base = (rng.random((h // 4 + 8, w // 4 + 8 + n, 3)) * 255).astype(np.uint8)
    big = np.kron(base, np.ones((4, 4, 1), np.uint8))
    return np.stack([big[:h, 2 * i : 2 * i + w] for i in range(n)])


@pytest.fixture
def suite(tmp_path):
    rows = []
    for gen, (w, h) in {"hd": (160, 96), "sd": (80, 48)}.items():
        for k in range(2):
            path = write_video(tmp_path / f"{gen}{k}.mp4", _moving(w, h, seed=k), fps=8)
            rows.append({"item_id": f"{gen}{k}", "video": str(path), "generator": gen})
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return manifest


def _rows(db_url: str, metric: str) -> dict[str, dict]:
    with ResultStore(db_url, read_only=True) as store:
        return {r.item_id: r for r in store.rows() if r.metric == metric}


def test_the_native_size_metrics_take_frame_options():
    assert {m for m in NATIVE if takes_frame_options(m)} == set(NATIVE)
    assert not takes_frame_options("pixel_frame_consistency")  # 256x256 by definition
    assert not takes_frame_options("iq1_psnr")


@pytest.mark.parametrize("metric", NATIVE)
def test_new_settings_at_their_default_keep_the_config_hash(metric):
    spec = get_metric(metric)
    cfg = spec.make_config()
    later = ("max_side", "max_frames", "profile", "resample", "magnitude_dtype")
    before = {k: v for k, v in cfg.model_dump(mode="json").items() if k not in later}
    assert spec.config_hash(cfg) == hash_config_values(before)  # what robojudge stored before them
    assert spec.config_hash(spec.make_config({"max_side": 320})) != spec.config_hash(cfg)
    assert spec.config_hash(spec.make_config({"max_frames": 50})) != spec.config_hash(cfg)
    assert spec.config_hash(spec.make_config({"resample": "fast"})) != spec.config_hash(cfg)


def test_frame_sizes_records_each_sampling_hits_included(tmp_path):
    path = write_video(tmp_path / "v.mp4", _moving(64, 32), fps=8)
    with frame_cache(), frame_sizes() as outer:
        sample_frames(path, fps=None, max_frames=None)
        with frame_sizes() as inner:
            sample_frames(path, fps=None, max_frames=None)  # a cache hit still counts
            sample_frames(path, fps=None, max_frames=None, size=32)
    assert inner == {str(path): ["64x32", "32x16"]}
    assert outer == {str(path): ["64x32", "32x16"]}


def test_head_spread_keeps_the_first_frames(tmp_path):
    frames = np.stack([np.full((16, 16, 3), 10 * i, np.uint8) for i in range(12)])
    path = write_video(tmp_path / "ramp.mp4", frames, fps=8)
    got = sample_frames(path, fps=None, max_frames=5, spread="head")
    assert got.indices.tolist() == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(got.frames.mean(axis=(1, 2, 3)), [10 * i for i in range(5)], atol=3)


def test_size_rescales_native_metrics_only_and_records_it(suite, tmp_path):
    run = score_suite(suite, ["mq_flow_score", "pixel_frame_consistency"], run_dir=tmp_path / "a",
                      frames=FrameOptions(size=40))
    assert run.frame_options_applied == ["mq_flow_score"]
    flow = _rows(run.db_url, "mq_flow_score")
    assert {k: r.details["frame_size"] for k, r in flow.items()} == {
        "hd0": "40x24", "hd1": "40x24", "sd0": "40x24", "sd1": "40x24"}
    assert flow["hd0"].config["size"] == 40
    pixel = _rows(run.db_url, "pixel_frame_consistency")
    assert {r.details["frame_size"] for r in pixel.values()} == {"256x256"}
    # The value is the metric's on the frames sample_frames gives at that size.
    frames = sample_frames(suite.parent / "hd0.mp4", fps=None, max_frames=None,
                           size=40, gray=True).frames
    expected = F.motion_magnitude(frames, F.NATIVE_FLOW)
    assert flow["hd0"].value == pytest.approx(expected, rel=1e-9)


def test_without_size_the_native_sizes_are_recorded(suite, tmp_path):
    run = score_suite(suite, ["mq_flow_score"], run_dir=tmp_path / "b")
    assert run.frame_options_applied == []
    flow = _rows(run.db_url, "mq_flow_score")
    assert {k: r.details["frame_size"] for k, r in flow.items()} == {
        "hd0": "160x96", "hd1": "160x96", "sd0": "80x48", "sd1": "80x48"}


def test_max_side_caps_only_large_videos(suite, tmp_path):
    run = score_suite(suite, ["mq_temporal_flickering"], run_dir=tmp_path / "c",
                      frames=FrameOptions(max_side=100))
    rows = _rows(run.db_url, "mq_temporal_flickering")
    assert rows["hd0"].details["frame_size"] == "100x60"
    assert rows["sd0"].details["frame_size"] == "80x48"  # already within the cap: native


def test_own_setting_wins_over_the_run_wide_one():
    (req,) = build_requests(["mq_flow_score"], {"mq_flow_score": {"size": 64}}, FrameOptions(size=32))
    assert req.config.size == 64


def test_max_frames_reads_the_start(suite, tmp_path):
    run = score_suite(suite, ["mq_flow_score"], run_dir=tmp_path / "d", frames=FrameOptions(max_frames=4))
    rows = _rows(run.db_url, "mq_flow_score")
    assert {r.details["frames"] for r in rows.values()} == {4}
    frames = sample_frames(suite.parent / "sd1.mp4", fps=None, max_frames=None, gray=True).frames[:4]
    assert rows["sd1"].value == pytest.approx(F.motion_magnitude(frames, F.NATIVE_FLOW), rel=1e-9)


def test_bad_frame_options_are_refused():
    with pytest.raises(ValueError, match="max_frames"):
        FrameOptions(max_frames=1)
    with pytest.raises(ValueError, match="size"):
        FrameOptions(size=0)


def test_cli_size_says_where_it_applied(suite, tmp_path):
    out = CliRunner().invoke(app, ["score", str(suite), "-m", "mq_flow_score,pixel_frame_consistency",
                                   "--run-dir", str(tmp_path / "e"), "--size", "48", "--no-progress"])
    assert out.exit_code == 0, out.output
    assert "--size 48 applied to mq_flow_score" in out.output
    out = CliRunner().invoke(app, ["score", str(suite), "-m", "pixel_frame_consistency",
                                   "--run-dir", str(tmp_path / "f"), "--size", "48", "--no-progress"])
    assert out.exit_code == 0, out.output
    assert "applied to no requested metric" in out.output


def test_cli_size_line_says_which_set_won(suite, tmp_path):
    """Audit config F6: "--size 64 applied to M" was printed when --set M.size=96 had replaced it."""
    out = CliRunner().invoke(app, ["score", str(suite), "-m", "mq_flow_score,mq_temporal_flickering",
                                   "--run-dir", str(tmp_path / "g"), "--size", "48", "--set",
                                   "mq_temporal_flickering.size=40", "--no-progress"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert ("--size 48 applied to mq_flow_score; for mq_temporal_flickering --set "
            "mq_temporal_flickering.size=40 won over --size 48;") in said
    assert "applied to mq_flow_score, mq_temporal_flickering" not in said
    rows = _rows(f"sqlite:///{tmp_path / 'g' / 'results.sqlite'}", "mq_temporal_flickering")
    assert {r.config["size"] for r in rows.values()} == {40}
    out = CliRunner().invoke(app, ["score", str(suite), "-m", "mq_temporal_flickering", "--run-dir",
                                   str(tmp_path / "h"), "--fast", "--set",
                                   "mq_temporal_flickering.profile=native", "--no-progress"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert ("applied to no requested metric as given: for mq_temporal_flickering --set "
            "mq_temporal_flickering.profile=native won over --fast") in said
    # a size wins over a run-wide --max-side too: the line said the cap applied (review rev12 F3)
    out = CliRunner().invoke(app, ["score", str(suite), "-m", "mq_flow_score,mq_temporal_flickering",
                                   "--run-dir", str(tmp_path / "i"), "--max-side", "32", "--set",
                                   "mq_temporal_flickering.size=40", "--no-progress"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert ("--max-side 32 applied to mq_flow_score; for mq_temporal_flickering --set "
            "mq_temporal_flickering.size=40 won over --max-side 32") in said
