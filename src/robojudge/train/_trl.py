"""``robojudge train sft|grpo``: the two stages of RoboJudge's judge training on TRL (Sec. 4.2, App. G).

* SFT: full-parameter fine-tuning on the exported records, one epoch, global batch 64, lr 1e-5;
  the loss covers the reply only (:class:`._collate.JudgeSFTCollator`).
* GRPO: from the SFT checkpoint, 200 optimizer steps (App. G.1), lr 1e-6, 8 completions per prompt of
  at most 512 tokens, 2 prompts per device and 8 gradient-accumulation steps, rewarded by the
  exact-match reward (:func:`robojudge.train.exact_match_reward`), optionally plus the format reward.

Every setting can be overridden. ``lora`` trains a LoRA adapter (peft) instead of all parameters and
merges it before saving, so the output folder is always a full checkpoint the ``hf`` judge backend
loads like any model (``backend = "hf"``, ``model = "<out>"``). The folder also gets
``robojudge-train.json``: stage, base model, data, settings and the logged losses.

torch, transformers, trl, peft and datasets are imported inside the functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from robojudge._files import replace_text
from robojudge._json import jsonl_records
from robojudge.train._export import EXPORT_FILE
from robojudge.train._reward import REWARDS

TRAIN_FILE = "robojudge-train.json"
STAGES = ("base", "sft", "rl", "sft+rl")


class TrainingError(RuntimeError):
    """Training that cannot start: missing extra, unreadable data, bad settings."""


@dataclass(frozen=True)
class SFTSettings:
    """SFT settings; the defaults are RoboJudge App. G's (one epoch: ``max_steps`` -1). A ``max_steps`` other
    than -1 sets the length instead, and then ``epochs`` must stay 1 (:class:`GRPOSettings`)."""

    epochs: float = 1.0
    global_batch: int = 64
    per_device_batch: int = 1
    learning_rate: float = 1e-5
    max_steps: int = -1
    lora: bool = False
    lora_rank: int = 16
    seed: int = 0


@dataclass(frozen=True)
class GRPOSettings:
    """GRPO settings; the defaults are RoboJudge App. G's.

    ``prompts_per_device`` counts prompts, as the paper does (2 per device, times 8 accumulation steps
    and 8 completions each: on the paper's 4 GPUs, 64 prompts and 512 completions per update); TRL's
    ``per_device_train_batch_size`` counts completions and is set to ``prompts_per_device *
    num_generations``.

    The length is ``max_steps`` (App. G.1's 200 optimizer steps) unless it is -1, when ``epochs`` passes
    over the data are trained instead. Both set (``epochs`` other than 1 and ``max_steps`` other than
    -1) is refused when training starts, as TRL would train the steps and drop the epochs; the same rule
    holds for :class:`SFTSettings`, whose ``max_steps`` defaults to -1.
    """

    prompts_per_device: int = 2
    grad_accumulation: int = 8
    num_generations: int = 8
    learning_rate: float = 1e-6
    max_completion_length: int = 512
    #: App. G.1 stops GRPO at 200 optimizer steps, whatever the data's size. TRL's ``max_steps`` overrides
    #: its epochs, so ``epochs`` counts only when this is -1, and an ``epochs`` other than 1 with a
    #: ``max_steps`` other than -1 is refused (it would be dropped without a word): pass
    #: ``max_steps=-1, epochs=N`` to train by epochs.
    max_steps: int = 200
    epochs: float = 1.0
    temperature: float = 1.0
    rewards: tuple[str, ...] = ("exact",)
    lora: bool = False
    lora_rank: int = 16
    seed: int = 0


@dataclass(frozen=True)
class TrainResult:
    """A finished stage: the checkpoint folder, its stage and first model, optimizer steps and the
    logged training losses."""

    out: Path
    stage: str
    steps: int
    losses: list[float]
    log: list[dict[str, Any]] = field(default_factory=list)
    base_model: str = ""
    frames: dict[str, Any] = field(default_factory=dict)
    """The export's frame sampling (:meth:`robojudge.judges.FrameSpec.as_dict`): what the model saw."""
    max_images: int | None = None
    """The export's ``max_images``."""
    notes: list[str] = field(default_factory=list)
    """What the user should know (the export was replaced while the model trained on it)."""

    def judge_toml(self, name: str) -> str:
        """A judges-file entry that evaluates this checkpoint as an ``hf`` judge, with its stage, the
        ``max_images`` it was trained with, and in a comment the ``robojudge judge`` options that sample
        frames as its training data did."""
        text = (f'[judges.{name}]\nbackend = "hf"\nmodel = {json.dumps(str(self.out.resolve()))}\n'
                f'stage = "{self.stage}"\nbase_model = {json.dumps(self.base_model)}\n')
        if self.max_images is not None:
            text += f"max_images = {self.max_images}\n"
        if self.frames:
            text += f"# trained on frames sampled as: robojudge judge ... {frame_options(self.frames)}\n"
        return text


def frame_options(frames: Mapping[str, Any]) -> str:
    """The ``robojudge judge`` options that sample frames as ``frames`` (a :meth:`FrameSpec.as_dict`)."""
    opts = [f"--fps {frames.get('fps', 4.0):g}", f"--max-frames {frames.get('max_frames', 32)}"]
    size = frames.get("size")
    if isinstance(size, int):
        opts.append(f"--size {size}")
    elif size is not None:  # (width, height): the Python API's FrameSpec only; the CLI takes the longer side
        opts.append(f"and FrameSpec(size={tuple(size)})")
    if frames.get("grid_view", "main") != "main":
        opts.append(f"--grid-view {frames['grid_view']}")
    return " ".join(opts)


def _imports() -> tuple[Any, Any, Any, Any]:
    try:  # trl first: without it nothing else need load
        import trl  # noqa: I001
        import datasets
        import torch
        import transformers
    except ImportError as exc:
        raise TrainingError(f"training needs torch, transformers, trl and datasets ({exc}); "
                            "pip install '.[torch,train]' in a robojudge checkout") from None
    return torch, transformers, trl, datasets


def export_info(data: str | Path) -> dict[str, Any]:
    """An export folder's ``export.json`` (empty when it cannot be read)."""
    try:
        info = json.loads((Path(data) / EXPORT_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def load_records(data: str | Path, split: str = "train") -> list[dict[str, Any]]:
    """The ``trl`` records of one split of an export, media paths made absolute.

    Raises:
        TrainingError: Not an export folder, not the ``trl`` format, or the split is empty.
    """
    root = Path(data)
    meta_path = root / EXPORT_FILE
    if not meta_path.is_file():
        raise TrainingError(f"{root}: no {EXPORT_FILE}; make the data with `robojudge train export`")
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != "trl":
        raise TrainingError(f"{root}: exported as {meta.get('format')!r}; robojudge train reads --format trl")
    path = root / f"{split}.jsonl"
    if not path.is_file():
        raise TrainingError(f"{root}: no {split} records ({path.name} is missing)")
    records = []
    base = root.resolve()
    for line_no, rec in jsonl_records(path, TrainingError):  # (split on "\n" only, as the export writes)
        if not isinstance(rec, dict):
            raise TrainingError(f"{path}, line {line_no}: not a record (a JSON object)")
        where = f"{path}, line {line_no}, record {rec.get('id', '?')!r}"
        for key in ("prompt", "completion", "score", "rubric", "item_id"):
            if key not in rec:
                raise TrainingError(f"{where}: field {key} is missing")
        fps = rec.get("fps")
        if fps is not None and (isinstance(fps, bool) or not isinstance(fps, (int, float)) or not fps > 0):
            raise TrainingError(f"{where}: field fps: {fps!r} is not a frame rate (a positive number)")
        try:
            for m in rec["prompt"]:
                for c in m["content"]:
                    if c["type"] == "video":
                        c["video"] = [str(base / p) for p in c["video"]]
                        media = c["video"]
                    elif c["type"] == "image" and c.get("image"):
                        c["image"] = str(base / c["image"])
                        media = [c["image"]]
                    else:
                        continue
                    missing = next((f for f in media if not Path(f).is_file()), None)
                    if missing is not None:
                        raise TrainingError(f"{where}: field prompt: frame {missing} is missing")
        except (KeyError, TypeError) as exc:
            raise TrainingError(f"{where}: field prompt: not a list of chat messages ({exc!r})") from None
        records.append(rec)
    if not records:
        raise TrainingError(f"{path}: no records")
    return records


DEVICES = ("auto", "cpu", "cuda")


#: Each setting's lower bound (strict for ">"): the CLI option it comes from is named in the error.
_BOUNDS: dict[str, tuple[str, float, str]] = {
    "epochs": (">", 0, "--epochs"), "global_batch": (">=", 1, "--global-batch"),
    "per_device_batch": (">=", 1, "--per-device-batch"), "learning_rate": (">", 0, "--lr"),
    "lora_rank": (">=", 1, "lora_rank"), "prompts_per_device": (">=", 1, "--prompts-per-device"),
    "grad_accumulation": (">=", 1, "--grad-accumulation"), "num_generations": (">=", 2, "--generations"),
    "max_completion_length": (">=", 1, "--max-completion-length"), "temperature": (">", 0, "temperature"),
}


def _check_settings(settings: Any) -> None:
    """Refuse settings TRL would take and train wrongly with (a global batch of 0 ran as 1, 0 steps saved
    an untouched model as trained) or fail on deep inside (0 generations divided by zero).

    Raises:
        TrainingError: Naming the option and the value.
    """
    for name, (op, low, flag) in _BOUNDS.items():
        value = getattr(settings, name, None)
        if value is None:
            continue
        ok = math.isfinite(value) and (value > low if op == ">" else value >= low)
        if not ok:
            raise TrainingError(f"{flag} {value}: must be {op} {low:g}")
    if settings.max_steps != -1 and settings.max_steps < 1:
        raise TrainingError(f"--max-steps {settings.max_steps}: must be -1 (train for --epochs) or at "
                            "least 1")
    if settings.max_steps != -1 and settings.epochs != 1.0:  # TRL trains max_steps and drops the epochs
        raise TrainingError(f"epochs {settings.epochs:g} (--epochs) with max_steps {settings.max_steps} "
                            "(--max-steps): TRL trains the steps and ignores the epochs; pass max_steps -1 "
                            "to train by epochs, or leave epochs at 1")


def _check_overrides(overrides: Mapping[str, Any] | None) -> None:
    """Refuse overrides robojudge would take and not act on.

    Raises:
        TrainingError: ``resume_from_checkpoint`` (TRL reads it in ``trainer.train()``, not from its
            config: the training would start again from the model while its record named the resume).
    """
    if overrides and "resume_from_checkpoint" in overrides:
        raise TrainingError(f"overrides: resume_from_checkpoint {overrides['resume_from_checkpoint']!r}: "
                            "robojudge train does not resume a training (it would start again from --model "
                            "and the record would name the checkpoint); train again from the start, or "
                            "continue from a saved checkpoint as a new stage (--model CHECKPOINT)")


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise TrainingError(f"--device {device!r}: use one of {', '.join(DEVICES)}")


def _device(torch: Any, device: str) -> tuple[bool, Any]:
    """(use the CPU, dtype to load in)."""
    cpu = device == "cpu" or (device == "auto" and not torch.cuda.is_available())
    return cpu, torch.float32 if cpu else torch.bfloat16


def _load(transformers: Any, torch: Any, model: str, cpu: bool, dtype: Any) -> tuple[Any, Any]:
    try:
        processor = transformers.AutoProcessor.from_pretrained(model)
        net = transformers.AutoModelForImageTextToText.from_pretrained(model, dtype=dtype)
    except (OSError, ValueError) as exc:
        raise TrainingError(f"cannot load model {model!r}: {exc}") from None
    return processor, net


def _lora(net: Any, rank: int) -> Any:
    try:
        import peft
    except ImportError:
        raise TrainingError("--lora needs peft; pip install '.[train]' in a robojudge checkout") from None
    config = peft.LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules="all-linear",
                             task_type="CAUSAL_LM")
    return peft.get_peft_model(net, config)


def _save(trainer: Any, processor: Any, out: Path, lora: bool) -> None:
    """Save the model and processor into ``out``. A previous training's ``robojudge-train.json`` there is
    removed first, and the caller writes the new one last: a save stopped half-way (Ctrl-C, SIGTERM)
    leaves no record describing the other training beside the new weights, so the folder says nothing
    rather than something false (the judges leaderboard reads the stage from it)."""
    (out / TRAIN_FILE).unlink(missing_ok=True)
    model = trainer.model
    if lora:
        model = model.merge_and_unload()
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _losses(log: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(e["loss"]) for e in log if "loss" in e]


def trained_from(model: str) -> dict[str, Any]:
    """The ``robojudge-train.json`` of a local checkpoint folder (empty for anything else)."""
    path = Path(model) / TRAIN_FILE
    try:
        info = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, json.JSONDecodeError):
        return {}
    return info if isinstance(info, dict) else {}


def trained_items_of(info: Mapping[str, Any]) -> list[str]:
    """The item ids a training record (``robojudge-train.json``) says its checkpoint was trained on."""
    items = info.get("train_items")
    return [str(i) for i in items] if isinstance(items, list) else []


def _finish(trainer: Any, processor: Any, out: Path, stage: str, model: str, data: str | Path,
            settings: Any, lora: bool, overrides: Mapping[str, Any] | None, export: Mapping[str, Any],
            records: Sequence[Mapping[str, Any]]) -> TrainResult:
    """Save the checkpoint and its ``robojudge-train.json``. ``export`` is the data's ``export.json`` as
    read when its ``records`` were loaded, before training: what the model was trained on."""
    if int(trainer.state.global_step) == 0:
        raise TrainingError(f"{data}: training took no step (too few records for one batch?); nothing saved "
                            f"to {out}")
    before = trained_from(model)
    if stage == "rl":  # RL on an SFT checkpoint is the paper's SFT+RL stage
        stage = "sft+rl" if before.get("stage") == "sft" else "rl"
    _save(trainer, processor, out, lora)
    log = [dict(e) for e in trainer.state.log_history]
    losses = _losses(log)
    local = Path(model)
    base = str(before.get("base_model") or (local.resolve() if local.is_dir() else model))
    # Which export it was trained on: the one read at the start (a re-export into the same folder has
    # another digest, and one finished while this trained must not be recorded as the data trained on).
    digest = export.get("digest")
    notes = []
    now = export_info(data).get("digest")
    if now != digest:
        notes.append(f"{Path(data) / EXPORT_FILE} changed while the model trained (digest {str(digest)[:12]} "
                     f"at the start, {str(now)[:12]} now): robojudge-train.json records the start's; frames "
                     "read during training may be the new export's, so export into a new folder and train "
                     "again to be sure")
    frames = export.get("frames") if isinstance(export.get("frames"), dict) else {}
    max_images = export.get("max_images") if isinstance(export.get("max_images"), int) else None
    result = TrainResult(out, stage, int(trainer.state.global_step), losses, log, base, dict(frames or {}),
                         max_images, notes)
    # Every item the checkpoint has been trained on, an earlier stage's included: judging them is not
    # held-out evaluation (robojudge judge and leaderboard judges warn).
    items = sorted({str(r["item_id"]) for r in records} | set(trained_items_of(before)))
    info = {"stage": stage, "base_model": base, "trained_from": model,
            "data": str(Path(data).resolve()), "data_digest": digest, "frames": result.frames,
            "max_images": max_images, "settings": asdict(settings),
            "overrides": dict(overrides or {}), "steps": result.steps, "losses": losses,
            "finite": all(math.isfinite(v) for v in losses), "train_items": items, "notes": notes}
    replace_text(out / TRAIN_FILE, json.dumps(info, indent=2, default=str) + "\n", root=out, named=True)
    return result


def _require_rates(records: Sequence[dict[str, Any]], data: str | Path) -> None:
    """Refuse records without ``fps``: SFT's collator and GRPO's prompt tokenization tell the processor the
    frames' rate, as the hf judge does."""
    stale = next((r for r in records if r.get("fps") is None), None)
    if stale is not None:
        raise TrainingError(f"{Path(data) / 'train.jsonl'}, record {stale.get('id', '?')!r}: field fps is "
                            "missing (exported before robojudge recorded the rate of the frames shown); "
                            "export again")


def train_sft(model: str, data: str | Path, out: str | Path, settings: SFTSettings | None = None, *,
              device: str = "auto", overrides: Mapping[str, Any] | None = None) -> TrainResult:
    """Supervised fine-tuning of a VLM judge on exported records.

    Args:
        model: Hub id or local folder of the base model (an image-text-to-text model).
        data: A ``robojudge train export --format trl`` folder (its ``train`` split is used).
        out: Where the checkpoint goes.
        settings: App. G's by default.
        device: ``auto``, ``cpu`` or ``cuda``.
        overrides: Further ``trl.SFTConfig`` fields, applied last.
    """
    s = settings or SFTSettings()
    _check_settings(s)
    _check_overrides(overrides)
    _check_device(device)
    export = export_info(data)  # read with the records: the export trained on, should it be replaced
    records = load_records(data)  # before the heavy imports: a wrong folder is told at once
    _require_rates(records, data)
    torch, transformers, trl, datasets = _imports()
    cpu, dtype = _device(torch, device)
    processor, net = _load(transformers, torch, model, cpu, dtype)
    if s.lora:
        net = _lora(net, s.lora_rank)
    from robojudge.train._collate import JudgeSFTCollator

    if s.global_batch % s.per_device_batch:
        raise TrainingError(f"global batch {s.global_batch} is not a multiple of the per-device batch "
                            f"{s.per_device_batch}")
    world = max(1, int(torch.cuda.device_count())) if not cpu else 1
    accumulation = max(1, s.global_batch // (s.per_device_batch * world))
    out_dir = Path(out)
    args = trl.SFTConfig(**{
        "output_dir": str(out_dir), "num_train_epochs": s.epochs, "max_steps": s.max_steps,
        "per_device_train_batch_size": s.per_device_batch, "gradient_accumulation_steps": accumulation,
        "learning_rate": s.learning_rate, "logging_steps": 1, "save_strategy": "no", "report_to": [],
        "seed": s.seed, "remove_unused_columns": False, "dataset_kwargs": {"skip_prepare_dataset": True},
        "use_cpu": cpu, "bf16": not cpu, **dict(overrides or {}),  # overrides win
    })
    dataset = datasets.Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"],
                                           "fps": r["fps"]} for r in records])
    trainer = trl.SFTTrainer(model=net, args=args, train_dataset=dataset, processing_class=processor,
                             data_collator=JudgeSFTCollator(processor))
    trainer.train()
    return _finish(trainer, processor, out_dir, "sft", model, data, s, s.lora, overrides, export, records)


