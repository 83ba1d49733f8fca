"""The HTML report splits the stored rows into series once and every section reads that split.

Splitting sorts every row; the report used to do it over a hundred times (once per metric in the
RoboPhys section alone), which took most of the time of a big report.
"""

import numpy as np
import pytest
from _report_data import build_items, build_rows, higher_is_better

from robojudge.report import StoredSeries, _series, calibrated_scores, judges_report, label_agreement
from robojudge.report._html import build_sections
from robojudge.report._leaderboard import calibration_features
from robojudge.report._sections import ReportInput


def test_build_sections_splits_the_rows_once(monkeypatch):
    calls = []
    split = _series.split_series

    def counted(*args, **kwargs):
        calls.append(1)
        return split(*args, **kwargs)

    monkeypatch.setattr(_series, "split_series", counted)
    items = build_items()
    sections = build_sections(ReportInput(build_rows(items), items, higher_is_better, bootstrap=20))
    # The data stores no stillness-rewarding metric, so the motion section is empty (and says why);
    # its rows record no frame size and no library versions, so the sizes and library sections are empty
    # too; no KIVA value, no KIVA section; no network lookup, no networks section.
    empty = ("motion", "kiva", "sizes", "libraries", "acceleration", "networks")  # nor accelerated generators
    assert all(s.skipped is None for s in sections if s.key not in empty), {
        s.key: s.skipped for s in sections}
    assert len(calls) == 1


def test_split_once_gives_the_same_results_as_rows():
    items = build_items()
    rows = build_rows(items)
    stored = StoredSeries.of(rows)
    assert [s.key for s in stored.metrics] == [s.key for s in _series.metric_series(rows)]
    assert [j.label for j in stored.judges] == [j.label for j in _series.judge_series(rows)]
    a = judges_report(rows, items, higher_is_better, bootstrap=50, n_folds=4)
    b = judges_report(rows, items, higher_is_better, bootstrap=50, n_folds=4, stored=stored)
    # (repr: a withheld interval is NaN, and NaN != NaN in a dataclass comparison)
    assert repr(a.table) == repr(b.table) and a.report.to_dict() == b.report.to_dict()
    assert set(a.scores) == {"vlm", "metric-calibrated"} and a.calibrated is not None
    # The scores returned are the ones compared: the judge's stored values and the calibrated ones.
    np.testing.assert_array_equal(a.scores["vlm"]["pa"], [float(it.labels.pa) for it in items])
    np.testing.assert_array_equal(a.scores["metric-calibrated"]["ia"], a.calibrated.scores["ia"])
    plain = label_agreement(rows, items, higher_is_better, bootstrap=30)
    assert plain and repr(plain) == repr(label_agreement(rows, items, higher_is_better, bootstrap=30,
                                                         stored=stored))  # repr: NaN fields compare


def test_calibrated_scores_refuses_features_of_other_items():
    items = build_items()
    rows = build_rows(items)
    feats = calibration_features(rows, items[:9], higher_is_better)
    with pytest.raises(ValueError, match="columns over the 36 items"):
        calibrated_scores(rows, items, higher_is_better, features=feats)
