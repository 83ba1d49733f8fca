"""``robojudge annotate``: every command as a user types it (in-process, SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _ann_data import SuiteFiles, label_through, make_suite
from typer.testing import CliRunner

from robojudge.annotate import AnnotationService
from robojudge.cli import build_app
from robojudge.meta import agreement_from_csv

runner = CliRunner()
app = build_app("annotate")
PW = "correct horse"
FULL = {
    "pa": 4,
    "ia": 2,
    **{
        f"checklist.{c}": 1
        for c in (
            "agent_consistency",
            "scene_consistency",
            "interaction_realism",
            "agent_match",
            "object_correctness",
            "goal_completion",
        )
    },
}


def rj(*args: object, input: str | None = None) -> str:
    res = runner.invoke(app, ["annotate", *map(str, args)], input=input)
    assert res.exit_code == 0, res.output
    return res.output


def test_commands_end_to_end(suite_files: SuiteFiles, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/a.sqlite"
    assert "6 items" in rj("init", suite_files.manifest, "--db", db, "--name", "p", "--segments", "3")
    out = rj("add-annotator", "ann1", "--db", db, "--password", input=f"{PW}\n{PW}\n")
    assert "added ann1 (annotator)" in out
    out = rj("add-annotator", "ann2", "--db", db, "--base-url", "https://label.example/")
    link = next(line for line in out.splitlines() if "/invite/" in line)
    assert link.startswith("https://label.example/invite/")
    with AnnotationService(db) as svc:
        svc.accept_invite(link.rsplit("/", 1)[1], PW)
    rj("add-annotator", "rev", "--db", db, "--role", "reviewer", "--password", input=f"{PW}\n{PW}\n")

    assert "practice tasks" in rj(
        "round",
        "create",
        "r1",
        "--db",
        db,
        "-p",
        "p",
        "--to",
        "ann1",
        "--to",
        "ann2",
        *(x for i in suite_files.item_ids[:2] for x in ("--item", i)),
    )
    with AnnotationService(db) as svc:
        for name in ("ann1", "ann2"):
            who = svc.authenticate(name, PW)
            for entry in svc.queue(who):
                label_through(
                    svc, who, entry.assignment_id, {**FULL, **{f"segments.{k}": "good" for k in range(3)}}
                )
    out = rj("round", "close", "r1", "--db", db, "-p", "p")
    assert "all (PA+IA)" in out and "1.000" in out and "yes" in out

    assert "6 label tasks assigned" in rj("assign", "--db", db, "-p", "p", "--to", "ann1", "--to", "ann2")
    assert "1 review tasks assigned" in rj(
        "assign",
        "--db",
        db,
        "-p",
        "p",
        "--to",
        "rev",
        "--kind",
        "review",
        "--skip-training",
        "--item",
        suite_files.item_ids[0],
    )
    status = json.loads(rj("status", "--db", db, "-p", "p", "--json"))
    assert (
        status["by_kind"]["label"]["open"] == 6
        and status["by_kind"]["review"]["open"] == 1
        and status["by_kind"]["practice"]["submitted"] == 4
    )
    assert status["rounds"] == {"r1": "closed"} and status["qualified"] == ["ann1", "ann2"]

    with AnnotationService(db) as svc:
        who = svc.authenticate("ann1", PW)
        for entry in svc.queue(who):
            if entry.kind == "label":
                label_through(
                    svc, who, entry.assignment_id, {**FULL, **{f"segments.{k}": "bad" for k in range(3)}}
                )
    assert "3 labelled items" in rj("export", "--db", db, "-p", "p", "--out", tmp_path / "m.jsonl")
    assert "meta agreement" in rj("export", "--db", db, "-p", "p", "-f", "scores", "--out", tmp_path / "sc")
    # 2 trainees x 2 practice items, and ann1's 3 primary labels.
    assert "7 annotations" in rj(
        "export", "--db", db, "-p", "p", "-f", "labelstudio", "--out", tmp_path / "l.json"
    )
    assert "<TimelineLabels" in rj("labelstudio-config")
    rj("init", suite_files.manifest, "--db", db, "--name", "q", "--segments", "3")
    rj(
        "round",
        "create",
        "r1",
        "--db",
        db,
        "-p",
        "q",
        "--to",
        "ann1",
        "--to",
        "ann2",
        "--item",
        suite_files.item_ids[0],
    )
    assert "7 labels imported" in rj("import-labelstudio", tmp_path / "l.json", "--db", db, "-p", "q")
    human = (tmp_path / "sc" / "human.csv").read_text().splitlines()
    assert len(human) == 1 + 2 * 3


def test_errors_exit_2_with_a_message(suite_files: SuiteFiles, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/a.sqlite"
    rj("init", suite_files.manifest, "--db", db, "--name", "p")
    res = runner.invoke(app, ["annotate", "assign", "--db", db, "-p", "nope", "--to", "x"])
    assert res.exit_code == 2 and "no annotation project named 'nope'" in res.output
    res = runner.invoke(app, ["annotate", "add-annotator", "bad name", "--db", db])
    assert res.exit_code == 2 and "username 'bad name'" in res.output
    res = runner.invoke(
        app, ["annotate", "export", "--db", db, "-p", "p", "-f", "xml", "--out", tmp_path / "x"]
    )
    assert res.exit_code == 2 and "--format 'xml'" in res.output
    # JSON Lines was written into a .csv or .parquet that nothing could read back
    res = CliRunner().invoke(
        app, ["annotate", "export", "--db", db, "-p", "p", "--out", tmp_path / "m.csv"]
    )
    assert res.exit_code == 2 and "name it .jsonl" in res.output and not (tmp_path / "m.csv").exists()


def test_add_example(suite_files: SuiteFiles, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/a.sqlite"
    rj("init", suite_files.manifest, "--db", db, "--name", "p")
    item = suite_files.item_ids[1]
    out = rj(
        "add-example", item, "--db", db, "-p", "p", "--axis", "ia", "--score", "4", "--text", "almost there"
    )
    assert f"{item} pinned as a IA 4 example" in out
    res = runner.invoke(
        app,
        [
            "annotate",
            "add-example",
            item,
            "--db",
            db,
            "-p",
            "p",
            "--axis",
            "xx",
            "--score",
            "4",
            "--text",
            "t",
        ],
    )
    assert res.exit_code == 2 and "axis 'xx'" in res.output


def _project(suite_files: SuiteFiles, tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path}/a.sqlite"
    rj("init", suite_files.manifest, "--db", db, "--name", "p")
    for name, role in (("alice", "annotator"), ("bob", "annotator"), ("carol", "reviewer")):
        rj("add-annotator", name, "--db", db, "--role", role, "--password", input=f"{PW}\n{PW}\n")
    return db


def test_commands_on_a_missing_database_create_nothing(suite_files: SuiteFiles, tmp_path: Path) -> None:
    """A mistyped --db used to leave a new, empty 128 KB database behind."""
    db = tmp_path / "typo.sqlite"
    (tmp_path / "d.jsonl").write_text('{"item_id": "x", "pa": {"label": 3}}\n')
    for args in (
        ["status"],
        ["export", "--out", tmp_path / "o.jsonl"],
        ["export", "-f", "scores", "--out", tmp_path / "sc"],
        ["assign", "--to", "alice"],
        ["import-drafts", tmp_path / "d.jsonl"],
        ["round", "status", "r1"],
    ):
        res = runner.invoke(app, ["annotate", *map(str, args), "--db", str(db), "-p", "p"])
        assert res.exit_code == 2, (args, res.output)
        assert (
            res.output == f"error: database file {db} does not exist (robojudge annotate init creates one)\n"
        )
        assert not db.exists() and not (tmp_path / "o.jsonl").exists()
    assert "6 items" in rj("init", suite_files.manifest, "--db", db, "--name", "p")
    assert db.is_file()


def test_export_errors_print_one_line(suite_files: SuiteFiles, tmp_path: Path) -> None:
    db = _project(suite_files, tmp_path)

    def error(*args: object) -> str:
        res = runner.invoke(app, ["annotate", "export", "--db", db, "-p", "p", *map(str, args)])
        assert res.exit_code == 2
        assert res.output.count("error:") == 1, res.output  # was a second line: "error: 2"
        return res.output

    assert error("-f", "csv", "--out", tmp_path / "x") == (
        "error: --format 'csv': use manifest, scores or labelstudio\n"
    )
    assert "rater 'nobody': no annotator of that name" in error("--rater", "nobody", "--out",
                                                                tmp_path / "x.jsonl")
    assert "--rater is for --format manifest" in error(
        "-f", "scores", "--rater", "alice", "--out", tmp_path / "x"
    )
    assert "--media-url is for --format labelstudio" in error(
        "--media-url", "https://x", "--out", tmp_path / "x"
    )
    # A suite of its own: a regression here would empty the file.
    own = make_suite(tmp_path / "own", n=1)
    rj("init", own.manifest, "--db", db, "--name", "own")
    suite = own.manifest.read_bytes()
    res = runner.invoke(app, ["annotate", "export", "--db", db, "-p", "own", "--out", str(own.manifest)])
    assert res.exit_code == 2 and res.output.count("error:") == 1
    assert "is the project's suite manifest: writing the export there would replace it" in res.output
    assert own.manifest.read_bytes() == suite


def test_scores_export_says_which_rows_it_left_out(suite_files: SuiteFiles, tmp_path: Path) -> None:
    """The audit's case: without adjudication alice's primary label is the final one; comparing her
    with it gave her a perfect agreement."""
    db = _project(suite_files, tmp_path)

    def ann(rater: str, kind: str, pa: int, ia: int) -> dict[str, object]:
        result = [{"from_name": axis, "value": {"rating": v}} for axis, v in (("pa", pa), ("ia", ia))]
        return {"meta": {"robojudge_rater": rater, "robojudge_kind": kind}, "result": result}

    tasks = [
        {
            "data": {"item_id": suite_files.item_ids[1]},
            "annotations": [ann("alice", "label", 5, 5), ann("carol", "review", 1, 1)],
        },
        {
            "data": {"item_id": suite_files.item_ids[2]},
            "annotations": [ann("alice", "label", 2, 3), ann("carol", "review", 5, 5)],
        },
    ]
    (tmp_path / "ls.json").write_text(json.dumps(tasks))
    assert "4 labels imported" in rj("import-labelstudio", tmp_path / "ls.json", "--db", db, "-p", "p")
    # carol disputes both labels and nobody adjudicated: asked for, alice's labels are taken all the same.
    out = rj("export", "--db", db, "-p", "p", "-f", "scores", "--out", tmp_path / "sc", "--include-disputed")
    assert "4 rows left out of raters.csv: their item's final label is that rater's own primary label" in out
    raters = (tmp_path / "sc" / "raters.csv").read_text().splitlines()
    assert raters[0] == "judge,item_id,axis,score,role" and {r.split(",")[0] for r in raters[1:]} == {"carol"}
    assert len(raters) == 1 + 4 and {r.split(",")[4] for r in raters[1:]} == {"review"}
    assert "scores a primary annotator (role primary) only on the 0 adjudicated item(s)" in out


def test_disputed_labels_await_an_adjudication(suite_files: SuiteFiles, tmp_path: Path) -> None:
    """A primary label whose cross-review was 2-3 points off, never adjudicated, was exported as the
    final label and counted final by `status`, without a word. RoboJudge (Sec. 3.3, App. A.1) has an
    expert adjudicate the two assessments: such an item now awaits that, and the exports leave it out
    (or, asked to, take the primary label with a mark), saying how many."""
    db = _project(suite_files, tmp_path)
    rj("add-annotator", "dan", "--db", db, "--role", "adjudicator", "--password", input=f"{PW}\n{PW}\n")

    def ann(rater: str, kind: str, pa: int, ia: int) -> dict[str, object]:
        result = [{"from_name": axis, "value": {"rating": v}} for axis, v in (("pa", pa), ("ia", ia))]
        return {"meta": {"robojudge_rater": rater, "robojudge_kind": kind}, "result": result}

    ids = suite_files.item_ids
    given = [  # (item, [(rater, kind, pa, ia), ...])
        (0, [("alice", "label", 4, 5), ("carol", "review", 2, 5)]),
        (1, [("alice", "label", 3, 1), ("carol", "review", 1, 4)]),
        (2, [("bob", "label", 5, 2), ("carol", "review", 4, 3)]),
        (3, [("bob", "label", 5, 5), ("carol", "review", 1, 5), ("dan", "adjudicate", 3, 5)]),
        (4, [("bob", "label", 2, 2)]),
    ]
    tasks = [{"data": {"item_id": ids[k]}, "annotations": [ann(*a) for a in anns]} for k, anns in given]
    (tmp_path / "ls.json").write_text(json.dumps(tasks))
    assert "10 labels imported" in rj("import-labelstudio", tmp_path / "ls.json", "--db", db, "-p", "p")
    # Items 0 and 1 are disputed (PA 4/2; PA 3/1 and IA 1/4); item 2 is one point off on each axis, item 3
    # adjudicated, item 4 not reviewed: those three are final.
    status = json.loads(rj("status", "--db", db, "-p", "p", "--json"))
    assert (status["n_final"], status["n_disputed"]) == (3, 2)
    out = rj("status", "--db", db, "-p", "p")
    assert "p: 6 items, 3 final, 2 awaiting adjudication" in out
    assert "2 item(s) await an adjudication: a cross-review differs from their primary label by 2" in out

    def export(*args: object) -> str:
        return " ".join(rj("export", "--db", db, "-p", "p", *args).split())

    # The score tables measure the raters: the disputed items stay, marked, so that carol is scored on
    # every item she reviewed and not only where she was within one point of alice and bob.
    out = export("-f", "scores", "--out", tmp_path / "sc")
    assert "(5 items)" in out and "2 item(s) exported with their primary label although not final, " \
        "marked in human.csv's disputed column: a cross-review differs from their primary label by 2 " \
        "points or more on PA or IA and nobody has adjudicated them" in out
    rows = [r.split(",") for r in (tmp_path / "sc" / "human.csv").read_text().splitlines()[1:]]
    assert {(r[0], r[1]): (int(r[2]), r[5]) for r in rows} == {
        (ids[0], "pa"): (4, "pa"), (ids[0], "ia"): (5, "pa"),
        (ids[1], "pa"): (3, "pa;ia"), (ids[1], "ia"): (1, "pa;ia"),
        (ids[2], "pa"): (5, ""), (ids[2], "ia"): (2, ""), (ids[3], "pa"): (3, ""), (ids[3], "ia"): (5, ""),
        (ids[4], "pa"): (2, ""), (ids[4], "ia"): (2, ""),
    }
    raters = [r.split(",") for r in (tmp_path / "sc" / "raters.csv").read_text().splitlines()[1:]]
    assert sorted((r[0], r[1]) for r in raters if r[2] == "pa") == sorted(
        [("carol", ids[k]) for k in range(4)] + [("bob", ids[3])]
    )
    assert f"--human {tmp_path / 'sc' / 'human.csv'} --disputed keep" in out  # the command it suggests
    sc = tmp_path / "sc"
    report = agreement_from_csv(sc / "raters.csv", sc / "human.csv", bootstrap=0, disputed="keep")
    # carol against the final labels, disputed ones included: PA 2/4, 1/3, 4/5, 1/3; IA 5/5, 4/1, 3/2, 5/5
    assert report.cells["carol"]["pa"].stats["within_one"].value == pytest.approx(1 / 4)
    assert report.cells["carol"]["ia"].stats["within_one"].value == pytest.approx(3 / 4)
    # meta agreement's default takes the final labels alone, items 2 and 3: PA 4/5, 1/3; IA 3/2, 5/5
    report = agreement_from_csv(sc / "raters.csv", sc / "human.csv", bootstrap=0)
    assert report.cells["carol"]["pa"].stats["within_one"].value == pytest.approx(1 / 2)
    assert report.cells["carol"]["ia"].stats["within_one"].value == pytest.approx(2 / 2)
    out = export("-f", "manifest", "--out", tmp_path / "m.jsonl")
    assert ": 3 labelled items" in out and "2 item(s) left out, not final yet" in out
    records = {r["item_id"]: r for r in map(json.loads, (tmp_path / "m.jsonl").read_text().splitlines())}
    assert "labels" not in records[ids[0]] and "labels" not in records[ids[1]]
    out = export("-f", "manifest", "--out", tmp_path / "m.jsonl", "--include-disputed")
    assert ": 5 labelled items" in out and "2 item(s) exported with their primary label although not " \
        "final, marked in meta.annotation.disputed" in out
    records = {r["item_id"]: r for r in map(json.loads, (tmp_path / "m.jsonl").read_text().splitlines())}
    marks = {k: records[ids[k]]["meta"]["annotation"].get("disputed") for k in range(5)}
    assert marks == {0: ["pa"], 1: ["pa", "ia"], 2: None, 3: None, 4: None}
    assert records[ids[0]]["labels"]["pa"] == 4  # alice's, as asked
    res = runner.invoke(app, ["annotate", "export", "--db", db, "-p", "p", "-f", "labelstudio",
                              "--out", tmp_path / "x.json", "--include-disputed"])
    assert res.exit_code == 2 and "--include-disputed is for the final labels" in res.output


def test_admin_commands_check_their_input(suite_files: SuiteFiles, tmp_path: Path) -> None:
    db = _project(suite_files, tmp_path)

    def error(*args: object) -> str:
        res = runner.invoke(app, ["annotate", *map(str, args)])
        assert res.exit_code == 2 and res.output.count("error:") == 1, res.output
        return res.output

    for bad in ("80", "-1", "nan"):
        out = error(
            "round",
            "create",
            "r1",
            "--db",
            db,
            "-p",
            "p",
            "--to",
            "alice",
            "--to",
            "bob",
            "--item",
            suite_files.item_ids[1],
            "--threshold",
            bad,
        )
        assert "pass threshold must be within 0-1" in out
    rj("update-annotator", "bob", "--db", db, "--inactive")
    assert "'bob': inactive" in error("assign", "--db", db, "-p", "p", "--to", "alice", "--to", "bob")
    example = suite_files.item_ids[5]
    rj("add-example", example, "--db", db, "-p", "p", "--axis", "pa", "--score", "2", "--text", "melts")
    out = error("assign", "--db", db, "-p", "p", "--to", "alice", "--item", example)
    assert f"{example!r}: reference example(s) of 'p', never dealt as tasks" in out
    # Without --item the example is left out as before.
    assert "5 label tasks assigned" in rj("assign", "--db", db, "-p", "p", "--to", "alice")


def test_status_and_round_tables_print_long_names_whole_in_a_pipe(suite_files: SuiteFiles,
                                                                  tmp_path: Path) -> None:
    # Before: piped at COLUMNS=40 the tables were cut: 'annotator annotator…' and 'annotator_of_the… &'.
    import os
    import subprocess
    import sys

    long_a, long_b = "annotator_of_the_first_vendor@example.org", "annotator_of_the_second_vendor"
    db = f"sqlite:///{tmp_path}/a.sqlite"
    rj("init", suite_files.manifest, "--db", db, "--name", "p", "--segments", "3")
    for name in (long_a, long_b):
        rj("add-annotator", name, "--db", db, "--password", input=f"{PW}\n{PW}\n")
    rj("round", "create", "r1", "--db", db, "-p", "p", "--to", long_a, "--to", long_b,
       *(x for i in suite_files.item_ids[:2] for x in ("--item", i)))
    with AnnotationService(db) as svc:
        for name in (long_a, long_b):
            who = svc.authenticate(name, PW)
            for entry in svc.queue(who):
                label_through(svc, who, entry.assignment_id,
                              {**FULL, **{f"segments.{k}": "good" for k in range(3)}})
    import robojudge

    env = {**os.environ, "COLUMNS": "40", "PYTHONPATH": str(Path(robojudge.__file__).parents[1])}
    for args in (["status"], ["round", "status", "r1"]):
        done = subprocess.run([sys.executable, "-m", "robojudge", "annotate", *args, "--db", db, "-p", "p"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "…" not in done.stdout, done.stdout
        lines = done.stdout.splitlines()
        if args == ["status"]:
            assert any(f"annotator {long_a}" in line for line in lines), done.stdout
        else:
            assert any(f"{long_a} & {long_b}" in line for line in lines), done.stdout
            assert any(f"{long_b} & the others" in line and "1.000" in line for line in lines), done.stdout


def test_round_status_json(suite_files: SuiteFiles, tmp_path: Path) -> None:
    # Before: "No such option: --json", though `annotate status` has it (CLI audit F7).
    db = _project(suite_files, tmp_path)
    rj("round", "create", "r1", "--db", db, "-p", "p", "--to", "alice", "--to", "bob",
       *(x for i in suite_files.item_ids[:2] for x in ("--item", i)))
    empty = json.loads(rj("round", "status", "r1", "--db", db, "-p", "p", "--json"))
    assert empty["round"] == "r1" and empty["pooled"]["n_pairs"] == 0
    with AnnotationService(db) as svc:
        for name in ("alice", "bob"):
            who = svc.authenticate(name, PW)
            for entry in svc.queue(who):
                label_through(svc, who, entry.assignment_id,
                              {**FULL, **{f"segments.{k}": "good" for k in range(3)}})
    res = runner.invoke(app, ["annotate", "round", "status", "r1", "--db", db, "-p", "p", "--json"])
    assert res.exit_code == 0, res.output
    status = json.loads(res.stdout)  # nothing else on stdout
    assert status["annotators"] == ["alice", "bob"] and status["n_items"] == 2
    # 2 items x PA and IA, both trainees gave the same labels: every pair agrees exactly
    assert status["pooled"]["n_pairs"] == 4 and status["pooled"]["exact"] == 1.0
    assert status["passed"] == {"alice": True, "bob": True}
