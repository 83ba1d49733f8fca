"""``validate_manifest(media=...)``: videos that cannot be decoded are found before a run."""

from __future__ import annotations

import json
from pathlib import Path

import av
import numpy as np
import pytest

from _encode import mux_frames
from robojudge.suite import load_suite, validate_manifest
from robojudge.video import write_video


def _clip(n: int = 24) -> np.ndarray:
    rng = np.random.default_rng(0)
    canvas = rng.integers(0, 256, (48 + 2 * n, 64 + 3 * n, 3), dtype=np.uint8)
    return np.stack([canvas[2 * i : 2 * i + 48, 3 * i : 3 * i + 64] for i in range(n)])


def _animated_webp(path: Path, frames: np.ndarray) -> Path:
    with av.open(str(path), "w", format="webp") as container:
        stream = container.add_stream("libwebp_anim", rate=8)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        mux_frames(container, stream, (av.VideoFrame.from_ndarray(rgb, format="rgb24") for rgb in frames))
    return path


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    write_video(root / "good.mp4", _clip(), fps=8)
    full = write_video(root / "long.mp4", _clip(40), fps=8).read_bytes()
    (root / "cut.mp4").write_bytes(full[: len(full) // 3])  # index intact, most frames missing
    whole = _animated_webp(root / "anim.webp", _clip(8)).read_bytes()
    (root / "cut.webp").write_bytes(whole[: len(whole) // 2])  # an animated WebP is read whole
    (root / "text.mp4").write_text("not a video at all\n" * 10)
    folder = write_video(root / "frames", _clip(8), fps=8)
    (folder / "fps.txt").unlink()
    rows = [
        {"item_id": "good", "video": "good.mp4", "reference_video": "good.mp4"},
        {"item_id": "cut", "video": "cut.mp4"},
        {"item_id": "webp", "video": "cut.webp"},
        {"item_id": "anim", "video": "anim.webp"},  # animated WebP is read (with Pillow)
        {"item_id": "text", "video": "good.mp4", "views": {"front": "good.mp4", "side": "text.mp4"}},
        {"item_id": "folder", "video": "frames"},
        {"item_id": "bad_row", "video": "good.mp4", "labels": {"pa": 9}},
    ]
    path = root / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _by_item(problems: list) -> dict[str, list[tuple[str | None, str, str]]]:
    out: dict[str, list[tuple[str | None, str, str]]] = {}
    for p in problems:
        out.setdefault(p.item_id, []).append((p.field, p.severity, p.message))
    return out


def test_without_media_checks_only_existence(manifest: Path) -> None:
    assert [p.item_id for p in validate_manifest(manifest)] == ["bad_row"]
    # The cut WebP loads as an item and would fail only when scored.
    assert "webp" in {it.item_id for it in load_suite(manifest, strict=False)}


def test_open_finds_undecodable_videos_as_warnings(manifest: Path) -> None:
    calls: list[tuple[int, int]] = []
    found = _by_item(validate_manifest(manifest, media="open", progress=lambda d, t: calls.append((d, t))))
    assert set(found) == {"webp", "text", "folder", "bad_row"}  # the cut file's first frame decodes
    ((field, severity, message),) = found["webp"]
    assert (field, severity) == ("video", "warning")
    assert message.startswith("cannot be decoded: truncated: the file holds ")
    (field, severity, message), same = found["text"]
    assert (field, severity) == ("views.side", "warning")
    assert message.startswith("cannot be decoded: not a video")
    # Its video is good's file: scored twice, counted twice (views share files freely).
    assert same == ("video", "warning", "the same file as the video of item 'good' (line 1): it is scored "
                                        "twice and counted twice in its groups' means")
    assumed = "no fps.txt in the frame folder; rate assumed to be 30 fps"
    assert found["folder"] == [("video", "warning", assumed)]
    assert found["bad_row"][0][:2] == ("labels.pa", "error")  # invalid rows are not opened
    # One look per distinct file: good.mp4 serves four fields, bad_row's video is not looked at.
    assert calls == [(i, 6) for i in range(1, 7)]


def test_deep_decodes_everything_and_makes_failures_errors(manifest: Path) -> None:
    problems = validate_manifest(manifest, media="deep", workers=2)
    found = _by_item(problems)
    assert set(found) == {"cut", "webp", "text", "folder", "bad_row"}
    ((field, severity, message),) = found["cut"]
    assert (field, severity) == ("video", "error")
    assert message.startswith("cannot be decoded: truncated: decoded ") and "of 40 declared frames" in message
    assert found["webp"][0][:2] == ("video", "error") and "truncated: the file holds" in found["webp"][0][2]
    assert found["text"][0][:2] == ("views.side", "error")
    assert found["folder"][0][1] == "warning"  # an assumed rate is worth a look, not a failure
    # Problems stay in file order, located by line.
    assert [p.line for p in problems] == sorted(p.line for p in problems)
    webp = next(p for p in problems if p.item_id == "webp")
    assert str(webp).startswith(f"{manifest}:3: item 'webp' field video:")


def test_unknown_media_mode(manifest: Path) -> None:
    with pytest.raises(ValueError, match="media must be one of none, open, deep"):
        validate_manifest(manifest, media="full")


def test_deep_warns_of_a_video_of_one_frame(tmp_path: Path) -> None:
    write_video(tmp_path / "one.mp4", _clip(1), fps=8)
    write_video(tmp_path / "two.mp4", _clip(2), fps=8)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"item_id": n, "video": f"{n}.mp4"}) + "\n" for n in ("one", "two")))
    found = _by_item(validate_manifest(path, media="deep"))
    assert found == {"one": [("video", "warning", "decodes to 1 frame; the metrics that compare frames "
                                                  "(motion, consistency, flicker) leave it unscored")]}
    assert validate_manifest(path, media="open") == []  # only a full decode counts the frames


