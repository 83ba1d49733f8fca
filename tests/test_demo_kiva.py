"""The demo's KIVA step (robojudge.demo): a reader per robot, trained once, cached, scoring its own robot."""

from __future__ import annotations

import builtins
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from robojudge.demo import NO_TORCH, run_demo
from robojudge.kiva import TrainConfig
from robojudge.store import ResultStore
from robojudge.suite import load_suite

os.environ.setdefault("MUJOCO_GL", "egl")

#: A reader that trains in seconds: what is tested is the demo's wiring, not the reader's accuracy.
TINY = TrainConfig(size=32, width=8, epochs=3, batch_size=32, lr=5e-3, rollouts=False, threads=1)
KIVA = {"kiva", "kiva_rigidity", "kiva_jerk"}
CHEAP = ["pixel_frame_consistency"]


@pytest.fixture(scope="module")
def sim_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo suite folder as ``build_demo_suite`` leaves it: two Fetch episodes and one ADROIT episode."""
    pytest.importorskip("mujoco")
    from robojudge.suite.sim import make_sim_suite

    folder = tmp_path_factory.mktemp("demo_suite") / "suite"
    # Rendered in worker processes, never this one: see docs/kiva.md (EGL and torch's compiler).
    make_sim_suite(folder, seed=0, episodes=3, views=1, size=64, profiles=("oracle", "glitchy"), workers=2)
    (folder / "SUITE_KIND").write_text("sim\n")
    return folder


def _demo_dir(tmp_path: Path, suite: Path) -> Path:
    out = tmp_path / "demo"
    shutil.copytree(suite, out / "suite")
    return out


@pytest.mark.slow
def test_demo_trains_a_reader_per_robot_once_and_scores_its_rollouts(sim_suite: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = _demo_dir(tmp_path, sim_suite)
    said: list[str] = []
    # Which step each result and each step came in: the scoring run's callback gets its results only.
    steps: list[tuple[str, bool]] = []
    results: list[str] = []

    def step(what: str, counts: bool) -> Any:
        steps.append((what, counts))
        return (lambda row, summary: results.append(what)) if counts else None

    first = run_demo(out, suite="sim", workers=1, metrics=CHEAP, kiva_config=TINY, announce=said.append,
                     progress=lambda row, summary: results.append("scoring"), phase=step)
    assert first.kiva is not None and first.kiva.missing is None
    assert steps == [("KIVA: the adroit reader", False), ("KIVA (adroit)", True),
                     ("KIVA: the fetch reader", False), ("KIVA (fetch)", True), ("writing the report", False)]
    assert results == (["scoring"] * first.run.summary.computed + ["KIVA (adroit)"] * 3 * 2
                       + ["KIVA (fetch)"] * 3 * 4)
    readers = {r.embodiment: r for r in first.kiva.readers}
    assert set(readers) == {"gripper", "dexterous_hand"}
    assert {r.robot for r in readers.values()} == {"fetch", "adroit"}
    assert all(r.trained for r in readers.values())
    assert len([line for line in said if line.startswith("training a KIVA reader")]) == 2
    for r in readers.values():
        assert r.folder.parent == out / "kiva" and (r.folder / "reader.pt").is_file()
        assert not list(out.glob("kiva/*.partial*"))

    items = load_suite(out / "suite" / "suite.jsonl").items
    emb = {it.item_id: it.embodiment.value for it in items if it.embodiment is not None}
    with ResultStore(f"sqlite:///{out / 'results.sqlite'}") as store:
        rows = [r for r in store.rows() if r.metric in KIVA]
    # Each reader scored exactly its own embodiment's rollouts, every KIVA metric, and stored no refusal.
    assert rows and not [r for r in rows if r.status == "error"]
    for r in readers.values():
        ckpt = str(r.folder / "reader.pt")
        scored = {(x.item_id, x.metric) for x in rows if (x.config or {}).get("reader") == ckpt}
        mine = {i for i, e in emb.items() if e == r.embodiment}
        assert scored == {(i, m) for i in mine for m in KIVA}, r.embodiment
    gripper_kiva = [x for x in rows if x.metric == "kiva" and emb[x.item_id] == "gripper"]
    assert len(gripper_kiva) == 4 and all(x.details and x.details["robot"] == "fetch" for x in gripper_kiva)

    # The summary's KIVA table: one row per robot and generator, from the stored values.
    groups = {(g.robot, g.group): g for g in first.kiva.groups}
    assert set(groups) == {(rb, g) for rb in ("fetch", "adroit") for g in ("oracle", "glitchy")}
    fetch_oracle = [x.value for x in gripper_kiva if x.item_id.endswith("-oracle") and x.value is not None]
    if fetch_oracle and all(v == v for v in fetch_oracle):
        assert groups[("fetch", "oracle")].mean == pytest.approx(sum(fetch_oracle) / len(fetch_oracle))
    assert first.html is not None
    section = {s.key: s for s in first.html.sections}["kiva"]
    assert section.skipped is None and (out / "report" / "tables" / "kiva.csv").is_file()

    # Second run: the readers are found by their key, nothing is trained or rescored.
    stamps = {r.folder: (r.folder / "reader.pt").stat().st_mtime_ns for r in readers.values()}
    said.clear()
    again = run_demo(out, suite="sim", workers=1, metrics=CHEAP, kiva_config=TINY, announce=said.append)
    assert again.kiva is not None and not [line for line in said if line.startswith("training")]
    assert {r.folder for r in again.kiva.readers} == set(stamps)
    assert not any(r.trained for r in again.kiva.readers)
    assert all((f / "reader.pt").stat().st_mtime_ns == t for f, t in stamps.items())
    assert all(r.summary.computed == 0 and r.summary.skipped == 3 * r.items for r in again.kiva.readers)

    # Another training config is another reader (the key covers the config, not only the data).
    other = run_demo(out, suite="sim", workers=1, metrics=CHEAP, kiva_embodiments=["gripper"],
                     kiva_config=TINY.model_copy(update={"epochs": 2}), announce=said.append)
    assert other.kiva is not None and [r.trained for r in other.kiva.readers] == [True]
    assert other.kiva.readers[0].folder not in stamps


@pytest.mark.slow
def test_demo_without_torch_completes_and_says_why(sim_suite: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # As on the core install: `import torch` fails and find_spec finds nothing (sys.modules is left alone:
    # scipy reads it to tell torch arrays apart).
    real_import, real_spec = builtins.__import__, importlib.util.find_spec

    def no_torch(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "torch":
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return real_import(name, *args, **kwargs)

    def no_torch_spec(name: str, package: str | None = None) -> Any:
        return None if name.split(".")[0] == "torch" else real_spec(name, package)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    monkeypatch.setattr(importlib.util, "find_spec", no_torch_spec)
    out = _demo_dir(tmp_path, sim_suite)
    result = run_demo(out, suite="sim", workers=1, metrics=CHEAP, kiva_config=TINY)
    assert result.kiva is not None and result.kiva.missing == NO_TORCH and not result.kiva.readers
    assert "pip install '.[torch]' in a robojudge checkout" in NO_TORCH
    assert "make" not in NO_TORCH  # a pip user has no Makefile
    assert not (out / "kiva").exists()
    with ResultStore(f"sqlite:///{out / 'results.sqlite'}") as store:
        metrics = {r.metric for r in store.rows()}
    assert metrics == set(CHEAP)
    assert result.html is not None and (out / "report" / "index.html").is_file()


def test_demo_prints_kiva_or_why_not(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from robojudge.cli._demo import _print_kiva
    from robojudge.demo import DemoKiva, DemoReader
    from robojudge.report import KivaGroup
    from robojudge.run import RunSummary

    _print_kiva(SimpleNamespace(kiva=DemoKiva(missing=NO_TORCH)))  # type: ignore[arg-type]
    assert capsys.readouterr().out.strip() == NO_TORCH
    _print_kiva(SimpleNamespace(kiva=None))  # type: ignore[arg-type]  # the 2D suite: nothing to say
    assert capsys.readouterr().out == ""
    err = {"keypoints": 10, "mean_px": 0.8, "fraction_of_diagonal": 0.018}
    reader = DemoReader("gripper", "fetch", Path("runs/demo/kiva/fetch-0123"), True, 61.0, err, 42,
                        RunSummary())
    groups = [KivaGroup("fetch", "oracle", "abcd1234 v12", 7, 4.8, 21, 1, 21, 0, 21, 1),
              KivaGroup("fetch", "chaotic", "abcd1234 v12", 7, 52.4, 21, 11, 21, 3, 21, 10)]
    kiva = DemoKiva([reader], groups=groups, skipped=["bimanual (aloha): boom"])
    _print_kiva(SimpleNamespace(kiva=kiva))  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "KIVA reader for fetch (gripper, 42 rollouts): trained now in 61 s" in out
    assert "0.80 px (1.8% of the diagonal); 0 results scored, 0 failed, 0 already stored" in out
    assert "KIVA not scored for bimanual (aloha): boom" in out
    assert "KIVA by generator" in out and "chaotic" in out and "52.4" in out and "52.4% of 21" in out


def test_a_cached_reader_calibrated_for_an_older_measure_is_not_reused(tmp_path: Path) -> None:
    from robojudge.demo import _calibrated

    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / "reader.pt").write_bytes(b"weights")
    cal: dict[str, Any] = {"rigidity": 0.1, "jerk": 40.0, "finger": None}  # as calibrated up to version 3
    (folder / "reader.json").write_text(json.dumps({"calibration": cal}))
    assert _calibrated(folder) is None  # the demo trains and calibrates it again
    cal["scales"] = {"links": [0.05], "keypoints": [12.0, 9.0], "percentile": 95.0, "floor": 0.5}
    # Each later measure's key added in turn: until the last, the cached reader is still an old one.
    for key, value in (("finger_gap", 0.02), ("lengths", "relative"), ("jerk_windows", "lead"),
                       ("confidence", 0.7)):
        (folder / "reader.json").write_text(json.dumps({"calibration": cal}))
        assert _calibrated(folder) is None, key  # calibrated before version 5, 6, 7 or 8
        cal[key] = value
    (folder / "reader.json").write_text(json.dumps({"calibration": cal}))
    assert _calibrated(folder) is None  # trained before the training videos' shapes were stored
    (folder / "reader.json").write_text(json.dumps({"calibration": cal, "frame_aspects": [1.0]}))
    assert _calibrated(folder) == {"calibration": cal, "frame_aspects": [1.0]}
    # Thresholds drawn on segments of another length are not the demo's metrics' either.
    (folder / "reader.json").write_text(json.dumps({"calibration": {**cal, "segment": 24},
                                                    "frame_aspects": [1.0]}))
    assert _calibrated(folder) is None
    (folder / "reader.json").write_text(json.dumps({"calibration": cal, "frame_aspects": [1.0]}))
    (folder / "reader.pt").unlink()
    assert _calibrated(folder) is None


@pytest.mark.slow
def test_a_cached_reader_without_its_training_shapes_gets_them_before_it_is_reused(
        sim_suite: Path, tmp_path: Path) -> None:
    # Before, such a reader (cached by the robojudge of 2026-12-05) passed the cache check, and the
    # KIVA metrics then refused every rollout: all KIVA results of the demo were error rows.
    pytest.importorskip("torch")
    from robojudge.demo import ensure_reader
    from robojudge.kiva import load_reader
    from robojudge.kiva._reader import _write

    manifest = sim_suite / "suite.jsonl"
    folder, trained, _, meta = ensure_reader(manifest, "fetch", tmp_path, TINY)
    assert trained and meta["frame_aspects"] == [1.0]

    def strip(files: dict[str, str] | None = None) -> None:
        reader = load_reader(folder)
        reader.meta.pop("frame_aspects")
        if files is not None:
            reader.meta["data"]["files"] = files
        _write(reader.path, reader.net.state_dict(), reader.meta)

    strip()
    weights = load_reader(folder).net.state_dict()
    said: list[str] = []
    again, trained, seconds, meta = ensure_reader(manifest, "fetch", tmp_path, TINY, said.append)
    assert (again, trained, seconds) == (folder, False, 0.0)
    assert meta["frame_aspects"] == [1.0] and load_reader(folder).aspects == [1.0]
    assert [line for line in said if line.startswith("recorded the training videos' shapes")], said
    kept = load_reader(folder).net.state_dict()
    assert all(bool((kept[k] == v).all()) for k, v in weights.items())  # the same weights, not retrained

    # Training files that changed since cannot give the shapes: the reader is trained again instead.
    from robojudge.demo import _with_aspects

    strip({str(tmp_path / "gone.mp4"): "0" * 64})
    assert _with_aspects(folder, None) is None
    assert "frame_aspects" not in json.loads((folder / "reader.json").read_text())


# --- two runs training one reader at once ----------------------------------------------------------------
# Training stands in for the real one (a minute per reader): what is tested is how the reader gets into its
# cache folder when two processes train it at once, and the real training is a separate process either way.

#: A calibration the demo takes as today's (see the test above): a stand-in reader is reused as it is.
CALIBRATION = {"rigidity": 0.1, "jerk": 40.0, "finger": None, "finger_gap": 0.02, "lengths": "relative",
               "jerk_windows": "lead", "confidence": 0.7,
               "scales": {"links": [0.05], "keypoints": [12.0], "percentile": 95.0, "floor": 0.5}}
STAND_IN_CONFIG = TrainConfig(size=32, width=8, epochs=1, rollouts=False, threads=1)

#: One run of ``ensure_reader`` whose training writes a reader saying who made it, then waits until the
#: runs named after it have written theirs: every run is past its training before any moves its reader.
_RUN = r"""
import json, sys, time
from pathlib import Path
import robojudge.demo as demo
from robojudge.kiva import TrainConfig

