"""``robojudge suite ...``."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from robojudge._files import NAME_MAX
from robojudge.cli._common import (
    CACHE_DIR_HELP,
    check_out_file,
    console,
    err_console,
    fail,
    live_progress,
    progress_every_option,
    progress_option,
)
from robojudge.cli._tables import add_column, print_table
from robojudge.suite import ManifestError, load_suite, suite_info, validate_manifest

app = typer.Typer(help="Check and describe suite manifests.", no_args_is_help=True)


@app.command("validate")
def validate_cmd(
    file: Path = typer.Argument(..., help="Suite manifest (.jsonl, .csv or .parquet)."),
    deep: bool = typer.Option(
        False, "--deep", help="Decode every frame of every video as scoring would; failures are errors."
    ),
    no_media: bool = typer.Option(False, "--no-media", help="Only check that media exist; open nothing."),
    confine: Path | None = typer.Option(
        None,
        "--confine",
        help="Refuse items whose paths resolve outside this folder \\[default: $ROBOJUDGE_CONFINE].",
    ),
    progress: bool = progress_option(" of the media checks"),
    progress_every: float = progress_every_option(),
    workers: int = typer.Option(
        1, "--workers", "-w", min=1, show_default=False, help="The worker processes `robojudge score` will "
        "use (its -w) \\[default: 1, as score's]: each holds 1/N of the decoded-frame memory budget, so a "
        "video that fits one worker may not fit N."),
) -> None:
    """Report every problem of a manifest at once; exit 1 if any is an error.

    By default each video is opened and its first frame decoded: what fails is a warning. With --deep
    every frame is decoded, and a video that cannot be used (undecodable, truncated) is an error;
    damage inside the stream (packets rejected, frames concealed) is a warning only --deep finds.
    Paths outside the manifest's folder are warnings; with --confine, errors. A video whose every frame
    would not fit in memory is a warning, checked against what each of --workers score workers gets.
    """
    from robojudge.video import frame_memory_share

    if deep and no_media:
        raise fail("--deep and --no-media contradict each other")
    media = "none" if no_media else "deep" if deep else "open"
    try:
        with media_progress(progress and media != "none", "decoding" if deep else "opening",
                            progress_every) as on_video, frame_memory_share(1.0 / workers):
            problems = validate_manifest(file, confine=confine, media=media, progress=on_video)
    except (ManifestError, ValueError) as exc:
        raise fail(str(exc)) from None
    for p in problems:
        err_console.print(str(p), highlight=False, markup=False)
    errors = sum(p.is_error for p in problems)
    warnings = len(problems) - errors
    if errors:
        also = f" and {warnings} warning(s)" if warnings else ""
        err_console.print(f"[bold red]{errors} problem(s)[/]{also} in {escape(str(file))}", markup=True,
                          highlight=False)
        raise typer.Exit(1)
    note = f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""
    console.print(f"[green]ok[/]: {escape(str(file))}{note}", markup=True, highlight=False)


@contextmanager
def media_progress(enabled: bool, verb: str,
                   every: float = 30.0) -> Iterator[Callable[[int, int], None] | None]:
    """The progress of media checks (they can take minutes on a large suite), as the other long commands
    show theirs (:func:`live_progress`): a bar on an interactive terminal, else a plain line such as
    ``decoding videos: 40/1800 (2%), 30 s elapsed`` on stderr every ``every`` seconds."""
    from robojudge.run._cost import describe

    counts: list[int] = []  # (done, total) once the first video is checked
    drawn: list[Callable[[int, int], None]] = []

    @contextmanager
    def bar() -> Iterator[Callable[[int, int], None]]:
        shown = Progress(
            TextColumn(f"[bold]{verb} videos"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        task: list[TaskID] = []

        def update(done: int, total: int) -> None:
            if not task:
                task.append(shown.add_task(verb, total=total))
            shown.update(task[0], completed=done)

        drawn.append(update)
        with shown:
            yield update

    def line(_summary: object, elapsed: float, _since: float) -> str:
        if not counts:
            return f"{verb} videos: none checked yet, {describe(elapsed)} elapsed"
        done, total = counts
        pct = 100.0 * done / total if total else 100.0
        return f"{verb} videos: {done}/{total} ({pct:.0f}%), {describe(elapsed)} elapsed"

    def on_video(done: int, total: int) -> None:
        counts[:] = [done, total]
        for update in drawn:
            update(done, total)

    with live_progress(enabled, every, bar, line) as shown:
        yield None if shown is None else on_video


def _render(title: str, value: Any) -> None:
    if isinstance(value, dict) and value and all(not isinstance(v, dict) for v in value.values()):
        table = Table()
        add_column(table, title, fold=True)  # a generator's or a rater's name, never cut to …
        add_column(table, "count")
        for k, v in value.items():
            table.add_row(str(k), str(v))
        print_table(table)
    elif isinstance(value, dict):
        for k, v in value.items():
            _render(f"{title}.{k}", v)
    else:
        console.print(f"{title}: {value}", highlight=False)


@app.command("info")
def info_cmd(
    file: Path = typer.Argument(..., help="Suite manifest."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Counts by source, generator, embodiment and split, and label coverage."""
    try:
        suite = load_suite(file, strict=False)
    except ManifestError as exc:
        raise fail(str(exc)) from None
    info = suite_info(suite).to_dict()
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    for key, value in info.items():
        _render(key, value)
    whole = [p for p in suite.problems if p.line is None and p.row is None]  # the file's own (no items)
    rows = len({(p.line, p.row) for p in suite.problems if p.severity == "error"} - {(None, None)})
    for p in whole:
        err_console.print(f"[yellow]{escape(str(file))}: {escape(p.message)}[/]", markup=True,
                          highlight=False)
    if rows:
        err_console.print(
            f"[yellow]{rows} row(s) left out; run `robojudge suite validate {escape(str(file))}`[/]",
            markup=True,
            highlight=False,
        )


