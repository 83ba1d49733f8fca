"""What an annotator records: the RoboJudge label (PA, IA, six checklist items, evidence) and RoboWorM's
per-segment verdicts, with validation that names the offending field.

RoboJudge (paper 000) Sec. 3.2 defines the two axes and their three aspects each; App. A.1 the 1-5 axis
scores, the 0-2 checklist and the evidence note. RoboWorM (paper 001) Fig. D1 splits physics clips into
3-second segments judged Bad, Medium or Good. The checklist names are the manifest's
(:data:`robojudge.suite._schema.CHECKLIST_ITEMS`), so an export is a valid manifest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from robojudge.annotate._errors import InvalidLabel
from robojudge.suite import CHECKLIST_ITEMS

AXES = ("pa", "ia")
SCORE_RANGE = (1, 5)
CHECKLIST_RANGE = (0, 2)
VERDICTS = ("bad", "medium", "good")
SEGMENT_SECONDS = 3.0
"""RoboWorM's segment length for physics items (Fig. D1)."""
DISAGREEMENT = 2
"""Score gap (points) from which two people's PA or IA scores of an item disagree: a training round
shows such pairs to discuss, and a primary label whose cross-review is that far off awaits an
adjudication before it is final (see :mod:`._export`)."""

PA_CHECKLIST = CHECKLIST_ITEMS[:3]
IA_CHECKLIST = CHECKLIST_ITEMS[3:]
PA_FIELDS = ("pa", *(f"checklist.{c}" for c in PA_CHECKLIST))
"""The fields judged from the video alone; locked once the instruction has been shown."""
IA_FIELDS = ("ia", *(f"checklist.{c}" for c in IA_CHECKLIST))
"""The fields judged with the instruction and initial frame; refused before they are shown."""

MAX_TEXT = 10_000


@dataclass(frozen=True)
class AxisText:
    name: str
    text: str


@dataclass(frozen=True)
class ChecklistText:
    name: str
    axis: str
    text: str


@dataclass(frozen=True)
class Rubric:
    """The protocol text shown beside every task."""

    axes: dict[str, AxisText]
    checklist: tuple[ChecklistText, ...]
    score_range: tuple[int, int] = SCORE_RANGE
    checklist_range: tuple[int, int] = CHECKLIST_RANGE
    verdicts: tuple[str, ...] = VERDICTS
    checklist_levels: tuple[str, ...] = ("clear failure", "partial", "fine")


RUBRIC = Rubric(
    axes={
        "pa": AxisText(
            "Physical Adherence",
            "Is the video physically plausible and visually consistent? Judge it without the instruction: "
            "a video doing the wrong thing can still score 5 if its physics is right.",
        ),
        "ia": AxisText(
            "Instruction Alignment",
            "Given the instruction and the initial frame, does the video carry out the instruction and "
            "reach its end state?",
        ),
    },
    checklist=(
        ChecklistText(
            "agent_consistency", "pa", "The gripper or hand keeps its shape and stays stable over time."
        ),
        ChecklistText(
            "scene_consistency",
            "pa",
            "Background and objects persist: no melting, vanishing, duplicating or jumping.",
        ),
        ChecklistText(
            "interaction_realism", "pa", "Contact, grasping, object motion and force response look plausible."
        ),
        ChecklistText(
            "agent_match", "ia", "The agent or end-effector named in the instruction does the action."
        ),
        ChecklistText(
            "object_correctness", "ia", "The action targets the right object, with the attributes asked for."
        ),
        ChecklistText(
            "goal_completion", "ia", "The target end state is actually reached, not just approached."
        ),
    ),
)