manifest, root, flags, calibration, config, me, *others = sys.argv[1:]

def stand_in(manifest, robot, folder, config):
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reader.pt").write_text(me)
    facts = {"made_by": me, "calibration": json.loads(calibration), "frame_aspects": [1.0]}
    (out / "reader.json").write_text(json.dumps(facts))
    (Path(flags) / me).touch()
    deadline = time.monotonic() + 120
    while not all((Path(flags) / other).exists() for other in others):
        if time.monotonic() > deadline:
            raise SystemExit(f"{me}: {others} never trained")
        time.sleep(0.02)

demo._train_and_calibrate = stand_in
folder, trained, _, meta = demo.ensure_reader(manifest, "fetch", Path(root),
                                              TrainConfig.model_validate_json(config), print)
print(json.dumps({"folder": str(folder), "trained": trained, "made_by": meta["made_by"]}))
"""


def _fetch_suite(root: Path) -> Path:
    """A suite with one Fetch reference video and its keypoints: what the reader's key is made from."""
    from robojudge.kiva import resolve_robot
    from robojudge.video import write_video

    (root / "reference").mkdir(parents=True)
    write_video(root / "reference" / "fetch00.mp4", np.zeros((4, 16, 16, 3), np.uint8), fps=10)
    names = list(resolve_robot("fetch").keypoints)
    np.savez(root / "reference" / "fetch00.npz", keypoint_names=np.array(names),
             keypoints_2d=np.zeros((4, len(names), 2), np.float32),
             keypoints_visible=np.ones((4, len(names)), bool))
    video = "reference/fetch00.mp4"
    row = {"item_id": "fetch00-oracle", "video": video, "reference_video": video, "clip_id": "fetch00",
           "embodiment": "gripper"}
    (root / "suite.jsonl").write_text(json.dumps(row) + "\n")
    return root / "suite.jsonl"


