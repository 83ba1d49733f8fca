"""``robojudge judge draft``, ``judge texts`` and ``judge rubrics``: judges' rows back out, rubrics listed.

``draft`` averages several judges' PA/IA into draft labels with their reasoning, the starting point
of the annotation review (RoboJudge App. A.2). ``texts`` exports what a text rubric (``caption``,
``key_steps``) wrote, as the captions file the ``sa_bleu`` metric reads. ``rubrics`` lists the
built-in rubrics. They are sub-commands of the ``robojudge judge`` group (:mod:`robojudge.cli._judge_app`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import typer
from rich.markup import escape

from robojudge._json import json_ready
from robojudge.cli._common import console, err_console, fail, write_error
from robojudge.judges import RUBRICS, judge_metric_id
from robojudge.store import ResultRow, ResultStore, StoreError

_FORCE = typer.Option(False, "--force",
                      help="Replace an existing --out that is not a file this command wrote.")
_SUITE = typer.Option(
    None, "--suite",
    help="The manifest the judged items come from: stored rows whose inputs changed since are left out "
         "\\[default: the manifests noted in the store]. Without --db, its store is the default.")


def _names(value: str) -> list[str]:
    """Comma-separated names, the commas inside a label's ``[...]`` (``mk [rubrics pa v2, ia v2]``) kept."""
    out, part, depth = [], "", 0
    for ch in value:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth <= 0:
            out.append(part)
            part, depth = "", 0
        else:
            part += ch
    return [v.strip() for v in [*out, part] if v.strip()]


def _store_of(db: str | None, suite: Path | None) -> str:
    """``--db``, else the store of ``--suite`` (as ``robojudge score`` finds it)."""
    from robojudge.run import suite_store_url

    if db is not None:
        return db
    if suite is None:
        raise fail("give --db (the store the judges wrote to) or --suite (the manifest judged)")
    try:
        return suite_store_url(suite)
    except StoreError as exc:
        raise fail(str(exc)) from None


def _judge_rows(store: ResultStore, wanted: Sequence[str], rubrics: Sequence[str]) -> list[ResultRow]:
    """The stored rows of ``rubrics`` of every judge named (or labelled) in ``wanted``."""
    metrics = sorted({judge_metric_id(name, r) for w in wanted for name in {w, w.partition(" [")[0]}
                      for r in rubrics})
    return [row for m in metrics for row in store.rows(metric=m)]


def _without_stale(store: ResultStore, rows: list[ResultRow], suite: Path | None) -> list[ResultRow]:
    """``rows`` less those whose inputs changed since they were judged, said on stderr
    (:func:`robojudge.run.without_stale_rows`, which the Python functions share)."""
    from robojudge.report import stale_note
    from robojudge.run import without_stale_rows
    from robojudge.suite import ManifestError

    try:
        kept, stale = without_stale_rows(store, rows, suite)
    except (ManifestError, OSError) as exc:
        raise fail(str(exc)) from None
    note = stale_note(stale)
    if note:
        err_console.print(f"[yellow]{escape(note)}[/]", markup=True, highlight=False)
    return kept


def _refuse_other_file(out: Path, ours: Callable[[dict[str, object]], bool], what: str, force: bool,
                       suite: Path | None) -> None:
    """Refuse to replace ``suite`` (ever) or an existing ``out`` that is not ``what`` (a file of the JSON
    lines ``ours`` accepts), unless ``force``: a default ``-o`` in the current folder could be anything."""
    if not out.exists():
        return
    if suite is not None and out.resolve() == suite.resolve():
        raise fail(f"--out {out} is the manifest given as --suite; write the {what} elsewhere")
    if force or out.is_dir():
        return
    try:
        with out.open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), None)
        record = json.loads(first) if first is not None else {}
        mine = first is None or (isinstance(record, dict) and ours(record))
    except (OSError, UnicodeDecodeError, ValueError):
        mine = False
    if not mine:
        raise fail(f"{out} exists and is not a {what} file; pass --force to replace it, or give another "
                   "--out")


def _a_draft(record: dict[str, object]) -> bool:
    return "item_id" in record and any(isinstance(v, dict) and "judges" in v for v in record.values())


