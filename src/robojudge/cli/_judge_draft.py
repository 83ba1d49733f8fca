"""``robojudge judge draft``, ``judge texts`` and ``judge rubrics``: judges' rows back out, rubrics listed.

``draft`` averages several judges' PA/IA into draft labels with their reasoning, the starting point
of the annotation review (RoboJudge App. A.2). ``texts`` exports what a text rubric (``caption``,
``key_steps``) wrote, as the captions file the ``sa_bleu`` metric reads. ``rubrics`` lists the
built-in rubrics. They are sub-commands of the ``robojudge judge`` group (:mod:`robojudge.cli._judge_app`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from robojudge.cli._common import console, fail, write_error
from robojudge.judges import RUBRICS, judge_metric_id
from robojudge.run._judge import draft_from_store, judge_texts, write_drafts, write_judge_texts
from robojudge.store import ResultStore, StoreError


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def draft(
    judges: str = typer.Option(..., "--names", "--judges", "-j",
                               help="Comma-separated names of stored judges to average (not a judges file)."),
    db: str = typer.Option(..., "--db",
                           help="Result store URL, SQLite path or run folder the judges wrote to."),
    out: Path = typer.Option(Path("drafts.jsonl"), "--out", "-o", help="Where to write the drafts (JSONL)."),
    rubric: str = typer.Option("pa,ia", "--rubric", "-r", help="Comma-separated rubrics to draft."),
    min_judges: int = typer.Option(1, "--min-judges", min=1, help="Fewest judge scores for a label."),
) -> None:
    """Average several judges' scores into draft labels with their reasoning (RoboJudge App. A.2)."""
    names, rubrics = _names(judges), _names(rubric)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise fail(f"--names: {', '.join(twice)} given twice (each judge is averaged once)")
    if min_judges > len(names):
        raise fail(f"--min-judges {min_judges}: more than the {len(names)} judge(s) given, so no label could "
                   "be drafted")
    try:
        with ResultStore(db, read_only=True) as store:
            drafts = draft_from_store(store, names, rubrics, min_judges=min_judges)
    except (StoreError, ValueError) as exc:
        raise fail(str(exc)) from None
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
    judge: str = typer.Option(..., "--judge", "-j", help="The judge that ran the text rubric."),
    db: str = typer.Option(..., "--db", help="Result store URL, SQLite path or run folder."),
    rubric: str = typer.Option("caption", "--rubric", "-r", help="The text rubric (caption, key_steps)."),
    out: Path = typer.Option(Path("captions.jsonl"), "--out", "-o", help="Where to write (JSONL)."),
    field: str = typer.Option("caption", "--field", help="JSON key of the text in each line."),
) -> None:
    """Export a text rubric's outputs as JSON Lines ``{"item_id": ..., "caption": ...}``."""
    if not field.strip() or field == "item_id":  # "item_id" overwrote each line's id with its text
        raise fail(f"--field {field!r}: name a key other than item_id for the text")
    metric = judge_metric_id(judge, rubric)
    try:
        with ResultStore(db, read_only=True) as store:
            found = judge_texts(store, metric)
            shown = store.url  # (--db as typed may hold a password)
    except StoreError as exc:
        raise fail(str(exc)) from None
    if not found:
        raise fail(f"no stored texts for {metric} in {shown}")
    try:
        path = write_judge_texts(found, out, field)
    except OSError as exc:  # a full disk: a cut file would fail sa_bleu on every item after the cut
        raise fail(write_error(out, exc, "the file already there, if any, is as it was")) from None
    console.print(f"{len(found)} texts from {metric} -> {path}", highlight=False)


def rubrics() -> None:
    """List the built-in rubrics: id, version, answer kind, range, taxonomy metric, source."""
    for name in RUBRICS.names():
        r = RUBRICS.get(name)
        hi = "" if r.kind == "text" else f"{r.score_min:g}-{r.score_max:g}"
        tax = f" -> {r.taxonomy}" if r.taxonomy else ""
        need = " (needs the instruction)" if r.needs_instruction else ""
        console.print(f"{r.id} v{r.version}  {r.kind} {hi}{tax}{need}  {r.title}", highlight=False)
