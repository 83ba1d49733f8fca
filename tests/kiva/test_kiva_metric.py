"""The ``kiva`` metrics: registration, refusals, and a stretched link flagged through the reader's tracks."""

from __future__ import annotations

import json
import math
import shutil
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from robojudge.metrics import MetricInputError, Provider, get_metric
from robojudge.suite import Item, load_suite
from robojudge.video import write_video

PARTS = ("kiva", "kiva_rigidity", "kiva_jerk")


def _video(path: Path, n: int) -> Item:
    frames = np.random.default_rng(0).integers(0, 256, (n, 48, 64, 3), dtype=np.uint8)
    write_video(path, frames, fps=10)
    return Item(item_id=path.stem, video=str(path))


@pytest.mark.parametrize("metric", PARTS)
def test_registered_lower_is_better_percent_of_segments_with_the_paper_cited(metric):
    spec = get_metric(metric)
    assert spec.higher_is_better is False and spec.native_range == (0.0, 100.0)
    assert "RoboWorM" in spec.citation and "Fig. 3a" in spec.citation
    assert spec.provider is Provider.model and spec.weights == ()  # a user-trained reader: no weights
    assert spec.make_config().reader is None


def test_all_leaves_them_out_and_says_why():
    from robojudge.metrics import expand_metric_ids
    from robojudge.metrics._select import not_run_summary

    assert not set(PARTS) & set(expand_metric_ids(["all"]))
    lines = not_run_summary()
    line = next(x for x in lines if x.strip().startswith("need a model you train"))
    assert all(m in line for m in PARTS) and "--set METRIC.reader=PATH" in line
    assert not any(m in x for x in lines if "no weights declared" in x for m in PARTS)


@pytest.mark.parametrize("metric", PARTS)
def test_a_video_shorter_than_a_segment_is_unmeasurable_with_a_reason(metric, tmp_path):
    score = get_metric(metric).compute(_video(tmp_path / "short.mp4", 10))
    assert math.isnan(score.value)
    assert "10 frames" in score.details["unscored_reason"] and score.details["frames"] == 10


def test_without_a_reader_the_error_says_how_to_get_one(tmp_path):
    item = _video(tmp_path / "clip.mp4", 20)
    spec = get_metric("kiva")
    with pytest.raises(MetricInputError, match="robojudge kiva train"):
        spec.compute(item)
    with pytest.raises(MetricInputError, match="no KIVA reader at .*nowhere"):
        spec.compute(item, spec.make_config({"reader": str(tmp_path / "nowhere")}))


# ------------------------------------------------------------------ with a trained reader (slow)


def _rollout(suite: Path, name: str = "fetch00-oracle") -> Item:
    return load_suite(suite).by_id(name)


