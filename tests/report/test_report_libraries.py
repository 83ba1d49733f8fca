"""Library versions: every scored row records them, and the report warns when compared values were
computed with different versions (a new OpenCV moved camera-control values; docs/sensitivity.md)."""

from __future__ import annotations

import dataclasses
from importlib import metadata

import av
import cv2
import numpy as np
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.metrics import get_metric
from robojudge.report import mixed_libraries, mixed_library_note, parse_libraries, write_html_report
from robojudge.report._libraries import UNKNOWN
from robojudge.report._library_section import libraries_section
from robojudge.report._sections import ReportInput, overview_section
from robojudge.run import _score as score_module
from robojudge.run import (
    build_requests,
    compute_metric,
    library_versions,
    results_status,
    score_items,
    untested_libraries,
)
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

OLD = "numpy 2.3.4, scipy 1.16.2, opencv 5.0.0, av 18.1.0"
NEW = "numpy 2.3.4, scipy 1.16.2, opencv 5.1.0, av 18.1.0"


def _row(item: str, metric: str, libraries: str | None, status: str = "ok", chash: str = "h") -> ResultRow:
    details = {"libraries": libraries} if libraries else None
    return ResultRow(item, metric, chash, "1", status, 1.0 if status == "ok" else None, details=details)


ITEMS = [Item(item_id=i, video="v.mp4", generator=g) for i, g in
         (("a1", "wm_a"), ("a2", "wm_a"), ("b1", "wm_b"), ("b2", "wm_b"))]
GROUP = {it.item_id: it.generator or "" for it in ITEMS}


def test_versions_are_those_of_the_loaded_libraries():
    found = parse_libraries(library_versions())
    assert found["opencv"] == cv2.__version__
    assert found["av"] == av.__version__
    assert found["numpy"] == np.__version__
    assert found["scipy"] == metadata.version("scipy")
    assert found["libavcodec"] == ".".join(map(str, av.library_versions["libavcodec"]))
    # robojudge's own reader over them: which frames it gives changed with version 2 (B-frames in AVI,
    # variable-rate sampling), and rows computed before are "other libraries", rescored on request.
    from robojudge.video import READER_VERSION

    assert found["robojudge-video"] == READER_VERSION == "6"
    assert "torch" not in found  # a computed metric reads no network library
    model = parse_libraries(library_versions(get_metric("iq1_lpips")))
    try:
        torch = metadata.version("torch")
    except metadata.PackageNotFoundError:  # a core install: no network library to name
        assert "torch" not in model
    else:
        assert model["torch"] == torch  # read without importing torch
    assert {k: v for k, v in model.items() if k in found} == found


def test_a_metric_that_reads_no_frames_records_the_core_numeric_libraries_only():
    # Every metric recorded OpenCV, PyAV and FFmpeg: an OpenCV release marked the rows of a metric that
    # reads only a state file (or nothing) as computed with other versions, to be rescored for nothing.
    every = parse_libraries(library_versions())
    for metric in ("sim_task_success", "cs_collision_count", "uniform_random"):
        found = parse_libraries(library_versions(get_metric(metric)))
        assert set(found) == {"numpy", "scipy", "scikit-image"} and found.items() <= every.items(), metric
    assert "opencv" in parse_libraries(library_versions(get_metric("pixel_frame_consistency")))
    assert "opencv" in parse_libraries(library_versions(get_metric("ctg_camera_control")))
    # A row stored with the longer record beside one with the shorter is no mix: the versions they
    # both name agree.
    short = "numpy 2.3.4, scipy 1.16.2"  # (OLD without its frame libraries)
    assert mixed_libraries([_row("a1", "m", OLD), _row("b1", "m", short)], GROUP) == []
    (mix,) = mixed_libraries([_row("a1", "m", OLD), _row("b1", "m", "numpy 2.4.0, scipy 1.16.2")], GROUP)
    assert mix.libraries == ("numpy",)


def test_a_frame_library_absent_from_a_record_differs_for_a_metric_that_reads_frames():
    # An upgrade audit: the report read robojudge-video absent from a record (read before the reader's
    # fixes) as no difference for every metric, and said "no mix" where results status counted those
    # rows as other libraries and sent the user to the report. Only a metric that reads no frames
    # ignores the frame libraries, and then whatever versions they name.
    (mix,) = mixed_libraries([_row("a1", "pixel_frame_consistency", OLD),
                              _row("b1", "pixel_frame_consistency", OLD + ", robojudge-video 3")], GROUP)
    assert mix.libraries == ("robojudge-video",)
    assert mix.by_group == {"wm_a": {"robojudge-video absent": 1}, "wm_b": {"robojudge-video 3": 1}}
    short = "numpy 2.3.4, scipy 1.16.2"
    for other in (short, NEW, OLD + ", robojudge-video 2"):
        assert mixed_libraries([_row("a1", "sim_task_success", OLD),
                                _row("b1", "sim_task_success", other)], GROUP) == [], other


