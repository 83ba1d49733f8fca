"""Plain progress lines, the time estimate and the per-metric time of ``robojudge score``."""

from __future__ import annotations

import json
import os
import pty
import re
import time
from pathlib import Path

import _toy_metrics  # noqa: F401  (registers the test metrics; tests/run is on sys.path)
import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import build_app
from robojudge.cli._common import err_console, scoring_progress
from robojudge.run import RunSummary
from robojudge.run._progress import EstimateOnce, ProgressLines, estimate_line, progress_line
from robojudge.store import ResultRow
from robojudge.video import write_video

ROW = ResultRow("i", "m", "h", "1", "ok", 1.0)


def test_progress_line_counts_what_is_left_to_compute() -> None:
    assert progress_line(None, 5) == "scoring: no result yet, 5 s elapsed"
    s = RunSummary(total=10, skipped=2, ok=3, failed=1, estimate_s=400.0)
    # An estimate from too few results per metric is not shown.
    assert progress_line(s, 125) == "scoring: 4/8 results (50%), 1 failed, 2.1 min elapsed"
    s.estimate_settled = True
    assert progress_line(s, 125) == ("scoring: 4/8 results (50%), 1 failed, 2.1 min elapsed, "
                                     "about 6.7 min left")
    assert progress_line(s, 125, since_estimate=100).endswith("about 5.0 min left")
    assert progress_line(s, 125, since_estimate=900).endswith("about 0 s left")
    s.ok, s.estimate_s = 7, 0.0
    assert progress_line(s, 7200) == "scoring: 8/8 results (100%), 1 failed, 2.0 h elapsed"


def test_estimate_is_announced_once_and_only_when_long() -> None:
    lines: list[str] = []
    inner: list[ResultRow] = []
    cb = EstimateOnce(lines.append, lambda row, s: inner.append(row))
    s = RunSummary(total=100, ok=1)
    cb(ROW, s)  # nothing measured yet
    s.estimate_s = 30.0
    cb(ROW, s)  # too short to announce
    assert lines == [] and estimate_line(s) is None
    s.ok, s.estimate_s = 2, 3000.0
    cb(ROW, s)  # long, but not settled: some metric was measured on too few results
    assert lines == []
    s.estimate_settled = True
    cb(ROW, s)
    s.ok, s.estimate_s = 3, 2000.0
    cb(ROW, s)
    assert lines == ["estimated time for the remaining 98 results: about 50.0 min (from the 2 measured "
                     "so far, per metric and frame-pixel)"]
    assert len(inner) == 5  # the wrapped callback saw every row
    s.estimate_unmeasured = ["iq1_psnr", "iq1_ssim"]
    assert estimate_line(s) == (
        "estimated time for the remaining 97 results: about 33.3 min (from the 3 measured so far, per "
        "metric and frame-pixel; not measured yet, counted at the others' mean: iq1_psnr, iq1_ssim)")


def test_lines_come_every_interval_even_without_results() -> None:
    lines: list[str] = []
    def lefts() -> list[int]:
        return [int(m) for m in re.findall(r"about (\d+) s left", "\n".join(lines))]

    with ProgressLines(lines.append, every=0.05) as cb:
        end = time.monotonic() + 10  # (waits for the line thread, which a loaded machine runs late)
        while not lines and time.monotonic() < end:
            time.sleep(0.02)
        assert lines, "no line was written"
        cb(ROW, RunSummary(total=4, ok=1, estimate_s=10.0, estimate_settled=True))
        end = time.monotonic() + 10
        while (len(lefts()) < 2 or lefts()[-1] > lefts()[0] - 1) and time.monotonic() < end:
            time.sleep(0.05)
    assert lines[0].startswith("scoring: no result yet")
    assert lines[-1].startswith("scoring: 1/4 results (25%), 0 failed")
    # the estimate of 10 s counts down while no result comes
    left = lefts()
    assert left[0] <= 10 and left[-1] <= left[0] - 1, lines
    with pytest.raises(ValueError, match="positive"):
        ProgressLines(lines.append, every=0)


