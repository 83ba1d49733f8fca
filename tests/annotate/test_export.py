"""Export: a labelled manifest, score tables that ``meta agreement`` reads (checked against the database
by hand), and Label Studio JSON out and back in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _ann_data import SQLITE_ONLY, SuiteFiles, label_through, make_suite
from sqlalchemy import select

from robojudge.annotate import (
    AnnotateError,
    AnnotationService,
    add_annotator,
    assign,
    export_labelstudio,
    export_manifest,
    export_scores,
    final_labels,
    import_labelstudio,
    init_project,
)
from robojudge.annotate import _schema as s
from robojudge.meta import agreement_from_csv
from robojudge.suite import CHECKLIST_ITEMS, load_suite

PW = "correct horse"
CHECKS = CHECKLIST_ITEMS


def _values(seed: int, segments: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {
        "pa": int(rng.integers(1, 6)),
        "ia": int(rng.integers(1, 6)),
        "evidence": f'note {seed} with "quotes" and <tags>',
    }
    out.update({f"checklist.{c}": int(rng.integers(0, 3)) for c in CHECKS})
    out.update({f"segments.{k}": ("bad", "medium", "good")[int(rng.integers(0, 3))] for k in range(segments)})
    return out


def _labelled(db: str, suite: SuiteFiles, *, segments: float | None = None) -> None:
    """ann1/ann2 label all items, rev1 cross-reviews all, adj1 adjudicates half of them."""
    init_project(suite.manifest, db, "p", seed=11, segment_s=segments)
    for name, role in (
        ("ann1", "annotator"),
        ("ann2", "annotator"),
        ("rev1", "reviewer"),
        ("adj1", "adjudicator"),
    ):
        add_annotator(db, name, role, password=PW)
    assign(db, "p", ["ann1", "ann2"])
    assign(db, "p", ["rev1"], kind="review")
    assign(db, "p", ["adj1"], kind="adjudicate", items=list(suite.item_ids[:3]))
    n_seg = 3 if segments else 0
    with AnnotationService(db) as svc:
        for k, name in enumerate(("ann1", "ann2", "rev1", "adj1")):
            who = svc.authenticate(name, PW)
            for j, entry in enumerate(svc.queue(who)):
                label_through(svc, who, entry.assignment_id, _values(100 * k + j, n_seg))


def _by_hand(
    db: str,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict[str, int]]], set[str]]:
    """Final PA/IA per item, each rater's, and the disputed items, read straight from the tables. An item
    whose primary label a cross-review is 2 points or more off on PA or IA, and nobody adjudicated, is
    disputed: the score tables still compare its raters with its primary label."""
    a, i, an, lb = s.assignments, s.items, s.annotators, s.labels
    with AnnotationService(db) as svc, svc.db.read() as conn:
        rows = conn.execute(
            select(i.c.item_id, an.c.username, a.c.kind, lb.c.label_values)
            .join(a, a.c.id == lb.c.assignment_id)
            .join(i, i.c.id == a.c.item_id)
            .join(an, an.c.id == a.c.annotator_id)
            .where(lb.c.status == "submitted")
        ).all()
    final: dict[str, dict[str, int]] = {}
    final_by: dict[str, str] = {}
    raters: dict[str, dict[str, dict[str, int]]] = {}
    for r in sorted(rows, key=lambda r: r.kind != "adjudicate"):  # adjudications first
        if r.kind in ("adjudicate", "label") and r.item_id not in final:
            final[r.item_id] = {"pa": r.label_values["pa"], "ia": r.label_values["ia"]}
            final_by[r.item_id] = r.username
    disputed = {
        r.item_id for r in rows if r.kind == "review" and final_by[r.item_id] != "adj1"
        and max(abs(r.label_values[x] - final[r.item_id][x]) for x in ("pa", "ia")) >= 2
    }
    for r in rows:
        # A primary label that is its item's final label is not compared with itself.
        if r.kind in ("label", "review") and final_by[r.item_id] != r.username:
            raters.setdefault(r.username, {})[r.item_id] = {
                "pa": r.label_values["pa"],
                "ia": r.label_values["ia"],
            }
    return final, raters, disputed


def test_scores_export_gives_meta_agreement_the_database_numbers(
    db_url: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    _labelled(db_url, suite_files)
    files = export_scores(db_url, "p", tmp_path / "scores")
    report = agreement_from_csv(files.raters, files.human, bootstrap=20, seed=1, disputed="keep")
    final, raters, disputed = _by_hand(db_url)
    # Three items are not adjudicated; the cross-review disputes two of them, which await an adjudication.
    # The tables still hold those two, so that the reviewer is scored on every item, not only where they
    # agreed with the primary label (meta agreement compares them when asked: disputed="keep").
    assert files.n_items == len(final) == 6 and files.n_disputed == len(disputed) == 2
    # On all three the primary label stands for the final one: its rater's rows are left out.
    assert files.n_self == 3 * 2
    assert len(raters["rev1"]) == 6
    assert set(report.judges) == {"ann1", "ann2", "rev1"}
    # By default meta agreement compares with the final labels alone: the two disputed items are left out.
    settled = agreement_from_csv(files.raters, files.human, bootstrap=0)
    for rep, left_out in ((report, set()), (settled, disputed)):
        for rater, labels in raters.items():
            for axis in ("pa", "ia"):
                pairs = [(labels[i][axis], final[i][axis]) for i in labels if i not in left_out]
                cell = rep.cells[rater][axis]
                assert cell.n == len(pairs)
                assert cell.stats["exact"].value == pytest.approx(np.mean([p == h for p, h in pairs]))
                assert cell.stats["mae"].value == pytest.approx(np.mean([abs(p - h) for p, h in pairs]))
                assert cell.stats["bias"].value == pytest.approx(np.mean([p - h for p, h in pairs]))
    assert settled.cells["rev1"]["pa"].n == 4
    # The clip and source columns come from the suite.
    human = (tmp_path / "scores" / "human.csv").read_text().splitlines()
    assert human[0] == "item_id,axis,score,clip_id,source,disputed" and ",clip0,droid," in human[1]
    marked = {r.split(",")[0] for r in human[1:] if r.split(",")[5]}
    assert marked == disputed


@SQLITE_ONLY
def test_manifest_export_is_a_valid_manifest(db_url: str, suite_files: SuiteFiles, tmp_path: Path) -> None:
    _labelled(db_url, suite_files, segments=3.0)
    out = tmp_path / "labelled.jsonl"
    assert export_manifest(db_url, "p", out) == 4  # two items await an adjudication: unlabelled
    assert export_manifest(db_url, "p", out, disputed=True) == 6  # their primary labels, marked
    suite = load_suite(out)
    final = final_labels(db_url, "p", disputed=True)
    assert [it.item_id for it in suite.items] == list(suite_files.item_ids)
    assert sum(bool(it.meta.get("annotation", {}).get("disputed")) for it in suite.items) == 2
    for it in suite.items:
        lab = final[it.item_id]
        assert it.labels is not None and it.labels.rater == lab.rater
        assert (it.labels.pa, it.labels.ia, it.labels.evidence) == (
            lab.values.pa,
            lab.values.ia,
            lab.values.evidence,
        )
        assert (
            it.labels.checklist is not None
            and it.labels.checklist.goal_completion == lab.values.checklist["goal_completion"]
        )
        n_seg = 0 if it.views else 3  # multi-view items are scored as a whole
        assert (
            it.meta["annotation"]["kind"] == lab.kind
            and len(it.meta["annotation"].get("segments", [])) == n_seg
        )
        # the verdicts carry their length in seconds (meta segments-table lines them up with KIVA's)
        assert it.meta["annotation"].get("segment_s") == (3.0 if n_seg else None)
        assert it.generator is not None and Path(it.video).is_file()  # the suite's own fields kept
    assert sum(it.labels.rater == "adj1" for it in suite.items if it.labels) == 3
    # One rater's labels instead: rev1 reviewed every item.
    assert export_manifest(db_url, "p", tmp_path / "rev1.jsonl", rater="rev1") == 6
    assert {it.labels.rater for it in load_suite(tmp_path / "rev1.jsonl").items if it.labels} == {"rev1"}
    # Primary labels and cross-reviews only, as documented: an adjudicator has none (adj1 adjudicated 3).
    assert export_manifest(db_url, "p", tmp_path / "adj1.jsonl", rater="adj1") == 0
    with pytest.raises(AnnotateError, match=r"rater 'nobody': no annotator of that name"):
        export_manifest(db_url, "p", tmp_path / "nobody.jsonl", rater="nobody")
    assert not (tmp_path / "nobody.jsonl").exists()


@SQLITE_ONLY
def test_a_failed_export_leaves_its_output_and_the_suite_alone(db_url: str, tmp_path: Path) -> None:
    """The manifest export truncated its output before reading the suite: ``--out`` naming the suite
    emptied it. Now everything is read first and the file replaced in one step."""
    suite = make_suite(tmp_path / "suite", n=2)  # a copy of its own: this test aims at the suite file
    init_project(suite.manifest, db_url, "p")
    before = suite.manifest.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(suite.manifest)
    for out in (suite.manifest, link, tmp_path / "suite" / ".." / "suite" / "suite.jsonl"):
        with pytest.raises(AnnotateError, match=r"is the project's suite manifest: writing the export there"):
            export_manifest(db_url, "p", out)
        with pytest.raises(AnnotateError, match=r"is the project's suite manifest"):
            export_labelstudio(db_url, "p", out)
    assert suite.manifest.read_bytes() == before
    # A suite that cannot be read: the earlier exports stay as they were.
    manifest, ls, scores = tmp_path / "out.jsonl", tmp_path / "ls.json", tmp_path / "scores"
    assert export_manifest(db_url, "p", manifest) == 0
    export_labelstudio(db_url, "p", ls)
    export_scores(db_url, "p", scores)
    kept = {p: p.read_bytes() for p in (manifest, ls, scores / "human.csv", scores / "raters.csv")}
    suite.manifest.rename(tmp_path / "moved.jsonl")
    for export, out in ((export_manifest, manifest), (export_labelstudio, ls), (export_scores, scores)):
        with pytest.raises(AnnotateError, match=r"cannot read the project's suite"):
            export(db_url, "p", out)
    assert {p: p.read_bytes() for p in kept} == kept
    assert sorted(x.name for x in tmp_path.iterdir() if x.name.endswith(".tmp")) == []
    with pytest.raises(AnnotateError, match=r"scores is a folder: give a file name"):
        export_manifest(db_url, "p", scores)


def _strip(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for t in tasks:
        for a in t["annotations"]:
            a.pop("created_at")
    return tasks


def test_labelstudio_round_trip(db_url: str, suite_files: SuiteFiles, tmp_path: Path) -> None:
    _labelled(db_url, suite_files, segments=3.0)
    first = tmp_path / "ls.json"
    assert export_labelstudio(db_url, "p", first) == 6 + 6 + 3
    init_project(suite_files.manifest, db_url, "q", segment_s=3.0)
    assert import_labelstudio(db_url, "q", first) == 15
    assert import_labelstudio(db_url, "q", first) == 0  # identical labels are skipped
    second = tmp_path / "ls2.json"
    export_labelstudio(db_url, "q", second)
    assert _strip(json.loads(second.read_text())) == _strip(json.loads(first.read_text()))
    p, q = final_labels(db_url, "p"), final_labels(db_url, "q")
    assert {k: (v.rater, v.kind, v.values) for k, v in p.items()} == {
        k: (v.rater, v.kind, v.values) for k, v in q.items()
    }
    # Imported labels are kept like the app's, with their source.
    with AnnotationService(db_url) as svc, svc.db.read() as conn:
        sources = {r.source for r in conn.execute(select(s.labels.c.source))}
    assert sources == {"app", "labelstudio"}
    # Served from a web folder instead of local paths.
    export_labelstudio(db_url, "q", second, media_url="https://data.example/suite/")
    videos = [t["data"]["video"] for t in json.loads(second.read_text())]
    assert videos == [f"https://data.example/suite/videos/{i}.mp4" for i in suite_files.item_ids]


@SQLITE_ONLY
def test_labelstudio_import_errors_name_task_annotation_and_field(
    db_url: str, suite_files: SuiteFiles, tmp_path: Path
) -> None:
    _labelled(db_url, suite_files)
    good = tmp_path / "ls.json"
    export_labelstudio(db_url, "p", good)
    tasks = json.loads(good.read_text())

    def attempt(mutate: Any, match: str) -> None:
        data = json.loads(json.dumps(tasks))
        mutate(data)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data))
        with pytest.raises(AnnotateError, match=match):
            import_labelstudio(db_url, "p", bad)

    def score_7(d: Any) -> None:
        d[1]["annotations"][0]["result"][0]["value"]["rating"] = 7

    def unknown_item(d: Any) -> None:
        d[2]["data"]["item_id"] = "nope"

    def stranger(d: Any) -> None:
        d[0]["annotations"][0]["meta"]["robojudge_rater"] = "mallory"

    def changed(d: Any) -> None:
        d[0]["annotations"][0]["result"][0]["value"]["rating"] = (
            1 + d[0]["annotations"][0]["result"][0]["value"]["rating"] % 5
        )

    # Tasks go by their "id" (the export numbers them from 1), annotations without one by list place.
    attempt(score_7, r"task 2 \(item .*\) annotation \[0\]: field pa: 7 is outside 1-5")
    attempt(unknown_item, r"task 3: field data.item_id: 'nope' is not an item")
    attempt(stranger, r"task 1 .* annotation \[0\]: annotator 'mallory' is not in the database")
    attempt(
        changed,
        r"task 1 .* annotation \[0\]: this item's \w+ is already submitted with different "
        r"values: field pa: \d stored, \d here$",
    )
    binary = tmp_path / "export.bin"
    binary.write_bytes(b"[\xa2\xfb" + bytes(range(256)))  # was a UnicodeDecodeError traceback
    with pytest.raises(AnnotateError, match=r"export\.bin: cannot read Label Studio JSON: 'utf-8' codec"):
        import_labelstudio(db_url, "p", binary)
    # Nothing of a failed import is kept.
    assert import_labelstudio(db_url, "p", good) == 0


@SQLITE_ONLY
def test_labelstudio_native_annotations(db_url: str, suite_files: SuiteFiles, tmp_path: Path) -> None:
    """Annotations made in Label Studio itself: no robojudge meta, the rater in completed_by.email."""
    init_project(suite_files.manifest, db_url, "p")
    add_annotator(db_url, "ann@lab.example", password=PW)
    result = [
        {"from_name": "pa", "to_name": "video", "type": "rating", "value": {"rating": 2}},
        {
            "from_name": "checklist_goal_completion",
            "to_name": "video",
            "type": "choices",
            "value": {"choices": ["1"]},
        },
        {
            "from_name": "evidence",
            "to_name": "video",
            "type": "textarea",
            "value": {"text": ["line one", "line two"]},
        },
    ]
    tasks = [
        {
            "id": 7,
            "data": {"item_id": suite_files.item_ids[4]},
            "annotations": [
                {"id": 1, "completed_by": {"id": 3, "email": "ann@lab.example"}, "result": result},
                {
                    "id": 2,
                    "completed_by": {"id": 3, "email": "ann@lab.example"},
                    "was_cancelled": True,
                    "result": [],
                },
            ],
        },
    ]
    path = tmp_path / "native.json"
    path.write_text(json.dumps(tasks))
    assert import_labelstudio(db_url, "p", path) == 1
    (lab,) = final_labels(db_url, "p").values()
    assert (lab.item_id, lab.rater, lab.kind) == (suite_files.item_ids[4], "ann@lab.example", "label")
    assert (lab.values.pa, lab.values.ia, lab.values.checklist["goal_completion"]) == (2, None, 1)
    assert lab.values.evidence == "line one\nline two"
    tasks[0]["annotations"][0]["completed_by"] = 3  # Label Studio's user id: nothing robojudge can map
    path.write_text(json.dumps(tasks))
    with pytest.raises(
        AnnotateError,
        match=r"task 7 .* annotation 1: field completed_by: 3 is a Label Studio user id, which robojudge "
        r"cannot map .* meta\.robojudge_rater",
    ):
        import_labelstudio(db_url, "p", path)
    tasks[0]["annotations"][0]["meta"] = {"robojudge_rater": "ann@lab.example"}
    path.write_text(json.dumps(tasks))
    assert import_labelstudio(db_url, "p", path) == 0  # the same label, named through meta


@SQLITE_ONLY
def test_scores_export_escapes_ids_as_every_robojudge_csv_does(db_url: str, tmp_path: Path) -> None:
    """``-x`` and ``'-x`` were written as they are, so a spreadsheet ran them and robojudge's readers
    (which drop the escape's quote) read two items as one: meta agreement refused the file."""
    from robojudge.meta._tables import read_score_csv

    suite = make_suite(tmp_path / "suite", n=4)
    records = [json.loads(line) for line in suite.manifest.read_text().splitlines()]
    records[0]["item_id"], records[1]["item_id"] = "-take1", "'-take1"
    records[2]["item_id"] = "=HYPERLINK(1)"
    suite.manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    ids = sorted(r["item_id"] for r in records)
    _labelled(db_url, SuiteFiles(suite.manifest, suite.root, tuple(r["item_id"] for r in records)))
    files = export_scores(db_url, "p", tmp_path / "scores")
    text = files.human.read_text()
    assert "\n'=HYPERLINK(1)," in text and "\n''-take1," in text and "\n'-take1," in text
    assert sorted(set(read_score_csv(files.human)["item_id"])) == ids
    assert sorted(set(read_score_csv(files.raters)["item_id"])) == ids
    report = agreement_from_csv(files.raters, files.human, bootstrap=20, seed=1)
    assert set(report.judges) == {"ann1", "ann2", "rev1"}


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("icu", marks=pytest.mark.postgres)])
def test_labels_come_in_code_point_order_of_usernames(backend: str, suite_files: SuiteFiles,
                                                      tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # Before, the usernames of an item's practice labels came in the database's collation order: "alice,
    # Bob, emile, Zoe" on PostgreSQL with an ICU or en_US locale, "Bob, Zoe, alice, emile" on SQLite.
    from robojudge.annotate import create_round, submitted_labels

    db = str(tmp_path / "ann.sqlite") if backend == "sqlite" else str(request.getfixturevalue("icu_db_url"))
    names = ["alice", "Zoe", "Bob", "emile"]  # (usernames are ASCII: case is what collations differ on)
    init_project(suite_files.manifest, db, "p", seed=11)
    for name in names:
        add_annotator(db, name, "annotator", password=PW)
    item = suite_files.item_ids[0]
    create_round(db, "p", "r1", names, [item])
    with AnnotationService(db) as svc:
        for k, name in enumerate(names):
            who = svc.authenticate(name, PW)
            for entry in svc.queue(who):
                label_through(svc, who, entry.assignment_id, _values(k))
    assert [lab.rater for lab in submitted_labels(db, "p")] == ["Bob", "Zoe", "alice", "emile"]


@SQLITE_ONLY
def test_the_suites_overall_score_stays_with_its_item(db_url: str, tmp_path: Path) -> None:
    # audit combos F2: the export dropped every item's labels.overall (RoboPhys-3D's 10-point human score,
    # which the app does not collect), so a report of the exported manifest lost its human reference
    suite = make_suite(tmp_path / "suite")
    records = [json.loads(line) for line in suite.manifest.read_text(encoding="utf-8").splitlines()]
    for k, rec in enumerate(records):
        rec["labels"] = {"overall": 2.5 + k, "rater": "panel"}
    suite.manifest.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    _labelled(db_url, SuiteFiles(suite.manifest, suite.root, tuple(r["item_id"] for r in records)))
    out = tmp_path / "labelled.jsonl"
    n = export_manifest(db_url, "p", out)  # without --include-disputed some items go unlabelled
    items = load_suite(out).items
    assert n < len(items)
    for k, it in enumerate(items):
        assert it.labels is not None and it.labels.overall == 2.5 + k, it
        if it.labels.pa is None:  # not labelled in the app: the suite's score and its rater alone
            assert it.labels.rater == "panel" and it.labels.ia is None
    assert sum(it.labels.pa is not None for it in items if it.labels) == n
