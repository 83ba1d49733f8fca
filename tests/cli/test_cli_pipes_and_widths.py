"""The command line in pipelines and on narrow terminals (audit s71_cli 1, 2, 7, 8, 9, 11).

A closed stdout (``report | head``) no longer ends a command half-way; tables fold or widen instead of
cutting an id or a number to ``…``; ``COLUMNS=0`` no longer hides every message; the best judge value is
marked without colour; notes go to stderr so that ``cmd > file`` holds the data only.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import robojudge
from robojudge import settings
from robojudge.cli import build_app
from robojudge.store import ResultRow, ResultStore

runner = CliRunner()
SRC = str(Path(robojudge.__file__).parents[1])
LONG = "judge:qwen25vl_7b_instruct"  # ids that a cut makes alike: ...:pa and ...:ia


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A labelled manifest of 2 generators x 6 clips and its store: two judge axes and a metric."""
    folder = tmp_path_factory.mktemp("suite")
    (folder / "v.mp4").write_bytes(b"")
    items = [{"item_id": f"{g}{c}", "video": "v.mp4", "clip_id": f"c{c}", "generator": g,
              "instruction": "stack the cups", "labels": {"pa": 1 + (c + k) % 5, "ia": 1 + c % 5}}
             for c in range(6) for k, g in enumerate(("oracle", "chaotic"))]
    manifest = folder / "suite.jsonl"
    manifest.write_text("".join(json.dumps(it) + "\n" for it in items))
    rows = []
    for k, it in enumerate(items):
        rows.append(ResultRow(it["item_id"], "iq1_psnr", "h", "1", "ok", 20.123456 + k))
        for axis in ("pa", "ia"):
            rows.append(ResultRow(it["item_id"], f"{LONG}:{axis}", "j", "1", "ok", float(1 + k % 5)))
    db = folder / "r.sqlite"
    with ResultStore(db) as store:
        store.add(rows)
    return manifest, db


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return {**env, "PYTHONPATH": SRC, **extra}