def _start(manifest: Path, root: Path, flags: Path, me: str, *others: str) -> subprocess.Popen[str]:
    args = [sys.executable, "-c", _RUN, str(manifest), str(root), str(flags), json.dumps(CALIBRATION),
            STAND_IN_CONFIG.model_dump_json(), me, *others]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(run: subprocess.Popen[str]) -> tuple[dict[str, Any], str]:
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err[-3000:]
    return json.loads(out.splitlines()[-1]), out


def test_the_stand_in_reader_is_one_the_demo_reuses(tmp_path: Path) -> None:
    from robojudge.demo import _calibrated

    (tmp_path / "reader.pt").write_text("a")
    (tmp_path / "reader.json").write_text(json.dumps({"calibration": CALIBRATION, "frame_aspects": [1.0]}))
    assert _calibrated(tmp_path) is not None


def test_two_runs_training_one_reader_at_once_both_finish_with_one_reader(tmp_path: Path) -> None:
    # Before, both trained into one shared `<key>.partial` folder, each deleting what was there first, and
    # then deleted the final folder before moving `.partial` there: the run that came second to the move
    # failed (`robojudge demo` exited 2 after all its scoring, with no report), or the reader was gone.
    manifest = _fetch_suite(tmp_path / "suite")
    root, flags = tmp_path / "kiva", tmp_path / "flags"
    flags.mkdir()
    runs = {"a": _start(manifest, root, flags, "a", "b"), "b": _start(manifest, root, flags, "b", "a")}
    said = {me: _finish(run) for me, run in runs.items()}
    folders = {Path(facts["folder"]) for facts, _ in said.values()}
    assert len(folders) == 1 and all(facts["trained"] for facts, _ in said.values())
    folder = folders.pop()
    winner = json.loads((folder / "reader.json").read_text())["made_by"]
    assert (folder / "reader.pt").read_text() == winner
    # The run whose reader came second uses the one in place (the same key: the same files and config).
    assert {me: facts["made_by"] for me, (facts, _) in said.items()} == {"a": winner, "b": winner}
    loser = "b" if winner == "a" else "a"
    assert f"another run put the same KIVA reader in {folder} first: using that one" in said[loser][1]
    assert [p.name for p in root.iterdir()] == [folder.name]  # neither training folder is left
    assert folder.stat().st_mode & 0o777 == root.stat().st_mode & 0o777  # as readable as a folder made here


