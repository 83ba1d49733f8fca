"""``robojudge annotate``: Human annotation: projects, annotators, assignments, the web app, label export."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.markup import escape

from robojudge.cli._common import console, err_console, fail, says_when_stopped, warnings_said_once
from robojudge.cli._tables import name_table, print_table

app = typer.Typer(
    help="Human annotation: projects, annotators, assignments, the web app, label export.",
    no_args_is_help=True,
)
round_app = typer.Typer(
    help="Training rounds: practice sets, agreement, pass threshold.", no_args_is_help=True
)
app.add_typer(round_app, name="round")

_DB = typer.Option(
    ..., "--db", help="Database URL or SQLite path (the same database as the result store is fine)."
)
_PROJECT = typer.Option(..., "--project", "-p", help="Annotation project name.")


def _guard() -> tuple[type[BaseException], ...]:
    from robojudge.annotate import AnnotateError

    return (AnnotateError, OSError, RuntimeError)


@app.command("init")
def init_cmd(
    suite: Path = typer.Argument(..., help="Suite manifest whose items are to be labelled."),
    db: str = _DB,
    name: str = typer.Option(..., "--name", help="Project name (unique in the database)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the annotators' random task orders."),
    segments: float | None = typer.Option(
        None,
        "--segments",
        help="Split clips into segments of this many seconds for Bad/Medium/Good verdicts (RoboWorM uses 3).",
    ),
    pass_threshold: float = typer.Option(
        0.8, "--pass-threshold", help="Within-one agreement a trainee needs to pass a training round."
    ),
) -> None:
    """Create an annotation project from a suite (items get random opaque ids)."""
    from robojudge.annotate import UnreadableClipWarning, init_project

    try:
        with warnings_said_once(UnreadableClipWarning):  # a warning line for clips no browser may play
            info = init_project(suite, db, name, seed=seed, segment_s=segments, pass_threshold=pass_threshold)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"project {info.name}: {info.n_items} items", highlight=False)


@app.command("add-annotator")
def add_annotator_cmd(
    username: str = typer.Argument(..., help="Login name."),
    db: str = _DB,
    role: str = typer.Option("annotator", "--role", help="annotator, reviewer, adjudicator or admin."),
    password: bool = typer.Option(
        False, "--password", help="Set a password now (prompted) instead of printing an invite link."
    ),
    base_url: str = typer.Option(
        "http://127.0.0.1:8080", "--base-url", help="Where the app is served, for the invite link."
    ),
) -> None:
    """Add an annotator: with a password typed now, or with a one-time invite link."""
    from robojudge.annotate import add_annotator

    secret = typer.prompt("password", hide_input=True, confirmation_prompt=True) if password else None
    try:
        invite = add_annotator(db, username, role, password=secret)
    except _guard() as exc:
        raise fail(str(exc)) from None
    if invite.token is None:
        console.print(f"added {invite.username} ({invite.role})", highlight=False)
    else:
        console.print(f"added {invite.username} ({invite.role}); invite link (shown once):", highlight=False)
        console.print(f"{base_url.rstrip('/')}/invite/{invite.token}", highlight=False, soft_wrap=True)


@app.command("update-annotator")
def update_annotator_cmd(
    username: str = typer.Argument(..., help="Login name."),
    db: str = _DB,
    role: str | None = typer.Option(None, "--role", help="New role."),
    active: bool | None = typer.Option(None, "--active/--inactive", help="Let them log in, or not."),
    new_invite: bool = typer.Option(False, "--new-invite", help="Clear the password, print an invite."),
    base_url: str = typer.Option("http://127.0.0.1:8080", "--base-url", help="Where the app is served."),
) -> None:
    """Change an annotator's role, switch them off or on, or send a new invite link (forgotten password)."""
    from robojudge.annotate import update_annotator

    try:
        invite = update_annotator(db, username, role=role, active=active, new_invite=new_invite)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{invite.username}: role {invite.role}", highlight=False)
    if invite.token:
        console.print(f"{base_url.rstrip('/')}/invite/{invite.token}", highlight=False, soft_wrap=True)