def test_rows_of_a_no_frame_metric_stored_with_the_longer_record_are_not_other_versions(tmp_path):
    # A review: only the report read the record of before (the frame libraries too) as the same
    # versions; score, results status and --rescore-libraries compared the text exactly and flagged
    # every such row, with the same libraries installed.
    items = [Item(item_id=f"i{k}", video="v.mp4") for k in range(3)]
    (req,) = build_requests(["uniform_random"])
    old = library_versions()  # what every metric recorded before
    with ResultStore(f"sqlite:///{tmp_path}/r.sqlite") as store:
        store.add([ResultRow(it.item_id, "uniform_random", req.config_hash, req.spec.version, "ok", 0.5,
                             details={"libraries": old}) for it in items[:2]]
                  + [ResultRow("i2", "uniform_random", req.config_hash, req.spec.version, "ok", 0.5,
                               details={"libraries": old.replace("numpy ", "numpy 0.")})])
        ids = [it.item_id for it in items]
        assert store.count_other_libraries(req.id, req.config_hash, req.spec.version,
                                           score_module.same_libraries(req.spec), ids) == 1
        (counts,) = results_status(store, items).metrics
        assert counts.other_libraries == 1
        summary = score_items(items, [req], store, rescore_libraries=True)
        assert summary.computed == 1  # only the row of another NumPy
    # An upgrade audit: a record of before with other frame libraries (another OpenCV, no robojudge-video)
    # counted as other versions in score, status and --rescore-libraries, while the report, rightly, saw
    # no difference: the frame libraries are no part of a value that reads no frames.
    parts = old.replace("opencv ", "opencv 0.").split(", ")
    older = ", ".join(p for p in parts if "robojudge-video" not in p)
    with ResultStore(f"sqlite:///{tmp_path}/r2.sqlite") as store:
        store.add([ResultRow(it.item_id, "uniform_random", req.config_hash, req.spec.version, "ok", 0.5,
                             details={"libraries": older}) for it in items])
        assert store.count_other_libraries(req.id, req.config_hash, req.spec.version,
                                           score_module.same_libraries(req.spec), ids) == 0
        assert results_status(store, items).metrics[0].other_libraries == 0
        assert score_items(items, [req], store, rescore_libraries=True).computed == 0


def test_a_scored_row_records_them_and_a_failed_one_does_not(tmp_path):
    rng = np.random.default_rng(0)
    video = write_video(tmp_path / "v.mp4", rng.integers(0, 256, (6, 32, 48, 3), dtype=np.uint8), fps=8)
    (req,) = build_requests(["pixel_frame_consistency"])
    row = compute_metric(Item(item_id="v", video=str(video)), req)
    assert row.status == "ok" and row.details is not None
    assert row.details["libraries"] == library_versions(req.spec)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    failed = compute_metric(Item(item_id="b", video=str(broken)), req)
    assert failed.status == "error" and "libraries" not in (failed.details or {})


def test_only_the_libraries_that_differ_are_listed_per_generator():
    rows = [_row("a1", "m", OLD), _row("a2", "m", OLD), _row("b1", "m", OLD), _row("b2", "m", NEW),
            _row("a1", "same", NEW), _row("b1", "same", NEW)]
    (mix,) = mixed_libraries(rows, GROUP)
    assert mix.key.metric == "m" and mix.libraries == ("opencv",)
    assert mix.by_group == {"wm_a": {"opencv 5.0.0": 2}, "wm_b": {"opencv 5.0.0": 1, "opencv 5.1.0": 1}}
    assert mix.versions == ["opencv 5.0.0", "opencv 5.1.0"]
    assert mix.describe() == "wm_a: opencv 5.0.0 (2); wm_b: opencv 5.0.0 (1), opencv 5.1.0 (1)"


def test_what_does_not_make_a_configuration_mixed():
    # failed rows, items outside the comparison, rows without a record beside one recorded set, and
    # the same versions written in another order
    reordered = "opencv 5.0.0, av 18.1.0, numpy 2.3.4, scipy 1.16.2"
    rows = [_row("a1", "m", OLD), _row("b1", "m", NEW, status="error"), _row("zz", "m", NEW),
            _row("a2", "m", None), _row("b2", "m", reordered)]
    assert mixed_libraries(rows, GROUP) == []
    # two configurations of one metric are two series, each with one set of versions
    rows = [_row("a1", "m", OLD, chash="x"), _row("b1", "m", OLD, chash="x"),
            _row("a1", "m", OLD, chash="y"), _row("b1", "m", NEW, chash="y")]
    assert [m.key.config_hash for m in mixed_libraries(rows, GROUP)] == ["y"]


