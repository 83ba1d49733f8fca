"""A project whose suite moved (another folder, or another machine sharing the database): the exports and the
service take the suite at its new place, ``relocate`` records it, and another suite is never taken for it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from _ann_data import FPS, SECONDS, SQLITE_ONLY, SuiteFiles, label_through, make_suite
from sqlalchemy import select
from typer.testing import CliRunner

from robojudge.annotate import (
    AnnotateError,
    AnnotationService,
    NotFound,
    add_annotator,
    assign,
    export_labelstudio,
    export_manifest,
    export_scores,
    init_project,
    relocate_project,
)
from robojudge.annotate import _schema as s
from robojudge.cli import build_app
from robojudge.suite import CHECKLIST_ITEMS
from robojudge.video import write_video

PW = "correct horse"
LABEL = {"pa": 4, "ia": 2, "evidence": "slides at 2 s", **{f"checklist.{c}": 1 for c in CHECKLIST_ITEMS}}
MEDIA_URL = "https://media.example/suite"


def _project(db: str, root: Path) -> SuiteFiles:
    """A suite in ``root/laptop/suite``, a project ``bench`` made from it, every item labelled by ann1."""
    suite = make_suite(root / "laptop" / "suite")
    init_project(suite.manifest, db, "bench", seed=1)
    add_annotator(db, "ann1", password=PW)
    assign(db, "bench", ["ann1"])
    with AnnotationService(db) as svc:
        who = svc.authenticate("ann1", PW)
        for entry in svc.queue(who):
            label_through(svc, who, entry.assignment_id, LABEL)
    return suite


def _move(root: Path) -> Path:
    """Copy the suite folder to ``root/server`` and take the original away; the copy's manifest."""
    shutil.copytree(root / "laptop", root / "server")
    (root / "laptop").rename(root / "laptop_gone")
    return root / "server" / "suite" / "suite.jsonl"


def _exports(db: str, out: Path, suite: Path | None = None) -> dict[str, str]:
    export_manifest(db, "bench", out / "labelled.jsonl", suite=suite)
    export_scores(db, "bench", out / "scores", suite=suite)
    export_labelstudio(db, "bench", out / "ls.json", media_url=MEDIA_URL, suite=suite)
    files = (out / "labelled.jsonl", out / "scores" / "human.csv", out / "scores" / "raters.csv",
             out / "ls.json")
    return {p.name: p.read_text(encoding="utf-8") for p in files}


def test_the_exports_read_a_moved_suite_given_where_it_is_now(db_url: str, tmp_path: Path) -> None:
    # Before, every export of a moved project failed on the recorded path, with no way to give another.
    _project(db_url, tmp_path)
    before = _exports(db_url, tmp_path / "before")
    new = _move(tmp_path)
    for export, out in ((export_manifest, "m.jsonl"), (export_scores, "sc"), (export_labelstudio, "ls.json")):
        with pytest.raises(AnnotateError, match=r"laptop/suite/suite.jsonl: not found .*--suite.*relocate"):
            export(db_url, "bench", tmp_path / out)
    after = _exports(db_url, tmp_path / "after", new)
    # The same labels; only the manifest's absolute paths name the new folder.
    assert after["labelled.jsonl"] == before["labelled.jsonl"].replace("/laptop/", "/server/")
    assert "/server/suite/videos/" in after["labelled.jsonl"]
    assert {k: v for k, v in after.items() if k != "labelled.jsonl"} == {
        k: v for k, v in before.items() if k != "labelled.jsonl"
    }
    assert len(json.loads(after["ls.json"])) == 6 and MEDIA_URL + "/videos/" in after["ls.json"]


def _media(db: str) -> dict[str, str]:
    with AnnotationService(db) as svc, svc.db.read() as conn:
        return {r.public_id: r.path for r in conn.execute(select(s.media.c.public_id, s.media.c.path))}


def test_relocate_records_the_new_place_and_keeps_the_ids(db_url: str, tmp_path: Path) -> None:
    # Before, no command re-rooted a project: the admin the 404 pointed to could not fix it.
    suite = _project(db_url, tmp_path)
    ids = _media(db_url)
    new = _move(tmp_path)
    moved = relocate_project(db_url, "bench", new)
    assert (moved.old_suite, moved.new_suite) == (str(suite.manifest), str(new))
    assert (moved.n_items, moved.n_paths) == (6, 6 + 1 + 6)  # videos, item 0's second view, first frames
    now = _media(db_url)
    assert now.keys() == ids.keys()  # the opaque ids the app hands out stay
    assert all(now[k] == v.replace("/laptop/", "/server/") and Path(now[k]).is_file() for k, v in ids.items())
    with AnnotationService(db_url) as svc:
        assert svc.project_for_suite(new).name == "bench"  # serve SUITE finds it at its new place
        who = svc.authenticate("ann1", PW)
        assert who is not None
        assert all(svc.media_path(who, k) == Path(now[k]) for k in now)
    assert export_manifest(db_url, "bench", tmp_path / "x.jsonl") == 6  # no --suite needed any more
    # Once more from the same place: nothing left to change.
    assert relocate_project(db_url, "bench", new).n_paths == 0


