"""``robojudge metrics ...``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Column, Table
from rich.text import Text

from robojudge._files import replace_text
from robojudge.cli._common import (
    check_out_file,
    check_settings,
    console,
    err_console,
    fail,
    first_names,
    parse_settings,
    print_manifest_problems,
    print_rescored_libraries,
    print_skipped_rows,
    warnings_said_once,
)
from robojudge.cli._tables import print_table
from robojudge.metrics import (
    ALL_METRICS,
    LookAlikeGroupsWarning,
    MetricSpec,
    UnknownMetricError,
    list_metrics,
    set_metrics_run_by_all,
    sets_not_run_summary,
)

app = typer.Typer(help="Browse the metric registry.", no_args_is_help=True)


def _unverified(spec: MetricSpec[Any]) -> list[str]:
    """The metric's networks whose loader has never run on the published checkpoint (docs/weights.md)."""
    from robojudge.models import get_weights

    return [w for w in spec.weights if get_weights(w).unverified]


def _field_type(prop: dict[str, Any]) -> str:
    """A config field's type from its JSON schema, short: ``int``, ``path | null``, ``auto | 2d``."""
    if "enum" in prop:
        return " | ".join(str(v) for v in prop["enum"])
    if "anyOf" in prop:
        return " | ".join(_field_type(p) for p in prop["anyOf"])
    kind = prop.get("format") or prop.get("type") or "any"
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"list of {_field_type(prop['items'])}"
    return {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}.get(kind, kind)


@app.command("info")
def info_cmd(
    metric: str = typer.Argument(..., help="Metric id (`robojudge metrics list` lists them)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (as one entry of `metrics list --json`)."),
) -> None:
    """One metric: what it measures, its source, direction and range, the inputs and settings it reads,
    and how to score it here (the command, and the weights or trained model it needs)."""
    from robojudge.metrics import get_metric, how_to_score

    try:
        spec = get_metric(metric)
    except UnknownMetricError as exc:
        raise fail(str(exc)) from None
    described = {**spec.describe(), "weights_unverified": _unverified(spec), "how": how_to_score(spec)}
    if as_json:
        typer.echo(json.dumps(described, indent=2))
        return
    lo, hi = spec.native_range
    place = (f"level {spec.taxonomy.level}, {spec.taxonomy.subdim} ({spec.taxonomy.subdim_name})"
             if spec.taxonomy else "not a RoboPhys-3D taxonomy metric")
    lines = [
        f"{spec.id} (version {spec.version}; {spec.family.value}, {spec.provider.value})",
        spec.description,
        f"better: {'higher' if spec.higher_is_better else 'lower'}; range "
        f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]",
        f"reads: {', '.join(sorted(i.value for i in spec.inputs)) or 'nothing of the item'}",
        f"RoboPhys-3D place: {place}",
        f"source: {spec.citation}",
        *(f"how: {line}" for line in described["how"]),
    ]
    if described["weights_unverified"]:  # said by `metrics list` and --json; plain info did not say it
        names = ", ".join(described["weights_unverified"])
        lines.append(f"unverified: robojudge reads the {names} checkpoint with its own code, never compared "
                     "with the publisher's on the real file (docs/weights.md)")
    for line in lines:
        console.print(line, highlight=False)
    props: dict[str, dict[str, Any]] = described["config"]
    if props:
        table = Table(Column("setting", no_wrap=True), Column("type"), Column("default"), Column("meaning"),
                      title=f"settings (--set {spec.id}.SETTING=VALUE)", title_justify="left")
        for name, prop in props.items():
            default = json.dumps(prop["default"]) if "default" in prop else "(required)"
            table.add_row(name, _field_type(prop), default, prop.get("description", ""))
        print_table(table)