def draft(
    judges: str = typer.Option(..., "--names", "--judges", "-j",
                               help="Comma-separated names of stored judges to average (not a judges file); "
                                    "a judge stored under several configurations by its label, as "
                                    "`leaderboard judges` prints it."),
    db: str | None = typer.Option(None, "--db",
                                  help="Result store URL, SQLite path or run folder the judges wrote to."),
    out: Path = typer.Option(Path("drafts.jsonl"), "--out", "-o", help="Where to write the drafts (JSONL)."),
    rubric: str = typer.Option("pa,ia", "--rubric", "-r", help="Comma-separated rubrics to draft."),
    min_judges: int = typer.Option(1, "--min-judges", min=1, help="Fewest judge scores for a label."),
    suite: Path | None = _SUITE,
    force: bool = _FORCE,
) -> None:
    """Average several judges' scores into draft labels with their reasoning (RoboJudge App. A.2)."""
    from robojudge.report._series import pick_judge_rows
    from robojudge.run import draft_from_rows, write_drafts

    names, rubrics = _names(judges), _names(rubric)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise fail(f"--names: {', '.join(twice)} given twice (each judge is averaged once)")
    if min_judges > len(names):
        raise fail(f"--min-judges {min_judges}: more than the {len(names)} judge(s) given, so no label could "
                   "be drafted")
    _refuse_other_file(out, _a_draft, "drafts", force, suite)
    url = _store_of(db, suite)
    try:
        with ResultStore(url, read_only=True) as store:
            rows = _without_stale(store, _judge_rows(store, names, rubrics), suite)
            shown = store.url
        notes: list[str] = []
        chosen = {name: pick_judge_rows(rows, name, rubrics, notes)[1] for name in names}
        drafts = draft_from_rows(chosen, rubrics, min_judges=min_judges, where=shown)
    except (StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
    for line in notes:
        err_console.print(f"note: {line}", highlight=False, markup=False)
    try:
        path = write_drafts(drafts, out)
    except OSError as exc:  # a full disk: the file is replaced only once written whole
        raise fail(write_error(out, exc, "the file already there, if any, is as it was")) from None
    labelled = sum(1 for per in drafts.values() for d in per.values() if d.label is not None)
    total = sum(len(per) for per in drafts.values())
    console.print(
        f"{len(drafts)} items, {labelled}/{total} draft labels from {len(names)} judges -> {path}",
        highlight=False,
    )


def texts(
    judge: str = typer.Option(..., "--judge", "-j",
                              help="The judge that ran the text rubric; one stored under several "
                                   "configurations by its label, as the error lists them."),
    db: str | None = typer.Option(None, "--db", help="Result store URL, SQLite path or run folder."),
    rubric: str = typer.Option("caption", "--rubric", "-r", help="The text rubric (caption, key_steps)."),
    out: Path = typer.Option(Path("captions.jsonl"), "--out", "-o", help="Where to write (JSONL)."),
    field: str = typer.Option("caption", "--field", help="JSON key of the text in each line."),
    suite: Path | None = _SUITE,
    force: bool = _FORCE,
) -> None:
    """Export a text rubric's outputs as JSON Lines ``{"item_id": ..., "caption": ...}``."""
    from robojudge.report._series import pick_judge_rows
    from robojudge.run import texts_from_rows, write_judge_texts

    if not field.strip() or field == "item_id":  # "item_id" overwrote each line's id with its text
        raise fail(f"--field {field!r}: name a key other than item_id for the text")
    _refuse_other_file(out, lambda r: set(r) == {"item_id", field}, "texts", force, suite)
    url = _store_of(db, suite)
    try:
        with ResultStore(url, read_only=True) as store:
            rows = _without_stale(store, _judge_rows(store, [judge], [rubric]), suite)
            shown = store.url  # (--db as typed may hold a password)
        name, picked = pick_judge_rows(rows, judge, [rubric])
    except (StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
    metric = judge_metric_id(name, rubric)
    found = texts_from_rows(picked)
    if not found:
        raise fail(f"no stored texts for {metric} in {shown}")
    try:
        path = write_judge_texts(found, out, field)
    except OSError as exc:  # a full disk: a cut file would fail sa_bleu on every item after the cut
        raise fail(write_error(out, exc, "the file already there, if any, is as it was")) from None
    console.print(f"{len(found)} texts from {metric} -> {path}", highlight=False)


def rubrics(
    as_json: bool = typer.Option(False, "--json", help="Print JSON: one object per rubric, the table's "
                                 "fields and the rubric's source."),
) -> None:
    """List the built-in rubrics: id, version, answer kind, range, taxonomy metric, source."""
    if as_json:
        listed = []
        for name in RUBRICS.names():
            r = RUBRICS.get(name)
            scored = r.kind != "text"
            listed.append({"id": r.id, "version": r.version, "kind": r.kind, "title": r.title,
                           "score_min": r.score_min if scored else None,
                           "score_max": r.score_max if scored else None, "taxonomy": r.taxonomy,
                           "needs_instruction": r.needs_instruction, "source": r.source,
                           "digest": r.digest})
        typer.echo(json.dumps(json_ready(listed), indent=2))
        return
    for name in RUBRICS.names():
        r = RUBRICS.get(name)
        hi = "" if r.kind == "text" else f"{r.score_min:g}-{r.score_max:g}"
        tax = f" -> {r.taxonomy}" if r.taxonomy else ""
        need = " (needs the instruction)" if r.needs_instruction else ""
        console.print(f"{r.id} v{r.version}  {r.kind} {hi}{tax}{need}  {r.title}", highlight=False)
