"""The whole RoboJudge protocol through the service API, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from _ann_data import GENERATORS, SQLITE_ONLY, SuiteFiles
from sqlalchemy import select

from robojudge.annotate import (
    AnnotationService,
    Annotator,
    Conflict,
    Forbidden,
    InvalidLabel,
    LabelValues,
    NotFound,
    add_annotator,
    assign,
    final_labels,
    init_project,
)
from robojudge.annotate import _schema as s

PW = "correct horse"
FULL = {
    "pa": 4,
    "ia": 3,
    "checklist.agent_consistency": 2,
    "checklist.scene_consistency": 1,
    "checklist.interaction_realism": 2,
    "checklist.agent_match": 2,
    "checklist.object_correctness": 1,
    "checklist.goal_completion": 0,
    "evidence": "cup <b>slides</b> through the plate",
}
PA_ONLY = {
    k: v
    for k, v in FULL.items()
    if k
    in ("pa", "checklist.agent_consistency", "checklist.scene_consistency", "checklist.interaction_realism")
}


def _people(db: str) -> None:
    add_annotator(db, "ann1", password=PW)
    add_annotator(db, "ann2", password=PW)
    add_annotator(db, "rev1", "reviewer", password=PW)
    add_annotator(db, "adj1", "adjudicator", password=PW)
    add_annotator(db, "boss", "admin", password=PW)


@pytest.fixture
def project(db_url: str, suite_files: SuiteFiles) -> str:
    init_project(suite_files.manifest, db_url, "p", seed=7)
    _people(db_url)
    return db_url


def _login(svc: AnnotationService, name: str) -> Annotator:
    who = svc.authenticate(name, PW, remote="127.0.0.1")
    assert who is not None
    return who


def _label(svc: AnnotationService, who: Annotator, aid: str, values: dict[str, object]) -> None:
    """Label through both stages as the app does: PA first, then the instruction, then the rest."""
    page = svc.task(who, aid)
    if page.stage == "pa":
        pa = {k: v for k, v in values.items() if k in PA_ONLY}
        svc.save_draft(who, aid, LabelValues.from_form(pa), page.version)
        page = svc.reveal_instruction(who, aid)
    svc.submit(who, aid, LabelValues.from_form(values), page.version)


def test_full_protocol_flow(project: str, suite_files: SuiteFiles) -> None:
    db = project
    assert assign(db, "p", ["ann1", "ann2"]) == 6
    assert assign(db, "p", ["rev1"], kind="review") == 6
    assert assign(db, "p", ["adj1"], kind="adjudicate") == 6
    with AnnotationService(db) as svc:
        ann1, ann2, rev1, adj1 = (_login(svc, n) for n in ("ann1", "ann2", "rev1", "adj1"))
        assert svc.authenticate("ann1", "wrong password") is None
        assert svc.authenticate("nobody", PW) is None

        q1 = svc.queue(ann1)
        assert len(q1) == 3 and [e.position for e in q1] == [0, 1, 2]
        assert all(e.kind == "label" and e.status == "open" for e in q1)
        # Reviews and adjudications wait for their inputs.
        assert svc.queue(rev1) == [] and svc.queue(adj1) == []

        aid = q1[0].assignment_id
        page = svc.task(ann1, aid)
        # Blind: opaque ids only; PA stage hides the instruction and the initial frame.
        text = repr(page)
        assert page.stage == "pa" and page.instruction is None and page.initial_frame is None
        for secret in (*GENERATORS, str(suite_files.root), ".mp4", *suite_files.item_ids):
            assert secret not in text
        assert page.fps == 4.0 and page.duration_s == pytest.approx(7.0)

        # The instruction is shown only once PA and its checklist are saved.
        with pytest.raises(InvalidLabel) as err:
            svc.reveal_instruction(ann1, aid)
        assert err.value.field == "pa"
        # IA is judged with the instruction: not before it is shown.
        with pytest.raises(InvalidLabel) as err:
            svc.save_draft(ann1, aid, LabelValues.from_form({**PA_ONLY, "checklist.goal_completion": 2}), 0)
        assert err.value.field == "checklist.goal_completion"
        v1 = svc.save_draft(ann1, aid, LabelValues.from_form(PA_ONLY), 0)
        assert v1.version == 1 and v1.status == "draft" and "pa" in v1.changed
        # Saving the same values again makes no new version.
        assert svc.save_draft(ann1, aid, LabelValues.from_form(PA_ONLY), 1).version == 1
        page = svc.reveal_instruction(ann1, aid)
        assert (
            page.stage == "ia" and page.instruction is not None and page.instruction.startswith("put the cup")
        )
        assert page.initial_frame is not None
        # PA is locked once the instruction was seen.
        with pytest.raises(InvalidLabel) as err:
            svc.save_draft(ann1, aid, LabelValues.from_form({**PA_ONLY, "pa": 1}), page.version)
        assert err.value.field == "pa"
        # Incomplete labels cannot be submitted; stale versions conflict.
        with pytest.raises(InvalidLabel) as err:
            svc.submit(ann1, aid, LabelValues.from_form({**PA_ONLY, "ia": 3}), page.version)
        assert err.value.field == "checklist.agent_match"
        v2 = svc.save_draft(ann1, aid, LabelValues.from_form({**PA_ONLY, "ia": 2}), page.version)
        with pytest.raises(Conflict):
            svc.submit(ann1, aid, LabelValues.from_form(FULL), page.version)
        v3 = svc.submit(ann1, aid, LabelValues.from_form(FULL), v2.version)
        assert v3.status == "submitted" and v3.version == 3 and "ia" in v3.changed
        with pytest.raises(Conflict):
            svc.save_draft(ann1, aid, LabelValues.from_form(FULL), 3)
        # Every version is kept, with who and what changed.
        hist = svc.history(ann1, aid)
        assert [h.version for h in hist] == [1, 2, 3]
        assert [h.values.ia for h in hist] == [None, 2, 3]
        assert all(h.author == "ann1" for h in hist) and hist[1].changed == ("ia",)

        # Another annotator cannot open, read or write it.
        with pytest.raises(Forbidden):
            svc.task(ann2, aid)
        with pytest.raises(Forbidden):
            svc.history(ann2, aid)
        with pytest.raises(Forbidden):
            svc.save_draft(ann2, aid, LabelValues.from_form(FULL), 3)
        with pytest.raises(NotFound):
            svc.task(ann1, "no-such-assignment")

        # The reviewer of that item now has a task showing the primary label; of no other item.
        rq = svc.queue(rev1)
        assert len(rq) == 1 and rq[0].item_id == q1[0].item_id and rq[0].kind == "review"
        rpage = svc.task(rev1, rq[0].assignment_id)
        assert rpage.stage == "ia" and [o.author for o in rpage.others] == ["ann1"]
        assert rpage.others[0].values == LabelValues.from_form(FULL)
        review = {**FULL, "ia": 2, "note": "the cup never reaches the plate"}
        svc.submit(rev1, rq[0].assignment_id, LabelValues.from_form(review), 0)

        # The adjudicator sees both and sets the final label.
        aq = svc.queue(adj1)
        assert len(aq) == 1 and aq[0].item_id == q1[0].item_id
        apage = svc.task(adj1, aq[0].assignment_id)
        assert [(o.kind, o.author) for o in apage.others] == [("label", "ann1"), ("review", "rev1")]
        svc.submit(
            adj1,
            aq[0].assignment_id,
            LabelValues.from_form({**FULL, "ia": 2, "note": "agree with review"}),
            0,
        )

        # Everyone else finishes their primary labels.
        for who in (ann1, ann2):
            for entry in svc.queue(who):
                if entry.status != "submitted":
                    _label(svc, who, entry.assignment_id, FULL)
        assert len(svc.queue(rev1)) == 6

        # Audit: logins (ok and failed), the submissions, the refused accesses.
        boss = _login(svc, "boss")
        actions = [e.action for e in svc.audit_events(boss, limit=1000)]
        assert actions.count("login_failed") == 2 and actions.count("submitted") == 8
        assert actions.count("forbidden") == 3 and "instruction_revealed" in actions
        with pytest.raises(Forbidden):
            svc.audit_events(ann1)

    final = final_labels(db, "p")
    assert len(final) == 6
    first = next(lab for lab in final.values() if lab.kind == "adjudicate")
    assert first.rater == "adj1" and first.values.ia == 2
    assert sum(lab.kind == "label" for lab in final.values()) == 5


@SQLITE_ONLY
def test_positions_are_seeded_stored_and_differ_per_annotator(db_url: str, suite_files: SuiteFiles) -> None:
    init_project(suite_files.manifest, db_url, "p", seed=3)
    init_project(suite_files.manifest, db_url, "q", seed=3)
    _people(db_url)
    assign(db_url, "p", ["ann1"], items=list(suite_files.item_ids))
    assign(db_url, "p", ["rev1"], kind="review", items=list(suite_files.item_ids))
    assign(db_url, "q", ["ann1"], items=list(suite_files.item_ids))
    a, i, an, p = s.assignments, s.items, s.annotators, s.projects
    with AnnotationService(db_url) as svc, svc.db.read() as conn:
        rows = conn.execute(
            select(p.c.name, an.c.username, i.c.item_id, a.c.position)
            .join(i, i.c.id == a.c.item_id)
            .join(an, an.c.id == a.c.annotator_id)
            .join(p, p.c.id == a.c.project_id)
            .order_by(a.c.position)
        ).all()
        public = [r.public_id for r in conn.execute(select(i.c.public_id))]
    order: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        order.setdefault((r.name, r.username), []).append(r.item_id)
    # Each list is a permutation of all items; two annotators of one project get different orders; the
    # same annotator and seed in two projects (same suite) get different orders too (project in the seed).
    assert all(sorted(v) == sorted(suite_files.item_ids) for v in order.values())
    assert order[("p", "ann1")] != order[("p", "rev1")]
    assert order[("p", "ann1")] != list(suite_files.item_ids) or order[("q", "ann1")] != list(
        suite_files.item_ids
    )
    # Opaque ids: random tokens, unique, never the manifest's id.
    assert len(set(public)) == 12 and not set(public) & set(suite_files.item_ids)


@SQLITE_ONLY
def test_media_paths_only_for_own_items_and_stage(project: str, suite_files: SuiteFiles) -> None:
    assign(project, "p", ["ann1"], items=[suite_files.item_ids[0]])
    with AnnotationService(project) as svc:
        ann1, ann2, boss = _login(svc, "ann1"), _login(svc, "ann2"), _login(svc, "boss")
        (entry,) = svc.queue(ann1)
        page = svc.task(ann1, entry.assignment_id)
        # Item 0 has two views, main (front) first.
        assert [m.view for m in page.media] == ["front", "wrist"]
        path = svc.media_path(ann1, page.media[0].media_id)
        assert path.name == f"{suite_files.item_ids[0]}.mp4" and path.is_file()
        with pytest.raises(Forbidden):
            svc.media_path(ann2, page.media[0].media_id)
        with pytest.raises(NotFound):
            svc.media_path(ann1, "nope")
        svc.save_draft(ann1, entry.assignment_id, LabelValues.from_form(PA_ONLY), 0)
        page = svc.reveal_instruction(ann1, entry.assignment_id)
        assert page.initial_frame is not None
        assert svc.media_path(ann1, page.initial_frame.media_id).suffix == ".png"
        assert svc.media_path(boss, page.initial_frame.media_id).is_file()


@SQLITE_ONLY
def test_initial_frame_refused_before_the_instruction(project: str, suite_files: SuiteFiles) -> None:
    assign(project, "p", ["ann1"], items=[suite_files.item_ids[1]])
    with AnnotationService(project) as svc:
        ann1, boss = _login(svc, "ann1"), _login(svc, "boss")
        (entry,) = svc.queue(ann1)
        # The admin's page of someone else's task reveals the frame's id; the annotator may not fetch it yet.
        svc.save_draft(ann1, entry.assignment_id, LabelValues.from_form(PA_ONLY), 0)
        with svc.db.read() as conn:
            frame_id = conn.execute(
                select(s.media.c.public_id)
                .where(s.media.c.role == "initial_frame", s.media.c.path.like("%_first.png"))
                .join(s.items, s.items.c.id == s.media.c.item_id)
                .where(s.items.c.item_id == suite_files.item_ids[1])
            ).scalar_one()
        with pytest.raises(Forbidden):
            svc.media_path(ann1, frame_id)
        assert svc.task(boss, entry.assignment_id).stage == "pa"


@SQLITE_ONLY
def test_review_never_to_primary_and_roles_checked(project: str) -> None:
    from robojudge.annotate import AnnotateError

    assign(project, "p", ["rev1"])
    with pytest.raises(AnnotateError, match="no annotator left"):
        assign(project, "p", ["rev1"], kind="review")
    with pytest.raises(AnnotateError, match="may not review"):
        assign(project, "p", ["ann1"], kind="review")
    with pytest.raises(AnnotateError, match="may not adjudicate"):
        assign(project, "p", ["rev1"], kind="adjudicate")
    assert assign(project, "p", ["rev1"]) == 0  # every item already has its primary label task


@SQLITE_ONLY
@pytest.mark.parametrize("username", ["Jos\u00e9", "\u8bc4\u5ba1\u5458", "alice\n"])
def test_username_rule_says_ascii(db_url: str, username: str) -> None:
    # 'José' was told to "use 1-100 letters": é is a letter; the rule is ASCII. 'alice' and a newline was
    # taken ("$" matched before the final newline) and printed as 'alice' in status and exports.
    from robojudge.annotate import AnnotateError

    with pytest.raises(AnnotateError) as err:
        add_annotator(db_url, username, password=PW)
    assert str(err.value) == (f"username {username!r}: use 1-100 ASCII letters (A-Z, a-z), digits, '.', '_', "
                              "'@' or '-', starting with a letter or a digit")


def test_invite_link_is_single_use(db_url: str) -> None:
    invite = add_annotator(db_url, "newbie")
    assert invite.token
    with AnnotationService(db_url) as svc:
        assert svc.authenticate("newbie", PW) is None
        who = svc.accept_invite(invite.token, PW)
        assert svc.authenticate("newbie", PW) == who
        with pytest.raises(NotFound):
            svc.accept_invite(invite.token, "another password")
        assert svc.annotator(who.id) == who


@SQLITE_ONLY
def test_model_draft_fields_recorded(project: str, suite_files: SuiteFiles, tmp_path: object) -> None:
    import json
    from pathlib import Path

    from robojudge.annotate import AnnotateError, import_drafts

    item = suite_files.item_ids[2]
    drafts = Path(str(tmp_path)) / "drafts.jsonl"
    line = json.dumps({"item_id": item, "pa": {"label": 4, "mean": 4.3}, "ia": {"label": 5}})
    drafts.write_bytes(b"\n" + line.encode() + b"\n\xa2\xfb\n")
    with pytest.raises(AnnotateError, match=r"drafts\.jsonl:3: not UTF-8 text"):  # was a traceback
        import_drafts(project, "p", drafts)
    drafts.write_bytes(b"\xef\xbb\xbf" + line.encode() + b"\r\n")  # a byte-order mark, Windows line ends
    assert import_drafts(project, "p", drafts) == 1
    assign(project, "p", ["ann1"], items=[item])
    with AnnotationService(project) as svc:
        ann1 = _login(svc, "ann1")
        (entry,) = svc.queue(ann1)
        page = svc.task(ann1, entry.assignment_id)
        assert page.model_draft == LabelValues(pa=4, ia=5)
        _label(svc, ann1, entry.assignment_id, FULL)  # pa 4 kept, ia 3 changed from the draft's 5
        last = svc.history(ann1, entry.assignment_id)[-1]
        assert last.from_draft == {"pa": True, "ia": False}


@SQLITE_ONLY
def test_model_drafts_are_checked_line_by_line(
    project: str, suite_files: SuiteFiles, tmp_path: object
) -> None:
    """A repeated item overwrote the earlier line, a flat ``"pa": 4`` was dropped, ``"label": "4"`` was
    stored as text, and an unknown item's error gave no line."""
    import json
    from pathlib import Path

    from robojudge.annotate import AnnotateError, import_drafts

    one, two = suite_files.item_ids[1], suite_files.item_ids[2]
    drafts = Path(str(tmp_path)) / "drafts.jsonl"

    def refused(records: list[object], match: str) -> None:
        drafts.write_text("".join(json.dumps(r) + "\n" for r in records))
        with pytest.raises(AnnotateError, match=match):
            import_drafts(project, "p", drafts)

    good = {"item_id": one, "pa": {"label": 4}}
    refused(
        [good, {"item_id": two, "ia": {"label": 2}}, {"item_id": one, "pa": {"label": 2}}],
        rf"drafts\.jsonl:3: item '{one}': a second draft for it \(the first is on line 1\)",
    )
    refused(
        [{"item_id": one, "pa": 4}],
        rf"drafts\.jsonl:1: item '{one}' field pa: expected an object holding the proposal in \"label\"",
    )
    for label in ("4", 4.0, True, 0, 6):
        refused(
            [good, {"item_id": two, "ia": {"label": label}}],
            rf"drafts\.jsonl:2: item '{two}' field ia\.label: must be a whole number 1-5, got {label!r}",
        )
    refused(
        [good, good | {"item_id": "nope"}],
        r"drafts\.jsonl:2: field item_id: 'nope' is not an item of project 'p'",
    )
    # a suite manifest given by mistake: its lines have no pa or ia (it was taken, and counted as 0)
    refused(
        [good, {"item_id": two, "video": "v.mp4", "labels": {"pa": 3}}],
        rf"drafts\.jsonl:2: item '{two}': no pa and no ia field: not a draft as robojudge judge draft writes",
    )
    with AnnotationService(project) as svc, svc.db.read() as conn:
        stored = [r.model_draft for r in conn.execute(select(s.items.c.model_draft))]
    assert stored == [None] * len(stored)  # nothing of a refused file is kept
    # A judge that gave no score drafts nothing for that axis.
    drafts.write_text(json.dumps({"item_id": one, "pa": {"label": None, "note": "no judge gave a score"}}))
    assert import_drafts(project, "p", drafts) == 0


