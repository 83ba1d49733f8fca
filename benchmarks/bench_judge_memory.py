"""Memory a judge run costs when the server sends huge replies (the reply-size cap, docs/judges.md).

Run with::

    .venv/bin/python benchmarks/bench_judge_memory.py [--replies 6] [--mb 50] [--cap BYTES ...]
        [--src DIR]

A local server (``tests/judges/_judge_server.py``, in its own process) answers every request with
the same well-formed chat reply of ``--mb`` megabytes. ``--replies`` items are judged at once
(concurrency = replies, no retries, one rubric), each run in a fresh client process so that its
peak resident memory is its own. Printed per run: the client's peak RSS above its RSS just before
judging, the tracemalloc peak of the judging call, the size of the response cache folder and of the
result store afterwards, and what was stored.

``--cap`` runs once per value of ``max_reply_bytes`` (default: the default cap, and 1 GiB, which
reads everything like the code before the cap). ``--src DIR`` runs the client against another
source tree (for example an export of an older commit: ``git archive OLD src | tar -x -C DIR``);
a tree whose judges have no ``max_reply_bytes`` runs once, uncapped.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "judges"))

_CLIENT = r"""
import json, resource, sys, time, tracemalloc
from pathlib import Path
import numpy as np
from robojudge.judges import JudgeConfig, ResponseCache, get_rubric, make_judge
from robojudge.run._judge import judge_items
from robojudge.store import ResultStore
from robojudge.suite import Item
from robojudge.video import write_video

url, n, cap, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
items = []
for i in range(n):
    path = tmp / f"clip{i}.mp4"
    frames = np.full((8, 32, 32, 3), 40 * i % 256, dtype=np.uint8)
    write_video(path, frames, fps=4.0)
    items.append(Item(item_id=f"clip{i}", video=str(path), instruction="lift the cup"))
values = {"name": "mem", "backend": "openai", "model": "m", "base_url": url, "concurrency": n,
          "max_retries": 0, "timeout_s": 300}
if "max_reply_bytes" in JudgeConfig.model_fields:
    values["max_reply_bytes"] = cap
judge = make_judge(values)
def rss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with ResponseCache(tmp / "cache") as cache, ResultStore(tmp / "r.sqlite") as store:
    base = int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() // 1024
    tracemalloc.start()
    t0 = time.perf_counter()
    s = judge_items(items, judge, [get_rubric("ia")], store, cache=cache, decode_workers=0)
    took = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rows = store.rows()
def size(p):
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
print(json.dumps({
    "capped": "max_reply_bytes" in values, "cap": cap, "seconds": took,
    "rss_peak_above_start_mb": (rss_kb() - base) / 1024, "tracemalloc_peak_mb": peak / 2**20,
    "cache_mb": size(tmp / "cache") / 2**20, "store_mb": size(tmp / "r.sqlite") / 2**20,
    "scored": s.scored, "unscored": s.unscored, "failed": s.failed,
    "first_error": next((r.error[:120] for r in rows if r.error), None),
}))
"""


def _server_main(mb: int, urls: Any) -> None:
    from _judge_server import FakeServer, Reply

    content = json.dumps({"reasoning": "x" * (mb * 10**6), "instruction_alignment": 4})
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
    with FakeServer(lambda b, n: Reply(body=body), record=False) as srv:
        urls.put(srv.url)
        time.sleep(24 * 3600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replies", type=int, default=6)
    ap.add_argument("--mb", type=int, default=50, help="reply size in megabytes (10^6 bytes)")
    ap.add_argument("--cap", type=int, action="append", help="max_reply_bytes (repeatable)")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="source tree the client imports")
    args = ap.parse_args()
    caps = args.cap or [1 << 20, 1 << 30]
    ctx = mp.get_context("fork")
    urls = ctx.Queue()
    server = ctx.Process(target=_server_main, args=(args.mb, urls), daemon=True)
    server.start()
    url = urls.get(timeout=120)
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    print(f"{args.replies} replies of {args.mb} MB at once; client from {args.src}")
    try:
        for cap in caps:
            with tempfile.TemporaryDirectory() as tmp:
                env["ROBOJUDGE_CACHE_DIR"] = str(Path(tmp) / "user-cache")
                out = subprocess.run(
                    [sys.executable, "-c", _CLIENT, url, str(args.replies), str(cap), tmp],
                    env=env, capture_output=True, text=True, check=True,
                )
            res = json.loads(out.stdout.strip().splitlines()[-1])
            label = f"max_reply_bytes={cap}" if res["capped"] else "no cap (this tree has none)"
            print(
                f"{label}: RSS peak +{res['rss_peak_above_start_mb']:.0f} MB, tracemalloc peak "
                f"{res['tracemalloc_peak_mb']:.0f} MB, cache {res['cache_mb']:.1f} MB, store "
                f"{res['store_mb']:.2f} MB, {res['seconds']:.1f} s; scored {res['scored']}, failed "
                f"{res['failed']}; first error: {res['first_error']}"
            )
            if not res["capped"]:
                break
    finally:
        server.terminate()


if __name__ == "__main__":
    main()
