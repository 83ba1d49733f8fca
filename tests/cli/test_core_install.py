"""Every command works on the core install: a fresh virtual environment with no extras.

The dev environment the other tests run in has pandas, torch, mujoco and the rest, so a module-level
import of a dev-only package in a CLI module passes every other test and crashes ``robojudge --help``
right after ``pip install robojudge``. This test installs the checkout into an empty venv (the same
resolver run a user does, served from pip's cache after ``make test``'s install) and drives the CLI
there as a user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTRAS_ONLY = ("torch", "torchvision", "transformers", "pyiqa", "ray", "mujoco", "fastapi", "lpips")

# Runs inside the core venv: `--help` of every command and sub-command, through the same entry
# point the console script uses (so the lazy per-command imports are what gets exercised).
_WALK_HELP = textwrap.dedent(
    """
    import contextlib, io, json, sys
    import typer.main
    from robojudge.cli import build_app, main

    def paths(cmd, prefix=()):
        yield prefix
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            yield from paths(sub, prefix + (name,))

    every = list(paths(typer.main.get_command(build_app())))
    failures = {}
    for path in every:
        out = io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                main([*path, "--help"])
            except SystemExit as exc:
                code = exc.code or 0
            except Exception as exc:  # an import error is what this test is for
                code, _ = 1, out.write(f"{type(exc).__name__}: {exc}")
        if code != 0 or "Usage" not in out.getvalue():
            failures[" ".join(path)] = out.getvalue()[-400:]
    print(json.dumps({"checked": [" ".join(p) for p in every], "failures": failures}))
    """
)


def _run(args: list[str | Path], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["MPLBACKEND"] = "Agg"
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    command = " ".join(map(str, args))
    assert proc.returncode == 0, (
        f"{command} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The core install in a venv of its own (about 1 GB), removed when this file's tests end: a module
    fixture's folder otherwise stays until the session ends."""
    folder = tmp_path_factory.mktemp("core")
    venv = folder / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    try:
        _run([base, "-m", "venv", venv], cwd=ROOT)
        py = venv / "bin" / "python"
        pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-cache-dir"]
        _run([*pip, str(ROOT)], cwd=ROOT, timeout=1200)
        yield venv
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_core_install_has_no_extras(core_venv: Path) -> None:
    probe = (
        "import importlib.util, json, sys; "
        "print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))"
    )
    found = json.loads(_run([core_venv / "bin" / "python", "-c", probe, *EXTRAS_ONLY], cwd=ROOT).stdout)
    assert found == [], f"the core install pulled in extras: {found}"


@pytest.mark.slow
def test_every_command_help_on_core_install(core_venv: Path, tmp_path: Path) -> None:
    top = _run([core_venv / "bin" / "robojudge", "--help"], cwd=tmp_path)
    assert "aggregate" in top.stdout and "meta" in top.stdout
    report = json.loads(_run([core_venv / "bin" / "python", "-c", _WALK_HELP], cwd=tmp_path).stdout)
    assert {"meta agreement", "aggregate scores", "report", "results export"} <= set(report["checked"])
    assert report["failures"] == {}


