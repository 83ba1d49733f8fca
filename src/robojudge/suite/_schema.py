"""The manifest schema: one :class:`Item` per generated rollout.

Field names follow the RoboJudge annotation protocol (paper 000, Sec. 3.2-3.3 and App. A.1): PA and IA
on 1-5, six diagnostic checklist items on 0-2 and free-text evidence. The overall 1-10 score is
RoboPhys-3D's human score (paper 002, App. D, eq. 11): one rater's rating, or the mean over raters.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from robojudge._chars import MAX_NAME_BYTES, short_enough, unsafe_at, unsafe_kind
from robojudge._json import loads_noting_repeats


class Embodiment(StrEnum):
    """Who acts in the video."""

    gripper = "gripper"
    dexterous_hand = "dexterous_hand"
    human_hand = "human_hand"
    bimanual = "bimanual"
    humanoid = "humanoid"
    other = "other"


CHECKLIST_ITEMS: tuple[str, ...] = (
    "agent_consistency",
    "scene_consistency",
    "interaction_realism",
    "agent_match",
    "object_correctness",
    "goal_completion",
)
"""The six checklist items of RoboJudge App. A.1; the first three inform PA, the last three IA."""


def _not_bool(value: Any) -> Any:
    """A rating is a number: JSON's ``true`` would otherwise read as 1 (``partial`` on a checklist item)
    and ``false`` as 0, where a CSV cell ``true`` is refused."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


Rating = Annotated[int, BeforeValidator(_not_bool)]
"""A whole-number rating; booleans are refused (see :func:`_not_bool`)."""


def _not_bool_number(value: Any) -> Any:
    """As :func:`_not_bool`, for a field that takes any real number."""
    if isinstance(value, bool):
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return value


def _whole_as_int(value: float) -> float:
    """A whole value as an int, so that a manifest written back from ratings of 7 says 7, not 7.0."""
    return int(value) if float(value).is_integer() else value


MeanRating = Annotated[float, BeforeValidator(_not_bool_number), Field(allow_inf_nan=False),
                       AfterValidator(_whole_as_int), PlainSerializer(_whole_as_int, return_type=Any)]
"""A rating that may be the mean of several raters' whole-number ratings (7.33 for 7, 7 and 8): any finite
real number; booleans, NaN and infinities are refused. A whole value is kept (and written) as an int."""


def _refuse_control(field: str, value: str) -> str:
    """``value``, or a ValueError naming ``field`` when it holds a control character (category Cc) or a
    bidirectional control (:mod:`robojudge._chars`).

    PostgreSQL text cannot hold NUL; a line break or tab splits a name in every printed line and CSV
    row, an escape sequence recolours or rewrites the terminal that prints it, and a right-to-left
    override shows the rest of a table row reversed."""
    bad = unsafe_at(value)
    if bad is not None:
        raise ValueError(f"{field} holds {unsafe_kind(value[bad])} ({value[bad]!r} at position {bad})")
    return value


def _plain_name(field: str, value: str, limit: int = MAX_NAME_BYTES) -> str:
    """``value``, or a ValueError naming ``field`` when it holds a control character (:func:`_refuse_control`)
    or is longer than ``limit`` bytes (:data:`robojudge._chars.MAX_NAME_BYTES`, a folder name's most;
    :data:`MAX_ITEM_ID_BYTES` for the path-like :data:`_PATH_FIELDS`)."""
    return _refuse_control(field, short_enough(field, value, limit))


def _refuse_nul(field: str, value: str) -> str:
    """``value``, or a ValueError naming ``field`` when it holds NUL: free text (an instruction, the evidence
    of a rating) may hold line breaks and tabs, but PostgreSQL text cannot hold NUL."""
    at = value.find("\x00")
    if at >= 0:
        raise ValueError(f"{field} holds a NUL character ('\\x00' at position {at}), which a database on "
                         "PostgreSQL cannot store")
    return value


MAX_ITEM_ID_BYTES = 1000
"""The longest item id, in bytes of UTF-8 (1,000 ASCII characters, fewer accented or CJK ones). A result
store on PostgreSQL keeps one current row per (item id, metric, configuration, version) with a unique
index, whose entries hold at most 2,704 bytes: a longer id would fail every run of its manifest there."""


