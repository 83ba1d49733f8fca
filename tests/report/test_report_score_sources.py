"""The leaderboard's score sources: one mapping, an unknown source is an error listing them all."""

from __future__ import annotations

import numpy as np
import pytest
from _report_data import build_items, build_rows, higher_is_better

from robojudge.report import (
    SCORE_SOURCES,
    UnknownScoreSource,
    calibrated_scores,
    judge_scores,
    label_scores,
    leaderboard_scores,
)


def test_each_source_gives_what_its_function_gives() -> None:
    items = build_items()
    rows = build_rows(items)
    labels = leaderboard_scores("labels", rows, items, higher_is_better)
    judge = leaderboard_scores("judge:vlm", rows, items, higher_is_better)
    cal = leaderboard_scores("calibrated", rows, items, higher_is_better, n_folds=3, seed=4)
    want_cal = calibrated_scores(rows, items, higher_is_better, n_folds=3, seed=4).scores
    want_judge = judge_scores(rows, items, "vlm")
    for got, want in ((labels, label_scores(items)), (judge, want_judge), (cal, want_cal)):
        assert set(got) == {"pa", "ia"}
        for axis in ("pa", "ia"):
            np.testing.assert_array_equal(got[axis], want[axis])
    # The judge scores IA one point high (capped at 5), so it is not the labels.
    assert not np.array_equal(judge["ia"], labels["ia"])


@pytest.mark.parametrize("bad", ["label", "judge", "judge:", "labels:x", "calibrated:2", ""])
def test_unknown_source_lists_every_choice(bad: str) -> None:
    items = build_items()
    with pytest.raises(UnknownScoreSource) as info:
        leaderboard_scores(bad, [], items, higher_is_better)
    message = str(info.value)
    assert repr(bad) in message
    for source in SCORE_SOURCES.values():
        assert source.spelling in message
    assert info.value.choices == "labels, calibrated, judge:NAME or metric:ID"


def test_a_known_source_that_cannot_score_is_a_plain_value_error() -> None:
    items = build_items()
    with pytest.raises(ValueError, match="nobody") as info:
        leaderboard_scores("judge:nobody", build_rows(items), items, higher_is_better)
    assert not isinstance(info.value, UnknownScoreSource)


def test_labels_on_a_suite_without_labels_is_an_error_not_a_board_of_dashes() -> None:
    labelled = build_items()
    items = [it.model_copy(update={"labels": None}) for it in labelled]
    with pytest.raises(ValueError, match="no item of the suite carries a PA or IA label") as info:
        leaderboard_scores("labels", build_rows(labelled), items, higher_is_better)
    assert "--scores judge:NAME" in str(info.value)
    one = [items[0].model_copy(update={"labels": build_items()[0].labels}), *items[1:]]
    assert np.isfinite(leaderboard_scores("labels", [], one, higher_is_better)["pa"]).sum() == 1
