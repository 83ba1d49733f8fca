"""Inputs the audits used to take silently: a misspelt generator or a repeated item in a timing file,
a non-finite --level or --drift, a misspelt meta.accelerates in the report."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _audit_store import stored_suite
from typer.testing import CliRunner

from robojudge.audit import TimingError, audit_acceleration, make_standins, read_timing, timing_costs
from robojudge.cli import app
from robojudge.report import ReportInput
from robojudge.report._audit import acceleration_section
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item

GENS = {"dense": 10.0, "dense-interp2": 5.0, "dense-lowres2": 2.0}


def _items() -> list[Item]:
    return [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                 meta={"generation_seconds": secs} | ({} if g == "dense" else {"accelerates": "dense"}))
            for g, secs in GENS.items() for k in range(2)]


def _rows(items: list[Item]) -> list[ResultRow]:
    return [ResultRow(item_id=it.item_id, metric="pixel_frame_consistency", config_hash="h", version="1",
                      status="ok", value=0.9 if it.generator == "dense" else 0.8) for it in items]


@pytest.fixture
def suite(tmp_path):
    items = _items()
    return stored_suite(tmp_path, items, _rows(items))


def test_unknown_generator_in_a_timing_file_names_file_line_and_the_known_ones(tmp_path) -> None:
    p = tmp_path / "tm.csv"
    p.write_text("generator,item,seconds,steps\ndense,*,10,\ndense-interp2,*,5,\ndense-lowrez2,*,2,\n")
    with pytest.raises(TimingError) as err:
        timing_costs(read_timing(p), _items(), list(GENS), source=str(p))
    msg = str(err.value)
    assert msg.startswith(f"{p}, line 4: generator 'dense-lowrez2' is not in the suite")
    assert "known: dense, dense-interp2, dense-lowres2" in msg and "did you mean 'dense-lowres2'" in msg
    # a generator of the suite that this audit leaves out may have rows
    p.write_text("generator,item,seconds\ndense,*,10\nother,*,3\n")
    costs = timing_costs(read_timing(p), _items()[:2], ["dense"], source=str(p), known=["dense", "other"])
    assert costs["dense"].seconds == 5.0


def test_a_repeated_item_row_names_both_lines(tmp_path) -> None:
    p = tmp_path / "tm.csv"
    p.write_text("generator,item,seconds\ndense,c0-dense,10\ndense-interp2,*,5\ndense,c0-dense,30\n")
    with pytest.raises(TimingError, match=re.escape(f"{p}, lines 2 and 4: two rows for item 'c0-dense' of "
                                                    "generator 'dense'")):
        timing_costs(read_timing(p), _items(), list(GENS), source=str(p))


def test_cli_refuses_a_misspelt_generator_in_the_timing_file(suite, tmp_path) -> None:
    manifest, db = suite
    tm = tmp_path / "tm.csv"
    tm.write_text("generator,item,seconds,steps\ndense,*,10,\ndense-interp2,*,5,\ndense-lowrez2,*,2,\n")
    args = ["audit", "acceleration", str(manifest), "--dense", "dense", "--accelerated",
            "dense-interp2,dense-lowres2", "--db", db, "--bootstrap", "0", "--timing", str(tm)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert f"error: {tm}, line 4: generator 'dense-lowrez2' is not in the suite" in res.output
    tm.write_text("generator,item,seconds,steps\ndense,*,10,\ndense-interp2,*,5,\ndense-lowres2,*,2,\n")
    ok = CliRunner().invoke(app, args)
    assert ok.exit_code == 0, ok.output
    assert "dense-lowres2: speedup 5.00" in ok.output


@pytest.mark.parametrize("level", ["nan", "inf", "-inf"])
def test_level_must_be_finite(suite, level) -> None:
    manifest, db = suite
    res = CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                   "--accelerated", "dense-interp2", "--db", db, "--min-q", level])
    assert res.exit_code == 2 and "--min-q must be a finite number" in res.output
    coverage = CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                        "--accelerated", "dense-interp2", "--db", db, "--level", level])
    assert coverage.exit_code == 2 and "--level" in coverage.output
    with pytest.raises(ValueError, match="level .* must be a finite number"):
        audit_acceleration(manifest, "dense", ["dense-interp2"], db=db, level=float(level))


@pytest.mark.parametrize("drift", ["nan", "inf"])
def test_drift_must_be_finite(suite, tmp_path, drift) -> None:
    manifest, _ = suite
    out = tmp_path / "st"
    res = CliRunner().invoke(app, ["audit", "standins", str(manifest), "--dense", "dense", "--out", str(out),
                                   "--methods", "chunk4", "--drift", drift])
    assert res.exit_code == 2 and "--drift must be a finite number" in res.output
    with pytest.raises(ValueError, match="drift must be a finite number"):
        make_standins(manifest, "dense", out, ["chunk4"], drift=float(drift))
    assert not out.exists()  # nothing written


def _higher(metric: str) -> bool:
    return {"pixel_frame_consistency": True}[metric]


def test_report_keeps_the_valid_audits_and_names_a_misspelt_accelerates() -> None:
    items = _items()
    rows = _rows(items)
    other = [Item(item_id=f"c{k}-fast", video=f"c{k}-fast.mp4", generator="fast", clip_id=f"c{k}",
                  meta={"generation_seconds": 1.0, "accelerates": "dnse"}) for k in range(2)]
    sec = acceleration_section(ReportInput(rows + _rows(other), items + other, _higher, bootstrap=0))
    assert sec.skipped is None and sec.tables  # the audit against "dense" is there
    assert [r[0].text for r in sec.tables[0].rows] == list(GENS)
    assert "item(s) c0-fast, c1-fast declare meta.accelerates 'dnse'" in sec.intro
    # with only the bad declaration, the section says why it is empty
    alone = acceleration_section(ReportInput(_rows(other), other, _higher, bootstrap=0))
    assert alone.skipped is not None and "meta.accelerates 'dnse'" in alone.skipped


def test_a_generator_no_item_has_is_refused_before_anything_is_scored(suite, tmp_path) -> None:
    # the dense generator's items were scored (and stored) first, then the audit refused the name
    manifest, _ = suite
    db = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    with pytest.raises(ValueError, match=r"no suite item has generator 'dense-interp3'"):
        audit_acceleration(manifest, "dense", ["dense-interp3"], metrics=["pixel_frame_consistency"], db=db)
    if (tmp_path / "fresh.sqlite").exists():
        with ResultStore(db, read_only=True) as store:
            assert store.count() == 0


def test_a_lowres_factor_that_leaves_no_image_is_refused_before_any_file(tmp_path) -> None:
    from robojudge.video import write_video
    frames = np.random.default_rng(0).integers(0, 255, (6, 48, 64, 3), dtype=np.uint8)
    write_video(tmp_path / "a.mp4", frames, fps=10)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "a.mp4", "generator": "dense"}) + "\n")
    out = tmp_path / "st"
    res = CliRunner().invoke(app, ["audit", "standins", str(manifest), "--dense", "dense", "--out", str(out),
                                   "--methods", "lowres2,lowres13"])
    assert res.exit_code == 2, res.output
    assert "lowres13:" in res.output and "64x48" in res.output and "use lowres12 or less" in res.output
    assert not out.exists()  # nothing written
    made = make_standins(manifest, "dense", out, ["lowres12"])  # 4 px left: allowed
    assert (out / "standins" / "lowres12" / "a.mp4").exists() and made.exists()