@dataclass(frozen=True)
class LabelValues:
    """One annotator's values for one item; every field may be unset while drafting.

    ``segments`` holds one verdict (``bad``/``medium``/``good``) per segment of the item, ``None`` where
    not yet given. ``note`` is a cross-review or adjudication comment.
    """

    pa: int | None = None
    ia: int | None = None
    checklist: Mapping[str, int | None] = field(default_factory=dict)
    evidence: str | None = None
    segments: tuple[str | None, ...] = ()
    note: str | None = None

    def __post_init__(self) -> None:
        _check_score("pa", self.pa, SCORE_RANGE)
        _check_score("ia", self.ia, SCORE_RANGE)
        for name, value in self.checklist.items():
            if name not in CHECKLIST_ITEMS:
                raise InvalidLabel(
                    f"checklist.{name}", f"unknown checklist item (known: {', '.join(CHECKLIST_ITEMS)})"
                )
            _check_score(f"checklist.{name}", value, CHECKLIST_RANGE)
        # Normalised: every checklist name present, in protocol order, so equal labels compare equal.
        object.__setattr__(self, "checklist", {c: self.checklist.get(c) for c in CHECKLIST_ITEMS})
        for i, verdict in enumerate(self.segments):
            if verdict is not None and verdict not in VERDICTS:
                raise InvalidLabel(
                    f"segments.{i}", f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}"
                )
        object.__setattr__(self, "segments", tuple(self.segments))
        for name in ("evidence", "note"):
            text = getattr(self, name)
            if text is not None and len(text) > MAX_TEXT:
                raise InvalidLabel(name, f"longer than {MAX_TEXT} characters")

    # -- conversion --------------------------------------------------------------------------------

    @classmethod
    def from_form(cls, data: Mapping[str, Any]) -> LabelValues:
        """Read form fields (``pa``, ``checklist.<name>``, ``segments.<i>``...) or :meth:`to_json`'s shape.

        Strings are accepted for numbers (``"4"``); an empty string means unset.

        Raises:
            InvalidLabel: An unknown field, a value that is not a whole number, or one out of range.
        """
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if key in ("checklist", "segments") and not isinstance(value, str):
                if key == "checklist":
                    if not isinstance(value, Mapping):
                        raise InvalidLabel("checklist", "must be an object of checklist items")
                    flat.update({f"checklist.{k}": v for k, v in value.items()})
                else:
                    if not isinstance(value, list | tuple):
                        raise InvalidLabel("segments", "must be a list of verdicts")
                    flat.update({f"segments.{i}": v for i, v in enumerate(value)})
            else:
                flat[key] = value
        checklist: dict[str, int | None] = {}
        verdicts: dict[int, str | None] = {}
        kw: dict[str, Any] = {}
        for key, value in flat.items():
            if key in ("pa", "ia"):
                kw[key] = _as_int(key, value)
            elif key in ("evidence", "note"):
                kw[key] = _as_text(key, value)
            elif key.startswith("checklist."):
                checklist[key.split(".", 1)[1]] = _as_int(key, value)
            elif key.startswith("segments."):
                index = key.split(".", 1)[1]
                if not _INDEX.fullmatch(index):
                    raise InvalidLabel(key, "segment index must be a whole number")
                text = _as_text(key, value)
                verdicts[int(index)] = text.lower() if text else None
            else:
                raise InvalidLabel(key, "unknown field")
        if verdicts and max(verdicts) > 10_000:
            raise InvalidLabel(f"segments.{max(verdicts)}", "too many segments")
        segments = tuple(verdicts.get(i) for i in range(max(verdicts) + 1)) if verdicts else ()
        return cls(checklist=checklist, segments=segments, **kw)

    def to_json(self) -> dict[str, Any]:
        return {
            "pa": self.pa,
            "ia": self.ia,
            "checklist": dict(self.checklist),
            "evidence": self.evidence,
            "segments": list(self.segments),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LabelValues:
        return cls.from_form({k: v for k, v in data.items() if v is not None and v != [] and v != {}})

    def flat(self) -> dict[str, Any]:
        """Every field under its form name (``pa``, ``checklist.<name>``, ``segments.<i>``, ``note``...)."""
        out: dict[str, Any] = {"pa": self.pa, "ia": self.ia}
        out.update({f"checklist.{k}": v for k, v in self.checklist.items()})
        out["evidence"] = self.evidence
        out.update({f"segments.{i}": v for i, v in enumerate(self.segments)})
        out["note"] = self.note
        return out

    def missing(self, n_segments: int) -> list[str]:
        """The fields a submitted label still lacks (evidence and note are optional)."""
        flat = self.flat()
        needed = ["pa", "ia", *(f"checklist.{c}" for c in CHECKLIST_ITEMS)]
        needed += [f"segments.{i}" for i in range(n_segments)]
        return [name for name in needed if flat.get(name) is None]


def changed_fields(old: LabelValues | None, new: LabelValues) -> tuple[str, ...]:
    """Form names of the fields that differ between two versions (every set one when ``old`` is None)."""
    before = old.flat() if old is not None else {}
    after = new.flat()
    names = list(after) + [k for k in before if k not in after]
    return tuple(k for k in names if before.get(k) != after.get(k))


def draft_agreement(draft: LabelValues, values: LabelValues) -> dict[str, bool]:
    """Per field the model draft proposed: whether the annotator's value still equals it."""
    proposed = {k: v for k, v in draft.flat().items() if v is not None}
    flat = values.flat()
    return {k: flat.get(k) == v for k, v in proposed.items()}


def _check_score(name: str, value: int | None, bounds: tuple[int, int]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidLabel(name, f"must be a whole number, got {value!r}")
    lo, hi = bounds
    if not lo <= value <= hi:
        raise InvalidLabel(name, f"{value} is outside {lo}-{hi}")


_WHOLE = re.compile(r"-?[0-9]{1,9}")
_INDEX = re.compile(r"[0-9]{1,5}")


def _as_int(name: str, value: Any) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise InvalidLabel(name, f"must be a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise InvalidLabel(name, f"must be a whole number, got {value!r}")
    # ASCII digits only, a few of them: str.isdigit() also takes '²' and '٣', and int() then raised a
    # bare ValueError ('²', '--3', 5000 digits), a 500 in the web app
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value.strip())
    shown = value if not isinstance(value, str) or len(value) <= 40 else value[:40] + "..."
    raise InvalidLabel(name, f"must be a whole number, got {shown!r}")


def _as_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidLabel(name, f"must be text, got {type(value).__name__}")
    return value if value.strip() else None


LABEL_FIELDS = tuple(f.name for f in fields(LabelValues))
