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


# -- F2: a departed rater's tasks move; an adjudication is redone ---------------------------------------


def _stage_of(db: str, name: str) -> list[tuple[str, str, int]]:
    """(kind, stage, version) of ``name``'s unfinished tasks, and the shown values' PA."""
    with AnnotationService(db) as svc:
        who = svc.authenticate(name, PW)
        out = []
        for e in svc.queue(who):
            if e.status != "submitted":
                page = svc.task(who, e.assignment_id)
                out.append((e.kind, page.stage, len(svc.history(who, e.assignment_id))))
        return out


def test_a_departed_raters_unfinished_tasks_move_to_another(
    db_url: str, suite: SuiteFiles
) -> None:
    from robojudge.annotate import (
        LabelValues,
        nothing_dealt,
        project_status,
        reassign,
        update_annotator,
    )

    init_project(suite.manifest, db_url, "p", seed=1)
    _people(db_url)
    assign(db_url, "p", ["ann1", "ann2"])  # two items each
    _do(db_url, "ann1", _values(4, 4))
    with AnnotationService(db_url) as svc:  # ann2 gets as far as PA on one item, then leaves
        who = svc.authenticate("ann2", PW)
        aid = svc.queue(who)[0].assignment_id
        pa = {"pa": 2, **{f"checklist.{c}": 1 for c in CHECKLIST_ITEMS[:3]}}
        svc.save_draft(who, aid, LabelValues.from_form(pa), 0)
        svc.reveal_instruction(who, aid)
    update_annotator(db_url, "ann2", active=False)
    add_annotator(db_url, "ann3", password=PW)
    assert project_status(db_url, "p").inactive == {"ann2": 2}
    assert assign(db_url, "p", ["ann1", "ann3"]) == 0
    why = nothing_dealt(db_url, "p")
    assert "1 draft held by ann2 (inactive), 1 open held by ann2 (inactive)" in why
    assert "robojudge annotate reassign --from ann2" in why

    moved = reassign(db_url, "p", "ann2", ["ann3"])
    assert sorted((m.kind, m.to_user, m.draft_set_aside) for m in moved) == [
        ("label", "ann3", False), ("label", "ann3", True)]
    assert project_status(db_url, "p").inactive == {}
    # The draft starts afresh in the PA stage (ann2's PA is not imposed); ann2's version stays in the task's
    # history, which only an admin reads: ann3 sees none of ann2's values (review rev19 F3).
    assert sorted(_stage_of(db_url, "ann3")) == [("label", "pa", 0), ("label", "pa", 1)]
    with AnnotationService(db_url) as svc:
        add_annotator(db_url, "boss", "admin", password=PW)
        ann3, root = svc.authenticate("ann3", PW), svc.authenticate("boss", PW)
        (moved_draft,) = [e for e in svc.queue(ann3) if svc.history(ann3, e.assignment_id)]
        assert [v.author for v in svc.history(ann3, moved_draft.assignment_id)] == ["ann3"]
        everything = svc.history(root, moved_draft.assignment_id)
        assert [(v.author, v.values.pa) for v in everything] == [("ann2", 2), ("ann3", None)]
    assert _do(db_url, "ann3", _values(3, 3)) == 2
    final = final_labels(db_url, "p")
    assert len(final) == 4 and sorted(lab.rater for lab in final.values()) == ["ann1", "ann1", "ann3", "ann3"]


def test_reassign_keeps_the_protocol(db_url: str, suite: SuiteFiles) -> None:
    from robojudge.annotate import AnnotateError, reassign

    init_project(suite.manifest, db_url, "p", seed=1)
    _people(db_url)
    item = suite.item_ids[0]
    assign(db_url, "p", ["ann1"], items=[item])
    assign(db_url, "p", ["rev1"], kind="review", items=[item])
    taken = rf"item '{item}', review task of 'rev1': nobody named can take it"
    with pytest.raises(AnnotateError, match=taken):
        reassign(db_url, "p", "rev1", ["ann2"])  # an annotator may not review
    add_annotator(db_url, "rev2", "reviewer", password=PW)
    with pytest.raises(AnnotateError, match="nobody named can take it"):
        reassign(db_url, "p", "ann1", ["rev1"])  # rev1 reviews that item: one person, one task per item
    assert [m.to_user for m in reassign(db_url, "p", "rev1", ["rev2"])] == ["rev2"]