def test_cli_score_prints_plain_lines_and_metric_time(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=4)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": f"it{k}", "video": "v.mp4", "instruction": "x"})
                                + "\n" for k in range(4)))
    args = ["score", str(manifest), "-m", "test_slow,test_boom", "--set", "test_slow.seconds=0.1",
            "--db", str(tmp_path / "r.sqlite"), "--progress-every", "0.1"]
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    # CliRunner's output is not a terminal: plain lines instead of a bar
    assert re.search(r"scoring: \d/8 results \(\d+%\), 0 failed", res.output), res.output
    assert re.search(r"time by metric \([\d.]+ worker-seconds\): test_slow [\d.]+ s \(\d+%\), "
                     r"test_boom [\d.]+ s \(\d+%\)", res.output), res.output


def test_cli_score_prints_plain_lines_on_a_dumb_terminal(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=4)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text("".join(json.dumps({"item_id": f"it{k}", "video": "v.mp4", "instruction": "x"})
                                + "\n" for k in range(4)))
    master, slave = pty.openpty()
    with os.fdopen(slave, "w") as terminal:
        monkeypatch.setattr(err_console, "_file", terminal)  # stderr a real terminal, as under `script`
        monkeypatch.setenv("TERM", "dumb")  # where Rich draws no bar until the end
        args = ["score", str(manifest), "-m", "test_slow", "--set", "test_slow.seconds=0.2",
                "--db", str(tmp_path / "r.sqlite"), "--progress-every", "0.1"]
        res = CliRunner().invoke(build_app("score"), args)
        terminal.flush()
    os.set_blocking(master, False)
    shown = os.read(master, 1 << 16).decode()
    os.close(master)
    assert res.exit_code == 0, res.output
    # before: the test was for a terminal, not an interactive one: a bar printed once, at the end
    assert re.search(r"scoring: \d/4 results \(\d+%\), 0 failed", shown), shown


def test_scoring_progress_of_demo_and_audit_prints_lines_in_a_log(capsys: pytest.CaptureFixture[str]) -> None:
    with scoring_progress(True, every=0.05) as on_result:
        assert on_result is not None
        on_result(ROW, RunSummary(total=4, ok=1))
        time.sleep(0.3)
    # before: `demo` and `audit acceleration` drew a bar, written to a log once, when the run ended
    assert "scoring: 1/4 results (25%), 0 failed" in capsys.readouterr().err


def test_cli_score_skipped_row_line_has_no_raw_markup(tmp_path: Path) -> None:
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=4)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "ok", "video": "v.mp4", "instruction": "x"}) + "\n"
                        + json.dumps({"item_id": "gone[1]", "video": "nope.mp4", "instruction": "x"}) + "\n")
    args = ["score", str(manifest), "-m", "test_boom", "--db", str(tmp_path / "r.sqlite"), "--no-progress"]
    res = CliRunner().invoke(build_app("score"), args)
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "skipped manifest row" in ln)
    assert line.startswith("skipped manifest row: ") and "[/]" not in line
    assert "gone[1]" in line  # brackets in the problem itself are printed as they are


def test_metrics_sets_skipped_row_line_has_no_raw_markup(tmp_path: Path) -> None:
    # The same line in `metrics sets` printed its own [yellow]...[/] tags literally.
    write_video(tmp_path / "v.mp4", np.zeros((2, 16, 16, 3), np.uint8), fps=4)
    manifest = tmp_path / "suite.jsonl"
    manifest.write_text(json.dumps({"item_id": "ok", "video": "v.mp4", "generator": "g"}) + "\n"
                        + json.dumps({"item_id": "gone[1]", "video": "nope.mp4", "generator": "g"}) + "\n")
    # A store of its own: the default one, runs/suite under the working folder, was shared by every run
    # of this test, and refused this one's manifest once an earlier one's still existed.
    res = CliRunner().invoke(build_app("metrics"), ["metrics", "sets", str(manifest), "-m", "iq1_fvd", "--db",
                                                    str(tmp_path / "r.sqlite")])
    line = next(ln for ln in res.output.splitlines() if "skipped manifest row" in ln)
    assert line.startswith("skipped manifest row: ") and "[/]" not in line and "gone[1]" in line
