"""RoboPhys-3D CLIP Score (``sa_clip``): the video's key steps against ground-truth steps, in CLIP text space.

RoboPhys-3D App. B.3.6 (following EWMBench) has a VLM write "a detailed, step-by-step description of
the task's key steps" of the generated video and compares it "with the ground-truth step descriptions
using the CLIP Score" (Hessel et al.), reported on ``[0, 1]``. The paper says no more, and Hessel's
CLIPScore (``2.5 * max(cos, 0)`` between an image and a caption) is neither text-to-text nor bounded
by one. What follows is robojudge's own choice:

1. each text is split into steps: its lines and ``;``-separated parts (the ``key_steps`` rubric joins
   steps with `` ; ``), leading numbering or bullets (``1.``, ``2)``, ``(3)``, ``Step 4:``, ``-``,
   ``*``) stripped, empty parts dropped;
2. every step is embedded with the CLIP ViT-B/32 text encoder (the network Hessel et al. use); the
   tokenizer truncates a step at the encoder's 77-token context, so a longer step is scored on its
   start only;
3. the L2-normalised step embeddings of each text are averaged and the mean renormalised;
4. the value is the cosine of the two texts' vectors clipped to ``[0, 1]`` (CLIPScore's ``max(cos, 0)``
   without its 2.5 weight, which would leave the paper's range).

Both texts are inputs, looked up in this order:

* generated steps: the manifest row's ``meta.key_steps``, else the ``steps`` config file
  (``--set sa_clip.steps=FILE``), e.g. the export of a ``key_steps`` judge run
  (``robojudge judge texts --judge NAME --db DB --rubric key_steps --field key_steps --out steps.jsonl``);
* reference steps: ``meta.reference_steps``, else the ``references`` config file
  (``--set sa_clip.references=FILE``).

A manifest value is a string (steps on lines or separated by ``;``) or a list of strings (one step
each). A file is a JSON object ``{item_id: text}`` or JSON Lines with ``item_id`` and the field
(``key_steps``, ``reference_steps``). A missing text fails the item with an error saying how to provide
it; the instruction is never used in place of the reference steps.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input, Provider
from robojudge.metrics._score import Score
from robojudge.metrics._texts import as_text, load_item_texts, meta_gives_text
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item

STEPS_KEY = "key_steps"
REFERENCES_KEY = "reference_steps"

# A step's leading list marker: bullets, "1." "2)" "(3)" "4:" followed by a space, "Step 5:".
_MARKER = re.compile(r"^(?:[-*\u2022]+\s*|\(?\d+[.):](?:\s+|$)|\(\d+\)\s*|step\s*\d+\s*[.):-]?\s*)+", re.I)
_SEPARATOR = re.compile(r"[\n\r;]+")


class ClipScoreConfig(BaseModel):
    """Where the two step texts come from, and the text-encoder batch size."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: str | None = Field(
        default=None,
        description="JSON {item_id: text} or JSONL (item_id, key_steps); used when meta.key_steps is "
        "absent or blank",
        json_schema_extra={"item_text": STEPS_KEY},  # its results' fingerprints hold the item's text
    )
    references: str | None = Field(
        default=None,
        description="JSON {item_id: text} or JSONL (item_id, reference_steps); used when "
        "meta.reference_steps is absent or blank",
        json_schema_extra={"item_text": REFERENCES_KEY},
    )
    batch_size: int = Field(default=32, ge=1, description="steps per text-encoder forward pass")


class ClipTextScore(NamedTuple):
    """The metric value (cosine clipped to ``[0, 1]``) and the raw cosine."""

    value: float
    cosine: float


def split_steps(text: str) -> list[str]:
    """The steps of a description: lines and ``;`` parts, list markers stripped, empty parts dropped.

    >>> split_steps("1. grasp the cup\\n2) lift it ; - place it")
    ['grasp the cup', 'lift it', 'place it']
    """
    steps = (_MARKER.sub("", part.strip()).strip() for part in _SEPARATOR.split(text))
    return [s for s in steps if s]


def text_direction(embeddings: np.ndarray) -> np.ndarray:
    """The unit mean of the L2-normalised rows of ``(S, D)`` step embeddings: one text's direction.

    Raises:
        MetricInputError: When there is no step, or the unit step vectors cancel out (zero mean).
    """
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2 or len(e) == 0:
        raise MetricInputError(f"needs step embeddings of at least 1 step, got shape {e.shape}")
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    mean = (e / np.where(norms > 0, norms, 1.0)).mean(axis=0)
    size = float(np.linalg.norm(mean))
    if not size > 0:
        raise MetricInputError("the step embeddings of a text cancel out (zero mean), so it has no direction")
    direction: np.ndarray = mean / size
    return direction