@app.command("assign")
def assign_cmd(
    db: str = _DB,
    project: str = _PROJECT,
    to: list[str] = typer.Option(..., "--to", help="Annotator to receive tasks (repeat for several)."),
    kind: str = typer.Option("label", "--kind", help="label (primary), review (cross-review) or adjudicate."),
    items: list[str] | None = typer.Option(None, "--item", help="Only these manifest item ids (repeat)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the dealing \\[default: the project's]."),
    skip_training: bool = typer.Option(
        False,
        "--skip-training",
        help="Assign even to annotators who passed no training round of a project that has rounds.",
    ),
) -> None:
    """Deal the project's items to annotators (each item one task of the kind; a seeded random order each)."""
    from robojudge.annotate import assign

    try:
        n = assign(
            db, project, to, kind=kind, items=items or None, seed=seed, require_training=not skip_training
        )
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{n} {kind} tasks assigned", highlight=False)
    if n == 0:
        from robojudge.annotate import nothing_dealt

        try:
            why = nothing_dealt(db, project, kind, items or None)
        except _guard() as exc:
            raise fail(str(exc)) from None
        err_console.print(f"[yellow]note:[/] {escape(why)}", markup=True, highlight=False, soft_wrap=True)


@app.command("reassign")
def reassign_cmd(
    db: str = _DB,
    project: str = _PROJECT,
    from_user: str = typer.Option(..., "--from", help="Whose open and draft tasks move (one who left)."),
    to: list[str] = typer.Option(..., "--to", help="Who receives them (repeat for several; dealt evenly)."),
    kind: str | None = typer.Option(None, "--kind", help="Only label, review or adjudicate tasks."),
    items: list[str] | None = typer.Option(None, "--item", help="Only these manifest item ids (repeat)."),
    skip_training: bool = typer.Option(
        False, "--skip-training", help="Move tasks even to annotators who passed no training round."
    ),
) -> None:
    """Move an annotator's unfinished tasks to others (drafts stay in the history, submitted work stays)."""
    from robojudge.annotate import reassign

    try:
        moved = reassign(db, project, from_user, to, kind=kind, items=items or None,
                         require_training=not skip_training)
    except _guard() as exc:
        raise fail(str(exc)) from None
    for m in moved:
        note = " (their draft set aside: starts afresh)" if m.draft_set_aside else ""
        console.print(f"{m.item_id}: {m.kind} {m.from_user} -> {m.to_user}{note}", highlight=False)
    console.print(f"{len(moved)} tasks moved", highlight=False)


@app.command("reopen")
def reopen_cmd(
    item: str = typer.Argument(..., help="Manifest item id whose adjudication is to be redone."),
    db: str = _DB,
    project: str = _PROJECT,
    to: str | None = typer.Option(
        None, "--to", help="Another adjudicator to redo it \\[default: the one who adjudicated]."
    ),
) -> None:
    """Reopen a submitted adjudication to redo it (the submitted version stays in the history)."""
    from robojudge.annotate import reopen_adjudication

    try:
        moved = reopen_adjudication(db, project, item, to=to)
    except _guard() as exc:
        raise fail(str(exc)) from None
    who = f", now {moved.to_user}'s" if moved is not None else ""
    console.print(f"{item}: adjudication reopened{who}; until it is submitted again the item has none",
                  highlight=False)


@app.command("add-items")
def add_items_cmd(db: str = _DB, project: str = _PROJECT) -> None:
    """Add the items appended to the project's suite manifest since init (then deal them with assign)."""
    from robojudge.annotate import UnreadableClipWarning, add_items

    try:
        with warnings_said_once(UnreadableClipWarning):
            added = add_items(db, project)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{len(added)} items added to {project}", highlight=False)


