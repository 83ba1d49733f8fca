"""A manifest read block by block: until its last block is planned, the progress line and the time
estimate say they cover the blocks planned so far. They read as the whole run ("1997/4000 results
(50%) ... about 0 s left" at a fifth of a 10,000-item run)."""

from __future__ import annotations

import json
from pathlib import Path

from robojudge.run import RunSummary, score_suite
from robojudge.run._progress import estimate_line, progress_line


def test_the_summary_says_whether_every_block_is_planned(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text("".join(json.dumps({"item_id": f"i{k}", "video": "v.mp4"}) + "\n"
                                              for k in range(5)))
    (tmp_path / "v.mp4").write_bytes(b"")
    seen: list[tuple[bool, int]] = []
    run = score_suite(tmp_path / "s.jsonl", ["uniform_random"], db=str(tmp_path / "r.sqlite"), block=2,
                      progress=lambda row, s: seen.append((s.all_planned, s.total)))
    assert run.summary.total == 5 and run.summary.all_planned
    flags = [flag for flag, _ in seen]
    assert flags[0] is False and flags[-1] is True and flags == sorted(flags)  # False until the last block
    assert all(total < 5 for flag, total in seen if not flag)


def test_the_lines_say_they_cover_the_blocks_planned_so_far() -> None:
    s = RunSummary(total=4000, ok=1997, estimate_s=600.0, estimate_settled=True, all_planned=False)
    assert progress_line(s, 20.0).startswith("scoring: 1997/4000 results planned so far (50%)")
    assert progress_line(s, 20.0).endswith("left for those")
    assert "remaining 2003 results of the manifest's first blocks" in (estimate_line(s) or "")
    whole = RunSummary(total=4000, ok=1997, estimate_s=600.0, estimate_settled=True)
    assert progress_line(whole, 20.0).startswith("scoring: 1997/4000 results (50%)")
    assert "first blocks" not in (estimate_line(whole) or "x")
    assert not progress_line(whole, 20.0).endswith("those")


def test_a_resume_with_most_blocks_stored_plans_block_by_block(tmp_path: Path) -> None:
    # The look ahead for other runs' results (64 tasks) read on through blocks whose tasks were all stored:
    # every block was planned before the first result (review rev16 F4).
    (tmp_path / "v.mp4").write_bytes(b"")
    rows = [{"item_id": f"i{k:04d}", "video": "v.mp4"} for k in range(600)]
    (tmp_path / "part.jsonl").write_text("".join(json.dumps(r) + "\n" for k, r in enumerate(rows) if k % 50))
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_suite(tmp_path / "part.jsonl", ["uniform_random"], db=str(tmp_path / "r.sqlite"), block=100)
    seen: list[tuple[int, bool]] = []
    run = score_suite(tmp_path / "s.jsonl", ["uniform_random"], db=str(tmp_path / "r.sqlite"), block=100,
                      progress=lambda row, s: seen.append((s.total, s.all_planned)))
    assert (run.summary.total, run.summary.ok) == (600, 12)
    assert seen[0] == (100, False)  # the first block's result, with only that block planned
