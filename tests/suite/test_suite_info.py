"""suite_info counts, checked by hand against the canonical rows."""

from __future__ import annotations

import json
from pathlib import Path

from suite_manifest_helpers import rows, write_jsonl

from robojudge.suite import UNSET, LabelCoverage, load_suite, suite_info


def test_counts_of_the_canonical_suite(media_root: Path) -> None:
    # ep1: droid / wan2.2 / gripper / test, full labels by r1
    # ep2: egodex / cosmos / human_hand / test, pa only by r2
    # ep3: droid / wan2.2 / no embodiment / no split, no labels
    info = suite_info(load_suite(write_jsonl(media_root / "suite.jsonl", rows())))
    assert info.items == 3 and info.problems == 0
    assert info.by_source == {"droid": 2, "egodex": 1}
    assert info.by_generator == {"wan2.2": 2, "cosmos": 1}
    assert info.by_embodiment == {UNSET: 1, "gripper": 1, "human_hand": 1}
    assert info.by_split == {"test": 2, UNSET: 1}
    assert info.labels == LabelCoverage(
        labelled=2,
        pa=2,
        ia=1,
        checklist_full=1,
        checklist_any=1,
        overall=1,
        evidence=1,
        by_rater={"r1": 1, "r2": 1},
    )


def test_partial_checklist_and_raters(media_root: Path) -> None:
    video = "videos/ep3.mp4"
    rs = [
        {"item_id": "a", "video": video, "labels": {"checklist": {"agent_match": 1}, "rater": "r1"}},
        {"item_id": "b", "video": video, "labels": {"ia": 5, "rater": "r1", "evidence": "  "}},
        {"item_id": "c", "video": video, "labels": {"overall": 10}},
        {"item_id": "d", "video": video, "generator": "veo", "embodiment": "bimanual"},
    ]
    info = suite_info(load_suite(write_jsonl(media_root / "suite.jsonl", rs)))
    assert info.labels == LabelCoverage(
        labelled=3,
        pa=0,
        ia=1,
        checklist_full=0,
        checklist_any=1,
        overall=1,
        evidence=0,
        by_rater={"r1": 2, UNSET: 1},
    )
    assert info.by_generator == {UNSET: 3, "veo": 1}
    assert info.by_embodiment == {UNSET: 3, "bimanual": 1}


def test_non_strict_suite_counts_valid_items_and_problems(media_root: Path) -> None:
    rs = rows()
    rs[1]["embodiment"] = "robot"
    suite = load_suite(write_jsonl(media_root / "suite.jsonl", rs), strict=False)
    info = suite_info(suite)
    assert info.items == 2 and info.problems == 1
    assert info.by_source == {"droid": 2}


def test_to_dict_is_plain_json(media_root: Path) -> None:
    info = suite_info(load_suite(write_jsonl(media_root / "suite.jsonl", rows())))
    d = info.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["labels"]["by_rater"] == {"r1": 1, "r2": 1}
    assert d["path"] == str(media_root / "suite.jsonl")
    assert set(d) == {"path", "items", "problems", "labels"} | {
        f"by_{k}" for k in ("source", "generator", "embodiment", "split")
    }