@app.command("add-example")
def add_example_cmd(
    item: str = typer.Argument(..., help="Manifest item id of the example."),
    db: str = _DB,
    project: str = _PROJECT,
    axis: str = typer.Option(..., "--axis", help="pa or ia."),
    score: int = typer.Option(..., "--score", help="The score the example deserves, 1-5."),
    text: str = typer.Option(..., "--text", help="Why it deserves that score."),
) -> None:
    """Pin a reference example beside every task of the project (the item is then never dealt as a task)."""
    from robojudge.annotate import add_example

    try:
        add_example(db, project, item, axis, score, text)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{item} pinned as a {axis.upper()} {score} example", highlight=False)


@app.command("import-drafts")
def import_drafts_cmd(
    drafts: Path = typer.Argument(..., help="JSON Lines written by `robojudge judge draft`."),
    db: str = _DB,
    project: str = _PROJECT,
) -> None:
    """Attach model drafts (RoboJudge App. A.2) to items; primary labellers then start from them."""
    from robojudge.annotate import import_drafts

    try:
        n = import_drafts(db, project, drafts)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{n} items got a model draft from {drafts}", highlight=False)


@app.command("export")
@says_when_stopped("--out is as it was (its files are replaced only once all are written whole); rerun "
                   "the same command to export")
def export_cmd(
    db: str = _DB,
    project: str = _PROJECT,
    fmt: str = typer.Option("manifest", "--format", "-f", help="manifest, scores or labelstudio."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Output file (manifest, labelstudio) or folder (scores)."
    ),
    media_url: str | None = typer.Option(
        None,
        "--media-url",
        help="labelstudio: URL where the suite's folder is served; videos become URL/<path in the suite>.",
    ),
    rater: str | None = typer.Option(
        None,
        "--rater",
        help="manifest: this annotator's primary labels and cross-reviews instead of the final labels.",
    ),
    suite: Path | None = typer.Option(
        None,
        "--suite",
        help="The project's suite manifest where it is now, if it moved since init or the database is "
        "shared with another machine (checked to be the project's suite) \\[default: the recorded one].",
    ),
    include_disputed: bool = typer.Option(
        False,
        "--include-disputed",
        help="manifest: also export the items awaiting an adjudication (a cross-review 2+ points off the "
        "primary label) with their primary label \\[default: left out, and counted]. The score tables "
        "always hold them, marked in human.csv's disputed column.",
    ),
) -> None:
    """Export labels: a manifest with final labels, score CSVs for `meta agreement`, or Label Studio JSON."""
    from robojudge.annotate import disputed_items, export_labelstudio, export_manifest, export_scores

    # Checked before the try below: the typer.Exit that fail() gives is a RuntimeError it would catch.
    if fmt not in ("manifest", "scores", "labelstudio"):
        raise fail(f"--format {fmt!r}: use manifest, scores or labelstudio")
    if rater is not None and fmt != "manifest":
        raise fail(f"--rater is for --format manifest (score tables hold every rater), not {fmt!r}")
    if media_url is not None and fmt != "labelstudio":
        raise fail(f"--media-url is for --format labelstudio, not {fmt!r}")
    if include_disputed and (fmt == "labelstudio" or rater is not None):
        raise fail("--include-disputed is for the final labels of --format manifest or scores")
    try:
        if fmt == "manifest":
            n = export_manifest(db, project, out, rater=rater, suite=suite, disputed=include_disputed)
            console.print(f"wrote {out}: {n} labelled items", highlight=False)
            if rater is None:
                _note_disputed(len(disputed_items(db, project)), include_disputed, "meta.annotation.disputed")
        elif fmt == "scores":
            files = export_scores(db, project, out, suite=suite)
            # --disputed keep: meta agreement would leave out the items awaiting an adjudication, and score a
            # cross-reviewer only where they came within one point of the primary label
            console.print(
                f"wrote {files.human} and {files.raters} ({files.n_items} items); compare with "
                f"robojudge meta agreement --pred {files.raters} --human {files.human} --disputed keep",
                highlight=False,
            )
            if files.n_self:
                console.print(
                    f"{files.n_self} rows left out of {files.raters.name}: their item's final label is "
                    "that rater's own primary label (not adjudicated), which would compare them with "
                    "themselves",
                    highlight=False,
                )
            console.print(
                f"{files.raters.name} scores a primary annotator (role primary) only on the "
                f"{files.n_adjudicated} adjudicated item(s), a cross-reviewer (role review) on every item "
                "they reviewed: where only disputed items are adjudicated, a primary annotator's rows are "
                "mostly the items they were disputed on, not comparable with a reviewer's",
                highlight=False,
            )
            # Always written: leaving them out would score a cross-reviewer only where they agreed.
            _note_disputed(files.n_disputed, True, f"{files.human.name}'s disputed column")
        else:
            n = export_labelstudio(db, project, out, media_url=media_url, suite=suite)
            console.print(f"wrote {out}: {n} annotations", highlight=False)
    except _guard() as exc:
        raise fail(str(exc)) from None


