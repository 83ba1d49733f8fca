"""``judge draft`` and ``judge texts`` read one configuration of a judge, and leave stale rows out.

Before, both took each item's newest row, whatever configuration wrote it: a judge rerun on a few items
at another setting gave drafts mixed item by item, and rows of a video replaced since were drafted with
no note, where ``leaderboard judges`` keeps configurations apart and leaves stale rows out (CLI audit F5).
"""

from __future__ import annotations

import json
import logging
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.report import judge_series
from robojudge.run import draft_from_store, judge_texts
from robojudge.store import ResultStore
from robojudge.video import write_video

runner = CliRunner()


def _run(*args: str):
    return runner.invoke(build_app("judge"), ["judge", *args])


def _suite(tmp_path: Path) -> tuple[Path, Path]:
    lines = []
    for k in range(4):
        write_video(tmp_path / f"v{k}.mp4", np.full((6, 32, 32, 3), 40 * (k + 1), np.uint8), fps=4)
        lines.append(json.dumps({"item_id": f"i{k}", "video": f"v{k}.mp4", "generator": "g",
                                 "instruction": "push"}))
    full, sub = tmp_path / "suite.jsonl", tmp_path / "sub.jsonl"
    full.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sub.write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    return full, sub


def _judges(tmp_path: Path, tag: str, score: int) -> Path:
    reply = json.dumps({"reasoning": tag, "physical_adherence": score, "instruction_alignment": score,
                        "caption": f"caption {tag}"})
    path = tmp_path / f"j{tag}.toml"
    path.write_text(f"[judges.mk]\nbackend = \"mock\"\nmodel = \"m\"\nreplies = ['{reply}']\n",
                    encoding="utf-8")
    return path


def _drafted(path: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        (judge,) = rec["pa"]["judges"].values()  # (under the name or label given)
        out[rec["item_id"]] = (judge["reasoning"], rec["pa"]["label"])
    return out


def test_draft_refuses_a_judge_of_two_configurations_and_takes_one_by_its_label(tmp_path: Path) -> None:
    full, sub = _suite(tmp_path)
    db = str(tmp_path / "r.sqlite")
    for manifest, tag, score in ((full, "A", 1), (sub, "C", 3)):
        done = _run(str(manifest), "--judges", str(_judges(tmp_path, tag, score)), "-j", "mk", "--db", db,
                    "--rubric", "pa,ia", "--no-progress")
        assert done.exit_code == 0, done.output
    with ResultStore(db, read_only=True) as store:
        labels = sorted(j.label for j in judge_series(store.rows()))
    assert len(labels) == 2  # what `leaderboard judges` prints

    out = tmp_path / "drafts.jsonl"
    refused = _run("draft", "-j", "mk", "--db", db, "-o", str(out))
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert ("judge 'mk' is stored under 2 configurations (of rubric pa), which are never merged; pick one "
            "of:" in said)
    assert all(" ".join(shlex.quote(label).split()) in said for label in labels)
    assert not out.exists()  # before: items i0, i1 from C and i2, i3 from A

    first = next(label for label in labels if "...A" in label)  # mk [replies=...A\", ...]
    done = _run("draft", "-j", first, "--db", db, "-o", str(out))
    assert done.exit_code == 0, done.output
    assert _drafted(out) == {f"i{k}": ("A", 1) for k in range(4)}
    other = next(label for label in labels if label != first)
    done = _run("draft", "-j", other, "--db", db, "-o", str(out))
    assert done.exit_code == 0, done.output
    assert _drafted(out) == {"i0": ("C", 3), "i1": ("C", 3)}


def test_draft_leaves_out_rows_whose_video_changed_since(tmp_path: Path) -> None:
    full, _ = _suite(tmp_path)
    run = tmp_path / "run"
    done = _run(str(full), "--judges", str(_judges(tmp_path, "A", 2)), "-j", "mk", "--run-dir", str(run),
                "--rubric", "pa,ia", "--no-progress")
    assert done.exit_code == 0, done.output
    shutil.copy(tmp_path / "v3.mp4", tmp_path / "v0.mp4")  # a regenerated rollout
    out = tmp_path / "drafts.jsonl"
    for extra in ([], ["--suite", str(full)]):  # the manifest noted in the store, or given
        done = _run("draft", "-j", "mk", "--db", str(run), "-o", str(out), *extra)
        assert done.exit_code == 0, done.output
        said = " ".join(done.output.split())
        assert ("2 stored results of 1 item left out: their inputs (video, reference, instruction...) "
                "changed" in said)
        assert sorted(_drafted(out)) == ["i1", "i2", "i3"]  # before: i0 drafted from the old video's rows
    # --suite alone finds the store as `robojudge score` does (runs/<name>): none here
    alone = _run("draft", "-j", "mk", "--suite", str(full), "-o", str(out))
    assert alone.exit_code == 2 and "no result store at runs/suite/results.sqlite" in alone.output


def test_the_python_draft_and_texts_leave_out_the_rows_the_cli_leaves_out(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # (audit cli2 F1) draft_from_store and judge_texts, the documented Python of `judge draft` / `judge
    # texts`, drafted and exported from the rows of a video replaced after it was judged
    full, _ = _suite(tmp_path)
    run = tmp_path / "run"
    done = _run(str(full), "--judges", str(_judges(tmp_path, "A", 2)), "-j", "mk", "--run-dir", str(run),
                "--rubric", "pa,ia,caption", "--no-progress")
    assert done.exit_code == 0, done.output
    shutil.copy(tmp_path / "v3.mp4", tmp_path / "v0.mp4")
    out = tmp_path / "drafts.jsonl"
    assert _run("draft", "-j", "mk", "--db", str(run), "-o", str(out)).exit_code == 0
    with ResultStore(str(run / "results.sqlite"), read_only=True) as store:
        for given in ({}, {"suite": full}):  # the manifest noted in the store, or given
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="robojudge.run"):
                drafts = draft_from_store(store, ["mk"], **given)
                texts = judge_texts(store, "judge:mk:caption", **given)
            assert sorted(drafts) == sorted(_drafted(out)) == ["i1", "i2", "i3"]
            assert sorted(texts) == ["i1", "i2", "i3"]
            said = [r.getMessage() for r in caplog.records]
            assert "2 stored result(s) of 1 item(s) left out: their inputs" in said[0], said
            assert "1 stored result(s) of 1 item(s) left out" in said[1], said
        # a manifest that does not hold the replaced item: nothing is stale, nothing said
        others = tmp_path / "others.jsonl"
        others.write_text("".join(full.read_text(encoding="utf-8").splitlines(keepends=True)[1:]),
                          encoding="utf-8")
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="robojudge.run"):
            assert sorted(draft_from_store(store, ["mk"], suite=others)) == ["i0", "i1", "i2", "i3"]
        assert not caplog.records