def test_report_into_a_closed_pipe_writes_every_file(suite: tuple[Path, Path], tmp_path: Path) -> None:
    # Before: the summary table hit the closed pipe first; click exited 1 without a word, no index.html.
    manifest, db = suite
    proc = subprocess.Popen([sys.executable, "-m", "robojudge", "report", str(manifest), "--db", str(db),
                             "--out", str(tmp_path / "rep"), "--bootstrap", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the first line (`| head -0`)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 141, err.decode()
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    assert (tmp_path / "rep" / "index.html").exists() and (tmp_path / "rep" / "summary.md").exists()


def test_an_open_pipe_keeps_status_0(suite: tuple[Path, Path], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "robojudge", "metrics", "list"], capture_output=True,
                          env=_env(), timeout=120)
    assert done.returncode == 0 and b"iq1_psnr" in done.stdout


def _narrow(monkeypatch: pytest.MonkeyPatch, width: int, *modules: str) -> io.StringIO:
    """Point the commands' stdout console at a terminal of ``width`` columns; what it prints."""
    buf = io.StringIO()
    narrow = Console(file=buf, width=width, force_terminal=True, color_system=None, soft_wrap=True,
                     markup=False, emoji=False)
    for name in ("robojudge.cli._tables", *modules):
        try:
            __import__(name)
        except ModuleNotFoundError:  # (no shared table printer before)
            continue
        monkeypatch.setattr(sys.modules[name], "console", narrow, raising=False)
    return buf


@pytest.mark.parametrize("width", [40, 80])
def test_report_tables_keep_ids_and_numbers_whole(suite: tuple[Path, Path], tmp_path: Path, width: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: at 80 columns the PA and IA rows both read 'judge:qwen25vl…'; at 40 the means read '0.…'.
    manifest, db = suite
    buf = _narrow(monkeypatch, width, "robojudge.cli._report")
    done = runner.invoke(build_app("report"), ["report", str(manifest), "--db", str(db), "--out",
                                               str(tmp_path / "rep"), "--no-html"])
    assert done.exit_code == 0, done.output
    text = buf.getvalue()
    assert "…" not in text
    assert f"{LONG}:pa" in text and f"{LONG}:ia" in text
    assert "26.12" in text and "25.12" in text  # iq1_psnr: 20.12 + the mean of k 1, 3, ... 11 (0, 2, ... 10)


@pytest.mark.parametrize("width", [40, 80])
def test_select_and_metrics_list_keep_ids_and_numbers_whole(suite: tuple[Path, Path], width: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: 'random_re…   1.271' at 40 columns; metric ids cut in `metrics list`.
    manifest, db = suite
    buf = _narrow(monkeypatch, width, "robojudge.cli._select", "robojudge.cli._metrics")
    done = runner.invoke(build_app("select"), ["select", "best-of-n", str(manifest), "--db", str(db), "--by",
                                               "iq1_psnr", "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    picked = buf.getvalue()
    assert "…" not in picked and "random_regret" in picked and "random_top1" in picked
    buf.seek(0)
    buf.truncate(0)
    done = runner.invoke(build_app("metrics"), ["metrics", "list"])
    assert done.exit_code == 0, done.output
    listed = buf.getvalue()
    assert "…" not in listed
    for metric in ("pixel_frame_consistency", "flow_warp_error", "sim_task_success"):
        assert metric in listed


@pytest.mark.parametrize("width", [40, 80])
def test_meta_segments_and_aggregate_select_keep_numbers_whole(tmp_path: Path, width: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: '│ k │ 0.936 │ 0.943 │ 0.939 │ 0.9… │' in meta segments, 'si…' and '0.…' in aggregate select.
    lines = ["clip,video,group,verdict,k,sim_task_success_long_name"]
    for c in range(8):
        for v in range(3):
            for r in range(3):
                good = (c + v + r) % 3
                lines.append(f"c{c},c{c}v{v},g{c % 2},{('Bad', 'Medium', 'Good')[good]},{good + 0.1 * r},"
                             f"{good * 0.5 + 0.01 * c}")
    seg = tmp_path / "seg.csv"
    seg.write_text("\n".join(lines) + "\n")
    buf = _narrow(monkeypatch, width, "robojudge.cli._meta", "robojudge.cli._aggregate")
    done = runner.invoke(build_app("meta"), ["meta", "segments", "--in", str(seg), "--score", "k",
                                             "--score", "sim_task_success_long_name", "--replicates", "20"])
    assert done.exit_code == 0, done.output
    assert "…" not in buf.getvalue() and "sim_task_success_long_name" in buf.getvalue()
    table = tmp_path / "sel.csv"
    table.write_text("config,iq1_psnr,iq1_ssim,sim_task_success\nA,25,0.51,0.5\nB,20,0.42,0.4\nC,30,0.63,0.6\n"
                     "D,22,0.35,0.3\nE,27,0.58,0.55\n")
    for extra in ([], ["--thresholds", "0.5,0.9"]):
        buf.seek(0)
        buf.truncate(0)
        done = runner.invoke(build_app("aggregate"), ["aggregate", "select", "--in", str(table), "--by",
                                                      "config", "--targets", "sim_task_success", *extra])
        assert done.exit_code == 0, done.output
        assert "…" not in buf.getvalue() and "sim_task_success" in buf.getvalue(), buf.getvalue()


@pytest.mark.parametrize("columns", ["0", "-3", "abc"])
def test_columns_that_is_not_a_width_is_unset(columns: str, tmp_path: Path) -> None:
    # Before: COLUMNS=0 printed every line at width 0: no error, no help, only the exit status.
    done = subprocess.run([sys.executable, "-m", "robojudge", "score", str(tmp_path / "nope.jsonl"), "-m",
                           "iq1_psnr"], capture_output=True, text=True, env=_env(COLUMNS=columns),
                          timeout=120)
    assert done.returncode == 2 and "nope.jsonl" in done.stderr
    shown = subprocess.run([sys.executable, "-m", "robojudge", "--help"], capture_output=True, text=True,
                           env=_env(COLUMNS=columns), timeout=120)
    assert shown.returncode == 0 and "score" in shown.stdout


def test_settings_read_columns_as_a_width(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, width in (("0", None), ("-3", None), ("abc", None), ("", None), ("72", 72)):
        monkeypatch.setenv("COLUMNS", text)
        assert settings.reload().columns == width
    monkeypatch.delenv("COLUMNS")
    settings.reload()


def test_the_best_judge_value_is_marked_without_colour(suite: tuple[Path, Path]) -> None:
    # Before: the legend said 'best per column in green', and in a file or a pipe nothing was marked.
    manifest, db = suite
    done = runner.invoke(build_app("leaderboard"), ["leaderboard", "judges", str(manifest), "--db", str(db),
                                                    "--no-calibrated", "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.stdout and "best per column marked \u25b2" in done.stdout
    row = next(line for line in done.stdout.splitlines() if "qwen25vl" in line)
    assert "\u25b2" in row


def test_fps_ablation_with_no_reply_exits_1_as_judge_does(suite: tuple[Path, Path], tmp_path: Path) -> None:
    # Before: every request failed (here every video is unreadable) and the ablation exited 2, the status
    # of a bad command line, where `robojudge judge` exits 1.
    manifest, _ = suite
    judges = tmp_path / "judges.toml"
    judges.write_text('[judges.m]\nbackend = "mock"\nmodel = "m"\nreplies = ["{\\"score\\": 3}"]\n')
    done = runner.invoke(build_app("leaderboard"), [
        "leaderboard", "fps-ablation", str(manifest), "--judges", str(judges), "-j", "m", "--fps", "1,2",
        "--db", str(tmp_path / "f.sqlite"), "--bootstrap", "0", "--no-cache"])
    assert done.exit_code == 1, done.output
    assert "nothing was judged" in done.stderr and "results export" in done.stderr


def test_notes_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    # Before: 'skipped manifest row:' and 'interrupted:' were printed on stdout, into `cmd > file`.
    from robojudge.cli._common import print_manifest_problems, says_when_stopped

    print_manifest_problems(["row 3: no such video nope.mp4"])

    @says_when_stopped("nothing was written")
    def stopped() -> None:
        raise KeyboardInterrupt

    with pytest.raises(Exception) as stop:
        stopped()
    assert getattr(stop.value, "exit_code", None) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert "skipped manifest row: row 3: no such video nope.mp4" in err and "interrupted: nothing was" in err


def test_report_prints_its_notes_on_stderr(suite: tuple[Path, Path], tmp_path: Path) -> None:
    # Before: the section list ('  Overview: ...') was on stdout with the summary table.
    manifest, db = suite
    done = runner.invoke(build_app("report"), ["report", str(manifest), "--db", str(db), "--out",
                                               str(tmp_path / "rep"), "--bootstrap", "0"])
    assert done.exit_code == 0, done.output
    assert "Overview:" in done.stderr and "Overview:" not in done.stdout
    assert "results by generator" in done.stdout and "HTML report:" in done.stdout
