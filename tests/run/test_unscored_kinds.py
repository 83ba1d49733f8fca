"""The end-of-run summary groups unscored reasons that differ only in their numbers (one frozen clip's six
results read as six still videos), and numbers inside names stay text (review rev15 F6: two items' state
files read as one range "fetch00 to 11-oracle.npz")."""

from __future__ import annotations

from robojudge.run._unscored import UnscoredKind, add_unscored, unscored_lines


def _lines(reasons: list[tuple[str, str]]) -> list[str]:
    kinds: dict[str, UnscoredKind] = {}
    for reason, item in reasons:
        add_unscored(kinds, reason, item)
    return unscored_lines(kinds, shown=5)


def test_reasons_differing_in_their_numbers_are_one_kind_with_ranges() -> None:
    assert _lines([(f"the video is still: none of its {n} frames moves (largest {n / 10:.1f})", i)
                   for n, i in ((60, "a"), (16, "a"), (33, "b"))]) == [
        "3 results (2 items): the video is still: none of its 16 to 60 frames moves (largest 1.6 to 6.0)"]


def test_signs_and_exponents_go_with_their_numbers() -> None:
    assert _lines([("largest change 3e-06 levels", "a"), ("largest change 1e-05 levels", "b")]) == [
        "2 results (2 items): largest change 3e-06 to 1e-05 levels"]
    assert _lines([("depth median -0.5 is not positive", "a"),
                   ("depth median -2.25 is not positive", "b")]) == [
        "2 results (2 items): depth median -2.25 to -0.5 is not positive"]


def test_digits_inside_names_paths_and_sizes_are_text() -> None:
    got = _lines([("no calibration: state file state/fetch00-oracle.npz has no cameras", "a"),
                  ("no calibration: state file state/fetch11-oracle.npz has no cameras", "b"),
                  ("frames of 256x192 are too small", "c"), ("frames of 320x240 are too small", "d")])
    assert "1 result (1 item): no calibration: state file state/fetch00-oracle.npz has no cameras" in got
    assert "1 result (1 item): no calibration: state file state/fetch11-oracle.npz has no cameras" in got
    assert "1 result (1 item): frames of 256x192 are too small" in got and len(got) == 4
