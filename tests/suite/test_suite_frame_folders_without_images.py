"""A folder given as ``video`` that holds no frame image can never be read: an error at load time, as an
empty folder is, saying what the folder holds (audit suiteio F7: a folder of videos passed ``suite
validate`` with a warning calling it empty, and every metric of the item stored an error row)."""

from __future__ import annotations

import json
from pathlib import Path

from robojudge.suite import load_suite, validate_manifest


def _write(folder: Path, rows: list[dict[str, str]], name: str = "m.jsonl") -> Path:
    manifest = folder / name
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest


def test_a_folder_of_videos_given_as_video_is_an_error(tmp_path: Path) -> None:
    for name in ("a.mp4", "b.MOV"):
        (tmp_path / "videos" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "videos" / name).write_bytes(b"x")
    (tmp_path / "tif").mkdir()
    for k in range(3):
        (tmp_path / "tif" / f"{k:04d}.tif").write_bytes(b"x")
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "0001.png").write_bytes(b"x")
    (tmp_path / "frames" / "clip.mp4").write_bytes(b"x")
    manifest = _write(tmp_path, [{"item_id": "vids", "video": "videos"}, {"item_id": "tifs", "video": "tif"},
                                 {"item_id": "pngs", "video": "frames"}])
    problems = validate_manifest(manifest)
    got = {p.item_id: (p.severity, p.message) for p in problems}
    assert got["vids"] == ("error", "videos is a folder that holds 2 video file(s) and no images "
                                    "(.bmp/.jpeg/.jpg/.png/.webp): name one video file (or list them with "
                                    "`robojudge suite scan`)")
    assert got["tifs"] == ("error", "tif is a folder that holds 3 file(s) (.tif) and no frame images "
                                    "(.bmp/.jpeg/.jpg/.png/.webp): convert the frames to PNG, or name a "
                                    "video file")
    assert "pngs" not in got  # a folder with an image is a frame folder (what the frames are like: media)
    assert [it.item_id for it in load_suite(manifest, strict=False)] == ["pngs"]