def _note_disputed(n: int, included: bool, marked: str | None) -> None:
    """Say how many items await an adjudication, and what the export did with them (on stderr)."""
    from robojudge.annotate import DISAGREEMENT

    if not n:
        return
    why = (f"a cross-review differs from their primary label by {DISAGREEMENT} points or more on PA or IA "
           "and nobody has adjudicated them")
    if included:
        where = f", marked in {marked}" if marked else ""
        said = f"{n} item(s) exported with their primary label although not final{where}: {why}"
    else:
        said = (f"{n} item(s) left out, not final yet: {why} (assign an adjudication; --include-disputed "
                "exports their primary labels)")
    err_console.print(f"[yellow]note:[/] {escape(said)}", markup=True, highlight=False)


@app.command("relocate")
def relocate_cmd(
    db: str = _DB,
    project: str = _PROJECT,
    suite: Path = typer.Option(..., "--suite", help="The project's suite manifest where it is now."),
) -> None:
    """Record a moved suite's new place: checked to be the project's suite, with every file there."""
    from robojudge.annotate import relocate_project

    try:
        moved = relocate_project(db, project, suite)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(
        f"project {moved.project}: suite {moved.new_suite} (was {moved.old_suite}); {moved.n_items} items, "
        f"{moved.n_paths} file paths changed",
        highlight=False,
        soft_wrap=True,
    )


@app.command("import-labelstudio")
def import_labelstudio_cmd(
    path: Path = typer.Argument(..., help="Label Studio JSON export."),
    db: str = _DB,
    project: str = _PROJECT,
) -> None:
    """Store the annotations of a Label Studio JSON export (identical ones already stored are skipped)."""
    from robojudge.annotate import import_labelstudio

    try:
        n = import_labelstudio(db, project, path)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"{n} labels imported", highlight=False)


@app.command("labelstudio-config")
def labelstudio_config_cmd() -> None:
    """Print the Label Studio labelling config matching the exported results."""
    from robojudge.annotate import labelstudio_config

    typer.echo(labelstudio_config(), nl=False)


