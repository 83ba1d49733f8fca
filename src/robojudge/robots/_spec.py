"""The robot spec: which model file, which bodies are keypoints, which keypoint pairs are rigid links.

A spec is a TOML file (``tomllib`` reads it, no extra dependency); its ``model`` path is taken relative
to the spec file's folder. The fields are checked twice: on their own when the file is parsed (types,
duplicates, links naming keypoints, ``lo <= hi``), then against the model once it is loaded (keypoint
bodies and joints must exist there). Every error names the spec file and the field.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

MODEL_SUFFIXES = {".xml": "mjcf", ".mjcf": "mjcf", ".urdf": "urdf"}
"""Model file suffix -> format."""


def _hint(name: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a misspelt one, else nothing."""
    guess = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean {guess[0]!r}?)" if guess else ""


class RobotSpecError(ValueError):
    """A robot spec that cannot be used; the message names the file, the field and the bad value."""


class RobotSpec(BaseModel):
    """A robot's kinematic description for keypoint reading.

    Attributes:
        name: What to call the robot in messages and reports.
        model: The MJCF (``.xml``) or URDF (``.urdf``) file, absolute once loaded.
        keypoints: Bodies (MJCF) or links (URDF) whose frame origins are the keypoints, in order.
        links: Keypoint pairs joined rigidly: their distance does not change with the joints.
        joints: The joints whose positions joint-state arrays hold, in column order (1-DoF joints).
        limits: Joint position limits ``(lo, hi)`` (radians or metres) by joint name.
        fingers: Finger pairs for KIVA's finger check, each ``(finger, finger, hand)``: two finger
            keypoints that must stay on their own sides of the axis from the hand keypoint.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    model: Path
    keypoints: list[str] = Field(min_length=1)
    links: list[tuple[str, str]] = Field(default_factory=list)
    joints: list[str] = Field(default_factory=list)
    limits: dict[str, tuple[float, float]] = Field(default_factory=dict)
    fingers: list[tuple[str, str, str]] = Field(default_factory=list)

    @property
    def format(self) -> str:
        """``"mjcf"`` or ``"urdf"``, from the model file's suffix."""
        return MODEL_SUFFIXES[self.model.suffix.lower()]

    @property
    def link_index(self) -> list[tuple[int, int]]:
        """The links as pairs of keypoint indices."""
        pos = {k: i for i, k in enumerate(self.keypoints)}
        return [(pos[a], pos[b]) for a, b in self.links]

    @field_validator("model")
    @classmethod
    def _known_suffix(cls, v: Path) -> Path:
        if v.suffix.lower() not in MODEL_SUFFIXES:
            known = ", ".join(sorted(MODEL_SUFFIXES))
            raise ValueError(f"model {str(v)!r}: unknown model format {v.suffix!r}; expected one of {known}")
        return v

    @field_validator("keypoints", "joints")
    @classmethod
    def _no_duplicates(cls, v: list[str]) -> list[str]:
        seen: set[str] = set()
        for name in v:
            if name in seen:
                raise ValueError(f"{name!r} is listed twice")
            seen.add(name)
        return v

    @model_validator(mode="after")
    def _consistent(self) -> RobotSpec:
        kp = set(self.keypoints)
        joined: dict[frozenset[str], int] = {}
        for i, (a, b) in enumerate(self.links):
            for end in (a, b):
                if end not in kp:
                    raise ValueError(f"links[{i}]: {end!r} is not one of the keypoints {self.keypoints}"
                                     f"{_hint(end, self.keypoints)}")
            if a == b:
                raise ValueError(f"links[{i}]: joins {a!r} to itself")
            pair = frozenset((a, b))
            if pair in joined:
                raise ValueError(f"links[{i}]: joins {a!r} and {b!r}, as links[{joined[pair]}] does (a link "
                                 "is listed once, in either order)")
            joined[pair] = i
        for i, triple in enumerate(self.fingers):
            for end in triple:
                if end not in kp:
                    raise ValueError(f"fingers[{i}]: {end!r} is not one of the keypoints {self.keypoints}")
            if len(set(triple)) < 3:
                raise ValueError(f"fingers[{i}]: names a keypoint twice ({list(triple)})")
        for name, (lo, hi) in self.limits.items():
            for which, value in (("lower", lo), ("upper", hi)):
                if not math.isfinite(value):
                    raise ValueError(f"limits.{name}: {which} limit {value} is not a finite number")
            if not lo <= hi:
                raise ValueError(f"limits.{name}: lower limit {lo} is above upper limit {hi}")
            if self.joints and name not in self.joints:
                raise ValueError(f"limits.{name}: {name!r} is not one of the joints {self.joints}"
                                 f"{_hint(name, self.joints)}")
        return self


