"""Templates (Jinja2, autoescaped) and the plain values a task page is rendered from.

Every value reaches the page through Jinja2 with autoescape on, so an instruction or evidence note
holding ``<script>`` shows as text; nothing is marked ``|safe``. The view model is built from the
service's ``TaskPage`` and holds only what the annotator may see: opaque ids, never a generator,
item id of the manifest, file name or path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from robojudge.suite import CHECKLIST_ITEMS

if TYPE_CHECKING:
    import jinja2

    from robojudge.annotate import LabelValues, LabelVersion, TaskPage

__all__ = ["TEMPLATES", "TaskView", "environment", "label_rows", "path_segment", "task_view"]

TEMPLATES = Path(__file__).parent / "templates"
PA_CHECKS = CHECKLIST_ITEMS[:3]
IA_CHECKS = CHECKLIST_ITEMS[3:]


@cache
def environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["path_segment"] = path_segment
    return env


def path_segment(value: object) -> str:
    """``value`` percent-encoded as one path segment, ``/`` included.

    Jinja's ``urlencode`` leaves ``/`` as it is, and a browser drops ``.`` and ``..`` segments from a path
    before sending it, so a round named ``spring/../autumn`` linked to the round ``autumn``. The server
    decodes ``%2F`` before routing, and ``/rounds/{name:path}`` takes it back whole.
    """
    return quote(str(value), safe="")


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


@dataclass(frozen=True)
class CheckRow:
    name: str
    text: str
    value: int | None
    locked: bool


@dataclass(frozen=True)
class TaskView:
    """What the labelling page shows and which fields it lets the actor edit."""

    page: TaskPage
    editable_axes: tuple[str, ...]
    locked_axes: tuple[str, ...]
    checks: tuple[CheckRow, ...]
    scores: Mapping[str, int | None]
    evidence: str
    note: str
    segments: tuple[tuple[int, float, float, str | None], ...]
    model_assisted: bool
    others: tuple[tuple[str, list[tuple[str, str]]], ...] = field(default=())


def _axes(kind: str, stage: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(editable, locked) axes: a primary label rates PA blind first, then IA with PA frozen."""
    if kind in ("review", "adjudicate"):
        return ("pa", "ia"), ()
    return (("pa",), ()) if stage == "pa" else (("ia",), ("pa",))


def label_rows(values: LabelValues) -> list[tuple[str, str]]:
    """An existing label as (field, value) rows for display; empty fields are skipped."""
    rows: list[tuple[str, str]] = []
    for name in ("pa", "ia"):
        v = getattr(values, name)
        if v is not None:
            rows.append((name.upper(), str(v)))
    for name in CHECKLIST_ITEMS:
        v = values.checklist.get(name)
        if v is not None:
            rows.append((name.replace("_", " "), str(v)))
    for i, verdict in enumerate(values.segments):
        if verdict is not None:
            rows.append((f"segment {i + 1}", verdict))
    if values.evidence:
        rows.append(("evidence", values.evidence))
    if values.note:
        rows.append(("note", values.note))
    return rows


def _other_title(kind: str, index: int, version: LabelVersion) -> str:
    role = "first annotation" if index == 0 else "cross-review"
    return f"{role} (by {version.author}, version {version.version})"


def merged_with_draft(saved: LabelValues | None, draft: LabelValues | None) -> LabelValues | None:
    """What the form shows: the annotator's saved values, and the model's proposal where they set none.

    The PA stage's form has no IA fields, so a draft saved there holds no IA score; without the merge
    the model's IA proposal would vanish once PA is saved. Text fields are the annotator's alone.
    """
    if saved is None or draft is None:
        return saved if saved is not None else draft
    checklist = {k: saved.checklist.get(k) if saved.checklist.get(k) is not None else draft.checklist.get(k)
                 for k in CHECKLIST_ITEMS}
    return replace(saved, pa=saved.pa if saved.pa is not None else draft.pa,
                   ia=saved.ia if saved.ia is not None else draft.ia, checklist=checklist)


def task_view(page: TaskPage, checklist_text: Mapping[str, str]) -> TaskView:
    """The page's fields, filled from the actor's latest version, else from a model draft."""
    editable, locked = _axes(page.kind, page.stage)
    prefilled = page.model_draft is not None and not page.submitted
    values = merged_with_draft(page.current.values if page.current is not None else None, page.model_draft)
    shown_axes = set(editable) | set(locked)
    checks = tuple(
        CheckRow(name, checklist_text.get(name, name.replace("_", " ")),
                 None if values is None else values.checklist.get(name), axis in locked)
        for axis, names in (("pa", PA_CHECKS), ("ia", IA_CHECKS)) if axis in shown_axes
        for name in names
    )
    scores = {axis: (None if values is None else getattr(values, axis)) for axis in (*locked, *editable)}
    verdicts = tuple(values.segments) if values is not None else ()
    segments = tuple(
        (s.index, s.start_s, s.end_s, verdicts[s.index] if s.index < len(verdicts) else None)
        for s in page.segments
    )
    others = tuple((_other_title(page.kind, i, v), label_rows(v.values)) for i, v in enumerate(page.others))
    return TaskView(
        page=page,
        editable_axes=editable,
        locked_axes=locked,
        checks=checks,
        scores=scores,
        evidence=(values.evidence or "") if values is not None else "",
        note=(values.note or "") if values is not None else "",
        segments=segments,
        model_assisted=prefilled,
        others=others,
    )
