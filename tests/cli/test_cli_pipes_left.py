"""The commands the first pipelines change left (audit s71_cli, the follow-up): notes on stderr, tables on
the shared printer, ``results status --json``.

Each command runs as in a pipeline (``robojudge ... | jq``, ``> file``): stdout is a pipe, ``COLUMNS`` is
narrow. Stdout must hold the data alone, every value whole on its line (a table piped is printed at the
width it needs, never cut to ``…``); notes, warnings and progress go to stderr.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import robojudge

SRC = str(Path(robojudge.__file__).parents[1])
needs_mujoco = pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco (sim)")


def piped(*args: str, columns: str = "40", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``robojudge args`` with stdout and stderr on pipes of their own, ``COLUMNS`` narrow."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-m", "robojudge", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def whole(text: str, *values: str) -> None:
    """Each of ``values`` on one line of ``text``, and nothing cut to ``…``."""
    assert "…" not in text, text
    for value in values:
        assert any(value in line for line in text.splitlines()), f"{value!r} not whole in:\n{text}"


LONG = "upper_arm_link_of_the_left_manipulator"
ARM = f"""<mujoco><compiler angle="radian"/><worldbody>
  <body name="base"><geom type="sphere" size="0.05"/>
    <body name="{LONG}" pos="0 0 0.1"><joint name="shoulder_pitch_joint_of_the_left_arm" axis="0 1 0"
      range="-1 1"/><geom type="sphere" size="0.02"/>
      <body name="hand" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0" range="0 0.1"/>
        <geom type="sphere" size="0.02"/></body></body></body>
