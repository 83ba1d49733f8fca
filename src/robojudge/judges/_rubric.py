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
    syntax = "replace"             # "{instruction}" is replaced in both prompts, other braces stay
    system = "..."                 # or syntax = "format": Python str.format, "{{" for a brace
    user = "..."

Besides one number (``kind = "score"``, the default) a rubric's answer can be:

* ``kind = "checks"``: yes/no answers under ``output.checks`` (a list of JSON keys); the score is
  ``sum(weight_i * answer_i)`` with ``output.weights`` (default: equal weights summing to 1, so the
  score is the fraction of checks passed, in [0, 1]).
* ``kind = "label"``: one word from ``output.labels`` (a table ``label = value``, matched without
  regard to case) under ``score_key``; the score is the label's value.
* ``kind = "text"``: free text under ``score_key`` (a caption); the stored value is its number of
  words and the text itself goes into the row's details (``details["text"]``).

For ``checks``, ``label`` and ``text`` the score range is derived and ``score_min``/``score_max``
may be left out. ``taxonomy = "<metric id>"`` names the RoboPhys-3D taxonomy metric
(``data/taxonomy``, ``robojudge.taxonomy``) that the rubric's score feeds, on that metric's native scale.

The built-in rubrics live in ``robojudge/data/rubrics``; ``load_rubric_file`` reads a user's own.
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from robojudge._chars import too_long
from robojudge.registry import Registry
from robojudge.taxonomy import load_taxonomy, unknown_metric_message

