"""Benchmark the weights-free metric set: shared decoding versus one decode per metric, and VBench.

Run with::

    .venv/bin/python benchmarks/bench_metrics.py [--manifest SUITE.jsonl] [--max-items 6] [--repeats 3]
        [--vbench-python /tmp/vbench_venv/bin/python]

Suite: ``--manifest``, or else the demo suite (``robojudge.demo.build_demo_suite``: the simulator
suite when MuJoCo is installed, the 2D synthetic one otherwise) built once into
``benchmarks/_data/demo_suite`` (git-ignored). The first ``--max-items`` items are used.

Metric set: every registered metric with provider ``computed`` (so it picks up whatever is registered
when run), except ``uniform_random`` (no work) and ``sa_bleu`` (needs a caption from a judge). Metrics
whose inputs an item lacks fail fast in the runner and still count as done.

Timed, interleaved round-robin so machine noise hits every method alike, median of the repeats, all in
this process and serial (one core):

(a) shared: the runner's per-item task (``robojudge.run.compute_task``): all metrics of an item
    inside one frame cache, so each distinct sampling of the video is decoded once;
(b) separate: each metric as its own task (its own frame cache), so every metric decodes again;
(c) temporal flickering alone, robojudge (``mq_temporal_flickering``, PyAV decode, RGB) versus
    VBench's implementation (``vbench.temporal_flickering.cal_score``, OpenCV decode, BGR) on the same
    video files. VBench runs in its own Python (``--vbench-python``, default ``$ROBOJUDGE_VBENCH_PYTHON``
    or ``/tmp/vbench_venv/bin/python`` if present), timed inside that process (imports excluded). The
    leg is skipped, with the reason printed, when that Python cannot import VBench.

VBench venv (``pip install vbench`` pins old transformers and pulls a CUDA torch; only the flickering
module's imports matter: NumPy, OpenCV, and through ``vbench.utils`` torch, torchvision and decord)::

    python -m venv /tmp/vbench_venv
    /tmp/vbench_venv/bin/pip install --no-deps vbench
    /tmp/vbench_venv/bin/pip install "numpy<2" opencv-python-headless tqdm Pillow decord
    # torch: a CPU build where your index has one, or borrow the project venv's (measured this way):
    echo /work/main/.venv/lib/python3.11/site-packages \\
        > /tmp/vbench_venv/lib/python3.11/site-packages/zz_borrow_project_torch.pth

Measured numbers and the details are in docs/sensitivity.md ("Speed").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from robojudge.metrics import Provider, get_metric, list_metrics
from robojudge.run import MetricRequest, Task, compute_task
from robojudge.suite import Item, load_suite

DATA = Path(__file__).resolve().parent / "_data"
SKIP = {"uniform_random", "sa_bleu"}

VBENCH_TIMER = r"""
import json, sys, time
from vbench.temporal_flickering import cal_score
paths, repeats = json.loads(sys.argv[1]), int(sys.argv[2])
scores = [cal_score(p) for p in paths]  # warm-up, also the values
times = []
for _ in range(repeats):
    start = time.perf_counter()
    for p in paths:
        cal_score(p)
    times.append(time.perf_counter() - start)
