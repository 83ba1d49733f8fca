"""A score run keeps only the first error rows in its summary (the store has them all): a long run whose
share went away kept every failed row in memory, about 1.6 KB each, to print 20 of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robojudge.cli._common import print_summary
from robojudge.run import _score, score_suite
from robojudge.store import ResultStore


def test_the_summary_keeps_the_first_failures_and_counts_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_score, "KEPT_ERRORS", 3)
    lines = []
    for k in range(5):
        (tmp_path / f"v{k}.mp4").write_bytes(b"not a video")
        lines.append(json.dumps({"item_id": f"i{k}", "video": f"v{k}.mp4"}) + "\n")
    (tmp_path / "s.jsonl").write_text("".join(lines))
    db = str(tmp_path / "r.sqlite")
    summary = score_suite(tmp_path / "s.jsonl", ["pixel_frame_consistency"], db=db).summary
    assert (summary.failed, len(summary.errors)) == (5, 3)
    with ResultStore(db) as store:
        assert store.count(status="error") == 5
    print_summary(summary, max_errors=2)
    out = capsys.readouterr().out
    assert "5 failed" in out and "... and 3 more (see `robojudge results export`)" in out
