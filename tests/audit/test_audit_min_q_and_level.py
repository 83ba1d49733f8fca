"""``audit acceleration --level`` is the interval coverage, as in leaderboard, select and meta; the Q a
method must reach is ``--min-q`` (CLI consistency audit, F3). ``--level`` used to be that threshold while
the intervals stayed at 95%, so ``--level 0.8`` asked of it what it asks of every other command changed
the verdict instead."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _audit_store import stored_suite
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.run import MetricRequest
from robojudge.store import ResultRow
from robojudge.suite import Item

METRIC = "pixel_frame_consistency"  # lower is better: retention = mean(dense) / mean(fast)
FAST = [1.5, 2.0, 2.5, 3.0]  # dense 1.0 on every clip: Q = 1 / 2.25 = 0.444


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, str]:
    items = [Item(item_id=f"c{k}-{g}", video=f"c{k}-{g}.mp4", generator=g, clip_id=f"c{k}",
                  meta={"generation_seconds": 10.0 if g == "dense" else 5.0})
             for g in ("dense", "fast") for k in range(len(FAST))]
    req = MetricRequest.build(METRIC)
    rows = [ResultRow(item_id=it.item_id, metric=METRIC, config_hash=req.config_hash,
                      version=req.spec.version, status="ok",
                      value=1.0 if it.generator == "dense" else FAST[int(it.item_id[1])]) for it in items]
    return stored_suite(tmp_path, items, rows)


def _audit(suite: tuple[Path, str], *extra: str):  # type: ignore[no-untyped-def]
    manifest, db = suite
    return CliRunner().invoke(app, ["audit", "acceleration", str(manifest), "--dense", "dense",
                                    "--accelerated", "fast", "--db", db, "--bootstrap", "400", *extra])


def _q_interval(output: str) -> tuple[float, float, float]:
    found = re.search(r"fast: speedup 2\.00 \(seconds\), Q ([\d.]+) \[([\d.]+), ([\d.]+)\]", output)
    assert found, output
    q, low, high = map(float, found.groups())
    return q, low, high


def test_level_is_the_interval_coverage(suite) -> None:
    wide, narrow = _audit(suite), _audit(suite, "--level", "0.8")
    assert wide.exit_code == 0 and narrow.exit_code == 0, wide.output + narrow.output
    q, low95, high95 = _q_interval(wide.output)
    q80, low80, high80 = _q_interval(narrow.output)
    assert q == q80 == pytest.approx(0.444, abs=1e-3)
    assert low95 < low80 <= q <= high80 < high95  # the same draws, a narrower interval
    assert "intervals: 95% paired clip bootstrap, 400 replicates (seed 0)" in wide.output
    assert "intervals: 80% paired clip bootstrap, 400 replicates (seed 0)" in narrow.output
    # the threshold is not what --level sets any more: Q 0.444 is below the default 0.95 either way
    assert "largest speedup with Q >= 0.95: dense" in narrow.output
    # a script written for the old meaning hears of the change
    assert "note: --level 0.8 sets the interval coverage (80%)" in narrow.output
    assert "the Q threshold is --min-q (here 0.95)" in " ".join(narrow.output.split())
    assert "note:" not in wide.output and "note:" not in _audit(suite, "--level", "0.95").output


def test_min_q_is_the_threshold(suite) -> None:
    res = _audit(suite, "--min-q", "0.4")
    assert res.exit_code == 0, res.output
    assert "largest speedup with Q >= 0.4: fast" in res.output
    assert "intervals: 95% paired clip bootstrap" in res.output
    both = _audit(suite, "--min-q", "0.4", "--level", "0.9")
    assert both.exit_code == 0 and "note:" not in both.output  # both named: nothing to warn of
    assert "largest speedup with Q >= 0.4: fast" in both.output and "intervals: 90%" in both.output
    # the old threshold values below 0.5 are no coverage: refused, never taken as one
    old = _audit(suite, "--level", "0.4")
    assert old.exit_code == 2 and "--level" in old.output


def test_written_audit_says_what_its_intervals_are(suite, tmp_path: Path) -> None:
    """The files of ``--out`` gave the intervals with no coverage and called the Q threshold ``level``, so
    an 80% run read as a 95% one (review rev5, 1)."""
    out = tmp_path / "out"
    res = _audit(suite, "--level", "0.8", "--min-q", "0.4", "--seed", "3", "--out", str(out))
    assert res.exit_code == 0, res.output
    data = json.loads((out / "acceleration.json").read_text())
    assert (data["min_q"], data["ci"], data["bootstrap"], data["seed"]) == (0.4, 0.8, 400, 3)
    assert "level" not in data  # the threshold is named as what it is
    said = "80% paired clip-bootstrap interval (400 replicates, seed 3)"
    for table in ("acceleration_dense", "retention_dense"):
        assert said in (out / "tables" / f"{table}.md").read_text()
    assert said in (out / "index.html").read_text()


@pytest.mark.parametrize("value", ["1.0", "0.4", "1"])
def test_an_old_threshold_that_is_no_coverage_names_min_q(suite, value: str) -> None:
    """An old script's ``--level 1.0`` (no loss) or ``0.4`` got click's plain range error, which did not say
    that the threshold moved to ``--min-q`` (review rev5, 4)."""
    res = _audit(suite, "--level", value)
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"--level {float(value):g}: the interval coverage must be between 0.5 and 0.999" in text
    assert f"--min-q {float(value):g} asks what --level {float(value):g} asked" in text