def _field_of(err: Any) -> str:
    loc = [str(p) for p in err["loc"]]
    msg = str(err.get("ctx", {}).get("error", err["msg"]))
    # Model-level checks put the field first in their message ("links[2]: ..."), ended by ": " (a joint
    # name may hold a colon: limits.robot0:elbow_flex_joint).
    head = msg.split(": ", 1)[0]
    if not loc and (head.split("[", 1)[0].split(".", 1)[0] in RobotSpec.model_fields):
        return head
    out = ""
    for p in loc:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "(spec)"


_PAIRS = {"limits": "two numbers [lo, hi]", "links": "a pair of keypoint names",
          "fingers": "three keypoint names [finger, finger, hand]"}


def _pair_of(loc: tuple[Any, ...]) -> str | None:
    """``limits.<joint>``, ``links[i]`` or ``fingers[i]`` when ``loc`` points inside one of those."""
    if len(loc) == 3 and loc[0] in _PAIRS:
        return f"limits.{loc[1]}" if loc[0] == "limits" else f"{loc[0]}[{loc[1]}]"
    return None


def spec_error(source: str, err: ValidationError) -> RobotSpecError:
    """One :class:`RobotSpecError` listing every pydantic error of a spec, each with its field."""
    lines = []
    for e in err.errors():
        field = _field_of(e)
        msg = str(e.get("ctx", {}).get("error", e["msg"]))
        if msg.startswith(f"{field}: "):
            msg = msg[len(field) + 2 :]
        value = e.get("input")
        show = e["type"] not in ("missing", "value_error") and not isinstance(value, dict)
        pair = _pair_of(tuple(e["loc"]))
        if pair is not None and e["type"] != "value_error":
            # Name the pair, not the position inside it that pydantic reports.
            field, msg, show = pair, f"expected {_PAIRS[str(e['loc'][0])]}", e["type"] != "missing"
        elif e["type"] == "missing":
            msg = "required field is missing"
        elif e["type"] == "extra_forbidden":
            guess = difflib.get_close_matches(field, list(RobotSpec.model_fields), n=1, cutoff=0.6)
            msg = "unknown field" + (f" (did you mean {guess[0]!r}?)" if guess else "")
            show = False
        lines.append(f"{source}: field {field}: {msg}" + (f" (got {value!r})" if show else ""))
    return RobotSpecError("\n".join(lines))


def parse_robot_spec(data: dict[str, Any], source: str, root: Path) -> RobotSpec:
    """Build a spec from parsed TOML (``model`` relative to ``root``), without loading the model.

    Raises:
        RobotSpecError: a field is missing, of the wrong type, or inconsistent.
    """
    data = dict(data)
    model = data.get("model")
    if isinstance(model, str) and model.strip():
        data["model"] = str((root / model).resolve())
    try:
        return RobotSpec.model_validate(data)
    except ValidationError as e:
        raise spec_error(source, e) from None


def read_robot_spec(path: str | Path) -> RobotSpec:
    """Read a spec file without loading its model (see :func:`robojudge.robots.load_robot_spec`).

    Raises:
        RobotSpecError: the file is missing, is not valid TOML, or has bad fields.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a BOM, as Windows tools write, is no error
    except OSError as e:
        raise RobotSpecError(f"{p}: cannot read robot spec: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise RobotSpecError(f"{p}: not a robot spec (TOML text): byte {e.start} is not UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RobotSpecError(f"{p}: not a valid TOML file: {e}") from None
    return parse_robot_spec(data, str(p), p.resolve().parent)