def reward_functions(names: Sequence[str]) -> list[Callable[..., list[float]]]:
    """The reward functions ``names`` (``exact``, ``format``) name."""
    unknown = [n for n in names if n not in REWARDS]
    if unknown or not names:
        raise TrainingError(f"unknown reward(s) {unknown}; use {', '.join(REWARDS)}")
    return [REWARDS[n] for n in names]


def train_grpo(model: str, data: str | Path, out: str | Path, settings: GRPOSettings | None = None, *,
               device: str = "auto", overrides: Mapping[str, Any] | None = None,
               extra_rewards: Sequence[Callable[..., list[float]]] = ()) -> TrainResult:
    """GRPO of a VLM judge (usually the SFT checkpoint) with the exact-match reward.

    The prompts are the exported judge requests with their frames as a video (frame paths the
    processor loads, told their rate, the record's ``fps``, as the hf judge tells it); the dataset
    columns ``score``, ``rubric``, ``item_id`` and ``fps`` reach the reward functions.

    Args:
        model: Hub id or local folder (the SFT output).
        data: A ``robojudge train export --format trl`` folder (its ``train`` split is used).
        out: Where the checkpoint goes.
        settings: App. G's by default.
        device: ``auto``, ``cpu`` or ``cuda``.
        overrides: Further ``trl.GRPOConfig`` fields, applied last.
        extra_rewards: Reward functions of your own (TRL's ``reward_funcs`` form), added to the named
            ones.
    """
    s = settings or GRPOSettings()
    _check_settings(s)
    _check_overrides(overrides)
    _check_device(device)
    rewards = reward_functions(s.rewards) + list(extra_rewards)
    export = export_info(data)  # read with the records: the export trained on, should it be replaced
    records = load_records(data)
    _require_rates(records, data)
    torch, transformers, trl, datasets = _imports()
    cpu, dtype = _device(torch, device)
    out_dir = Path(out)
    args = trl.GRPOConfig(**{
        "output_dir": str(out_dir), "num_train_epochs": s.epochs, "max_steps": s.max_steps,
        "per_device_train_batch_size": s.prompts_per_device * s.num_generations,
        "gradient_accumulation_steps": s.grad_accumulation, "num_generations": s.num_generations,
        "learning_rate": s.learning_rate, "max_completion_length": s.max_completion_length,
        "temperature": s.temperature, "logging_steps": 1, "save_strategy": "no", "report_to": [],
        "seed": s.seed, "use_cpu": cpu, "bf16": not cpu, **dict(overrides or {}),  # overrides win
    })
    # distinct prompts one generation takes (every process, every accumulation step, overrides included)
    per_generation = args.generation_batch_size // args.num_generations
    if len(records) < per_generation:  # TRL would yield no batch: no step, or its own unrelated error
        raise TrainingError(f"{Path(data) / 'train.jsonl'}: {len(records)} train records, but one GRPO "
                            f"generation takes {per_generation} prompts ({args.generation_batch_size} "
                            f"completions of {args.num_generations} per prompt: prompts per device x "
                            "accumulation steps x processes); export more, or lower them")
    processor, net = _load(transformers, torch, model, cpu, dtype)
    if s.lora:
        net = _lora(net, s.lora_rank)
    dataset = datasets.Dataset.from_list([{"prompt": r["prompt"], "score": r["score"], "rubric": r["rubric"],
                                           "item_id": r["item_id"], "fps": r["fps"]} for r in records])
    from robojudge.train._grpo_video import video_grpo_trainer

    trainer = video_grpo_trainer()(model=net, reward_funcs=rewards, args=args, train_dataset=dataset,
                                   processing_class=processor)
    trainer.train()
    return _finish(trainer, processor, out_dir, "rl", model, data, s, s.lora, overrides, export, records)
