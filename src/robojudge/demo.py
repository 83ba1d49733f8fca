"""``robojudge demo``: build the embedded demo suite, score it, write a report ending in index.html.

On the simulator suite the demo also scores KIVA (RoboWorM): each embodiment of the suite that has a
built-in robot gets a small keypoint reader trained on that robot's reference videos
(:func:`robojudge.kiva.train_reader`) and calibrated on the same references; the reader scores ``kiva``,
``kiva_rigidity`` and ``kiva_jerk`` for the rollouts of its embodiment only (the metric refuses another
robot's videos, and those refusals would only be noise in the report). The reader lives in the run
folder under a name made from its robot, its training config and a hash of its training files, so a
second demo run finds it and trains nothing. KIVA needs torch; without it the step is skipped with the
reason (:data:`NO_TORCH`). See docs/kiva.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from robojudge import DEFAULT_SEED
from robojudge.kiva import (
    MEASURE_VERSION,
    SEGMENT,
    TrainConfig,
    calibration_version,
    episodes_from_manifest,
    record_frame_aspects,
    resolve_robot,
)
from robojudge.meta import Leaderboard
from robojudge.metric_info import (
    direction,
    registry_config_key,
    registry_defaults,
    registry_networks,
    registry_range,
)
from robojudge.report import (
    GroupSummary,
    HtmlReport,
    JudgeRow,
    KivaGroup,
    LabelAgreement,
    chance_row,
    generator_board,
    judges_report,
    kiva_groups,
    label_agreement,
    label_scores,
    report_suite,
    write_html_report,
    write_judges,
    write_label_agreement,
    write_leaderboard,
)
from robojudge.run import (
    ProgressCallback,
    RunSummary,
    SuiteRun,
    build_requests,
    remembered_stale,
    score_items,
    score_suite,
    stale_rows,
)
from robojudge.store import ResultRow, ResultStore, sqlite_url
from robojudge.suite import load_suite
from robojudge.suite._demo import make_synthetic_suite

log = logging.getLogger(__name__)
SuiteKind = Literal["auto", "sim", "synthetic"]

# The 2D suite has no state files or simulator truth: only the video metrics apply to it.
SYNTHETIC_METRICS: tuple[str, ...] = (
    "pixel_frame_consistency",
    "flow_warp_error",
    "flow_motion_magnitude_farneback",
)
# On the simulator suite every weights-free (``computed``) single-view metric applies: references and
# state files exist. The list is fixed, not ``all``: ``all`` adds every model metric whose weights this
# machine happens to have, and the demo is to do the same work and print the same numbers everywhere
# (README: 19 metrics, 1,140 results). Left out: BLEU, because the suite has no captions (they come from
# a captioning judge, `robojudge judge --rubric caption`), and RIGIS (rigis, rigis_geo, rigis_pose): the
# demo's planted failures are single-view ones (its multi-view failures are opt-in,
# `--profiles mv_mild,mv_severe`, docs/rigis_validation.md), so its three views agree on every rollout
# but the camera-drift ones, and values that are mostly unscored or near 1 only added noise to the
# metric-calibrated judge (Overall r 0.59 -> 0.55 measured with them).
SIM_METRICS: tuple[str, ...] = (
    "cc_photometric",
    "cs_collision_count",
    "ctg_camera_control",
    "flow_motion_magnitude_farneback",
    "flow_warp_error",
    "iq1_psnr",
    "iq1_ssim",
    "mq_dynamic_degree",
    "mq_flow_score",
    "mq_temporal_flickering",
    "ol_average_precision",
    "ol_average_recall",
    "pixel_frame_consistency",
    "rbg_stability",
    "sim_task_success",
    "ta_dyn",
    "ta_hsd",
    "ta_ndtw",
    "uniform_random",
)



def demo_metrics(kind: str) -> list[str]:
    """The metrics the demo scores on a suite of ``kind`` (``sim`` or ``synthetic``): a fixed list of
    weights-free ones, the same whatever weights and libraries this machine has."""
    return list(SIM_METRICS if kind == "sim" else SYNTHETIC_METRICS)


KIVA_METRICS: tuple[str, ...] = ("kiva", "kiva_rigidity", "kiva_jerk")
#: The built-in robot behind each embodiment label the simulator suite writes.
DEMO_ROBOTS: Mapping[str, str] = {"gripper": "fetch", "dexterous_hand": "adroit", "bimanual": "aloha"}
#: Small enough to train in about a minute per robot on 2 busy CPU cores (README, docs/kiva.md): 32 px
#: frames, 8 channels, the references only. Heatmaps of 4 px cells without the heatmap loss (the defaults
#: before December 2026): the 2 px cells and loss of today's defaults were chosen on 128 px readers, and at
#: 32 px they read the demo's held-out ADROIT clip worse (2.97 px mean error against 2.18) and rank its
#: generators no better.
DEMO_READER = TrainConfig(size=32, width=8, epochs=15, batch_size=32, lr=5e-3, rollouts=False, threads=2,
                          heatmap_stride=4, heatmap_loss=0.0)
NO_TORCH = "KIVA skipped: it needs torch (pip install '.[torch]' in a robojudge checkout)"
#: A reader's training folder (``<robot>-<key>.partial-*``) older than this is taken for the leftover of a
#: run killed while training, and removed by the next training under the same folder; a younger one may be
#: another run's training in progress.
LEFT_BEHIND_S = 24 * 3600
#: Called as the demo starts each step after scoring, with what it does now (``KIVA: training the fetch
#: reader``, ``writing the report``) and whether that step stores results; returns the callback for that
#: step's results (or None). The CLI ends the scoring progress on the first call and shows the step's
#: own instead, so a run that scored everything does not keep saying ``scoring: 100%`` while it trains,
#: scores KIVA and writes the report.
PhaseCallback = Callable[[str, bool], ProgressCallback | None]


@dataclass(frozen=True)
class DemoReader:
    """A reader the demo used: which robot, where it is, and whether this run trained it."""

    embodiment: str
    robot: str
    folder: Path
    trained: bool
    seconds: float
    held_out_error: dict[str, Any]
    items: int
    summary: RunSummary


@dataclass
class DemoKiva:
    """What the KIVA step did: its readers (with their scoring runs), or why it did not run (``missing``)."""

    readers: list[DemoReader] = field(default_factory=list)
    missing: str | None = None
    groups: list[KivaGroup] = field(default_factory=list)  # KIVA per robot and generator, once scored
    skipped: list[str] = field(default_factory=list)  # embodiments left out, with the reason


def torch_available() -> bool:
    """Whether torch can be imported, asked without importing it."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def reader_key(manifest: str | Path, robot: str, config: TrainConfig) -> str:
    """A name for the reader trained on ``manifest`` for ``robot`` with ``config``.

    It hashes the robot, the config and the content of every file training would read, so a changed
    suite or config gets a new reader instead of a stale one.
    """
    bot = resolve_robot(robot)
    episodes, _ = episodes_from_manifest(manifest, bot.keypoints, config.rollouts)
    digest = hashlib.sha256(json.dumps([robot, bot.keypoints, config.model_dump()], sort_keys=True).encode())
    for path in sorted({p for ep in episodes for p in ep.files}):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return f"{robot}-{digest.hexdigest()[:16]}"


