"""``robojudge train export``: the exported request is the judge's own, splits keep clips whole."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _train_suite import GENERATORS, N_CLIPS, SOURCES

from robojudge.judges import (
    FrameLoader,
    FrameSpec,
    JudgeEngine,
    ResponseCache,
    chat_messages,
    get_rubric,
    make_judge,
    parse_reply,
    shown_rate,
    thinned,
)
from robojudge.judges._mock import MockBackend
from robojudge.suite import CHECKLIST_ITEMS, Item, load_suite
from robojudge.train import ExportError, assign_splits, export_training_data, read_frames, target_reply


def _records(folder: Path) -> list[dict[str, Any]]:
    out = []
    for split in ("train", "val", "test"):
        path = folder / f"{split}.jsonl"
        if path.exists():
            out += [json.loads(line) for line in path.read_text().splitlines()]
    return out


def _sent_request(item: Any, rubric_id: str, judge: Any, spec: FrameSpec, tmp: Path) -> Any:
    """The request the judge engine actually hands its backend for ``item`` (mock backend)."""
    rubric = get_rubric(rubric_id)
    backend = MockBackend(judge, script=lambda r: f'{{"{rubric.score_key}": 3}}')
    with ResponseCache(tmp) as cache:
        engine = JudgeEngine(judge, backend, cache)
        loader = FrameLoader(item.video, spec, cache)
        result = asyncio.run(engine.judge(rubric, item.instruction, loader))
    assert result.status == "ok" and len(backend.requests) == 1
    return backend.requests[0]


# 6 frames at 4 fps sampled at 8 fps, at most 5: five frames spread from 0 to 1.25 s, 3.2 fps; thinned
# to 4, three steps over the same 1.25 s, 2.4 fps
RATES = {32: 3.2, 4: 2.4}


@pytest.mark.parametrize("max_images", [32, 4])
def test_exported_request_is_what_the_judge_sends(
    labelled_suite: Path, tmp_path: Path, max_images: int
) -> None:
    judge = make_judge({"name": "j", "backend": "mock", "replies": ["x"], "max_images": max_images})
    spec = FrameSpec(fps=8.0, max_frames=5)  # the source videos have 6 frames at 4 fps
    out = tmp_path / "export"
    export_training_data(labelled_suite, ["pa", "ia"], out, judge=judge, frames=spec)
    suite = load_suite(labelled_suite)
    records = _records(out)
    assert len(records) == 2 * len(suite.items) - 1  # the last item has no IA label
    for n, rec in enumerate(records[:3] + [r for r in records if r["rubric"] == "ia"][-2:]):
        item = suite.by_id(rec["item_id"])
        sent = _sent_request(item, rec["rubric"], judge, spec, tmp_path / f"cache-{n}")
        frames = rec["frames"]
        image = frames[0] if rec["rubric"] == "ia" else None
        assert rec["prompt"] == chat_messages(sent, video=frames, image=image)
        shown = thinned(sent.frames.frames, max_images)
        assert len(frames) == len(shown) == min(5, max_images)
        assert np.array_equal(read_frames([out / f for f in frames]), shown)  # PNG: the judge's own pixels
        # the rate the hf judge tells its processor for these frames, so SFT places them in time alike
        assert rec["fps"] == pytest.approx(shown_rate(sent.frames, max_images)) == RATES[max_images]
        reply = rec["completion"][0]["content"][0]["text"]
        parsed = parse_reply(reply, get_rubric(rec["rubric"]))
        assert parsed.score == rec["score"]
        labels = item.labels
        assert labels is not None and rec["score"] == getattr(labels, rec["rubric"])
        assert parsed.reasoning == labels.evidence  # evidence notes become the reasoning, or nothing


def test_target_reply_without_evidence_holds_the_score_alone() -> None:
    pa = get_rubric("pa")
    assert json.loads(target_reply(pa, 4)) == {"physical_adherence": 4}
    assert json.loads(target_reply(pa, 2, " slips ")) == {"reasoning": "slips", "physical_adherence": 2}


def test_no_clip_spans_two_splits_and_sources_are_stratified(labelled_suite: Path) -> None:
    items = load_suite(labelled_suite).items
    for seed in range(5):
        split = assign_splits(items, {"train": 0.5, "val": 0.25, "test": 0.25}, seed)
        by_clip: dict[str, set[str]] = {}
        for it in items:
            by_clip.setdefault(str(it.clip_id), set()).add(split[it.item_id])
        assert all(len(s) == 1 for s in by_clip.values())
        # 4 clips per source cut 2/1/1 in each source
        for source in SOURCES:
            clips = Counter(next(iter(by_clip[str(it.clip_id)])) for it in items
                            if it.source == source and it.generator == GENERATORS[0])
            assert clips == {"train": 2, "val": 1, "test": 1}
    halves = {"train": 0.5, "val": 0.5}
    assert assign_splits(items, halves, 3) == assign_splits(items, halves, 3)
    with pytest.raises(ValueError, match="sum to 1"):
        assign_splits(items, {"train": 0.5, "val": 0.4})


def test_adding_clips_moves_at_most_one_clip_per_boundary() -> None:
    # A shuffle of the whole list moved about half of the clips whenever one was added.
    def items(n: int) -> list[Item]:
        return [Item(item_id=f"c{k}-g", video=f"c{k}.mp4", clip_id=f"c{k}", source="s") for k in range(n)]

    fractions = {"train": 0.6, "val": 0.2, "test": 0.2}
    for seed in range(3):
        before = assign_splits(items(40), fractions, seed)
        for n in (41, 45):
            after = assign_splits(items(n), fractions, seed)
            moved = [k for k, v in before.items() if after[k] != v]
            assert len(moved) <= 2 * (n - 40), (seed, n, moved)  # two boundaries, each new clip
    assert assign_splits(items(40), fractions, 0) != assign_splits(items(40), fractions, 1)


def test_dataset_card_counts_match_the_records(labelled_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    summary = export_training_data(labelled_suite, ["pa", "ia"], out,
                                   fractions={"train": 0.75, "val": 0.25})
    records = _records(out)
    split = assign_splits(load_suite(labelled_suite).items, {"train": 0.75, "val": 0.25}, 0)
    val_clips = {item_id.split("-")[0] for item_id, s in split.items() if s == "val"}
    assert len(val_clips) == 2  # one of the four clips of each source
    n_val = 8 - ("c7" in val_clips)  # c7-gen_b has no IA label
    assert summary.records == {"train": 31 - n_val, "val": n_val, "test": 0}
    assert {r["split"] for r in records} == {"train", "val"}
    assert summary.skipped == {"pa": 0, "ia": 1}
    card = (out / "README.md").read_text()
    for split in ("train", "val"):
        mine = [r for r in records if r["split"] == split]
        assert f"| {split} | {len(mine)} |" in card
    per_source = Counter(r["source"] for r in records)
    per_gen = Counter(r["generator"] for r in records)
    assert sum(per_source.values()) == 2 * 2 * N_CLIPS - 1 and set(per_gen) == set(GENERATORS)
    lines = card.splitlines()
    for source, n in per_source.items():
        row = next(line for line in lines if line.startswith(f"| {source} |"))
        assert sum(int(c) for c in row.strip("|").split("|")[1:]) == n
    pa5 = sum(1 for r in records if r["rubric"] == "pa" and r["score"] == 5)
    row = next(line for line in lines if line.startswith("| pa=5 |"))
    assert sum(int(c) for c in row.strip("|").split("|")[1:]) == pa5


def test_dataset_card_keeps_odd_generator_names_as_text(labelled_suite: Path, tmp_path: Path) -> None:
    # A generator folder 'wan|v2' split its row; '<i>cosmos' was passed through as HTML.
    records = [json.loads(line) for line in labelled_suite.read_text().splitlines()]
    renamed = {GENERATORS[0]: "wan|v2", GENERATORS[1]: "<i>cosmos"}
    for r in records:
        r["generator"] = renamed[r["generator"]]
    records[0]["item_id"] = "<img src=x onerror=alert(1)>"  # quoted by a note: no clip_id
    records[0].pop("clip_id", None)
    labelled_suite.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "export"
    export_training_data(labelled_suite, ["pa"], out, fractions={"train": 1.0})
    card = (out / "README.md").read_text()
    assert "| wan\\|v2 | " in card and "| &lt;i&gt;cosmos | " in card and "<i>" not in card
    assert "&lt;img src=x" in card and "<img" not in card


@pytest.mark.parametrize("fmt", ["sharegpt", "llamafactory"])
def test_sharegpt_records_place_media_markers(labelled_suite: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / fmt
    export_training_data(labelled_suite, ["pa", "ia"], out, fmt=fmt, fractions={"train": 0.75, "val": 0.25})
    records = _records(out)
    for rec in records:
        human = rec["conversations"][0]["value"]
        assert human.count("<video>") == len(rec["videos"]) == 1
        assert human.count("<image>") == len(rec["images"]) == (1 if rec["rubric"] == "ia" else 0)
        assert all((out / f).is_file() for f in rec["videos"][0])
        assert rec["system"] == get_rubric(rec["rubric"]).render("x")[0]
        assert parse_reply(rec["conversations"][1]["value"], get_rubric(rec["rubric"])).score == rec["score"]
    info = out / "dataset_info.json"
    assert info.exists() == (fmt == "llamafactory")
    if fmt == "llamafactory":
        described = json.loads(info.read_text())
        assert {d["file_name"] for d in described.values()} == {"train.jsonl", "val.jsonl"}


def test_bad_input_names_the_item_and_field(tmp_path: Path, labelled_suite: Path) -> None:
    lines = labelled_suite.read_text().splitlines()
    row = json.loads(lines[0])
    row.pop("instruction")
    labelled_suite.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    with pytest.raises(ExportError, match=r"item 'c0-gen_a', field instruction"):
        export_training_data(labelled_suite, ["ia"], tmp_path / "o")
    export_training_data(labelled_suite, ["pa"], tmp_path / "o")  # PA needs no instruction
    with pytest.raises(ExportError, match="only score rubrics"):
        export_training_data(labelled_suite, ["caption"], tmp_path / "o")
    with pytest.raises(ExportError, match="pa and ia only"):
        export_training_data(labelled_suite, ["pla_physical_commonsense"], tmp_path / "o")
    with pytest.raises(ExportError, match="unknown format"):
        export_training_data(labelled_suite, ["pa"], tmp_path / "o", fmt="alpaca")


def test_reexport_leaves_no_stale_frames(labelled_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    export_training_data(labelled_suite, ["pa"], out, frames=FrameSpec(fps=8.0, max_frames=5))
    export_training_data(labelled_suite, ["pa"], out, frames=FrameSpec(fps=8.0, max_frames=3))
    rec = _records(out)[0]
    folder = (out / rec["frames"][0]).parent
    assert len(rec["frames"]) == 3
    assert sorted(p.name for p in folder.iterdir()) == ["0000.png", "0001.png", "0002.png"]


def test_a_failed_reexport_leaves_the_earlier_export_whole(labelled_suite: Path, tmp_path: Path) -> None:
    # The export is written aside and moved in at the end: records never point at frames a failed
    # rerun deleted or overwrote, and export.json keeps describing the records.
    out = tmp_path / "export"
    export_training_data(labelled_suite, ["pa"], out, frames=FrameSpec(fps=8.0, max_frames=4))
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    rows = [json.loads(line) for line in labelled_suite.read_text().splitlines()]
    broken = labelled_suite.parent / rows[-1]["video"]
    broken.write_bytes(b"not a video")  # the last item fails, after the others are written
    with pytest.raises(ExportError, match=rf"item {rows[-1]['item_id']!r}, field video"):
        export_training_data(labelled_suite, ["pa"], out, frames=FrameSpec(fps=8.0, max_frames=2))
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # nothing of the failed run, nothing of the earlier one lost
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    for rec in _records(out):
        assert all((out / f).is_file() for f in rec["frames"])
    fresh = tmp_path / "fresh"
    with pytest.raises(ExportError):
        export_training_data(labelled_suite, ["pa"], fresh)
    assert not fresh.exists()  # a folder the failed export created is removed again


def test_an_unknown_rubric_is_an_export_error(labelled_suite: Path, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="unknown rubric 'vqa'"):
        export_training_data(labelled_suite, ["pa", "vqa"], tmp_path / "o")
    assert not (tmp_path / "o").exists()


_PA_CHECKS, _IA_CHECKS = CHECKLIST_ITEMS[:3], CHECKLIST_ITEMS[3:]  # App. A.1: the first three inform PA


def test_an_annotation_project_exports_its_final_labels(labelled_suite: Path, tmp_path: Path) -> None:
    """``--labels DB --project P``: records carry the labels annotators submitted in the app's database."""
    pytest.importorskip("argon2")
    from robojudge.annotate import AnnotationService, LabelValues, add_annotator, assign, init_project

    db = tmp_path / "ann.sqlite"
    init_project(labelled_suite, db, "p", seed=3)
    add_annotator(db, "ann", "annotator", password="correct horse")
    assign(db, "p", ["ann"])
    given = []
    with AnnotationService(db) as svc:
        who = svc.authenticate("ann", "correct horse")
        for k, entry in enumerate(svc.queue(who)[:5]):  # five items labelled, the rest left alone
            page = svc.task(who, entry.assignment_id)
            pa, ia = 1 + k % 5, 5 - k % 3
            first = {"pa": pa, **{f"checklist.{c}": 1 for c in _PA_CHECKS}}
            svc.save_draft(who, entry.assignment_id, LabelValues.from_form(first), page.version)
            page = svc.reveal_instruction(who, entry.assignment_id)
            full = {**first, "ia": ia, **{f"checklist.{c}": 2 for c in _IA_CHECKS}}
            svc.submit(who, entry.assignment_id, LabelValues.from_form(full), page.version)
            given.append((pa, ia))
    summary = export_training_data(db, ["pa", "ia"], tmp_path / "out", project="p")
    records = _records(summary.out)
    assert len(records) == 10  # five items, two rubrics each
    scores: dict[str, dict[str, int]] = {}
    for rec in records:
        scores.setdefault(rec["item_id"], {})[rec["rubric"]] = rec["score"]
    # The annotator saw opaque ids only: the labels are matched back to suite items through the export.
    assert sorted((v["pa"], v["ia"]) for v in scores.values()) == sorted(given)
    suite = load_suite(labelled_suite)
    labelled_ids = set(scores)
    assert labelled_ids <= {it.item_id for it in suite.items}
    manifest = {it.item_id: it for it in load_suite(summary.out / "labels.jsonl").items}
    for item_id, v in scores.items():
        labels = manifest[item_id].labels
        assert labels is not None and (labels.pa, labels.ia) == (v["pa"], v["ia"])
    with pytest.raises(ExportError, match="project 'nope'"):
        export_training_data(db, ["pa"], tmp_path / "out2", project="nope")
    # a labels.jsonl of the user's own in --out is refused (the export would replace it), and an
    # earlier project export's own is replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "labels.jsonl").write_text('{"my": "labels"}\n')
    with pytest.raises(ExportError, match=r"holds labels\.jsonl that no robojudge export wrote"):
        export_training_data(db, ["pa"], mine, project="p")
    assert (mine / "labels.jsonl").read_text() == '{"my": "labels"}\n'
    assert export_training_data(db, ["pa", "ia"], tmp_path / "out", project="p").records == summary.records


