"""``robojudge train``: Train judges: export labelled requests, SFT and GRPO on TRL."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from robojudge.cli._common import check_out_folder, console, err_console, fail, first_names

if TYPE_CHECKING:
    from robojudge.train import TrainResult

app = typer.Typer(help="Train judges: export labelled requests, SFT and GRPO on TRL.", no_args_is_help=True)


@app.command("export")
def export_cmd(
    labels: str = typer.Option(..., "--labels", help="Suite manifest whose items carry PA/IA labels, or "
                               "with --project the annotation database (SQLite file or URL)."),
    project: str | None = typer.Option(None, "--project", "-p", help="Annotation project whose final "
                                       "labels to export (robojudge annotate)."),
    rubric: str = typer.Option("pa,ia", "--rubric", help="Rubrics to export, comma-separated."),
    fmt: str = typer.Option("trl", "--format", help="trl, sharegpt or llamafactory."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (records, frames, README.md)."),
    val: float = typer.Option(0.1, "--val", help="Share of clips in the validation split."),
    test: float = typer.Option(0.0, "--test", help="Share of clips in the test split."),
    seed: int = typer.Option(0, "--seed", help="Split seed."),
    fps: float = typer.Option(4.0, "--fps", min=0.001, help="Judge frame rate (RoboJudge: 4)."),
    max_frames: int = typer.Option(32, "--max-frames", min=1, help="Judge frame cap (RoboJudge: 32)."),
    max_images: int = typer.Option(32, "--max-images", help="The judge's max_images."),
    size: int | None = typer.Option(None, "--size", min=16, help="Resize frames: longer side in pixels (as "
                                    "robojudge judge --size; judge the checkpoint with the same)."),
    grid_view: str = typer.Option("main", "--grid-view", help="What an item whose video is a grid of views "
                                  "is shown: main (its main view's cell) or whole (as robojudge judge "
                                  "--grid-view)."),
    include_disputed: bool = typer.Option(
        False, "--include-disputed", help="Also export items whose labels a cross-review disputes "
        "(meta.annotation.disputed; with --project, their primary labels); by default they are left out."),
    exclude_clips_of: Path | None = typer.Option(
        None, "--exclude-clips-of", help="A benchmark manifest: leave out the labelled items of its clips "
        "(same clip_id), so the trained judge is never tested on a clip it saw."),
    force: bool = typer.Option(
        False, "--force", help="Replace an earlier export in --out that put some items into other splits "
        "(refused otherwise); its split files and export.json are kept in --out/earlier-split-<time>/."),
) -> None:
    """Write each labelled (item, rubric) as the judge's own request and the reply it should give."""
    from robojudge.judges import FrameSpec, JudgeConfigError, make_judge
    from robojudge.suite import ManifestError
    from robojudge.train import ExportError, export_training_data

    fractions = {"train": 1.0 - val - test, "val": val, "test": test}
    try:
        judge = make_judge({"name": "export", "backend": "hf", "max_images": max_images})
        spec = FrameSpec(fps=fps, max_frames=max_frames, size=size, grid_view=grid_view)  # type: ignore[arg-type]
        summary = export_training_data(labels, [r.strip() for r in rubric.split(",") if r.strip()], out,
                                       fmt=fmt, judge=judge, frames=spec, fractions=fractions, seed=seed,
                                       project=project, exclude_clips_of=exclude_clips_of,
                                       include_disputed=include_disputed, force=force)
    except (ExportError, ManifestError, JudgeConfigError, ValueError) as exc:
        raise fail(str(exc)) from None
    counts = ", ".join(f"{k} {v}" for k, v in summary.records.items() if v)
    console.print(f"exported {counts} records to {summary.out} ({fmt}); card: {summary.out / 'README.md'}",
                  highlight=False)
    if any(summary.skipped.values()):
        shown = [f"{r} {n} ({first_names(summary.left_out.get(r, []), 3)})"
                 for r, n in summary.skipped.items() if n]
        err_console.print("left out (no score for that rubric): " + "; ".join(shown), highlight=False,
                          markup=False)
    # notes go to stderr as every other command's do, so `... > log` still shows an empty split
    for note in summary.notes:
        err_console.print(f"note: {note}", highlight=False, markup=False)
    if not summary.records.get("train"):
        err_console.print(f"[yellow]no train split:[/] --val {val:g} and --test {test:g} took every clip; "
                          "`robojudge train sft|grpo` need train.jsonl", markup=True, highlight=False)


