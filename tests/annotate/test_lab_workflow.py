"""The lab's workflow around the labels: whose evidence a final label carries, a suite that changed
since ``init``, tasks of a rater who left, adjudications redone, items added later, training rounds
and whom ``raters.csv`` scores on what."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _ann_data import SQLITE_ONLY, SuiteFiles, label_through, make_suite

from robojudge.annotate import (
    AnnotationService,
    add_annotator,
    assign,
    export_manifest,
    final_labels,
    init_project,
)
from robojudge.suite import CHECKLIST_ITEMS

pytestmark = SQLITE_ONLY
PW = "correct horse"


def _values(pa: int, ia: int, **extra: Any) -> dict[str, Any]:
    return {"pa": pa, "ia": ia, **{f"checklist.{c}": 1 for c in CHECKLIST_ITEMS}, **extra}


@pytest.fixture
def suite(tmp_path: Path) -> SuiteFiles:
    """A suite of its own (these tests edit it)."""
    return make_suite(tmp_path / "suite", n=4)


def _people(db: str) -> None:
    for name, role in (("ann1", "annotator"), ("ann2", "annotator"), ("rev1", "reviewer"),
                       ("adj1", "adjudicator"), ("adj2", "adjudicator")):
        add_annotator(db, name, role, password=PW)


def _do(db: str, name: str, values: dict[str, Any], kind: str | None = None) -> int:
    """``name`` submits every open task of theirs (of ``kind``) with ``values``; how many."""
    n = 0
    with AnnotationService(db) as svc:
        who = svc.authenticate(name, PW)
        for entry in svc.queue(who):
            if entry.status != "submitted" and (kind is None or entry.kind == kind):
                label_through(svc, who, entry.assignment_id, values)
                n += 1
    return n


def _adjudicated(db: str, suite: SuiteFiles, adjudication: dict[str, Any]) -> str:
    """One item: ann1 says PA 1 (with evidence), rev1 says PA 5, adj1 adjudicates with ``adjudication``."""
    item = suite.item_ids[1]
    init_project(suite.manifest, db, "p", seed=1)
    _people(db)
    assign(db, "p", ["ann1"], items=[item])
    assign(db, "p", ["rev1"], kind="review", items=[item])
    assign(db, "p", ["adj1"], kind="adjudicate", items=[item])
    _do(db, "ann1", _values(1, 4, evidence="the gripper melts into the table: implausible"))
    _do(db, "rev1", _values(5, 4, evidence="contact and motion look physically right"))
    _do(db, "adj1", adjudication)
    return item


# -- F1: the evidence of an adjudicated final label --------------------------------------------------


def test_an_overriding_adjudication_never_carries_the_primary_raters_evidence(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    item = _adjudicated(db_url, suite, _values(5, 4, note="agree with the review: contact is fine"))
    lab = final_labels(db_url, "p")[item]
    assert lab.rater == "adj1" and lab.values.pa == 5
    assert lab.values.evidence == "agree with the review: contact is fine"
    out = tmp_path / "lab.jsonl"
    export_manifest(db_url, "p", out)
    rec = next(json.loads(x) for x in out.read_text().splitlines() if json.loads(x)["item_id"] == item)
    assert rec["labels"]["evidence"] == "agree with the review: contact is fine"
    assert rec["meta"]["annotation"]["evidence_from"] == "adj1"
    assert "melts" not in out.read_text()


def test_an_overriding_adjudication_without_text_has_no_evidence(db_url: str, suite: SuiteFiles) -> None:
    item = _adjudicated(db_url, suite, _values(5, 4))
    lab = final_labels(db_url, "p")[item]
    assert lab.values.pa == 5 and lab.values.evidence is None


def test_a_confirming_adjudication_keeps_the_primary_evidence_and_names_its_author(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    item = _adjudicated(db_url, suite, _values(1, 4, note="the primary label is right"))
    lab = final_labels(db_url, "p")[item]
    assert lab.values.evidence == "the gripper melts into the table: implausible"
    out = tmp_path / "lab.jsonl"
    export_manifest(db_url, "p", out)
    rec = next(json.loads(x) for x in out.read_text().splitlines() if json.loads(x)["item_id"] == item)
    assert rec["labels"]["rater"] == "adj1" and rec["meta"]["annotation"]["evidence_from"] == "ann1"


def test_training_data_never_pairs_the_primary_reasoning_with_the_adjudicated_score(
    db_url: str, suite: SuiteFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robojudge.train import export_training_data

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    db = db_url
    item = _adjudicated(db, suite, _values(5, 4))  # overrides PA, writes neither evidence nor note
    summary = export_training_data(db, ["pa"], tmp_path / "train", project="p", fractions={"train": 1.0})
    (rec,) = [json.loads(x) for x in (summary.out / "train.jsonl").read_text().splitlines()]
    assert rec["item_id"] == item and rec["score"] == 5
    reply = json.loads(rec["completion"][0]["content"][0]["text"])
    assert reply == {"physical_adherence": 5}  # the score alone: no reasoning for the other score


# -- F4: the recorded suite is checked before an export ------------------------------------------------


def _rewrite(manifest: Path, change: Any) -> None:
    records = [json.loads(x) for x in manifest.read_text().splitlines()]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in change(records)), encoding="utf-8")


def _all_final(db: str, suite: SuiteFiles) -> None:
    init_project(suite.manifest, db, "p", seed=1)
    _people(db)
    assign(db, "p", ["ann1", "ann2"])
    _do(db, "ann1", _values(4, 4, evidence="fine"))
    _do(db, "ann2", _values(5, 5, evidence="fine"))


@pytest.mark.parametrize("fmt", ["manifest", "scores", "labelstudio", "train"])
def test_an_edited_instruction_in_the_recorded_suite_is_an_error_naming_item_and_field(
    db_url: str, suite: SuiteFiles, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robojudge.annotate import AnnotateError, export_labelstudio, export_scores

    _all_final(db_url, suite)
    item = suite.item_ids[2]

    def edit(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            if r["item_id"] == item:
                r["instruction"] = "open the drawer"
        return records

    _rewrite(suite.manifest, edit)
    want = (rf"{re.escape(str(suite.manifest))}: the suite of project 'p' changed.*"
            rf"item '{item}' field instruction")
    if fmt == "train":
        from robojudge.train import ExportError, export_training_data

        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        with pytest.raises(ExportError, match=want):
            export_training_data(db_url, ["ia"], tmp_path / "train", project="p")
        return
    run = {"manifest": export_manifest, "scores": export_scores, "labelstudio": export_labelstudio}[fmt]
    out = tmp_path / {"manifest": "lab.jsonl", "scores": "scores", "labelstudio": "ls.json"}[fmt]
    with pytest.raises(AnnotateError, match=want):
        run(db_url, "p", out)
    assert not out.exists()


def test_an_item_removed_from_the_recorded_suite_is_an_error(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    from robojudge.annotate import AnnotateError, export_scores

    _all_final(db_url, suite)
    gone = suite.item_ids[3]
    _rewrite(suite.manifest, lambda rs: [r for r in rs if r["item_id"] != gone])
    with pytest.raises(AnnotateError, match=rf"items of the project it lacks: '{gone}'"):
        export_scores(db_url, "p", tmp_path / "scores")
    with pytest.raises(AnnotateError, match=rf"items of the project it lacks: '{gone}'"):
        export_manifest(db_url, "p", tmp_path / "lab.jsonl")


def test_a_changed_video_in_the_recorded_suite_is_an_error(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    from robojudge.annotate import AnnotateError

    _all_final(db_url, suite)
    a, b = suite.item_ids[2], suite.item_ids[3]

    def swap(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by = {r["item_id"]: r for r in records}
        by[a]["video"], by[b]["video"] = by[b]["video"], by[a]["video"]
        return records

    _rewrite(suite.manifest, swap)
    with pytest.raises(AnnotateError, match=rf"item '{a}' field video"):
        export_manifest(db_url, "p", tmp_path / "lab.jsonl")
