"""Label Studio import: segment ranges by frame, annotations without a score, the protocol's rules on
who may hold which task, and errors that name the file, task, annotation and field."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _ann_data import SQLITE_ONLY, SuiteFiles
from sqlalchemy import func, select

from robojudge.annotate import (
    AnnotateError,
    AnnotationService,
    add_annotator,
    create_round,
    export_scores,
    final_labels,
    import_labelstudio,
    init_project,
    submitted_labels,
    update_annotator,
)
from robojudge.annotate import _schema as s

PW = "correct horse"
# The suite's clips: 7 s at 4 fps (28 frames); 3 s segments are frames 1-12, 13-24 and 25-36 as the
# export writes them, the last one ending at frame 28 in the clip.


@pytest.fixture
def project(db_url: str, suite_files: SuiteFiles) -> str:
    init_project(suite_files.manifest, db_url, "p", segment_s=3.0)
    for name, role in (
        ("ann1", "annotator"),
        ("ann2", "annotator"),
        ("rev1", "reviewer"),
        ("adj1", "adjudicator"),
        ("off", "annotator"),
    ):
        add_annotator(db_url, name, role, password=PW)
    update_annotator(db_url, "off", active=False)
    return db_url


def _ann(rater: str, kind: str = "label", pa: int | None = 3, **more: Any) -> dict[str, Any]:
    result: list[dict[str, Any]] = []
    if pa is not None:
        result.append({"from_name": "pa", "to_name": "video", "type": "rating", "value": {"rating": pa}})
    for start, end, verdict in more.pop("ranges", ()):
        result.append(
            {
                "from_name": "segments",
                "to_name": "video",
                "type": "timelinelabels",
                "value": {"ranges": [{"start": start, "end": end}], "timelinelabels": [verdict]},
            }
        )
    return {"meta": {"robojudge_rater": rater, "robojudge_kind": kind, **more}, "result": result}


def _write(tmp_path: Path, tasks: list[Any]) -> Path:
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(tasks))
    return path


def _n_labels(db: str) -> int:
    with AnnotationService(db) as svc, svc.db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(s.labels)).scalar_one())


@SQLITE_ONLY
def test_segment_ranges_go_to_the_segment_of_their_frames(
    project: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    """One range at frames 13-24 is segment 1, not segment 0 (ranges were numbered 0, 1, ... in order)."""
    one, two = suite_files.item_ids[1], suite_files.item_ids[2]
    tasks = [
        {"id": 1, "data": {"item_id": one}, "annotations": [_ann("ann1", ranges=[(13, 24, "bad")])]},
        # The last segment may end at the clip's last frame (28) or where the export puts it (36).
        {"id": 2, "data": {"item_id": two}, "annotations": [_ann("ann1", ranges=[(25, 28, "Good")])]},
    ]
    assert import_labelstudio(project, "p", _write(tmp_path, tasks)) == 2
    final = final_labels(project, "p")
    assert final[one].values.segments == (None, "bad")
    assert final[two].values.segments == (None, None, "good")


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("ranges", "item", "match"),
    [
        ([(1, 12, "bad"), (1, 12, "good")], 1, r"two ranges in segment 0 \(frames 1-12\)"),
        ([(13, 24, "bad"), (13, 24, "bad")], 1, r"two ranges in segment 1"),
        ([(1, 12, "bad"), (5, 16, "bad")], 1, r"range 5-16 does not start on a segment's first frame"),
        ([(13, 20, "bad")], 1, r"range 13-20 does not line up with segment 1 \(frames 13-24\)"),
        ([(1, 24, "bad")], 1, r"range 1-24 does not line up with segment 0 \(frames 1-12\)"),
        ([(25, 27, "bad")], 1, r"range 25-27 does not line up with segment 2 \(frames 25-36\)"),
        ([(1, 12, "bad")], 0, r"item '.*' is not split into segments"),  # item 0 is multi-view
        ([("13", 24, "bad")], 1, r"range \{'start': '13', 'end': 24\}: start and end must be frame numbers"),
    ],
)
def test_segment_ranges_that_do_not_line_up_are_refused(
    project: str, suite_files: SuiteFiles, tmp_path: Path, ranges: list[Any], item: int, match: str
) -> None:
    tasks = [
        {
            "id": 4,
            "data": {"item_id": suite_files.item_ids[item]},
            "annotations": [_ann("ann1", ranges=ranges)],
        }
    ]
    with pytest.raises(
        AnnotateError,
        match=r"ls\.json: task 4 \(item .*\) annotation \[0\] result \d: field segments: " + match,
    ):
        import_labelstudio(project, "p", _write(tmp_path, tasks))
    assert _n_labels(project) == 0


@SQLITE_ONLY
def test_annotations_without_a_score_or_of_the_wrong_shape_are_refused(
    project: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    item = suite_files.item_ids[1]

    def refused(annotations: Any, match: str) -> None:
        tasks = [{"id": 9, "data": {"item_id": item}, "annotations": annotations}]
        with pytest.raises(AnnotateError, match=r"ls\.json: task 9" + match):
            import_labelstudio(project, "p", _write(tmp_path, tasks))

    empty = {"completed_by": {"email": "ann1"}, "result": []}
    refused([empty], r" \(item .*\) annotation \[0\]: field result: no pa or ia rating")
    checklist_only = _ann("ann1", pa=None)
    checklist_only["result"] = [{"from_name": "checklist_goal_completion", "value": {"choices": ["1"]}}]
    refused([checklist_only], r" \(item .*\) annotation \[0\]: field result: no pa or ia rating")
    refused({"x": empty}, r": field annotations: must be a list of annotations, got dict")
    refused([_ann("ann1"), "ann1"], r" \(item .*\) annotation \[1\]: an annotation must be an object")
    refused(None, r": field annotations: must be a list")
    assert _n_labels(project) == 0  # nothing stored: the empty result no longer counts as a label
    # A task without annotations, and a cancelled annotation, are still fine.
    tasks = [
        {"id": 1, "data": {"item_id": item}},
        {"id": 2, "data": {"item_id": item}, "annotations": [{**empty, "was_cancelled": True}]},
    ]
    assert import_labelstudio(project, "p", _write(tmp_path, tasks)) == 0


@SQLITE_ONLY
def test_import_keeps_the_protocol_rules_on_people(
    project: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    one, two = suite_files.item_ids[1], suite_files.item_ids[2]

    def refused(annotations: list[Any], match: str, item: str = one) -> None:
        tasks = [{"id": 3, "data": {"item_id": item}, "annotations": annotations}]
        with pytest.raises(AnnotateError, match=r"ls\.json: task 3 \(item .*\) " + match):
            import_labelstudio(project, "p", _write(tmp_path, tasks))
        assert _n_labels(project) == 0

    # The audit's case: one plain annotator as labeller, cross-reviewer and adjudicator of one item.
    refused(
        [_ann("ann1"), _ann("ann1", "review"), _ann("ann1", "adjudicate")],
        r"annotation \[1\]: field meta.robojudge_kind: 'ann1' \(annotator\) may not review: that needs the "
        r"role reviewer or adjudicator or admin",
    )
    refused([_ann("ann2", "adjudicate")], r"annotation \[0\]: .* may not adjudicate")
    # The role is right, but the person already holds another task of the item (in either order).
    refused(
        [_ann("rev1"), _ann("rev1", "review")],
        r"annotation \[1\]: field meta.robojudge_rater: 'rev1' holds the label of this item: its review "
        r"must come from someone else",
    )
    refused(
        [_ann("adj1", "adjudicate"), _ann("ann1"), _ann("adj1", "review")],
        r"annotation \[2\]: field meta.robojudge_rater: 'adj1' holds the adjudicate of this item",
    )
    refused([_ann("off")], r"annotation \[0\]: field meta.robojudge_rater: annotator 'off' is inactive")
    # Practice labels only from the round's trainees.
    create_round(project, "p", "r1", ["ann1", "ann2"], [two])
    refused(
        [_ann("rev1", "practice", robojudge_round="r1")],
        r"annotation \[0\]: field meta.robojudge_rater: 'rev1' is not a trainee of round 'r1'",
        item=two,
    )
    # What the rules allow goes in.
    tasks = [
        {
            "id": 1,
            "data": {"item_id": one},
            "annotations": [_ann("ann1"), _ann("rev1", "review"), _ann("adj1", "adjudicate")],
        },
        {"id": 2, "data": {"item_id": two}, "annotations": [_ann("ann2", "practice", robojudge_round="r1")]},
    ]
    assert import_labelstudio(project, "p", _write(tmp_path, tasks)) == 4
    # Importing the same labels again stores nothing, even once their author has been switched off.
    update_annotator(project, "ann1", active=False)
    assert import_labelstudio(project, "p", _write(tmp_path, tasks)) == 0
    got = {(lab.item_id, lab.rater, lab.kind) for lab in submitted_labels(project, "p")}
    assert got == {
        (one, "ann1", "label"),
        (one, "rev1", "review"),
        (one, "adj1", "adjudicate"),
        (two, "ann2", "practice"),
    }


@SQLITE_ONLY
def test_tasks_are_named_by_their_id_or_place(project: str, suite_files: SuiteFiles, tmp_path: Path) -> None:
    item = suite_files.item_ids[1]
    tasks: list[Any] = [
        {"id": 2, "data": {"item_id": item}, "annotations": []},
        {
            "data": {"item_id": item},
            "annotations": [{"id": 41, "meta": {"robojudge_rater": "ann1"}, "result": []}],
        },
    ]
    with pytest.raises(AnnotateError, match=r"ls\.json: task \[1\] \(item .*\) annotation 41: field result"):
        import_labelstudio(project, "p", _write(tmp_path, tasks))
    tasks[0]["annotations"] = [_ann("ann1", pa=9)]
    with pytest.raises(AnnotateError, match=r"ls\.json: task 2 \(item .*\) annotation \[0\]: field pa: 9"):
        import_labelstudio(project, "p", _write(tmp_path, tasks))
    with pytest.raises(AnnotateError, match=r"ls\.json: task \[0\]: a task must be an object, got list"):
        import_labelstudio(project, "p", _write(tmp_path, [[]]))


@SQLITE_ONLY
def test_an_adjudication_of_one_axis_keeps_the_other_from_the_primary_label(
    project: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    """Settling PA alone left the item's final label without IA, though both raters gave IA 3."""

    def with_ia(ann: dict[str, Any], ia: int) -> dict[str, Any]:
        ann["result"].append({"from_name": "ia", "to_name": "video", "type": "rating",
                              "value": {"rating": ia}})
        return ann

    agreed, disputed = suite_files.item_ids[1], suite_files.item_ids[2]
    tasks = [{"id": 1, "data": {"item_id": agreed}, "annotations": [
                 with_ia(_ann("ann1", pa=2), 3), with_ia(_ann("rev1", "review", pa=4), 3),
                 _ann("adj1", "adjudicate", pa=4)]},
             {"id": 2, "data": {"item_id": disputed}, "annotations": [  # IA disputed, and not adjudicated
                 with_ia(_ann("ann1", pa=2), 2), with_ia(_ann("rev1", "review", pa=4), 5),
                 _ann("adj1", "adjudicate", pa=4)]}]
    assert import_labelstudio(project, "p", _write(tmp_path, tasks)) == 6
    finals = final_labels(project, "p")
    final = finals[agreed]
    assert (final.kind, final.rater, final.values.pa, final.values.ia) == ("adjudicate", "adj1", 4, 3)
    assert (final.filled, final.filled_from) == (("ia",), "ann1")
    assert (finals[disputed].values.pa, finals[disputed].values.ia, finals[disputed].filled) == (4, None, ())
    # The score tables: ann1's IA of the agreed item is the final IA itself, so it is not a comparison
    files = export_scores(project, "p", tmp_path / "scores")
    rows = {(r["judge"], r["item_id"], r["axis"]) for r in csv.DictReader(files.raters.open())}
    assert ("ann1", agreed, "ia") not in rows and ("rev1", agreed, "ia") in rows
    assert ("ann1", disputed, "ia") not in rows and ("ann1", agreed, "pa") in rows
    assert files.n_self == 1


@SQLITE_ONLY
def test_a_second_rater_and_a_bom_are_said_or_read(
    project: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    """A project with overlap 2 (two primary annotations per task) was refused without saying how to
    import it; a JSON file saved with a UTF-8 BOM was refused outright, while every other robojudge
    input reads one."""
    one = suite_files.item_ids[1]
    tasks = [{"id": 3, "data": {"item_id": one}, "annotations": [_ann("ann1"), _ann("ann2", pa=4)]}]
    with pytest.raises(AnnotateError, match=r"annotation \[1\]: the label of this item is already assigned "
                                            r"to someone else; an item has one primary label: give a second "
                                            r"rater's annotation \"meta\": \{\"robojudge_kind\": "
                                            r"\"review\"\}"):
        import_labelstudio(project, "p", _write(tmp_path, tasks))
    tasks[0]["annotations"][1] = _ann("rev1", "review", pa=4)
    path = _write(tmp_path, tasks)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert import_labelstudio(project, "p", path) == 2