def _run(stage: str, data: Path, run: Callable[[], TrainResult]) -> None:
    from robojudge.train import TrainingError

    try:
        result = run()
    except (TrainingError, ValueError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        # (audit signals: a stopped training exited 130 without a word)
        err_console.print("interrupted: nothing of this training was recorded (no robojudge-train.json "
                          "was written; a checkpoint folder without one holds no complete training); "
                          "there is no resume: run the same command again", highlight=False, markup=False)
        raise SystemExit(130) from None
    last = f"{result.losses[-1]:.4g}" if result.losses else "none logged"
    console.print(f"{stage}: {result.steps} steps, last loss {last}; checkpoint {result.out} (stage "
                  f"{result.stage}). To judge with it, add to robojudge.toml:", highlight=False)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", result.out.name).strip("-.") or "trained"
    console.print(result.judge_toml(name), highlight=False, markup=False)
    console.print("Judge it on the export's held-out items only: robojudge judge SUITE --judge "
                  f"{name} --split-of {data}:val (or :test; docs/training.md).", highlight=False,
                  markup=False)
    for note in result.notes:
        err_console.print(f"[yellow]warning:[/] {escape(note)}", markup=True, highlight=False)


@app.command("sft")
def sft_cmd(
    model: str = typer.Option(..., "--model", help="Base model: hub id or local folder."),
    data: Path = typer.Option(..., "--data", help="Folder from `robojudge train export --format trl`."),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint folder."),
    lora: bool = typer.Option(False, "--lora", help="Train a LoRA adapter (merged before saving)."),
    epochs: float = typer.Option(1.0, "--epochs", help="Passes over the training data."),
    global_batch: int = typer.Option(64, "--global-batch",
                                     help="Examples per optimizer step, over all devices."),
    per_device_batch: int = typer.Option(1, "--per-device-batch",
                                         help="Examples per device per forward pass."),
    lr: float = typer.Option(1e-5, "--lr", help="Learning rate."),
    max_steps: int = typer.Option(-1, "--max-steps", help="Stop after this many steps (-1: the epochs)."),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
) -> None:
    """Supervised fine-tuning (RoboJudge App. G: 1 epoch, global batch 64, lr 1e-5, all parameters)."""
    from robojudge.train import SFTSettings, train_sft

    settings = SFTSettings(epochs=epochs, global_batch=global_batch, per_device_batch=per_device_batch,
                           learning_rate=lr, max_steps=max_steps, lora=lora, seed=seed)
    check_out_folder(out)
    _run("sft", data, lambda: train_sft(model, data, out, settings, device=device))


@app.command("grpo")
def grpo_cmd(
    model: str = typer.Option(..., "--model", help="Model to start from (usually the SFT checkpoint)."),
    data: Path = typer.Option(..., "--data", help="Folder from `robojudge train export --format trl`."),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint folder."),
    lora: bool = typer.Option(False, "--lora", help="Train a LoRA adapter (merged before saving)."),
    prompts_per_device: int = typer.Option(2, "--prompts-per-device", help="Prompts per device per step."),
    grad_accumulation: int = typer.Option(8, "--grad-accumulation",
                                           help="Steps whose gradients are accumulated per update."),
    generations: int = typer.Option(8, "--generations", help="Completions per prompt."),
    lr: float = typer.Option(1e-6, "--lr", help="Learning rate."),
    max_completion_length: int = typer.Option(512, "--max-completion-length",
                                               help="Most tokens per completion."),
    reward: str = typer.Option("exact", "--reward", help="exact, or exact,format."),
    max_steps: int = typer.Option(200, "--max-steps",
                                  help="Optimizer steps (App. G.1: 200; -1: one epoch instead)."),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
    seed: int = typer.Option(0, "--seed", help="Training seed."),
) -> None:
    """GRPO with the exact-match reward (RoboJudge App. G: 200 steps, 2 prompts per device, 8 accumulation
    steps, 8 generations, lr 1e-6, completions up to 512 tokens)."""
    from robojudge.train import GRPOSettings, train_grpo

    settings = GRPOSettings(prompts_per_device=prompts_per_device, grad_accumulation=grad_accumulation,
                            num_generations=generations, learning_rate=lr,
                            max_completion_length=max_completion_length, max_steps=max_steps,
                            rewards=tuple(r.strip() for r in reward.split(",") if r.strip()), lora=lora,
                            seed=seed)
    check_out_folder(out)
    _run("grpo", data, lambda: train_grpo(model, data, out, settings, device=device))