_TRAIN = (
    "import sys\n"
    "from robojudge.kiva import TrainConfig, calibrate_reader, train_reader\n"
    "manifest, robot, folder, config = sys.argv[1:5]\n"
    "train_reader(manifest, robot, folder, TrainConfig.model_validate_json(config))\n"
    "calibrate_reader(folder, manifest)\n"
)


def _train_and_calibrate(manifest: str, robot: str, folder: str, config: TrainConfig) -> None:
    # A fresh interpreter rather than a spawned worker: spawning re-imports the caller's main module,
    # which a script calling run_demo without a __main__ guard cannot survive.
    args = [sys.executable, "-c", _TRAIN, manifest, robot, folder, config.model_dump_json()]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"training the KIVA reader for {robot} into {folder} failed (exit "
                           f"{proc.returncode}):\n{proc.stderr[-2000:]}")


def _facts(folder: Path) -> dict[str, Any] | None:
    """A cached reader's ``reader.json``, if its checkpoint is there too."""
    try:
        meta: dict[str, Any] = json.loads((folder / "reader.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and (folder / "reader.pt").is_file() else None


def _calibrated_now(meta: Mapping[str, Any]) -> bool:
    """Whether the thresholds are for today's measure, drawn on the segments the demo's metrics cut (the
    default length: a reader calibrated before the length was stored used it too)."""
    cal = meta.get("calibration") or {}
    return calibration_version(cal) == MEASURE_VERSION and int(cal.get("segment") or SEGMENT) == SEGMENT


def _calibrated(folder: Path) -> dict[str, Any] | None:
    """The cached reader's facts if the KIVA metrics take it as it is, else None: calibrated for today's
    measure and segments, and with its training videos' shapes (``frame_aspects``), without which the
    metrics refuse every video."""
    meta = _facts(folder)
    return meta if meta is not None and _calibrated_now(meta) and meta.get("frame_aspects") else None


def _with_aspects(folder: Path, announce: Callable[[str], object] | None) -> dict[str, Any] | None:
    """A cached reader that lacks only its training videos' shapes (trained by a robojudge of 2026-12-05,
    before they were stored) gets them from its training files, as `robojudge kiva upgrade` does; the
    reader's name covers those files' bytes, so they are the ones it learned. None when it lacks more, or
    a file is gone or changed (it is trained again)."""
    meta = _facts(folder)
    if meta is None or meta.get("frame_aspects") or not _calibrated_now(meta):
        return None
    try:
        record_frame_aspects(folder)
    except ValueError as exc:  # ReaderError: a training file moved or changed since
        log.warning("KIVA reader %s: its training videos' shapes cannot be recorded: %s", folder, exc)
        return None
    if announce is not None:
        announce(f"recorded the training videos' shapes in the KIVA reader {folder} (trained by an earlier "
                 "robojudge)")
    return _calibrated(folder)


def _remove_left_behind(root: Path) -> None:
    """Remove the training folders that runs killed half-way left under ``root`` (``*.partial-*``, and the
    ``*.partial`` of robojudges before December 7, 2026) once they are :data:`LEFT_BEHIND_S` old."""
    cutoff = time.time() - LEFT_BEHIND_S
    for path in [*root.glob("*.partial"), *root.glob("*.partial-*")]:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink() and path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)


def _set_aside(folder: Path) -> None:
    """Remove the reader at ``folder`` that the KIVA metrics would not take, by moving it aside first:
    another run may have put its new reader there since it was looked at, and that one is moved back."""
    aside = Path(tempfile.mkdtemp(prefix=f"{folder.name}.partial-", dir=folder.parent))
    try:
        with contextlib.suppress(OSError):  # gone already, or replaced: the caller looks again
            os.rename(folder, aside / "old")
            if _calibrated(aside / "old") is not None:
                os.rename(aside / "old", folder)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


#: Times :func:`_put_in_place` looks at the reader's folder again after another run changed it.
_PLACE_TRIES = 5


def _put_in_place(trained: Path, folder: Path, announce: Callable[[str], object] | None) -> dict[str, Any]:
    """Move the reader just trained in ``trained`` to its cache folder ``folder`` (one rename, so no run
    sees half a reader there); its facts.

    Another run (a second demo on the same ``--out``) may have trained the same reader meanwhile: a reader
    its run put at ``folder`` first is kept and used, as its key says it learned from the same files with
    the same config, and ``trained`` is left for the caller to remove. A reader there that the metrics
    would not take (an earlier robojudge's) is replaced.

    Raises:
        RuntimeError: Training left no calibrated reader in ``trained``, or other runs kept changing
            ``folder`` (:data:`_PLACE_TRIES` times).
    """
    mine = _calibrated(trained)
    if mine is None:
        raise RuntimeError(f"{trained}: training wrote no calibrated reader (reader.pt and a reader.json "
                           "with calibration and frame_aspects)")
    for _ in range(_PLACE_TRIES):
        theirs = _calibrated(folder)
        if theirs is not None:
            if announce is not None:
                announce(f"another run put the same KIVA reader in {folder} first: using that one")
            return theirs
        if folder.exists() or folder.is_symlink():
            _set_aside(folder)
            continue
        try:
            os.rename(trained, folder)
        except OSError:  # another run's reader got there between the look and the rename
            continue
        return mine
    raise RuntimeError(f"{folder}: other runs kept changing this KIVA reader folder while this run put its "
                       f"reader there ({_PLACE_TRIES} tries); run the demo again")


def ensure_reader(
    manifest: str | Path,
    robot: str,
    root: Path,
    config: TrainConfig = DEMO_READER,
    announce: Callable[[str], object] | None = None,
) -> tuple[Path, bool, float, dict[str, Any]]:
    """The calibrated reader for ``robot`` under ``root``, trained now only if no cached one matches.

    A cached reader is used as it is only where the KIVA metrics take it (:func:`_calibrated`); one of an
    earlier robojudge that lacks only its training videos' shapes has them recorded first, and any other
    is trained and calibrated again.

    Training runs in a fresh Python process: after MuJoCo has rendered through EGL in a process,
    the deterministic-kernel switch of training crashes it (docs/kiva.md), and the demo may have built
    its suite in this one. The reader is written into a folder of this call's own beside its final one
    and moved there once calibrated (:func:`_put_in_place`), so an interrupted run leaves nothing that
    looks finished, and two runs training the same reader at once (two demos on one ``--out``) both
    finish with one reader in place. Training folders that killed runs left are removed a day later
    (:data:`LEFT_BEHIND_S`).

    Returns:
        The reader folder, whether it was trained now, the seconds training and calibration took, and
        the reader's stored facts.
    """
    folder = root / reader_key(manifest, robot, config)
    meta = _calibrated(folder) or _with_aspects(folder, announce)
    if meta is not None:
        return folder, False, 0.0, meta
    if announce is not None:
        announce(f"training a KIVA reader for {robot} in {folder} (once; about a minute)")
    root.mkdir(parents=True, exist_ok=True)
    _remove_left_behind(root)
    # Not mkdtemp: its folder is private to the user (0700), and this one becomes the reader's folder.
    own = root / f"{folder.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
    own.mkdir()
    started = time.perf_counter()
    try:
        _train_and_calibrate(str(manifest), robot, str(own), config)
        meta = _put_in_place(own, folder, announce)
    finally:
        shutil.rmtree(own, ignore_errors=True)  # what is left: none once moved, or the copy not used
    return folder, True, time.perf_counter() - started, meta


def run_demo_kiva(
    manifest: str | Path,
    db: str,
    readers_dir: str | Path,
    *,
    workers: int = 2,
    config: TrainConfig = DEMO_READER,
    embodiments: Sequence[str] | None = None,
    progress: ProgressCallback | None = None,
    announce: Callable[[str], object] | None = None,
    phase: PhaseCallback | None = None,
) -> DemoKiva:
    """Train (or reuse) a reader per embodiment of the suite and score its rollouts with KIVA into ``db``.

    Args:
        manifest: The demo suite.
        db: The result store URL.
        readers_dir: Where readers are cached.
        workers: Scoring processes.
        config: The readers' training config.
        embodiments: Only these embodiments (default: every one of the suite with a built-in robot).
        progress: Called with every stored result (with ``phase``: unused).
        announce: Called with a line before each training (the CLI prints it).
        phase: Called before each reader is found or trained, and before its rollouts are scored; what
            it returns for the latter is that scoring's progress callback (:data:`PhaseCallback`).
    """
    if not torch_available():
        return DemoKiva(missing=NO_TORCH)
    items = list(load_suite(manifest, strict=False).items)
    present = sorted({it.embodiment.value for it in items if it.embodiment is not None})
    out = DemoKiva()
    for emb in present:
        if embodiments is not None and emb not in embodiments:
            continue
        robot = DEMO_ROBOTS.get(emb)
        if robot is None:
            out.skipped.append(f"{emb}: no built-in robot")
            continue
        mine = [it for it in items if it.embodiment is not None and it.embodiment.value == emb]
        if phase is not None:
            phase(f"KIVA: the {robot} reader", False)
        try:
            folder, trained, seconds, meta = ensure_reader(manifest, robot, Path(readers_dir), config,
                                                           announce)
        except (RuntimeError, ValueError) as exc:  # one robot's failure costs its KIVA, not the demo
            log.warning("KIVA reader for %s: %s", robot, exc)
            out.skipped.append(f"{emb} ({robot}): {str(exc).splitlines()[0]}")
            continue
        ckpt = str(folder / "reader.pt")
        requests = build_requests(KIVA_METRICS, {m: {"reader": ckpt} for m in KIVA_METRICS})
        if announce is not None:
            announce(f"KIVA: the {len(mine)} {emb} rollouts, read by the {robot} reader")
        on_result = phase(f"KIVA ({robot})", True) if phase is not None else progress
        with ResultStore(db) as store:
            summary = score_items(mine, requests, store, workers=workers, progress=on_result)
        out.readers.append(DemoReader(emb, robot, folder, trained, seconds, meta["held_out_error"], len(mine),
                                      summary))
    return out


@dataclass
class DemoResult:
    suite_kind: str
    manifest: Path
    report_dir: Path
    run: SuiteRun
    summaries: list[GroupSummary]
    agreement: list[LabelAgreement]
    leaderboard: Leaderboard | None
    judges: list[JudgeRow]
    html: HtmlReport | None = None
    kiva: DemoKiva | None = None  # None on the 2D suite (no robot to read)
    #: Rows left out of every output: their inputs changed since they were computed (a judge's rows, or
    #: another configuration's, that this run did not compute again).
    stale: list[ResultRow] = field(default_factory=list)


def sim_available() -> bool:
    """Whether the simulator extra (MuJoCo, gymnasium-robotics) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("mujoco", "gymnasium_robotics"))


def existing_suite_kind(folder: Path) -> str | None:
    """The kind of demo suite ``folder`` already holds (``sim`` or ``synthetic``), or None when it holds
    none."""
    manifest, marker = folder / "suite.jsonl", folder / "SUITE_KIND"
    if not manifest.exists():
        return None
    return (marker.read_text().strip() if marker.exists() else "") or "synthetic"


def check_suite_kind(folder: Path, kind: SuiteKind) -> None:
    """Refuse to reuse a demo suite of another kind than the one asked for (``auto`` takes any).

    Raises:
        ValueError: ``folder`` holds a suite of the other kind; the message says how to proceed.
    """
    have = existing_suite_kind(folder)
    if have is not None and kind != "auto" and have != kind:
        out = folder.parent
        raise ValueError(f"{out} already holds the {have} demo suite ({folder / 'suite.jsonl'}), not the "
                         f"{kind} one asked for: give another --out for the {kind} suite, remove {out} to "
                         f"rebuild it there, or pass --suite {have} (or auto) to reuse it")


def build_demo_suite(folder: Path, kind: SuiteKind = "auto", *, seed: int = 0) -> tuple[str, Path]:
    """Build (once) the demo suite in ``folder``; ``auto`` means the simulator suite when installed.

    Returns the kind actually built and the manifest path. An existing manifest is reused as is when it
    is of the kind asked for (``auto``: any kind).

    Raises:
        ValueError: ``folder`` holds a suite of the other kind (see :func:`check_suite_kind`).
    """
    manifest = folder / "suite.jsonl"
    marker = folder / "SUITE_KIND"
    check_suite_kind(folder, kind)
    have = existing_suite_kind(folder)
    if have is not None:
        return have, manifest
    if kind == "auto":
        kind = "sim" if sim_available() else "synthetic"
        if kind == "synthetic":
            log.warning("simulator extra not installed (pip install '.[sim]' in a robojudge checkout): "
                        "using the 2D suite")
    # The kind first: the manifest is written last (whole), so a manifest never lacks its kind.
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(kind + "\n")
    if kind == "sim":
        from robojudge.suite.sim import make_sim_suite

        make_sim_suite(folder, seed=seed)
    else:
        make_synthetic_suite(folder, seed=seed)
    return kind, manifest


def run_demo(
    out_dir: str | Path = "runs/demo",
    *,
    suite: SuiteKind = "auto",
    workers: int = 2,
    seed: int = DEFAULT_SEED,
    suite_seed: int = 0,
    progress: ProgressCallback | None = None,
    metrics: Sequence[str] | None = None,
    kiva: bool = True,
    kiva_config: TrainConfig = DEMO_READER,
    kiva_embodiments: Sequence[str] | None = None,
    announce: Callable[[str], object] | None = None,
    command: Sequence[str] | None = None,
    phase: PhaseCallback | None = None,
) -> DemoResult:
    """Build the demo suite under ``out_dir/suite`` (once), score it, and report to ``out_dir/report``.

    ``seed`` seeds the bootstrap and the calibrated judge's folds, as ``robojudge report`` does
    (:data:`robojudge.DEFAULT_SEED`); ``suite_seed`` the suite's episodes. Results go to
    ``out_dir/results.sqlite``; a second call reuses the suite and the stored results. Stored results
    whose inputs changed since they were computed are left out of every output
    (:attr:`DemoResult.stale`), as the report leaves them out. On
    the simulator suite (and with ``kiva``) KIVA is scored too, by readers cached in ``out_dir/kiva``
    (:func:`run_demo_kiva`; ``kiva_config`` and ``kiva_embodiments`` are passed to it). ``metrics``
    replaces the suite's default metric list (the tests use a short one); ``announce`` is called with
    a line before anything slow; ``command``: the command line the reports record in provenance.json
    (the CLI passes it); ``progress`` is called with the results of the scoring run only, and ``phase``
    as each later step starts (KIVA's readers and scoring, the report: :data:`PhaseCallback`). Ctrl-C
    while scoring raises :class:`robojudge.run.RunInterrupted` from
    there: no reader is trained and no report is written from a partial run.
    """
    out = Path(out_dir)
    kind, manifest = build_demo_suite(out / "suite", suite, seed=suite_seed)
    db = sqlite_url((out / "results.sqlite").resolve())
    if metrics is None:
        metrics = demo_metrics(kind)
    run = score_suite(manifest, list(metrics), db=db, workers=workers, progress=progress)
    kiva_run: DemoKiva | None = None
    if kind == "sim" and kiva:
        # Not `progress`: a caller's bar was sized for the run above (KIVA's steps come through `phase`).
        kiva_run = run_demo_kiva(manifest, db, out / "kiva", workers=workers, config=kiva_config,
                                 embodiments=kiva_embodiments, announce=announce, phase=phase)
    if phase is not None:
        phase("writing the report", False)
    # One check of each row for the summary, the tables below and the HTML report, as `robojudge report`.
    stale = remembered_stale(stale_rows)
    summaries = report_suite(manifest, db, out / "report", by="generator", title="robojudge demo",
                             native_range=registry_range, stale=stale, named=False,
                             defaults=registry_defaults, command=command)
    with ResultStore(db) as store:
        rows = store.rows()
    items = load_suite(manifest, strict=False).items
    left_out = stale(rows, items)
    if left_out:
        gone = {id(r) for r in left_out}
        rows = [r for r in rows if id(r) not in gone]
    if kiva_run is not None and kiva_run.missing is None and kiva_run.readers:
        # What this demo scored: rows an earlier robojudge stored under another configuration or version
        # stay current beside them, and are not shown here (the report lists each configuration apart).
        scored = {(req.config_hash, req.spec.version)
                  for r in kiva_run.readers
                  for req in build_requests(["kiva"], {"kiva": {"reader": str(r.folder / "reader.pt")}})}
        kiva_run.groups = kiva_groups(rows, items, configs=scored)
    labelled = [it for it in items if it.labels is not None]
    agreement = label_agreement(rows, items, direction, seed=seed)
    write_label_agreement(agreement, out / "report", named=False)  # (report/: a folder the demo chose)
    board: Leaderboard | None = None
    judges: list[JudgeRow] = []
    if labelled:
        # The labels' own leaderboard: on the simulator suite it is the planted ranking, with CIs.
        board = generator_board(labelled, label_scores(labelled), seed=seed)
        write_leaderboard(board, out / "report", title="Generators by their planted labels", named=False)
        report, judges, cal, _ = judges_report(rows, items, direction, seed=seed,
                                               config_key=registry_config_key)
        older = (f"; one version per metric, the installed one where stored; left out: "
                 f"{', '.join(cal.left_out)}" if cal is not None and cal.left_out else "")
        chance = chance_row(items)  # RoboJudge Table 2's Random Baseline, worked out from the labels
        write_judges([chance, *judges] if chance is not None else judges, report, out / "report",
                     note="metric-calibrated: fit on the stored metrics, scored out of fold (grouped by "
                     f"clip); no VLM involved{older}", named=False)
    # Last: the self-contained HTML report over everything above (plots, CSV, Markdown, LaTeX tables).
    html = write_html_report(db, out / "report", manifest=manifest, higher_is_better=direction,
                             native_range=registry_range, config_key=registry_config_key,
                             networks=registry_networks, title=f"robojudge demo ({kind} suite)", seed=seed,
                             stale=stale, named=False, defaults=registry_defaults, command=command)
    return DemoResult(
        suite_kind=kind,
        manifest=manifest,
        report_dir=out / "report",
        run=run,
        summaries=summaries,
        agreement=agreement,
        leaderboard=board,
        judges=judges,
        html=html,
        kiva=kiva_run,
        stale=left_out,
    )