@pytest.mark.slow
def test_main_commands_run_on_core_install(core_venv: Path, tmp_path: Path) -> None:
    rj = core_venv / "bin" / "robojudge"
    # The main job on the suite that needs no extra: build, score, report.
    _run([rj, "demo", "--suite", "synthetic", "--out", tmp_path / "run", "--no-progress"], cwd=tmp_path)
    assert (tmp_path / "run" / "report" / "index.html").is_file()
    _run([rj, "report", tmp_path / "run", "--out", tmp_path / "again"], cwd=tmp_path)
    assert "<html" in (tmp_path / "again" / "index.html").read_text().lower()
    _run([rj, "results", "export", "--db", tmp_path / "run" / "results.sqlite", "--format", "csv",
          "--out", tmp_path / "results.csv"], cwd=tmp_path)
    assert (tmp_path / "results.csv").read_text().count("\n") > 10

    # A manifest for a folder of videos, their names kept, then opened by validate.
    video = next((tmp_path / "run").rglob("*.mp4"))
    for gen in ("model a", "model b"):
        (tmp_path / "mine" / gen).mkdir(parents=True)
        (tmp_path / "mine" / gen / "ep 7.mp4").write_bytes(video.read_bytes())
    out = _run([rj, "suite", "scan", tmp_path / "mine", "--embodiment", "gripper"], cwd=tmp_path)
    assert "wrote mine.jsonl: 2 item(s), 1 clip(s)" in out.stdout
    _run([rj, "suite", "validate", "mine.jsonl", "--no-progress"], cwd=tmp_path)

    # meta agreement on a small table of judge and human scores (pandas reads these).
    human, pred = ["item_id,axis,score,clip_id"], ["judge,item_id,axis,score"]
    for i in range(12):
        for axis in ("pa", "ia"):
            h = 1 + (i * 7 + len(axis)) % 5
            human.append(f"v{i},{axis},{h},c{i // 2}")
            pred.append(f"j,v{i},{axis},{min(5, h + i % 2)}")
    (tmp_path / "human.csv").write_text("\n".join(human) + "\n")
    (tmp_path / "pred.csv").write_text("\n".join(pred) + "\n")
    out = _run([rj, "meta", "agreement", "--pred", tmp_path / "pred.csv", "--human", tmp_path / "human.csv",
                "--bootstrap", "50", "--json"], cwd=tmp_path)
    assert json.loads(out.stdout)["judges"] == ["j"]
    # meta segments: scores against per-segment verdicts, clips resampled.
    verdicts = ("Good", "Medium", "Bad")
    rows = ["clip,video,verdict,kiva"]
    rows += [f"c{i // 3},v{i},{verdicts[i % 3]},{i % 3 + 0.1 * i}" for i in range(18)]
    (tmp_path / "segments.csv").write_text("\n".join(rows) + "\n")
    out = _run([rj, "meta", "segments", "--in", tmp_path / "segments.csv", "--score", "kiva",
                "--clip", "clip", "--replicates", "50", "--json"], cwd=tmp_path)
    assert json.loads(out.stdout)["clusters"] == {"all": 6}

    # aggregate scores on a long table: 25 dB / 50 dB normalises to 0.5 (RoboPhys-3D Table 6 bound).
    (tmp_path / "long.csv").write_text("gen,metric,value\ng,iq1_psnr,25\n")
    out = _run([rj, "aggregate", "scores", "--in", tmp_path / "long.csv", "--by", "gen", "--missing", "drop",
                "--robophyscore-metrics", "iq1_psnr"], cwd=tmp_path)
    assert "0.5" in out.stdout


def _refused(args: list[str | Path], cwd: Path) -> str:
    """The one ``error:`` line of a command that must stop at once (exit status 2), without a traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    lines = [x for x in (proc.stdout + proc.stderr).splitlines() if x.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), (
        f"{args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return lines[0]


@pytest.mark.slow
def test_what_needs_an_extra_names_it_on_core_install(core_venv: Path, tmp_path: Path) -> None:
    rj = core_venv / "bin" / "robojudge"
    _run([rj, "demo", "--suite", "synthetic", "--out", tmp_path / "run", "--no-progress"], cwd=tmp_path)
    manifest = next((tmp_path / "run").rglob("*.jsonl"))
    torch = "pip install '.[torch]' in a robojudge checkout"
    line = _refused([rj, "kiva", "train", "--episodes", manifest, "--robot", "fetch",
                     "--out", tmp_path / "k"], cwd=tmp_path)
    assert line.endswith(f"needs torch, which is not installed: {torch}")
    line = _refused([rj, "kiva", "calibrate", "--reader", tmp_path / "k", "--episodes", manifest],
                    cwd=tmp_path)
    assert line.endswith(torch)
    line = _refused([rj, "score", manifest, "-m", "iq1_lpips", "--run-dir", tmp_path / "x"], cwd=tmp_path)
    assert line.endswith(f"which are not installed here: {torch}") and not (tmp_path / "x").exists()
    line = _refused([rj, "weights", "fetch", "clip_vit_b32", "--dest", tmp_path / "w"], cwd=tmp_path)
    assert line.endswith(f"needs huggingface_hub, which is not installed: {torch}") and "refused" not in line
    # `all` leaves the model metrics out, even one whose weights are here, and says what to install.
    (tmp_path / "w" / "musiq_spaq").mkdir(parents=True)
    (tmp_path / "w" / "musiq_spaq" / "musiq_spaq_ckpt-358bb6af.pth").write_bytes(b"never read")
    probe = ("import json; from robojudge.metrics import expand_metric_ids, not_run_summary; "
             "print(json.dumps([expand_metric_ids(['all']), not_run_summary()]))")
    env_run = subprocess.run([core_venv / "bin" / "python", "-c", probe], cwd=tmp_path, capture_output=True,
                             text=True, timeout=600, check=True,
                             env={**{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
                                  "ROBOJUDGE_WEIGHTS": str(tmp_path / "w")})
    ids, lines = json.loads(env_run.stdout)
    assert "iq1_musiq" not in ids and "pixel_frame_consistency" in ids
    assert any(x.startswith("  need torch") and f"({torch})" in x and "iq1_lpips" in x for x in lines), lines
    iqa = "pip install '.[torch,iqa]' in a robojudge checkout"
    assert any(iqa in x and "iq1_musiq" in x for x in lines), lines
