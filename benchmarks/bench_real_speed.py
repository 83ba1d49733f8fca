"""Time of the weights-free video metrics on clips shaped like today's generators, against the time
of decoding the same clip, in the same run (issue 14's target: the set within 20x the decode).

Run with::

    .venv/bin/python benchmarks/bench_real_speed.py [--clips wan,cosmos,small] [--repeats 1]
        [--decode-repeats 3] [--max-frames N] [--workers 2]

Clips (written once with ``robojudge.video.write_video`` to ``benchmarks/_data/real_speed/``,
git-ignored): a fixed camera over a textured table with three textured blocks sliding across it, so
every metric finds motion, corners and features.

* ``wan``: 81 frames, 1280x720, 16 fps;
* ``cosmos``: 300 frames, 1280x704, 30 fps;
* ``small``: 145 frames, 752x416, 24 fps.

``--max-frames`` shortens every clip (a quick run on a busy machine); the figures then say so.
``--max-side N`` scores as ``robojudge score --max-side N`` does (the metrics defined at native size
read frames whose longer side is at most N px). ``--fast`` times the set under the fast profile
(``robojudge score --fast``) as well, right after the native set on each clip, and prints both;
``--fast-area`` adds the fast profile with area resizing (``resample="area"``, as before bilinear
resizing was part of it), run right after it.

Metric set: every registered metric with provider ``computed`` whose only input is the video (what
``robojudge score --metrics all`` runs on a video-only suite without weights), run as the runner
runs one item: one :func:`robojudge.run.compute_task`, one frame cache, in this process.

Baselines: PyAV decoding every frame with FFmpeg's frame threads (the libraries robojudge reads with,
without a conversion to RGB), and ``ffmpeg -v error -i CLIP -f null -`` (the issue's baseline) when an
``ffmpeg`` binary is on the PATH (``scripts/system-deps.sh bench`` installs Debian's); ratios are
printed against each. The CLI's time includes its start: about 0.06 s of CPU on a one-frame clip here,
a third of its time on ``small``. Median of ``--decode-repeats`` (default 3) and of ``--repeats``
(default 1: the set takes minutes per clip at native size). Both are timed in wall seconds and in
CPU seconds (every thread of the process, and ffmpeg's as a child): on a machine shared with other
work the wall ratio moves with the load average (printed with each clip), the CPU ratio much less.

``--cv-threads N`` runs OpenCV on N threads in this process (default: OpenCV's own count, a thread per
CPU, as ``robojudge score`` with one worker runs; ``--cv-threads 1`` is what each of 2 workers on 2
CPUs gets, :func:`robojudge.run._executor.cv_threads_per_worker`). The CPU ratio is lower with one
thread: OpenCV's parallel loops spend CPU waiting on each other.

With ``--workers N`` the clip is also scored through :func:`robojudge.run.score_items` on N local
workers, once with the item's metrics split by sampling (the default scheduling) and once as one
task, wall time each.

With ``--suite K`` (and ``--workers N``), a mixed suite of K clips (the shapes in turn, clip k
cut to 1/(1 + k mod 4) of its frames, all capped by ``--max-frames``) runs on N workers twice: one
task per item in manifest order (before the scheduler) and as :func:`robojudge.run._score.schedule`
orders and splits it. Per leg: the wall time, the share of it with all N workers busy, and the
tail: the share of the wall after the last moment all N were busy (the issue's target: under 5%).
With ``--cv-threads-legs`` the suite runs instead as scheduled, twice per round for ``--rounds``
rounds (alternating which goes first): workers with OpenCV's default thread count (a thread per CPU
in each worker) and with the executor's default (the CPUs shared out: 1 each for 2 workers on 2
CPUs), with the CPU seconds of the workers.

Measured numbers are in docs/performance.md ("The weights-free set on clips shaped like today's
generators"); README.md, "Performance", sums them up.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import av
import cv2
import numpy as np

from robojudge.metrics import FrameOptions, Input, Provider, list_metrics, takes_frame_options
from robojudge.run import LocalProcessExecutor, MetricRequest, Task, build_requests, compute_task, score_items
from robojudge.run._score import schedule
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

DATA = Path(__file__).resolve().parent / "_data" / "real_speed"
CLIPS = {"wan": (81, 1280, 720, 16), "cosmos": (300, 1280, 704, 30), "small": (145, 752, 416, 24)}


def make_clip(name: str, max_frames: int | None, cut: int = 1) -> Path:
    """The clip ``name``, written on first use (``cut`` divides its frames, ``max_frames`` caps them)."""
    n, w, h, fps = CLIPS[name]
    n = max(4, n // cut)
    n = min(n, max_frames) if max_frames else n
    path = DATA / f"{name}_{w}x{h}_{n}f_{fps}fps.mp4"  # one file per shape and length
    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(name))
    noise = sum(cv2.resize(rng.normal(0, 1, (h // s, w // s)).astype(np.float32), (w, h),
                           interpolation=cv2.INTER_CUBIC) for s in (4, 16, 64))
    table = np.clip(128 + 30 * noise, 0, 255).astype(np.uint8)
    background = np.stack([table, (table * 0.85).astype(np.uint8), (table * 0.7).astype(np.uint8)], -1)
    blocks = [cv2.GaussianBlur(rng.integers(30, 255, (h // 6 + 10 * k, w // 8 + 12 * k, 3), dtype=np.uint8),
                               (5, 5), 0) for k in range(3)]
    frames = np.empty((n, h, w, 3), np.uint8)
    for t in range(n):
        f = background.copy()
        for k, b in enumerate(blocks):
            bh, bw = b.shape[:2]
            # each block slides on its own line, a few pixels per frame at the clip's rate
            x = int((0.1 + 0.25 * k) * w + 3.0 * t * (16 / fps) * (1 + k)) % (w - bw)
            y = int((0.2 + 0.25 * k) * h + 1.5 * t * (16 / fps)) % (h - bh)
            f[y:y + bh, x:x + bw] = b
        frames[t] = f
    write_video(path, frames, fps=fps)
    return path


def video_only_ids() -> list[str]:
    return sorted(s.id for s in list_metrics()
                  if s.provider is Provider.computed and set(s.inputs) == {Input.video})


#: The decode baselines: PyAV in this process, and the ``ffmpeg`` CLI when there is one.
PYAV, FFMPEG = "PyAV decode", "ffmpeg -f null"


def decode_times(path: Path) -> dict[str, tuple[float, float]]:
    """Wall and CPU seconds (all threads; for ffmpeg, the child's) to decode every frame of ``path``,
    by each baseline: PyAV with FFmpeg's frame threads (no RGB conversion), and ``ffmpeg -f null`` when
    an ``ffmpeg`` binary is on the PATH (what the target names; its time includes the CLI's start)."""
    out = {}
    start, cpu = time.perf_counter(), _cpu_seconds()
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for _ in container.decode(stream):
            pass
    out[PYAV] = (time.perf_counter() - start, _cpu_seconds() - cpu)
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg:
        start, cpu = time.perf_counter(), _cpu_seconds()
        subprocess.run([ffmpeg, "-v", "error", "-i", str(path), "-f", "null", "-"], check=True)
        out[FFMPEG] = (time.perf_counter() - start, _cpu_seconds() - cpu)
    return out


def _cpu_seconds() -> float:
    """CPU time of this process's threads and its finished children: the work, whatever the load."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def score_wall(item: Item, reqs: list[MetricRequest], workers: int, split: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp, ResultStore(f"sqlite:///{tmp}/r.sqlite") as store:
        start = time.perf_counter()
        score_items([item], reqs, store, executor=LocalProcessExecutor(workers),
                    split_above=0.0 if split else float("inf"))
        return time.perf_counter() - start


def _timed(task: Task) -> tuple[int, float, float, float, int]:
    start, cpu = time.time(), time.process_time()  # wall clock: comparable across the worker processes
    rows = compute_task(task)
    failed = sum(r.status != "ok" for r in rows)  # a leg of failed rows would look fast
    return os.getpid(), start, time.time(), time.process_time() - cpu, failed  # CPU: every thread


def _crashed(task: Task, reason: str) -> tuple[int, float, float, float, int]:
    raise RuntimeError(f"{task.item.item_id}: {reason}")


def suite_leg(items: list[Item], reqs: list[MetricRequest], workers: int, scheduled: bool,
              cv_threads: int | None = None) -> str:
    tasks = [Task(it, tuple(reqs)) for it in items]
    if scheduled:
        tasks = schedule(tasks, workers)
    ex = LocalProcessExecutor(workers, cv_threads=cv_threads)
    began = time.time()
    spans = [span for _, span in ex.map_unordered(_timed, tasks, _crashed)]
    ex.shutdown()
    ended = time.time()
    cpu = sum(span[3] for span in spans)  # the tasks' CPU, start-up of the workers aside
    failed = sum(span[4] for span in spans)
    # Sweep the task start/end events: time with every worker busy, and the last moment they all were.
    events = sorted([(span[1], 1) for span in spans] + [(span[2], -1) for span in spans])
    busy, full, last_full, prev = 0, 0.0, began, began
    for t, step in events:
        if busy >= workers:
            full += t - prev
            last_full = t
        busy, prev = busy + step, t
    wall = ended - began
    return (f"{len(tasks)} tasks, wall {wall:.1f} s, tasks' CPU {cpu:.1f} s, all {workers} busy "
            f"{100 * full / wall:.0f}% of it, tail {100 * (ended - last_full) / wall:.0f}% "
            f"[load average {os.getloadavg()[0]:.1f}]" + (f"; {failed} rows FAILED" if failed else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", default="wan,cosmos,small")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--decode-repeats", type=int, default=3)
    ap.add_argument("--max-frames", type=int, default=None)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--suite", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=None,
                    help="score with robojudge score --max-side N (the metrics read at native size)")
    ap.add_argument("--fast", action="store_true", help="also time the set under the fast profile")
    ap.add_argument("--fast-area", action="store_true",
                    help="with --fast, also time the fast profile with area resizing (resample='area')")
    ap.add_argument("--cv-threads-legs", action="store_true",
                    help="suite legs: OpenCV's default threads per worker against the executor's default")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of --cv-threads-legs")
    ap.add_argument("--cv-threads", type=int, default=None,
                    help="OpenCV threads in this process (default: OpenCV's, a thread per CPU)")
    args = ap.parse_args()
    if args.cv_threads is not None:
        cv2.setNumThreads(args.cv_threads)
    ids = video_only_ids()
    frames = FrameOptions(max_side=args.max_side)
    reqs = build_requests(ids, frames=frames)
    fast_reqs = build_requests(ids, frames=FrameOptions(profile="fast")) if args.fast else []
    area_reqs = (build_requests(ids, frames=FrameOptions(profile="fast", resample="area"))
                 if args.fast and args.fast_area else [])
    if frames:
        print(f"--max-side {args.max_side} on: {', '.join(r.id for r in reqs if takes_frame_options(r.id))}")
    if args.fast:
        print(f"--fast on: {', '.join(r.id for r in fast_reqs if takes_frame_options(r.id))}")
    print(f"metrics ({len(ids)}): {', '.join(ids)}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; OpenCV threads "
          f"{cv2.getNumThreads()}")
    for name in args.clips.split(","):
        path = make_clip(name, args.max_frames)
        item = Item(item_id=name, video=str(path))
        decodes: dict[str, list[tuple[float, float]]] = {}
        profiles = {"native": reqs, "fast": fast_reqs} if args.fast else {"native": reqs}
        if area_reqs:
            profiles["fast, resample=area"] = area_reqs
        sets: dict[str, list[float]] = {p: [] for p in profiles}
        set_cpu: dict[str, list[float]] = {p: [] for p in profiles}
        per_metric: dict[str, dict[str, list[float]]] = {p: {m: [] for m in ids} for p in profiles}
        for _ in range(max(args.repeats, args.decode_repeats)):
            if len(decodes.get(PYAV, [])) < args.decode_repeats:
                for how, times in decode_times(path).items():
                    decodes.setdefault(how, []).append(times)
            for profile, profile_reqs in profiles.items():
                if len(sets[profile]) >= args.repeats:
                    continue
                start, cpu = time.perf_counter(), _cpu_seconds()
                rows = compute_task(Task(item, tuple(profile_reqs)))
                sets[profile].append(time.perf_counter() - start)
                set_cpu[profile].append(_cpu_seconds() - cpu)
                for r in rows:
                    per_metric[profile][r.metric].append(r.duration_s)
                    if r.status != "ok":
                        print(f"  {name} {profile} {r.metric}: {r.error}")
        medians = {how: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                   for how, v in decodes.items()}
        print(f"{path.name}: " + "; ".join(f"{how} {w:.3f} s, CPU {c:.3f} s"
                                           for how, (w, c) in medians.items())
              + f"  [load average {os.getloadavg()[0]:.1f}]")
        for profile in profiles:
            if not sets[profile]:  # --repeats 0: the worker legs only
                continue
            full, full_cpu = statistics.median(sets[profile]), statistics.median(set_cpu[profile])
            ratios = "; ".join(f"{full / w:.0f}x (CPU {full_cpu / max(c, 1e-9):.0f}x) of {how}"
                               for how, (w, c) in medians.items())
            print(f"  {profile}: weights-free set {full:.1f} s, CPU {full_cpu:.1f} s, ratio {ratios}")
            times = per_metric[profile].items()
            top = sorted(((statistics.median(v), m) for m, v in times if v), reverse=True)
            print("    " + ", ".join(f"{m} {s:.1f} s" for s, m in top[:5]))
        if args.workers > 1:
            one = score_wall(item, reqs, args.workers, split=False)
            split = score_wall(item, reqs, args.workers, split=True)
            print(f"  {args.workers} workers: one task {one:.1f} s, split by sampling {split:.1f} s")
    if args.suite and args.workers > 1:
        names = list(CLIPS)
        items = [Item(item_id=f"clip{k}", video=str(make_clip(names[k % 3], args.max_frames, 1 + k % 4)))
                 for k in range(args.suite)]
        print(f"suite of {args.suite} clips on {args.workers} workers:")
        if args.cv_threads_legs:
            legs = {"OpenCV's default threads per worker": 0, "executor default (CPUs shared out)": None}
            for k in range(args.rounds):
                for label, n in (list(legs.items()) if k % 2 == 0 else list(legs.items())[::-1]):
                    print(f"  {label}: {suite_leg(items, reqs, args.workers, True, n)}", flush=True)
        else:
            print(f"  one task per item, manifest order: {suite_leg(items, reqs, args.workers, False)}")
            print(f"  scheduled (split, largest first):  {suite_leg(items, reqs, args.workers, True)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
