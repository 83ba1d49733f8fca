"""Every manifest format loads to the same items, with paths resolved against the manifest's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from suite_manifest_helpers import flatten, json_cells, rows, write_csv, write_jsonl, write_parquet

from robojudge.suite import Item, ManifestError, load_suite, main_view_name


def _expected(root: Path) -> list[Item]:
    return [Item.model_validate(r).resolve(root) for r in rows()]


def _write(kind: str, root: Path) -> Path:
    rs = rows()
    if kind == "jsonl":
        return write_jsonl(root / "suite.jsonl", rs)
    if kind == "ndjson":
        return write_jsonl(root / "suite.ndjson", rs)
    if kind == "json-list":
        (root / "suite.json").write_text(json.dumps(rs))
        return root / "suite.json"
    if kind == "json-items":
        (root / "suite.json").write_text(json.dumps({"items": rs}))
        return root / "suite.json"
    if kind == "csv-dotted":
        return write_csv(root / "suite.csv", [flatten(r) for r in rs])
    if kind == "csv-json-cells":
        return write_csv(root / "suite.csv", [json_cells(r) for r in rs])
    if kind == "parquet-struct":
        return write_parquet(root / "suite.parquet", rs)
    if kind == "parquet-dotted":
        return write_parquet(root / "suite.parquet", [flatten(r) for r in rs])
    if kind == "parquet-json-cells":
        return write_parquet(root / "suite.parquet", [json_cells(r) for r in rs])
    raise AssertionError(kind)


KINDS = [
    "jsonl",
    "ndjson",
    "json-list",
    "json-items",
    "csv-dotted",
    "csv-json-cells",
    "parquet-struct",
    "parquet-dotted",
    "parquet-json-cells",
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_format_loads_the_same_items(kind: str, media_root: Path) -> None:
    suite = load_suite(_write(kind, media_root))
    assert suite.ok
    assert suite.items == _expected(media_root)
    assert [it.item_id for it in suite] == ["ep1", "ep2", "ep3"]
    assert len(suite) == 3


def test_parquet_written_by_pandas_with_nan_cells(media_root: Path) -> None:
    pd = pytest.importorskip("pandas")
    # Integer columns with gaps become float64 with NaN in pandas; NaN must mean "absent".
    df = pd.DataFrame([flatten(r) for r in rows()])
    assert df["labels.ia"].dtype == "float64"
    path = media_root / "suite.parquet"
    df.to_parquet(path, index=False)
    assert load_suite(path).items == _expected(media_root)


def test_parquet_map_column_for_views(media_root: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rs = rows()
    views = pa.array(
        [list(r["views"].items()) if "views" in r else None for r in rs],
        type=pa.map_(pa.string(), pa.string()),
    )
    table = pa.table(
        {"item_id": [r["item_id"] for r in rs], "video": [r["video"] for r in rs], "views": views}
    )
    path = media_root / "suite.parquet"
    pq.write_table(table, path)
    suite = load_suite(path)
    assert suite.by_id("ep1").views == {
        "front": str(media_root / "videos/ep1.mp4"),
        "wrist": str(media_root / "videos/ep1_wrist.mp4"),
    }
    assert suite.by_id("ep2").views is None


def test_paths_resolve_against_the_manifest_folder(
    media_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(media_root / "suite.jsonl", rows())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    suite = load_suite(Path("..") / "suite" / "suite.jsonl")
    assert suite.root == media_root
    assert suite.path == media_root / "suite.jsonl"
    ep1 = suite.by_id("ep1")
    assert ep1.video == str((media_root / "videos/ep1.mp4").resolve())
    assert ep1.initial_frame == str((media_root / "frames/ep1.png").resolve())
    assert ep1.reference_video == str((media_root / "real/ep1.mp4").resolve())
    assert ep1.state == str((media_root / "state/ep1.npz").resolve())
    assert ep1.views is not None and ep1.views["wrist"] == str(
        (media_root / "videos/ep1_wrist.mp4").resolve()
    )
    assert Path(suite.by_id("ep2").video).is_dir()  # a frame folder


def test_manifest_in_a_subfolder_and_absolute_paths(media_root: Path, tmp_path: Path) -> None:
    sub = tmp_path / "manifests"
    sub.mkdir()
    r = rows()[2]
    r["video"] = str(media_root / "videos/ep3.mp4")  # absolute
    r2 = {"item_id": "rel", "video": "../suite/videos/ep1.mp4"}  # relative to the manifest folder
    suite = load_suite(write_jsonl(sub / "m.jsonl", [r, r2]))
    assert suite.by_id("ep3").video == str((media_root / "videos/ep3.mp4").resolve())
    assert suite.by_id("rel").video == str((media_root / "videos/ep1.mp4").resolve())
    assert suite.path == (sub / "m.jsonl").absolute()
    assert suite.root == sub.absolute()


def test_by_id_unknown_raises_key_error(media_root: Path) -> None:
    suite = load_suite(write_jsonl(media_root / "suite.jsonl", rows()))
    with pytest.raises(KeyError, match="nope"):
        suite.by_id("nope")


def test_integer_ids_become_strings(media_root: Path) -> None:
    suite = load_suite(
        write_jsonl(media_root / "s.jsonl", [{"item_id": 7, "video": "videos/ep3.mp4", "clip_id": 12}])
    )
    assert suite.items[0].item_id == "7"
    assert suite.items[0].clip_id == "12"


def test_csv_numeric_strings_become_ints_and_meta_stays_text(media_root: Path) -> None:
    suite = load_suite(write_csv(media_root / "s.csv", [flatten(r) for r in rows()]))
    ep1 = suite.by_id("ep1")
    assert ep1.labels is not None and ep1.labels.pa == 4 and ep1.labels.overall == 6
    assert ep1.meta == {"seed": "3", "fps": "16"}
    assert suite.by_id("ep3").labels is None and suite.by_id("ep3").meta == {}


def test_csv_json_cell_and_dotted_columns_merge(media_root: Path) -> None:
    row = {"item_id": "x", "video": "videos/ep3.mp4", "labels": json.dumps({"pa": 3}), "labels.ia": "5"}
    suite = load_suite(write_csv(media_root / "s.csv", [row]))
    labels = suite.items[0].labels
    assert labels is not None and (labels.pa, labels.ia) == (3, 5)


def test_jsonl_blank_lines_are_skipped_and_lines_counted(media_root: Path) -> None:
    lines = [
        "",
        json.dumps(rows()[0]),
        "   ",
        "",
        json.dumps({"item_id": "bad", "video": "videos/ep3.mp4", "instruction": 1}),
    ]
    path = media_root / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    suite = load_suite(path, strict=False)
    assert [it.item_id for it in suite] == ["ep1"]
    assert [(p.line, p.field) for p in suite.problems] == [(5, "instruction")]


def test_unknown_suffix_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("- item_id: a\n")
    with pytest.raises(ManifestError, match=r"unknown manifest format.*\.jsonl"):
        load_suite(path, strict=False)


def test_a_video_given_as_the_manifest_points_to_suite_scan(tmp_path: Path) -> None:
    (tmp_path / "clips").mkdir()
    video = tmp_path / "clips" / "ep1.MP4"
    video.write_bytes(b"not read")
    expect = (r"unknown manifest format \(suffix '.mp4'\).*a video is not a manifest: "
              r"`robojudge suite scan .*clips`")
    with pytest.raises(ManifestError, match=expect):
        load_suite(video, strict=False)
    with pytest.raises(ManifestError) as info:  # any other suffix gets no such hint
        load_suite(tmp_path / "suite.yaml", strict=False)
    assert "suite scan" not in str(info.value)


def test_a_folder_given_as_the_manifest_points_to_suite_scan(tmp_path: Path) -> None:
    (tmp_path / "videos").mkdir()
    expect = r"videos: is a folder, not a manifest; `robojudge suite scan .*videos` writes one"
    with pytest.raises(ManifestError, match=expect):
        load_suite(tmp_path / "videos")


def test_main_view_name() -> None:
    base = {"item_id": "a", "video": "f.mp4"}
    assert main_view_name(Item.model_validate(base)) is None
    views = {"wrist": "w.mp4", "front": "f.mp4"}
    assert main_view_name(Item.model_validate({**base, "views": views})) == "front"  # path equals video
    assert main_view_name(Item.model_validate({**base, "views": views, "main_view": "wrist"})) == "wrist"
    other = {"item_id": "a", "video": "x.mp4", "views": views}
    assert main_view_name(Item.model_validate(other)) == "wrist"  # first listed
