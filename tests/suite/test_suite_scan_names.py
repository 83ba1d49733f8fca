"""``robojudge suite scan``: linked folders, item ids that stay unique and stable, instruction sources
that must agree, and names the scanner cannot use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _scan_files import touch
from typer.testing import CliRunner

from robojudge.cli._suite import app
from robojudge.suite import scan_folder, write_manifest

runner = CliRunner()



def _ids(result_or_path: object) -> list[str]:
    if isinstance(result_or_path, Path):
        return [json.loads(line)["item_id"] for line in result_or_path.read_text().splitlines()]
    return [it["item_id"] for it in result_or_path.items]  # type: ignore[attr-defined]


def test_linked_folders_are_scanned_once_and_loops_not_followed(tmp_path: Path) -> None:
    store, root = tmp_path / "store", tmp_path / "videos"
    touch(store, "wan_out/ep1.mp4", "wan_out/sub/ep2.mp4", "frames_out/0001.png", "frames_out/0002.png")
    touch(root, "cosmos/ep1.mp4")
    (root / "wan").symlink_to(store / "wan_out")
    (root / "wan_again").symlink_to(store / "wan_out")  # the same folder by a second link
    (root / "cosmos" / "loop").symlink_to("..")  # back up the tree
    (root / "cosmos" / "self").symlink_to(root / "cosmos")
    (root / "cosmos" / "ep3").symlink_to(store / "frames_out")  # a linked frame folder
    (root / "gone.mp4").symlink_to(tmp_path / "nowhere.mp4")  # dangling: listed, validation reports it
    result = scan_folder(root, frame_folders=True)
    assert _ids(result) == ["cosmos/ep1", "cosmos/ep3", "gone", "wan/ep1", "wan/sub/ep2"]
    items = {it["item_id"]: it for it in result.items}
    assert items["wan/ep1"]["video"] == str(root / "wan/ep1.mp4")  # the path through the link
    assert items["wan/ep1"]["generator"] == "wan"
    assert items["cosmos/ep3"]["video"] == str(root / "cosmos/ep3")
    twice = [n for n in result.notes if "reached a second time" in n]
    assert twice == [
        "3 scanned folder(s) reached a second time through a symbolic link, not scanned again "
        "(first: cosmos/loop -> ..)"
    ]


def test_a_folder_inside_the_root_is_scanned_under_its_real_path(tmp_path: Path) -> None:
    touch(tmp_path / "v", "b/ep1.mp4")
    (tmp_path / "v" / "a").symlink_to(tmp_path / "v" / "b")  # sorts first, but is the link
    result = scan_folder(tmp_path / "v")
    assert _ids(result) == ["b/ep1"]
    assert any("(first: a -> " in n for n in result.notes), result.notes


def test_a_file_linked_into_another_generator_gets_a_note(tmp_path: Path) -> None:
    """Two items, one clip: it would be scored twice and stand for two generators; scan keeps both (a
    link may be meant) and says so, and `suite validate` warns of it."""
    touch(tmp_path / "v", "modelA/ep01.mp4", "modelA/ep02.mp4")
    (tmp_path / "v" / "modelB").mkdir()
    (tmp_path / "v" / "modelB" / "ep01.mp4").symlink_to("../modelA/ep01.mp4")
    result = scan_folder(tmp_path / "v")
    assert _ids(result) == ["modelA/ep01", "modelA/ep02", "modelB/ep01"]
    same = [n for n in result.notes if "same file" in n]
    assert same == ["1 video(s) are the same file as another, through a link (first: modelB/ep01.mp4 = "
                    "modelA/ep01.mp4): each is an item, so the clip is scored and counted twice; remove "
                    "the link if it is not meant"]


def test_cli_scan_follows_a_linked_generator_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "store/wan_out/ep1.mp4", "videos/cosmos/ep1.mp4")
    (tmp_path / "videos" / "wan").symlink_to(tmp_path / "store" / "wan_out")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["scan", "videos"])
    assert done.exit_code == 0, done.output
    assert "2 item(s), 1 clip(s); generators: cosmos 1, wan 1" in done.stdout


def test_ids_never_collide_and_no_video_is_dropped(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(root, "g/ep01.mp4", "g/ep01.mkv", "g/ep01.mp4.mp4", "g/ep02.mp4")
    (root / "g/ep01.mp4.txt").write_text("open the drawer")
    result = scan_folder(root)
    assert _ids(result) == ["g/ep01.mkv", "g/ep01.mp4", "g/ep01.mp4.mp4", "g/ep02"]
    out = tmp_path / "v.jsonl"
    write_manifest(result, out)
    assert _ids(out) == _ids(result)
    assert not any("left out" in n for n in result.notes), result.notes
    assert any(n.startswith("3 of 4 item(s) have no instruction") for n in result.notes), result.notes


def test_a_file_without_a_view_beside_views_is_an_item_of_its_own(tmp_path: Path) -> None:
    touch(tmp_path, "wan/ep07_front.mp4", "wan/ep07_wrist.mp4", "wan/ep07.mp4")
    pattern = r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)(?:_(?P<view>front|wrist))?"
    result = scan_folder(tmp_path, pattern=pattern)
    items = {it["item_id"]: it for it in result.items}
    assert set(items) == {"wan/ep07", "wan/ep07.mp4"}
    assert "views" in items["wan/ep07"] and items["wan/ep07.mp4"]["video"] == str(tmp_path / "wan/ep07.mp4")


def test_a_note_names_the_video_an_invalid_record_costs(tmp_path: Path) -> None:
    touch(tmp_path / "v", "group:x.mp4", "m/ep01.mp4")
    result = scan_folder(tmp_path / "v")
    write_manifest(result, tmp_path / "s.jsonl")
    note = next(n for n in result.notes if "left out" in n)
    assert f"item 'group:x', video {tmp_path / 'v' / 'group:x.mp4'}, field item_id" in note
    # The count of items without an instruction is of the items written.
    assert any(n.startswith("1 of 1 item(s) have no instruction") for n in result.notes), result.notes


def test_rescan_keeps_the_ids_the_replaced_manifest_gave(tmp_path: Path) -> None:
    root, out = tmp_path / "v", tmp_path / "v.jsonl"
    touch(root, "g/b.mp4", "g/c.mp4")
    write_manifest(scan_folder(root), out)
    assert _ids(out) == ["g/b", "g/c"]
    touch(root, "g/b.webm")
    # Fresh, the two b's keep their suffixes; replacing the manifest, the old video keeps its id.
    assert _ids(scan_folder(root)) == ["g/b.mp4", "g/b.webm", "g/c"]
    result = scan_folder(root)
    write_manifest(result, out, force=True)
    assert _ids(out) == ["g/b", "g/b.webm", "g/c"]
    assert json.loads(out.read_text().splitlines()[0])["video"] == "v/g/b.mp4"
    assert any("kept from the manifest being replaced" in n and "'g/b', fresh 'g/b.mp4'" in n
               for n in result.notes), result.notes
    # Given the manifest to replace, the scan itself uses those ids (tables keyed by item id match).
    table = tmp_path / "prompts.csv"
    table.write_text("item_id,instruction\ng/b,push the box\n")
    result = scan_folder(root, previous=out, instructions=table)
    assert {it["item_id"]: it.get("instruction") for it in result.items}["g/b"] == "push the box"
    assert result.instruction_sources["g/b"] == f"{table}:2"


def test_rescan_keeps_ids_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "v/g/b.mp4")
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["scan", "v"]).exit_code == 0
    touch(tmp_path, "v/g/b.webm")
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 0, done.output
    assert _ids(tmp_path / "v.jsonl") == ["g/b", "g/b.webm"]


def test_rescan_keeps_the_fields_added_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`scan --force` kept a renamed id but dropped the instruction, embodiment and labels a user had
    added to the manifest, without a note. They are kept on the items of the same video now; what the
    scan finds (its fields, a sidecar instruction) wins, and a new video gets only what the scan finds."""
    root, out = tmp_path / "v", tmp_path / "v.jsonl"
    touch(root, "g/a.mp4", "g/b.mp4")
    (root / "g" / "a.txt").write_text("pick up the cup\n")
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["scan", "v"]).exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0].update(item_id="g/a-custom", instruction="edited by hand", labels={"pa": 4})
    rows[1].update(instruction="open the drawer", embodiment="gripper", labels={"pa": 4})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    touch(root, "g/c.mp4")
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 0, done.output
    got = {r["item_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(got) == {"g/a-custom", "g/b", "g/c"}
    assert got["g/a-custom"]["instruction"] == "pick up the cup"  # the sidecar, as the scan reads it now
    assert got["g/a-custom"]["labels"] == {"pa": 4}
    assert {k: got["g/b"][k] for k in ("instruction", "embodiment", "labels")} == {
        "instruction": "open the drawer", "embodiment": "gripper", "labels": {"pa": 4}}
    assert set(got["g/c"]) == {"item_id", "video", "generator", "clip_id"}
    said = " ".join(done.output.split())
    assert "fields of 2 item(s) that were added to it (embodiment (1), instruction (1), labels (2))" in said
    # Paths added by hand stay relative to the folder, and are not taken for paths outside it; one that
    # no longer validates (its file moved away) costs itself, not the item and its other fields.
    touch(tmp_path, "refs/b.mp4", "refs/c.mp4")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for r in rows:
        if r["item_id"] in ("g/b", "g/c"):
            r["reference_video"] = f"refs/{r['item_id'][-1]}.mp4"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "refs" / "c.mp4").unlink()
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 0, done.output
    got = {r["item_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(got) == {"g/a-custom", "g/b", "g/c"}
    assert got["g/b"]["reference_video"] == "refs/b.mp4" and "reference_video" not in got["g/c"]
    said = " ".join(done.output.split())
    assert "written absolute" not in said
    assert "1 field(s) of 1 item(s) kept from" in said and "left out, they no longer validate (first: item " \
        "'g/c' field reference_video: file not found" in said


def test_a_rescan_with_labels_merges_them_field_by_field(tmp_path: Path) -> None:
    """A second `--labels` pass replaced each matched item's whole labels: the PA of a first pass, the
    checklist and evidence added by hand were gone, and no note said so. The table's fields now win
    field by field over the old manifest's, and a different value it replaces is counted."""
    root, out = tmp_path / "v", tmp_path / "v.jsonl"
    touch(root, "g/a.mp4", "g/b.mp4")
    (tmp_path / "pa.csv").write_text("video,pa,rater\ng/a.mp4,4,alice\ng/b.mp4,2,alice\n")
    write_manifest(scan_folder(root, labels=tmp_path / "pa.csv"), out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[1]["labels"] |= {"checklist": {"goal_completion": 1, "agent_match": 2}, "evidence": "hand note"}
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "ia.csv").write_text(
        "video,ia,rater,goal_completion\ng/a.mp4,5,alice,\ng/b.mp4,3,bob,2\n")
    result = scan_folder(root, labels=tmp_path / "ia.csv", previous=out)
    write_manifest(result, out, force=True)
    got = {r["item_id"]: r["labels"] for r in map(json.loads, out.read_text().splitlines())}
    assert got == {
        "g/a": {"pa": 4, "ia": 5, "rater": "alice"},
        "g/b": {"pa": 2, "ia": 3, "checklist": {"agent_match": 2, "goal_completion": 2},
                "evidence": "hand note", "rater": "bob"},
    }
    said = " ".join(result.notes)
    assert "labels of 2 item(s) merged field by field with those in" in said
    assert "giving no value for: checklist.agent_match (1), evidence (1), pa (2)" in said
    assert "2 label value(s) in" in said and "replaced by a different value from the labels table: " \
        "checklist.goal_completion (1), rater (1) (first: item 'g/b' checklist.goal_completion 1 -> 2)" \
        in said
    # Old labels that no longer validate (edited out of range) are not merged: the table's are written.
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["labels"]["pa"] = 9
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = scan_folder(root, labels=tmp_path / "ia.csv", previous=out)
    write_manifest(result, out, force=True)
    assert json.loads(out.read_text().splitlines()[0])["labels"] == {"ia": 5, "rater": "alice"}
    assert any("labels of 1 item(s) in" in n and "not merged, they do not validate; the labels table's "
               "alone are written (first: item 'g/a')" in n for n in result.notes), result.notes


def test_an_id_that_must_change_is_noted(tmp_path: Path) -> None:
    root, out = tmp_path / "v", tmp_path / "v.jsonl"
    touch(root, "g/a.mp4", "g/b.mp4")
    # A hand-made manifest gave both videos one id: one of them keeps it, the other's change is said.
    out.write_text(
        '{"item_id": "x", "video": "v/g/a.mp4"}\n{"item_id": "x", "video": "v/g/b.mp4"}\n'
    )
    result = scan_folder(root)
    write_manifest(result, out, force=True)
    assert _ids(out) == ["g/b", "x"]
    assert any("1 item id(s) of the manifest being replaced change" in n and "'x' is now 'g/b'" in n
               for n in result.notes), result.notes


def test_conflicting_instruction_rows_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(root, "a/ep01.mp4", "b/ep01.mp4")
    table = tmp_path / "prompts.csv"
    table.write_text("video,instruction\na/ep01.mp4,open the drawer\na/ep01,close the drawer\n")
    with pytest.raises(ValueError, match=r"prompts.csv:3: item 'a/ep01' already has an instruction from "
                       r".*prompts.csv:2 \('open the drawer', here 'close the drawer'\)"):
        scan_folder(root, instructions=table)
    table.write_text("clip_id,instruction\nep01,wipe\nep01,wipe it\n")
    with pytest.raises(ValueError, match=r"prompts.csv:3: clip 'ep01' already has an instruction from"):
        scan_folder(root, instructions=table)
    # Identical rows pass, and a row for the item still wins over its clip's.
    table.write_text("clip_id,item_id,instruction\nep01,,wipe\nep01,,wipe\n,a/ep01,dry\n,a/ep01,dry\n")
    items = {it["item_id"]: it["instruction"] for it in scan_folder(root, instructions=table).items}
    assert items == {"a/ep01": "dry", "b/ep01": "wipe"}
    mapping = tmp_path / "prompts.json"
    mapping.write_text('{"a/ep01": "dry", "a/ep01": "wet"}')
    with pytest.raises(ValueError, match="key 'a/ep01' is given twice, with different instructions"):
        scan_folder(root, instructions=mapping)


def test_a_video_path_without_suffix_that_names_two_videos_is_refused(tmp_path: Path) -> None:
    touch(tmp_path / "v", "a/ep01.mp4", "a/ep01.webm")
    table = tmp_path / "prompts.csv"
    table.write_text("video,instruction\na/ep01,wipe\n")
    with pytest.raises(ValueError, match=r"prompts.csv:2: video 'a/ep01' names several videos \(ep01.mp4, "):
        scan_folder(tmp_path / "v", instructions=table)


def test_a_main_view_no_item_has_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "pv/wan/ep1_front.mp4", "pv/wan/ep1_wrist.mp4")
    monkeypatch.chdir(tmp_path)
    pattern = r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)_(?P<view>front|wrist)"
    done = runner.invoke(app, ["scan", "pv", "--pattern", pattern, "--main-view", "top"])
    assert done.exit_code == 2
    assert "error: --main-view 'top' is not a view of any item (views found: front, wrist)" in done.stderr
    with pytest.raises(ValueError, match="--main-view 'front' needs a --pattern with a group named view"):
        scan_folder(tmp_path / "pv", main_view="front")


def test_sidecar_text_files_bom_and_suffix_case(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(root, "g/ep1.mp4", "g/ep2.mp4", "g/ep3.mp4", "g/ep4/0001.png")
    (root / "g/ep1.txt").write_bytes(b"\xef\xbb\xbfopen drawer\n")
    (root / "g/ep2.TXT").write_text("close drawer")
    (root / "g/ep4.Txt").write_text("push")
    items = {it["item_id"]: it.get("instruction") for it in scan_folder(root, frame_folders=True).items}
    assert items == {"g/ep1": "open drawer", "g/ep2": "close drawer", "g/ep3": None, "g/ep4": "push"}
    (root / "g/ep3.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match=r"ep3.txt:1: not valid UTF-8"):
        scan_folder(root)
    (root / "g/ep3.txt").unlink()
    (root / "g/ep2.txt").write_text("close the drawer")
    with pytest.raises(ValueError, match=r"are both instruction files of .*ep2.mp4; keep one"):
        scan_folder(root)


def test_a_name_with_a_control_character_is_noted_not_blamed_on_the_pattern(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (a right-to-left override showed the rest of each table row reversed; it is left out too)
    touch(tmp_path, "v/g/ok.mp4", "v/g/new\nline.mp4", "v/g/tab\there.mp4", "v/g/rlo\u202emp4.mp4")
    result = scan_folder(tmp_path / "v")
    assert _ids(result) == ["g/ok"] and result.skipped == []
    assert "3 video(s) left out, their names hold control characters or bidirectional controls (first: " \
        "'g/new\\nline.mp4'); rename them" in result.notes
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["scan", "v"])
    assert done.exit_code == 0, done.output
    assert "--pattern" not in done.stderr and "'g/new\\nline.mp4'" in done.stderr


def test_a_nested_path_longer_than_a_name_is_an_item(tmp_path: Path) -> None:
    # The scan makes the clip id of the whole path below the generator folder; the 200-byte name limit
    # refused one in a 234-byte folder, and the scan wrote the other video only (a note, exit status 0).
    deep = "modelA/" + "d" * 234 + "/sub/clip_0001.mp4"
    touch(tmp_path / "v", deep, "modelA/short.mp4")
    result = scan_folder(tmp_path / "v")
    write_manifest(result, tmp_path / "s.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert [r["clip_id"] for r in rows] == ["d" * 234 + "/sub/clip_0001", "short"]
    assert not any("left out" in n for n in result.notes), result.notes


def test_rescan_never_drops_a_labelled_item_whose_video_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `scan --force` rewrote a labelled manifest without the item it could not write (a clip id over the
    # limit): its ratings and evidence were gone, with a note that they had been kept.
    deep = "g/" + "/".join(c * 250 for c in "pqrs") + "/ep.mp4"  # a clip id of 1,006 bytes
    touch(tmp_path / "v", deep, "g/ok.mp4", "g/tab\there.mp4")
    out = tmp_path / "v.jsonl"
    labels = {"pa": 4, "ia": 2, "rater": "ann", "evidence": "the cup slides at 2 s"}
    rows = [{"item_id": "deep", "video": "v/" + deep, "clip_id": "deep", "labels": labels},
            {"item_id": "g/ok", "video": "v/g/ok.mp4", "generator": "g", "clip_id": "ok"}]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = out.read_text()
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert f"{out.name}: not replaced, the new manifest would leave out item 'deep', whose labels it " \
           "holds, while the video is still there" in said
    assert "field clip_id: clip_id is 1,006 bytes long in UTF-8; at most 1,000 are allowed" in said
    assert out.read_text() == before
    # a video the scan itself leaves out (a tab in its name) is refused alike
    rows[0].update(video="v/g/tab\there.mp4")
    (tmp_path / "v" / deep).unlink()
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 2 and "its path holds a control character" in " ".join(done.output.split())
    # without labels, the item goes as before (with the scan's note)
    rows[0].pop("labels")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = runner.invoke(app, ["scan", "v", "--force"])
    assert done.exit_code == 0, done.output
    assert _ids(out) == ["g/ok"]


def test_rescan_with_another_main_view_keeps_the_items_and_their_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `scan --force --main-view wrist` over a manifest scanned with `--main-view front` was refused: the
    # old rows were matched by their main video only, so the labelled items looked left out ("the scan
    # made no item of it") though the new manifest had them under the same id.
    touch(tmp_path / "out", "wan/ep07_front.mp4", "wan/ep07_wrist.mp4", "wan/ep08_front.mp4",
           "wan/ep08_wrist.mp4")
    (tmp_path / "pa.csv").write_text("item_id,pa\nwan/ep07,4\nwan/ep08,2\n")
    pattern = r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)_(?P<view>front|wrist)"
    monkeypatch.chdir(tmp_path)
    scan = ["scan", "out", "--pattern", pattern, "--out", "s.jsonl"]
    done = runner.invoke(app, [*scan, "--main-view", "front", "--labels", "pa.csv"])
    assert done.exit_code == 0, done.output
    out = tmp_path / "s.jsonl"
    # an id given by hand, and an instruction added by hand, are kept as well
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[1].update(item_id="mine", instruction="stack the cups")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = runner.invoke(app, [*scan, "--main-view", "wrist", "--force"])
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["item_id"], r["main_view"], r["video"], r["labels"]) for r in rows] == [
        ("mine", "wrist", "out/wan/ep08_wrist.mp4", {"pa": 2}),
        ("wan/ep07", "wrist", "out/wan/ep07_wrist.mp4", {"pa": 4}),
    ]
    assert rows[0]["instruction"] == "stack the cups"


def test_drop_labelled_narrows_a_labelled_manifest_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Narrowing a labelled manifest (a --pattern that drops a generator, a subfolder scanned alone) was
    # refused with no way to accept it, and with the advice to rename the video.
    touch(tmp_path / "vids", "wan/ep01.mp4", "cos/ep01.mp4", "cos/ep02.mp4")
    (tmp_path / "pa.csv").write_text("item_id,pa\nwan/ep01,4\ncos/ep01,2\ncos/ep02,5\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "suite.jsonl"
    done = runner.invoke(app, ["scan", "vids", "--out", "suite.jsonl", "--labels", "pa.csv"])
    assert done.exit_code == 0, done.output
    labelled = out.read_text()
    narrow = [
        (["vids", "--pattern", r"(?P<generator>wan)/(?P<clip_id>ep\d+)"], "the pattern does not match its "
         "path); to keep its labels scan with a folder and --pattern that take it in"),
        (["vids/wan", "--generator", "wan"], "it lies outside the scanned folder); to keep its labels scan "
         "with a folder and --pattern that take it in"),
    ]
    for args, why in narrow:
        out.write_text(labelled)
        done = runner.invoke(app, ["scan", *args, "--out", "suite.jsonl", "--force"])
        said = " ".join(done.output.split())
        assert done.exit_code == 2 and why in said, said
        assert "not replaced, the new manifest would leave out item 'cos/ep01' and 1 more, whose labels it " \
            "holds" in said
        assert "or write the scan to another --out and copy the labels over; to drop them with their " \
            "labels, pass --drop-labelled" in said
        assert out.read_text() == labelled
        done = runner.invoke(app, ["scan", *args, "--out", "suite.jsonl", "--force", "--drop-labelled"])
        assert done.exit_code == 0, done.output
        assert "2 labelled item(s) of suite.jsonl dropped with their labels, as --drop-labelled asked " \
            "(first: 'cos/ep01'" in " ".join(done.stderr.split())
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [(r["item_id"], r["labels"]) for r in rows] == [("wan/ep01", {"pa": 4})]