print(json.dumps({"times": times, "scores": scores}))
"""


def weights_free_ids() -> list[str]:
    """Computed metrics in the benchmark set."""
    return [s.id for s in list_metrics() if s.provider is Provider.computed and s.id not in SKIP]


def demo_manifest(kind: str) -> Path:
    """The demo suite under ``benchmarks/_data/demo_suite``, built on first use."""
    from robojudge.demo import build_demo_suite

    folder = DATA / "demo_suite"
    if not (folder / "suite.jsonl").exists():
        print(f"building the demo suite in {folder} ...", flush=True)
    _, manifest = build_demo_suite(folder, kind)  # type: ignore[arg-type]
    return manifest


def run_shared(items: list[Item], reqs: tuple[MetricRequest, ...]) -> int:
    rows = [row for it in items for row in compute_task(Task(it, reqs))]
    return sum(r.status == "ok" for r in rows)


def run_separate(items: list[Item], reqs: tuple[MetricRequest, ...]) -> int:
    rows = [row for it in items for req in reqs for row in compute_task(Task(it, (req,)))]
    return sum(r.status == "ok" for r in rows)


def vbench_python(arg: str | None) -> str | None:
    """The Python to run VBench with: the argument, the environment variable, or the default venv."""
    if arg:
        return arg
    env = os.environ.get("ROBOJUDGE_VBENCH_PYTHON")
    if env:
        return env
    default = Path("/tmp/vbench_venv/bin/python")
    return str(default) if default.exists() else None


def run_vbench(python: str, paths: list[str], repeats: int) -> tuple[dict[str, list[float]] | None, str]:
    """VBench's flickering timings and scores from ``python``, or None and why it could not run."""
    try:
        proc = subprocess.run([python, "-c", VBENCH_TIMER, json.dumps(paths), str(repeats)],
                              capture_output=True, text=True, timeout=3600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"could not run {python}: {exc}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no error output)"])[-1]
        return None, f"{python} cannot run vbench.temporal_flickering: {last}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def main() -> int:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=fmt)
    parser.add_argument("--manifest", type=Path, default=None, help="suite to use [default: the demo suite]")
    parser.add_argument("--suite-kind", default="auto", choices=("auto", "sim", "synthetic"))
    parser.add_argument("--max-items", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vbench-python", default=None, help="a Python that can import vbench")
    args = parser.parse_args()

    manifest = args.manifest or demo_manifest(args.suite_kind)
    items = load_suite(manifest).items[: args.max_items]
    ids = weights_free_ids()
    reqs = tuple(MetricRequest.build(m) for m in ids)
    print(f"suite: {manifest} ({len(items)} items), {len(ids)} metrics: {', '.join(ids)}")

    flicker = get_metric("mq_temporal_flickering")
    methods: dict[str, Callable[[], object]] = {
        "(a) shared decode (runner task)": lambda: run_shared(items, reqs),
        "(b) one decode per metric": lambda: run_separate(items, reqs),
        "(c) robojudge temporal flickering": lambda: [flicker.compute(it) for it in items],
    }
    ok = run_shared(items, reqs)  # warm-up: page cache, lazy imports, first-call setup of every metric
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.repeats):
        for name, fn in methods.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    n = len(items)
    print(f"median of {args.repeats} interleaved repeats; {ok} of {n * len(ids)} (item, metric) results ok")
    for name, seconds in med.items():
        print(f"  {name:36s} {seconds:8.2f} s  {n / seconds:7.2f} videos/s")
    a, b = med["(a) shared decode (runner task)"], med["(b) one decode per metric"]
    print(f"  (b)/(a) time ratio: {b / a:.2f}  (shared decoding speed-up)")

    python = vbench_python(args.vbench_python)
    if python is None:
        print("VBench leg skipped: no --vbench-python, no $ROBOJUDGE_VBENCH_PYTHON and no "
              "/tmp/vbench_venv/bin/python (see this file's docstring to set one up)")
        return 0
    result, why = run_vbench(python, [it.video for it in items], args.repeats)
    if result is None:
        print(f"VBench leg skipped: {why}")
        return 0
    v = statistics.median(result["times"])
    ours = [flicker.compute(it).value for it in items]
    diff = max(abs(x - y) for x, y in zip(ours, result["scores"], strict=True))
    print(f"  {'(c) VBench temporal flickering':36s} {v:8.2f} s  {n / v:7.2f} videos/s  ({python})")
    c = med["(c) robojudge temporal flickering"]
    print(f"  VBench/robojudge time ratio: {v / c:.2f}; max |score difference| {diff:.2e} "
          "(decoders differ: PyAV RGB vs OpenCV BGR)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
