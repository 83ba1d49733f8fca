"""Every report folder says what produced its numbers (provenance.json and the page's header and
"Configurations" table): the metric versions, configs and library versions, each judge's model, rubrics
and frames, the bootstrap seed, robojudge's version, the command and the manifests' digests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _report_data import write_run

import robojudge
from robojudge.cli import main
from robojudge.store import ResultRow, ResultStore

LIBS = "numpy 2.3.4, scipy 1.16.2, opencv 5.0.0"
RUBRIC = {"id": "pa", "version": "2", "digest": "abcdef0123456789"}


def _extra_rows(url: str) -> None:
    """A pixel_frame_consistency series at fps 4 (one config in the store, so its label is the bare id)
    and a judge whose replies name the model the server served."""
    cfg = {"fps": 4.0, "width": 256, "height": 256}
    judge = {"backend": "openai", "model": "org/vlm-7b", "rubric": RUBRIC,
             "frames": {"fps": 2.0, "max_frames": 8, "size": None}}
    rows = []
    for c in range(12):
        for g in ("good", "mid", "bad"):
            item = f"c{c}-{g}"
            rows.append(ResultRow(item, "pixel_frame_consistency", "pfc4", "3", "ok", 10.0 + c, config=cfg,
                                  details={"libraries": LIBS, "robojudge": "0.1.0"}))
            rows.append(ResultRow(item, "judge:served:pa", "j1", "1", "ok", 3.0, config=judge,
                                  details={"turns": [{"response": {"model": "weights-A"}}]}))
    with ResultStore(url) as store:
        store.add(rows)


def _report(*args: object) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["report", *map(str, args)])
    assert not stop.value.code


def test_a_run_report_records_what_produced_each_series(tmp_path: Path) -> None:
    run = tmp_path / "run"
    url, manifest = write_run(run)
    _extra_rows(url)
    out = tmp_path / "rep"
    _report(run, "-o", out, "--bootstrap", "50", "--seed", "12345")
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["bootstrap"] == {"replicates": 50, "seed": 12345}
    assert prov["robojudge"] == robojudge.__version__
    assert prov["command"] == ["robojudge", "report", str(run), "-o", str(out), "--bootstrap", "50",
                               "--seed", "12345"]
    digest = hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert prov["manifests"] == [{"path": str(manifest.absolute()), "sha256": digest, "items": 36,
                                  "labelled": 36}]
    pfc = next(m for m in prov["metrics"] if m["metric"] == "pixel_frame_consistency")
    assert (pfc["label"], pfc["version"], pfc["config_hash"]) == ("pixel_frame_consistency", "3", "pfc4")
    assert pfc["non_default"] == {"fps": "4.0"}  # (width and height are the defaults)
    assert (pfc["libraries"], pfc["robojudge"]) == (LIBS, "0.1.0")
    (judge,) = [j for j in prov["judges"] if j["name"] == "served"]
    assert (judge["backend"], judge["model"], judge["served_models"]) == ("openai", "org/vlm-7b",
                                                                         {"weights-A": 36})
    assert judge["rubrics"]["pa"]["digest"] == RUBRIC["digest"]
    assert judge["frames"] == {"fps": 2.0, "max_frames": 8, "size": None}
    page = (out / "index.html").read_text()
    for said in ("50 bootstrap replicates, seed 12345", f"robojudge {robojudge.__version__}",
                 f"sha256 {digest}, 36 items, 36 labelled", "--seed 12345", 'id="configurations"',
                 "fps=4.0", "rubrics pa v2 #abcdef01", "served weights-A x36", str(manifest.absolute())):
        assert said in page, said
    assert "configurations.csv" in (out / "tables" / "written_by_robojudge.txt").read_text()


def test_a_manifest_summary_alone_records_its_manifest(tmp_path: Path) -> None:
    url, manifest = write_run(tmp_path / "run")
    out = tmp_path / "summary"
    _report(manifest, "--db", url, "--no-html", "-o", out)
    assert not (out / "index.html").exists()
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["manifests"][0]["sha256"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert prov["bootstrap"] is None  # (t-intervals only)
    assert {m["metric"] for m in prov["metrics"]} >= {"iq1_psnr", "jitter"}


def test_relabelling_the_manifest_changes_its_digest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _, manifest = write_run(run)
    _report(run, "-o", tmp_path / "a", "--bootstrap", "0")
    text = manifest.read_text()
    manifest.write_text(text.replace('"pa": 5', '"pa": 1', 1))
    _report(run, "-o", tmp_path / "b", "--bootstrap", "0")
    first, second = (json.loads((tmp_path / n / "provenance.json").read_text())["manifests"][0]
                     for n in ("a", "b"))
    assert first["path"] == second["path"] and first["sha256"] != second["sha256"]


def test_non_default_settings() -> None:
    from robojudge.report._provenance import non_default

    defaults = {"fps": 8.0, "frames": {"max_frames": None, "size": 256}}
    assert non_default({"fps": 8.0, "frames": {"max_frames": 10, "size": 256}}, defaults) == {
        "frames.max_frames": "10"}
    assert non_default({"fps": 8.0}, defaults) == {}  # a setting left out is at its default
    assert non_default({"fps": 8.0}, None) is None


def test_the_network_files_of_each_series_are_recorded() -> None:
    """Audit config F4: two stores alike but for the weights their rows were computed with (two
    ROBOJUDGE_WEIGHTS folders) gave identical provenance records."""
    from robojudge.report._provenance import report_provenance

    def rows(digests: list[str]) -> list[ResultRow]:
        out = [ResultRow(f"i{k}", "dino_frame_consistency", "c1", "1", "ok", 0.5, config={"fps": 8.0},
                         details={"network_weights": {"dino_vit_b16": d}}) for k, d in enumerate(digests)]
        out.append(ResultRow("e", "dino_frame_consistency", "c1", "1", "error", None, config={"fps": 8.0},
                             error="boom", details={"network_weights": {"dino_vit_b16": "ignored"}}))
        out.append(ResultRow("i0", "iq1_psnr", "p1", "1", "ok", 30.0, config={}))
        return out

    def metrics(digests: list[str]) -> dict[str, dict]:
        prov = report_provenance(rows(digests), store="sqlite://")
        return {m["metric"]: m for m in prov["metrics"]}

    a, b = metrics(["a" * 64] * 3), metrics(["b" * 64] * 2 + ["a" * 64])
    assert a["dino_frame_consistency"]["network_weights"] == {"dino_vit_b16": {"a" * 64: 3}}
    assert b["dino_frame_consistency"]["network_weights"] == {"dino_vit_b16": {"a" * 64: 1, "b" * 64: 2}}
    assert "network_weights" not in a["iq1_psnr"]  # (no network behind it)


def test_judges_of_other_rubrics_than_pa_and_ia_are_listed() -> None:
    # vlm judged PLA and task success only (they feed RoboPhys-3D), mk judged PA, IA and sa_vlm1 with one
    # set of settings: only mk's PA and IA were listed, so vlm's model was nowhere (audit reportdata F2).
    from robojudge.report._provenance import configurations_table, report_provenance

    def judged(item: str, name: str, rubric: str, model: str) -> ResultRow:
        config = {"backend": "openai", "model": model, "frames": {"fps": 2.0, "max_frames": 8},
                  "rubric": {"id": rubric, "version": "3", "digest": f"{rubric}-digest"}}
        return ResultRow(item, f"judge:{name}:{rubric}", f"{name}-{rubric}", "1", "ok", 0.5, config=config,
                         details={"turns": [{"response": {"model": f"{model}-served"}}]})

    rows = [judged(f"i{k}", name, rubric, model) for k in range(4)
            for name, model, rubrics in (("mk", "org/mk", ("pa", "ia", "sa_vlm1")),
                                         ("vlm", "org/mock-vlm", ("pla_physical_commonsense", "ts_vlm2")))
            for rubric in rubrics]
    prov = report_provenance(rows, store="sqlite:///x")
    by = {j["label"]: j for j in prov["judges"]}
    assert sorted(by) == ["mk", "vlm"]
    assert list(by["mk"]["rubrics"]) == ["pa", "ia", "sa_vlm1"] and by["mk"]["rows"] == 12
    vlm = by["vlm"]
    assert (vlm["name"], vlm["backend"], vlm["model"]) == ("vlm", "openai", "org/mock-vlm")
    assert vlm["served_models"] == {"org/mock-vlm-served": 8}
    assert vlm["frames"] == {"fps": 2.0, "max_frames": 8}
    assert {k: (r["version"], r["digest"]) for k, r in vlm["rubrics"].items()} == {
        "pla_physical_commonsense": ("3", "pla_physical_commonsense-digest"),
        "ts_vlm2": ("3", "ts_vlm2-digest")}
    table = {r[0].text: r[3].text for r in configurations_table(prov).rows}
    vlm_cell = table["judge vlm"]
    assert "model org/mock-vlm" in vlm_cell and "served org/mock-vlm-served x8" in vlm_cell
    assert "pla_physical_commonsense v3 #pla_phys" in vlm_cell
    assert "sa_vlm1 v3" in table["judge mk"]