</worldbody></mujoco>
"""


@needs_mujoco
def test_robots_check_warns_on_stderr_and_prints_names_whole(tmp_path: Path) -> None:
    # Before: the rigidity warning was on stdout among the tables, and at COLUMNS=40 the link and joint
    # names were cut ('base - upper_arm_li…').
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "arm.toml").write_text(f'name = "arm"\nmodel = "arm.xml"\nkeypoints = ["base", "{LONG}", '
                                       f'"hand"]\nlinks = [["base", "{LONG}"], ["{LONG}", "hand"]]\n')
    done = piped("robots", "check", str(tmp_path / "arm.toml"))
    assert done.returncode == 0, done.stderr
    assert f"not rigid (a joint changes its length): {LONG} - hand" in done.stderr
    assert "not rigid" not in done.stdout
    whole(done.stdout, f"base - {LONG}", f"{LONG} - hand", "shoulder_pitch_joint_of_the_left_arm", "0.1000")


GENERATOR = "cosmos_predict2_14b_video2world_posttrained"


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    """Four items of a long-named generator and a short one; a fifth row that does not validate."""
    (tmp_path / "v.mp4").write_bytes(b"")
    rows = [{"item_id": f"{g[:3]}{c}", "video": "v.mp4", "clip_id": f"c{c}", "generator": g,
             "instruction": "stack the cups"} for c in range(2) for g in (GENERATOR, "wan")]
    lines = [json.dumps(r) for r in rows] + ['{"item_id": "broken"}']
    path = tmp_path / "suite.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_suite_info_prints_names_whole_and_its_notes_on_stderr(manifest: Path) -> None:
    # Before: at COLUMNS=40 (or 80) the generator read 'cosmos_predict2_14b_video2…'.
    done = piped("suite", "info", str(manifest))
    assert done.returncode == 0, done.stderr
    whole(done.stdout, GENERATOR)
    assert "1 row(s) left out" in done.stderr and "left out" not in done.stdout
    shown = piped("suite", "info", str(manifest), "--json")
    assert json.loads(shown.stdout)["by_generator"] == {GENERATOR: 2, "wan": 2}


def test_weights_tables_print_sources_paths_and_metrics_whole(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: at COLUMNS=40 a source read 'openai/cli…' and a metrics list was cut or wrapped over lines.
    monkeypatch.setenv("ROBOJUDGE_WEIGHTS", str(tmp_path / "weights"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    listed = piped("weights", "list")
    assert listed.returncode == 0, listed.stderr
    whole(listed.stdout, "openai/clip-vit-base-patch32", "cc_background, cc_subject, clip_frame_consistency")
    status = piped("weights", "status")
    assert status.returncode == 0, status.stderr
    whole(status.stdout, f"$ROBOJUDGE_WEIGHTS: {tmp_path / 'weights'}",
          "robojudge weights fetch clip_vit_b32",
          "export a TorchScript file to $ROBOJUDGE_WEIGHTS/frame_interpolation/frame_interpolation.pt")
    for command in ("list", "status"):
        rows = json.loads(piped("weights", command, "--json").stdout)
        assert {r["name"] for r in rows} >= {"clip_vit_b32", "frame_interpolation"}


METRIC = "ta_mean_trajectory_length"  # an external metric (imported), of a long name


@pytest.fixture
def run(manifest: Path) -> Path:
    """A run folder beside ``manifest`` whose store holds an imported metric of a long name."""
    folder = manifest.parent / "runs" / "suite"
    folder.mkdir(parents=True)
    (manifest.parent / "sim.csv").write_text(f"item_id,metric,value\ncos0,{METRIC},0.5\nwan0,{METRIC},1\n")
    done = piped("results", "import", "sim.csv", "--run-dir", str(folder), "--suite", str(manifest),
                 cwd=manifest.parent)
    assert done.returncode == 0, done.stderr
    return folder


def test_results_import_notes_on_stderr_and_its_table_whole(manifest: Path, run: Path) -> None:
    # Before: 'checking item ids against ...' was on stdout, and at COLUMNS=40 the metric read 'ta_mean_tr…'.
    (run / "suite.jsonl").write_text(manifest.read_text())  # the run's own manifest: checked without --suite
    (run.parent / "more.csv").write_text("item_id,value\ncos1,0.25\n")
    done = piped("results", "import", str(run.parent / "more.csv"), "--run-dir", str(run), "--metric",
                 METRIC)
    assert done.returncode == 0, done.stderr
    assert f"checking item ids against {run / 'suite.jsonl'}" in done.stderr
    assert "checking" not in done.stdout
    whole(done.stdout, METRIC, "1 imported, 0 unchanged, 0 replaced")


def test_results_status_json_and_its_table_whole(manifest: Path, run: Path) -> None:
    # Before: no --json; the run folder's manifest line was on stdout; at COLUMNS=40 the table was cut.
    done = piped("results", "status", str(manifest), "--run-dir", str(run))
    assert done.returncode == 0, done.stderr
    whole(done.stdout, METRIC)
    row = next(line for line in done.stdout.splitlines() if METRIC in line)
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[4:11] == ["2", "0", "0", "0", "0", "2", "0"]  # current, up to date, ..., imported
    shown = piped("results", "status", str(manifest), "--run-dir", str(run), "--json", "--stale")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert status["db_url"].endswith("results.sqlite") and status["rows"] == []
    (m,) = status["metrics"]
    assert (m["metric"], m["current"], m["imported"], m["no_row"]) == (METRIC, 2, 2, 2)
    assert m["old_version"] is False and m["median_s"] is None  # imported rows took no time here
    assert sorted(m["no_row_first"]) == ["cos1", "wan1"]
    assert (status["stale"], status["unavailable"], status["unknown"]) == (0, 0, 0)
    assert [p["item_id"] for p in status["manifest_problems"]] == ["broken"]  # the fifth row
    # A run folder: which manifests it read is a note, on stderr.
    (run / "suite.jsonl").write_text(manifest.read_text())  # the run folder's own manifest, and its video
    (run / "v.mp4").write_bytes(b"")
    shown = piped("results", "status", str(run), "--json")
    assert shown.returncode == 0, shown.stderr
    assert f"suite manifest: {run / 'suite.jsonl'}" in shown.stderr
    assert json.loads(shown.stdout)["metrics"][0]["current"] == 2 and "rows" not in json.loads(shown.stdout)
    assert json.loads(shown.stdout)["files_missing"] == []
    # A video gone: the run folder lists its items as the manifest form does (it gave [] before).
    (run / "v.mp4").unlink()
    gone = json.loads(piped("results", "status", str(run), "--json").stdout)["files_missing"]
    assert sorted(p["item_id"] for p in gone) == ["cos0", "cos1", "wan0", "wan1"]