def test_review_and_adjudication_closed_until_their_inputs_are_submitted(
    project: str, suite_files: SuiteFiles
) -> None:
    item = suite_files.item_ids[3]
    assign(project, "p", ["ann1"], items=[item])
    assign(project, "p", ["rev1"], kind="review", items=[item])
    assign(project, "p", ["adj1"], kind="adjudicate", items=[item])
    a = s.assignments
    with AnnotationService(project) as svc:
        ann1, rev1, adj1 = _login(svc, "ann1"), _login(svc, "rev1"), _login(svc, "adj1")
        with svc.db.read() as conn:
            ids = dict(conn.execute(select(a.c.kind, a.c.public_id)).all())
        # Knowing the task's id is not enough: no page, no write, nothing of the primary label.
        svc.save_draft(ann1, ids["label"], LabelValues.from_form(PA_ONLY), 0)
        video = svc.task(ann1, ids["label"]).media[0].media_id
        for who, kind in ((rev1, "review"), (adj1, "adjudicate")):
            with pytest.raises(Forbidden):
                svc.media_path(who, video)
            with pytest.raises(Forbidden, match="opens once the label"):
                svc.task(who, ids[kind])
            with pytest.raises(Forbidden):
                svc.save_draft(who, ids[kind], LabelValues(pa=1), 0)
        _label(svc, ann1, ids["label"], FULL)
        assert [o.author for o in svc.task(rev1, ids["review"]).others] == ["ann1"]
        assert svc.media_path(rev1, video).is_file()
        with pytest.raises(Forbidden, match="opens once the review"):
            svc.task(adj1, ids["adjudicate"])
        # The reviewer never sees the primary annotator's drafts, only the submitted label.
        with pytest.raises(Forbidden):
            svc.history(rev1, ids["label"])