@pytest.mark.slow
def test_a_calibrated_reader_scores_every_segment_of_a_rollout(tiny_reader, kiva_suite):
    from robojudge.kiva import load_reader

    reader = load_reader(tiny_reader)
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    score = spec.compute(_rollout(kiva_suite), cfg)
    assert score.scored and 0 <= score.value <= 100
    d = score.details
    assert [(s["start"], s["stop"]) for s in d["segments"]] == [(0, 16), (16, 32), (32, 48)]
    cal = reader.meta["calibration"]
    # One view and no 3D threshold: rigidity in 2D, and the details say why.
    finger = {k: cal[k] for k in ("finger", "finger_gap") if cal[k] is not None}
    # Fetch has a finger pair: a calibration since measure version 5 holds its gap's cut.
    assert cal["finger_gap"] is not None and cal["finger_gap"] > 0
    assert d["thresholds"] == {"rigidity": cal["rigidity"], "jerk": cal["jerk"], **finger,
                               "rigidity_3d": None}
    assert d["measure"] == "2d" and d["candidates"] == 5 and d["robot"] == "fetch"
    assert "no 3D rigidity threshold" in d["measure_2d_reason"]
    assert d["reader_data_sha256"] == reader.meta["data"]["sha256"]
    # Version 4: every link and keypoint against its own reference spread, and the details name the worst.
    assert d["part_scales"] is True and cal["scales"]["percentile"] == cal["percentile"]
    # Version 6: the thresholds were drawn on relative link lengths, and the rollout is judged on them.
    assert cal["lengths"] == "relative" and d["link_lengths"] == "relative"
    # Version 7: a segment's own jerk windows and the one reaching back a frame, as calibrated.
    assert cal["jerk_windows"] == "lead" and d["jerk_windows"] == "lead"
    names = reader.meta["keypoints"]
    assert all(s["worst_keypoint"] in names for s in d["segments"] if s["jerk"] is not None)
    links = {"-".join(names[i] for i in pair) for pair in reader.links}
    assert all(s["worst_link"] in links for s in d["segments"] if s["rigidity"] is not None)
    invalid = sum(bool(s["invalid"]) for s in d["segments"])
    assert score.value == pytest.approx(100 * invalid / d["measured_segments"])
    # The parts count their own verdicts; kiva is invalid where either is.
    rig = get_metric("kiva_rigidity").compute(_rollout(kiva_suite), cfg)
    jerk = get_metric("kiva_jerk").compute(_rollout(kiva_suite), cfg)
    # (None: a part not judged in that segment)
    judged = {p: [s[f"{p}_invalid"] for s in d["segments"] if s[f"{p}_invalid"] is not None]
              for p in ("rigidity", "jerk")}
    assert rig.value == pytest.approx(100 * np.mean(judged["rigidity"]))
    assert jerk.value == pytest.approx(100 * np.mean(judged["jerk"]))
    assert max(rig.value, jerk.value) <= score.value <= rig.value + jerk.value


@pytest.mark.slow
def test_kiva_flags_a_segment_whose_link_stretches_and_passes_the_same_segment_clean(
    tiny_reader, kiva_suite, monkeypatch
):
    import robojudge.metrics.learned.kiva as kiva_module
    from robojudge.kiva import load_reader

    reader = load_reader(tiny_reader)
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    item = _rollout(kiva_suite)
    clean = spec.compute(item, cfg)
    segs = clean.details["segments"]
    target = next(i for i, s in enumerate(segs) if s["invalid"] is False)  # a segment that passes clean
    start, stop = segs[target]["start"], segs[target]["stop"]
    real_read = kiva_module.read_frames
    stretched: dict[str, str] = {}

    def stretched_read(rdr, frames, fps):
        # The seam: the reader's own tracks, with the longest link it sees growing by 80% across the
        # chosen segment and keeping that length afterwards (no snap back, which would be a jump).
        tracks = real_read(rdr, frames, fps)
        pos, vis = tracks.positions, tracks.visible
        lengths = [np.median(np.linalg.norm(pos[vis[:, a] & vis[:, b], a] - pos[vis[:, a] & vis[:, b], b],
                                            axis=-1)) if (vis[:, a] & vis[:, b]).any() else 0.0
                   for a, b in reader.links]
        a, b = reader.links[int(np.argmax(lengths))]
        stretched["link"] = "-".join(reader.meta["keypoints"][i] for i in (a, b))
        scale = np.ones(len(pos))
        scale[start:stop] = np.linspace(1.0, 1.8, stop - start)
        scale[stop:] = 1.8
        pos[:, b] = pos[:, a] + (pos[:, b] - pos[:, a]) * scale[:, None]
        return tracks

    monkeypatch.setattr(kiva_module, "read_frames", stretched_read)
    monkeypatch.setattr(kiva_module, "_TRACKS", OrderedDict())  # not the clean tracks read above
    bad = spec.compute(item, cfg)
    after = bad.details["segments"]
    assert after[target]["invalid"] and after[target]["rigidity_invalid"], after[target]
    assert after[target]["rigidity"] > 1.5 * segs[target]["rigidity"]
    assert after[target]["worst_link"] == stretched["link"], (after[target], stretched)
    assert bad.value > clean.value
    rig_clean = get_metric("kiva_rigidity").compute(item, cfg)
    assert rig_clean.details["segments"][target]["rigidity_invalid"]  # the memo holds the stretched read
    monkeypatch.setattr(kiva_module, "_TRACKS", OrderedDict())
    monkeypatch.setattr(kiva_module, "read_frames", real_read)
    assert get_metric("kiva").compute(item, cfg).details["segments"] == segs  # and clean again


