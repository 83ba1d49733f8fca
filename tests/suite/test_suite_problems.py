"""Bad manifests: every problem is reported, located by file, line (or row), item and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_manifest_helpers import flatten, rows, write_csv, write_jsonl, write_parquet

from robojudge._chars import MAX_NAME_BYTES
from robojudge.suite import MAX_ITEM_ID_BYTES, ManifestError, ManifestProblem, load_suite, validate_manifest


def _one(problems: list[ManifestProblem]) -> ManifestProblem:
    assert len(problems) == 1, [str(p) for p in problems]
    return problems[0]


def test_broken_json_line(media_root: Path) -> None:
    lines = [json.dumps(r) for r in rows()]
    lines.insert(1, '{"item_id": "ep9", "video": ')  # line 2 is cut short
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(lines) + "\n")

    with pytest.raises(ManifestError) as info:
        load_suite(path)
    p = _one(info.value.problems)
    assert (p.line, p.row, p.item_id, p.field) == (2, None, None, None)
    assert "invalid JSON" in p.message
    assert str(p).startswith(f"{path}:2: invalid JSON")

    suite = load_suite(path, strict=False)  # the other lines still load
    assert [it.item_id for it in suite] == ["ep1", "ep2", "ep3"]
    assert suite.problems == info.value.problems


_DEEP = "[" * 100_000 + "]" * 100_000  # past any recursion limit: json.loads raises RecursionError


def test_json_nested_too_deeply_is_one_bad_line(media_root: Path) -> None:
    lines = [json.dumps(r) for r in rows()]
    lines.insert(1, '{"item_id": "ep9", "video": "v.mp4", "meta": {"x": ' + _DEEP + "}}")
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(lines) + "\n")

    p = _one(validate_manifest(path))
    assert (p.line, p.row, p.item_id, p.field) == (2, None, None, None)
    assert str(p) == f"{path}:2: invalid JSON: nested too deeply"
    suite = load_suite(path, strict=False)  # the other lines still load
    assert [it.item_id for it in suite] == ["ep1", "ep2", "ep3"]

    whole = media_root / "suite.json"
    whole.write_text("[" + json.dumps(rows()[0]) + ", " + _DEEP + "]")
    p = _one(validate_manifest(whole))
    assert str(p) == f"{whole}: invalid JSON: nested too deeply"


def test_csv_cell_nested_too_deeply(media_root: Path) -> None:
    rs = [flatten(r) for r in rows()]
    for r in rs:
        for k in [k for k in r if k.startswith("meta.")]:
            del r[k]
    rs[1]["meta"] = '{"x": ' + "[" * 50_000 + "]" * 50_000 + "}"  # under the csv module's field limit
    path = write_csv(media_root / "suite.csv", rs)
    p = _one(validate_manifest(path))
    assert (p.line, p.field) == (3, "meta"), str(p)
    assert "nested too deeply" in p.message
    assert [it.item_id for it in load_suite(path, strict=False)] == ["ep1", "ep3"]


def test_record_that_is_not_an_object(media_root: Path) -> None:
    path = media_root / "suite.jsonl"
    path.write_text(json.dumps(rows()[2]) + "\n[1, 2]\n")
    p = _one(validate_manifest(path))
    assert p.line == 2 and "not a JSON object" in p.message


def test_duplicate_ids_name_both_lines(media_root: Path) -> None:
    rs = rows()
    rs[2]["item_id"] = "ep1"
    path = write_jsonl(media_root / "suite.jsonl", rs)
    p = _one(validate_manifest(path))
    assert (p.line, p.item_id, p.field) == (3, "ep1", "item_id")
    assert "duplicate" in p.message and "line 1" in p.message
    suite = load_suite(path, strict=False)
    assert [it.item_id for it in suite] == ["ep1", "ep2"]  # the first one wins
    assert suite.by_id("ep1").source == "droid"


def test_duplicate_ids_in_parquet_name_rows(media_root: Path) -> None:
    rs = rows()
    rs[2]["item_id"] = "ep2"
    p = _one(validate_manifest(write_parquet(media_root / "suite.parquet", rs)))
    assert (p.line, p.row) == (None, 2)
    assert "row 1" in p.message
    assert str(p).startswith(f"{media_root / 'suite.parquet'}:row 2: item 'ep2' field item_id:")


def test_missing_video_file(media_root: Path) -> None:
    rs = rows()
    rs[1]["video"] = "videos/gone.mp4"
    p = _one(validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)))
    assert (p.line, p.item_id, p.field) == (2, "ep2", "video")
    assert "not found" in p.message and "videos/gone.mp4" in p.message


def test_missing_view_file(media_root: Path) -> None:
    rs = rows()
    rs[0]["views"] = {"front": "videos/ep1.mp4", "wrist": "videos/no_wrist.mp4"}
    p = _one(validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)))
    assert (p.line, p.item_id, p.field) == (1, "ep1", "views.wrist")


def test_missing_optional_files_and_folder_checks(media_root: Path) -> None:
    (media_root / "empty_frames").mkdir()
    row = {
        "item_id": "x",
        "video": "empty_frames",
        "initial_frame": "frames",  # a folder, not an image
        "reference_video": "real/none.mp4",
        "state": "state/none.npz",
        "views": {"front": ""},
    }
    problems = validate_manifest(write_jsonl(media_root / "suite.jsonl", [row]))
    got = {p.field: p.message for p in problems}
    assert set(got) == {"video", "initial_frame", "reference_video", "state", "views.front"}
    assert "empty" in got["video"] and "folder" in got["initial_frame"]
    assert "not found" in got["reference_video"] and "not found" in got["state"]
    assert got["views.front"] == "path is empty"


def test_labels_out_of_range(media_root: Path) -> None:
    rs = rows()
    rs[0]["labels"]["pa"] = 6
    rs[0]["labels"]["checklist"]["goal_completion"] = 3
    rs[0]["labels"]["overall"] = 0
    problems = validate_manifest(write_jsonl(media_root / "suite.jsonl", rs))
    got = {p.field: p.message for p in problems}
    assert got == {
        "labels.pa": "value 6 is out of range 1-5",
        "labels.checklist.goal_completion": "value 3 is out of range 0-2",
        "labels.overall": "value 0 is out of range 1-10",
    }
    assert {p.line for p in problems} == {1}
    assert (
        str(problems[0])
        == f"{media_root / 'suite.jsonl'}:1: item 'ep1' field labels.pa: value 6 is out of range 1-5"
    )


def test_boolean_ratings_are_refused_as_in_csv(media_root: Path) -> None:
    """JSON's true read as 1 (partial, on a checklist item) and false as 0, and validated; a CSV cell
    true was refused. Both are refused now, naming the field."""
    rs = rows()
    rs[0]["labels"]["pa"] = True
    rs[0]["labels"]["checklist"]["goal_completion"] = True
    rs[0]["labels"]["checklist"]["agent_match"] = False
    problems = validate_manifest(write_jsonl(media_root / "suite.jsonl", rs))
    assert {p.field: p.message for p in problems} == {
        "labels.pa": "expected a whole number, got boolean True",
        "labels.checklist.goal_completion": "expected a whole number, got boolean True",
        "labels.checklist.agent_match": "expected a whole number, got boolean False",
    }
    assert {(p.line, p.item_id) for p in problems} == {(1, "ep1")}


def test_unknown_embodiment_lists_allowed_values(media_root: Path) -> None:
    rs = rows()
    rs[2]["embodiment"] = "robot"
    p = _one(validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)))
    assert p.field == "embodiment"
    assert p.message == (
        "unknown embodiment 'robot'; "
        "expected one of gripper, dexterous_hand, human_hand, bimanual, humanoid, other"
    )


def test_unknown_fields_suggest_a_close_name(media_root: Path) -> None:
    rs = rows()
    rs[1]["instrution"] = rs[1].pop("instruction")
    rs[1]["labels"]["ratr"] = "r9"
    got = {p.field: p.message for p in validate_manifest(write_jsonl(media_root / "suite.jsonl", rs))}
    assert got == {
        "instrution": "unknown field 'instrution' (did you mean 'instruction'?)",
        "labels.ratr": "unknown field 'ratr' (did you mean 'rater'?)",
    }


def test_unknown_dotted_csv_column_suggests_a_close_name(media_root: Path) -> None:
    row = {"item_id": "x", "video": "videos/ep3.mp4", "lables.pa": "3"}
    p = _one(validate_manifest(write_csv(media_root / "suite.csv", [row])))
    assert p.field == "lables.pa" and "did you mean 'labels.pa'" in p.message


def test_fractional_score_in_csv_is_an_error(media_root: Path) -> None:
    good = {"item_id": "a", "video": "videos/ep3.mp4", "labels.pa": "3"}
    bad = {"item_id": "b", "video": "videos/ep3.mp4", "labels.pa": "3.5"}
    path = write_csv(media_root / "suite.csv", [good, bad])
    p = _one(validate_manifest(path))
    assert (p.line, p.item_id, p.field) == (3, "b", "labels.pa")
    assert "whole number" in p.message and "'3.5'" in p.message


def test_csv_line_numbers_count_multiline_cells(media_root: Path) -> None:
    first = {
        "item_id": "a",
        "video": "videos/ep3.mp4",
        "instruction": "first line\nsecond line\nthird",
        "labels.pa": "",
    }
    second = {"item_id": "b", "video": "videos/ep3.mp4", "instruction": "x", "labels.pa": "9"}
    p = _one(validate_manifest(write_csv(media_root / "suite.csv", [first, second])))
    assert p.line == 5  # header 1, record a on lines 2-4


def test_csv_short_record_and_bad_json_cell(media_root: Path) -> None:
    path = media_root / "suite.csv"
    path.write_text('item_id,video,labels\na,videos/ep3.mp4\nb,videos/ep3.mp4,{"pa": 2\n')
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [(2, None), (3, "labels")]
    assert "2 cells" in problems[0].message and "not valid JSON" in problems[1].message


def test_csv_saved_with_semicolons_says_so_once(media_root: Path) -> None:
    path = media_root / "suite.csv"
    path.write_text("\ufeffitem_id;video;labels.pa\na;videos/ep3.mp4;3\nb;videos/ep3.mp4;4\n")
    p = _one(validate_manifest(path))  # before: three problems, repeated on every row
    assert p.line == 1 and "looks separated by ';'" in p.message and "'item_id;video;labels.pa'" in p.message
    path.write_text("item_id\tvideo\na\tvideos/ep3.mp4\n")
    assert "looks separated by '\\t'" in _one(validate_manifest(path)).message
    path.write_text("item_id\na\n")  # one column and no other separator: the missing video is the problem
    assert _one(validate_manifest(path)).field == "video"


def test_item_ids_with_control_characters_are_refused(media_root: Path) -> None:
    good = json.dumps({"item_id": "a", "video": "videos/ep3.mp4"})
    nul = json.dumps({"item_id": "b\u0000c", "video": "videos/ep3.mp4"})
    tab = json.dumps({"item_id": "d\te", "video": "videos/ep3.mp4"})
    path = media_root / "suite.jsonl"
    path.write_text("\n".join([good, nul, tab]) + "\n")
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [(2, "item_id"), (3, "item_id")]
    assert "control character ('\\x00' at position 1)" in problems[0].message  # PostgreSQL refuses NUL
    assert "control character ('\\t' at position 1)" in problems[1].message
    assert [it.item_id for it in load_suite(path, strict=False)] == ["a"]


def test_empty_manifest(tmp_path: Path) -> None:
    for name, text in [("e.jsonl", ""), ("e.csv", ""), ("h.csv", "item_id,video\n"), ("e.json", "[]")]:
        path = tmp_path / name
        path.write_text(text)
        p = _one(validate_manifest(path))
        assert p.message == "manifest has no items" and p.line is None
        with pytest.raises(ManifestError, match="no items"):
            load_suite(path)
        suite = load_suite(path, strict=False)
        assert len(suite) == 0 and len(suite.problems) == 1


def test_missing_manifest_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.jsonl"
    p = _one(validate_manifest(path))
    assert p.message == "manifest file not found" and str(p) == f"{path}: manifest file not found"
    with pytest.raises(ManifestError, match="not found"):
        load_suite(path, strict=False)  # nothing to load, even when not strict


def test_unreadable_parquet(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"not parquet at all")
    p = _one(validate_manifest(path))
    assert "cannot read Parquet" in p.message


def test_all_problems_are_reported_at_once(media_root: Path) -> None:
    rs = rows()
    rs[0]["labels"]["pa"] = 6  # 1: out of range
    rs[1]["embodiment"] = "robot"  # 2: unknown embodiment
    rs[2]["video"] = "videos/gone.mp4"  # 3: missing file
    rs.append({"item_id": "ep1", "video": "videos/ep3.mp4"})  # 4: duplicate id
    rs.append({"item_id": "ep5", "video": "videos/ep3.mp4", "colour": "red"})  # 5: unknown field
    path = write_jsonl(media_root / "suite.jsonl", rs)
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [
        (1, "labels.pa"),
        (2, "embodiment"),
        (3, "video"),
        (4, "item_id"),
        (5, "colour"),
    ]
    with pytest.raises(ManifestError) as info:
        load_suite(path)
    text = str(info.value)
    assert text.splitlines()[0] == f"5 problems in {path}:"
    assert text.splitlines()[1:] == [str(p) for p in problems]
    assert [it.item_id for it in load_suite(path, strict=False)] == []


def test_problems_in_every_tabular_format(media_root: Path) -> None:
    rs = rows()
    rs[1]["labels"]["pa"] = 7
    csv_p = _one(validate_manifest(write_csv(media_root / "s.csv", [flatten(r) for r in rs])))
    pq_p = _one(validate_manifest(write_parquet(media_root / "s.parquet", rs)))
    assert (csv_p.line, csv_p.row, csv_p.field) == (3, None, "labels.pa")
    assert (pq_p.line, pq_p.row, pq_p.field) == (None, 1, "labels.pa")
    assert csv_p.message == pq_p.message == "value 7 is out of range 1-5"


def test_main_view_not_a_view(media_root: Path) -> None:
    rs = rows()
    rs[0]["main_view"] = "top"
    p = _one(validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)))
    assert p.field == "main_view" and "'top'" in p.message


def test_problem_to_dict(media_root: Path) -> None:
    rs = rows()
    rs[0]["labels"]["ia"] = 0
    p = _one(validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)))
    d = p.to_dict()
    assert d == {
        "file": str(media_root / "suite.jsonl"),
        "line": 1,
        "row": None,
        "item_id": "ep1",
        "field": "labels.ia",
        "message": "value 0 is out of range 1-5",
        "severity": "error",
    }
    assert json.loads(json.dumps(d)) == d


def test_names_that_differ_only_in_unicode_composition_are_warned(media_root: Path) -> None:
    # Generator 'Modél' typed (NFC) and copied from macOS (NFD) were two generators, and validation said ok
    nfc, nfd = "Mod\u00e9l", "Mode\u0301l"
    rs = [{"item_id": f"{gen}/{ep}", "video": "videos/ep1.mp4", "generator": gen, "clip_id": clip}
          for gen, ep, clip in ((nfc, "ep0", "c0"), (nfd, "ep1", f"c1/{nfd}"), (nfd, "ep2", "c2"),
                                (nfc, "ep1", f"c1/{nfc}"))]
    path = write_jsonl(media_root / "suite.jsonl", rs)
    found = validate_manifest(path)
    assert [(p.line, p.field, p.severity) for p in found] == [
        (2, "generator", "warning"), (4, "clip_id", "warning"), (4, "item_id", "warning")]
    assert str(found[0]) == (
        f"{path}:2: item {nfd + '/ep1'!r} field generator: warning: generator 'Mode\\u0301l' differs from "
        "generator 'Mod\\xe9l' (item 'Mod\xe9l/ep0', line 1) only in how its characters are composed "
        "(NFC/NFD; macOS writes file names decomposed): they look alike in every table but are two "
        "generators; spell them one way")
    assert "clip id 'c1/Mod\\xe9l' differs from clip id 'c1/Mode\\u0301l' (item " in found[1].message
    assert "are two clips (two clusters of the paired bootstrap)" in found[1].message
    assert "item id 'Mod\\xe9l/ep1' differs from item id 'Mode\\u0301l/ep1' (line 2) only" in found[2].message


def test_group_fields_that_differ_only_in_unicode_composition_are_warned(media_root: Path) -> None:
    # One task or instruction typed on two machines (NFC and NFD) became two groups of `report --by task`
    # and `metrics sets --by instruction` that printed alike, and validation said ok.
    dish_nfc, dish_nfd = "cr\u00e8me br\u00fbl\u00e9e", "cre\u0300me bru\u0302le\u0301e"
    nfc, nfd = f"put the {dish_nfc} on the plate", f"put the {dish_nfd} on the plate"
    first = {"item_id": "a", "video": "videos/ep1.mp4", "instruction": nfc, "task": dish_nfc,
             "source": dish_nfc, "regime": dish_nfc, "split": dish_nfc, "prompt_variant": dish_nfc,
             "views": {dish_nfc: "videos/ep1.mp4"}, "labels": {"pa": 3, "rater": dish_nfc}}
    second = {"item_id": "b", "video": "videos/ep1.mp4", "instruction": nfd, "task": dish_nfd,
              "source": dish_nfd, "regime": dish_nfd, "split": dish_nfd, "prompt_variant": dish_nfd,
              "views": {dish_nfd: "videos/ep1.mp4"}, "labels": {"pa": 3, "rater": dish_nfd}}
    third = {**second, "item_id": "c"}  # the same second spelling again: said once
    path = write_jsonl(media_root / "suite.jsonl", [first, second, third])
    found = validate_manifest(path)
    assert [(p.line, p.field, p.severity) for p in found] == [
        (2, f, "warning") for f in ("instruction", "task", "source", "regime", "split", "prompt_variant",
                                    "labels.rater", "views")]
    assert found[0].message == (
        f"instruction {ascii(nfd)} differs from instruction {ascii(nfc)} (item 'a', line 1) only in how its "
        "characters are composed (NFC/NFD; macOS writes file names decomposed): they look alike in every "
        "table but are two instructions (two groups of `--by instruction`); spell them one way")
    assert "task 'cre\\u0300me bru\\u0302le\\u0301e' differs from task 'cr\\xe8me" in found[1].message
    assert "are two raters" in found[6].message and "view name 'cre\\u0300me" in found[7].message
    assert [it.item_id for it in load_suite(path)] == ["a", "b", "c"]  # warned, never merged or refused


@pytest.mark.parametrize("invisible", ["\u200b", "\u00a0", "\ufeff", "\u2060", " ", "\u200e", "\u00ad"])
def test_names_that_differ_only_in_invisible_characters_are_warned(media_root: Path, invisible: str) -> None:
    # Generators 'wan' and 'wan' + a zero-width space (or a no-break space, a BOM pasted from a CSV, a word
    # joiner) printed as two rows 'wan' in every table, and validation said ok.
    rs = [{"item_id": f"{k}", "video": "videos/ep1.mp4", "generator": gen, "clip_id": f"c{k}",
           "instruction": "open the drawer" + ("\r\n" if k else "\n") + "then close it"}
          for k, gen in enumerate(("wan", "wan" + invisible))]
    found = validate_manifest(write_jsonl(media_root / "suite.jsonl", rs))
    assert [(p.line, p.field) for p in found] == [(2, "generator"), (2, "instruction")]
    assert found[0].message == (
        f"generator {ascii('wan' + invisible)} differs from generator 'wan' (item '0', line 1) only in "
        "characters that print as nothing or as a plain space (a zero-width space, a byte-order mark, a "
        "no-break space, a line break, spaces at either end): they look alike in every table but are two "
        "generators; spell them one way")
    assert "instruction 'open the drawer\\r\\nthen close it' differs from" in found[1].message


def test_names_that_read_apart_are_not_twins(media_root: Path) -> None:
    rs = [{"item_id": f"{k}", "video": "videos/ep1.mp4", "generator": gen}
          for k, gen in enumerate(("wan", "Wan", "wan2", "w an", "wan 2"))]
    assert validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)) == []


@pytest.mark.parametrize(("first", "later"), [
    ("\u0645\u06cc\u062e\u0648\u0627\u0647\u0645",
     "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"),  # Persian mi-khaham with a ZWNJ
    ("\u0661\u0662", "\u0600\u0661\u0662"),  # the Arabic number sign, drawn under the digits
    ("\u0661\u0662", "\u06dd\u0661\u0662"),  # the end of ayah sign, drawn around them
    ("\u0915\u094d\u0937", "\u0915\u094d\u200d\u0937"),  # Devanagari with a ZWJ: a half form
])
def test_format_characters_that_are_drawn_do_not_make_twins(media_root: Path, first: str, later: str) -> None:
    # Before: every format character (Cf) was left out of the comparison, so Persian "mi-khaham" with and
    # without its zero-width non-joiner (which keeps the letters around it from joining, as both spellings
    # are common), or digits with and without the Arabic number sign, were warned as differing "only in
    # characters that print as nothing": they print differently.
    rs = [{"item_id": f"{k}", "video": "videos/ep1.mp4", "instruction": text}
          for k, text in enumerate((first, later))]
    assert validate_manifest(write_jsonl(media_root / "suite.jsonl", rs)) == []


def test_name_fields_with_control_characters_are_refused(media_root: Path) -> None:
    # Before, only item_id was checked: an ESC in a generator recoloured the terminal and stopped pdflatex.
    # A right-to-left override (U+202E) showed the rest of the generator's table row reversed.
    bad = [("generator", "\x1b[31mred"), ("clip_id", "c\rd"), ("task", "t\nu"), ("split", "s\tt"),
           ("source", "gen\u202eA")]
    recs = [{"item_id": f"i{k}", "video": "videos/ep3.mp4", f: v} for k, (f, v) in enumerate(bad)]
    recs.append({"item_id": "r", "video": "videos/ep3.mp4", "labels": {"pa": 3, "rater": "ann\x00"}})
    recs.append({"item_id": "v", "video": "videos/ep3.mp4", "views": {"front\n": "videos/ep3.mp4"}})
    recs.append({"item_id": "ok", "video": "videos/ep3.mp4", "generator": "a b\u200c\u200f",
                 "labels": {"rater": "Ann é"}})  # a zero-width non-joiner and a right-to-left mark are fine
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [
        (1, "generator"), (2, "clip_id"), (3, "task"), (4, "split"), (5, "source"), (6, "labels.rater"),
        (7, "views")]
    assert "generator holds a control character ('\\x1b' at position 0)" in problems[0].message
    assert "source holds a bidirectional control character ('\\u202e' at position 3)" in problems[4].message
    assert "labels.rater holds a control character ('\\x00' at position 3)" in problems[5].message
    assert "view name 'front\\n' holds a control character" in problems[6].message
    assert [it.item_id for it in load_suite(path, strict=False)] == ["ok"]


def test_free_text_with_nul_is_refused(media_root: Path) -> None:
    # Before: an instruction holding NUL validated, then `annotate init` failed on PostgreSQL (text cannot
    # hold NUL), and a metric that kept the instruction in its details broke the next run there.
    recs = [{"item_id": "a", "video": "videos/ep3.mp4", "instruction": "pick up\x00 the block"},
            {"item_id": "b", "video": "videos/ep3.mp4", "labels": {"pa": 3, "evidence": "slides\x00"}},
            {"item_id": "ok", "video": "videos/ep3.mp4", "instruction": "pick up the cup,\n\tthen\r\nput it",
             "labels": {"evidence": "fine\nenough"}}]  # line breaks and tabs stay allowed in free text
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [(1, "instruction"), (2, "labels.evidence")]
    assert "instruction holds a NUL character ('\\x00' at position 7)" in problems[0].message
    assert "labels.evidence holds a NUL character ('\\x00' at position 6)" in problems[1].message
    assert [it.item_id for it in load_suite(path, strict=False)] == ["ok"]


def test_item_ids_longer_than_the_limit_are_refused(media_root: Path) -> None:
    # Before: any length was accepted, and on PostgreSQL an id over about 2,700 bytes failed every run of
    # the manifest (its unique index cannot hold the key).
    ids = ["a" * MAX_ITEM_ID_BYTES, "b" * (MAX_ITEM_ID_BYTES + 1), "é" * (MAX_ITEM_ID_BYTES // 2 + 1)]
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(json.dumps({"item_id": i, "video": "videos/ep3.mp4"}) for i in ids) + "\n")
    problems = validate_manifest(path)
    assert [(p.line, p.field) for p in problems] == [(2, "item_id"), (3, "item_id")]
    assert "item_id is 1,001 bytes long in UTF-8; at most 1,000 are allowed" in problems[0].message
    assert "item_id is 1,002 bytes long" in problems[1].message  # two bytes a character
    assert str(problems[0]) == (f"{path}:2: item {'b' * 100!r}... (1,001 characters) field item_id: "
                                f"{problems[0].message}")  # the id shown by its start
    # (an id refused for its bytes is shown by its start whatever its characters: a review)
    assert str(problems[1]).startswith(f"{path}:3: item {'é' * 100!r}... (501 characters) field item_id:")
    assert [it.item_id for it in load_suite(path, strict=False)] == [ids[0]]


def test_names_longer_than_the_limit_are_refused(media_root: Path) -> None:
    # Before: a name of any length was accepted; a 100 kB generator went into the item id of every set-level
    # row (group:generator=<name>), which PostgreSQL's unique index cannot hold, while SQLite took it.
    assert MAX_NAME_BYTES == 255  # a folder name's most: a scanned generator folder always fits
    base = {"video": "videos/ep3.mp4"}
    recs = [{"item_id": "fits", **base, "generator": "g" * MAX_NAME_BYTES,
             "task": "é" * (MAX_NAME_BYTES // 2)},
            {"item_id": "gen", **base, "generator": "x" * 100_000},
            {"item_id": "task", **base, "task": "é" * (MAX_NAME_BYTES // 2 + 1)},
            {"item_id": "view", **base, "views": {"v" * 256: "videos/ep3.mp4"}},
            {"item_id": "rater", **base, "labels": {"pa": 3, "rater": "r" * 256}}]
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    problems = validate_manifest(path)
    assert [(p.line, p.item_id, p.field) for p in problems] == [
        (2, "gen", "generator"), (3, "task", "task"), (4, "view", "views"), (5, "rater", "labels.rater")]
    assert str(problems[0]) == (f"{path}:2: item 'gen' field generator: generator is 100,000 bytes long in "
                                "UTF-8; at most 255 are allowed")
    assert "task is 256 bytes long in UTF-8" in problems[1].message  # two bytes a character
    assert problems[2].message.startswith("view name is 256 bytes long")  # (not the name itself, repeated)
    assert problems[3].message.startswith("labels.rater is 256 bytes long")
    assert [it.item_id for it in load_suite(path, strict=False)] == ["fits"]


def test_clip_id_and_source_may_be_as_long_as_an_item_id(media_root: Path) -> None:
    # The 200-byte name limit refused a clip_id that `suite scan` made of a nested path (a 234-byte folder
    # and the file in it): the scan left the video out, and a manifest that worked lost its row.
    long_path = "d" * 234 + "/sub/" + "clip_" + "x" * 300
    base = {"video": "videos/ep3.mp4"}
    recs = [{"item_id": "nested", **base, "clip_id": long_path, "source": "s/" * 450},
            {"item_id": "longer", **base, "clip_id": "c" * (MAX_ITEM_ID_BYTES + 1)},
            {"item_id": "src", **base, "source": "é" * 501}]
    path = media_root / "suite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    problems = validate_manifest(path)
    assert [(p.item_id, p.field) for p in problems] == [("longer", "clip_id"), ("src", "source")]
    assert problems[0].message == "clip_id is 1,001 bytes long in UTF-8; at most 1,000 are allowed"
    assert [it.clip_id for it in load_suite(path, strict=False)] == [long_path]
