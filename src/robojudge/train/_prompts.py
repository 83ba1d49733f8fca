"""Ten generation prompts per clip (RoboJudge Sec. 3.3, App. D): five rewrites and five prefixes.

For each source clip the instruction is turned into ten text-to-video prompts:

* five **rewrites** by a language model, one under each rewriting instruction for the clip's
  manipulation type (a robot, or a human hand). Every instruction asks for at most about 100 words,
  the object's name kept word for word, and an ending at the state where the task is done; they
  differ in style (plain narrative, phases, imperative, verb-first, sub-actions). The model is any
  judge backend, asked a text-only request.
* five **prefixes**: a fixed sentence opening for the type, then the instruction verbatim (no
  model involved).

A rewrite is checked: not empty, at most ``max_words`` words (a Han character or a kana counts as a
word, :func:`check_rewrite`), and holding the object's name when the
item names it in ``meta.object`` (a row with ``object: null`` was not checked for it). A rewrite
that fails is asked again once per ``retries`` with the reason quoted; one that still fails is kept,
marked ``valid: false`` with its problem. Replies are cached in the judges' response cache, so a
rerun asks nothing again.

The output is a JSONL manifest of generation prompts: one row per (clip, variant) with
``clip_id``, ``item_id``, ``prompt_variant`` (``rewrite-1`` ... ``prefix-5``), ``kind``, ``type``,
``instruction``, ``prompt``, ``object``, ``valid`` and ``problem``.

The wordings are robojudge's own, written to the paper's constraints.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

from robojudge._aio import run_coroutine
from robojudge._chars import count_words
from robojudge._files import replacing
from robojudge.judges import Backend, BackendError, ChatRequest, Completion, JudgeConfig, ResponseCache
from robojudge.suite import Embodiment, Item

PromptType = Literal["robot", "human"]

_COMMON = (
    "Keep it under 100 words. Use the name of the object from the instruction exactly as written. "
    "End with the task finished. Answer with the prompt only, no title, quotes or notes."
)

REWRITE_INSTRUCTIONS: dict[str, tuple[str, ...]] = {
    "robot": (
        "Turn the task instruction into a short text-to-video prompt in plain narrative: the robot "
        "gripper carries out the action on the object from start to finish. Say little about the "
        "surroundings; the robot's motion is the subject.",
        "Turn the task instruction into a text-to-video prompt that walks through its phases: the "
        "gripper reaches the object, grasps it, does the task and lets go once it is done. Mention the "
        "scene only where it helps place the object.",
        "Turn the task instruction into a text-to-video prompt written as a command to the robot arm: "
        "tell it to do the task on the object and to stop in the finished state. Use strong action "
        "verbs and few background details.",
        "Turn the task instruction into a text-to-video prompt that opens with the action verb and then "
        "follows what the robot gripper does to the object until the task is complete. Keep any "
        "background brief.",
        "Turn the task instruction into a text-to-video prompt broken into small steps the robot "
        "gripper performs on the object: approaching it, making contact, and the final state. Hold "
        "back on scene description.",
    ),
    "human": (
        "Turn the task instruction into a short text-to-video prompt in plain narrative: a person's "
        "hand carries out the action on the object from start to finish. Say little about the "
        "surroundings; the hand's motion is the subject.",
        "Turn the task instruction into a text-to-video prompt that walks through its phases: the hand "
        "reaches the object, grasps it, does the task and lets go once it is done. Mention the scene "
        "only where it helps place the object.",
        "Turn the task instruction into a text-to-video prompt written as a command to the person's "
        "hand: tell it to do the task on the object and to stop in the finished state. Use strong "
        "action verbs and few background details.",
        "Turn the task instruction into a text-to-video prompt that opens with the action verb and then "
        "follows what the person's hand does to the object until the task is complete. Keep any "
        "background brief.",
        "Turn the task instruction into a text-to-video prompt broken into small steps the person's "
        "hand performs on the object: approaching it, making contact, and the final state. Hold back "
        "on scene description.",
    ),
}

PREFIXES: dict[str, tuple[str, ...]] = {
    "robot": (
        "In a fixed robot workspace, a rigid robot arm that keeps its shape throughout moves to",
        "On a steady workbench, a solid, undeformed robot arm starts to",
        "In a stationary manipulation setup, a physically consistent robot arm goes on to",
        "In a robot work cell, a stable robot arm",
        "A rigid robot arm in a fixed workspace, moving plausibly, goes on to",
    ),
    "human": (
        "In a first-person video, a real human hand starts to",
        "Seen from the person's own eyes, their hand goes on to",
        "In a real first-person scene, a person's hand begins to",
        "Filmed from a head-worn camera, the person's bare hand starts to",
        "In an egocentric recording, the person's hand moves to",
    ),
}


@dataclass(frozen=True)
class PromptRow:
    """One generation prompt of one clip."""

    clip_id: str
    item_id: str
    prompt_variant: str
    kind: Literal["rewrite", "prefix"]
    type: str
    instruction: str
    prompt: str
    object: str | None
    valid: bool
    problem: str | None = None


def prompt_type(item: Item) -> PromptType:
    """``human`` for a human hand, else ``robot`` (grippers, dexterous and humanoid hands alike)."""
    return "human" if item.embodiment == Embodiment.human_hand else "robot"


def object_name(item: Item) -> str | None:
    """The manipulated object's name, from ``meta.object`` (``None`` when the item does not say)."""
    value = item.meta.get("object")
    return value.strip() if isinstance(value, str) and value.strip() else None


