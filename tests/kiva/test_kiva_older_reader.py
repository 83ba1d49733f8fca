"""A reader made by an older robojudge (audit s68_skew, finding 5): one without the training videos' shapes
is refused until they are recorded, and one calibrated for an older measure says so in every value, once
per reader in `robojudge score`'s summary, and in the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.metrics import MetricInputError, get_metric
from robojudge.suite import load_suite

pytestmark = pytest.mark.slow


def _older(tiny_reader: Path, out: Path, meta_keys: tuple[str, ...] = (),
           calibration_keys: tuple[str, ...] = ()) -> Path:
    """A copy of the tests' reader without the stored facts an older robojudge did not write."""
    from robojudge.kiva import load_reader
    from robojudge.kiva._reader import _write

    shutil.copytree(tiny_reader, out)
    reader = load_reader(out)
    for key in meta_keys:
        reader.meta.pop(key)
    for key in calibration_keys:
        reader.meta["calibration"].pop(key)
    _write(reader.path, reader.net.state_dict(), reader.meta)
    return out


def _item(kiva_suite: Path, **update: object):
    return load_suite(kiva_suite).by_id("fetch00-oracle").model_copy(update=update)


def _side_bars(kiva_suite: Path, out: Path) -> Path:
    """The faithful rollout with black bars left and right (80x64)."""
    from robojudge.video import sample_frames, write_video

    frames = sample_frames(_item(kiva_suite).video, fps=None, max_frames=None).frames
    bars = np.pad(frames, ((0, 0), (0, 0), (frames.shape[2] // 8,) * 2, (0, 0)))
    write_video(out, np.ascontiguousarray(bars), fps=10)
    return out


def test_a_reader_without_its_training_shapes_is_refused_until_they_are_recorded(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    # Before, such a reader checked no shape: a faithful clip with bars at its sides got 0%, the best value.
    old = _older(tiny_reader, tmp_path / "old", meta_keys=("frame_aspects",))
    spec = get_metric("kiva")
    cfg = spec.make_config({"reader": str(old)})
    bars = _item(kiva_suite, video=str(_side_bars(kiva_suite, tmp_path / "bars.mp4")))
    for item in (bars, _item(kiva_suite)):
        with pytest.raises(MetricInputError, match=rf"reader {old} was trained before .* no frame_aspects.*"
                                                   rf"`robojudge kiva upgrade --reader {old}`"):
            spec.compute(item, cfg)

    done = CliRunner().invoke(app, ["kiva", "upgrade", "--reader", str(old)])
    assert done.exit_code == 0, done.output
    assert "recorded the training videos' width/height" in done.output and "1.000" in done.output
    assert json.loads((old / "reader.json").read_text())["frame_aspects"] == [1.0]
    with pytest.raises(MetricInputError, match=r"video is 80x64 \(width/height 1\.250\)"):
        spec.compute(bars, cfg)
    # Weights and calibration are kept: the faithful clip gets the value the reader always gave it.
    now = spec.compute(_item(kiva_suite), cfg)
    assert now.value == spec.compute(_item(kiva_suite), spec.make_config({"reader": str(tiny_reader)})).value
    again = CliRunner().invoke(app, ["kiva", "upgrade", "--reader", str(old)])
    assert again.exit_code == 0 and "width/height already: 1.000" in again.output


def test_a_run_with_a_reader_without_its_training_shapes_is_refused_before_it_starts(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    # Before, the run went ahead and stored the same error row for every item and metric.
    from robojudge.store import ResultStore

    old = _older(tiny_reader, tmp_path / "old", meta_keys=("frame_aspects",))
    db = tmp_path / "r.sqlite"
    done = CliRunner().invoke(app, ["score", str(kiva_suite), "-m", "kiva,kiva_jerk", "--db", str(db),
                                    "--no-progress", "--set", f"kiva.reader={old}", "--set",
                                    f"kiva_jerk.reader={old}"])
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert said.startswith(f"error: metric 'kiva': reader {old} was trained before robojudge stored")
    assert said.count("was trained before") == 1 and f"`robojudge kiva upgrade --reader {old}`" in said
    with ResultStore(f"sqlite:///{db}") as store:
        assert store.rows() == []
    # From Python, as from the command line: nothing is planned.
    from robojudge.metrics import MetricInputError as Refused
    from robojudge.run import score_suite

    with pytest.raises(Refused, match=rf"robojudge kiva upgrade --reader {old}"):
        score_suite(kiva_suite, ["kiva"], db=f"sqlite:///{tmp_path / 'py.sqlite'}",
                    configs={"kiva": {"reader": str(old)}})


def test_a_metric_with_every_row_stored_is_not_checked_before_the_run(
        kiva_suite: Path, tmp_path: Path) -> None:
    # A review: the check before the run refused every run naming KIVA with an unusable reader, even with
    # every KIVA row of the run stored, and so stopped the other metrics of the run too. Only a metric
    # left to compute is checked.
    from robojudge.run import build_requests, score_items
    from robojudge.run._fingerprint import Fingerprints
    from robojudge.store import ResultRow, ResultStore

    items = load_suite(kiva_suite).items[:3]
    kiva, other = build_requests(["kiva", "uniform_random"], {"kiva": {"reader": str(tmp_path / "gone")}})
    prints = Fingerprints()
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add([ResultRow(it.item_id, "kiva", kiva.config_hash, kiva.spec.version, "ok", 12.5,
                             fingerprint=prints.metric(it, kiva.spec, kiva.config).value) for it in items])
        summary = score_items(items, [kiva, other], store)
        assert (summary.ok, summary.skipped, summary.failed) == (3, 3, 0)
        with pytest.raises(MetricInputError, match="no KIVA reader at"):  # one left to compute: refused
            score_items([*items, *load_suite(kiva_suite).items[3:4]], [kiva, other], store)


def test_the_shapes_are_recorded_only_from_the_training_files_as_they_were(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    from robojudge.kiva import load_reader, record_frame_aspects
    from robojudge.kiva._reader import ReaderError, _write

    old = _older(tiny_reader, tmp_path / "old", meta_keys=("frame_aspects",))
    reader = load_reader(old)
    video = tmp_path / "clip.mp4"
    shutil.copy(_item(kiva_suite).video, video)
    for files, why in (({str(video): "0" * 64}, "has changed since it was trained"),
                       ({str(tmp_path / "gone.mp4"): "0" * 64}, "is gone"),
                       ({}, r"no record of its training files \(data.files\)")):
        reader.meta["data"]["files"] = files
        _write(reader.path, reader.net.state_dict(), reader.meta)
        with pytest.raises(ReaderError, match=why):
            record_frame_aspects(old)
    done = CliRunner().invoke(app, ["kiva", "upgrade", "--reader", str(old)])
    assert done.exit_code == 2 and "no record of its training files" in done.output
    assert "frame_aspects" not in json.loads((old / "reader.json").read_text())


def test_values_of_a_reader_calibrated_for_an_older_measure_say_so(
        tiny_reader: Path, kiva_suite: Path, tmp_path: Path) -> None:
    # Before, they said only link_lengths "pixel" and the like, and were stored beside current values
    # with nothing to tell them apart; the run said nothing.
    v5 = _older(tiny_reader, tmp_path / "v5",
                calibration_keys=("lengths", "jerk_windows", "confidence", "confidence_negatives"))
    spec = get_metric("kiva")
    old = spec.compute(_item(kiva_suite), spec.make_config({"reader": str(v5)})).details
    assert old["calibration_version"] == 5
    assert old["older_rules"] == ["pixel link lengths", "centre jerk windows", "recognition not checked"]
    assert old["link_lengths"] == "pixel" and old["jerk_windows"] == "centre"
    assert f"KIVA reader {v5} was calibrated for measure version 5 (current 8)" in old["notice"]
    assert f"`robojudge kiva calibrate --reader {v5} --episodes {kiva_suite.resolve()}`" in old["notice"]
    # `kiva upgrade` says so too, as a note on stderr: stdout keeps what it recorded (it was on stdout).
    upgraded = CliRunner().invoke(app, ["kiva", "upgrade", "--reader", str(v5)])
    assert upgraded.exit_code == 0, upgraded.output
    assert "width/height already: 1.000" in upgraded.stdout and "note" not in upgraded.stdout
    assert "note: calibrated for measure version 5 (current 8), so it judges by older rules" in " ".join(
        upgraded.stderr.split())
    current = spec.compute(_item(kiva_suite), spec.make_config({"reader": str(tiny_reader)})).details
    assert (current["calibration_version"], current["older_rules"]) == (8, [])
    assert "notice" not in current

    rows = [json.loads(x) for x in kiva_suite.read_text().splitlines()]
    manifest = kiva_suite.parent / "fetch00_older_reader.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows if r["item_id"] == "fetch00-oracle"))
    done = CliRunner().invoke(app, ["score", str(manifest), "-m", "kiva,kiva_jerk", "--db",
                                    str(tmp_path / "r.sqlite"), "--no-progress", "--set",
                                    f"kiva.reader={v5}", "--set", f"kiva_jerk.reader={v5}"])
    assert done.exit_code == 0, done.output
    notes = [line for line in done.output.splitlines() if line.startswith("note: KIVA reader")]
    assert len(notes) == 1 and notes[0].endswith("(2 results)"), done.output  # one line for the reader