@pytest.mark.slow
def test_a_reader_needs_calibrating_and_a_short_video_stays_unmeasurable(tiny_reader, tmp_path):
    import torch

    spec = get_metric("kiva")
    short = spec.compute(_video(tmp_path / "short.mp4", 12), spec.make_config({"reader": str(tiny_reader)}))
    assert math.isnan(short.value) and "12 frames" in short.details["unscored_reason"]
    raw = tmp_path / "raw"
    shutil.copytree(tiny_reader, raw)
    blob = torch.load(raw / "reader.pt", weights_only=True)
    blob["meta_json"] = blob["meta_json"].replace('"calibration": {', '"calibration": null, "was": {')
    torch.save(blob, raw / "reader.pt")
    with pytest.raises(MetricInputError, match="robojudge kiva calibrate"):
        spec.compute(_video(tmp_path / "clip.mp4", 20), spec.make_config({"reader": str(raw)}))
    (raw / "reader.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(MetricInputError, match="not a KIVA reader checkpoint"):
        spec.compute(_video(tmp_path / "clip2.mp4", 20), spec.make_config({"reader": str(raw / "reader.pt")}))


@pytest.mark.slow
def test_an_item_of_another_embodiment_is_refused_not_read_as_the_readers_robot(tiny_reader, kiva_suite):
    from robojudge.kiva import load_reader

    assert load_reader(tiny_reader).meta["embodiments"] == ["gripper"]
    spec = get_metric("kiva")
    with pytest.raises(MetricInputError, match="item 'adroit01-oracle' is dexterous_hand"):
        spec.compute(_rollout(kiva_suite, "adroit01-oracle"), spec.make_config({"reader": str(tiny_reader)}))


@pytest.mark.slow
def test_scoring_in_a_process_where_mujoco_has_rendered_does_not_crash(tiny_reader, kiva_suite, tmp_path):
    import os
    import subprocess
    import sys

    # Rendering through EGL, then importing torch's compiler package (which switching to deterministic
    # kernels does), crashes a process; reading a video must not need that switch.
    script = f"""
import json
import math
from robojudge.suite.sim import make_sim_suite
make_sim_suite({str(tmp_path / "sim")!r}, episodes=1, size=32, views=1, profiles=("oracle",), workers=1)
from robojudge.metrics import get_metric
from robojudge.suite import load_suite
spec = get_metric("kiva")
item = load_suite({str(kiva_suite)!r}).by_id("fetch00-oracle")
score = spec.compute(item, spec.make_config({{"reader": {str(tiny_reader)!r}}}))
assert not math.isnan(score.value), score.details
print("scored", json.dumps([score.value, [s["score"] for s in score.details["segments"]]]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MUJOCO_GL": "egl"})
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("scored "))
    # And the other process reads the video exactly as this one does: the same value and segment scores.
    here = get_metric("kiva").compute(load_suite(kiva_suite).by_id("fetch00-oracle"),
                                      get_metric("kiva").make_config({"reader": str(tiny_reader)}))
    assert json.loads(line[len("scored "):]) == [here.value, [s["score"] for s in here.details["segments"]]]


@pytest.mark.slow
def test_kiva_flags_the_segments_where_the_simulator_planted_severe_jitter(tiny_reader, kiva_suite):
    from _kiva_consts import JITTER

    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    scored: dict[str, list[dict]] = {"Good": [], "Medium": [], "Bad": []}
    for item in load_suite(kiva_suite).items:
        if item.generator != JITTER or item.embodiment.value != "gripper":
            continue
        segs = spec.compute(item, cfg).details["segments"]
        for seg, planted in zip(segs, item.meta["segments"], strict=True):
            assert (seg["start"], seg["stop"]) == (planted["start"], planted["stop"])
            scored[planted["verdict"]].append(seg)
    bad, good = scored["Bad"], scored["Good"]
    assert len(bad) >= 4 and len(good) >= 4
    assert all(s["invalid"] and s["jerk_invalid"] for s in bad), bad
    assert min(s["score"] for s in bad) > np.median([s["score"] for s in good])
    assert np.mean([s["invalid"] for s in good]) <= 1 / 3, good


@pytest.mark.slow
@pytest.mark.parametrize("named", ["file", "folder"])
def test_a_run_rescores_stored_kiva_results_when_the_named_reader_is_recalibrated(tiny_reader, kiva_suite,
                                                                                   tmp_path, named):
    from robojudge.kiva import calibrate_reader
    from robojudge.run import score_suite

    reader = tmp_path / "reader"
    shutil.copytree(tiny_reader, reader)
    rows = [json.loads(x) for x in kiva_suite.read_text().splitlines()]
    manifest = kiva_suite.parent / f"fetch00_only_{named}.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows if r["item_id"] == "fetch00-oracle"))
    # The folder `kiva train` wrote is taken as its reader.pt: a folder's own digest does not see the weights.
    configs = {"kiva": {"reader": str(reader / "reader.pt" if named == "file" else reader)}}
    assert get_metric("kiva").make_config(configs["kiva"]).reader == reader / "reader.pt"
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    first = score_suite(manifest, ["kiva"], db=db, configs=configs).summary
    assert (first.ok, first.failed) == (1, 0), first.errors
    again = score_suite(manifest, ["kiva"], db=db, configs=configs).summary
    assert (again.skipped, again.ok) == (1, 0)
    calibrate_reader(reader, kiva_suite, percentile=50)  # new thresholds in the same file
    after = score_suite(manifest, ["kiva"], db=db, configs=configs).summary
    assert (after.stale, after.ok) == (1, 1)


@pytest.mark.slow
def test_a_video_in_which_the_reader_sees_no_keypoint_is_unmeasurable(tiny_reader, kiva_suite, monkeypatch):
    import robojudge.metrics.learned.kiva as kiva_module

    real_read = kiva_module.read_frames

    def blind_read(rdr, frames, fps):
        tracks = real_read(rdr, frames, fps)
        tracks.visible[:] = False
        return tracks

    monkeypatch.setattr(kiva_module, "read_frames", blind_read)
    monkeypatch.setattr(kiva_module, "_TRACKS", OrderedDict())
    for metric in PARTS:
        spec = get_metric(metric)
        score = spec.compute(_rollout(kiva_suite), spec.make_config({"reader": str(tiny_reader)}))
        assert math.isnan(score.value)
        assert "sees none of the robot's keypoints" in score.details["unscored_reason"]
        assert score.details["keypoints_visible"] == 0.0


@pytest.mark.slow
def test_a_frozen_video_or_a_still_robot_is_unscored_and_a_frozen_stretch_is_left_out(tiny_reader, kiva_suite,
                                                                                      tmp_path):
    from robojudge.video import sample_frames

    moving = _rollout(kiva_suite)
    frames = sample_frames(moving.video, fps=None, max_frames=None).frames
    assert len(frames) == 48
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(tiny_reader)})
    real = spec.compute(moving, cfg)
    assert real.scored and real.details["robot_motion"] >= 0.01 and real.details["frozen_segments"] == 0

    def clip(name: str, pictures: np.ndarray) -> Item:
        write_video(tmp_path / name, pictures, fps=10)  # a folder of PNGs: lossless, held frames stay held
        return Item(item_id=name, video=str(tmp_path / name))

    frozen = clip("frozen", np.repeat(frames[20:21], 48, axis=0))
    noise = np.random.default_rng(0).normal(0, 3, frames.shape)
    pictures = np.clip(np.repeat(frames[20:21], 48, axis=0) + noise, 0, 255).astype(np.uint8)
    # The robot stands still while something else moves: a small square slides along the bottom edge, away
    # from the arm, so the clip is not still as a picture (the project's still-clip rule passes it) and only
    # the robot's own motion tells.
    for t in range(48):
        x = t * (pictures.shape[2] - 4) // 47
        pictures[t, -4:, x : x + 4] = 255
    still = clip("still", pictures)
    for metric in PARTS:
        spec_m = get_metric(metric)
        cfg_m = spec_m.make_config({"reader": str(tiny_reader)})
        # Before metric version 8 both were three valid segments: a perfect 0%.
        out = spec_m.compute(frozen, cfg_m)
        assert math.isnan(out.value) and "frozen" in out.details["unscored_reason"]
        assert "is still" in out.details["unscored_reason"]  # the project's still-clip rule, before reading
        out = spec_m.compute(still, cfg_m)
        assert math.isnan(out.value) and "does not move" in out.details["unscored_reason"], out.details
        assert out.details["robot_motion"] < 0.01
    # Noise the reader cannot follow: never a good score (it reads keypoints that leap about).
    untrackable = spec.compute(clip("noise", np.random.default_rng(1).integers(0, 256, frames.shape,
                                                                           dtype=np.uint8)), cfg)
    assert untrackable.value == 100.0, untrackable.details
    # The robot stops, picture and all, for the middle segment: that segment is not measured.
    paused = frames.copy()
    paused[16:32] = frames[16]
    score = spec.compute(clip("paused", paused), cfg)
    d = score.details
    assert score.scored and d["frozen_segments"] == 1 and d["measured_segments"] == 2
    assert [s.get("frozen", False) for s in d["segments"]] == [False, True, False]
    assert d["segments"][1]["invalid"] is None and d["segments"][1]["score"] is None


def _edited_calibration(tiny_reader: Path, tmp_path: Path, edit) -> Path:
    """A copy of the tiny reader whose stored calibration ``edit`` has changed in place."""
    import torch

    reader = tmp_path / "reader"
    shutil.copytree(tiny_reader, reader)
    blob = torch.load(reader / "reader.pt", weights_only=True)
    meta = json.loads(blob["meta_json"])
    edit(meta["calibration"])
    blob["meta_json"] = json.dumps(meta)
    torch.save(blob, reader / "reader.pt")
    return reader


@pytest.mark.slow
def test_a_reader_whose_references_never_measured_rigidity_judges_jerk_alone(tiny_reader, kiva_suite,
                                                                             tmp_path):
    from robojudge.kiva import load_reader

    def no_rigidity(cal):
        cal["rigidity"] = None  # as calibrate stores a part no reference segment measured

    reader = _edited_calibration(tiny_reader, tmp_path, no_rigidity)
    assert math.isnan(load_reader(reader).thresholds.rigidity)
    cfg = {"reader": str(reader / "reader.pt")}
    item = _rollout(kiva_suite)
    rig = get_metric("kiva_rigidity").compute(item, get_metric("kiva_rigidity").make_config(cfg))
    assert math.isnan(rig.value) and "no rigidity threshold" in rig.details["unscored_reason"]
    kiva = get_metric("kiva").compute(item, get_metric("kiva").make_config(cfg))
    jerk = get_metric("kiva_jerk").compute(item, get_metric("kiva_jerk").make_config(cfg))
    assert kiva.value == jerk.value and kiva.details["thresholds"]["rigidity"] is None
    assert all(s["rigidity_invalid"] is None for s in kiva.details["segments"])


def _scored_without(tiny_reader: Path, kiva_suite, tmp_path: Path, key: str):
    """The tiny reader with ``key`` taken out of its calibration (as an older calibrate stored it): the
    reader, the rollout's ``kiva`` details with it, and the rollout's reads."""
    from robojudge.kiva import load_reader, read_frames
    from robojudge.video import sample_frames

    def drop(cal):
        del cal[key]

    reader = _edited_calibration(tiny_reader, tmp_path, drop)
    old = load_reader(reader)
    item = _rollout(kiva_suite)
    spec = get_metric("kiva")
    details = spec.compute(item, spec.make_config({"reader": str(reader / "reader.pt")})).details
    clip = sample_frames(item.video, fps=None, max_frames=None)
    return old, details, read_frames(old, clip.frames, float(clip.source_fps))


@pytest.mark.slow
def test_a_reader_calibrated_before_part_scales_is_judged_on_unscaled_values(tiny_reader, kiva_suite,
                                                                             tmp_path):
    from robojudge.kiva import judge_tracks

    old, d, tracks = _scored_without(tiny_reader, kiva_suite, tmp_path, "scales")  # as up to version 3
    assert old.scales is None
    assert d["part_scales"] is False and all("worst_link" not in s for s in d["segments"])
    plain = judge_tracks(tracks, old.links, old.thresholds, fingers=old.fingers)
    assert [s["jerk"] for s in d["segments"]] == [v.to_dict()["jerk"] for v in plain.verdicts]
    # The same reader with its scales judges other (unitless) values.
    item = _rollout(kiva_suite)
    new = get_metric("kiva").compute(item, get_metric("kiva").make_config({"reader": str(tiny_reader)}))
    assert new.details["part_scales"] is True
    assert [s["jerk"] for s in new.details["segments"]] != [s["jerk"] for s in d["segments"]]


@pytest.mark.slow
def test_a_reader_calibrated_before_relative_lengths_is_judged_on_pixel_lengths(tiny_reader, kiva_suite,
                                                                                tmp_path):
    from robojudge.kiva import judge_tracks

    old, d, tracks = _scored_without(tiny_reader, kiva_suite, tmp_path, "lengths")  # as up to version 5
    assert old.relative_lengths is False
    assert d["link_lengths"] == "pixel"
    kw = {"fingers": old.fingers, "scales": old.scales}
    pixels = judge_tracks(tracks, old.links, old.thresholds, relative=False, **kw)
    relative = judge_tracks(tracks, old.links, old.thresholds, **kw)
    assert [s["rigidity"] for s in d["segments"]] == [v.to_dict()["rigidity"] for v in pixels.verdicts]
    # (Fetch's rollout has at least one frame with three links seen: the two measures differ somewhere)
    assert [v.values.link_cv for v in pixels.verdicts] != [v.values.link_cv for v in relative.verdicts]


@pytest.mark.slow
def test_a_reader_calibrated_before_lead_windows_is_judged_with_the_centre_windows(tiny_reader, kiva_suite,
                                                                                   tmp_path, monkeypatch):
    import robojudge.metrics.learned.kiva as kiva_metric
    from robojudge.kiva import judge_tracks

    windows: list[str] = []

    def spy(*args, **kw):
        windows.append(kw["window"])
        return judge_tracks(*args, **kw)

    monkeypatch.setattr(kiva_metric, "judge_tracks", spy)
    old, d, tracks = _scored_without(tiny_reader, kiva_suite, tmp_path, "jerk_windows")  # as up to version 6
    assert old.jerk_windows == "centre" and d["jerk_windows"] == "centre"
    assert windows == ["centre"]  # the metric judged with the windows its thresholds were drawn with
    kw = {"fingers": old.fingers, "scales": old.scales}
    centre = judge_tracks(tracks, old.links, old.thresholds, window="centre", **kw)
    assert [s["jerk"] for s in d["segments"]] == [v.to_dict()["jerk"] for v in centre.verdicts]
    item = _rollout(kiva_suite)
    new = get_metric("kiva").compute(item, get_metric("kiva").make_config({"reader": str(tiny_reader)}))
    assert new.details["jerk_windows"] == "lead" and windows == ["centre", "lead"]
