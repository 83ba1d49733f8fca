"""`robojudge demo` reads its store as `robojudge report` does: with the same default seed, without the
results whose inputs changed (and saying how many), and with an error, not a traceback, for a run folder
it cannot use (audit s69_samenumber, findings 2, 3 and 5)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge import DEFAULT_SEED
from robojudge.cli import app
from robojudge.demo import run_demo
from robojudge.judges import ResponseCache, get_rubric, make_judge
from robojudge.metric_info import direction
from robojudge.report import judges_report, load_run_results, write_judges
from robojudge.run import judge_suite, score_suite, stale_rows
from robojudge.suite._demo import make_synthetic_suite
from robojudge.video import write_video

TARGETS = {"pa": "PA", "ia": "IA", "overall": "Overall"}
STATS = {"r": "r", "acc": "Acc", "mse": "MSE"}
CHANGED = "ep00-faithful"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic demo run of 6 clips, more than the calibrated judge's 5 folds, so the seed deals them.

    It is moved once run, so that its copies' stores note a manifest that is gone: a copy may then
    change a video without being refused as another project's (that refusal has its own test)."""
    base = tmp_path_factory.mktemp("demo")
    out = base / "demo"
    (out / "suite").mkdir(parents=True)
    (out / "suite" / "SUITE_KIND").write_text("synthetic\n")
    make_synthetic_suite(out / "suite", episodes=6)
    run_demo(out, suite="synthetic", workers=1)
    return out.rename(base / "template")


def _calibrated(path: Path) -> dict[tuple[str, str, str], float | str]:
    """The metric-calibrated judge's values and bounds from a judges.csv of the demo (``pa_r_low``) or
    of the HTML report's tables (``PA r_low``); a withheld bound (every resample the same) stays ``""``."""
    with path.open(encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if r["judge"] == "metric-calibrated")
    out = {}
    for t, title in TARGETS.items():
        for s, name in STATS.items():
            for end in ("", "_low", "_high"):
                cell = row.get(f"{t}_{s}{end}", row.get(f"{title} {name}{end}"))
                assert cell is not None, f"{path}: no {t} {s}{end}"
                out[t, s, end] = float(cell) if cell != "" or not end else cell
    return out


@pytest.mark.slow
def test_demo_cli_report_and_python_default_give_one_calibrated_judge(template: Path, tmp_path: Path) -> None:
    # Before, the demo seeded with 0, `robojudge report` with 20260926 and the Python functions with 0:
    # one store gave the metric-calibrated judge two sets of numbers.
    demo = _calibrated(template / "report" / "judges.csv")

    res = CliRunner().invoke(app, ["report", str(template), "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    cli = _calibrated(tmp_path / "cli" / "tables" / "judges.csv")

    run = load_run_results(template, stale=stale_rows)
    report, table, _, _ = judges_report(run.rows, run.items, direction)
    write_judges(table, report, tmp_path / "py")
    python = _calibrated(tmp_path / "py" / "judges.csv")
    assert demo == cli == python

    # The seed does deal this suite's folds: another one moves the judge's own values.
    report, table, _, _ = judges_report(run.rows, run.items, direction, seed=DEFAULT_SEED + 1)
    write_judges(table, report, tmp_path / "other")
    other = _calibrated(tmp_path / "other" / "judges.csv")
    assert any(other[t, s, ""] != demo[t, s, ""] for t in TARGETS for s in STATS)


@pytest.mark.slow
def test_demo_leaves_stale_results_out_and_says_how_many(template: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(template, tmp_path / "demo"))
    manifest = out / "suite" / "suite.jsonl"
    db = str(out / "results.sqlite")
    # Results the demo does not compute again: a judge's, and another configuration of one of its metrics.
    reply = json.dumps({"reasoning": "r", "physical_adherence": 3, "instruction_alignment": 4})
    judge = make_judge({"name": "mk", "backend": "mock", "model": "m",
                        "replies": [reply, reply.replace("3", "2"), reply.replace("4", "5")]})
    with ResponseCache(tmp_path / "cache") as cache:
        judge_suite(manifest, judge, [get_rubric("pa"), get_rubric("ia")], db=db, cache=cache,
                    decode_workers=0)
    score_suite(manifest, ["pixel_frame_consistency"], db=db, configs={"pixel_frame_consistency": {"fps": 4}})
    videos = out / "suite" / "videos"
    shutil.copyfile(videos / "ep01_faithful.mp4", videos / "ep00_faithful.mp4")  # replaced after scoring

    result = run_demo(out, suite="synthetic", workers=1)
    # Before, the demo's summary, label table, judges table and HTML page all counted the stale rows.
    labelled = sum(it.labels is not None for it in load_run_results(out).items)
    assert labelled == 30
    fps4 = [a for a in result.agreement if a.metric == "pixel_frame_consistency [fps=4.0]"]
    assert [a.n for a in fps4] == [labelled - 1] * 2  # pa and ia
    mk = next(j for j in result.judges if j.judge == "mk")
    assert mk.n == {"pa": labelled - 1, "ia": labelled - 1}
    faithful = [s for s in result.summaries if s.metric.startswith("judge:mk:") and s.group == "faithful"]
    assert sorted(s.n_ok for s in faithful) == [5, 5]  # 6 clips, one stale
    assert sorted((r.item_id, r.metric) for r in result.stale) == [
        (CHANGED, "judge:mk:ia"), (CHANGED, "judge:mk:pa"), (CHANGED, "pixel_frame_consistency")]
    note = "3 stored results of 1 item left out: their inputs (video, reference, instruction...) changed"
    for page in ("summary.md", "index.html"):
        assert note in " ".join((out / "report" / page).read_text(encoding="utf-8").split()), page

    res = CliRunner().invoke(app, ["demo", "--out", str(out), "--no-progress", "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert note in " ".join(res.output.split())


def test_demo_refuses_a_copied_run_folder_with_an_error(tmp_path: Path) -> None:
    # Before, `robojudge demo` printed a traceback for the ValueError that `score` turns into an error.
    first = tmp_path / "first"
    (first / "suite").mkdir(parents=True)
    (first / "suite" / "SUITE_KIND").write_text("synthetic\n")
    write_video(first / "suite" / "a.mp4", _frames(0), fps=4)
    (first / "suite" / "suite.jsonl").write_text(json.dumps({"item_id": "a", "video": "a.mp4"}) + "\n")
    score_suite(first / "suite" / "suite.jsonl", ["pixel_frame_consistency"],
                db=str(first / "results.sqlite"))
    copy = Path(shutil.copytree(first, tmp_path / "copy"))
    write_video(copy / "suite" / "a.mp4", _frames(1), fps=4)  # the copy's item a is another video now

    res = CliRunner().invoke(app, ["demo", "--out", str(copy), "--no-progress", "--workers", "1"])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    said = " ".join(res.output.split())
    assert said.startswith(f"error: sqlite:///{copy.resolve() / 'results.sqlite'} holds results of another "
                           f"manifest, {first.resolve() / 'suite' / 'suite.jsonl'}")
    assert "Traceback" not in res.output


def _frames(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (8, 32, 32, 3), dtype=np.uint8)