def clip_text_score(gen_embeddings: np.ndarray, ref_embeddings: np.ndarray) -> ClipTextScore:
    """Cosine of the generated and reference step-mean directions, clipped to ``[0, 1]`` (see module doc).

    ``gen_embeddings`` is ``(S_gen, D)``, ``ref_embeddings`` ``(S_ref, D)``: one row per step.

    Raises:
        MetricInputError: When either side has no step, the widths differ, or a side has no direction.
    """
    g, r = text_direction(gen_embeddings), text_direction(ref_embeddings)
    if g.shape != r.shape:
        raise MetricInputError(
            f"step embeddings differ in width: generated {g.shape[0]}, reference {r.shape[0]}"
        )
    cosine = float(g @ r)
    return ClipTextScore(value=float(np.clip(cosine, 0.0, 1.0)), cosine=cosine)


def _how(key: str, option: str) -> str:
    if key == STEPS_KEY:
        return (
            "run the `key_steps` rubric (`robojudge judge SUITE --judge NAME --rubric key_steps`), export it "
            "with `robojudge judge texts --judge NAME --db DB --rubric key_steps --field key_steps --out "
            f"steps.jsonl` and pass `--set sa_clip.{option}=steps.jsonl`, or put the text in the manifest's "
            f"meta.{key}"
        )
    return (
        f"put the ground-truth steps in the manifest's meta.{key} (a string, one step per line or separated "
        f"by ';', or a list of strings) or pass `--set sa_clip.{option}=<file.json>` "
        f"({{item_id: text}} or JSONL with 'item_id' and '{key}'); the instruction is not used in their place"
    )


def find_steps(item: Item, key: str, file: str | None, option: str) -> list[str]:
    """The steps of ``item``'s text ``meta.<key>``, else of its entry in ``file`` (config ``option``).

    Raises:
        MetricInputError: When neither holds a text with at least one step, or the file is unreadable;
            the message names the item, field or file, and how to provide the text.
    """
    value = item.meta.get(key)
    text = as_text(value, allow_lists=True)
    if value is not None and text is None:
        kind = type(value).__name__
        raise MetricInputError(f"item {item.item_id!r}: meta.{key} must be a string or a list of strings, "
                               f"got {kind}")
    source = f"meta.{key}"
    if not meta_gives_text(value) and file:
        if not Path(file).is_file():
            raise MetricInputError(f"{option} file {file} (sa_clip.{option}) does not exist")
        text = load_item_texts(file, key, allow_lists=True).get(item.item_id)
        source = f"{option} file {file}"
    if not text or not text.strip():
        where = f" nor in {option} file {file}" if file else ""
        raise MetricInputError(f"item {item.item_id!r} has no {key.replace('_', ' ')} in meta.{key}{where}: "
                               + _how(key, option))
    steps = split_steps(text)
    if not steps:
        raise MetricInputError(f"item {item.item_id!r}: {key} from {source} holds no step (only separators "
                               "or list markers)")
    return steps


@robophys_metric(
    "sa_clip",
    family=Family.text,
    inputs={Input.video},
    description=(
        "Cosine, clipped to [0, 1], between the CLIP ViT-B/32 text directions (mean of L2-normalised step "
        "embeddings) of the video's key-step description and the ground-truth steps. Both texts are inputs "
        "(manifest meta.key_steps / meta.reference_steps, or config files 'steps' / 'references')."
    ),
    provider=Provider.model,
    config=ClipScoreConfig,
    note="CLIP text similarity of key steps to ground-truth steps (EWMBench); step split and mean are "
    "robojudge's choice",
    weights=("clip_vit_b32",),
)
def sa_clip(item: Item, config: ClipScoreConfig) -> Score:
    """RoboPhys-3D CLIP Score: key-step description against ground-truth steps (see module doc)."""
    generated = find_steps(item, STEPS_KEY, config.steps, "steps")
    reference = find_steps(item, REFERENCES_KEY, config.references, "references")
    from robojudge.models import clip_text_features, load_clip

    net = load_clip("clip_vit_b32", metric="sa_clip")
    emb = clip_text_features(net, generated + reference, batch=config.batch_size)
    result = clip_text_score(emb[: len(generated)], emb[len(generated):])
    return Score(value=result.value, details={
        "generated_steps": len(generated), "reference_steps": len(reference), "cosine": result.cosine,
    })


__all__ = [
    "REFERENCES_KEY", "STEPS_KEY", "ClipScoreConfig", "ClipTextScore", "clip_text_score", "find_steps",
    "sa_clip", "split_steps", "text_direction",
]
