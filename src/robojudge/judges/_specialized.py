"""Specialized video judges: their native scores mapped onto PA and IA (RoboJudge App. B.2).

RoboJudge (paper 000, App. B.2) runs five specialized judges with their own prompts and scoring
interfaces and maps what they output onto Physical Adherence (PA) and Instruction Alignment (IA):

* VideoScore2: native 1-5 physical/common-sense consistency -> PA, text-to-video alignment -> IA.
* VideoPhy2: native 1-5 physical commonsense -> PA, semantic adherence -> IA.
* VideoCon: native scores ``s`` in [0, 1]; physical commonsense -> PA and semantic adherence -> IA,
  each as ``1 + round(4 s)``. We round halves up (``s = 0.625`` gives ``1 + 3 = 4``); the paper
  does not say how halves go.
* PhyJudge: PA = mean of physical trustworthiness and persistence; IA = semantic adherence.
* WBench: visual quality -> PA; no IA (WBench does not judge instruction following).

The mappings are pure functions (:func:`adapt_native` and the per-judge functions). Only
VideoScore2 has a checkpoint that the ``hf`` backend can load (a Qwen2.5-VL model;
:func:`specialized_judge_config`); VideoPhy2's and VideoCon's released raters use their own
mPLUG-Owl code, and we know of no released PhyJudge or WBench checkpoint, so for those four
robojudge provides the score mapping only (import their native scores and adapt them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from robojudge import settings
from robojudge.judges._config import JudgeConfig, make_judge
from robojudge.registry import Registry


class NativeScoreError(ValueError):
    """A native score that is missing, not a number or outside the judge's native range."""


@dataclass(frozen=True)
class PaIa:
    """Scores on RoboJudge's 1-5 PA/IA scale; ``None`` where the judge has no such axis."""

    pa: float | None
    ia: float | None


def round_half_up(x: float) -> int:
    """``x`` rounded to the nearest integer, halves away from zero for x >= 0 (2.5 -> 3)."""
    return math.floor(x + 0.5)


def videoscore2(physical: float, alignment: float) -> PaIa:
    """VideoScore2's physical/common-sense consistency and text alignment (both 1-5) as PA, IA."""
    return PaIa(float(physical), float(alignment))


def videophy2(physical_commonsense: float, semantic_adherence: float) -> PaIa:
    """VideoPhy2's physical commonsense and semantic adherence (both 1-5) as PA, IA."""
    return PaIa(float(physical_commonsense), float(semantic_adherence))


def videocon(physical_commonsense: float, semantic_adherence: float) -> PaIa:
    """VideoCon's scores in [0, 1] as PA, IA: ``1 + round(4 s)`` each (App. B.2)."""
    return PaIa(
        float(1 + round_half_up(4 * physical_commonsense)), float(1 + round_half_up(4 * semantic_adherence))
    )


def phyjudge(trustworthiness: float, persistence: float, semantic_adherence: float) -> PaIa:
    """PhyJudge: PA = mean of trustworthiness and persistence; IA = semantic adherence."""
    return PaIa((float(trustworthiness) + float(persistence)) / 2, float(semantic_adherence))


def wbench(visual_quality: float) -> PaIa:
    """WBench: visual quality as PA; no IA."""
    return PaIa(float(visual_quality), None)


@dataclass(frozen=True)
class SpecializedJudge:
    """A specialized judge: its native scores, their range, the mapping and where its weights are.

    Attributes:
        name: Short name (``videoscore2``...).
        title: Name and citation.
        native: Names of the native scores, in the order the mapping takes them.
        native_range: ``(low, high)`` of every native score.
        adapt: Native scores (positional, in ``native`` order) -> :class:`PaIa`.
        checkpoint: Hugging Face repository of a released checkpoint, or ``None``.
        revision: Pinned commit of ``checkpoint``, or ``None`` where none is pinned.
        loader: ``"hf"`` when robojudge's ``hf`` backend can run the checkpoint; ``None`` means
            robojudge only maps scores produced elsewhere.
        note: What to know when using it.
    """

    name: str
    title: str
    native: tuple[str, ...]
    native_range: tuple[float, float]
    adapt: Callable[..., PaIa]
    checkpoint: str | None = None
    revision: str | None = None
    loader: str | None = None
    note: str = ""


def _check_specialized(name: str, judge: SpecializedJudge) -> SpecializedJudge:
    # A lazy entry point is imported only when asked for: refuse anything but a judge under its own name.
    if not isinstance(judge, SpecializedJudge) or judge.name != name:
        got = getattr(judge, "name", type(judge).__name__)
        raise TypeError(f"specialized judge {name!r} must be a SpecializedJudge named {name!r}, got {got!r}")
    return judge


SPECIALIZED: Registry[SpecializedJudge] = Registry(
    "specialized judge",
    entry_point_group="robojudge.specialized_judges",
    extra_modules=lambda: settings.get().plugins,
    check=_check_specialized,
)
"""The five specialized judges of RoboJudge App. B.2, by name, and those installed packages add through
the ``robojudge.specialized_judges`` entry-point group or the modules named in ``ROBOJUDGE_PLUGINS``."""

