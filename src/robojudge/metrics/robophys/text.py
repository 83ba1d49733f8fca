"""Text metrics over a caption of the video: BLEU against the instruction (RoboPhys-3D App. B.3.6).

The paper (following EWMBench) has a video captioner write a global caption of the generated video
and scores it against the raw task instruction with BLEU. robojudge computes the BLEU part here with
sacrebleu; the caption comes from outside this metric (a judge or captioner run, or a person), through
one of two inputs, looked up in this order:

1. the manifest row's ``meta.caption`` (a string), e.g. ``{"item_id": "a", ..., "meta": {"caption":
   "the robot picks up the red cube"}}``;
2. a captions file passed as the metric's ``captions`` config (``--set sa_bleu.captions=FILE``): a
   JSON object mapping item ids to captions (``{"a": "the robot ..."}``) or JSON Lines with
   ``item_id`` and ``caption`` fields.

Without a caption the metric fails for that item with an error saying how to provide one.

Both texts are composed (Unicode NFC) before they are compared. sacrebleu's default tokenizer (13a)
splits at spaces and punctuation, so a Chinese, Japanese or Thai sentence would be one token and any
difference would score 0. The default ``tokenize``, ``auto``, therefore compares characters (sacrebleu's
``char``) where the caption or the instruction holds any Han character, kana, Hangul or Thai
(:func:`robojudge._chars.holds_cjk_thai`), and 13a words elsewhere; a tokenizer named in the config
(``13a``, ``char``, ``zh``, ...) is used as given. ``details.tokenize`` says which tokens were compared.
"""

from __future__ import annotations

import unicodedata

from pydantic import BaseModel, ConfigDict, Field

from robojudge._chars import count_words, holds_cjk_thai
from robojudge.metrics import functional as F
from robojudge.metrics._errors import MetricInputError
from robojudge.metrics._registry import Family, Input
from robojudge.metrics._score import Score
from robojudge.metrics._texts import load_item_texts, meta_gives_text
from robojudge.metrics.robophys._spec import robophys_metric
from robojudge.suite._schema import Item

EWMBENCH = "EWMBench (2025)"
CAPTION_KEY = "caption"
AUTO_TOKENIZE = "auto"


class BleuConfig(BaseModel):
    """Where captions come from and sacrebleu's sentence-BLEU settings (its defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    captions: str | None = Field(
        default=None,
        description="JSON {item_id: caption} or JSONL file; used when meta.caption is absent or blank",
        json_schema_extra={"item_text": CAPTION_KEY},  # its results' fingerprints hold the item's caption
    )
    tokenize: str = Field(
        default=AUTO_TOKENIZE,
        description="sacrebleu tokenizer (13a = mteval-v13a, its default; char = characters; ...), or "
        "'auto': char where either text holds a Han character, kana, Hangul or Thai, else 13a",
    )
    lowercase: bool = Field(default=False, description="lowercase caption and instruction first")
    smooth_method: str = Field(default="exp", description="sentence smoothing: exp, floor, add-k or none")


def find_caption(item: Item, captions: str | None) -> str:
    """The caption of ``item``: ``meta.caption``, else its entry in the ``captions`` file.

    Raises:
        MetricInputError: When neither holds a non-empty caption, or the file cannot be read.
    """
    caption = item.meta.get(CAPTION_KEY)
    if caption is not None and not isinstance(caption, str):
        kind = type(caption).__name__
        raise MetricInputError(f"item {item.item_id!r}: meta.caption must be a string, got {kind}")
    if not meta_gives_text(caption, allow_lists=False) and captions:
        caption = load_item_texts(captions, CAPTION_KEY).get(item.item_id)
    if not caption or not caption.strip():
        where = f" nor in captions file {captions}" if captions else ""
        raise MetricInputError(
            f"item {item.item_id!r} has no caption in meta.caption{where}: sa_bleu scores a caption of the "
            "video against the instruction; put the captioner's text in the manifest's meta.caption or pass "
            "`--set sa_bleu.captions=<file.json>` to `robojudge score`"
        )
    return caption


@robophys_metric(
    "sa_bleu",
    family=Family.text,
    inputs={Input.video, Input.instruction},
    description=(
        "BLEU (sacrebleu sentence BLEU, 13a tokens, or characters where a text holds Chinese, Japanese, "
        "Korean or Thai, exp smoothing, /100) of a global caption of the video against the task "
        "instruction. The caption is an input (manifest meta.caption, or a captions file given as config "
        "'captions'); robojudge does not run the paper's captioner here."
    ),
    config=BleuConfig,
    note=f"caption-vs-instruction BLEU of {EWMBENCH}; caption supplied by the user or a judge run",
    # 3: texts composed (NFC) first, characters compared where a text holds CJK or Thai (tokenize "auto";
    # v2: one 13a token a sentence, so such a caption scored 0 or 1); 2: a perfect caption is 1, not
    # sacrebleu's 1 + 4e-16 above the range
    version="3",
)
def sa_bleu(item: Item, config: BleuConfig) -> Score:
    """BLEU of the video's caption against the instruction (RoboPhys-3D App. B.3.6).

    The paper captions the video with a VLM and compares the caption with the raw instruction
    (the single reference) by BLEU (:func:`robojudge.metrics.functional.bleu`). The score is sacrebleu's
    sentence BLEU with effective order (short
    sentences are not zeroed by missing 4-grams) divided by 100, on characters where the caption or the
    instruction holds Chinese, Japanese, Korean or Thai and ``tokenize`` is ``auto`` (:func:`bleu_tokenizer`).
    """
    if not item.instruction:
        raise MetricInputError(f"item {item.item_id!r} has no instruction to compare the caption with")
    caption = unicodedata.normalize("NFC", find_caption(item, config.captions))
    instruction = unicodedata.normalize("NFC", item.instruction)
    tokenize = bleu_tokenizer(caption, instruction, config.tokenize)
    value = F.bleu(caption, instruction, tokenize=tokenize, lowercase=config.lowercase,
                   smooth_method=config.smooth_method)
    return Score(value=value, details={"caption_words": count_words(caption), "tokenize": tokenize})


def bleu_tokenizer(caption: str, instruction: str, tokenize: str) -> str:
    """The sacrebleu tokenizer ``sa_bleu`` compares ``caption`` and ``instruction`` with: for ``auto`` (the
    default), ``char`` when either text holds a Han character, kana, Hangul or Thai, else ``13a``; any
    other ``tokenize`` as configured, so ``13a`` keeps word BLEU (version 2's) on any text.

    The rule looks for any such character rather than weighing scripts, so that one English suite whose
    instructions name a few objects in Chinese is scored on one scale, whatever each sentence's length:
    character BLEU runs higher than word BLEU on the same English pair, and the two must not be averaged.

    13a splits at spaces and punctuation. Chinese, Japanese and Thai put no space between words, so a
    sentence would be one token and any difference would score 0; Korean puts spaces between words, but
    a word carries its particles and endings, so whole words rarely match. ``char`` splits every
    character and covers all four scripts with nothing to install; sacrebleu's ``zh`` splits only Han
    characters (a Japanese sentence's kana, Hangul and Thai stay whole), and ``ja-mecab`` and
    ``ko-mecab`` need MeCab and its dictionaries.
    """
    if tokenize != AUTO_TOKENIZE:
        return tokenize
    return "char" if holds_cjk_thai(caption) or holds_cjk_thai(instruction) else "13a"
