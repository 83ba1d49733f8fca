"""A video rewritten while a run is going on: the results computed from it are not stored under the
fingerprint the run planned with (the old file's), so putting the old file back cannot make another
video's value look up to date; the pair stays to do and the next run computes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from robojudge.cli._common import print_summary
from robojudge.run import score_suite
from robojudge.store import ResultStore
from robojudge.video import write_video

METRIC = "pixel_frame_consistency"


def _video(path: Path, shift: int) -> None:
    frames = np.zeros((8, 32, 32, 3), np.uint8)
    for t in range(8):
        frames[t, 8:16, shift + t:shift + t + 6] = 220
    write_video(path, frames, fps=4)


def test_a_video_replaced_mid_run_is_not_stored_under_its_old_fingerprint(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    for n, shift in enumerate((0, 4, 12)):
        _video(tmp_path / f"v{n}.mp4", shift)
    shutil.copy(tmp_path / "v2.mp4", tmp_path / "v2.orig.mp4")
    manifest = tmp_path / "s.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": f"i{n}", "video": f"v{n}.mp4", "instruction": "x"})
                                + "\n" for n in range(3)))
    swapped = []

    seen = []

    def swap(row, summary) -> None:  # type: ignore[no-untyped-def]
        seen.append(row.item_id)  # every computed result advances the progress, stored or not
        if not swapped:  # after the first result, before i2 is computed: i2's video becomes i0's
            shutil.copy(tmp_path / "v0.mp4", tmp_path / "v2.mp4")
            swapped.append(row.item_id)

    run = score_suite(manifest, [METRIC], run_dir=tmp_path / "run", workers=1, progress=swap)
    assert swapped == ["i0"] and seen == ["i0", "i1", "i2"]
    assert (run.summary.ok, run.summary.changed_inputs, run.summary.changed_items) == (2, 1, ["i2"])
    assert run.summary.computed == run.summary.total == 3
    print_summary(run.summary)
    assert "1 results not stored: their inputs changed while they were computed (i2)" in " ".join(
        capsys.readouterr().out.split())
    with ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert sorted(r.item_id for r in store.rows()) == ["i0", "i1"]
    # the old file put back (a restore, a re-sync): i2 is computed from it, not left with i0's value
    shutil.copy(tmp_path / "v2.orig.mp4", tmp_path / "v2.mp4")
    again = score_suite(manifest, [METRIC], run_dir=tmp_path / "run", workers=1)
    assert (again.summary.ok, again.summary.skipped, again.summary.changed_inputs) == (1, 2, 0)
    fresh = score_suite(manifest, [METRIC], run_dir=tmp_path / "fresh", workers=1)
    with (ResultStore(tmp_path / "run" / "results.sqlite", read_only=True) as store,
          ResultStore(tmp_path / "fresh" / "results.sqlite", read_only=True) as ref):
        mine = {r.item_id: r.value for r in store.rows()}
        assert mine == {r.item_id: r.value for r in ref.rows()}
        assert mine["i2"] != mine["i0"]
    assert fresh.summary.ok == 3


def test_one_look_takes_each_digest_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The check after computing fingerprints each of a task's metrics: within one_look a path is looked
    at once (a frame folder is a stat per image), outside it every time."""
    from robojudge.run import _filehash

    calls = []
    real = _filehash.FileHasher.digest

    def counted(self, path):  # type: ignore[no-untyped-def]
        calls.append(str(path))
        return real(self, path)

    monkeypatch.setattr(_filehash.FileHasher, "digest", counted)
    _video(tmp_path / "v.mp4", 0)
    with _filehash.one_look():
        first = _filehash.file_digest(tmp_path / "v.mp4")
        assert _filehash.file_digest(str(tmp_path / "v.mp4")) == first
    assert len(calls) == 1
    assert _filehash.file_digest(tmp_path / "v.mp4") == first and len(calls) == 2


def test_score_judge_and_sets_share_one_rule_for_inputs_changed_meanwhile() -> None:
    """`settle`: same inputs, kept; rewritten, not stored; unreadable now, a value is kept under the
    planned fingerprint (score dropped it as changed, judge kept it) and an error takes the fingerprint
    of now; a row without a fingerprint is kept as it is."""
    from robojudge.run._fingerprint import Fingerprint, settle
    from robojudge.store import ResultRow

    ok = ResultRow("i", "m", "h", "1", "ok", 1.0, fingerprint="planned")
    err = ResultRow("i", "m", "h", "1", "error", None, error="x", fingerprint="planned")
    assert settle(ok, Fingerprint("planned")) is ok
    assert settle(ok, Fingerprint("rewritten")) is None and settle(err, Fingerprint("rewritten")) is None
    gone = Fingerprint("gone", unavailable=True)
    assert settle(ok, gone) is ok
    settled = settle(err, gone)
    assert settled is not None and settled.fingerprint == "gone"
    bare = ResultRow("i", "m", "h", "1", "ok", 1.0)
    assert settle(bare, Fingerprint("rewritten")) is bare