def prefixed(prefix: str, instruction: str) -> str:
    """The prefix, one space, then the instruction exactly as given."""
    return f"{prefix} {instruction}"


def check_rewrite(text: str, obj: str | None, max_words: int = 100) -> str | None:
    """Why a rewrite is unusable, or ``None`` when it is fine.

    Words are counted as word processors count them (:func:`robojudge._chars.count_words`): a Chinese
    or Japanese rewrite has no spaces between words, so each Han character and kana counts as one (by
    spaces, 600 characters of Chinese were one word and always passed).
    """
    if not text.strip():
        return "empty reply"
    words = count_words(text)
    if words > max_words:
        by_char = " (each Chinese or Japanese character counts as one)" if words > len(text.split()) else ""
        return f"{words} words{by_char}, more than {max_words}"
    if obj is not None and obj.lower() not in text.lower():
        return f"the object name {obj!r} is missing"
    return None


def clean_reply(text: str) -> str:
    """The reply without surrounding whitespace, quotes, or a leading ``Prompt:`` label."""
    text = re.sub(r"^\s*(?:prompt|rewritten prompt)\s*:\s*", "", text.strip(), flags=re.IGNORECASE)
    return text.strip().strip("\"'\u201c\u201d").strip()


def _key(config: JudgeConfig, request: ChatRequest) -> str:
    canon = json.dumps({"kind": "prompt-rewrite", "judge": config.identity(), "system": request.system,
                        "user": request.user, "history": request.history}, sort_keys=True)
    return hashlib.sha256(canon.encode()).hexdigest()


async def _ask(backend: Backend, config: JudgeConfig, cache: ResponseCache, request: ChatRequest) -> str:
    key = _key(config, request)
    hit = cache.get_reply(key)
    if hit is None:
        hit = await backend.complete(request)
        cache.put_reply(key, Completion(text=hit.text, meta=hit.meta))
    return hit.text


async def _rewrite(backend: Backend, config: JudgeConfig, cache: ResponseCache, template: str,
                   instruction: str, obj: str | None, max_words: int, retries: int,
                   sem: asyncio.Semaphore) -> tuple[str, str | None]:
    s = config.sampling
    system = f"{template} {_COMMON}"
    user = f"Task instruction: {instruction}"
    if obj is not None:
        user += f"\nObject name (keep it word for word): {obj}"
    request = ChatRequest(system=system, user=user, frames=None, temperature=s.temperature, top_p=s.top_p,
                          seed=s.seed, max_tokens=min(s.max_tokens, 4 * max_words))
    text: str = ""
    problem: str | None = "not asked"
    for _ in range(retries + 1):
        async with sem:
            try:
                text = clean_reply(await _ask(backend, config, cache, request))
            except BackendError as exc:
                return "", f"request failed: {exc}"
        problem = check_rewrite(text, obj, max_words)
        if problem is None:
            return text, None
        note = f"That prompt cannot be used: {problem}. Write it again. {_COMMON}"
        request = replace(request, history=(("assistant", text), ("user", note)))
    return text, problem