def test_a_library_present_in_one_set_only_differs_and_unrecorded_rows_are_listed():
    rows = [_row("a1", "m", OLD), _row("a2", "m", None), _row("b1", "m", OLD + ", torch 2.14.1")]
    (mix,) = mixed_libraries(rows, GROUP)
    assert mix.libraries == ("torch",)
    assert mix.by_group == {"wm_a": {"torch absent": 1, UNKNOWN: 1}, "wm_b": {"torch 2.14.1": 1}}


def test_note_section_and_overview():
    rows = [_row("a1", "m", OLD), _row("a2", "m", OLD), _row("b1", "m", NEW), _row("b2", "m", NEW)]
    mixed = mixed_libraries(rows, GROUP)
    assert "m was computed with different library versions" in mixed_library_note(mixed)
    assert mixed_library_note(mixed, ["other"]) == "" and mixed_library_note([], None) == ""
    inp = ReportInput(rows, ITEMS, lambda m: True, bootstrap=0)
    sec = libraries_section(inp)
    assert sec.skipped is None
    assert [c.text for c in sec.tables[0].rows[0]] == [
        "m", "opencv", "wm_a: opencv 5.0.0 (2); wm_b: opencv 5.1.0 (2)"]
    assert "Warning: m was computed with different library versions" in overview_section(inp).intro
    same = ReportInput([_row(i, "m", OLD) for i in GROUP], ITEMS, lambda m: True, bootstrap=0)
    assert "same library versions" in (libraries_section(same).skipped or "")
    assert "Warning" not in overview_section(same).intro
    # one untested release throughout (OpenCV 5.1.0): not mixed, but the section says it
    untested = ReportInput([_row(i, "m", NEW) for i in GROUP], ITEMS, lambda m: True, bootstrap=0)
    assert libraries_section(untested).intro.endswith("Otherwise every compared value of each metric was "
                                                      "computed with the same library versions.")
    assert "Warning" not in overview_section(untested).intro


def test_an_upgrade_between_two_runs_keeps_the_stored_rows_and_the_report_says_so(tmp_path, monkeypatch):
    """Scoring resumes after an upgrade without recomputing what is stored; the report then names the
    metric whose compared values come from two installations."""
    rng = np.random.default_rng(1)
    items = []
    for k, gen in enumerate(("wm_a", "wm_a", "wm_b", "wm_b")):
        frames = rng.integers(0, 256, (6, 32, 48, 3), dtype=np.uint8)
        path = write_video(tmp_path / f"v{k}.mp4", frames, fps=8)
        items.append(Item(item_id=f"v{k}", video=str(path), generator=gen))
    reqs = build_requests(["pixel_frame_consistency"])
    url = f"sqlite:///{tmp_path}/r.sqlite"
    real = score_module.library_versions
    monkeypatch.setattr(score_module, "library_versions", lambda spec: real(spec).replace(
        f"opencv {cv2.__version__}", "opencv 0.0.1"))
    with ResultStore(url) as store:
        score_items(items[:3], reqs, store)
    monkeypatch.setattr(score_module, "library_versions", real)
    with ResultStore(url) as store:
        summary = score_items(items, reqs, store)
        assert summary.computed == 1 and summary.skipped == 3  # the stored rows are kept
        stored = {r.item_id: parse_libraries(r.details["libraries"])["opencv"] for r in store.rows()}
    assert stored == {"v0": "0.0.1", "v1": "0.0.1", "v2": "0.0.1", "v3": cv2.__version__}
    with ResultStore(url, read_only=True) as store:  # status counts the rows of the other installation
        (counts,) = results_status(store, items).metrics
    assert (counts.current, counts.up_to_date, counts.other_libraries) == (4, 4, 3)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(it.model_dump_json(exclude_none=True) + "\n" for it in items))
    monkeypatch.setenv("COLUMNS", "250")
    res = CliRunner().invoke(build_app("results"), ["results", "status", str(manifest), "--db", url])
    assert res.exit_code == 0, res.output
    assert "other libraries" in res.output
    assert "3 scored rows were computed with other library versions than installed here" in res.output
    report = write_html_report(url, tmp_path / "out", manifest=manifest, higher_is_better=lambda m: False,
                               bootstrap=0)
    sec = {s.key: s for s in report.sections}["libraries"]
    assert sec.skipped is None
    assert [c.text for c in sec.tables[0].rows[0]][1:] == [
        "opencv", f"wm_a: opencv 0.0.1 (2); wm_b: opencv 0.0.1 (1), opencv {cv2.__version__} (1)"]
    assert "opencv 0.0.1" in (tmp_path / "out" / "tables" / "libraries.csv").read_text()
    assert "computed with different library versions" in report.index.read_text()

    # --rescore-libraries recomputes the three, only for the items scored, keeping the old rows
    with ResultStore(url) as store:
        one = score_items(items[:1], reqs, store, rescore_libraries=True)
        assert (one.rescored_libraries, one.computed, one.skipped) == (1, 1, 0)
        rest = score_items(items, reqs, store, rescore_libraries=True)
        assert (rest.rescored_libraries, rest.computed, rest.skipped) == (2, 2, 2)
        again = score_items(items, reqs, store, rescore_libraries=True)
        assert (again.rescored_libraries, again.computed, again.skipped) == (0, 0, 4)
        current = {r.item_id: parse_libraries(r.details["libraries"])["opencv"] for r in store.rows()}
        old = [r for r in store.rows(include_superseded=True) if not r.current]
    assert current == {f"v{k}": cv2.__version__ for k in range(4)}
    assert sorted(r.item_id for r in old) == ["v0", "v1", "v2"]
    assert all(parse_libraries(r.details["libraries"])["opencv"] == "0.0.1" for r in old)
    after = write_html_report(url, tmp_path / "out2", manifest=manifest, higher_is_better=lambda m: False,
                              bootstrap=0)
    sec = {s.key: s for s in after.sections}["libraries"]
    same = "every compared value of each metric was computed with the same library versions"
    if untested_libraries(parse_libraries(library_versions(reqs[0].spec))):
        # Another OpenCV or PyAV than constraints.txt's (a pip install): the section stays to say so, and
        # holds no table of mixed versions.
        assert sec.skipped is None and not sec.tables
        assert sec.intro.startswith("Untested libraries: ") and f"Otherwise {same}." in sec.intro
    else:
        assert sec.skipped == same


