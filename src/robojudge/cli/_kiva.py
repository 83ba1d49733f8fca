"""``robojudge kiva train|calibrate|upgrade``: the keypoint reader behind the ``kiva`` metrics."""

from __future__ import annotations

import importlib.util
import json
import math
import time
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from robojudge.cli._common import check_out_folder, console, err_console, fail, says_when_stopped

app = typer.Typer(help="KIVA's keypoint reader: train it, calibrate its thresholds, upgrade an older one.",
                  no_args_is_help=True)


def _manifest_error(exc: Exception, manifest: Path) -> typer.Exit:
    """One line for a manifest that cannot be loaded: its first problem, and how many more there are."""
    problems = list(getattr(exc, "problems", []))
    if not problems:
        return fail(f"{manifest}: {exc}")
    more = (f" (and {len(problems) - 1} more; `robojudge suite validate {manifest}` lists them)"
            if len(problems) > 1 else "")
    return fail(f"{problems[0]}{more}")


def _config_error(exc: ValidationError) -> typer.Exit:
    """One line for a training option pydantic refused: the option as typed on the command line."""
    err = exc.errors()[0]
    name = str(err["loc"][0]) if err["loc"] else ""
    flag = _FLAGS.get(name, f"--{name.replace('_', '-')}") if name else "the options"
    ctx = err.get("ctx") or {}
    kind = err["type"]
    if kind == "greater_than_equal":
        return fail(f"{flag} must be at least {ctx['ge']}; got {err['input']}")
    if kind == "less_than_equal":
        return fail(f"{flag} must be at most {ctx['le']}; got {err['input']}")
    if kind == "greater_than":
        return fail(f"{flag} must be above {ctx['gt']}; got {err['input']}")
    if kind == "less_than":
        return fail(f"{flag} must be below {ctx['lt']}; got {err['input']}")
    if kind == "literal_error":
        return fail(f"{flag} must be {ctx['expected']}; got {err['input']!r}")
    msg = str(ctx.get("error", err["msg"]))
    return fail(msg if not name else f"{flag}: {msg}")


# TrainConfig fields whose command-line option is not --<field with dashes>.
_FLAGS = {"rollouts": "--references-only", "failures": "--with-failures"}
DEVICES = ("cpu", "cuda", "auto")


#: The one line a machine without torch gets from ``kiva train`` and ``kiva calibrate``.
NO_TORCH = ("KIVA's keypoint reader needs torch, which is not installed: pip install '.[torch]' in a "
            "robojudge checkout")


def _check_torch() -> None:
    """Refuse at once where torch is not installed (the reader is a torch network), naming the extra."""
    if importlib.util.find_spec("torch") is None:
        raise fail(NO_TORCH)


def _check_device(device: str) -> None:
    """Refuse a device torch would fail on, before any data is read."""
    if device not in DEVICES:
        raise fail(f"--device must be cpu, cuda or auto; got {device!r}")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise fail("--device cuda: no CUDA device visible (use cpu or auto)")


def _error_line(name: str, err: dict[str, Any], holdout: float | None = None) -> str:
    if not err.get("episodes"):
        why = ""
        if "held" in name and holdout is not None:  # with one clip, --holdout 0.2 holds none out either
            why = f" (--holdout {holdout:g} held out no clip)"
        return f"{name}: no clip to measure it on{why}"
    if not err.get("keypoints"):
        return f"{name}: no visible keypoint to measure"
    return (f"{name}: {err['mean_px']:.2f} px mean, {err['median_px']:.2f} px median, {err['p90_px']:.2f} px "
            f"90th percentile ({100 * err['fraction_of_diagonal']:.2f}% of the diagonal; "
            f"{err['keypoints']} keypoints, {err['episodes']} videos)")


@app.command("train")
@says_when_stopped("--out is as it was (a reader is written there only whole, at the end); nothing of "
                   "this training was saved, and there is no resume: rerun the same command to train from "
                   "the start")
