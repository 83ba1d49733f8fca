"""``labels.overall`` holds RoboPhys-3D's human score: a 10-point rating, or the mean over raters.

The paper's human reference is the mean of at least three raters' 10-point scores (App. D, eq. 11), so
7.33 must be a valid value; it was refused with "expected a whole number". A whole value still reads and
writes as a whole number, and what is not a finite number in [1, 10] is refused, naming the field.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from suite_manifest_helpers import flatten, rows, write_csv, write_jsonl, write_parquet

from robojudge.suite import load_suite, scan_folder, suite_info, validate_manifest, write_manifest


@pytest.mark.parametrize("writer", ["jsonl", "csv", "parquet"])
def test_a_mean_over_raters_is_read_from_every_format(media_root: Path, writer: str) -> None:
    rs = rows()
    rs[0]["labels"]["overall"] = 7.33  # (7 + 7 + 8) / 3
    rs[1]["labels"]["overall"] = 4
    if writer == "jsonl":
        path = write_jsonl(media_root / "suite.jsonl", rs)
    elif writer == "csv":
        path = write_csv(media_root / "suite.csv", [flatten(r) for r in rs])
    else:
        path = write_parquet(media_root / "suite.parquet", [flatten(r) for r in rs])
    assert validate_manifest(path) == []
    labels = {it.item_id: it.labels for it in load_suite(path)}
    assert labels["ep1"] is not None and labels["ep1"].overall == pytest.approx(7.33)
    # a whole value stays a whole number (a Parquet column of 7.33 and 4 holds 4.0)
    assert labels["ep2"] is not None and labels["ep2"].overall == 4 and isinstance(labels["ep2"].overall, int)
    assert suite_info(load_suite(path)).labels.overall == 2


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (10.5, "value 10.5 is out of range 1-10"),
        (0.99, "value 0.99 is out of range 1-10"),
        (True, "expected a number, got boolean True"),
        ("high", "expected a number, got 'high'"),
        (math.nan, "expected a finite number, got nan"),
    ],
)
def test_what_is_no_score_in_1_10_is_refused_naming_the_field(media_root: Path, value: object,
                                                               message: str) -> None:
    rs = rows()
    rs[0]["labels"]["overall"] = value
    (problem,) = validate_manifest(write_jsonl(media_root / "suite.jsonl", rs))
    assert (problem.line, problem.item_id, problem.field, problem.message) == (1, "ep1", "labels.overall",
                                                                                message)


def test_a_ratings_table_with_means_becomes_a_manifest_that_keeps_them(tmp_path: Path) -> None:
    root = tmp_path / "v"
    for rel in ("a/ep01.mp4", "b/ep01.mp4"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"")
    table = tmp_path / "ratings.csv"
    table.write_text("video,overall,rater\na/ep01.mp4,7.33,mean of 3\nb/ep01.mp4,7,mean of 3\n")
    out = tmp_path / "v.jsonl"
    write_manifest(scan_folder(root, labels=table), out)
    written = {r["item_id"]: r["labels"] for r in map(json.loads, out.read_text().splitlines())}
    assert written == {"a/ep01": {"overall": 7.33, "rater": "mean of 3"},
                       "b/ep01": {"overall": 7, "rater": "mean of 3"}}
    assert '"overall": 7,' in out.read_text()  # not 7.0
    assert {it.item_id: it.labels.overall for it in load_suite(out) if it.labels} == {"a/ep01": 7.33,
                                                                                     "b/ep01": 7}