def test_rescore_leaves_a_row_whose_metric_no_longer_applies(tmp_path, monkeypatch):
    """`all` skips a metric on an item lacking its input; its stored row must not be superseded then,
    or nothing would compute it again."""
    rng = np.random.default_rng(3)
    video = write_video(tmp_path / "v.mp4", rng.integers(0, 256, (6, 32, 48, 3), dtype=np.uint8), fps=8)
    ref = write_video(tmp_path / "r.mp4", rng.integers(0, 256, (6, 32, 48, 3), dtype=np.uint8), fps=8)
    (req,) = build_requests(["iq1_psnr"])
    req = dataclasses.replace(req, applicable_only=True)  # as `--metrics all` builds it
    real = score_module.library_versions
    monkeypatch.setattr(score_module, "library_versions", lambda spec: real(spec) + ", somelib 0.1")
    with ResultStore(f"sqlite:///{tmp_path}/r.sqlite") as store:
        score_items([Item(item_id="v", video=str(video), reference_video=str(ref))], [req], store)
        monkeypatch.setattr(score_module, "library_versions", real)
        gone = score_items([Item(item_id="v", video=str(video))], [req], store, rescore_libraries=True)
        assert (gone.rescored_libraries, gone.computed) == (0, 0)
        (row,) = store.rows()
        back = score_items([Item(item_id="v", video=str(video), reference_video=str(ref))], [req], store,
                           rescore_libraries=True)
        assert (back.rescored_libraries, back.computed) == (1, 1)
    assert row.status == "ok" and "somelib 0.1" in row.details["libraries"]


def test_cli_rescore_libraries(tmp_path, monkeypatch):
    frames = np.random.default_rng(2).integers(0, 256, (6, 32, 48, 3), dtype=np.uint8)
    item = Item(item_id="v", video=str(write_video(tmp_path / "v.mp4", frames, fps=8)))
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(item.model_dump_json(exclude_none=True) + "\n")
    url = f"sqlite:///{tmp_path}/r.sqlite"
    real = score_module.library_versions
    monkeypatch.setattr(score_module, "library_versions", lambda spec: real(spec) + ", somelib 0.1")
    with ResultStore(url) as store:
        score_items([item], build_requests(["pixel_frame_consistency"]), store)
    monkeypatch.setattr(score_module, "library_versions", real)
    args = ["score", str(manifest), "-m", "pixel_frame_consistency", "--db", url, "--no-progress"]
    kept = CliRunner().invoke(build_app("score"), args)
    assert kept.exit_code == 0, kept.output
    assert "recomputed" not in kept.output  # by default the stored row is kept
    redone = CliRunner().invoke(build_app("score"), [*args, "--rescore-libraries"])
    assert redone.exit_code == 0, redone.output
    assert "1 stored results computed with other library versions were recomputed" in redone.output