for _spec in (
    SpecializedJudge(
        "videoscore2",
        "VideoScore2 (He et al., 2025)",
        ("physical", "alignment"),
        (1.0, 5.0),
        videoscore2,
        checkpoint="TIGER-Lab/VideoScore2",
        revision="368fab443268510bbab24bb45d8e548527a6c291",
        loader="hf",
        note="a Qwen2.5-VL model that reasons, then writes three 1-5 scores; read them with "
        "parse_videoscore2_reply",
    ),
    SpecializedJudge(
        "videophy2",
        "VideoPhy2 AutoEval (Bansal et al., 2026)",
        ("physical_commonsense", "semantic_adherence"),
        (1.0, 5.0),
        videophy2,
        checkpoint="videophysics/videophy_2_auto",
        note="adapter only: the released rater runs on its authors' mPLUG-Owl code, not transformers",
    ),
    SpecializedJudge(
        "videocon",
        "VideoCon-Physics (Bansal et al., 2024)",
        ("physical_commonsense", "semantic_adherence"),
        (0.0, 1.0),
        videocon,
        checkpoint="videophysics/videocon_physics",
        note="adapter only: the released entailment model runs on its authors' mPLUG-Owl code",
    ),
    SpecializedJudge(
        "phyjudge",
        "PhyJudge (Lin et al., 2026)",
        ("trustworthiness", "persistence", "semantic_adherence"),
        (1.0, 5.0),
        phyjudge,
        note="adapter only: no released checkpoint known to robojudge; native scale taken as 1-5 "
        "(App. B.2 maps it without a transform)",
    ),
    SpecializedJudge(
        "wbench",
        "WBench visual-quality evaluator (Ying et al., 2026)",
        ("visual_quality",),
        (1.0, 5.0),
        wbench,
        note="adapter only, PA only: no released checkpoint known to robojudge; native scale taken "
        "as 1-5 (App. B.2 maps it without a transform)",
    ),
):
    SPECIALIZED.add(_spec.name, _spec)


def adapt_native(name: str, scores: Mapping[str, float]) -> PaIa:
    """Map one item's native scores of the specialized judge ``name`` onto PA/IA.

    Args:
        name: ``videoscore2``, ``videophy2``, ``videocon``, ``phyjudge`` or ``wbench``.
        scores: Native score name -> value (see ``SPECIALIZED.get(name).native``).

    Raises:
        NativeScoreError: A score is missing, not a finite number, or outside the native range.
        UnknownNameError: ``name`` is not a specialized judge.
    """
    spec = SPECIALIZED.get(name)
    lo, hi = spec.native_range
    values: list[float] = []
    for key in spec.native:
        if key not in scores:
            raise NativeScoreError(
                f"{name}: native score {key!r} is missing (needs {', '.join(spec.native)})"
            )
        raw = scores[key]
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise NativeScoreError(f"{name}: native score {key!r} is {raw!r}, not a finite number")
        if not lo <= raw <= hi:
            raise NativeScoreError(f"{name}: native score {key!r} = {raw!r} is outside {lo:g}-{hi:g}")
        values.append(float(raw))
    return spec.adapt(*values)


_VS2_PATTERNS = {
    "visual_quality": r"visual\s+quality",
    "alignment": r"(?:text(?:[\s-]+to[\s-]+video)?\s+)?alignment",
    "physical": r"physical(?:\s*/\s*common[\s-]*sense)?(?:\s+consistency)?",
}


def parse_videoscore2_reply(text: str) -> dict[str, float]:
    """The three scores from a VideoScore2 reply: ``visual_quality``, ``alignment``, ``physical``.

    Reads ``<name>: <number>`` (also ``=``, ``**name**: 4``) after any reasoning; the last mention of
    each wins. Raises :class:`NativeScoreError` naming the scores it could not find.
    """
    body = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL | re.IGNORECASE)
    out: dict[str, float] = {}
    for key, pat in _VS2_PATTERNS.items():
        found = re.findall(pat + r"[\s*_\"']*(?:score)?[\s*_\"']*[:=]\s*\**\s*(\d+(?:\.\d+)?)", body, re.I)
        if found:
            out[key] = float(found[-1])
    missing = [k for k in _VS2_PATTERNS if k not in out]
    if missing:
        raise NativeScoreError(f"videoscore2: reply has no {', '.join(missing)} score")
    return out


def specialized_judge_config(name: str, *, judge_name: str | None = None, **overrides: object) -> JudgeConfig:
    """A ``hf`` judge config that loads the specialized judge's checkpoint (VideoScore2 only).

    The model is the checkpoint's repository at its pinned revision; pass ``model=<local folder>``
    (and ``revision=None``) to run a local copy, with ``HF_HUB_OFFLINE=1`` to forbid downloads.

    Raises:
        NativeScoreError: The judge has no checkpoint robojudge can run (adapter only).
    """
    spec = SPECIALIZED.get(name)
    if spec.loader != "hf" or spec.checkpoint is None:
        raise NativeScoreError(f"{name}: no checkpoint robojudge can run ({spec.note}); use adapt_native")
    values: dict[str, object] = {
        "name": judge_name or name,
        "backend": "hf",
        "model": spec.checkpoint,
        "revision": spec.revision,
    }
    values.update(overrides)
    return make_judge(values)