@app.command("scan")
def scan_cmd(
    folder: Path = typer.Argument(..., help="Folder of generated videos: FOLDER/<generator>/<clip>.mp4."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Manifest to write (.jsonl) \\[default: <folder name>.jsonl here; a name too long for a file "
        "is cut, with a short hash of it].",
    ),
    pattern: str | None = typer.Option(
        None,
        "--pattern",
        help="Regular expression for each video's path under FOLDER without its suffix; named groups "
        "generator, clip_id, task, regime, source, split, prompt_variant set those fields, and files "
        "differing only in a 'view' group are the views of one item "
        "\\[default: first folder = generator, the rest = clip_id].",
    ),
    main_view: str | None = typer.Option(
        None, "--main-view", help="With a view group: the main view \\[default: the first name in order]; "
        "with --grid: the cell that is the main view \\[default: the first named]."
    ),
    grid: str | None = typer.Option(
        None, "--grid", help="Every video tiles several views in a ROWSxCOLS grid of equal cells (2x2, 1x3): "
        "written as each item's grid; needs --grid-views."
    ),
    grid_views: str | None = typer.Option(
        None, "--grid-views", help="With --grid: the view name of each cell, row by row, comma-separated; "
        "null or nothing for an empty cell (front,left,wrist,null)."
    ),
    instructions: Path | None = typer.Option(
        None,
        "--instructions",
        help="Table (.csv/.jsonl/.json/.parquet) of 'instruction' by item_id, clip_id or video path, or "
        "a .json object of key -> instruction \\[default: a .txt beside each video].",
    ),
    references: Path | None = typer.Option(
        None, "--references", help="Folder of reference episodes, matched to items by clip_id."
    ),
    reference_pattern: str | None = typer.Option(
        None,
        "--reference-pattern",
        help="Regular expression for the references' paths whose clip_id group names their clip "
        "\\[default: the path without suffix], and a view group their camera (each item then takes the "
        "reference of its main view); what it matches is not an item.",
    ),
    labels: Path | None = typer.Option(
        None,
        "--labels",
        help="Table of ratings, a row per video by item_id or video path: pa, ia, overall, evidence, "
        "rater, checklist items (or labels.* columns).",
    ),
    frames: bool = typer.Option(False, "--frames", help="Read a folder of images as one video."),
    generator: str | None = typer.Option(None, "--generator", help="Generator of videos directly in FOLDER."),
    embodiment: str | None = typer.Option(None, "--embodiment", help="Embodiment of every item."),
    source: str | None = typer.Option(None, "--source", help="Source corpus of every item."),
    regime: str | None = typer.Option(None, "--regime", help="Regime of every item."),
    force: bool = typer.Option(False, "--force", help="Replace an existing manifest."),
    drop_labelled: bool = typer.Option(
        False,
        "--drop-labelled",
        help="With --force: let the new manifest leave out items the old one holds with labels while their "
        "videos are still there (narrowing it with --pattern or a subfolder); a note counts them "
        "\\[default: refused].",
    ),
) -> None:
    """Write a manifest for a folder of videos, without renaming any of them.

    Example: `robojudge suite scan videos --references videos/real --embodiment gripper` writes
    videos.jsonl (generator from the first folder, clip from the rest of the path, instructions
    from .txt files beside the videos); then `robojudge score videos.jsonl -m all`.
    """

    from robojudge.suite import default_manifest_name, parse_grid, scan_folder, write_manifest

    target = out if out is not None else Path(default_manifest_name(folder))
    given = {"generator": generator, "embodiment": embodiment, "source": source, "regime": regime}
    try:
        if grid_views is not None and grid is None:
            raise ValueError("--grid-views names the cells of a --grid; give the layout too (--grid 2x2)")
        layout = parse_grid(grid, grid_views) if grid is not None else None
        result = scan_folder(
            folder, pattern=pattern, instructions=instructions, references=references,
            reference_pattern=reference_pattern, labels=labels, main_view=main_view, frame_folders=frames,
            fields={k: v for k, v in given.items() if v is not None}, previous=target if force else None,
            grid=layout,
        )  # fmt: skip
        warnings = write_manifest(result, target, force=force, drop_labelled=drop_labelled)
    except ManifestError as exc:
        raise fail(f"the scanned records do not validate:\n{exc}") from None
    except FileExistsError as exc:
        if target.exists() and not force:
            raise fail(f"{target} exists; pass --force to replace it") from None
        raise fail(f"cannot write {target}: {exc.strerror} ({exc.filename})") from None
    except ValueError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:  # the folder of --out is not writable, the disk is full ...
        raise fail(f"cannot write {target} (in {target.resolve().parent}): {exc.strerror or exc}") from None
    counts = result.counts()
    gens = ", ".join(f"{g} {n}" for g, n in sorted(counts["generators"].items()))
    views = f" ({counts['with_views']} with several views)" if counts["with_views"] else ""
    if counts["with_grid"]:
        layout = result.items[0]["grid"]
        views = f" (each a {layout['rows']}x{layout['cols']} grid of views)"
    console.print(
        f"wrote {target}: {counts['items']} item(s){views}, {counts['clips']} clip(s); generators: {gens}",
        highlight=False,
    )
    line = f"instructions: {counts['with_instruction']} of {counts['items']}"
    if references is not None:
        line += f"; references: {counts['with_reference']} item(s) ({counts['references']} reference videos)"
    if labels is not None:
        line += f"; labels: {sum('labels' in it for it in result.items)} item(s)"
    console.print(line, highlight=False)
    if result.skipped:
        err_console.print(
            f"[yellow]{len(result.skipped)} video(s) not matched by --pattern[/] "
            f"(first: {escape(repr(result.skipped[0]))})",
            markup=True,
            highlight=False,
        )
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", markup=True, highlight=False)
    if out is None and target.name != f"{folder.resolve().name}.jsonl":
        err_console.print(
            f"[yellow]note:[/] the folder's name is too long for a file name with .jsonl (at most {NAME_MAX} "
            f"bytes), so the manifest is named {escape(str(target))}: the name's start and a hash of the "
            "whole name, the same on every scan; --out names it otherwise",
            markup=True,
            highlight=False,
        )
    if result.absolute_paths:
        err_console.print(
            f"[yellow]note:[/] {result.absolute_paths} path(s) are outside the manifest's folder and written "
            "absolute (fine, unless --confine is used; an --out above the videos keeps them relative)",
            markup=True,
            highlight=False,
        )
    if warnings:
        err_console.print(
            f"[yellow]{len(warnings)} warning(s)[/], first: {escape(str(warnings[0]))}", markup=True,
            highlight=False,
        )
    shown = shlex.quote(str(target))
    err_console.print(  # a hint, not data: stdout keeps what was written
        f"next: robojudge suite validate {shown}  (opens every video), then robojudge score {shown} -m all",
        highlight=False,
    )


@app.command("make-demo")
def make_demo_cmd(
    out: Path = typer.Option(..., "--out", "-o", help="Destination folder."),
    seed: int = typer.Option(0, "--seed", min=0, help="Same seed, same frames."),
    episodes: int = typer.Option(
        10, "--episodes", min=1, help="Episodes; scenes cycle pick-and-place, relocate, push, slide."
    ),
    scenes: str | None = typer.Option(
        None,
        "--scenes",
        help="Comma-separated scenes to cycle through instead (pick_and_place, relocate, push, slide, "
        "transfer_cube, panda_pick_and_place; or gripper, dexterous_hand, bimanual, franka).",
    ),
    views: int = typer.Option(3, "--views", min=1, max=5, help="Cameras per rollout; cam0 is the main view."),
    size: int = typer.Option(256, "--size", min=16, help="Square image size in pixels."),
    profiles: str | None = typer.Option(
        None,
        "--profiles",
        help="Comma-separated generator profiles \\[the default six]; opt-in: kin_mild, kin_severe "
        "(kinematic failures), mv_mild, mv_severe (multi-view failures; need --views >= 2, and write "
        "each rollout's calibration).",
    ),
    texture: bool = typer.Option(
        False, "--texture", help="Speckle flat-coloured tables (Fetch, Panda): views can be feature-matched."
    ),
    rollout_depth: str | None = typer.Option(
        None,
        "--rollout-depth",
        help="Chunks per rollout, comma-separated to cycle over episodes (e.g. 1,2,4): writes "
        "meta.rollout_depth; kinematic failures are drawn per chunk, more often in later chunks.",
    ),
) -> None:
    """Render the simulator-grounded suite (MuJoCo episodes with planted failures and state files)."""
    try:  # (importing MuJoCo takes seconds)
        from robojudge.demo import sim_available

        if not sim_available():
            raise fail("the simulator suite needs the sim extra: pip install '.[sim]' in a robojudge "
                       "checkout")
        from robojudge.suite.sim import SimBuildError, make_sim_suite
    except KeyboardInterrupt:
        err_console.print(f"interrupted before the build started: {out} is as it was", highlight=False,
                          markup=False)
        raise typer.Exit(130) from None

    names = [p.strip() for p in profiles.split(",") if p.strip()] if profiles else None
    scene_list = [s.strip() for s in scenes.split(",") if s.strip()] if scenes is not None else None
    try:
        depths = [int(d) for d in rollout_depth.split(",")] if rollout_depth is not None else None
    except ValueError:
        raise fail(f"--rollout-depth: expected whole numbers and commas, got {rollout_depth!r}") from None
    try:
        manifest = make_sim_suite(
            out, seed=seed, episodes=episodes, views=views, size=size, profiles=names, scenes=scene_list,
            texture=texture, rollout_depth=depths,
        )
    except (ValueError, SimBuildError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the old manifest went first, so nothing half-built is used
        err_console.print(f"interrupted: {out} holds a partial build and no suite.jsonl; run the same "
                          "command again to build it whole", highlight=False, markup=False)
        raise typer.Exit(130) from None
    console.print(f"wrote {manifest}", highlight=False)


@app.command("prompts")
def prompts_cmd(
    file: Path = typer.Argument(..., help="Suite manifest (each clip's first item gives the instruction)."),
    out: Path = typer.Option(..., "--out", "-o", help="JSONL manifest of generation prompts to write."),
    judge_name: str = typer.Option(..., "--judge", "-j", help="The language model that rewrites (a judge)."),
    judges_file: Path | None = typer.Option(None, "--judges", help="TOML file declaring judges \\[default: "
                                            "robojudge.toml in the current folder]."),
    max_words: int = typer.Option(100, "--max-words", min=1, help="Longest valid rewrite, in words (a "
                                  "Chinese or Japanese character counts as a word)."),
    retries: int = typer.Option(1, "--retries", min=0, help="Extra asks for a rewrite failing its checks."),
    cache: Path | None = typer.Option(None, "--cache-dir", "--cache",
                                      help=CACHE_DIR_HELP),
    force: bool = typer.Option(False, "--force",
                               help="Replace an existing --out (never the input manifest)."),
) -> None:
    """Ten generation prompts per clip (RoboJudge App. D): five model rewrites and five fixed prefixes."""

    from robojudge.cli._judge import cache_open_error, resolve_judge
    from robojudge.judges import (
        JudgeConfigError,
        ResponseCache,
        ResponseCacheError,
        UnknownNameError,
        out_of_files,
    )
    from robojudge.run import OpenFilesError
    from robojudge.run._executor import ensure_open_files
    from robojudge.run._judge import OPEN_FILES_BASE
    from robojudge.train import prompt_variants

    if out.exists() and file.exists() and out.resolve() == file.resolve():
        raise fail(f"--out {out} is the input manifest {file}: the prompts would replace the suite; write "
                   "them to another file")
    if out.exists() and not force:
        raise fail(f"{out} exists; pass --force to replace it")
    check_out_file(out)
    try:
        config = resolve_judge(judge_name, judges_file, None, {})
        items = load_suite(file).items
        # one socket per request in flight, as a judge run (docs/judges.md, "Open files")
        ensure_open_files(OPEN_FILES_BASE + config.concurrency, f"judge {config.name!r} at concurrency "
                          f"{config.concurrency}", "lower its concurrency in the judges file")
        with ResponseCache(cache) as store:
            summary = prompt_variants(items, config, out, cache=store, max_words=max_words, retries=retries)
    except ResponseCacheError as exc:
        raise fail(cache_open_error(exc, "--cache-dir", no_cache=None)) from None
    except (ManifestError, JudgeConfigError, UnknownNameError, ValueError, OpenFilesError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        if out_of_files(exc) is None:
            raise
        raise fail(f"this process ran out of open files while asking for prompts ({exc}): raise `ulimit -n` "
                   f"or lower the judge's concurrency; {out} was not written") from None
    for line in summary.skipped:
        err_console.print(f"[yellow]skipped:[/] {escape(line)}", markup=True, highlight=False)
    clips = len({r.clip_id for r in summary.rows})
    note = f"; {summary.invalid} rewrite(s) invalid (see valid/problem)" if summary.invalid else ""
    console.print(f"wrote {len(summary.rows)} prompts for {clips} clip(s) to {out}{note}", highlight=False)