def test_training_replaces_a_stale_reader_and_removes_day_old_training_folders(tmp_path: Path) -> None:
    from robojudge.demo import reader_key

    manifest = _fetch_suite(tmp_path / "suite")
    root, flags = tmp_path / "kiva", tmp_path / "flags"
    flags.mkdir()
    root.mkdir()
    stale = root / reader_key(manifest, "fetch", STAND_IN_CONFIG)
    stale.mkdir()
    (stale / "reader.pt").write_text("old")
    (stale / "reader.json").write_text(json.dumps({"calibration": {"rigidity": 0.1}, "frame_aspects": [1.0]}))
    # What runs killed while training leave: this robojudge's folders and the older single name.
    killed = [root / "fetch-0123456789abcdef.partial-x1y2z3", root / "adroit-0123456789abcdef.partial"]
    busy = root / "aloha-0123456789abcdef.partial-q7r8s9"  # another run training now
    for path in (*killed, busy):
        path.mkdir()
        (path / "reader.pt").write_text("half")
    two_days_ago = time.time() - 2 * 24 * 3600
    for path in killed:
        os.utime(path, (two_days_ago, two_days_ago))
    facts, _ = _finish(_start(manifest, root, flags, "a"))
    assert Path(facts["folder"]) == stale and facts["made_by"] == "a"
    assert json.loads((stale / "reader.json").read_text())["made_by"] == "a"
    assert sorted(p.name for p in root.iterdir()) == sorted([stale.name, busy.name])
