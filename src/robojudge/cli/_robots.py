"""``robojudge robots ...``."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.text import Text

from robojudge._json import json_ready
from robojudge.cli._common import console, err_console, fail
from robojudge.cli._tables import name_table, print_table
from robojudge.robots import BUILTIN_ROBOTS, RobotSpecError, builtin_robot, load_robot_spec, summarize_robot

app = typer.Typer(help="Robot specs for forward kinematics (docs/robots.md).", no_args_is_help=True)


def _not_found(spec: str) -> str:
    """Why ``spec`` names nothing: no such file, nor a built-in robot (the closest one suggested)."""
    names = list(BUILTIN_ROBOTS)
    guess = difflib.get_close_matches(spec, names, n=1, cutoff=0.6)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    return (f"{spec}: no robot spec file of that name, nor a built-in robot (built-in: {', '.join(names)})"
            f"{hint}")


@app.command("check")
def check_cmd(
    spec: str = typer.Argument(
        ..., help=f"Robot spec file (.toml), or a built-in robot: {', '.join(BUILTIN_ROBOTS)}."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: name, format, model, keypoints, links "
                                 "(length at rest, rigid) and joint limits (null: unlimited)."),
) -> None:
    """Load a robot spec and its model; print its keypoints, links and joint limits.

    A link whose length changes with the joints is flagged: KIVA's rigidity measure would count its
    natural motion as a failure.
    """
    if spec not in BUILTIN_ROBOTS and not Path(spec).exists():
        raise fail(_not_found(spec))
    try:
        loaded = (
            builtin_robot(spec)
            if spec in BUILTIN_ROBOTS and not Path(spec).exists()
            else load_robot_spec(spec)
        )
        summary = summarize_robot(loaded)
    except (RobotSpecError, ValueError, RuntimeError) as exc:
        raise fail(str(exc)) from None
    s = summary.spec
    if as_json:
        typer.echo(json.dumps(json_ready({
            "name": s.name, "format": s.format, "model": str(s.model), "keypoints": list(s.keypoints),
            "links": [{"a": li.a, "b": li.b, "length_at_rest_m": li.length, "rigid": li.rigid}
                      for li in summary.links],
            "joints": [{"joint": name, "lower": lim[0] if lim else None, "upper": lim[1] if lim else None}
                       for name, lim in summary.joints],
        }), indent=2))
        return
    console.print(f"[bold]{escape(s.name)}[/]: {s.format.upper()} {escape(str(s.model))}", markup=True,
                  highlight=False)
    console.print(f"keypoints ({len(s.keypoints)}): {', '.join(s.keypoints)}", highlight=False, markup=False)
    links = name_table(f"links ({len(summary.links)})", "link", "length at rest (m)", "rigid")
    for li in summary.links:
        links.add_row(f"{li.a} - {li.b}", f"{li.length:.4f}", "yes" if li.rigid else Text("no", style="red"))
    print_table(links)
    joints = name_table(f"joints ({len(summary.joints)})", "joint", "lower", "upper")
    for name, lim in summary.joints:
        joints.add_row(name, *((f"{lim[0]:.4g}", f"{lim[1]:.4g}") if lim else ("-", "-")))
    print_table(joints)
    bad = [li for li in summary.links if not li.rigid]
    if bad:  # a warning, not data: on stderr
        names = escape(", ".join(f"{li.a} - {li.b}" for li in bad))
        err_console.print(f"[yellow]warning[/]: not rigid (a joint changes its length): {names}", markup=True,
                          highlight=False)