def _clips(items: Sequence[Item]) -> tuple[list[Item], list[str]]:
    """The first item of each clip that has an instruction; and the clips left out, with why."""
    seen: dict[str, Item] = {}
    empty: dict[str, str] = {}  # clip -> its first item without an instruction
    for it in items:
        clip = it.clip_id or it.item_id
        if clip in seen:
            continue
        if not (it.instruction or "").strip():
            empty.setdefault(clip, it.item_id)
            continue
        seen[clip] = it
    # a clip whose later item has an instruction has its prompts: only clips with none are left out
    skipped = [f"item {first!r}, field instruction: empty, so clip {clip!r} has no prompts (none of its "
               "items has an instruction)" for clip, first in empty.items() if clip not in seen]
    return list(seen.values()), skipped


async def _variants(items: Sequence[Item], config: JudgeConfig, backend: Backend, cache: ResponseCache,
                    max_words: int, retries: int) -> list[PromptRow]:
    sem = asyncio.Semaphore(config.concurrency)
    jobs = []
    for it in items:
        kind = prompt_type(it)
        instruction = (it.instruction or "").strip()
        obj = object_name(it)
        for template in REWRITE_INSTRUCTIONS[kind]:
            jobs.append(_rewrite(backend, config, cache, template, instruction, obj, max_words, retries, sem))
    rewrites = await asyncio.gather(*jobs)
    rows: list[PromptRow] = []
    n = 0
    for it in items:
        kind = prompt_type(it)
        instruction = (it.instruction or "").strip()
        obj = object_name(it)
        clip = it.clip_id or it.item_id
        for k in range(len(REWRITE_INSTRUCTIONS[kind])):
            text, problem = rewrites[n]
            n += 1
            rows.append(PromptRow(clip, it.item_id, f"rewrite-{k + 1}", "rewrite", kind, instruction, text,
                                  obj, problem is None, problem))
        for k, prefix in enumerate(PREFIXES[kind]):
            rows.append(PromptRow(clip, it.item_id, f"prefix-{k + 1}", "prefix", kind, instruction,
                                  prefixed(prefix, instruction), obj, True, None))
    return rows


@dataclass(frozen=True)
class PromptsSummary:
    """What :func:`prompt_variants` wrote: the rows, the output file, clips left out and why."""

    out: Path
    rows: list[PromptRow]
    skipped: list[str]

    @property
    def invalid(self) -> int:
        return sum(not r.valid for r in self.rows)


def prompt_variants(items: Sequence[Item], config: JudgeConfig, out: str | Path, *,
                    backend: Backend | None = None, cache: ResponseCache | None = None, max_words: int = 100,
                    retries: int = 1) -> PromptsSummary:
    """Ten generation prompts per clip, written to ``out`` as JSONL (see the module docstring).

    Args:
        items: Suite items; the first item of each clip gives its instruction and manipulation type.
        config: The language model that rewrites (any judge; asked text only).
        out: The manifest file to write.
        backend: The backend to use (default: ``make_backend(config)``; tests pass a mock).
        cache: Where replies are remembered (default: the judges' default cache folder).
        max_words: Longest valid rewrite, in words.
        retries: Extra requests for a rewrite that fails its checks.
    """
    from robojudge.judges import make_backend
    from robojudge.run import with_model_files

    config = with_model_files(config)  # a local model folder's files, in the rewrites' cache key too
    clips, skipped = _clips(items)
    own_cache = cache is None
    store = cache if cache is not None else ResponseCache()
    be = backend if backend is not None else make_backend(config)

    async def rewrite_all() -> list[PromptRow]:
        try:
            rows = await _variants(clips, config, be, store, max_words, retries)
        except BaseException:
            if backend is None:
                with contextlib.suppress(Exception):  # the first error is the one to see
                    await be.aclose()
            raise
        if backend is None:
            await be.aclose()
        return rows

    try:
        rows = run_coroutine(rewrite_all())
    finally:
        if own_cache:
            store.close()
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing() as files, files.open(path) as f:  # the old file or the whole new one
        for row in rows:
            f.write(json.dumps(asdict(row), ensure_ascii=False) + "\n")
    return PromptsSummary(path, rows, skipped)