@app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the Markdown table of docs/metrics.md."),
    update: Path | None = typer.Option(
        None, "--update", help="With --markdown: rewrite the generated table inside this Markdown file."
    ),
) -> None:
    """List registered metrics; --json adds version, citation, description, config and taxonomy place."""
    if update is not None and not markdown:
        raise fail("--update rewrites the Markdown table: add --markdown")
    specs = list_metrics()
    if as_json:
        rows = [{**s.describe(), "weights_unverified": _unverified(s)} for s in specs]
        typer.echo(json.dumps(rows, indent=2))
        return
    if markdown:
        from robojudge.metrics._doc import markdown_table, replace_table

        table_md = markdown_table(specs)
        if update is None:
            typer.echo(table_md)
            return
        try:
            replace_text(update, replace_table(update.read_text(encoding="utf-8"), table_md))
        except (OSError, ValueError) as exc:
            raise fail(f"{update}: {exc}") from None
        console.print(f"updated the metrics table in {update}", highlight=False)
        return
    table = Table(
        Column("id", no_wrap=True),
        Column("family", no_wrap=True),
        Column("provider", no_wrap=True),
        Column("place", no_wrap=True),
        Column("better", no_wrap=True),
        Column("range", no_wrap=True),
        Column("inputs", min_width=6),
    )
    for s in specs:
        lo, hi = s.native_range
        table.add_row(
            s.id,
            s.family.value,
            s.provider.value + (" (unverified)" if _unverified(s) else ""),
            f"L{s.taxonomy.level} {s.taxonomy.subdim}" if s.taxonomy else "-",
            "higher" if s.higher_is_better else "lower",
            f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]",
            ",".join(sorted(i.value for i in s.inputs)) or "-",
        )
    print_table(table)