_ID = re.compile(r"[a-z][a-z0-9_]*")  # used with fullmatch: "$" would let a final newline in
_PLACEHOLDERS = ("instruction",)
RubricKind = Literal["score", "checks", "label", "text"]
_KINDS = ("score", "checks", "label", "text")


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
        user: User prompt template (placeholders: ``{instruction}``, as in ``system``).
        syntax: ``"replace"`` (only placeholders are substituted, in both prompts) or ``"format"``
            (``str.format``).
        reasoning_key: JSON key of the free-text reasoning.
        score_key: JSON key of the score.
        score_type: ``"integer"`` or ``"number"``.
        score_min: Lowest valid score.
        score_max: Highest valid score.
        needs_instruction: True when the prompt uses the item's instruction.
        first_frame_label: Text placed right before the first frame, or ``None``.
        source: Where the rubric comes from (citation or file).
        digest: Hash of the rubric's content; part of the judge's config hash.
        kind: ``score``, ``checks``, ``label`` or ``text`` (see the module docstring).
        checks: JSON keys of the yes/no checks (``kind = "checks"``).
        weights: One weight per check.
        labels: ``(label, value)`` pairs (``kind = "label"``), lowest value first.
        taxonomy: The RoboPhys-3D taxonomy metric id the score feeds, or ``None``.
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
    kind: RubricKind = "score"
    checks: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()
    labels: tuple[tuple[str, float], ...] = ()
    taxonomy: str | None = None

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
        system, user = self.system, self.user
        for key, val in values.items():
            system = system.replace("{" + key + "}", val)
            user = user.replace("{" + key + "}", val)
        return system, user

    def example_json(self) -> str:
        """A one-line example of the expected answer, for repair prompts."""
        head = f'{{"{self.reasoning_key}": "<your reasoning>", '
        if self.kind == "checks":
            return head + ", ".join(f'"{c}": <true or false>' for c in self.checks) + "}"
        if self.kind == "label":
            return head + f'"{self.score_key}": "<{" or ".join(lab for lab, _ in self.labels)}>"}}'
        if self.kind == "text":
            return head + f'"{self.score_key}": "<text>"}}'
        lo, hi = _num(self.score_min), _num(self.score_max)
        return head + f'"{self.score_key}": <{lo}-{hi}>}}'

    def answer_rule(self) -> str:
        """One sentence saying what a valid answer holds, for repair prompts."""
        if self.kind == "checks":
            return "each check is true or false"
        if self.kind == "label":
            return f"{self.score_key} is one of " + ", ".join(lab for lab, _ in self.labels)
        if self.kind == "text":
            return f"{self.score_key} is a non-empty string"
        what = "an integer" if self.score_type == "integer" else "a number"
        return f"{self.score_key} is {what} from {self.score_min:g} to {self.score_max:g}"

    def describe(self) -> dict[str, Any]:
        """Metadata as plain values."""
        return {
            "id": self.id,
            "version": self.version,
            "title": self.title,
            "score_key": self.score_key,
            "range": [self.score_min, self.score_max if self.score_max != float("inf") else None],
            "needs_instruction": self.needs_instruction,
            "source": self.source,
            "kind": self.kind,
            "taxonomy": self.taxonomy,
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
    problem = too_long("id", rid)
    if problem is not None:
        raise RubricError(f"{where}: {problem}")
    if not _ID.fullmatch(rid):
        raise RubricError(f"{where}: id {rid!r} must be lowercase ASCII letters (a-z), digits and '_', "
                          "starting with a letter")
    version = str(_req(data, "version", str, where))
    problem = too_long("version", version)
    if problem is not None:
        raise RubricError(f"{where}: rubric {rid!r}: {problem}")
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
    kind = out.get("kind", "score")
    if kind not in _KINDS:
        raise RubricError(f"{where}: output.kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    checks, weights, labels = _answer_shape(kind, out, where)
    if kind == "score":
        lo = _req(out, "score_min", float, where)
        hi = _req(out, "score_max", float, where)
    elif kind == "checks":
        score_type, lo, hi = "number", 0.0, float(sum(weights))
    elif kind == "label":
        values = [v for _, v in labels]
        score_type = "integer" if all(float(v).is_integer() for v in values) else "number"
        lo, hi = min(values), max(values)
    else:
        score_type, lo, hi = "integer", 0.0, float("inf")
    if lo >= hi:
        raise RubricError(f"{where}: score_min {lo} must be below score_max {hi}")
    taxonomy = data.get("taxonomy")
    if taxonomy is not None and not isinstance(taxonomy, str):
        raise RubricError(f"{where}: taxonomy must be a metric id string, got {taxonomy!r}")
    if taxonomy is not None and taxonomy not in (known := load_taxonomy()):
        # (a misspelt id fed nothing, and the report and aggregate said nothing of it)
        raise RubricError(f"{where}: taxonomy: {unknown_metric_message(taxonomy, known.ids)}")
    system = _req(prompt, "system", str, where).strip()
    user = _req(prompt, "user", str, where).strip()
    if syntax == "format":
        _bare_fields(system, "prompt.system", where)
        _bare_fields(user, "prompt.user", where)
    needs = bool(data.get("needs_instruction", "{instruction}" in system or "{instruction}" in user))
    label = data.get("first_frame_label") or None
    if label is not None and not isinstance(label, str):
        raise RubricError(f"{where}: first_frame_label must be a string")
    canon = repr(sorted((k, repr(v)) for k, v in data.items())).encode()
    if syntax == "replace" and "{instruction}" in system:
        # Such a system prompt was sent as written before 2026-12-06 and has the instruction in it since:
        # another request, so another configuration (rows judged before are not taken for its results).
        canon += b"\0system prompt takes the instruction"
    rubric = Rubric(
        id=rid,
        version=version,
        title=str(data.get("title", rid)),
        system=system,
        user=user,
        syntax=syntax,
        reasoning_key=str(out.get("reasoning_key", "reasoning")),
        score_key=str(out.get("score_key", "score"))
        if kind == "checks"
        else _req(out, "score_key", str, where),
        score_type=score_type,
        score_min=lo,
        score_max=hi,
        needs_instruction=needs,
        first_frame_label=label,
        source=str(data.get("source", where)),
        digest=hashlib.sha256(canon).hexdigest()[:12],
        kind=kind,
        checks=checks,
        weights=weights,
        labels=labels,
        taxonomy=taxonomy,
    )
    try:  # a broken template should fail when loaded, not on the first item
        rubric.render("check" if needs else None)
    except (KeyError, IndexError, ValueError) as exc:
        raise RubricError(f"{where}: the prompt template does not render: {exc!r}") from None
    return rubric


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _bare_fields(template: str, field: str, where: str) -> None:
    """Refuse a ``syntax = "format"`` placeholder that is more than a bare ``{name}``.

    A format spec is applied to the item's text as written: ``{instruction:>6000000000}`` pads it to six
    billion characters, allocated when the rubric is loaded and again for every request. A conversion
    (``!r``) or an attribute or index (``{instruction.__class__}``, ``{instruction[0]}``) is no prompt
    text either. A template that does not parse is left to the render check, which says why.
    """
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        return
    for _, name, spec, conversion in parts:
        if name is None or (_FIELD.fullmatch(name) and not spec and conversion is None):
            continue
        shown = "{" + name + (f"!{conversion}" if conversion is not None else "")
        shown += f":{spec}" if spec else ""
        shown = shown + "}" if len(shown) <= 60 else f"{shown[:60]}... ({len(shown) + 1:,} characters)"
        raise RubricError(
            f"{where}: {field}: placeholder {shown!r} is not a bare {{name}}: with syntax = \"format\" a "
            "placeholder takes no format spec (:...), conversion (!r) or attribute or index (. or [...]); "
            "write {instruction}, and {{ }} for literal braces"
        )


def _answer_shape(
    kind: str, out: dict[str, Any], where: str
) -> tuple[tuple[str, ...], tuple[float, ...], tuple[tuple[str, float], ...]]:
    """The checks, their weights and the labels a rubric's ``[output]`` table declares."""
    checks: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()
    labels: tuple[tuple[str, float], ...] = ()
    if kind == "checks":
        raw = out.get("checks")
        if not isinstance(raw, list) or not raw or not all(isinstance(c, str) and c for c in raw):
            raise RubricError(f"{where}: output.checks must be a non-empty list of JSON keys")
        if len(set(raw)) != len(raw):
            raise RubricError(f"{where}: output.checks has a repeated key")
        checks = tuple(raw)
        w = out.get("weights", [1.0 / len(checks)] * len(checks))
        if (
            not isinstance(w, list)
            or len(w) != len(checks)
            or not all(isinstance(x, int | float) and not isinstance(x, bool) and x > 0 for x in w)
        ):
            raise RubricError(
                f"{where}: output.weights must be {len(checks)} positive numbers (one per check)"
            )
        weights = tuple(float(x) for x in w)
    elif kind == "label":
        raw_labels = out.get("labels")
        if not isinstance(raw_labels, dict) or len(raw_labels) < 2:
            raise RubricError(f"{where}: output.labels must be a table of at least two label = value")
        pairs = []
        for lab, val in raw_labels.items():
            if isinstance(val, bool) or not isinstance(val, int | float):
                raise RubricError(f"{where}: output.labels.{lab} must be a number, got {val!r}")
            pairs.append((str(lab), float(val)))
        if len({lab.lower() for lab, _ in pairs}) != len(pairs):
            raise RubricError(f"{where}: output.labels repeats a label (labels match without case)")
        labels = tuple(sorted(pairs, key=lambda p: p[1]))
    return checks, weights, labels


def load_rubric_file(path: str | Path) -> Rubric:
    """Read a rubric TOML file (for ``--rubric-file``).

    Raises:
        RubricError: Missing file, invalid TOML, or a missing or wrong field.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))  # a BOM, as Windows tools write
    except OSError as exc:
        raise RubricError(f"cannot read rubric file {p}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"{p}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RubricError(f"{p}: not a rubric file (TOML text): byte {exc.start} is not UTF-8") from None
    return parse_rubric(data, str(p))


def _load_builtin_rubrics() -> None:
    folder = resources.files("robojudge") / "data" / "rubrics"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            rubric = parse_rubric(data, f"built-in rubric {entry.name}")
            RUBRICS.add(rubric.id, rubric)


RUBRICS: Registry[Rubric] = Registry("rubric", loader=_load_builtin_rubrics)
"""Built-in rubrics by id (``pa``, ``ia``, the RoboPhys-3D ones...); :meth:`Registry.add` registers more."""


def get_rubric(name: str) -> Rubric:
    """A built-in or registered rubric by id; raises ``UnknownNameError`` with suggestions."""
    return RUBRICS.get(name)
