"""Metrics used only by the run tests; loaded in workers through ROBOJUDGE_PLUGINS or by pickling."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from robojudge.metrics import Score, metric
from robojudge.suite import Item


def toy_items(names) -> list[Item]:  # type: ignore[no-untyped-def]
    """Items for the toy metrics: an instruction and a video that does not exist (none reads it)."""
    return [Item(item_id=n, video=f"/nonexistent/{n}.mp4", instruction="do it") for n in names]


COMMON = dict(
    family="baseline",
    higher_is_better=True,
    native_range=(None, None),
    version="1",
    citation="robojudge test suite",
    description="test-only metric",
)


class SlowConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    seconds: float = 0.02


@metric("test_slow", inputs={"instruction"}, config=SlowConfig, **COMMON)
def slow(item, config: SlowConfig) -> Score:
    time.sleep(config.seconds)
    return Score(value=float(len(item.item_id)), details={"pid": os.getpid()})


@metric("test_boom", inputs={"instruction"}, **COMMON)
def boom(item, config) -> Score:
    if "boom" in item.item_id:
        return Score(value=1 / 0)
    return Score(value=1.0)


@metric("test_crash", inputs={"instruction"}, **COMMON)
def crash(item, config) -> Score:
    if "crash" in item.item_id:
        os._exit(3)  # a worker dying hard, as in a decoder segfault
    return Score(value=2.0, details={"pid": os.getpid()})


@metric("test_sigkill", inputs={"instruction"}, **COMMON)
def sigkill(item, config) -> Score:
    if "crash" in item.item_id:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer ends a process
    return Score(value=3.0, details={"pid": os.getpid()})


@metric("test_segfault", inputs={"instruction"}, **COMMON)
def segfault(item, config) -> Score:
    if "crash" in item.item_id:
        import ctypes

        ctypes.string_at(0)  # a real segmentation fault, as in a native library
    return Score(value=2.0)


@metric("test_interrupt", inputs={"instruction"}, **COMMON)
def interrupt(item, config) -> Score:
    if "stop" in item.item_id:
        raise KeyboardInterrupt  # Ctrl-C while this item is computed
    return Score(value=4.0)


@metric("test_needs_reference", inputs={"video", "reference"}, **COMMON)
def needs_reference(item, config) -> Score:
    return Score(value=3.0)


@metric("test_frames_a", inputs={"video"}, **COMMON)
def frames_a(item, config) -> Score:
    from robojudge.video import sample_frames

    return Score(value=float(len(sample_frames(item.video, fps=4))))


@metric("test_frames_b", inputs={"video"}, **COMMON)
def frames_b(item, config) -> Score:
    from robojudge.video import sample_frames

    return Score(value=float(sample_frames(item.video, fps=4).frames.mean()))


class CaptionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    captions: str | None = Field(default=None, json_schema_extra={"item_text": "caption"})


@metric("test_caption", inputs={"instruction"}, config=CaptionConfig, **COMMON)
def caption_length(item, config: CaptionConfig) -> Score:
    from robojudge.metrics._texts import load_item_texts, meta_gives_text

    text = item.meta.get("caption")
    if not meta_gives_text(text):  # sa_bleu's rule
        text = load_item_texts(config.captions, "caption").get(item.item_id, "")
    return Score(value=float(len(text)))


class TableConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    table: Path | None = None  # a file by its type
    notes: str | None = Field(default=None, json_schema_extra={"input_file": True})  # a file by declaration
    label: str = ""  # a word, even when a file of that name happens to exist


@metric("test_table", inputs={"instruction"}, config=TableConfig, **COMMON)
def table_size(item, config: TableConfig) -> Score:
    size = len(config.table.read_bytes()) if config.table else 0
    notes = len(Path(config.notes).read_bytes()) if config.notes else 0
    return Score(value=float(size + notes))


def exit_after_marker(task: tuple[int, str]) -> int:
    """Executor test task: a negative value writes the marker file, then kills its worker."""
    value, marker = task
    if value < 0:
        Path(marker).write_text("dying")
        os._exit(3)
    return value



class RateConfig(BaseModel):
    """A sampling field (``fps``) as real metrics have, so the scheduler groups by it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    fps: float | None = None
    seconds_per_frame: float = 0.0