@app.command("status")
def status_cmd(
    db: str = _DB,
    project: str = _PROJECT,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Tasks per kind and per annotator (open, draft, submitted), training rounds, final labels."""
    from robojudge.annotate import project_status

    try:
        st = project_status(db, project)
    except _guard() as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(asdict(st), indent=1))
        return
    awaiting = f", {st.n_disputed} awaiting adjudication" if st.n_disputed else ""
    table = name_table(f"{st.project}: {st.n_items} items, {st.n_final} final{awaiting}", "", "open",
                       "draft", "submitted")
    for label, rows in (("kind", st.by_kind), ("annotator", st.by_annotator)):
        for key, c in rows.items():
            off = " (inactive)" if label == "annotator" and key in st.inactive else ""
            table.add_row(f"{label} {key}{off}", str(c["open"]), str(c["draft"]), str(c["submitted"]))
    print_table(table)
    for name, n in st.inactive.items():
        err_console.print(
            f"[yellow]note:[/] {escape(name)} is switched off and holds {n} unfinished task(s) nobody can "
            f"finish: robojudge annotate reassign -p {escape(project)} --from {escape(name)} --to NAME",
            markup=True, highlight=False, soft_wrap=True,
        )
    if st.unplayable:
        err_console.print(
            f"[yellow]note:[/] {len(st.unplayable)} item(s) reported in the app as a video that cannot be "
            f"played: {escape(', '.join(st.unplayable))} (check with robojudge suite validate; mend the "
            "file, or make the project from a suite without them)",
            markup=True, highlight=False, soft_wrap=True,
        )
    for name, state in st.rounds.items():
        console.print(f"round {name}: {state}", highlight=False)
    if st.rounds:
        console.print(f"qualified: {', '.join(st.qualified) or 'nobody yet'}", highlight=False)
    if st.n_disputed:
        from robojudge.annotate import DISAGREEMENT

        err_console.print(
            f"[yellow]note:[/] {st.n_disputed} item(s) await an adjudication: a cross-review differs from "
            f"their primary label by {DISAGREEMENT} points or more on PA or IA (assign --kind adjudicate)",
            markup=True, highlight=False,
        )


@round_app.command("create")
def round_create_cmd(
    name: str = typer.Argument(..., help="Round name."),
    db: str = _DB,
    project: str = _PROJECT,
    to: list[str] = typer.Option(..., "--to", help="Trainee (repeat; at least two)."),
    items: list[str] = typer.Option(..., "--item", help="Practice item id (repeat)."),
    threshold: float | None = typer.Option(
        None, "--threshold", help="Within-one agreement to pass \\[default: the project's]."
    ),
) -> None:
    """Create a training round: every trainee labels every practice item."""
    from robojudge.annotate import create_round

    if not name.strip():
        raise fail("round name: empty; name the round")
    try:
        n = create_round(db, project, name, to, items, threshold=threshold)
    except _guard() as exc:
        raise fail(str(exc)) from None
    console.print(f"round {name}: {n} practice tasks", highlight=False)


def _print_round(result: object) -> None:
    from robojudge.annotate import RoundAgreement

    assert isinstance(result, RoundAgreement)
    table = name_table(
        f"round {result.round} ({result.n_items} items, pass: within 1 >= {result.threshold:g})",
        "pairs of",
        "pairs",
        "exact",
        "within 1",
        "mean abs diff",
        "items labelled",
        "passed",
    )
    p = result.pooled
    table.add_row("all (PA+IA)", str(p.n_pairs), f"{p.exact:.3f}", f"{p.within_one:.3f}",
                  f"{p.mean_abs_diff:.3f}", "", "")
    for pair, r in result.per_pair.items():
        table.add_row(
            pair, str(r.n_pairs), f"{r.exact:.3f}", f"{r.within_one:.3f}", f"{r.mean_abs_diff:.3f}", "", ""
        )
    for name, r in result.per_annotator.items():
        table.add_row(
            f"{name} & the others",
            str(r.n_pairs),
            f"{r.exact:.3f}",
            f"{r.within_one:.3f}",
            f"{r.mean_abs_diff:.3f}",
            f"{result.coverage.get(name, 0)}/{result.n_items}",
            "yes" if result.passed[name] else "no",
        )
    print_table(table)
    short = [f"{n} ({result.coverage.get(n, 0)} of {result.n_items})" for n in result.annotators
             if result.coverage.get(n, 0) < result.n_items]
    if short:
        err_console.print(
            f"[yellow]note:[/] practice items not all labelled by {escape(', '.join(short))}: a trainee "
            "passes only having labelled every practice item", markup=True, highlight=False, soft_wrap=True,
        )
    alpha = ", ".join(f"{k} {v:.3f}" for k, v in result.alpha.items())
    console.print(f"Krippendorff's alpha (ordinal): {alpha}", highlight=False)


@round_app.command("status")
def round_status_cmd(
    name: str = typer.Argument(..., help="Round name."), db: str = _DB, project: str = _PROJECT,
    as_json: bool = typer.Option(False, "--json", help="Print JSON (no agreement yet: null)."),
) -> None:
    """Agreement of the round's submitted practice labels so far (Table 5 of RoboJudge, plus alpha)."""
    from robojudge._json import json_ready
    from robojudge.annotate import round_agreement

    try:
        result = round_agreement(db, project, name)
    except _guard() as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(json_ready(asdict(result)), indent=1))
        return
    _print_round(result)


