"""CPU time and peak memory of the commands that read a whole store, on a lab-shaped synthetic store,
with this tree's robojudge and, side by side, another commit's (``--before REF``).

Run with::

    .venv/bin/python benchmarks/bench_big_store.py [--items 1000] [--before REF]

The store is built as the scale audit built it: ``--items`` items of ``--generators`` generators (clips
of that many items, four sources) with PA and IA labels, one row per item of ``--metrics`` registered
metrics (their real config, config hash, version, library record and input fingerprint, so every row is
up to date) and the PA and IA rows of ``--judges`` VLM judges, with about 3 KB of details each (their
reasoning). About 1% of the metric rows are errors and 2% unscored. The videos are a few small files
of random bytes: the fingerprints hash them, nothing decodes them.

Each command runs in a child process of its own (``python -m robojudge``), so that its CPU seconds
(user + system) and peak resident memory are its own; under ``--before REF`` the commit's ``src/`` is
taken with ``git archive`` and run on the same store, and the two outputs must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _build(folder: Path, n_items: int, n_generators: int, n_metrics: int, n_judges: int) -> int:
    """Write ``folder/suite.jsonl`` and ``folder/results.sqlite``; returns the number of rows."""
    from robojudge.metrics import is_set_metric, list_metrics
    from robojudge.run._fingerprint import Fingerprints, judge_fingerprint
    from robojudge.run._score import MetricRequest, with_libraries
    from robojudge.store import ResultStore
    from robojudge.suite import load_suite

    rng = random.Random(0)
    videos = folder / "videos"
    videos.mkdir()
    for name in ("v0", "v1", "v2", "v3", "v4", "v5", "r0", "r1", "r2"):
        (videos / f"{name}.mp4").write_bytes(rng.randbytes(4096))
    items = []
    with open(folder / "suite.jsonl", "w", encoding="utf-8") as fh:
        for c in range(max(1, n_items // n_generators)):
            for g in range(n_generators):
                pa, ia = rng.randint(1, 5), rng.randint(1, 5)
                item_id = f"c{c:05d}-gen{g:02d}"
                fh.write(json.dumps({
                    "item_id": item_id, "video": f"videos/v{(c + g) % 6}.mp4",
                    "reference_video": f"videos/r{c % 3}.mp4",
                    "instruction": f"pick up the red cube number {c % 50} and place it on the green target",
                    "source": f"src{c % 4}", "clip_id": f"clip{c:05d}", "generator": f"gen{g:02d}",
                    "labels": {"pa": pa, "ia": ia}}) + "\n")
                items.append((item_id, pa, ia, g))
    by_id = {it.item_id: it for it in load_suite(folder / "suite.jsonl").items}
    requests = []
    for spec in list_metrics():
        if is_set_metric(spec.id) or spec.id == "uniform_random" or not {
                str(getattr(i, "value", i)) for i in spec.inputs} <= {"video", "reference", "instruction"}:
            continue
        try:
            requests.append(MetricRequest.build(spec.id))
        except Exception:  # a metric whose defaults need something absent here: not one of the rows
            continue
        if len(requests) == n_metrics:
            break
    prints = Fingerprints()
    shared: dict[tuple[Any, ...], str] = {}

    def fingerprint(item: Any, req: MetricRequest) -> str:
        key = (item.video, item.reference_video, item.instruction, req.spec.id)
        if key not in shared:
            shared[key] = prints.metric(item, req.spec, req.config).value
        return shared[key]

    per_metric = {r.spec.id: (r.config_hash, json.dumps(r.config.model_dump(mode="json")), r.spec.version,
                              with_libraries({}, r.spec)) for r in requests}
    with ResultStore(f"sqlite:///{folder / 'results.sqlite'}") as store:
        store.note_manifest(folder / "suite.jsonl")
    words = ["the", "gripper", "closes", "on", "the", "cube", "and", "lifts", "it", "but", "the", "cube",
             "drifts", "sideways", "before", "release"]
    insert = ("INSERT INTO robojudge_results (item_id, metric, config_hash, version, status, value, error, "
              "duration_s, details, config, created_at, fingerprint, superseded_at) "
              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL)")
    conn = sqlite3.connect(folder / "results.sqlite")
    n, batch = 0, []
    for k, (item_id, pa, ia, g) in enumerate(items):
        item = by_id[item_id]
        created = f"2026-12-07 06:{(k // 1000) % 60:02d}:{k % 60:02d}.{k:06d}"
        for r in requests:
            config_hash, config, version, libraries = per_metric[r.spec.id]
            status, error, value = "ok", None, round(0.1 * (pa + ia) + rng.gauss(0, 0.3) + 0.02 * g, 6)
            details: dict[str, Any] = {"frames": 48, "frame_size": "256x256", **libraries}
            if rng.random() < 0.01:
                status, error, value = "error", "ValueError: the video has 1 frame; 2 are needed", None
            elif rng.random() < 0.02:
                value, details["unscored_reason"] = None, "no reference object to localize"
            batch.append((item_id, r.spec.id, config_hash, version, status, value, error, rng.random(),
                          json.dumps(details), config, created, fingerprint(item, r)))
        for j in range(n_judges):
            for axis, label in (("pa", pa), ("ia", ia)):
                score = float(min(5, max(1, round(label + rng.gauss(0, 0.8 + 0.3 * j)))))
                reasoning = " ".join(rng.choice(words) for _ in range(150))
                details = {"judge": f"j{j}", "model": f"model-{j}", "rubric": axis, "reasoning": reasoning,
                           "turns": [{"score": score, "reasoning": reasoning,
                                      "raw": [json.dumps({"reasoning": reasoning, "score": score})]}]}
                config = json.dumps({"backend": "openai", "model": f"model-{j}",
                                     "rubric": {"id": axis, "version": "1", "digest": "c2d2e3c8bae0"}})
                batch.append((item_id, f"judge:j{j}:{axis}", f"{j:02d}{axis}", "1", "ok", score, None, 3.2,
                              json.dumps(details), config, created, judge_fingerprint(item)))
        if len(batch) > 20000:
            conn.executemany(insert, batch)
            conn.commit()
            n, batch = n + len(batch), []
    conn.executemany(insert, batch)
    conn.commit()
    conn.close()
    return n + len(batch)


def _run(src: Path, args: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """CPU seconds, peak MB and standard output of ``python -m robojudge ARGS`` with ``src`` first."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "200"}
    child = subprocess.Popen([sys.executable, "-m", "robojudge", *args], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = child.stdout.read() if child.stdout is not None else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"robojudge {' '.join(args)} failed ({child.returncode}) with {src}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--generators", type=int, default=40)
    ap.add_argument("--metrics", type=int, default=40)
    ap.add_argument("--judges", type=int, default=3)
    ap.add_argument("--before", help="A commit to compare with (its src/, from git archive).")
    ap.add_argument("--bootstrap", type=int, default=200, help="The leaderboards' replicates.")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        store = tmp / "store"
        store.mkdir()
        n = _build(store, args.items, args.generators, args.metrics, args.judges)
        print(f"{n} rows, {args.items} items, {args.metrics} metrics, {args.judges} judges "
              f"({(store / 'results.sqlite').stat().st_size / 1e6:.0f} MB)")
        trees = {"now": ROOT / "src"}
        if args.before:
            old = tmp / "before"
            old.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
            trees = {f"before ({args.before})": old / "src", **trees}
        boot = ["--bootstrap", str(args.bootstrap)]
        commands = {
            "leaderboard generators --scores labels": ["leaderboard", "generators", "suite.jsonl", "--db",
                                                       "results.sqlite", "--scores", "labels", *boot],
            "leaderboard generators --scores judge:j0": ["leaderboard", "generators", "suite.jsonl", "--db",
                                                         "results.sqlite", "--scores", "judge:j0", *boot],
            "results export --suite -o CSV": ["results", "export", "results.sqlite", "--suite", "suite.jsonl",
                                              "-o", "-"],
            "results status": ["results", "status", "suite.jsonl", "--db", "results.sqlite"],
        }
        print(f"{'command':44} " + " ".join(f"{name:>26}" for name in trees)
              + ("  ratio cpu, rss" if len(trees) > 1 else ""))
        for title, argv in commands.items():
            got = [_run(src, argv, store) for src in trees.values()]
            if len({out for _, _, out in got}) > 1:
                raise SystemExit(f"{title}: the outputs differ")
            cells = " ".join(f"{f'{cpu:.1f} s CPU, {mb:.0f} MB':>26}" for cpu, mb, _ in got)
            ratio = (f"  {got[0][0] / got[-1][0]:.1f}x, {got[0][1] / got[-1][1]:.1f}x"
                     if len(got) > 1 else "")
            print(f"{title:44} {cells}{ratio}", flush=True)


if __name__ == "__main__":
    main()