def item_id_problem(value: str) -> str | None:
    """What makes ``value`` unfit for an item id, wherever ids come from (a manifest, imported results): a
    control or bidirectional control character (see :func:`_refuse_control`), a character without a
    UTF-8 encoding, or more than :data:`MAX_ITEM_ID_BYTES` bytes. None when it is fit."""
    try:
        _refuse_control("item_id", value)
    except ValueError as exc:
        return str(exc)
    try:
        size = len(value.encode())
    except UnicodeEncodeError as exc:
        return (f"item_id holds {value[exc.start]!r} at position {exc.start}, which is no character (an "
                "undecodable byte of a file name?)")
    if size > MAX_ITEM_ID_BYTES:
        return (f"item_id is {size:,} bytes long in UTF-8; at most {MAX_ITEM_ID_BYTES:,} are allowed (a "
                "result store on PostgreSQL cannot index a longer one)")
    return None


class Checklist(BaseModel):
    """Six diagnostic items, each 0 (clear failure), 1 (partial) or 2 (fine). RoboJudge App. A.1."""

    model_config = ConfigDict(extra="forbid")

    agent_consistency: Rating | None = Field(default=None, ge=0, le=2)
    scene_consistency: Rating | None = Field(default=None, ge=0, le=2)
    interaction_realism: Rating | None = Field(default=None, ge=0, le=2)
    agent_match: Rating | None = Field(default=None, ge=0, le=2)
    object_correctness: Rating | None = Field(default=None, ge=0, le=2)
    goal_completion: Rating | None = Field(default=None, ge=0, le=2)


class Labels(BaseModel):
    """Ratings of one rollout by one rater (a person, or ``"planted"`` for simulator truth).

    ``overall`` alone may stand for several raters: RoboPhys-3D's human reference is the mean of at least
    three raters' 10-point scores (App. D, eq. 11), so it takes a real number in [1, 10].
    """

    model_config = ConfigDict(extra="forbid")

    pa: Rating | None = Field(default=None, ge=1, le=5, description="Physical Adherence, 1-5")
    ia: Rating | None = Field(default=None, ge=1, le=5, description="Instruction Alignment, 1-5")
    checklist: Checklist | None = None
    evidence: str | None = None
    overall: MeanRating | None = Field(
        default=None, ge=1, le=10,
        description="overall quality, 1-10: one rater's rating or the mean over raters (RoboPhys-3D App. D)")
    rater: str | None = None

    @field_validator("rater")
    @classmethod
    def _plain_rater(cls, v: str | None) -> str | None:
        return v if v is None else _plain_name("labels.rater", v)

    @field_validator("evidence")
    @classmethod
    def _evidence_text(cls, v: str | None) -> str | None:
        return v if v is None else _refuse_nul("labels.evidence", v)


ROBOT_FILE_KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "joint_states": ((".npz", ".csv", ".npy"), "a .npz, .csv or .npy file of joint positions"),
    "robot": ((".toml",), "a robot spec .toml file"),
    "calibration": ((".json",), "a .json file of per-view cameras"),
}
"""The file fields of real episodes read by forward kinematics (robojudge.robots): allowed suffixes, and
what the field holds, for messages. docs/robots.md describes each file's content."""

class Grid(BaseModel):
    """How one stitched video holds several views: ``rows x cols`` equal cells, named row by row.

    ``views`` names the cells in reading order (left to right, then top to bottom); ``null`` marks a
    cell that holds no view (a padding tile), and trailing cells may be left out. The video's width
    must divide by ``cols`` and its height by ``rows`` (checked when the video is read).
    """

    model_config = ConfigDict(extra="forbid")

    rows: int = Field(ge=1, le=16)
    cols: int = Field(ge=1, le=16)
    views: list[str | None] = Field(min_length=1)

    @model_validator(mode="after")
    def _names(self) -> Grid:
        if len(self.views) > self.rows * self.cols:
            raise ValueError(f"grid.views names {len(self.views)} cells but a {self.rows}x{self.cols} grid "
                             f"has {self.rows * self.cols}")
        named = [v for v in self.views if v is not None]
        if not named:
            raise ValueError("grid.views names no view (every cell is null)")
        if any(not v.strip() for v in named):
            raise ValueError("grid.views has an empty view name")
        for v in named:
            _plain_name("grid.views name" if len(v) > MAX_NAME_BYTES else f"grid.views name {v!r}", v)
        dupes = sorted({v for v in named if named.count(v) > 1})
        if dupes:
            raise ValueError(f"grid.views repeats view name(s) {dupes}")
        return self

    def cells(self) -> dict[str, tuple[int, int]]:
        """View name -> ``(row, col)`` of its cell."""
        return {v: divmod(i, self.cols) for i, v in enumerate(self.views) if v is not None}


