"""``robojudge suite ...``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from robojudge.cli._common import console, err_console, fail
from robojudge.suite import ManifestError, load_suite, suite_info, validate_manifest

app = typer.Typer(help="Check and describe suite manifests.", no_args_is_help=True)


@app.command("validate")
def validate_cmd(file: Path = typer.Argument(..., help="Suite manifest (.jsonl, .csv or .parquet).")) -> None:
    """Report every problem of a manifest at once; exit 1 if there are any."""
    try:
        problems = validate_manifest(file)
    except ManifestError as exc:
        raise fail(str(exc)) from None
    for p in problems:
        err_console.print(str(p), highlight=False, markup=False)
    if problems:
        err_console.print(f"[bold red]{len(problems)} problem(s)[/] in {file}", highlight=False)
        raise typer.Exit(1)
    console.print(f"[green]ok[/]: {file}", highlight=False)


def _render(title: str, value: Any) -> None:
    if isinstance(value, dict) and value and all(not isinstance(v, dict) for v in value.values()):
        table = Table(title, "count")
        for k, v in value.items():
            table.add_row(str(k), str(v))
        console.print(table)
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
    if suite.problems:
        err_console.print(
            f"[yellow]{len(suite.problems)} row(s) left out; run `robojudge suite validate {file}`[/]",
            highlight=False,
        )


@app.command("make-demo")
def make_demo_cmd(
    out: Path = typer.Option(..., "--out", help="Destination folder."),
    seed: int = typer.Option(0, "--seed", help="Same seed, same frames."),
    episodes: int = typer.Option(
        10, "--episodes", min=1, help="Episodes; scenes cycle pick-and-place, relocate, push, slide."
    ),
    views: int = typer.Option(3, "--views", min=1, max=5, help="Cameras per rollout; cam0 is the main view."),
    size: int = typer.Option(256, "--size", min=32, help="Square image size in pixels."),
    profiles: str | None = typer.Option(None, "--profiles", help="Comma-separated generator profiles [all]."),
) -> None:
    """Render the simulator-grounded suite (MuJoCo episodes with planted failures and state files)."""
    from robojudge.demo import sim_available

    if not sim_available():
        raise fail("the simulator suite needs the sim extra: pip install 'robojudge[sim]'")
    from robojudge.suite.sim import make_sim_suite

    names = [p.strip() for p in profiles.split(",") if p.strip()] if profiles else None
    try:
        manifest = make_sim_suite(out, seed=seed, episodes=episodes, views=views, size=size, profiles=names)
    except ValueError as exc:
        raise fail(str(exc)) from None
    console.print(f"wrote {manifest}", highlight=False)
