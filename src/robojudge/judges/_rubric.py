"""Rubrics: versioned prompt templates with a declared output schema and score range.

A rubric is a TOML file (see ``robojudge/data/rubrics/pa.toml``)::

    id = "pa"                      # short name; the metric id is judge:<judge>:<id>
    version = "1"                  # bump when the wording changes
    needs_instruction = false      # IA-style rubrics need the item's instruction
    first_frame_label = "..."      # optional: text shown before the first frame

    [output]
    reasoning_key = "reasoning"
    score_key = "physical_adherence"
    score_type = "integer"         # or "number"
    score_min = 1
    score_max = 5

    [prompt]
    syntax = "replace"             # "{instruction}" is replaced, other braces stay as written
    system = "..."                 # or syntax = "format": Python str.format, "{{" for a brace
    user = "..."

The built-in rubrics live in ``robojudge/data/rubrics``; ``load_rubric_file`` reads a user's own.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from robojudge.judges._registry import Registry

_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_PLACEHOLDERS = ("instruction",)


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Rubric:
    """One judging axis: the prompt a judge sees and the JSON it must answer with.

    Attributes:
        id: Short name (``pa``, ``ia``); part of the stored metric id.
        version: Template version; stored as the result row's version.
        title: Human-readable name.
        system: System prompt.
        user: User prompt template (placeholders: ``{instruction}``).
        syntax: ``"replace"`` (only placeholders are substituted) or ``"format"`` (``str.format``).
        reasoning_key: JSON key of the free-text reasoning.
        score_key: JSON key of the score.
        score_type: ``"integer"`` or ``"number"``.
        score_min: Lowest valid score.
        score_max: Highest valid score.
        needs_instruction: True when the prompt uses the item's instruction.
        first_frame_label: Text placed right before the first frame, or ``None``.
        source: Where the rubric comes from (citation or file).
        digest: Hash of the rubric's content; part of the judge's config hash.
    """

    id: str
    version: str
    title: str
    system: str
    user: str
    syntax: Literal["replace", "format"]
    reasoning_key: str
    score_key: str
    score_type: Literal["integer", "number"]
    score_min: float
    score_max: float
    needs_instruction: bool
    first_frame_label: str | None
    source: str
    digest: str

    def render(self, instruction: str | None) -> tuple[str, str]:
        """The (system, user) prompt texts for one item.

        Raises:
            ValueError: The rubric needs an instruction and ``instruction`` is empty.
        """
        if self.needs_instruction and not (instruction or "").strip():
            raise ValueError(f"rubric {self.id!r} needs the item's instruction, and the item has none")
        values = {"instruction": (instruction or "").strip()}
        if self.syntax == "format":
            return self.system.format(**values), self.user.format(**values)
        user = self.user
        for key, val in values.items():
            user = user.replace("{" + key + "}", val)
        return self.system, user

    def example_json(self) -> str:
        """A one-line example of the expected answer, for repair prompts."""
        lo, hi = _num(self.score_min), _num(self.score_max)
        return f'{{"{self.reasoning_key}": "<your reasoning>", "{self.score_key}": <{lo}-{hi}>}}'

    def describe(self) -> dict[str, Any]:
        """Metadata as plain values (for ``robojudge judge --list-rubrics``)."""
        return {
            "id": self.id,
            "version": self.version,
            "title": self.title,
            "score_key": self.score_key,
            "range": [self.score_min, self.score_max],
            "needs_instruction": self.needs_instruction,
            "source": self.source,
        }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _req(table: dict[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in table:
        raise RubricError(f"{where}: missing {key!r}")
    val = table[key]
    if typ is float and isinstance(val, int) and not isinstance(val, bool):
        val = float(val)
    if not isinstance(val, typ) or isinstance(val, bool) and typ is not bool:
        raise RubricError(f"{where}: {key!r} must be a {typ.__name__}, got {val!r}")
    return val


def parse_rubric(data: dict[str, Any], where: str) -> Rubric:
    """Build a :class:`Rubric` from a parsed TOML table; ``where`` names the source in errors."""
    rid = _req(data, "id", str, where)
    if not _ID.match(rid):
        raise RubricError(f"{where}: id {rid!r} must be lowercase letters, digits and '_'")
    version = str(_req(data, "version", str, where))
    out = data.get("output")
    prompt = data.get("prompt")
    if not isinstance(out, dict) or not isinstance(prompt, dict):
        raise RubricError(f"{where}: needs an [output] and a [prompt] table")
    syntax = prompt.get("syntax", "replace")
    if syntax not in ("replace", "format"):
        raise RubricError(f"{where}: prompt.syntax must be 'replace' or 'format', got {syntax!r}")
    score_type = out.get("score_type", "integer")
    if score_type not in ("integer", "number"):
        raise RubricError(f"{where}: output.score_type must be 'integer' or 'number', got {score_type!r}")
    lo = _req(out, "score_min", float, where)
    hi = _req(out, "score_max", float, where)
    if lo >= hi:
        raise RubricError(f"{where}: score_min {lo} must be below score_max {hi}")
    system = _req(prompt, "system", str, where).strip()
    user = _req(prompt, "user", str, where).strip()
    needs = bool(data.get("needs_instruction", "{instruction}" in user))
    label = data.get("first_frame_label") or None
    if label is not None and not isinstance(label, str):
        raise RubricError(f"{where}: first_frame_label must be a string")
    canon = repr(sorted((k, repr(v)) for k, v in data.items())).encode()
    rubric = Rubric(
        id=rid,
        version=version,
        title=str(data.get("title", rid)),
        system=system,
        user=user,
        syntax=syntax,
        reasoning_key=str(out.get("reasoning_key", "reasoning")),
        score_key=_req(out, "score_key", str, where),
        score_type=score_type,
        score_min=lo,
        score_max=hi,
        needs_instruction=needs,
        first_frame_label=label,
        source=str(data.get("source", where)),
        digest=hashlib.sha256(canon).hexdigest()[:12],
    )
    try:  # a broken template should fail when loaded, not on the first item
        rubric.render("check" if needs else None)
    except (KeyError, IndexError, ValueError) as exc:
        raise RubricError(f"{where}: the prompt template does not render: {exc!r}") from None
    return rubric


def load_rubric_file(path: str | Path) -> Rubric:
    """Read a rubric TOML file (for ``--rubric-file``).

    Raises:
        RubricError: Missing file, invalid TOML, or a missing or wrong field.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RubricError(f"cannot read rubric file {p}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"{p}: invalid TOML: {exc}") from None
    return parse_rubric(data, str(p))


def _load_builtin_rubrics() -> None:
    folder = resources.files("robojudge") / "data" / "rubrics"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            rubric = parse_rubric(data, f"built-in rubric {entry.name}")
            RUBRICS.add(rubric.id, rubric)


RUBRICS: Registry[Rubric] = Registry("rubric", _load_builtin_rubrics)
"""Built-in rubrics by id (``pa``, ``ia``); :meth:`Registry.add` registers more."""


def get_rubric(name: str) -> Rubric:
    """A built-in or registered rubric by id; raises ``UnknownNameError`` with suggestions."""
    return RUBRICS.get(name)