_NAME_FIELDS: tuple[str, ...] = (
    "clip_id", "generator", "source", "task", "regime", "prompt_variant", "split", "main_view")
"""Fields of :class:`Item` naming a group, clip or view: like ``item_id`` they may hold no control
character, and at most :data:`robojudge._chars.MAX_NAME_BYTES` bytes (``labels.rater`` and view names
neither), but for :data:`_PATH_FIELDS`."""

_PATH_FIELDS = frozenset({"clip_id", "source"})
"""Name fields that hold a path (``suite scan`` makes ``clip_id`` the video's whole path below the generator
folder): as long as an item id may be (:data:`MAX_ITEM_ID_BYTES`), which is made of the same path."""

GROUP_PREFIX = "group:"
"""Reserved: the item ids of stored set-level results (one per group) start with it."""


class Item(BaseModel):
    """One generated rollout and what is known about it.

    Several views of one rollout come either as ``views`` (a video per view) or as ``grid`` (one
    ``video`` stitching them in a declared layout; docs/manifest.md, "Grid videos").

    Paths (``video``, ``initial_frame``, ``reference_video``, ``views`` values, ``state``,
    ``joint_states``, ``robot``, ``calibration``) are stored
    as written in the manifest; :meth:`resolve` turns them into absolute paths against the manifest's
    folder. A ``video`` may be a file or a folder of frame images. ``initial_frame`` (the image the
    video was generated from) is validated and kept, but nothing reads it: judges and metrics use the
    video's first frame as the conditioning scene (RoboJudge App. B.1).
    """

    model_config = ConfigDict(extra="forbid")

    item_id: str = Field(min_length=1)
    video: str = Field(min_length=1)
    instruction: str | None = None
    initial_frame: str | None = None
    reference_video: str | None = None
    views: dict[str, str] | None = None
    grid: Grid | None = None
    main_view: str | None = None
    source: str | None = None
    clip_id: str | None = None
    generator: str | None = None
    embodiment: Embodiment | None = None
    task: str | None = None
    regime: str | None = None
    prompt_variant: str | None = None
    split: str | None = None
    state: str | None = None
    joint_states: str | None = None
    robot: str | None = None
    calibration: str | None = None
    labels: Labels | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("item_id")
    @classmethod
    def _strip_id(cls, v: str) -> str:
        if v != v.strip():
            raise ValueError("item_id has leading or trailing whitespace")
        if v.startswith(GROUP_PREFIX):
            raise ValueError(f"item_id may not start with {GROUP_PREFIX!r}: stored set-level results use it")
        problem = item_id_problem(v)
        if problem is not None:
            raise ValueError(problem)
        return v

    @field_validator("instruction")
    @classmethod
    def _instruction_text(cls, v: str | None) -> str | None:
        return v if v is None else _refuse_nul("instruction", v)

    @field_validator(*_NAME_FIELDS)
    @classmethod
    def _plain_name(cls, v: str | None, info: ValidationInfo) -> str | None:
        field = str(info.field_name)
        return v if v is None else _plain_name(field, v, MAX_ITEM_ID_BYTES if field in _PATH_FIELDS
                                               else MAX_NAME_BYTES)

    @field_validator("views")
    @classmethod
    def _plain_view_names(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        for name in v or {}:
            _plain_name("view name" if len(name) > MAX_NAME_BYTES else f"view name {name!r}", name)
        return v

    @field_validator("joint_states", "robot", "calibration")
    @classmethod
    def _file_kind(cls, v: str | None, info: ValidationInfo) -> str | None:
        suffixes, kind = ROBOT_FILE_KINDS[str(info.field_name)]
        if v is not None and not v.lower().endswith(suffixes):
            raise ValueError(f"{info.field_name} must be {kind}; got {v!r}")
        return v

    @field_validator("grid", mode="before")
    @classmethod
    def _grid_from_text(cls, v: Any) -> Any:
        # A CSV cell or Parquet string holds the layout as JSON text.
        if isinstance(v, str):
            try:
                value, repeated = loads_noting_repeats(v)
            except json.JSONDecodeError as e:
                raise ValueError(f"grid is not a JSON object ({e.msg})") from None
            except RecursionError:
                raise ValueError("grid is not a JSON object (nested too deeply)") from None
            if repeated:  # as in a JSON Lines record: the last value would be kept without a word
                raise ValueError(f"grid gives {', '.join(f'grid.{k}' for k in repeated)} more than once")
            return value
        return v

    @model_validator(mode="after")
    def _main_view_is_a_view(self) -> Item:
        if self.views is not None and self.grid is not None:
            raise ValueError("grid and views are both given; a stitched video names its views in grid.views")
        names = self.view_names()
        if names and self.main_view is not None and self.main_view not in names:
            raise ValueError(f"main_view {self.main_view!r} is not one of the views {sorted(names)}")
        return self

    def view_names(self) -> list[str]:
        """The names of the item's views (``views`` keys, or the grid's named cells); empty without views."""
        if self.views is not None:
            return list(self.views)
        if self.grid is not None:
            return list(self.grid.cells())
        return []

    def resolve(self, root: Path, resolver: Callable[[Path], Path] = Path.resolve) -> Item:
        """Return a copy whose file fields are absolute paths under ``root`` (the manifest's folder).

        ``resolver`` resolves one path (``Path.resolve``; a manifest read passes its
        :class:`robojudge.suite._paths.Resolver`, which resolves each folder once).
        """

        def r(p: str | None) -> str | None:
            if p is None:
                return None
            try:
                return str(resolver(root / p))
            # A loop of links, a name this locale cannot encode: kept as given by a reader of stored results.
            except (OSError, RuntimeError, UnicodeEncodeError):
                return os.path.abspath(root / p)

        return self.model_copy(
            update={
                "video": r(self.video),
                "initial_frame": r(self.initial_frame),
                "reference_video": r(self.reference_video),
                "views": None if self.views is None else {k: str(r(v)) for k, v in self.views.items()},
                "state": r(self.state),
                **{name: r(getattr(self, name)) for name in ROBOT_FILE_KINDS},
            }
        )

    def file_fields(self) -> dict[str, str]:
        """Every path this item refers to, keyed by field name (``views.<name>`` for views)."""
        out: dict[str, str] = {"video": self.video}
        for name in ("initial_frame", "reference_video", "state", *ROBOT_FILE_KINDS):
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        for k, v in (self.views or {}).items():
            out[f"views.{k}"] = v
        return out


META_PREFIX = "meta."
"""How a grouping option names a value of an item's ``meta`` (``meta.substrate``, ``meta.rollout_depth``)."""


def meta_text(item: Item, key: str) -> str | None:
    """The value of ``meta[key]`` on ``item`` as a group name: a text as it is, anything else as JSON
    (``3``, ``true``, ``[1, 2]``); None when the key is absent, null or blank text (``""``, which would
    export as an empty cell that ``aggregate`` refuses: an item without a value is the unset group ``-``,
    as for an item field).

    ``results export --by meta.KEY`` and ``report --by meta.KEY`` group by it (as ``select best-of-n
    --group`` reads a meta value), so that ``3`` and ``"3"`` (a JSON number, a CSV cell) are one group, as
    they print alike.
    """
    value = item.meta.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def meta_key_problem(items: Sequence[Item], field: str) -> str | None:
    """Why ``--by field`` (``meta.KEY``) would put every item of ``items`` in one unset group: no item's
    ``meta`` holds the key (a misspelt key, or the manifest lacks it), naming the keys that are there;
    None when some item holds it, when ``field`` is no meta key, or when there are no items."""
    if not field.startswith(META_PREFIX) or not items:
        return None
    key = field[len(META_PREFIX):]
    if any(it.meta.get(key) is not None for it in items):
        return None
    keys = sorted({k for it in items for k in it.meta})
    there = (f"the keys there are: {', '.join(keys[:8])}{' ...' if len(keys) > 8 else ''}" if keys
             else "no item has a meta field")
    close = difflib.get_close_matches(key, keys, n=1)
    hint = f" (did you mean {META_PREFIX}{close[0]}?)" if close else ""
    return f"--by {field}: no item's meta holds {key!r}{hint}; {there}"
