"""``robojudge suite scan`` on views: the reference of the main view, and what the views found deserve a
note on (sets that differ between items, names that differ only in case)."""

from __future__ import annotations

from pathlib import Path

from _scan_files import by_id, touch

from robojudge.suite import scan_folder

PATTERN = r"(?P<generator>[^/]+)/(?P<clip_id>ep\d+)_(?P<view>\w+)"




def test_a_view_group_in_the_reference_pattern_gives_each_item_the_reference_of_its_main_view(
    tmp_path: Path,
) -> None:
    videos, refs = tmp_path / "videos", tmp_path / "ref"
    touch(videos, "wan/ep01_cam0.mp4", "wan/ep01_cam1.mp4", "wan/ep02_cam0.mp4", "wan/ep02_cam1.mp4")
    touch(refs, "ep01_cam0.mp4", "ep01_cam1.mp4", "ep02_cam0.mp4")
    # Refused before ("reference pattern group(s) view name no field"), so per-view references could not
    # be told apart: a cam1 rollout got the cam0 recording.
    result = scan_folder(videos, pattern=PATTERN, main_view="cam1", references=refs,
                         reference_pattern=r"(?P<clip_id>ep\d+)_(?P<view>cam\d)")
    items = by_id(result.items)
    assert items["wan/ep01"]["reference_video"] == str(refs / "ep01_cam1.mp4")
    assert "reference_video" not in items["wan/ep02"]
    assert ("1 item(s) have references of their clip in other views only, none is taken (first: wan/ep02, "
            "main view 'cam1'; its references show cam0)") in result.notes
    # ep01_cam0 and ep02_cam0 match their clips (in another view): not "match no clip", which sent the user
    # to debug a --reference-pattern that works.
    assert not any("match no clip" in n for n in result.notes), result.notes
    assert (f"2 reference video(s) of a clip's other views than its items' main view are not used (first: "
            f"{refs / 'ep01_cam0.mp4'})") in result.notes
    first = by_id(scan_folder(videos, pattern=PATTERN, references=refs,
                               reference_pattern=r"(?P<clip_id>ep\d+)_(?P<view>cam\d)").items)
    assert first["wan/ep02"]["reference_video"] == str(refs / "ep02_cam0.mp4")  # main view cam0 by default
    assert not any("names no view" in n for n in result.notes), result.notes


def test_a_reference_that_names_no_view_is_noted_for_items_with_views(tmp_path: Path) -> None:
    videos, refs = tmp_path / "videos", tmp_path / "ref"
    touch(videos, "wan/ep01_cam0.mp4", "wan/ep01_cam1.mp4", "wan/ep02_cam0.mp4")
    touch(refs, "ep01.mp4", "ep02.mp4")
    result = scan_folder(videos, pattern=PATTERN, main_view="cam1", references=refs)
    items = by_id(result.items)
    # Which camera the recording shows is not known: it is attached, and the note says what is assumed.
    assert items["wan/ep01"]["reference_video"] == str(refs / "ep01.mp4")
    assert ("1 item(s) with views were given a reference video that names no view (first: wan/ep01, main "
            "view 'cam1'): the metrics take it to show the main view") in " ".join(result.notes)


def test_items_with_fewer_views_and_view_names_differing_in_case_are_noted(tmp_path: Path) -> None:
    videos = tmp_path / "videos"
    touch(videos, "wan/ep01_a.mp4", "wan/ep01_b.mp4", "wan/ep01_c.mp4", "wan/ep02_a.mp4", "wan/ep02_b.mp4",
           "wan/ep03_C.mp4", "wan/ep03_a.mp4")
    result = scan_folder(videos, pattern=PATTERN, main_view="a")
    assert {k: sorted(v["views"]) for k, v in by_id(result.items).items()} == {
        "wan/ep01": ["a", "b", "c"], "wan/ep02": ["a", "b"], "wan/ep03": ["C", "a"]}
    # Written without a word before: C a fourth view, and RIGIS averaging items of two and three views.
    case = ("1 group(s) of view names differ only in case (first: 'C' in wan/ep03; 'c' in wan/ep01): each is "
            "a view of its own")
    assert any(n.startswith(case) for n in result.notes), result.notes
    assert any(n.startswith("3 of 3 item(s) made from views lack view(s) other items have (first: wan/ep01, "
                            "without C; views found: C, a, b, c)") for n in result.notes), result.notes
    # With main view c, ep03 is left out for having no c: the case note says it has C.
    left = scan_folder(videos, pattern=PATTERN, main_view="c")
    assert "2 item(s) have no view 'c', left out (first: wan/ep02)" in left.notes
    assert any(n.startswith(case) for n in left.notes), left.notes
    # Views that agree: no note.
    same = tmp_path / "same"
    touch(same, "wan/ep01_a.mp4", "wan/ep01_b.mp4", "wan/ep02_a.mp4", "wan/ep02_b.mp4")
    assert not any("view" in n for n in scan_folder(same, pattern=PATTERN).notes)