class Rate2Config(RateConfig):
    fps: float | None = 2.0


class Rate4Config(RateConfig):
    fps: float | None = 4.0


def _sampled(item, config: RateConfig) -> Score:
    from robojudge.video import sample_frames

    frames = sample_frames(item.video, fps=config.fps, max_frames=None)
    time.sleep(len(frames) * config.seconds_per_frame)
    return Score(value=float(frames.frames.mean()) + len(frames), details={"pid": os.getpid()})


# Two metrics per sampling rate: each pair shares a decode, so the scheduler keeps it together.
@metric("test_rate_a", inputs={"video"}, config=Rate2Config, **COMMON)
def rate_a(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_rate_b", inputs={"video"}, config=Rate2Config, **COMMON)
def rate_b(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_rate_c", inputs={"video"}, config=Rate4Config, **COMMON)
def rate_c(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_rate_d", inputs={"video"}, config=Rate4Config, **COMMON)
def rate_d(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_rate_e", inputs={"video"}, config=RateConfig, **COMMON)
def rate_e(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_rate_f", inputs={"video"}, config=RateConfig, **COMMON)
def rate_f(item, config: RateConfig) -> Score:
    return _sampled(item, config)


@metric("test_hang", inputs={"instruction"}, **COMMON)
def hang(item, config) -> Score:
    """Never returns on an item named "hang...", in Python code that a broad ``except`` guards."""
    if "hang" in item.item_id:
        while True:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001, S112 - a metric's own handler must not swallow the limit
                continue
    return Score(value=5.0, details={"pid": os.getpid()})


@metric("test_hang_native", inputs={"instruction"}, **COMMON)
def hang_native(item, config) -> Score:
    """On "hang..." items, waits as native code stuck in a system call does: the limit's signal is
    blocked, so only the hard guard (which ends the worker) can stop it."""
    if "hang" in item.item_id:
        import signal

        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
    return Score(value=6.0)


@metric("test_lock_details", inputs={"instruction"}, **COMMON)
def lock_details(item, config) -> Score:
    """Details holding an object that cannot be pickled (a plugin's), on items named "lock..."."""
    import threading

    return Score(value=1.0, details={"lock": threading.Lock()} if "lock" in item.item_id else {})


def _fit_view(item_id: str) -> float:
    return {"known": 1.0}[item_id]  # a KeyError three calls deep, as in a plugin's helper


@metric("test_noted_raise", inputs={"instruction"}, **COMMON)
def noted_raise(item, config) -> Score:
    """Raises a KeyError with a note (``add_note``) on items named "note..."."""
    if "note" in item.item_id:
        try:
            _fit_view(item.item_id)
        except KeyError as exc:
            exc.add_note(f"while fitting view cam0 of {item.item_id}")
            raise
    return Score(value=1.0)


class Unpicklable:
    """A result that cannot go back from a worker process (a test of the executor's own guard)."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("cannot pickle 'Unpicklable' object")


def unpicklable_for_negative(value: int) -> object:
    """Executor test task: a negative value returns what cannot be pickled."""
    return Unpicklable() if value < 0 else value


def log_in_worker(value: int) -> int:
    """Executor test task: logs a DEBUG and a WARNING record naming ``value``."""
    import logging

    log = logging.getLogger("robojudge.test_worker")
    log.debug("DEBUGLINE %d", value)
    log.warning("WARNLINE %d", value)
    return value


def note_then_exit(task: tuple[tuple[int, ...], str]) -> int:
    """Executor test task: a line in the marker file per attempt, then its worker killed, whatever part
    of the task it is (a fault every part meets, as a video that crashes the decoder)."""
    values, marker = task
    with open(marker, "a") as f:
        f.write(f"{values}\n")
    os._exit(3)