@SQLITE_ONLY
def test_reference_examples_are_pinned_and_never_dealt(project: str, suite_files: SuiteFiles) -> None:
    from robojudge.annotate import AnnotateError, add_example, create_round

    example = suite_files.item_ids[5]
    add_example(project, "p", example, "pa", 2, "the gripper melts into the table at 2 s")
    assert assign(project, "p", ["ann1"]) == 5  # the example is left out
    with pytest.raises(AnnotateError, match="already has tasks"):
        add_example(project, "p", suite_files.item_ids[0], "ia", 5, "done")
    with pytest.raises(AnnotateError, match="reference examples"):
        create_round(project, "p", "r1", ["ann1", "ann2"], [example])
    with pytest.raises(AnnotateError, match="outside 1-5"):
        add_example(project, "p", example, "pa", 0, "x")
    with AnnotationService(project) as svc:
        ann1, ann2 = _login(svc, "ann1"), _login(svc, "ann2")
        page = svc.task(ann1, svc.queue(ann1)[0].assignment_id)
        (ex,) = page.examples
        assert (ex.axis, ex.score, ex.text) == ("pa", 2, "the gripper melts into the table at 2 s")
        assert example not in repr(page.examples)
        assert svc.media_path(ann1, ex.media[0].media_id).name == f"{example}.mp4"
        with pytest.raises(Forbidden):  # ann2 works on nothing in this project
            svc.media_path(ann2, ex.media[0].media_id)


