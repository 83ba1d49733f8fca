"""Bad ROBOJUDGE_* variables and non-finite --set values (an audit of every command given bad input):
a network-cache variable set to 0 broke even ``--help`` with a traceback; a bad frame-memory variable
turned every task into an error row that the next run kept; ``--set X=Infinity`` was stored as null."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from robojudge.video import write_video


def rj(*args: object, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robojudge", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env={**os.environ, "COLUMNS": "200", **env})


def _suite(tmp_path: Path) -> Path:
    write_video(tmp_path / "v.mp4", np.zeros((4, 16, 16, 3), np.uint8), fps=4)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "a", "video": "v.mp4"}) + "\n")
    return manifest


def test_a_network_cache_variable_set_to_zero_leaves_weights_free_commands_alone(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    helped = rj("--help", cwd=tmp_path, ROBOJUDGE_MAX_NETWORKS="0")
    assert helped.returncode == 0 and "Traceback" not in helped.stderr
    info = rj("suite", "info", manifest, cwd=tmp_path, ROBOJUDGE_NETWORK_CACHE_GIB="-1")
    assert info.returncode == 0, info.stderr
    scored = rj("score", manifest, "-m", "pixel_frame_consistency", cwd=tmp_path, ROBOJUDGE_MAX_NETWORKS="0")
    assert scored.returncode == 2 and "error: ROBOJUDGE_MAX_NETWORKS='0'" in scored.stderr


def test_a_bad_frame_memory_variable_is_refused_before_any_task(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    db = tmp_path / "r.sqlite"
    res = rj("score", manifest, "-m", "pixel_frame_consistency", "--db", db, cwd=tmp_path,
             ROBOJUDGE_FRAME_MEMORY_GIB="abc")
    assert res.returncode == 2 and "error: ROBOJUDGE_FRAME_MEMORY_GIB='abc'" in res.stderr
    assert not db.exists()
    judged = rj("judge", manifest, "--backend", "mock", "--model", "m", cwd=tmp_path,
                ROBOJUDGE_FRAME_MEMORY_GIB="-1")
    assert judged.returncode == 2 and "ROBOJUDGE_FRAME_MEMORY_GIB='-1'" in judged.stderr


def test_a_non_finite_set_value_is_refused(tmp_path: Path) -> None:
    manifest = _suite(tmp_path)
    for value in ("Infinity", "-Infinity", "NaN"):
        res = rj("score", manifest, "-m", "iq1_psnr", "--db", tmp_path / "r.sqlite", "--set",
                 f"iq1_psnr.max_db={value}", cwd=tmp_path)
        assert res.returncode == 2, res.stderr
        assert f"--set iq1_psnr.max_db={value}: the value must be a finite number" in res.stderr


def test_a_path_that_cannot_be_written_is_one_error_line(tmp_path: Path) -> None:
    """An --out under a file gave a raw traceback in 17 commands; suite scan said "pass --force" even with
    --force."""
    manifest = _suite(tmp_path)
    (tmp_path / "x.png").write_bytes(b"a file")
    assert rj("score", manifest, "-m", "pixel_frame_consistency", "--db", tmp_path / "r.sqlite",
              cwd=tmp_path).returncode == 0
    res = rj("results", "export", "--db", tmp_path / "r.sqlite", "--out", tmp_path / "x.png" / "e.csv",
             cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "error: " in res.stderr and "x.png" in res.stderr and "Not a directory" in res.stderr
    for force in ([], ["--force"]):
        scan = rj("suite", "scan", tmp_path, "--out", tmp_path / "x.png" / "m.jsonl", *force, cwd=tmp_path)
        assert scan.returncode == 2 and "pass --force" not in scan.stderr, scan.stderr
        assert "cannot write" in scan.stderr and "x.png" in scan.stderr


def test_a_bad_variable_stops_only_the_commands_that_read_it(tmp_path: Path) -> None:
    """Audit config F7: a bad ROBOJUDGE_DECODE_WORKERS stopped ``judge --decode-workers 0``, whose option
    replaces it, and ``score``, which never reads it."""
    manifest = _suite(tmp_path)
    bad = {"ROBOJUDGE_DECODE_WORKERS": "abc"}
    scored = rj("score", manifest, "-m", "pixel_frame_consistency", "--db", tmp_path / "s.sqlite",
                cwd=tmp_path, **bad)
    assert scored.returncode == 0, scored.stderr
    (tmp_path / "judges.toml").write_text('[judges.m]\nbackend = "mock"\nmodel = "m"\n'
                                          'replies = ["Score: 4"]\n')
    judge = ("judge", manifest, "--judges", tmp_path / "judges.toml", "-j", "m", "-r", "pa", "--db",
             tmp_path / "j.sqlite")
    given = rj(*judge, "--decode-workers", "0", cwd=tmp_path, **bad)
    assert given.returncode == 0, given.stderr
    read = rj(*judge, cwd=tmp_path, **bad)  # (without the option the variable is what sets it)
    assert read.returncode == 2 and "error: ROBOJUDGE_DECODE_WORKERS='abc'" in read.stderr


def test_the_demo_is_not_stopped_by_a_variable_it_never_reads(tmp_path: Path) -> None:
    # (review rev12 F5: the demo judges nothing, yet a bad ROBOJUDGE_DECODE_WORKERS refused it; a bad
    # --suite shows the command got past the variables' check without building anything)
    res = rj("demo", "--out", tmp_path / "demo", "--suite", "3d", cwd=tmp_path,
             ROBOJUDGE_DECODE_WORKERS="abc")
    assert res.returncode == 2
    assert "--suite must be" in res.stderr and "DECODE_WORKERS" not in res.stderr