def train_cmd(
    episodes: Path = typer.Option(..., "--episodes", help="Manifest of reference videos with state files, "
                                  "faithful rollouts and recordings (docs/kiva.md)."),
    robot: str = typer.Option(..., "--robot", help="Robot spec file, or a built-in robot (fetch, ...)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write reader.pt and reader.json to."),
    size: int = typer.Option(128, help="Frames resized to SIZE x SIZE (docs/kiva.md, \"Reader size\")."),
    epochs: int = typer.Option(30, help="Passes over the training frames."),
    seed: int = typer.Option(0, help="Seed of initialisation, shuffling, augmentation, held-out draw."),
    holdout: float = typer.Option(0.2, help="Share of clips held out to measure the keypoint error."),
    references_only: bool = typer.Option(False, "--references-only", help="Train on reference videos only."),
    with_failures: bool = typer.Option(False, "--with-failures", help="Also train on rollouts with planted "
                                       "kinematic failures whose state files hold the pose as rendered."),
    failure_repeat: int = typer.Option(1, "--failure-repeat", help="With --with-failures, draw each frame "
                                       "inside a planted failure's span this many times an epoch (1: once; "
                                       "docs/kiva.md, \"Oversampling the failures\")."),
    views: str = typer.Option("main", help="main: each episode's main view; all: every view of faithful "
                              "rollouts and recordings too, so the reader reads any view (3D rigidity)."),
    context: int = typer.Option(3, help="Consecutive frames stacked per input: the frame read and its "
                                "neighbours (1: the frame alone; docs/kiva.md, \"The reader\")."),
    heatmap_stride: int = typer.Option(2, "--heatmap-stride", help="Input pixels per heatmap cell: 2, or 4 "
                                       "for one decoder step fewer (about 1.5 times faster to train)."),
    heatmap_loss: float = typer.Option(0.01, "--heatmap-loss", help="Weight of a cross-entropy teaching each "
                                       "heatmap a peak at its keypoint, beside the loss on positions (0: "
                                       "none; docs/kiva.md, \"Heatmap loss\")."),
    members: int = typer.Option(1, help="Train this many readers (seeds SEED, SEED+1, ...) and read with "
                                "all of them, averaged (docs/kiva.md, \"Several readers\"); MEMBERS times "
                                "the training and reading time."),
    warp: float = typer.Option(0.0, help="Warp every training sample by a smooth random field of this "
                               "standard deviation (fraction of the side; 0: none), keypoints moved with it "
                               "(docs/kiva.md, \"Training augmentation\")."),
    threads: int = typer.Option(1, help="torch CPU threads."),
    device: str = typer.Option("cpu", help="cpu, cuda, or auto."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Train a keypoint reader on forward-kinematics keypoints; print its held-out error."""
    from robojudge.kiva import KivaDataError, TrainConfig, train_reader
    from robojudge.run._cost import describe
    from robojudge.suite import ManifestError

    if failure_repeat > 1 and not with_failures:
        raise fail(f"--failure-repeat {failure_repeat} needs failures: add --with-failures (it oversamples "
                   "the frames of planted failures)")
    try:
        cfg = TrainConfig.model_validate({"size": size, "epochs": epochs, "seed": seed, "holdout": holdout,
                                          "rollouts": not references_only, "threads": threads,
                                          "device": device, "views": views, "failures": with_failures,
                                          "failure_repeat": failure_repeat,
                                          "heatmap_stride": heatmap_stride, "members": members,
                                          "warp": warp, "context": context,
                                          "heatmap_loss": heatmap_loss})
    except ValidationError as exc:
        raise _config_error(exc) from None
    check_out_folder(out)
    _check_torch()
    _check_device(device)
    # Progress goes to stderr, as every command's does: stdout keeps the reader and its errors. A bar
    # redraws in place, which a log file (nohup, a cluster job) keeps as nothing until the end: there each
    # epoch, minutes apart on a CPU, gets a line of its own instead.
    lines = not quiet and not err_console.is_terminal
    bar = Progress(TextColumn("training"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("loss {task.fields[loss]}"), TimeElapsedColumn(), console=err_console,
                   disable=quiet or lines)
    task = bar.add_task("train", total=cfg.epochs * cfg.members, loss="-")

    started = False
    t0 = time.monotonic()

    def on_epoch(done: int, total: int, loss: float) -> None:
        nonlocal started
        if lines:
            err_console.print(f"training: epoch {done}/{total}, loss {loss:.5f}, "
                              f"{describe(time.monotonic() - t0)} elapsed", highlight=False)
            return
        if not started:  # shown once training runs: data and robot problems are reported without a bar
            bar.start()
            started = True
        bar.update(task, completed=done, loss=f"{loss:.5f}")

    try:
        meta = train_reader(episodes, robot, out, cfg, on_epoch)
    except ManifestError as exc:
        raise _manifest_error(exc, episodes) from None
    except (KivaDataError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    finally:
        if started:
            bar.stop()
    console.print(f"reader: {out / 'reader.pt'} ({meta['robot']}, {len(meta['keypoints'])} keypoints, "
                  f"{len(meta['links'])} links; {meta['links_source']})", highlight=False)
    if meta.get("links_not_rigid"):
        names = ", ".join(f"{a} - {b}" for a, b in meta["links_not_rigid"])
        err_console.print(f"[yellow]warning:[/] not rigid (a joint changes its length), left out of the "
                          f"rigidity measure: {escape(names)}", markup=True, highlight=False)
    console.print(_error_line("held-out error", meta["held_out_error"], holdout), highlight=False)
    for m in meta.get("members", []):
        console.print(_error_line(f"  member with seed {m['seed']}", m["held_out_error"]), highlight=False)
    console.print(_error_line("training error", meta["train_error"]), highlight=False)
    err_console.print(f"next: robojudge kiva calibrate --reader {out} --episodes MANIFEST_OF_REFERENCES",
                      highlight=False)


@app.command("calibrate")
def calibrate_cmd(
    reader: Path = typer.Option(..., "--reader", help="Reader folder from `robojudge kiva train`."),
    episodes: Path = typer.Option(..., "--episodes", help="Manifest of the reference videos."),
    percentile: float = typer.Option(95.0, help="Thresholds at this percentile of the reference segments."),
    videos: int | None = typer.Option(None, help="Draw this many reference videos at random (default: all)."),
    seed: int = typer.Option(0, help="Seed of the draw of reference videos."),
    multiview_rollouts: bool = typer.Option(False, "--multiview-rollouts", help="Also set the 3D rigidity "
                                            "threshold from faithful rollouts with calibrated views."),
    segment: int = typer.Option(16, "--segment", min=4, help="Frames per segment: the thresholds hold for "
                                "this length only, and the metrics' `segment` must match it."),
    as_json: bool = typer.Option(False, "--json", help="Print the calibration as JSON."),
) -> None:
    """Set the reader's rigidity and jerk thresholds from reference videos (stored in the reader)."""
    from robojudge.kiva import CONFIDENCE_RATIO, KivaDataError, calibrate_reader, recognition
    from robojudge.suite import ManifestError

    if videos is not None and videos < 1:
        raise fail(f"--videos must be at least 1; got {videos}")
    if not 0 < percentile <= 100:
        raise fail(f"--percentile must be above 0 and at most 100; got {percentile:g}")
    _check_torch()
    try:
        cal = calibrate_reader(reader, episodes, percentile, seed, videos, multiview_rollouts, segment)
    except ManifestError as exc:
        raise _manifest_error(exc, episodes) from None
    except (KivaDataError, ValueError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(cal, indent=2))
        return
    rig = "not measured (not judged)" if cal["rigidity"] is None else f"{cal['rigidity']:.3f}"
    jerk = "not measured (not judged)" if cal["jerk"] is None else f"{cal['jerk']:.3f}"
    scales = cal["scales"]
    links = sum(x is not None for x in scales["links"])
    kps = sum(x is not None for x in scales["keypoints"])
    console.print(f"thresholds at the {percentile:g}th percentile of {cal['segments']} {segment}-frame "
                  f"segments from "
                  f"{len(cal['videos'])} reference videos: rigidity {rig}, jerk {jerk} (in units of each "
                  f"part's own reference spread: {links} of {len(scales['links'])} links and {kps} of "
                  f"{len(scales['keypoints'])} keypoints measured)", highlight=False)
    if cal.get("rigidity_3d") is not None:
        console.print(f"3D rigidity {cal['rigidity_3d']:.4f} from {cal['segments_3d']} segments of "
                      f"{len(cal['videos_3d'])} multi-view videos", highlight=False)
    floor, note = recognition(cal)
    if math.isnan(floor):
        err_console.print(f"[yellow]note:[/] recognition {escape(note)}: every video is judged, whether or "
                          "not it shows the robot (docs/kiva.md, \"A robot the reader does not recognise\")",
                          markup=True, highlight=False)
    else:
        console.print(f"recognition checked: a video read with confidence below {floor:.3f} "
                      f"({CONFIDENCE_RATIO:g} of the references' median, {cal['confidence']:.3f}) is "
                      "unscored",
                      highlight=False)
    if cal["videos_seen_in_training"]:
        err_console.print(f"[yellow]note:[/] {cal['videos_seen_in_training']} of them were training videos; "
                          "thresholds from videos the reader has not seen are less strict", markup=True,
                          highlight=False)


@app.command("upgrade")
def upgrade_cmd(
    reader: Path = typer.Option(..., "--reader", help="Reader folder from `robojudge kiva train`."),
) -> None:
    """Record what a reader trained by an older robojudge lacks and its files still tell: the shapes of its
    training videos (the metrics refuse a reader without them); say whether its calibration is current."""
    from robojudge.kiva import MEASURE_VERSION, load_reader, record_frame_aspects

    _check_torch()
    try:
        aspects, recorded = record_frame_aspects(reader)
        loaded = load_reader(reader)
    except ValueError as exc:
        raise fail(str(exc)) from None
    shown = ", ".join(f"{a:.3f}" for a in aspects)
    if recorded:
        console.print(f"recorded the training videos' width/height in {reader}: {shown} (the stored results "
                      "of this reader are computed again by the next `robojudge score`)", highlight=False)
    else:
        console.print(f"{reader} has its training videos' width/height already: {shown}", highlight=False)
    if loaded.older_rules:
        manifest = (loaded.meta.get("calibration") or {}).get("manifest") or "MANIFEST_OF_REFERENCES"
        rules = ", ".join(loaded.older_rules)
        err_console.print(f"[yellow]note:[/] calibrated for measure version {loaded.calibration_version} "
                          f"(current {MEASURE_VERSION}), so it judges by older rules ({escape(rules)}); "
                          f"`robojudge kiva calibrate --reader {escape(str(reader))} --episodes "
                          f"{escape(manifest)}` brings it to today's", markup=True, highlight=False)
    elif loaded.calibration_version == 0:
        err_console.print(f"not calibrated yet: robojudge kiva calibrate --reader {reader} --episodes "
                          "MANIFEST_OF_REFERENCES", highlight=False)
