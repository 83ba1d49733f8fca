"""``robojudge select``: Pick rollouts with a judge or a metric (Best-of-N)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from robojudge import DEFAULT_SEED
from robojudge.cli._common import DB_HELP, E1_HELP, check_out_file, console, err_console, fail, load_results
from robojudge.cli._tables import add_column, print_table
from robojudge.store import StoreError
from robojudge.suite import ManifestError

app = typer.Typer(help="Pick rollouts with a judge or a metric (Best-of-N).", no_args_is_help=True)

_BY = ("What to pick by: judge:NAME[:pa|ia|overall], calibrated[:AXIS], a stored metric id or series "
       "label, or labels[:AXIS] (the oracle).")
_GROUP = "Item fields that make a group (prompt: prompt_variant, else instruction; meta.KEY: a meta value)."
_LABEL = "Label axis to compare on: pa, ia or overall \\[default: the axis --by scores, else overall]."
_OUT = "Write the picks: .json (with the summary) or CSV."
_DB = DB_HELP


@app.command("best-of-n")
def best_of_n(
    suite: Path = typer.Argument(..., help="Suite manifest the results belong to, or a run folder (its "
                                 "store, and the manifests in it or scored into it)."),
    by: str = typer.Option(..., "--by", help=_BY),
    group: str = typer.Option("clip_id,prompt", "--group", help=_GROUP),
    out: Path | None = typer.Option(None, "--out", "-o", help=_OUT),
    label: str | None = typer.Option(None, "--label", help=_LABEL),
    db: str | None = typer.Option(None, "--db", help=_DB),
    bootstrap: int = typer.Option(2000, "--bootstrap", min=0, help=E1_HELP),
    seed: int = typer.Option(DEFAULT_SEED, "--seed",
                             help="Seed of the bootstrap and of the calibrated judge."),
    level: float = typer.Option(0.95, "--level", min=0.5, max=0.999, help="Interval coverage."),
    orient: bool | None = typer.Option(None, "--higher-is-better/--lower-is-better",
                                       help="Direction of a stored metric the registry does not know; "
                                       "refused for a registered metric, judge:, calibrated and labels."),
    folds: int = typer.Option(5, "--folds", min=2, help="Folds of the calibrated judge."),
    alpha: float = typer.Option(1.0, "--alpha", min=0.0, help="L2 penalty of the calibrated judge."),
    predict: str = typer.Option("expected", "--predict", help="Calibrated score: expected or class."),
    as_json: bool = typer.Option(False, "--json", help="Print the picks and summary as JSON."),
) -> None:
    """Pick the best rollout of each group by a judge or a metric; with labels, compare the picks with a
    random pick and the oracle (regret, top-1 accuracy, bootstrap intervals over the groups' clips)."""
    from robojudge.select import best_of_n, summary_rows, summary_text, write_picks

    if out is not None:  # before the work: it was computed and printed, then "File exists"
        check_out_file(out)
    stored, items = load_results(suite, db)
    try:
        result = best_of_n(items, stored, by=by, group=group, label=label, bootstrap=bootstrap,
                           seed=seed, level=level, orient=orient, n_folds=folds, alpha=alpha,
                           prediction=predict)
    except (ManifestError, StoreError, ValueError, FileNotFoundError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        console.print(summary_text(result), highlight=False)
        rows = summary_rows(result)
        if rows:
            table = Table(box=box.SIMPLE_HEAD)
            for col in ("statistic", "value", "meaning"):
                add_column(table, col, fold=col != "value")
            for name, value, meaning in rows:
                table.add_row(name, value, meaning)
            print_table(table)
    if out is not None:
        path = write_picks(result, out)
        (err_console if as_json else console).print(f"wrote {path}", highlight=False)