def test_items_awaiting_adjudication_are_named_as_such(labelled_suite: Path, tmp_path: Path) -> None:
    """Items whose cross-review is 2+ points off the primary label leave the final labels. A project
    where that held for every label was said to have 'no submitted label yet', and a partly disputed
    one listed its disputed items as lacking 'that rubric's score'."""
    pytest.importorskip("argon2")
    from robojudge.annotate import add_annotator, import_labelstudio, init_project

    db = tmp_path / "ann.sqlite"
    init_project(labelled_suite, db, "p", seed=3)
    add_annotator(db, "alice", "annotator", password="correct horse")
    add_annotator(db, "carol", "reviewer", password="correct horse")
    ids = [it.item_id for it in load_suite(labelled_suite).items]

    def ann(rater: str, kind: str, pa: int, ia: int) -> dict[str, Any]:
        result = [{"from_name": axis, "value": {"rating": v}} for axis, v in (("pa", pa), ("ia", ia))]
        return {"meta": {"robojudge_rater": rater, "robojudge_kind": kind}, "result": result}

    def given(reviews: list[tuple[int, int]], name: str) -> Path:
        tasks = [{"data": {"item_id": ids[k]}, "annotations": [ann("alice", "label", 3, 3),
                                                                 ann("carol", "review", pa, ia)]}
                 for k, (pa, ia) in enumerate(reviews)]
        path = tmp_path / name
        path.write_text(json.dumps(tasks))
        return path

    import_labelstudio(db, "p", given([(5, 3), (1, 3)], "all.json"))  # both 2 points off on PA
    with pytest.raises(ExportError, match=r"project 'p' has no final label yet: 2 item\(s\) await an "
                                          r"adjudication \(a cross-review 2 points or more off the primary "
                                          r"label on PA or IA\); assign adjudications"):
        export_training_data(db, ["pa", "ia"], tmp_path / "out", project="p")
    import_labelstudio(db, "p", given([(5, 3), (1, 3), (3, 4)], "more.json"))  # a third item, agreed
    summary = export_training_data(db, ["pa", "ia"], tmp_path / "out", project="p")
    assert sum(summary.records.values()) == 2 and sorted(summary.disputed) == sorted(ids[:2])
    assert any(n.startswith("2 item(s) left out, they await an adjudication (a cross-review 2 points or "
                            "more off the primary label on PA or IA; first: ") for n in summary.notes)
    assert not set(ids[:2]) & set(summary.left_out["pa"]) and summary.skipped["pa"] == len(ids) - 3
    assert "they await an adjudication" in (summary.out / "README.md").read_text()