def test_an_adjudication_can_be_redone_with_both_versions_kept(db_url: str, suite: SuiteFiles) -> None:
    from robojudge.annotate import AnnotateError, disputed_items, reopen_adjudication, submitted_labels

    item = _adjudicated(db_url, suite, _values(5, 4, note="agree with the review"))
    with pytest.raises(AnnotateError, match=rf"item '{suite.item_ids[0]}' of 'p' has no adjudication task"):
        reopen_adjudication(db_url, "p", suite.item_ids[0])
    moved = reopen_adjudication(db_url, "p", item, to="adj2")
    assert moved is not None and (moved.from_user, moved.to_user) == ("adj1", "adj2")
    # Reopened: no adjudication, so the dispute (PA 1 against 5) is open again.
    assert item not in final_labels(db_url, "p") and item in disputed_items(db_url, "p")
    assert [lab.kind for lab in submitted_labels(db_url, "p") if lab.item_id == item] == ["label", "review"]
    assert _do(db_url, "adj2", _values(3, 4, note="somewhere between")) == 1
    lab = final_labels(db_url, "p")[item]
    assert (lab.rater, lab.values.pa, lab.values.note) == ("adj2", 3, "somewhere between")
    with AnnotationService(db_url) as svc:
        boss = svc.authenticate("adj2", PW)
        (entry,) = [e for e in svc.queue(boss) if e.kind == "adjudicate"]
        history = svc.history(boss, entry.assignment_id)
        add_annotator(db_url, "root", "admin", password=PW)
        every = svc.history(svc.authenticate("root", PW), entry.assignment_id)
    # adj2 reads its own versions only; an admin reads adj1's too (review rev19 F3)
    assert [(v.status, v.values.pa) for v in history] == [("draft", None), ("submitted", 3)]
    assert [(v.author, v.status, v.values.pa) for v in every] == [
        ("adj1", "submitted", 5), ("adj1", "draft", 5), ("adj2", "draft", None), ("adj2", "submitted", 3)]
    # Reopened for the same adjudicator, the task comes back with their values as a draft.
    reopen_adjudication(db_url, "p", item)
    assert _stage_of(db_url, "adj2") == [("adjudicate", "ia", 3)]  # its own 3 versions of the 5


def test_assign_says_why_it_dealt_nothing_and_status_flags_inactive_holders(
    db_url: str, suite: SuiteFiles
) -> None:
    from typer.testing import CliRunner

    from robojudge.annotate import update_annotator
    from robojudge.cli import build_app

    init_project(suite.manifest, db_url, "p", seed=1)
    _people(db_url)
    assign(db_url, "p", ["ann1", "ann2"])
    update_annotator(db_url, "ann2", active=False)
    app = build_app("annotate")
    res = CliRunner().invoke(app, ["annotate", "assign", "--db", db_url, "-p", "p", "--to", "ann1"])
    assert res.exit_code == 0, res.output
    assert "0 label tasks assigned" in res.output
    assert "2 open held by ann2 (inactive)" in res.output and "reassign --from ann2" in res.output
    res = CliRunner().invoke(app, ["annotate", "status", "--db", db_url, "-p", "p"])
    assert res.exit_code == 0, res.output
    assert "ann2 (inactive)" in res.output and "ann2 is switched off and holds 2 unfinished" in res.output


# -- F3: items added to the suite after init -----------------------------------------------------------


def test_items_appended_to_the_suite_join_the_project(db_url: str, suite: SuiteFiles, tmp_path: Path) -> None:
    from robojudge.annotate import AnnotateError, add_items, nothing_dealt, project_status

    whole = suite.manifest.read_text()
    _rewrite(suite.manifest, lambda rs: rs[:3])
    init_project(suite.manifest, db_url, "p", seed=1, segment_s=3)
    _people(db_url)
    assert assign(db_url, "p", ["ann1", "ann2"]) == 3
    suite.manifest.write_text(whole)  # a fourth item appended
    new = suite.item_ids[3]
    assert assign(db_url, "p", ["ann1", "ann2"]) == 0
    why = nothing_dealt(db_url, "p")
    assert f"holds 1 item(s) the project lacks ({new}): robojudge annotate add-items" in why
    lacks = rf"items the project lacks: '{new}' \(robojudge annotate add-items"
    with pytest.raises(AnnotateError, match=lacks):
        export_manifest(db_url, "p", tmp_path / "lab.jsonl")
    assert add_items(db_url, "p") == [new]
    assert add_items(db_url, "p") == []
    assert project_status(db_url, "p").n_items == 4
    assert assign(db_url, "p", ["ann1", "ann2"]) == 1
    segments = {f"segments.{k}": "good" for k in range(3)}  # the new item is split as the others
    _do(db_url, "ann1", _values(4, 4, **segments))
    _do(db_url, "ann2", _values(4, 4, **segments))
    assert set(final_labels(db_url, "p")) == set(suite.item_ids)
    assert export_manifest(db_url, "p", tmp_path / "lab.jsonl") == 4