def _rewrite(manifest: Path, item: int, **fields: object) -> None:
    rows = [json.loads(line) for line in manifest.read_text().splitlines()]
    rows[item].update(fields)
    rows[item] = {k: v for k, v in rows[item].items() if v is not None}
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))


CHANGES = {
    "another item id": (lambda m: _rewrite(m, 5, item_id="clip9-other"),
                        r"items of the project it lacks: 'clip2-secret-gen-beta'; items the project lacks: "
                        r"'clip9-other'"),
    "another instruction": (lambda m: _rewrite(m, 2, instruction="stack the cups"),
                            r"item 'clip1-secret-gen-alpha' field instruction: 'stack the cups', recorded "
                            r"'put the cup 2 on the plate'"),
    "another item's video": (lambda m: _rewrite(m, 1, video="videos/clip1-secret-gen-beta.mp4"),
                             r"item 'clip0-secret-gen-beta' field video: .*/server/suite/videos/"
                             r"clip1-secret-gen-beta.mp4 is not where the project's file was"),
    "a view less": (lambda m: _rewrite(m, 0, views=None, main_view=None),
                    r"item 'clip0-secret-gen-alpha': files initial_frame, video, recorded initial_frame, "
                    r"views.front, views.wrist"),
}


@SQLITE_ONLY
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_different_suite_is_refused_naming_what_differs(db_url: str, tmp_path: Path, change: str) -> None:
    """Same place, other content: every entry point refuses it, and relocate changes nothing."""
    _project(db_url, tmp_path)
    new = _move(tmp_path)
    edit, message = CHANGES[change]
    edit(new)
    before = _media(db_url)
    with pytest.raises(AnnotateError, match=rf"suite.jsonl is not the suite of project 'bench' .*{message}"):
        export_manifest(db_url, "bench", tmp_path / "out.jsonl", suite=new)
    with pytest.raises(AnnotateError, match=message):
        relocate_project(db_url, "bench", new)
    with AnnotationService(db_url) as svc, pytest.raises(AnnotateError, match=message):
        svc.use_suite("bench", new)
    assert _media(db_url) == before and not (tmp_path / "out.jsonl").exists()
    with AnnotationService(db_url) as svc:
        assert svc.project("bench").suite_path.endswith("/laptop/suite/suite.jsonl")


@SQLITE_ONLY
def test_missing_files_and_changed_clips_stop_serving_and_relocating(db_url: str, tmp_path: Path) -> None:
    _project(db_url, tmp_path)
    new = _move(tmp_path)
    frame = new.parent / "videos" / "clip1-secret-gen-alpha_first.png"
    frame.unlink()
    missing = r"item 'clip1-secret-gen-alpha' field initial_frame: file not found: .*_first.png"
    with pytest.raises(AnnotateError, match=missing):
        relocate_project(db_url, "bench", new)
    with AnnotationService(db_url) as svc, pytest.raises(AnnotateError, match=missing):
        svc.use_suite("bench", new)
    assert export_manifest(db_url, "bench", tmp_path / "out.jsonl", suite=new) == 6  # labels need no video
    shutil.copyfile(new.parent / "videos" / "clip0-secret-gen-alpha_first.png", frame)
    # The same file name holding a shorter clip: not the clip that was labelled.
    short = np.zeros(((SECONDS - 2) * FPS, 16, 16, 3), dtype=np.uint8)
    write_video(new.parent / "videos" / "clip2-secret-gen-alpha.mp4", short, fps=FPS)
    with pytest.raises(AnnotateError, match=r"'clip2-secret-gen-alpha' field video: length 5 in .*, 7 when"):
        relocate_project(db_url, "bench", new)


runner = CliRunner()
app = build_app("annotate")


@SQLITE_ONLY
def test_commands_on_a_moved_project(db_url: str, tmp_path: Path) -> None:
    # Before, serve pointed to `annotate init` and export had no --suite.
    _project(db_url, tmp_path)
    new = _move(tmp_path)
    res = runner.invoke(app, ["annotate", "serve", str(new), "--db", db_url])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert f"no annotation project was created from {new}" in text
    assert "'bench' (6 items) from" in text
    assert "laptop/suite/suite.jsonl, which is not on this machine" in text
    assert "(--project NAME)" in text
    export = ["annotate", "export", "--db", db_url, "-p", "bench", "--out", str(tmp_path / "o.jsonl")]
    res = runner.invoke(app, [*export, "--suite", str(new)])
    assert res.exit_code == 0 and "6 labelled items" in res.output, res.output
    res = runner.invoke(app, ["annotate", "relocate", "--db", db_url, "-p", "bench", "--suite", str(new)])
    assert res.exit_code == 0 and "6 items, 13 file paths changed" in " ".join(res.output.split()), res.output
    res = runner.invoke(app, export)
    assert res.exit_code == 0, res.output


@SQLITE_ONLY
def test_a_database_without_projects_says_so(db_url: str, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "s", n=2)
    add_annotator(db_url, "ann1", password=PW)
    with AnnotationService(db_url) as svc, pytest.raises(NotFound, match=r"nor any other in .*annotate init"):
        svc.project_for_suite(suite.manifest)
