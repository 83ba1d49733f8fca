"""Load test of the annotation web app: many annotators submitting at once, on SQLite and PostgreSQL.

Run with::

    .venv/bin/python benchmarks/bench_annotate_load.py [--annotators 50] [--per 100] [--db sqlite,postgres]
        [--double-every 10] [--deadline 900] [--pg-url URL]

The app runs as ``robojudge annotate serve`` in its own process on 127.0.0.1 (uvicorn, one process,
the service's thread pool), with real argon2 password hashes. The clients are asyncio tasks with
httpx in this process, one per annotator (tests/annotate/web/_load.py): each logs in, reads its queue
and labels its tasks in turn as a browser would (open the page, autosave the PA part, show the
instruction, open the page again, submit). Every ``--double-every``-th submit is sent twice at once.
The tasks are a practice round giving every annotator every item, so ``--annotators x --per``
labels are written. The run stops by itself at ``--deadline`` seconds.

Measured, per database: labels acknowledged and stored, lost (acknowledged, not stored), duplicated
(stored twice), altered (stored with other values), double submits answered other than one 303 and
one 303 (its repeat) or 409; wall time and requests per second; latency p50/p95/max per request kind
and over all requests. Pass: 0 lost, 0 duplicated, 0 altered. Without ``--pg-url`` PostgreSQL is a private
server started from the Debian binaries (as the tests do), skipped when there are none.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "annotate" / "web"))
sys.path.insert(0, str(ROOT / "tests"))

from _load import LoadResult, Verdict, run_load, setup_load_project, verify  # noqa: E402
from _web_data import free_port  # noqa: E402

PASSWORD = "load test password"


def serve(suite: str, db: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (workdir / "server.log").open("wb")
    cmd = [sys.executable, "-m", "robojudge", "annotate", "serve", suite, "--db", db, "--port", str(port),
           "--secret-file", str(workdir / "secret")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"{base}/login", timeout=5)
            return proc, base
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"the server did not start; see {workdir / 'server.log'}") from None
            time.sleep(0.3)


def report(name: str, result: LoadResult, verdict: Verdict, n_expected: int) -> bool:
    v = verdict
    n_requests = len(result.all_latencies())
    print(f"\n== {name}: {len(result.sent)}/{n_expected} labels acknowledged, {v.stored} stored "
          f"in {result.wall_s:.1f} s ({n_requests} requests, {n_requests / result.wall_s:.0f}/s)")
    print(f"lost {len(v.lost)}  duplicated {len(v.duplicated)}  altered {len(v.altered)}  "
          f"count mismatch {v.extra or 'none'}  double submits {result.double_pairs} "
          f"(409s: {result.statuses['submit 409']})  unexpected answers {len(result.unexpected)}"
          f"{'  TIMED OUT' if result.timed_out else ''}")
    for line in result.unexpected[:5]:
        print("   ", line)
    print(f"{'request':<12}{'n':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    everything = LoadResult()
    everything.latencies["all"] = result.all_latencies()
    rows = [(k, result) for k in sorted(result.latencies)] + [("all", everything)]
    for kind, res in rows:
        values = res.latencies[kind]
        print(f"{kind:<12}{len(values):>7}{res.percentile(kind, 50) * 1000:>9.0f}"
              f"{res.percentile(kind, 95) * 1000:>9.0f}{max(values) * 1000:>9.0f}")
    return not (v.lost or v.duplicated or v.altered or v.extra or result.unexpected or result.timed_out)


def one_run(name: str, db: str, args: argparse.Namespace) -> bool:
    with tempfile.TemporaryDirectory(prefix=f"rj-load-{name}-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        suite, users = setup_load_project(work / "suite", db, args.annotators, args.per, PASSWORD)
        print(f"[{name}] project: {args.annotators} annotators x {args.per} items in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        proc, base = serve(suite, db, work)
        try:
            result = asyncio.run(run_load(base, users, PASSWORD, per_annotator=args.per,
                                          double_every=args.double_every, deadline_s=args.deadline))
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        verdict = verify(db, "load", "root", PASSWORD, result)
        ok = report(name, result, verdict, args.annotators * args.per)
        if result.unexpected:
            print("server log, last lines:\n" + (work / "server.log").read_text(errors="replace")[-3000:])
        return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--per", type=int, default=100, help="labels per annotator")
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--double-every", type=int, default=10)
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds before the clients stop")
    parser.add_argument("--pg-url", default=None, help="an empty PostgreSQL database to use")
    args = parser.parse_args()
    ok = True
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in args.db.split(","):
        if name == "sqlite":
            with tempfile.TemporaryDirectory(prefix="rj-load-db-") as tmp:
                ok &= one_run("sqlite", f"sqlite:///{Path(tmp) / 'load.sqlite'}", args)
        elif name == "postgres":
            if args.pg_url:
                ok &= one_run("postgres", args.pg_url, args)
                continue
            from _postgres import _find_bindir, _local_server

            if _find_bindir() is None:
                print("[postgres] skipped: no PostgreSQL binaries (or pass --pg-url)")
                continue
            server = _local_server()
            server.start()
            try:
                ok &= one_run("postgres", server.url, args)
            finally:
                server.stop()
        else:
            raise SystemExit(f"unknown --db {name!r} (sqlite, postgres)")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