def test_add_items_refuses_a_suite_changed_in_an_item_the_project_holds(
    db_url: str, suite: SuiteFiles
) -> None:
    from robojudge.annotate import AnnotateError, add_items

    init_project(suite.manifest, db_url, "p", seed=1)
    first = suite.item_ids[0]

    def edit(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        records[0]["instruction"] = "open the drawer"
        return [*records, {**records[1], "item_id": "new-one"}]

    _rewrite(suite.manifest, edit)
    with pytest.raises(AnnotateError, match=rf"item '{first}' field instruction"):
        add_items(db_url, "p")


# -- F5: training rounds ---------------------------------------------------------------------------------


def _practise(db: str, name: str, n: int, pa: int = 3) -> None:
    """``name`` submits ``n`` of their open practice items."""
    with AnnotationService(db) as svc:
        who = svc.authenticate(name, PW)
        for entry in [e for e in svc.queue(who) if e.kind == "practice" and e.status != "submitted"][:n]:
            label_through(svc, who, entry.assignment_id, _values(pa, 3))


def test_a_round_is_passed_only_with_every_practice_item_labelled(db_url: str, suite: SuiteFiles) -> None:
    from robojudge.annotate import close_round, create_round, project_status

    init_project(suite.manifest, db_url, "p", seed=1)
    _people(db_url)
    add_annotator(db_url, "ann3", password=PW)
    create_round(db_url, "p", "r1", ["ann1", "ann2", "ann3"], list(suite.item_ids))
    _practise(db_url, "ann1", 4)
    _practise(db_url, "ann2", 4)
    _practise(db_url, "ann3", 1)  # agrees on the one item it labelled
    result = close_round(db_url, "p", "r1")
    assert result.coverage == {"ann1": 4, "ann2": 4, "ann3": 1}
    assert result.passed == {"ann1": True, "ann2": True, "ann3": False}
    assert project_status(db_url, "p").qualified == ("ann1", "ann2")


def test_a_closed_round_takes_no_practice_and_its_status_is_the_closing_one(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    from robojudge.annotate import (
        AnnotateError,
        Conflict,
        close_round,
        create_round,
        export_labelstudio,
        import_labelstudio,
        round_agreement,
    )

    init_project(suite.manifest, db_url, "p", seed=1)
    _people(db_url)
    create_round(db_url, "p", "r1", ["ann1", "ann2"], list(suite.item_ids[:2]))
    _practise(db_url, "ann1", 2)
    _practise(db_url, "ann2", 1)
    closed = close_round(db_url, "p", "r1")
    with pytest.raises(Conflict, match="this training round is closed"):
        _practise(db_url, "ann2", 1, pa=1)
    assert round_agreement(db_url, "p", "r1").to_json() == closed.to_json()
    # nor through a Label Studio file: the other trainee's late practice label
    ls = tmp_path / "ls.json"
    export_labelstudio(db_url, "p", ls)
    tasks = json.loads(ls.read_text())
    late = next(t for t in tasks if t["annotations"]  # the item ann2 did not practise on
                and all(a["meta"]["robojudge_rater"] != "ann2" for a in t["annotations"]))
    ann = {**late["annotations"][0], "meta": {"robojudge_rater": "ann2", "robojudge_kind": "practice",
                                                "robojudge_round": "r1"}}
    late["annotations"] = [ann]
    ls.write_text(json.dumps([late]))
    with pytest.raises(AnnotateError, match="round 'r1' is closed"):
        import_labelstudio(db_url, "p", ls)


# -- F6: whom raters.csv scores on which items -------------------------------------------------------------


def test_raters_csv_says_which_task_each_row_comes_from(
    db_url: str, suite: SuiteFiles, tmp_path: Path
) -> None:
    import csv

    from robojudge.annotate import export_scores
    from robojudge.meta import agreement_from_csv

    item = _adjudicated(db_url, suite, _values(5, 4, note="agree with the review"))
    other = suite.item_ids[2]
    assign(db_url, "p", ["ann2"], items=[other])
    assign(db_url, "p", ["rev1"], kind="review", items=[other])
    _do(db_url, "ann2", _values(3, 3))
    _do(db_url, "rev1", _values(3, 4))
    files = export_scores(db_url, "p", tmp_path / "scores")
    assert files.n_adjudicated == 1
    with open(files.raters, newline="") as fh:
        rows = [(r["judge"], r["item_id"], r["role"]) for r in csv.DictReader(fh)]
    # ann2's label is the final label of `other` (not compared with itself): ann1 has rows on the
    # adjudicated item alone, rev1 on both items reviewed
    assert sorted(set(rows)) == [
        ("ann1", item, "primary"), ("rev1", item, "review"), ("rev1", other, "review")]
    report = agreement_from_csv(files.raters, files.human, bootstrap=0, disputed="keep")
    assert set(report.judges) == {"ann1", "rev1"}  # the role column is read past