@SQLITE_ONLY
def test_segments_for_single_view_clips_only(db_url: str, suite_files: SuiteFiles) -> None:
    init_project(suite_files.manifest, db_url, "p", segment_s=3.0)
    add_annotator(db_url, "ann1", password=PW)
    assign(db_url, "p", ["ann1"], items=list(suite_files.item_ids[:2]))
    with AnnotationService(db_url) as svc:
        ann1 = _login(svc, "ann1")
        pages = {len(p.media): p for p in (svc.task(ann1, e.assignment_id) for e in svc.queue(ann1))}
        # Item 0 has two views: video-level scores only. Item 1 (7 s): 0-3, 3-6, 6-7.
        assert pages[2].segments == []
        assert [(g.start_s, g.end_s) for g in pages[1].segments] == [(0.0, 3.0), (3.0, 6.0), (6.0, 7.0)]
        aid = pages[1].assignment_id
        svc.save_draft(ann1, aid, LabelValues.from_form(PA_ONLY), 0)
        page = svc.reveal_instruction(ann1, aid)
        with pytest.raises(InvalidLabel) as err:
            svc.submit(ann1, aid, LabelValues.from_form({**FULL, "segments.0": "bad"}), page.version)
        assert err.value.field == "segments.1"
        with pytest.raises(InvalidLabel) as err:
            svc.save_draft(ann1, aid, LabelValues.from_form({**PA_ONLY, "segments.3": "bad"}), page.version)
        assert err.value.field == "segments.3"
        done = {**FULL, "segments.0": "bad", "segments.1": "medium", "segments.2": "good"}
        assert svc.submit(ann1, aid, LabelValues.from_form(done), page.version).values.segments == (
            "bad",
            "medium",
            "good",
        )


