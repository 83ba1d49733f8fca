"""Intervals over fewer than APPROXIMATE_CLUSTERS clips get a milder mark than small n (a double dagger).

Simulated, nominal 95% percentile cluster-bootstrap intervals held the truth 88-91% of the time at 10-20
clips for the median statistic and 79-87% for MSE and within-one, and nothing told the reader (the
small-n mark needs fewer than 10 items or 5 clips).
"""


from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from robojudge.cli._meta import _approximate_note
from robojudge.cli._meta import app as meta_app
from robojudge.meta import APPROXIMATE_CLUSTERS, agreement_table, generator_leaderboard
from robojudge.report._judges import judge_table, judges_markdown
from robojudge.report._leaderboard import leaderboard_markdown
from robojudge.report._tables import APPROX_MARK, APPROX_NOTE, SMALL_MARK, Cell, Table, is_approximate, text


def test_the_threshold_and_which_cells_it_marks():
    assert APPROXIMATE_CLUSTERS == 30 and APPROX_MARK == "\u2021"
    assert is_approximate(40, 12) and is_approximate(29, 29) and is_approximate(20)  # items as clips
    assert not is_approximate(40, 30) and not is_approximate(35) and not is_approximate(0, 0)
    assert not is_approximate(40, 4) and not is_approximate(8, 8)  # small n: the dagger, not both


def test_cells_print_the_double_dagger_only_with_an_interval():
    shown = Cell(0.5, 0.3, 0.7, approximate=True)
    assert shown.marked() == f"0.500 [0.300, 0.700] {APPROX_MARK}"
    assert Cell(0.5, approximate=True).marked() == "0.500"  # no interval: nothing to call approximate
    assert Cell(0.5, 0.3, 0.7, small=True, approximate=True).marked() == f"0.500 [0.300, 0.700] {SMALL_MARK}"
    t = Table("t", "T", ["name", "value"], note="How.")
    t.add([text("a"), Cell(0.5, 0.3, 0.7)])
    assert t.notes() == ["How."] and APPROX_MARK not in t.to_html()
    t.add([text("b"), shown])
    assert t.notes() == ["How.", APPROX_NOTE]
    assert f'<sup title="approximate interval">{APPROX_MARK}</sup>' in t.to_html()
    assert r"\textsuperscript{\ddag}" in t.to_latex() and f"{APPROX_MARK}" in t.to_markdown()


def _board(n_clips: int):
    rng = np.random.default_rng(2)
    gens = ["a", "b"] * n_clips
    clusters = [f"c{i // 2}" for i in range(2 * n_clips)]
    scores = {ax: rng.choice([2.0, 3.0, 4.0, 5.0], size=2 * n_clips) for ax in ("pa", "ia")}
    return generator_leaderboard(scores, gens, clusters, bootstrap=200, seed=0)


def test_leaderboard_marks_means_over_fewer_than_30_clips():
    md = leaderboard_markdown(_board(12))
    assert md.count(APPROX_MARK) >= 6 and APPROX_NOTE in md and SMALL_MARK not in md
    md = leaderboard_markdown(_board(APPROXIMATE_CLUSTERS))
    assert APPROX_MARK not in md


def _agreement(n_clips: int):
    rng = np.random.default_rng(3)
    n = 2 * n_clips
    human = rng.integers(1, 6, size=n).astype(float)
    judge = np.clip(human + rng.integers(-1, 2, size=n), 1, 5)
    clusters = [f"c{i // 2}" for i in range(n)]
    rep = agreement_table({"j": {"pa": judge, "ia": judge}}, {"pa": human, "ia": human}, clusters,
                          bootstrap=200, seed=0)
    scored = {"j": {a: np.ones(n, dtype=bool) for a in ("pa", "ia")}}
    return rep, judge_table(rep, scored, clusters), human, judge, clusters


def test_table_2_marks_targets_over_fewer_than_30_clips():
    rep, rows, *_ = _agreement(12)
    assert rows[0].approximate == {"pa", "ia", "overall"} and not rows[0].small
    md = judges_markdown(rows, rep)
    assert f"] {APPROX_MARK}" in md and APPROX_NOTE in md
    rep, rows, *_ = _agreement(APPROXIMATE_CLUSTERS)
    assert not rows[0].approximate and APPROX_MARK not in judges_markdown(rows, rep)


def test_meta_agreement_notes_approximate_intervals(tmp_path):
    def written(n_clips):
        _, _, human, judge, clusters = _agreement(n_clips)
        h = ["item_id,axis,score,clip_id"] + [f"i{k},pa,{v:g},{c}"
                                              for k, (v, c) in enumerate(zip(human, clusters, strict=True))]
        p = ["item_id,axis,score,judge"] + [f"i{k},pa,{v:g},j" for k, v in enumerate(judge)]
        (tmp_path / "h.csv").write_text("\n".join(h) + "\n")
        (tmp_path / "p.csv").write_text("\n".join(p) + "\n")
        r = CliRunner().invoke(meta_app, ["agreement", "--pred", str(tmp_path / "p.csv"), "--human",
                                          str(tmp_path / "h.csv"), "--bootstrap", "200"])
        assert r.exit_code == 0, r.output
        return " ".join(r.output.split())

    assert "note: intervals over 12 clusters (fewer than 30) are approximate" in written(12)
    assert "are approximate" not in written(APPROXIMATE_CLUSTERS)


def _coverage_row(table: str, data: str) -> list[tuple[float, float]]:
    """The (min, median) pairs of one row of docs/meta.md's coverage table."""
    row = next(line for line in table.splitlines() if line.startswith(f"| {data} |"))
    return [tuple(float(v) for v in cell.split(" / ")) for cell in row.strip("| ").split(" | ")[1:]]


def test_the_note_gives_the_worst_statistics_of_the_docs_table():
    # The note said 85-91% at 10-20 clips; the table it cites gives MSE 0.787 and within-one 0.823 at
    # 10 clips. The note's figures are those of the table, rounded to whole percent.
    docs = (Path(__file__).resolve().parents[2] / "docs" / "meta.md").read_text(encoding="utf-8")
    table = docs[docs.index("| data | all cells min / median |"):]
    ten, twenty = _coverage_row(table, "30 items / 10 clips"), _coverage_row(table, "60 items / 20 clips")
    medians = f"{round(100 * ten[0][1])}-{round(100 * twenty[0][1])}%"
    worst = [row[k][0] for row in (ten, twenty) for k in (2, 3)]  # MSE and within-one, minimum cell
    lowest = f"{round(100 * min(worst))}-{round(100 * max(worst))}%"
    assert (medians, lowest) == ("88-91%", "79-87%")
    for note in (APPROX_NOTE, " ".join(_approximate_note(12).split())):
        assert f"held the true value {medians} of the time" in note
        assert f"MSE and within-one only {lowest}" in note
        assert "MSE 65-78% over 10" in note
    assert "85-91%" not in docs