@app.command("sets")
def sets_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest (.jsonl, .csv or .parquet)."),
    metrics: str = typer.Option(
        ..., "--metrics", "-m", help="Comma-separated set-level ids; 'all' = those whose weights are here."
    ),
    by: str = typer.Option("generator", "--by", help="Item field to group by; 'none' for one group."),
    db: str | None = typer.Option(
        None, "--db", help="Result store URL, SQLite path or run folder \\[default: RUN_DIR/results.sqlite]."
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir",
        help=("Run folder for the default store \\[default: the run folder holding the "
              "manifest, else runs/<manifest name>].")
    ),
    store: bool = typer.Option(True, "--store/--no-store", help="Store the rows and resume (default), or "
                               "only compute and print them."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="Recompute stored failures."),
    rescore_libraries: bool = typer.Option(
        False, "--rescore-libraries", help="Recompute the groups stored with other versions of the libraries "
        "values are computed through than installed (the old rows are kept, superseded)."
    ),
    rescore_unknown: bool = typer.Option(
        False, "--rescore-unknown", help="Recompute the groups stored with a fingerprint of an older recipe "
        "(before the network weights were part of it; `results status` counts them as no fingerprint)."
    ),
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write rows to FILE (.csv or JSONL)."),
    settings: list[str] = typer.Option([], "--set", help="Metric setting METRIC.KEY=VALUE (repeatable)."),
    executor: str = typer.Option("local", "--executor", help="'local' (groups one by one here) or 'ray' "
                                 "(each group a task on a Ray cluster; see docs/ray.md)."),
    address: str | None = typer.Option(None, "--address", help="With --executor ray: auto, local, "
                                       "ray://HOST:PORT or HOST:PORT \\[default: auto]."),
    workers: int | None = typer.Option(
        None, "--workers", "-w", min=1, help="Worker processes computing groups \\[default: 1, in this "
        "process]; with --executor ray, groups computed at once \\[default: the cluster's CPUs]."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=0.001, help="Seconds one metric may take on one group; past it the group's "
        "rows are errors saying so and the run goes on \\[default: no limit]. See docs/performance.md."
    ),
) -> None:
    """Score set-level metrics (FVD, JEPA MMD, V-JEPA manifold distance, ...) per group of items.

    Rows go to the result store like `robojudge score` results (a group's row under item id
    group:<field>=<value>); a rerun computes only groups that are new or whose items changed.
    """
    check_settings(skip=("decode_workers",))  # (only judges decode in worker processes)
    from robojudge.metrics._sets import score_sets, write_set_rows
    from robojudge.run import WorkerStartError, score_set_suite
    from robojudge.run._ray import RayUnavailableError
    from robojudge.store import StoreError
    from robojudge.suite import ManifestError, load_suite

    ids = [m.strip() for m in metrics.split(",") if m.strip()]
    if not ids:
        raise fail("--metrics is empty")
    if ALL_METRICS in ids:  # what `all` leaves out, as `robojudge score` says it
        from rich.markup import escape

        for line in sets_not_run_summary():
            err_console.print(f"[yellow]all:[/] {escape(line)}", markup=True, highlight=False)
        if set(ids) == {ALL_METRICS} and not set_metrics_run_by_all():  # it printed "0 groups", exit 0
            raise fail("--metrics all: no set-level metric can run here (see above); install the weights "
                       "(`robojudge weights status`) or name the metrics")
    group_by = None if by == "none" else by
    if out is not None:
        check_out_file(out)
    if not store and (executor != "local" or address is not None or rescore_libraries or rescore_unknown
                      or timeout is not None or workers is not None):
        raise fail("--executor, --address, --workers, --rescore-libraries, --rescore-unknown and --timeout "
                   "work on the store; drop --no-store")
    where = None
    try:
        with warnings_said_once(LookAlikeGroupsWarning):
            if store:
                run = score_set_suite(suite, ids, by=group_by, db=db, run_dir=run_dir,
                                      configs=parse_settings(settings), retry_errors=retry_errors,
                                      executor=executor, address=address, workers=workers,
                                      rescore_libraries=rescore_libraries,
                                      rescore_unknown=rescore_unknown, timeout_s=timeout)
                problems, rows, where = run.manifest_problems, run.rows, run
            else:
                loaded = load_suite(suite, strict=False)
                problems = list(loaded.problems)
                rows = score_sets(loaded.items, ids, by=group_by, configs=parse_settings(settings))
    except (UnknownMetricError, ManifestError, StoreError, ValueError, FileNotFoundError,
            RayUnavailableError, WorkerStartError) as exc:
        raise fail(str(exc)) from None
    print_manifest_problems(problems)
    table = Table(Column("metric", no_wrap=True), Column("group", no_wrap=True), Column("item", no_wrap=True),
                  Column("value", no_wrap=True), Column("n", no_wrap=True), Column("note"))
    for r in rows:
        value = f"{r.value:.6g}" if r.status == "ok" else Text("error", style="red")
        note = r.error if r.status != "ok" else (r.warning or "")
        table.add_row(r.metric, r.group, r.item_id or "-", value, str(r.n_items), note)
    print_table(table)
    print_skipped_rows(problems)
    if where is not None:
        console.print(f"{where.groups} groups: {where.computed} computed ({where.stale} because their items "
                      f"changed), {where.skipped} already stored ({where.unavailable} kept because a file "
                      f"cannot be read now); results: {where.db_url}", highlight=False)
        print_rescored_libraries(where.rescored_libraries, "rows")
        if where.changed:
            names = first_names([f"{m} on {g}" for m, g in where.changed])
            console.print(f"{len(where.changed)} not stored: a file they read changed while they were "
                          f"computed ({names}); rerun to compute them from what is there now",
                          highlight=False, markup=False)
        if where.isolated:
            n, again = len(where.isolated), len(where.crashed_again)
            names = first_names([f"{m} on {g}" for m, g in where.isolated])
            console.print(f"{n} group{'s' if n != 1 else ''} an earlier run was computing when it ended (a "
                          "crash or a kill; or a run on another machine sharing the store, whose state "
                          f"cannot be checked from here) ran alone in a child process: {names}; "
                          + (f"{again} crashed it again and got error rows" if again else "none crashed it"),
                          highlight=False, markup=False)
    if out is not None:
        console.print(f"rows: {write_set_rows(rows, out)}", highlight=False)
    failed = sum(r.status != "ok" for r in rows)
    if failed:
        console.print(f"{failed} of {len(rows)} rows are errors (their reasons are in the table)",
                      highlight=False)
    computed_now = where.computed if where is not None else len(rows)
    if rows and computed_now and failed == len(rows):  # as `score`: a script must tell that nothing was
        console.print("[bold red]nothing was measured:[/] every group of this run failed (exit status 1)",
                      markup=True, highlight=False)
        raise typer.Exit(1)