def test_a_state_file_that_is_no_npz_archive_is_named_before_a_run(tmp_path: Path) -> None:
    """Every metric reading it would fail on it; validate says so once, with line, item and field. A
    real npz passes, a state folder is not opened, and --no-media opens nothing."""
    write_video(tmp_path / "v.mp4", _clip(4), fps=8)
    np.savez(tmp_path / "good.npz", ee_pos=np.zeros((4, 3)))
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("ee_pos: 1 2 3\n")
    (tmp_path / "folder").mkdir()
    states = ["good.npz", "one.npy", "empty.npz", "text.npz", "folder"]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": f"s{k}", "video": "v.mp4", "state": s}) + "\n"
                                for k, s in enumerate(states)))
    found = [p for p in validate_manifest(manifest, media="open") if p.field == "state"]
    assert [(p.line, p.item_id, p.is_error) for p in found] == [(2, "s1", True), (3, "s2", True),
                                                                (4, "s3", True)]
    assert "single .npy array" in found[0].message and "empty (0 bytes)" in found[1].message
    assert "not an npz archive" in found[2].message and str(tmp_path / "text.npz") in found[2].message
    assert not [p for p in validate_manifest(manifest, media="none") if p.field == "state"]


def test_one_file_as_the_video_of_two_items_is_a_warning(tmp_path: Path) -> None:
    """A link, or two spellings of one path, passed validate: the same clip was scored twice and
    counted twice in its generator's mean, or stood for two generators. A copy is another file; a
    shared reference is fine."""
    (tmp_path / "a").mkdir()
    write_video(tmp_path / "a" / "ep.mp4", _clip(4), fps=8)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "ep.mp4").symlink_to(tmp_path / "a" / "ep.mp4")
    (tmp_path / "c.mp4").write_bytes((tmp_path / "a" / "ep.mp4").read_bytes())
    rows = [("a1", "a/ep.mp4"), ("b1", "b/ep.mp4"), ("a2", "./a/../a/ep.mp4"), ("c1", "c.mp4")]
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": i, "video": v, "reference_video": "c.mp4"}) + "\n"
                                for i, v in rows))
    found = [(p.line, p.item_id, p.field, p.severity) for p in validate_manifest(manifest, media="open")]
    assert found == [(2, "b1", "video", "warning"), (3, "a2", "video", "warning")]
    assert all("item 'a1' (line 1)" in p.message for p in validate_manifest(manifest, media="open"))
    # One clip under two instructions (an instruction-alignment study) is a design: no warning.
    manifest.write_text("".join(json.dumps({"item_id": i, "video": "a/ep.mp4", "instruction": t}) + "\n"
                                for i, t in (("push", "push the cup"), ("lift", "lift the cup"))))
    assert validate_manifest(manifest, media="open") == []
