"""The command line in pipelines: table inputs read from a pipe (``-``, ``/dev/stdin``, ``<(...)``) and
``results export`` written to standard output. Each command runs in a subprocess with real pipes."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from robojudge.store import ResultRow, ResultStore


def _robojudge(*args: str | Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "robojudge", *map(str, args)], input=stdin, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _run(tmp_path: Path) -> tuple[Path, Path]:
    suite = tmp_path / "suite.jsonl"
    gens = {"a1": "alpha", "a2": "alpha", "b1": "beta"}
    suite.write_text("".join(json.dumps({"item_id": i, "video": "v.mp4", "generator": g}) + "\n"
                             for i, g in gens.items()))
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        store.add([ResultRow(i, "ol_average_recall", "h", "1", "ok", v)
                   for i, v in (("a1", 0.2), ("a2", 0.6), ("b1", 0.9))])
    return suite, db


def test_export_to_stdout_feeds_aggregate_through_a_pipe(tmp_path: Path) -> None:
    suite, db = _run(tmp_path)
    out = _robojudge("results", "export", "--db", db, "--out", "-", "--by", "generator", "--suite", suite)
    # before: a file named '-' was written, and stdout held only "wrote 3 rows to -"
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["item_id"], r["generator"]) for r in rows] == [
        ("a1", "alpha"), ("a2", "alpha"), ("b1", "beta")]
    assert "wrote 3 rows to standard output" in out.stderr and not (tmp_path / "-").exists()
    # before: the second read of /dev/stdin (a pipe) found it drained, and its data rows read as a header
    for name in ("/dev/stdin", "-"):
        agg = _robojudge("aggregate", "scores", "--in", name, "--by", "generator", stdin=out.stdout)
        assert agg.returncode == 0, agg.stderr
        groups = {r["generator"]: r for r in csv.DictReader(io.StringIO(agg.stdout))}
        assert set(groups) == {"alpha", "beta"}, agg.stdout


def test_export_to_dev_stdout_and_parquet_refused(tmp_path: Path) -> None:
    _, db = _run(tmp_path)
    dev = _robojudge("results", "export", "--db", db, "--out", "/dev/stdout", "--format", "csv")
    # before: "cannot write /dev/stdout: No such file or directory" (a file written beside it, renamed)
    assert dev.returncode == 0, dev.stderr
    assert len(list(csv.DictReader(io.StringIO(dev.stdout)))) == 3
    pq = _robojudge("results", "export", "--db", db, "--out", "-", "--format", "parquet")
    assert pq.returncode == 2 and pq.stdout == ""
    assert "cannot write Parquet to standard output, which is not a file" in pq.stderr


def test_meta_reads_score_tables_from_a_pipe(tmp_path: Path) -> None:
    sample = "s,t\n" + "".join(f"{k / 3:.3f},{k % 4}\n" for k in range(12))
    # before: -: no such file; /dev/stdin: "No columns to parse", the field-count check had read it all
    for name in ("-", "/dev/stdin"):
        res = _robojudge("meta", "compare", "--in", name, "--score", "s", "--target", "t", "--json",
                         stdin=sample)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)
    pred = "item_id,axis,score\n" + "".join(f"i{k},pa,{1 + k % 5}\n" for k in range(10))
    (tmp_path / "human.csv").write_text("item_id,axis,score\n" + "".join(f"i{k},pa,{1 + (k + k // 5) % 5}\n"
                                                                        for k in range(10)))
    res = _robojudge("meta", "agreement", "--pred", "/dev/stdin", "--human", tmp_path / "human.csv",
                     "--bootstrap", "0", "--json", stdin=pred)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)