def test_upstream_lookup_takes_any_number_of_items(db_url: str) -> None:
    from robojudge.annotate._reads import submitted_kinds

    # More ids than one statement may carry on PostgreSQL (65,535 parameters; SQLite builds differ).
    with AnnotationService(db_url) as svc, svc.db.read() as conn:
        assert submitted_kinds(conn, set(range(70_000))) == {}


@SQLITE_ONLY
def test_the_deal_does_not_depend_on_the_order_people_and_items_are_named(
        db_url: str, suite_files: SuiteFiles, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Naming the same annotators or items in another order gave another deal (all tasks moved)."""
    import sqlalchemy

    def deal(people: list[str], items: list[str]) -> set[tuple[str, int]]:
        url = f"sqlite:///{tmp_path_factory.mktemp('deal') / 'a.sqlite'}"
        init_project(suite_files.manifest, url, "p", seed=7)
        _people(url)
        assign(url, "p", people, items=items)
        engine = sqlalchemy.create_engine(url)
        with engine.connect() as conn:
            got = {(r.item_id, r.annotator_id) for r in conn.execute(
                select(s.items.c.item_id, s.assignments.c.annotator_id).join(
                    s.assignments, s.assignments.c.item_id == s.items.c.id))}
        engine.dispose()
        return got

    ids = list(suite_files.item_ids)
    first = deal(["ann1", "ann2"], ids)
    assert len(first) == len(ids) and len({who for _, who in first}) == 2
    assert deal(["ann2", "ann1"], ids) == first
    assert deal(["ann1", "ann2"], ids[::-1]) == first


@SQLITE_ONLY
def test_a_project_made_before_a_table_was_added_gets_it_when_opened(project: str,
                                                                     suite_files: SuiteFiles) -> None:
    # ann_examples was added without a schema version bump: a project created before could no longer
    # be assigned ("no such table: ann_examples").
    import sqlite3

    from robojudge.annotate import add_example

    path = project.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE ann_examples")
    assert assign(project, "p", ["ann1"]) == 6
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM ann_examples").fetchone() == (0,)
    with pytest.raises(Exception, match="already has tasks"):  # the table is there: the rule speaks
        add_example(project, "p", suite_files.item_ids[0], "pa", 2, "x")
