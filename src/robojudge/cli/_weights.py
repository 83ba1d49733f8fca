"""``robojudge weights list|status|fetch``: which networks metrics load, and whether they are here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from robojudge.cli._common import console, fail
from robojudge.cli._tables import add_column, print_table
from robojudge.metrics._select import metrics_by_weights
from robojudge.models import WEIGHTS_ENV, fetch_weights, list_weights, weights_root, weights_status

app = typer.Typer(help="Network weights that model-backed metrics load.", no_args_is_help=True)


def _rows(with_status: bool) -> list[dict[str, Any]]:
    users = metrics_by_weights()  # loads the metric registry, which registers every network
    rows = []
    for st in weights_status() if with_status else []:
        rows.append({**st.describe(), "metrics": users.get(st.spec.name, [])})
    if not with_status:
        for spec in list_weights():
            rows.append({"name": spec.name, "repo_id": spec.repo_id, "revision": spec.revision,
                         "pinned": spec.pinned, "pinning": spec.pinning(), "unverified": spec.unverified,
                         "filename": spec.filename, "source": spec.source(),
                         "library": spec.library, "description": spec.description,
                         "metrics": users.get(spec.name, [])})
    return rows


@app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """Every network: name, source, how it is pinned, whether its loader is unverified, its metrics.

    "unverified": robojudge reads that checkpoint with its own code, never yet run on the published
    file (see docs/weights.md).
    """
    rows = _rows(with_status=False)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = _table("name", "source", "pinned", "loader", "metrics", whole=("name", "loader"))
    for r in rows:
        table.add_row(r["name"], r["source"], r["pinning"], "unverified" if r["unverified"] else "library",
                      ", ".join(r["metrics"]) or "-")
    print_table(table)


@app.command("status")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """Whether each network is here (in $ROBOJUDGE_WEIGHTS or the hub cache), where, and whether its files
    are complete: present, missing, incomplete (a file it needs is missing or empty) or corrupt (a pinned
    SHA-256 does not match)."""
    rows = _rows(with_status=True)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    root = weights_root()
    console.print(f"${WEIGHTS_ENV}: {root if root else '(unset)'}", highlight=False)
    table = _table("name", "status", "where", "metrics", whole=("name", "status"))
    for r in rows:
        status = Text(r["state"], style=_STYLES.get(r["state"], "red"))
        fix = r["manual"] or f"robojudge weights fetch {r['name']}"
        if r["present"]:
            where = r["path"]
        elif r["path"]:
            where = f"{r['path']}: {r['problem']}; replace: {fix}"
        else:
            where = fix
        table.add_row(r["name"], status, where, ", ".join(r["metrics"]) or "-")
    print_table(table)


def _table(*headers: str, whole: tuple[str, ...]) -> Table:
    """A table whose columns in ``whole`` (a network's name, a state) are never wrapped and whose others
    (a source, a path, a list of metrics) fold: nothing is cut to ``…`` (cli._tables.print_table)."""
    table = Table()
    for header in headers:
        add_column(table, header, fold=header not in whole)
    return table


_STYLES = {"present": "green", "missing": "red", "incomplete": "yellow", "corrupt": "red"}


@app.command("fetch")
def fetch_cmd(
    name: str = typer.Argument(..., help="Network name (see `robojudge weights list`)."),
    dest: Path | None = typer.Option(
        None, "--dest", help="Folder to download NAME's files into \\[default: $ROBOJUDGE_WEIGHTS/NAME]; "
        "copy it to $ROBOJUDGE_WEIGHTS/NAME on the machine that scores."),
) -> None:
    """Download one network into $ROBOJUDGE_WEIGHTS/NAME (needs network access; the only download path).

    A failed download leaves nothing behind.
    """
    metrics_by_weights()
    try:
        path = fetch_weights(name, dest=dest)
    except KeyError as exc:  # a bare KeyError's str() is its message in quotes
        raise fail(str(exc).strip("'\"")) from None
    except (ValueError, OSError) as exc:  # said as it is, quotes kept (a KeyError's are stripped)
        raise fail(str(exc)) from None
    console.print(f"{name}: {path}", highlight=False)
