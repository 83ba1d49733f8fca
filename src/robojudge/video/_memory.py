"""How many bytes of decoded frames one sampling of a video may hold.

Metrics defined at native rate and size read every frame of a video into memory. A long real episode
at 720p or 1080p then needs tens of GiB (900 frames of 1280x720 RGB are 2.3 GiB, and the flow metrics
peak at about 1.6 times their frames), and the kernel kills the process that asks for more than the
machine has: the run ends, or with several workers the item is tried twice more before it fails. So a
sampling whose frames would not fit is refused before anything is decoded, with a :class:`VideoError`
that says how large it is and how to make it smaller (``--max-side``, ``--max-frames``); the metric's
row is an error saying so, and the run goes on.

The budget is ``ROBOJUDGE_FRAME_MEMORY_GIB`` when set (``0``: no limit), else :data:`FRACTION` of the
memory available when the video is read: Linux's ``MemAvailable``, or less when the process's control
group (a container, a SLURM job) has a lower limit. Without ``/proc`` it is the free memory
``os.sysconf`` reports (``SC_AVPHYS_PAGES``), else, on macOS, which reports only that, the physical memory
(``SC_PHYS_PAGES``). A limit on the process's address space (``ulimit -v``, which SGE's ``h_vmem`` and
PBS's ``vmem`` set) caps it too: past it NumPy cannot allocate the frames. Where none can be read
(Windows, which has no ``os.sysconf``), nothing is refused.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from robojudge import settings
from robojudge._machine import CGROUP_ROOT, PROC_CGROUP, cgroup_files
from robojudge.video._post import PostProcess
from robojudge.video._types import VideoError

__all__ = [
    "FRACTION",
    "address_space_room",
    "available_memory",
    "check_frame_memory",
    "frame_budget",
    "frame_bytes",
    "frame_memory_share",
    "native_read_warning",
    "set_frame_memory_share",
]

FRACTION = 0.5
"""Share of the available memory one sampling's frames may take: the rest is for what the metrics compute
from them (the weights-free set peaked at 1.6 times its frames on a 900-frame 720p clip: 3.7 GiB for
2.3 GiB of frames) and for other work."""

_GIB = 1024**3
_share = 1.0  # of the available memory's FRACTION, for this process (one of several workers)


def set_frame_memory_share(share: float) -> None:
    """Give this process ``share`` of the budget taken from the available memory: a pool of ``n``
    worker processes on one machine reads ``n`` videos at once, so each worker gets ``1 / n``
    (``LocalProcessExecutor`` sets it). ``ROBOJUDGE_FRAME_MEMORY_GIB`` is per process and not shared."""
    global _share
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    _share = share


@contextmanager
def frame_memory_share(share: float) -> Iterator[None]:
    """:func:`set_frame_memory_share` for the ``with`` block, the share before it restored after:
    ``suite validate --workers N`` checks videos against what each of ``N`` score workers will get."""
    before = _share
    set_frame_memory_share(share)
    try:
        yield
    finally:
        set_frame_memory_share(before)


_UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as a number near 2**63


def _kib_field(path: Path, name: str) -> int | None:
    """The bytes of a ``NAME:  N kB`` line of a /proc file (``/proc/meminfo``, ``/proc/self/status``)."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _UNLIMITED else value


def _cgroup_room(proc_cgroup: Path, root: Path) -> int | None:
    """Bytes left under this process's memory control group limit (v2 or v1), None without a limit."""
    rooms = []
    for version, folders in cgroup_files("memory", proc_cgroup, root):
        files = ("memory.max", "memory.current") if version == "v2" else (
            "memory.limit_in_bytes", "memory.usage_in_bytes")
        for folder in folders:
            limit, used = _read_int(folder / files[0]), _read_int(folder / files[1])
            if limit is not None:
                rooms.append(max(0, limit - (used or 0)))
                break
    return min(rooms) if rooms else None


def _sysconf_memory(names: Collection[str] | None = None) -> tuple[int, str] | None:
    """Bytes of memory as ``os.sysconf`` counts them, and what they are: the free memory
    (``SC_AVPHYS_PAGES``), else the physical memory (``SC_PHYS_PAGES``, all macOS has); None where
    neither is known (Windows). ``names``: the ones this system has (``os.sysconf_names``)."""
    sysconf = getattr(os, "sysconf", None)
    if sysconf is None:
        return None
    have = os.sysconf_names if names is None else names
    for name, what in (("SC_AVPHYS_PAGES", "memory available now"), ("SC_PHYS_PAGES", "physical memory")):
        if name not in have:
            continue
        try:
            pages, size = sysconf(name), sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            continue
        if pages > 0 and size > 0:
            return pages * size, what
    return None


def _memory_room(meminfo: Path = Path("/proc/meminfo"), proc_cgroup: Path = PROC_CGROUP,
                 cgroup_root: Path = CGROUP_ROOT, sysconf_names: Collection[str] | None = None
                 ) -> tuple[int, str] | None:
    """:func:`available_memory`, and what it is (``memory available now``, or ``physical memory``)."""
    found = [v for v in (_kib_field(meminfo, "MemAvailable"), _cgroup_room(proc_cgroup, cgroup_root))
             if v is not None]
    if found:
        return min(found), "memory available now"
    return _sysconf_memory(sysconf_names)