def test_draft_and_texts_do_not_replace_a_file_they_did_not_write(tmp_path: Path) -> None:
    full, _ = _suite(tmp_path)
    db = str(tmp_path / "r.sqlite")
    done = _run(str(full), "--judges", str(_judges(tmp_path, "A", 2)), "-j", "mk", "--db", db,
                "--rubric", "pa,ia", "--no-progress")
    assert done.exit_code == 0, done.output
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"item_id": "i0", "video": "v0.mp4", "labels": {"pa": 3}}\n', encoding="utf-8")
    before = notes.read_text(encoding="utf-8")
    for args in (["draft", "-j", "mk"], ["texts", "-j", "mk"]):
        refused = _run(*args, "--db", db, "-o", str(notes))
        assert refused.exit_code == 2, refused.output
        assert "exists and is not a" in refused.output and "pass --force to replace it" in refused.output
        assert notes.read_text(encoding="utf-8") == before  # before: replaced without a word
        given = _run(*args, "--db", db, "--suite", str(notes), "-o", str(notes), "--force")
        assert given.exit_code == 2 and "is the manifest given as --suite" in given.output
    out = tmp_path / "drafts.jsonl"
    for _ in range(2):  # its own output is replaced as before
        done = _run("draft", "-j", "mk", "--db", db, "-o", str(out))
        assert done.exit_code == 0, done.output
    done = _run("draft", "-j", "mk", "--db", db, "-o", str(notes), "--force")
    assert done.exit_code == 0 and notes.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")


def test_rows_without_a_config_draft_pa_by_its_label_and_the_single_ia_with_it(tmp_path: Path) -> None:
    # Review rev6 F5: an older store (rows without a config) with PA under two config hashes and IA under
    # one: the name was refused and a PA label drafted an empty IA, so PA and IA could not be drafted
    # together.
    from robojudge.report._series import pick_judge_rows
    from robojudge.store import ResultRow, sqlite_url

    db = tmp_path / "old.sqlite"
    rows = [ResultRow("i0", "judge:old2:pa", "hA", "1", "ok", 2.0, config=None),
            ResultRow("i1", "judge:old2:pa", "hB", "1", "ok", 5.0, config=None),
            ResultRow("i0", "judge:old2:ia", "hC", "1", "ok", 4.0, config=None)]
    with ResultStore(sqlite_url(db)) as store:
        store.add(rows)
    refused = _run("draft", "-j", "old2", "--db", str(db), "-o", str(tmp_path / "a.jsonl"))
    assert refused.exit_code == 2 and "'old2 [config hA]'" in refused.output  # still one PA to pick
    out = tmp_path / "d.jsonl"
    res = _run("draft", "-j", "old2 [config hA]", "--db", str(db), "-o", str(out))
    assert res.exit_code == 0, res.output
    assert "2/2 draft labels" in res.output
    assert "judge 'old2' has one ia series, taken as is" in res.output
    (rec,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (rec["item_id"], rec["pa"]["label"], rec["ia"]["label"]) == ("i0", 2, 4)
    notes: list[str] = []
    name, picked = pick_judge_rows(rows, "old2 [config hB]", ["pa", "ia"], notes)
    assert name == "old2" and {(r.metric, r.config_hash) for r in picked} == {
        ("judge:old2:pa", "hB"), ("judge:old2:ia", "hC")}
    assert len(notes) == 1


def test_a_label_of_rows_with_a_config_never_takes_another_configurations_rubric() -> None:
    # The fallback is for rows without a config only: where configs tell that IA was judged by another
    # configuration, the picked label's IA stays empty.
    from robojudge.report._series import pick_judge_rows
    from robojudge.store import ResultRow

    def cfg(fps: float, rubric: str) -> dict[str, object]:
        return {"model": "m", "frames": {"fps": fps}, "rubric": {"name": rubric, "version": "2"}}

    rows = [ResultRow("i0", "judge:mk:pa", "pa4", "1", "ok", 2.0, config=cfg(4.0, "pa")),
            ResultRow("i0", "judge:mk:pa", "pa2", "1", "ok", 3.0, config=cfg(2.0, "pa")),
            ResultRow("i0", "judge:mk:ia", "ia4", "1", "ok", 4.0, config=cfg(4.0, "ia"))]
    labels = [j.label for j in judge_series(rows)]
    lone = next(label for label in labels if "2" in label and "4" not in label)
    notes: list[str] = []
    _, picked = pick_judge_rows(rows, lone, ["pa", "ia"], notes)
    assert [(r.metric, r.config_hash) for r in picked] == [("judge:mk:pa", "pa2")] and notes == []
