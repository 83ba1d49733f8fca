"""The app's WebM cache keeps only what the videos need: an encoding made before its video changed goes when
the video is encoded again, ``robojudge annotate cache --clean`` removes the encodings no video gives any
more and the files of stopped encodes, and a new encode removes the latter too.

Before, every edit, ``chmod`` or move of a clip added a whole new encoding beside the old one, a server
killed while encoding left its ``.part.webm`` for ever, and nothing removed either (audit "leftovers",
finding 2).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.annotate.web._folders import playable
from robojudge.cli import app as cli_app
from robojudge.video import FileFingerprint, write_video

TWO_HOURS_AGO = time.time() - 7200  # twice LEFT_BEHIND_S: what a killed encode left


def _clip(folder: Path, shade: int = 40) -> Path:
    """A frame folder (never played as it is: always encoded)."""
    write_video(folder, np.full((3, 16, 16, 3), shade, np.uint8), fps=10)
    return folder


def _chmod(clip: Path) -> None:
    """Change the clip's fingerprint and not one pixel, as ``chmod -R`` does (a frame's change time)."""
    before = FileFingerprint.of(clip).parts()
    frame = min(p for p in clip.iterdir() if p.suffix == ".png")
    mode = frame.stat().st_mode & 0o777
    while FileFingerprint.of(clip).parts() == before:  # the clock may not have moved since the write
        time.sleep(0.01)
        mode ^= 0o004
        os.chmod(frame, mode)


def _old(path: Path, data: bytes = b"half") -> Path:
    path.write_bytes(data)
    os.utime(path, (TWO_HOURS_AGO, TWO_HOURS_AGO))
    return path


def test_an_encoding_made_before_its_video_changed_goes_when_it_is_encoded_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clip = _clip(tmp_path / "clip")
    first = playable(clip, cache_dir=cache)
    other = playable(_clip(tmp_path / "other", 90), cache_dir=cache)  # another video's: kept
    root = first.parent
    killed = _old(root / f"{'1' * 32}.4242.140000.part.webm")  # a server killed while encoding
    running = root / f"{'2' * 32}.4343.140000.part.webm"  # an encode going on now
    running.write_bytes(b"half")
    _chmod(clip)
    again = playable(clip, cache_dir=cache)
    assert again != first and not first.exists()
    assert sorted(root.glob("*.webm")) == sorted([again, other, running])
    notes = [json.loads(p.read_text()) for p in root.glob("*.json")]
    assert sorted(n["source"] for n in notes) == sorted([str(clip), str(tmp_path / "other")])
    assert not killed.exists()
    assert playable(clip, cache_dir=cache) == again  # served from the cache, not encoded a third time


def test_clean_removes_what_no_video_gives_any_more_and_what_stopped_encodes_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from robojudge.annotate.web import _folders, media_cache

    cache = tmp_path / "cache"
    kept_clip, moved_clip, changed_clip, older_clip = (_clip(tmp_path / n, s) for n, s in
                                                       (("kept", 10), ("moved", 60), ("changed", 110),
                                                        ("older", 160)))
    kept = playable(kept_clip, cache_dir=cache)
    moved = playable(moved_clip, cache_dir=cache)
    changed = playable(changed_clip, cache_dir=cache)
    with monkeypatch.context() as m:  # as a robojudge whose reader gives other frames encoded it
        m.setattr(_folders, "READER_VERSION", "4")
        older = playable(older_clip, cache_dir=cache)
    root = kept.parent
    moved_clip.rename(tmp_path / "moved-elsewhere")  # a suite moved (`annotate relocate`)
    _chmod(changed_clip)  # changed, and not viewed since
    unnoted = root / f"{'0' * 32}.webm"  # made by a robojudge before the notes: its video is unknown
    unnoted.write_bytes(b"webm")
    killed = _old(root / f"{'1' * 32}.4242.140000.part.webm")
    running = root / f"{'2' * 32}.4343.140000.part.webm"
    running.write_bytes(b"half")
    lone_note = _old(root / f"{'3' * 32}.{'4' * 16}.json", b"{}")  # its encode was stopped before the rename
    before = sorted(root.iterdir())

    look = media_cache(cache)
    assert look.folder == root and look.encodings == 5 and not look.removed
    assert look.size == sum(p.stat().st_size for p in (kept, moved, changed, older, unnoted))
    assert sorted(look.stale) == sorted([moved, changed, older, unnoted]) and look.unnoted == 1
    assert look.stale_size == look.size - kept.stat().st_size
    assert sorted(look.left_behind) == sorted([killed, lone_note])
    assert sorted(root.iterdir()) == before  # looking removes nothing

    done = media_cache(cache, clean=True)
    assert done.removed and sorted(done.stale) == sorted(look.stale)
    left = sorted(p.name for p in root.iterdir())
    assert len(left) == 3 and kept.name in left and running.name in left
    assert [n for n in left if n.endswith(".json")][0].startswith(kept.stem + ".")  # the kept one's note
    made = kept.stat().st_mtime_ns
    assert playable(kept_clip, cache_dir=cache) == kept and kept.stat().st_mtime_ns == made  # not made again
    assert media_cache(cache).stale == []


def test_the_cache_command_says_where_the_cache_is_and_cleans_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(cache))
    clip = _clip(tmp_path / "clip")
    first = playable(clip)
    _chmod(clip)
    playable(_clip(tmp_path / "other", 90))
    _old(first.parent / f"{'1' * 32}.4242.140000.part.webm")
    runner = CliRunner()
    said = " ".join(runner.invoke(cli_app, ["annotate", "cache"]).output.split())
    assert f"WebM cache {cache / 'annotate-media'}: 2 encoding(s)" in said
    assert "1 encoding(s) (0.0 MB) no video gives any more" in said
    assert "1 file(s) left by encodes that were stopped" in said
    assert "`robojudge annotate cache --clean` removes them" in said and first.exists()
    result = runner.invoke(cli_app, ["annotate", "cache", "--clean"])
    assert result.exit_code == 0 and "removed them" in result.output and not first.exists()
    said = " ".join(runner.invoke(cli_app, ["annotate", "cache"]).output.split())
    assert ": 1 encoding(s)" in said and "0 encoding(s) (0.0 MB) no video" in said and "--clean" not in said


def test_an_empty_or_missing_cache_is_said_so(tmp_path: Path) -> None:
    from robojudge.annotate.web import media_cache

    look = media_cache(tmp_path / "nothing", clean=True)
    assert (look.encodings, look.stale, look.left_behind) == (0, [], [])
    assert not (tmp_path / "nothing").exists()


def test_clean_leaves_the_files_the_cache_did_not_write(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A WebM, a JSON or a hidden ``.tmp`` that robojudge did not name is not counted and not removed,
    however old; the command says how many it left (audit rev3, finding 2: ``--clean`` removed them)."""
    from robojudge.annotate.web import media_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("ROBOJUDGE_CACHE_DIR", str(cache))
    kept = playable(_clip(tmp_path / "clip"))
    root = kept.parent
    foreign = [root / "lecture.webm", _old(root / "settings.json", b'{"a": 1}'), _old(root / ".draft.tmp"),
               _old(root / "lecture.1.2.part.webm"), _old(root / f"{'a' * 32}.notes.json", b"{}"),
               root / f"{'A' * 32}.webm"]
    (root / "lecture.webm").write_bytes(b"data")
    (root / f"{'A' * 32}.webm").write_bytes(b"data")
    ours = _old(root / f"{'1' * 32}.4242.140000.part.webm")  # beside them, a killed encode's file still goes

    look = media_cache(cache)
    assert look.encodings == 1 and look.stale == [] and look.left_behind == [ours]
    assert look.not_ours == sorted(foreign)
    result = CliRunner().invoke(cli_app, ["annotate", "cache", "--clean"])
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and "1 file(s) left by encodes that were stopped" in said
    assert "6 other file(s) not named as the cache names its own" in said and "left as they are" in said
    assert all(p.exists() for p in foreign) and kept.exists() and not ours.exists()