def available_memory(meminfo: Path = Path("/proc/meminfo"), proc_cgroup: Path = PROC_CGROUP,
                     cgroup_root: Path = CGROUP_ROOT, sysconf_names: Collection[str] | None = None
                     ) -> int | None:
    """Bytes this process can still take: ``MemAvailable``, capped by its control group's room; without
    ``/proc`` (macOS, the BSDs) what ``os.sysconf`` knows, the free memory, else the physical memory
    (macOS); None when nothing can be read (Windows). ``sysconf_names``: the ``os.sysconf`` names this
    system has (default ``os.sysconf_names``)."""
    room = _memory_room(meminfo, proc_cgroup, cgroup_root, sysconf_names)
    return None if room is None else room[0]


def address_space_room(status: Path = Path("/proc/self/status")) -> int | None:
    """Bytes this process may still map under its soft address-space limit (``RLIMIT_AS``: ``ulimit
    -v``), its current virtual size taken off; None without a limit or where either cannot be read.
    The limit is per process, so worker processes do not share it."""
    try:
        import resource
    except ImportError:  # not a Unix
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    used = _kib_field(status, "VmSize")
    return None if used is None else max(0, soft - used)


def frame_budget() -> tuple[int, str] | None:
    """The bytes one sampling's frames may hold and where that figure comes from; None: no limit."""
    given = settings.get().frame_memory_bytes
    if given is not None:
        return (given, f"{settings.FRAME_MEMORY_GIB_ENV}={given / _GIB:g}") if given else None
    budgets = []
    room = _memory_room()
    if room is not None:
        workers = "" if _share == 1.0 else f", shared by {round(1 / _share)} worker processes"
        budgets.append((int(FRACTION * _share * room[0]),
                        f"{FRACTION:.0%} of the {_size(room[0])} of {room[1]}{workers}"))
    space = address_space_room()
    if space is not None:
        budgets.append((int(FRACTION * space), f"{FRACTION:.0%} of the {_size(space)} this process may still "
                                               "map under its address-space limit (ulimit -v)"))
    return min(budgets) if budgets else None


def frame_bytes(width: int, height: int, post: PostProcess) -> int:
    """Bytes of one source frame of ``width`` x ``height`` once ``post`` has resized it (and made it
    gray); rotation does not change them (a longer side scaled to a size keeps the area either way)."""
    w, h = post.output_size(width, height)
    return w * h * (1 if post.gray else 3)


def _size(n: float) -> str:
    """``n`` bytes for a reader: 360 KiB, 1.4 MiB, 2.5 GiB."""
    for unit, scale in (("GiB", _GIB), ("MiB", 1024**2)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n / 1024:.0f} KiB"


def _exceeded(need: int) -> tuple[int, str] | None:
    """:func:`frame_budget` when ``need`` bytes are more than it allows, else None."""
    budget = frame_budget() if need > 0 else None
    return budget if budget is not None and need > budget[0] else None


def check_frame_memory(path: Path, samplings: list[tuple[int, PostProcess]], width: int, height: int) -> None:
    """Refuse, before decoding, samplings of a ``width`` x ``height`` video (each: how many frames it
    picks, and how they are resized) whose frames together would not fit in :func:`frame_budget`.

    Raises:
        VideoError: Naming the frames, their size in memory, the budget, and how to shrink them.
    """
    if width <= 0 or height <= 0:
        return
    need = sum(n * frame_bytes(width, height, post) for n, post in samplings)
    budget = _exceeded(need)
    if budget is None:
        return
    n, post = max(samplings, key=lambda s: s[0] * frame_bytes(width, height, s[1]))
    w, h = post.output_size(width, height)
    read_at = f" read at {w}x{h}" if (w, h) != (width, height) else ""
    raise VideoError(
        path,
        f"{n} frames of {width}x{height}{read_at} would hold {_size(need)} once decoded, more than the "
        f"{_size(budget[0])} allowed ({budget[1]}); read it at a smaller size (robojudge score --max-side "
        "640, robojudge judge --size) or on fewer frames (--max-frames), or, for a metric that samples "
        "at its own settings (those options say they apply to no requested metric), with its own "
        "(robojudge metrics info METRIC lists them: --set METRIC.max_frames=N or METRIC.fps=F where it "
        "has them), or set "
        f"{settings.FRAME_MEMORY_GIB_ENV} (0: no limit); then rerun with --retry-errors (a plain rerun keeps "
        "this error row)",
    )


def native_read_warning(frames: int | None, width: int, height: int) -> str | None:
    """What ``robojudge suite validate`` says of a video whose every frame at native size would not fit
    in :func:`frame_budget` (the metrics defined at native rate and size would be refused on it), else
    None. ``frames``: how many the video holds (None: not known, nothing said)."""
    if not frames or width <= 0 or height <= 0:
        return None
    need = frames * width * height * 3
    budget = _exceeded(need)
    if budget is None:
        return None
    return (f"its {frames} frames of {width}x{height} would hold {_size(need)} decoded, more than the "
            f"{_size(budget[0])} allowed ({budget[1]}): metrics that read every frame at native size will "
            "refuse it; score it with --max-side 640 or --max-frames")
