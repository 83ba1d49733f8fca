"""Timing files: what each generator's rollouts cost, for the acceleration audit's speedup.

A timing file is CSV (a header row) or JSON (a list of objects, or ``{"timings": [...]}``) with the
fields ``generator`` (required), ``item`` (an item id; empty or ``*`` for a row covering the
generator's whole run), ``seconds`` (wall-clock generation time), ``steps`` (denoising steps or
network evaluations) and, on whole-run rows only, ``rollouts`` (how many rollouts the row covers;
default: the generator's items in the suite). Per rollout, a generator costs the mean over its item
rows when it has any, else its whole-run row divided by its rollouts. ``seconds`` and ``steps`` are
above 0 where given (a rollout costs something); a CSV row has no more cells than its header, which
may follow a UTF-8 byte order mark.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robojudge._csv import SafeCsvWriter
from robojudge.meta import GenerationCost
from robojudge.suite import Item

FIELDS = ("generator", "item", "seconds", "steps", "rollouts")


class TimingError(ValueError):
    """A timing file that cannot be read; the message names the file, line and field."""


@dataclass(frozen=True)
class TimingRow:
    """One row of a timing file (``line``: 1-based line of a CSV, index + 1 of a JSON entry)."""

    generator: str
    item: str | None
    seconds: float | None
    steps: float | None
    rollouts: int | None
    line: int


def _number(raw: Any, where: str, name: str) -> float | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise TimingError(f"{where}: field {name!r} must be a number, got {raw!r}") from None
    if isinstance(raw, bool) or not math.isfinite(value) or value < 0:
        raise TimingError(f"{where}: field {name!r} must be a non-negative number, got {raw!r}")
    if value == 0 and name in ("seconds", "steps"):
        # A rollout costs something: 0 leaves the speedup undefined (a division by zero) without a word.
        raise TimingError(f"{where}: field {name!r} must be above 0 (a rollout's cost), got {raw!r}; leave "
                          "it empty when it is not known")
    return value


def _row(rec: Mapping[str, Any], where: str, line: int) -> TimingRow:
    unknown = sorted(set(rec) - set(FIELDS))
    if unknown:
        raise TimingError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(FIELDS)})")
    gen = str(rec.get("generator") or "").strip()
    if not gen:
        raise TimingError(f"{where}: field 'generator' is missing or empty")
    item = str(rec.get("item") or "").strip()
    seconds, steps = _number(rec.get("seconds"), where, "seconds"), _number(rec.get("steps"), where, "steps")
    if seconds is None and steps is None:
        raise TimingError(f"{where}: give 'seconds' or 'steps'")
    rollouts = _number(rec.get("rollouts"), where, "rollouts")
    if rollouts is not None and (item not in ("", "*") or rollouts < 1 or rollouts != int(rollouts)):
        raise TimingError(f"{where}: field 'rollouts' must be a whole number >= 1 on a whole-run row "
                          "(item empty or '*')")
    return TimingRow(gen, None if item in ("", "*") else item, seconds, steps,
                     None if rollouts is None else int(rollouts), line)


def read_timing(path: str | Path) -> list[TimingRow]:
    """The rows of a CSV or JSON timing file.

    Raises:
        TimingError: Unreadable file, bad JSON, or a bad row (naming file, line and field).
    """
    p = Path(path)
    try:
        # A byte order mark (Excel's "CSV UTF-8") is not data; a quoted "\r" is, so line ends are kept.
        with p.open(encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except OSError as exc:
        raise TimingError(f"{p}: cannot read the timing file ({exc.strerror or exc})") from exc
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TimingError(f"{p}, line {exc.lineno}: not JSON ({exc.msg})") from exc
        entries = data.get("timings") if isinstance(data, dict) else data
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise TimingError(f"{p}: expected a list of objects (or {{\"timings\": [...]}})")
        return [_row(e, f"{p}, entry {i + 1}", i + 1) for i, e in enumerate(entries)]
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames or "generator" not in reader.fieldnames:
        raise TimingError(f"{p}, line 1: the header must name 'generator' and 'seconds' or 'steps'")
    header = list(reader.fieldnames)
    rows = []
    for rec in reader:
        line = reader.line_num
        extra = rec.pop(None, None)  # csv puts the cells beyond the header's under None
        if extra:
            raise TimingError(f"{p}, line {line}: {len(header) + len(extra)} cells, the header names "
                              f"{len(header)} ({', '.join(header)}); extra: {', '.join(map(repr, extra))} "
                              "(quote a value that holds a comma)")
        # a cell robojudge's writers escaped for spreadsheets (an item id '-take1) reads back as it was
        rows.append(_row({k: SafeCsvWriter.unescape(v) for k, v in rec.items()}, f"{p}, line {line}", line))
    return rows


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def check_rows(rows: Sequence[TimingRow], known: Sequence[str], source: str = "timing file") -> None:
    """Every row names a generator of the suite (``known``), and no (generator, item) pair repeats.

    Raises:
        TimingError: A generator that is not in ``known`` (naming the line and the known generators), or
            two rows for one item of a generator (naming both lines).
    """
    names = sorted(set(known))
    for r in rows:
        if r.generator not in names:
            close = difflib.get_close_matches(r.generator, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TimingError(f"{source}, line {r.line}: generator {r.generator!r} is not in the suite "
                              f"(known: {', '.join(names) or 'none'}){hint}")
    seen: dict[tuple[str, str], int] = {}
    for r in rows:
        if r.item is None:
            continue
        first = seen.setdefault((r.generator, r.item), r.line)
        if first != r.line:
            raise TimingError(f"{source}, lines {first} and {r.line}: two rows for item {r.item!r} of "
                              f"generator {r.generator!r}; keep one")


def timing_costs(rows: Sequence[TimingRow], items: Sequence[Item], generators: Sequence[str],
                 source: str = "timing file", *, known: Sequence[str] | None = None
                 ) -> dict[str, GenerationCost]:
    """Per generator of ``generators`` with timing rows, its cost per rollout (``source``: the file, for
    messages and the cost's provenance).

    ``known`` is every generator of the suite (default: ``generators`` and those of ``items``); a row
    may cover one the audit leaves out, but not one the suite does not have.

    Raises:
        TimingError: A row naming a generator that is not in the suite, two rows for one item, an item
            row naming an item that is not in the suite or belongs to another generator, or two
            whole-run rows for one generator.
    """
    if known is None:
        known = [*generators, *(it.generator for it in items if it.generator)]
    check_rows(rows, [*known, *generators], source)
    gen_of = {it.item_id: it.generator for it in items}
    count = {g: sum(1 for it in items if it.generator == g) for g in generators}
    out = {}
    for g in generators:
        mine = [r for r in rows if r.generator == g]
        per_item = [r for r in mine if r.item is not None]
        for r in per_item:
            if gen_of.get(r.item or "") != g:
                raise TimingError(f"{source}, line {r.line}: item {r.item!r} is not an item of generator "
                                  f"{g!r} in the suite")
        totals = [r for r in mine if r.item is None]
        if len(totals) > 1:
            raise TimingError(f"{source}, lines {totals[0].line} and {totals[1].line}: two whole-run rows "
                              f"for {g!r}")
        if per_item:
            out[g] = GenerationCost(_mean([r.seconds for r in per_item if r.seconds is not None]),
                                    _mean([r.steps for r in per_item if r.steps is not None]), source)
        elif totals:
            t = totals[0]
            n = t.rollouts or count[g]
            out[g] = GenerationCost(None if t.seconds is None else t.seconds / n,
                                    None if t.steps is None else t.steps / n, source)
    return out
