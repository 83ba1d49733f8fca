"""``robojudge suite scan``: a manifest for a folder of videos, none of them renamed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _scan_files import by_id, touch
from typer.testing import CliRunner

from robojudge.cli import main
from robojudge.cli._suite import app
from robojudge.store import ResultStore
from robojudge.suite import ManifestError, load_suite, scan_folder, validate_manifest, write_manifest
from robojudge.video import write_video

runner = CliRunner()




def test_layout_gives_generator_clip_and_ids(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    touch(
        root, "modelB/ep01.mp4", "modelA/ep02.MP4", "modelA/ep01.mp4", "modelA/task1/ep07.webm",
        "alone.mov", "modelA/.hidden.mp4", ".cache/x.mp4", "modelA/notes.md", "modelA/ep01.txt",
    )  # fmt: skip
    result = scan_folder(root, fields={"generator": "misc", "embodiment": "gripper"})
    ids = [it["item_id"] for it in result.items]
    assert ids == ["alone", "modelA/ep01", "modelA/ep02", "modelA/task1/ep07", "modelB/ep01"]
    items = by_id(result.items)
    # The first folder is the generator; the rest of the path (the task's folder too) the clip.
    assert items["modelA/task1/ep07"]["generator"] == "modelA"
    assert items["modelA/task1/ep07"]["clip_id"] == "task1/ep07"
    assert items["modelB/ep01"]["clip_id"] == items["modelA/ep01"]["clip_id"] == "ep01"
    # A video directly in the folder takes --generator; nobody's generator is overwritten by it.
    assert items["alone"]["generator"] == "misc" and items["alone"]["clip_id"] == "alone"
    assert {it["embodiment"] for it in result.items} == {"gripper"}
    assert items["modelA/ep02"]["video"] == str(root / "modelA/ep02.MP4")
    assert result.counts()["generators"] == {"misc": 1, "modelA": 3, "modelB": 1}
    assert result.counts()["clips"] == 4


def test_files_differing_only_in_suffix_keep_it_in_their_ids(tmp_path: Path) -> None:
    touch(tmp_path, "m/ep01.mp4", "m/ep01.webm", "m/ep02.mp4")
    ids = [it["item_id"] for it in scan_folder(tmp_path).items]
    assert ids == ["m/ep01.mp4", "m/ep01.webm", "m/ep02"]


def test_other_video_containers_are_counted_in_a_note(tmp_path: Path) -> None:
    touch(tmp_path / "v", "g/a.mp4", "g/b.ts", "g/c.3gp", "g/d.M2TS", "g/notes.md", "g/.e.ts")
    result = scan_folder(tmp_path / "v")
    assert [it["item_id"] for it in result.items] == ["g/a"]
    (note,) = [n for n in result.notes if "other video containers" in n]
    assert note.startswith("3 scanned file(s) of other video containers left out "
                           "(first: g/b.ts; .3gp, .m2ts, .ts)")
    touch(tmp_path / "only", "g/b.ts")
    with pytest.raises(ValueError, match=r"no videos found .*1 scanned file\(s\) of other video containers"):
        write_manifest(scan_folder(tmp_path / "only"), tmp_path / "only.jsonl")


def test_ids_differing_only_in_unicode_composition_are_noted(tmp_path: Path) -> None:
    touch(tmp_path / "v", "g/caf\u00e9.mp4", "g/cafe\u0301.mp4", "g/other.mp4")
    result = scan_folder(tmp_path / "v")
    assert len(result.items) == 3  # two files, two items
    (note,) = [n for n in result.notes if "Unicode composition" in n]
    assert note.startswith("1 group(s) of items") and "caf\\xe9" in note


def test_tables_and_clips_match_whatever_the_unicode_composition(tmp_path: Path) -> None:
    # Folders copied from macOS (NFD) against a typed table (NFC): 2 clips made 4, and the instruction and
    # label rows matched no video
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    touch(tmp_path / "v", f"wan/{nfd}/ep00.mp4", f"cosmos/{nfc}/ep00.mp4")
    touch(tmp_path / "real", f"{nfd}/ep00.mp4")
    (tmp_path / "prompts.csv").write_text(f"clip_id,instruction\n{nfc}/ep00,pick it\n", encoding="utf-8")
    (tmp_path / "ratings.csv").write_text(  # a video path typed NFC, an item id copied NFD
        f"video,item_id,pa\nwan/{nfc}/ep00.mp4,,4\n,cosmos/{nfd}/ep00,2\n", encoding="utf-8")
    result = scan_folder(tmp_path / "v", instructions=tmp_path / "prompts.csv",
                         labels=tmp_path / "ratings.csv", references=tmp_path / "real")
    items = by_id(result.items)
    assert list(items) == [f"cosmos/{nfc}/ep00", f"wan/{nfd}/ep00"]  # ids as the paths give them
    assert [it["clip_id"] for it in items.values()] == [f"{nfc}/ep00"] * 2
    assert [it["instruction"] for it in items.values()] == ["pick it"] * 2
    assert [it["labels"]["pa"] for it in items.values()] == [2, 4]
    assert [it["reference_video"] for it in items.values()] == [str(tmp_path / "real" / nfd / "ep00.mp4")] * 2
    assert result.notes == [] and result.counts()["clips"] == 1


def test_pattern_groups_set_fields_and_misses_are_listed(tmp_path: Path) -> None:
    touch(tmp_path, "runs/ep07_seed3_cosmos.mp4", "runs/ep08_seed1_wan.mp4", "runs/readme_clip.mp4")
    result = scan_folder(
        tmp_path, pattern=r"runs/(?P<clip_id>ep\d+)_seed(?P<prompt_variant>\d)_(?P<generator>\w+)"
    )
    items = by_id(result.items)
    assert set(items) == {"runs/ep07_seed3_cosmos", "runs/ep08_seed1_wan"}
    assert items["runs/ep07_seed3_cosmos"] | {} == {
        "item_id": "runs/ep07_seed3_cosmos", "video": str(tmp_path / "runs/ep07_seed3_cosmos.mp4"),
        "clip_id": "ep07", "prompt_variant": "3", "generator": "cosmos",
    }  # fmt: skip
    assert result.skipped == ["runs/readme_clip.mp4"]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(?P<model>.+)", "pattern group(s) model name no field"), ("(unclosed", "does not compile")],
)
def test_bad_patterns_are_refused(tmp_path: Path, pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        scan_folder(tmp_path, pattern=pattern)


def test_bad_fields_and_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown embodiment 'robot'"):
        scan_folder(tmp_path, fields={"embodiment": "robot"})
    with pytest.raises(ValueError, match="field 'item_id' cannot be set"):
        scan_folder(tmp_path, fields={"item_id": "x"})
    with pytest.raises(ValueError, match="folder to scan .*nope does not exist"):
        scan_folder(tmp_path / "nope")
    with pytest.raises(ValueError, match="references folder .*gone does not exist"):
        scan_folder(tmp_path, references=tmp_path / "gone")


def test_references_match_by_clip_path_then_by_a_unique_name(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    touch(
        root, "a/ep01.mp4", "a/task1/ep02.mp4", "a/ep03.mp4", "a/ep04.mp4", "b/ep01.mp4",
        "real/ep01.mp4", "real/other/ep02.mp4", "real/x/ep03.mp4", "real/y/ep03.mp4", "real/ep99.mp4",
    )  # fmt: skip
    result = scan_folder(root, references=root / "real")
    items = by_id(result.items)
    # The reference folder inside the scanned one is not a generator.
    assert {it["generator"] for it in result.items} == {"a", "b"}
    assert (
        items["a/ep01"]["reference_video"]
        == items["b/ep01"]["reference_video"]
        == str(root / "real/ep01.mp4")
    )
    assert items["a/task1/ep02"]["reference_video"] == str(root / "real/other/ep02.mp4")  # by its name
    assert "reference_video" not in items["a/ep03"]  # two candidates named ep03: none is guessed
    assert "reference_video" not in items["a/ep04"]
    assert result.reference_count == 5
    assert "1 clip(s) have no reference video, none is taken (first: ep04)" in result.notes
    assert "1 clip(s) have several reference videos, none is taken (first: ep03)" in result.notes
    assert f"3 reference video(s) match no clip (first: {root / 'real/ep99.mp4'})" in result.notes


def test_a_reference_pattern_tells_references_apart_in_one_folder(tmp_path: Path) -> None:
    touch(
        tmp_path, "ctrlworld_pickplace_03.mp4", "ctrlworld_stack_01.mp4", "droid_real_pickplace_03.mp4",
        "droid_real_towel_01.mp4", "frozen_droid_real_pickplace_03.mp4",
    )  # fmt: skip
    result = scan_folder(
        tmp_path,
        pattern=r"(?P<generator>ctrlworld|frozen)_(?P<clip_id>.+)",
        references=tmp_path,
        reference_pattern=r"droid_real_(?P<clip_id>.+)",
    )
    items = by_id(result.items)
    # The recordings are references, not items; the frozen copy is an item of its own generator.
    assert set(items) == {"ctrlworld_pickplace_03", "ctrlworld_stack_01", "frozen_droid_real_pickplace_03"}
    assert items["ctrlworld_pickplace_03"]["reference_video"] == str(tmp_path / "droid_real_pickplace_03.mp4")
    assert "reference_video" not in items["ctrlworld_stack_01"]
    assert result.reference_count == 2 and result.skipped == []
    with pytest.raises(ValueError, match="the references folder is the scanned folder"):
        scan_folder(tmp_path, references=tmp_path)
    with pytest.raises(ValueError, match="needs a group named clip_id"):
        scan_folder(tmp_path, references=tmp_path, reference_pattern="droid_real_.+")
    with pytest.raises(ValueError, match="reference pattern group.s. generator name no field; use clip_id"):
        scan_folder(tmp_path, references=tmp_path, reference_pattern="(?P<generator>x)(?P<clip_id>.+)")


def test_instructions_from_text_files_and_a_table(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    touch(root, "a/ep01.mp4", "b/ep01.mp4", "a/ep02.mp4", "b/ep02.mp4", "a/ep03.mp4")
    (root / "a/ep03.txt").write_text("  stack the cups \n")
    assert by_id(scan_folder(root).items)["a/ep03"]["instruction"] == "stack the cups"
    table = tmp_path / "prompts.csv"
    table.write_text(
        "clip_id,item_id,video,instruction\n"
        "ep01,,,pick up the red block\n"
        ",b/ep01,,pick up the BLUE block\n"  # the item's own row wins over its clip's
        ",,a/ep02.mp4,open the drawer\n"
        "ep42,,,nothing has this clip\n"
    )
    result = scan_folder(root, instructions=table)
    items = by_id(result.items)
    assert items["a/ep01"]["instruction"] == "pick up the red block"
    assert items["b/ep01"]["instruction"] == "pick up the BLUE block"
    assert items["a/ep02"]["instruction"] == "open the drawer"
    assert "instruction" not in items["b/ep02"]
    assert items["a/ep03"]["instruction"] == "stack the cups"
    assert result.instruction_sources["b/ep01"] == f"{table}:3"
    assert result.instruction_sources["a/ep03"] == str(root / "a/ep03.txt")
    assert any(n.startswith(f"1 instruction(s) match no video (first: {table}:5, clip_id 'ep42'); a key is ")
               for n in result.notes), result.notes
    assert any(n.startswith("1 of 5 item(s) have no instruction (first: b/ep02)") for n in result.notes)


def test_video_keys_as_a_manifest_writes_them_or_absolute_find_their_videos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The manifest written to the current folder lists `videos/output.mp4`; a table written against it,
    # or with absolute paths, matched nothing ("instructions: 0 of 3") before.
    root = tmp_path / "videos"
    touch(root, "output.mp4", "Take 1.mp4", "sub/clip.mp4")
    monkeypatch.chdir(tmp_path)
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "prompts.csv").write_text(
        "video,instruction\n"
        "videos/output.mp4,pick up\n"  # from the current folder, as the manifest writes it
        f"{root / 'Take 1.mp4'},push\n"  # absolute
        "../videos/sub/clip,stack\n"  # from the table's folder, without the suffix
    )
    result = scan_folder("videos", instructions=tables / "prompts.csv")
    assert {k: v.get("instruction") for k, v in by_id(result.items).items()} == {
        "output": "pick up", "Take 1": "push", "sub/clip": "stack",
    }  # fmt: skip
    assert not [n for n in result.notes if "match no video" in n]
    labels = tables / "ratings.csv"
    labels.write_text(f"video,pa\nvideos/output.mp4,4\n{root / 'sub/clip.mp4'},2\n")
    items = by_id(scan_folder("videos", labels=labels).items)
    assert (items["output"]["labels"], items["sub/clip"]["labels"]) == ({"pa": 4}, {"pa": 2})


def test_a_key_read_from_inside_another_generator_gives_no_other_video_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from inside wan/, cosmos's table keyed `ep07.mp4` (relative to itself) gave wan/ep07 cosmos's
    # instruction, read from the current folder first; and a JSON object keyed by the clip id `ep07`
    # reached only wan/ep07, read as a path from there, not every generator's ep07 (review rev32 F1, F2).
    root = tmp_path / "videos"
    touch(root, "wan/ep07.mp4", "wan/ep08.mp4", "cosmos/ep07.mp4", "cosmos/ep08.mp4")
    (root / "cosmos" / "prompts.csv").write_text("video,instruction\nep07.mp4,cosmos seven\n")
    (tmp_path / "prompts.json").write_text('{"ep07": "pick the cube"}')
    monkeypatch.chdir(root / "wan")
    table = scan_folder("..", instructions=Path("../cosmos/prompts.csv"))
    assert {k: v.get("instruction") for k, v in by_id(table.items).items()} == {
        "cosmos/ep07": "cosmos seven", "cosmos/ep08": None, "wan/ep07": None, "wan/ep08": None}
    clips = scan_folder("..", instructions=Path("../../prompts.json"))
    assert {k: v.get("instruction") for k, v in by_id(clips.items).items()} == {
        "cosmos/ep07": "pick the cube", "cosmos/ep08": None, "wan/ep07": "pick the cube", "wan/ep08": None}


def test_a_key_that_matches_nothing_says_what_a_key_may_be(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    touch(root, "output.mp4")
    (tmp_path / "p.csv").write_text("video,instruction\nelsewhere/output.mp4,pick up\n")
    result = scan_folder(root, instructions=tmp_path / "p.csv")
    (note,) = [n for n in result.notes if "match no video" in n]
    assert note == (
        f"1 instruction(s) match no video (first: {tmp_path / 'p.csv'}:2, video 'elsewhere/output.mp4'); "
        f"a key is an item id, a clip id or a video path (under {root.resolve()}, e.g. 'output.mp4'; or "
        "from the current folder, from the table's folder, or absolute)"
    )


def test_a_flat_folder_says_it_gives_no_generator(tmp_path: Path) -> None:
    touch(tmp_path / "flat", "a.mp4", "b.mp4")
    notes = scan_folder(tmp_path / "flat").notes
    assert any(n.startswith("no generator: the videos lie directly in ") and "--generator NAME" in n
               for n in notes), notes
    touch(tmp_path / "nested", "wan/a.mp4", "b.mp4")  # one video has a generator folder: no note
    assert not [n for n in scan_folder(tmp_path / "nested").notes if n.startswith("no generator")]
    patterned = scan_folder(tmp_path / "nested", pattern=r"(?:[^/]+/)?(?P<clip_id>.+)").notes
    assert [n for n in patterned if n.startswith("no generator: the pattern has no generator group; give ")]
    named = scan_folder(tmp_path / "flat", fields={"generator": "wan"}).notes
    assert not [n for n in named if n.startswith("no generator")]


def test_instructions_as_a_json_object(tmp_path: Path) -> None:
    touch(tmp_path / "v", "a/ep01.mp4", "b/ep01.mp4", "a/ep02.mp4")
    mapping = tmp_path / "prompts.json"
    mapping.write_text(json.dumps({"ep01": "wipe the table", "a/ep02": "fold the towel"}))
    items = by_id(scan_folder(tmp_path / "v", instructions=mapping).items)
    assert [items[i].get("instruction") for i in ("a/ep01", "b/ep01", "a/ep02")] == [
        "wipe the table", "wipe the table", "fold the towel",
    ]  # fmt: skip


def test_an_instruction_longer_than_pythons_csv_cell_limit_is_read(
    tmp_path: Path, default_csv_limit: None
) -> None:
    # Over csv's default limit of 131,072 characters, the whole scan was refused (prompts.csv:2: cannot
    # parse CSV from this line on: field larger than field limit).
    touch(tmp_path / "v", "a/ep01.mp4", "a/ep02.mp4")
    long = "open the drawer, " * 8_500
    (tmp_path / "prompts.csv").write_text(f'clip_id,instruction\nep01,"{long}"\nep02,close it\n')
    result = scan_folder(tmp_path / "v", instructions=tmp_path / "prompts.csv")
    assert [it["instruction"] for it in by_id(result.items).values()] == [long.strip(), "close it"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clip_id,instruction\nep01,\n", r"prompts.csv:2: field instruction: missing or empty"),
        ("clip_id,item_id,instruction\nep01,a/ep01,x\n", r"prompts.csv:2: a row needs exactly one of"),
        ("video,clip_id,instruction\n,,x\n", r"prompts.csv:2: a row needs exactly one of .*got none"),
        ("name,instruction\nep01,x\n", r"prompts.csv:2: no key column: the instructions table needs a column "
         r"named item_id, clip_id or video; columns found: 'name', 'instruction'$"),
        ("video,prompt\na/ep01.mp4,x\n", r"prompts.csv:2: no instruction column: .*columns found: 'video', "
         r"'prompt'$"),
    ],
)
def test_broken_instruction_tables_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    touch(tmp_path / "v", "a/ep01.mp4")
    (tmp_path / "prompts.csv").write_text(text)
    with pytest.raises(ValueError, match=message):
        scan_folder(tmp_path / "v", instructions=tmp_path / "prompts.csv")


def test_labels_from_a_table_checked_as_a_manifest_s(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(root, "a/ep01.mp4", "b/ep01.mp4", "a/ep02.mp4")
    table = tmp_path / "ratings.csv"
    table.write_text(
        "video,item_id,pa,ia,rater,goal_completion,labels.overall\n"
        "a/ep01.mp4,,4,3,ann2,1,7\n"
        ",b/ep01,2,5,ann1,,\n"
        "c/ep09,,1,1,ann1,,\n"
    )
    result = scan_folder(root, labels=table)
    items = by_id(result.items)
    assert items["a/ep01"]["labels"] == {
        "pa": 4, "ia": 3, "rater": "ann2", "checklist": {"goal_completion": 1}, "overall": 7,
    }  # fmt: skip
    assert items["b/ep01"]["labels"] == {"pa": 2, "ia": 5, "rater": "ann1"}
    assert "labels" not in items["a/ep02"]
    assert any(n.startswith(f"1 label row(s) match no video (first: {table}:4, video 'c/ep09'); a key is ")
               for n in result.notes), result.notes
    out = tmp_path / "v.jsonl"
    write_manifest(result, out)
    suite = load_suite(out)
    loaded = {it.item_id: it.labels for it in suite.items}
    assert loaded["a/ep01"] is not None and loaded["a/ep01"].pa == 4
    assert loaded["a/ep01"].checklist is not None and loaded["a/ep01"].checklist.goal_completion == 1
    assert json.loads(out.read_text().splitlines()[0]).popitem()[0] == "labels"  # written last


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("video,pa\na/ep01.mp4,6\n", r"ratings.csv:2: field labels.pa: value 6 is out of range 1-5"),
        ("video,pa\na/ep01.mp4,3.5\n", r"ratings.csv:2: field labels.pa: expected a whole number"),
        ("video,score\na/ep01.mp4,3\n", r"ratings.csv:2: unknown column 'score'"),
        ("video,pa,labels.pa\na/ep01.mp4,3,4\n", r"ratings.csv:2: pa is given twice"),
        ("video,rater\na/ep01.mp4,\n", r"ratings.csv:2: the row holds no label"),
        ("clip_id,pa\nep01,3\n", r"ratings.csv:2: no key column: the labels table needs a column named "
         r"item_id or video; columns found: 'clip_id', 'pa'"),
        (
            "video,pa,rater\na/ep01.mp4,3,ann1\na/ep01,4,ann2\n",
            r"ratings.csv:3: item 'a/ep01' already has labels from .*ratings.csv:2; a manifest holds one",
        ),
    ],
)
def test_bad_label_tables_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    touch(tmp_path / "v", "a/ep01.mp4")
    (tmp_path / "ratings.csv").write_text(text)
    with pytest.raises(ValueError, match=message):
        scan_folder(tmp_path / "v", labels=tmp_path / "ratings.csv")


@pytest.mark.parametrize(
    ("stem", "pattern", "item"),
    [
        ("wan/ep07_cam0", r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)_(?P<view>cam\d)", "wan/ep07"),
        ("wan/cam0/ep07", r"(?P<generator>[^/]+)/(?P<view>cam\d)/(?P<clip_id>.+)", "wan/ep07"),
        ("ep07_cam0_wan", r"(?P<clip_id>ep\d+)_(?P<view>cam\d)_(?P<generator>.+)", "ep07_wan"),
        ("cam0/wan/ep07", r"(?P<view>cam\d)/(?P<generator>[^/]+)/(?P<clip_id>.+)", "wan/ep07"),
    ],
)
def test_a_view_group_is_cut_out_of_the_item_id(tmp_path: Path, stem: str, pattern: str, item: str) -> None:
    touch(tmp_path, f"{stem}.mp4", f"{stem.replace('cam0', 'cam1')}.mp4")
    result = scan_folder(tmp_path, pattern=pattern)
    assert [it["item_id"] for it in result.items] == [item]
    row = result.items[0]
    assert row["views"] == {
        "cam0": str(tmp_path / f"{stem}.mp4"), "cam1": str(tmp_path / f"{stem.replace('cam0', 'cam1')}.mp4"),
    }  # fmt: skip
    assert row["main_view"] == "cam0" and row["video"] == row["views"]["cam0"]
    assert (row["generator"], row["clip_id"]) == ("wan", "ep07")


def test_views_of_one_rollout_become_one_item(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(
        root, "wan/ep07_front.mp4", "wan/ep07_wrist.mp4", "wan/ep07_top.mp4", "wan/ep08_front.mp4",
        "wan/ep09_wrist.mp4", "wan/ep09_top.mp4", "wan/ep10_front.mp4", "wan/ep10_front.webm",
        "wan/ep10_top.mp4",
    )  # fmt: skip
    (root / "wan/ep07.txt").write_text("open the drawer")
    (root / "wan/ep09_top.txt").write_text("close the drawer")
    pattern = r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)_(?P<view>[a-z]+)"
    result = scan_folder(root, pattern=pattern, main_view="front")
    items = by_id(result.items)
    assert set(items) == {"wan/ep07", "wan/ep08"}
    assert items["wan/ep07"]["views"].keys() == {"front", "top", "wrist"}
    assert items["wan/ep07"]["video"] == str(root / "wan/ep07_front.mp4")
    assert items["wan/ep07"]["instruction"] == "open the drawer"  # the item's own .txt
    assert "views" not in items["wan/ep08"] and "main_view" not in items["wan/ep08"]
    assert "1 item(s) have one view only, written as single-view items (first: wan/ep08)" in result.notes
    assert "1 item(s) have no view 'front', left out (first: wan/ep09)" in result.notes
    assert "1 item(s) have two files for one view, left out (first: wan/ep10)" in result.notes
    # Without --main-view the first name in order is the main one, and the main view's .txt is read.
    items = by_id(scan_folder(root, pattern=pattern).items)
    assert items["wan/ep09"]["main_view"] == "top"
    assert items["wan/ep09"]["instruction"] == "close the drawer"
    assert result.counts()["with_views"] == 1


def test_views_written_and_checked_as_synchronised(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    frames = rng.integers(0, 256, (10, 32, 48, 3), dtype=np.uint8)
    root = tmp_path / "v"
    for view in ("left", "right"):
        (root / "wan").mkdir(parents=True, exist_ok=True)
        write_video(root / f"wan/ep1_{view}.mp4", frames, fps=8)
    write_video(root / "wan/ep2_left.mp4", frames, fps=8)
    write_video(root / "wan/ep2_right.mp4", frames[:7], fps=8)
    result = scan_folder(root, pattern=r"(?P<generator>wan)/(?P<clip_id>ep\d)_(?P<view>\w+)")
    out = tmp_path / "s.jsonl"
    write_manifest(result, out)
    assert json.loads(out.read_text().splitlines()[0])["views"] == {  # inside the manifest's folder
        "left": "v/wan/ep1_left.mp4", "right": "v/wan/ep1_right.mp4",
    }  # fmt: skip
    suite = load_suite(out)
    first = suite.by_id("wan/ep1").resolve(out.parent)
    assert first.main_view == "left" and first.views is not None
    assert Path(first.views["right"]) == root / "wan/ep1_right.mp4"
    problems = validate_manifest(out, media="open")
    assert [(p.item_id, p.field) for p in problems if p.is_error] == [("wan/ep2", "views.right")]


def test_frame_folders_only_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "v"
    touch(root, "m/ep01/0001.png", "m/ep01/0002.png", "m/ep02.mp4", "m/ep01/nested/0001.png")
    (root / "m/ep01.txt").write_text("push the box")
    plain = scan_folder(root)
    assert [it["item_id"] for it in plain.items] == ["m/ep02"]
    assert any("2 folder(s) of images left out (first: m/ep01)" in n for n in plain.notes)
    items = by_id(scan_folder(root, frame_folders=True).items)
    assert set(items) == {"m/ep01", "m/ep02"}  # the folder is one video; what it holds is not scanned
    assert items["m/ep01"]["video"] == str(root / "m/ep01")
    assert items["m/ep01"]["instruction"] == "push the box"


def test_written_manifest_loads_with_the_same_files(tmp_path: Path) -> None:
    root = tmp_path / "data" / "videos"
    touch(root, "a/ep01.mp4", "b/ep01.mp4", "real/ep01.mp4")
    result = scan_folder(root, references=root / "real", fields={"regime": "i2v"})
    # Beside the videos: paths relative to the manifest, so the folder can move as a whole.
    inside = tmp_path / "data" / "videos.jsonl"
    assert write_manifest(result, inside) == []
    rows = [json.loads(line) for line in inside.read_text().splitlines()]
    assert rows[0] == {
        "item_id": "a/ep01", "video": "videos/a/ep01.mp4", "reference_video": "videos/real/ep01.mp4",
        "generator": "a", "clip_id": "ep01", "regime": "i2v",
    }  # fmt: skip
    assert result.absolute_paths == 0
    # Elsewhere: absolute paths, counted (validation would warn of each as leading out of the folder).
    out = tmp_path / "runs" / "videos.jsonl"
    assert write_manifest(result, out) == []
    assert result.absolute_paths == 4
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[1]["video"] == str(root / "b/ep01.mp4")
    outside = [p for p in validate_manifest(out) if "outside the manifest's folder" in p.message]
    assert {(p.item_id, p.field) for p in outside} == {
        (i, f) for i in ("a/ep01", "b/ep01") for f in ("video", "reference_video")
    }  # fmt: skip
    for manifest in (inside, out):
        suite = load_suite(manifest)
        assert [Path(it.resolve(manifest.parent).video) for it in suite.items] == [
            root / "a/ep01.mp4", root / "b/ep01.mp4",
        ]  # fmt: skip
    with pytest.raises(FileExistsError, match="videos.jsonl exists"):
        write_manifest(result, out)
    result.items.pop()
    write_manifest(result, out, force=True)
    assert len(out.read_text().splitlines()) == 1
    assert [p.name for p in out.parent.iterdir()] == ["videos.jsonl"]


def test_an_item_that_does_not_validate_costs_only_itself(tmp_path: Path) -> None:
    touch(tmp_path / "v", "group:x.mp4", "m/ep01.mp4", " padded.mp4")
    result = scan_folder(tmp_path / "v")
    out = tmp_path / "s.jsonl"
    assert write_manifest(result, out) == []
    assert [json.loads(line)["item_id"] for line in out.read_text().splitlines()] == ["m/ep01"]
    assert [it["item_id"] for it in result.items] == ["m/ep01"]
    assert any(n.startswith("2 item(s) left out, their records do not validate (first: item ' padded'")
               for n in result.notes), result.notes
    assert [it.item_id for it in load_suite(out)] == ["m/ep01"]


def test_nothing_invalid_or_empty_is_written(tmp_path: Path) -> None:
    touch(tmp_path / "v", "group:x.mp4")
    result = scan_folder(tmp_path / "v")
    out = tmp_path / "out" / "s.jsonl"
    with pytest.raises(ManifestError, match="item_id may not start with 'group:'"):
        write_manifest(result, out)
    assert not out.exists() and list(out.parent.iterdir()) == []
    with pytest.raises(ValueError, match="no videos found under"):
        write_manifest(scan_folder(tmp_path / "out"), out)
    with pytest.raises(ValueError, match="name it .jsonl"):
        write_manifest(result, tmp_path / "s.csv")


def test_cli_scan_then_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The written manifest scores as it is: the videos keep their names and folders."""
    rng = np.random.default_rng(3)
    canvas = rng.integers(0, 256, (40, 56, 3), dtype=np.uint8)
    frames = np.stack([np.roll(canvas, i, axis=1)[:32, :48] for i in range(12)])
    root = tmp_path / "my videos"
    for rel in ("model A/ep 1.mp4", "model B/ep 1.mp4", "real/ep 1.mp4"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        write_video(root / rel, frames, fps=8)
    (root / "model A/ep 1.txt").write_text("slide the block left")
    (tmp_path / "ratings.csv").write_text("video,pa,ia\nmodel B/ep 1.mp4,2,4\n")
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(
        app,
        ["scan", str(root), "--references", str(root / "real"), "--embodiment", "gripper",
         "--labels", "ratings.csv"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "wrote my videos.jsonl: 2 item(s), 1 clip(s); generators: model A 1, model B 1" in done.stdout
    expect = "instructions: 1 of 2; references: 2 item(s) (1 reference videos); labels: 1 item(s)"
    assert expect in done.stdout
    assert "1 of 2 item(s) have no instruction (first: model B/ep 1)" in done.stderr
    assert "outside the manifest's folder" not in done.stderr
    # The hint of what to run next is a note: on stderr, stdout keeps what was written.
    assert "then robojudge score 'my videos.jsonl' -m all" in done.stderr and "next:" not in done.stdout
    again = runner.invoke(app, ["scan", str(root)])
    assert again.exit_code == 2 and "my videos.jsonl exists; pass --force to replace it" in again.stderr
    elsewhere = runner.invoke(app, ["scan", str(root), "-o", "lists/mine.jsonl"])
    assert elsewhere.exit_code == 0, elsewhere.output
    assert "3 path(s) are outside the manifest's folder and written absolute" in elsewhere.stderr
    # Without --references, real/ is one more generator.
    assert ": 3 item(s), 1 clip(s); generators: model A 1, model B 1, real 1" in elsewhere.stdout

    with pytest.raises(SystemExit) as exit_info:
        main(["score", "my videos.jsonl", "-m", "iq1_psnr,mq_dynamic_degree", "--workers", "1"])
    assert exit_info.value.code in (0, None)
    with ResultStore(tmp_path / "runs" / "my videos" / "results.sqlite") as store:
        rows = {(r.item_id, r.metric): r for r in store.rows()}
    assert set(rows) == {
        (i, m) for i in ("model A/ep 1", "model B/ep 1") for m in ("iq1_psnr", "mq_dynamic_degree")
    }
    assert all(r.status == "ok" for r in rows.values())
    assert rows[("model A/ep 1", "iq1_psnr")].value == pytest.approx(100.0)  # the reference is the same clip


def test_cli_scan_reports_bad_input_without_writing(tmp_path: Path) -> None:
    touch(tmp_path / "v", "a/ep01.mp4")
    out = tmp_path / "s.jsonl"
    bad = runner.invoke(app, ["scan", str(tmp_path / "v"), "-o", str(out), "--embodiment", "robot"])
    assert bad.exit_code == 2 and "unknown embodiment 'robot'" in bad.stderr
    bad = runner.invoke(app, ["scan", str(tmp_path / "v"), "-o", str(out), "--pattern", "(?P<gen>.*)"])
    assert bad.exit_code == 2 and "pattern group(s) gen name no field" in bad.stderr
    assert not out.exists()