@round_app.command("close")
def round_close_cmd(
    name: str = typer.Argument(..., help="Round name."), db: str = _DB, project: str = _PROJECT
) -> None:
    """Close the round: trainees at or above the threshold qualify for production work."""
    from robojudge.annotate import close_round

    try:
        _print_round(close_round(db, project, name))
    except _guard() as exc:
        raise fail(str(exc)) from None


# --- serve (A2) ------------------------------------------------------------------------------------
# `robojudge annotate serve` (the web app) goes here; everything above is the annotation core's.


@app.command("serve")
def serve_cmd(
    suite: Path = typer.Argument(
        ..., help="The project's suite manifest (where it is now, if it moved since init: name the project)."
    ),
    db: str = _DB,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    port: int = typer.Option(8080, "--port", min=0, max=65535, help="Port to listen on."),
    project: str | None = typer.Option(
        None, "--project", "-p", help="Project name, if the suite has several or moved since init."
    ),
    secret_file: Path | None = typer.Option(
        None, "--secret-file",
        help="File holding the session-signing secret (created if missing). Without it a new secret is "
        "drawn at each start and everyone logs in again.",
    ),
    https: bool = typer.Option(
        False, "--https", help="Served to browsers over https (behind a proxy): Secure cookies and HSTS."
    ),
) -> None:
    """Serve the annotation web app (needs the web extra)."""
    from robojudge.annotate.web import is_loopback, load_secret, serve

    try:
        secret = load_secret(secret_file)
        if not is_loopback(host):
            console.print(f"[yellow]listening on {escape(host)}: serve it through an https proxy, with "
                          "--https[/]", markup=True)
        serve(db, suite, secret, host=host, port=port, project=project, https=True if https else None)
    except (ValueError, OSError, RuntimeError) as exc:  # AnnotateError is a ValueError
        raise fail(str(exc)) from None


@app.command("cache")
def cache_cmd(
    clean: bool = typer.Option(
        False, "--clean", help="Remove the encodings no video gives any more and what stopped encodes left."
    ),
) -> None:
    """The web app's WebM cache: where it is, its size, what no video needs any more (--clean removes it)."""
    from robojudge.annotate.web import media_cache

    try:
        state = media_cache(clean=clean)
    except OSError as exc:
        raise fail(str(exc)) from None
    mb = 1024 * 1024
    console.print(f"WebM cache {state.folder}: {state.encodings} encoding(s), {state.size / mb:.1f} MB",
                  highlight=False, markup=False, soft_wrap=True)
    older = f"; {state.unnoted} of them made before the cache noted each video" if state.unnoted else ""
    console.print(f"{len(state.stale)} encoding(s) ({state.stale_size / mb:.1f} MB) no video gives any more: "
                  f"moved, deleted or changed since, or encoded by another robojudge version{older}",
                  highlight=False)
    console.print(f"{len(state.left_behind)} file(s) left by encodes that were stopped", highlight=False)
    if state.not_ours:
        console.print(f"{len(state.not_ours)} other file(s) not named as the cache names its own, e.g. "
                      f"{state.not_ours[0].name}: not the cache's, left as they are",
                      highlight=False, markup=False, soft_wrap=True)
    if not (state.stale or state.left_behind):
        return
    if state.removed:
        console.print("removed them", highlight=False)
    else:
        console.print("`robojudge annotate cache --clean` removes them. The whole folder may be deleted "
                      "while no `annotate serve` encodes into it: each video is then encoded again on its "
                      "first view.", highlight=False, markup=False)


# --- end serve (A2) --------------------------------------------------------------------------------
