"""``robojudge annotate``: every command as a user types it (in-process, SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

from _ann_data import SuiteFiles, label_through
from typer.testing import CliRunner

from robojudge.annotate import AnnotationService
from robojudge.cli import build_app

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
    res = runner.invoke(app, ["annotate", "assign", "--db", db, "-p", "nope", "--to", "x"])
    assert res.exit_code == 2 and "no annotation project named 'nope'" in res.output
    res = runner.invoke(app, ["annotate", "add-annotator", "bad name", "--db", db])
    assert res.exit_code == 2 and "username 'bad name'" in res.output
    res = runner.invoke(
        app, ["annotate", "export", "--db", db, "-p", "p", "-f", "xml", "--out", tmp_path / "x"]
    )
    assert res.exit_code == 2 and "--format 'xml'" in res.output


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