def test_an_annotation_database_is_named_without_its_password(tmp_path: Path) -> None:
    db = "postgresql://rj:s3cretpw@127.0.0.1:1/labels?connect_timeout=5&sslpassword=k3ypw"
    with pytest.raises(ExportError) as info:
        export_training_data(db, ["pa"], tmp_path / "out", project="p")
    # Before, the message began with the URL as given, password and all.
    said = str(info.value)
    assert said.startswith("postgresql://rj:***@127.0.0.1:1/labels?connect_timeout=5&sslpassword=***: ")
    assert "s3cretpw" not in said and "k3ypw" not in said


def test_records_holding_unicode_line_separators_read_back(tmp_path: Path) -> None:
    # An instruction with U+2028 (which the manifest accepts) was exported as it is (UTF-8 JSON), and
    # load_records' str.splitlines() cut its record in two: "train.jsonl, line 2: not JSON", so
    # `train sft` and `train grpo` could not start on robojudge's own export.
    from _train_suite import write_labelled_suite

    from robojudge.train._trl import TrainingError, load_records

    manifest = write_labelled_suite(tmp_path / "suite")
    rows = [json.loads(line) for line in manifest.read_text().split("\n") if line]
    for row in rows:
        row["instruction"] = row["instruction"] + ".\u2028Then close\u0085the drawer\u2029."
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    data = tmp_path / "data"
    export_training_data(manifest, ["ia"], data, frames=FrameSpec(max_frames=2))
    raw = (data / "train.jsonl").read_text(encoding="utf-8")
    assert "\u2028" in raw  # written as it is, not escaped
    records = load_records(data)
    assert len(records) == raw.count("\n") > 1
    assert all("\u2028Then close\u0085the drawer\u2029." in json.dumps(r["prompt"], ensure_ascii=False)
               for r in records)
    lines = raw.split("\n")
    lines[2] = "{not json"
    (data / "train.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(TrainingError, match=r"train\.jsonl, line 3: not JSON"):
        load_records(data)
