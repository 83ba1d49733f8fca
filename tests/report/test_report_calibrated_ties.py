"""The metric-calibrated judge where the labels hold no order to learn, and the noise in its last digits.

A model fitted to labels of one value scores every item alike but for its last digits (1e-8 apart at
the default alpha), and those digits ranked generators and picked rollouts: two generators every human
rated 3 were ranked 1 and 2 with P(rank) 0.85. Such labels are refused with the reason, and the
calibrated judge's scores closer than ``CALIBRATED_TOLERANCE`` tie in a ranking or a pick.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _report_data import stored_suite
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.report import CALIBRATED, CALIBRATED_TOLERANCE, calibrated_scores
from robojudge.report._label_sections import judges_section
from robojudge.report._leaderboard import calibration_problem
from robojudge.report._sections import ReportInput
from robojudge.store import ResultRow
from robojudge.suite import Item

runner = CliRunner()


def _row(item: str, metric: str, value: float) -> ResultRow:
    return ResultRow(item_id=item, metric=metric, config_hash="h", version="1", status="ok", value=value)


def _higher(metric: str) -> bool:
    return True


def _suite(labels: dict[str, int], values: dict[str, tuple[float, ...]],
           generators: tuple[str, ...]) -> tuple[list[Item], list[ResultRow]]:
    """One item per (clip, generator), labelled ``labels[clip]`` on both axes, with two metrics made from
    ``values[clip]`` and a VLM judge that says 3."""
    items, rows = [], []
    for clip, label in labels.items():
        for g, x in zip(generators, values[clip], strict=True):
            iid = f"{clip}-{g}"
            items.append(Item(item_id=iid, video="v.mp4", clip_id=clip, source="s", generator=g,
                              labels={"pa": label, "ia": label}))
            rows += [_row(iid, "smooth", x), _row(iid, "sharp", x * x / 10),
                     _row(iid, "judge:vlm:pa", 3.0), _row(iid, "judge:vlm:ia", 3.0)]
    return items, rows


def _stored(tmp_path: Path, items: list[Item], rows: list[ResultRow]) -> list[str]:
    manifest, db = stored_suite(tmp_path, items, rows)
    return [str(manifest), "--db", db]


def _said(res) -> str:  # as printed, whatever the width it was wrapped at
    return " ".join(res.output.split())


def test_labels_of_one_value_are_refused_with_the_reason(tmp_path: Path) -> None:
    # Every label 3: the calibrated judge ranked one generator above the other by 1e-8 and picked by it.
    rng = np.random.default_rng(0)
    clips = {f"c{c}": 3 for c in range(6)}
    items, rows = _suite(clips, {c: tuple(rng.uniform(10, 30, 2)) for c in clips}, ("gA", "gB"))
    why = ("every PA label is 3, so there is no order for the calibrated judge to learn (its scores would "
           "differ only by fitting noise)")
    assert calibration_problem(items) == why
    with pytest.raises(ValueError, match="every PA label is 3"):
        calibrated_scores(rows, items, _higher)
    suite = _stored(tmp_path, items, rows)
    res = runner.invoke(app, ["leaderboard", "generators", *suite, "--scores", "calibrated"])
    assert res.exit_code == 2 and why in _said(res)
    res = runner.invoke(app, ["select", "best-of-n", *suite, "--by", "calibrated", "--group", "clip_id"])
    assert res.exit_code == 2 and why in _said(res)
    res = runner.invoke(app, ["leaderboard", "judges", *suite, "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert f"{CALIBRATED} left out: {why}" in _said(res)
    sec, report = judges_section(ReportInput(rows, items, _higher, bootstrap=0))
    assert report is not None and report.judges == ("vlm",)
    assert f"No {CALIBRATED} judge: {why}." in sec.intro


def test_folds_that_each_train_on_one_value_are_refused() -> None:
    # Two clips, labelled 3 and 4: each fold's model learns from the other clip alone, one value.
    items, _ = _suite({"c0": 3, "c1": 4}, {"c0": (1.0, 2.0), "c1": (3.0, 4.0)}, ("gA", "gB"))
    assert calibration_problem(items) == (
        "the PA labels take 2 values, but each of the 2 folds of the calibrated judge's cross-validation "
        "(grouped by clip) trains on labels of one value, so no fold has an order to learn: label more clips")
    # A third clip gives two folds both values: only the fold that holds it out sees one.
    items, _ = _suite({"c0": 3, "c1": 3, "c2": 4}, {c: (1.0, 2.0) for c in ("c0", "c1", "c2")}, ("gA", "gB"))
    assert calibration_problem(items) is None


def _noisy() -> tuple[list[Item], list[ResultRow]]:
    """Three clips, one per fold. The fold that holds c2 out trains on c0 and c1, all labelled 3, so its
    scores of c2's items differ in the 8th digit only; gA and gB have equal values in c0 and c1 (so equal
    scores there) and gC spreads the training range, so c2's values are not held at its edge."""
    values = {"c0": (15.0, 15.0, 10.0), "c1": (25.0, 25.0, 30.0), "c2": (18.0, 22.0, 20.0)}
    return _suite({"c0": 3, "c1": 3, "c2": 4}, values, ("gA", "gB", "gC"))


def test_fitting_noise_ties_generators_and_picks(tmp_path: Path) -> None:
    items, rows = _noisy()
    cal = calibrated_scores(rows, items, _higher, n_folds=3, alpha=0.01)
    c2 = cal.scores["pa"][6:]
    assert 0 < np.ptp(c2) < 1e-6  # the noise: one model, three items alike but for their last digits
    suite = _stored(tmp_path, items, rows)
    res = runner.invoke(app, ["leaderboard", "generators", *suite, "--scores", "calibrated",
                              "--alpha", "0.01", "--bootstrap", "50", "--json"])
    assert res.exit_code == 0, res.output
    board = json.loads(res.output)
    # Before, gB was ranked 2 by a mean 6e-9 below the others'.
    assert [e["targets"]["overall"]["rank"] for e in board["entries"]] == [1, 1, 1]
    assert board["tolerance"] == CALIBRATED_TOLERANCE
    res = runner.invoke(app, ["select", "best-of-n", *suite, "--by", "calibrated", "--group", "clip_id",
                              "--bootstrap", "0", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    # Before, c2 picked gB as the only top score (tied 1), by 4e-9; the three now tie, and the tie rule picks.
    (pick,) = [p for p in got["picks"] if p["clip_id"] == "c2"]
    assert (pick["item_id"], pick["tied"]) == ("c2-gA", 3)
    # Five folds were asked for (the default) and three clips allow three: it said "5-fold".
    assert "2 metric features, 3-fold;" in got["described"]
