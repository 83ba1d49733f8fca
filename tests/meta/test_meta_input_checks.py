"""Input checks of ``meta agreement`` and ``meta segments``, and intervals withheld on tiny samples.

Each test failed before: an axis named ``overall`` collided with the pooled Overall, out-of-scale human
labels were clipped into matches, ``inf`` passed as unscored, an item's PA and IA rows could name two
clips, the stratum error named no cluster, a repeated ``--score`` kept the last, and two items or two
clips gave zero-width intervals.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli._meta import app
from robojudge.meta import (
    ClusterBootstrap,
    ScoreTableError,
    agreement_from_csv,
    agreement_table,
    fit_from_csv,
)

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _files(tmp_path: Path, human: str, pred: str) -> tuple[Path, Path]:
    h, p = tmp_path / "human.csv", tmp_path / "pred.csv"
    h.write_text(human)
    p.write_text(pred)
    return h, p


@pytest.mark.parametrize("axis", ["overall", "Overall", " OVERALL"])
def test_an_axis_named_overall_is_refused(tmp_path: Path, axis: str) -> None:
    h, p = _files(tmp_path, f"item_id,axis,score\ni1,pa,5\ni1,{axis},4\n", "item_id,axis,score\ni1,pa,5\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    assert f"{h} line 3, column 'axis'" in " ".join(r.output.split())
    assert "name of the pooled Overall" in " ".join(r.output.split())
    with pytest.raises(ValueError, match="name of the pooled Overall"):
        agreement_table({"j": {"overall": [1.0]}}, {"overall": [1.0]}, bootstrap=0)


@pytest.mark.parametrize("label", ["7", "0", "-2"])
def test_a_human_label_outside_the_scale_is_an_error(tmp_path: Path, label: str) -> None:
    h, p = _files(tmp_path, f"item_id,axis,score\ni1,pa,5\ni2,pa,{label}\n",
                  "item_id,axis,score\ni1,pa,5\ni2,pa,5\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    said = " ".join(r.output.split())
    assert f"{h} line 3, item 'i2', column 'score': human score {label} is outside the scale 1..5" in said
    # On a scale that holds it, the same label is fine.
    assert run("agreement", "--pred", p, "--human", h, "--bootstrap", 0, "--scale", "-2,7").exit_code == 0


def test_axes_that_differ_only_by_case_are_an_error(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\ni2,PA,1\n", "item_id,axis,score\ni1,pa,5\n")
    with pytest.raises(ScoreTableError, match=r"axes 'pa' \(line 2\), 'PA' \(line 3\) differ only by case"):
        agreement_from_csv(p, h, bootstrap=0)
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\n", "item_id,axis,score\ni1,PA,5\n")
    with pytest.raises(ScoreTableError,
                       match=r"pred.csv line 2, column 'axis': axis 'PA' differs only by case"):
        agreement_from_csv(p, h, bootstrap=0)


def test_item_ids_that_differ_only_by_case_get_a_warning(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score\nv1,pa,5\nV1,pa,1\nv2,pa,3\n",
                  "item_id,axis,score\nv1,pa,5\nV1,pa,1\nv2,pa,3\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 0, r.output
    assert "warning:" in r.output and "'v1'/'V1'" in r.output


def test_ids_that_differ_only_in_unicode_composition_get_a_warning(tmp_path: Path) -> None:
    # 'ep00/Modél' typed (NFC) and copied from macOS (NFD) were two items, and nothing said so
    nfc, nfd = "g/Mod\u00e9l", "g/Mode\u0301l"
    h, p = _files(tmp_path, f"item_id,axis,score,clip_id\n{nfc},pa,5,{nfc}\n{nfd},pa,1,{nfd}\nv2,pa,3,c\n",
                  f"item_id,axis,score\n{nfc},pa,5\n{nfd},pa,1\nv2,pa,3\n")
    warned: list[str] = []
    agreement_from_csv(p, h, bootstrap=0, warn=warned.append)
    twins = "'g/Mod\\xe9l'/'g/Mode\\u0301l'"
    assert [w.split(":")[0] for w in warned] == [str(h), str(p), str(h)]
    assert all(twins in w and "composed (NFC/NFD" in w for w in warned)
    assert "1 clip id(s)" in warned[2] and "as different clips" in warned[2]


@pytest.mark.parametrize("cell", ["inf", "-inf", "nan"])
def test_a_prediction_that_is_not_finite_is_an_error(tmp_path: Path, cell: str) -> None:
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\ni2,pa,4\n", f"item_id,axis,score\ni1,pa,{cell}\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    assert f"{p} line 2, column 'score': not a finite number: '{cell}'" in " ".join(r.output.split())


def test_an_item_whose_rows_name_two_clips_is_an_error(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score,clip_id\ni1,pa,5,c1\ni1,ia,5,c2\ni2,pa,3,c3\n",
                  "item_id,axis,score\ni1,pa,5\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    said = " ".join(r.output.split())
    assert f"{h}, item 'i1', column 'clip_id': line 2 gives 'c1' and line 3 gives 'c2'" in said


def test_a_clip_in_two_sources_names_the_clip_and_lines(tmp_path: Path) -> None:
    h, p = _files(tmp_path,
                  "item_id,axis,score,clip_id,source\ni1,pa,5,c1,s1\ni2,pa,3,c1,s2\ni3,pa,1,c2,s1\n",
                  "item_id,axis,score\ni1,pa,5\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 10)
    assert r.exit_code == 2
    said = " ".join(r.output.split())
    assert f"{h}, clip_id 'c1': line 2 puts it in source 's1' and line 3 in 's2'" in said
    with pytest.raises(ValueError, match=r"cluster 'c1' spans more than one stratum: the items at "
                       r"positions 0 and 1 \(0-based\) are in strata 's1' and 's2'"):
        ClusterBootstrap(["c1", "c1", "c2"], ["s1", "s2", "s1"], 10, 0)


def test_a_score_given_twice_to_segments_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "seg.csv"
    path.write_text("verdict,kiva\nGood,1\nBad,3\nMedium,2\n")
    r = run("segments", "--in", path, "--score", "kiva", "--score", "kiva:higher-better")
    assert r.exit_code == 2
    assert "--score 'kiva' is given more than once (kiva, kiva:higher-better)" in " ".join(r.output.split())


def test_two_items_give_no_interval_and_say_why(tmp_path: Path) -> None:
    # Two items: r is no longer 1.000 [n/a] but undefined (fewer than 3 pairs); MSE keeps its value.
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\ni2,pa,3\n",
                  "item_id,axis,score\ni1,pa,4\ni2,pa,2\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 200, "--json")
    assert r.exit_code == 0, r.output
    stats = json.loads(r.output)["cells"]["pred"]["pa"]["stats"]
    assert stats["pearson"] == {"value": None, "low": None, "high": None, "se": None,
                                "why": "fewer than 3 pairs"}
    assert stats["mse"]["value"] == 1.0 and stats["mse"]["low"] is None
    assert stats["mse"]["why"] == "scored items in 2 cluster(s); an interval needs at least 3"
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 200)
    said = " ".join(r.output.split())
    assert "1.000 [n/a]" in said and "no interval (scored items in 2 cluster(s)" in said  # the MSE
    assert "undefined (fewer than 3 pairs): pred pa (pearson, spearman, kendall)" in said


def test_one_item_gives_no_standard_error(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\n", "item_id,axis,score\ni1,pa,4\n")
    report = agreement_from_csv(p, h, bootstrap=100, seed=1)
    mse = report.cells["pred"]["pa"].stats["mse"]
    assert mse.value == 1.0 and math.isnan(mse.se) and math.isnan(mse.low)
    assert mse.why is not None and "1 cluster(s)" in mse.why


def test_an_adequate_sample_keeps_its_intervals_unchanged() -> None:
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, 60).astype(float)
    pred = np.clip(human + rng.integers(-1, 2, 60), 1, 5)
    clusters = np.repeat(np.arange(20), 3)
    report = agreement_table({"j": {"pa": pred}}, {"pa": human}, clusters, bootstrap=300, seed=7)
    from robojudge.meta import summarize_replicates
    from robojudge.meta._weighted import moment_columns, stats_from_sums

    boot = ClusterBootstrap(clusters, None, 300, 7)
    v = moment_columns(pred, human, float(pred.mean()), float(human.mean()), (1, 5))
    sums = boot.item_weights(boot.counts) @ v
    want = summarize_replicates(stats_from_sums(sums)["mse"][None, :], 0.95)
    got = report.cells["j"]["pa"].stats["mse"]
    assert (got.low, got.high, got.se) == pytest.approx((want[0][0], want[1][0], want[2][0]))
    assert got.why is None and got.replicates is None


def test_segments_with_two_clips_in_a_group_show_no_interval(tmp_path: Path) -> None:
    lines = ["robot,clip,verdict,kiva"]
    verdicts = ["Good", "Medium", "Bad"]
    for clip in ("a1", "a2"):
        lines += [f"adroit,{clip},{v},{k + (0.1 if clip == 'a2' else 0)}" for k, v in enumerate(verdicts)]
    for c in range(6):
        lines += [f"fetch,f{c},{v},{k + 0.05 * c}" for k, v in enumerate(verdicts)]
    path = tmp_path / "seg.csv"
    path.write_text("\n".join(lines) + "\n")
    r = run("segments", "--in", path, "--score", "kiva", "--group", "robot", "--clip", "clip",
            "--replicates", 200, "--json")
    assert r.exit_code == 0, r.output
    rho = json.loads(r.output)["rho"]["kiva"]
    assert rho["adroit"]["low"] is None and "2 cluster(s)" in rho["adroit"]["why"]
    assert rho["macro"]["low"] is None  # as thin as its thinnest group
    assert rho["fetch"]["low"] is not None and "why" not in rho["fetch"]
    r = run("segments", "--in", path, "--score", "kiva", "--group", "robot", "--clip", "clip",
            "--replicates", 200)
    said = " ".join(r.output.split())
    assert "[n/a]" in said and "no interval (scored items in 2 cluster(s)" in said


# --- second audit: half points, blank clips and sources, ragged rows, raters, blanks -------------------


def test_a_half_point_human_score_is_refused(tmp_path: Path) -> None:
    """A human 3.5 was rounded up like a prediction: predictions all 0.5 off counted as exact (Acc 1.0
    beside MSE 0.25)."""
    h, p = _files(tmp_path, "item_id,axis,score\na,pa,3.5\nb,pa,2.5\nc,pa,2\n",
                  "item_id,axis,score\na,pa,4\nb,pa,3\nc,pa,2\n")
    with pytest.raises(ScoreTableError, match=r"line 2, item 'a', column 'score': human score 3.5 is not a "
                                              r"whole number \(2 such rows\); .*an adjudicated score "
                                              r"\(robojudge annotate\), the majority score, or the mean "
                                              r"rounded half up \(3.5 -> 4"):
        agreement_from_csv(p, h, bootstrap=0)


def test_a_blank_clip_is_the_items_own_cluster(tmp_path: Path) -> None:
    """As without the column (docs/meta.md): blanks were one cluster named ''. A column of blanks gives
    what no column gives, and half blank, each blank item is a cluster of its own beside the clips
    (15 of them and 10 clips); a clip named like the fallback does not merge with it."""
    rng = np.random.default_rng(1)
    human = [int(v) for v in rng.integers(1, 6, 30)]
    pred = "item_id,axis,score\n" + "".join(f"i{k},pa,{np.clip(h + rng.normal(0, .8), 1, 5):.2f}\n"
                                            for k, h in enumerate(human))  # in the scale, as is checked
    (tmp_path / "p.csv").write_text(pred)

    def run(clips: list[str] | None) -> object:
        head = "item_id,axis,score" + (",clip_id" if clips is not None else "") + "\n"
        body = "".join(f"i{k},pa,{h}" + (f",{clips[k]}" if clips is not None else "") + "\n"
                       for k, h in enumerate(human))
        (tmp_path / "h.csv").write_text(head + body)
        return agreement_from_csv(tmp_path / "p.csv", tmp_path / "h.csv", bootstrap=300, seed=3)

    none, blanks = run(None), run([""] * 30)
    assert none.n_clusters == blanks.n_clusters == 30  # type: ignore[attr-defined]
    ea, eb = (r.cells["p"]["pa"].stats["mse"] for r in (none, blanks))  # type: ignore[attr-defined]
    assert (ea.value, ea.low, ea.high) == (eb.value, eb.low, eb.high)
    half = run([f"c{k // 3}" if k % 2 else "" for k in range(30)])
    assert half.n_clusters == 15 + 10  # type: ignore[attr-defined]
    named = run(["item i1" if k == 0 else (f"c{k // 3}" if k % 2 else "") for k in range(30)])
    assert named.n_clusters == 15 + 10  # type: ignore[attr-defined]  # 'item i1' is a clip of its own


def test_a_blank_source_among_named_ones_is_refused(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score,source\na,pa,3,s0\nb,pa,2,\nc,pa,2,s1\n",
                  "item_id,axis,score\na,pa,4\nb,pa,3\nc,pa,2\n")
    with pytest.raises(ScoreTableError, match=r"line 3, item 'b', column 'source': blank while other rows"):
        agreement_from_csv(p, h, bootstrap=0)
    h.write_text("item_id,axis,score,source\na,pa,3,\nb,pa,2,\nc,pa,2,\n")  # none named: no strata
    assert agreement_from_csv(p, h, bootstrap=0).cells["pred"]["pa"].n == 3


@pytest.mark.parametrize("human", ["item_id,axis,score\nv1,pa,3,\nv2,pa,2,\nv3,pa,5,\n",
                                   "item_id,axis,score,clip_id\nv1,pa,3,c1\nv2,pa,2,c2,x\nv3,pa,5,c3\n"])
def test_a_row_with_a_field_too_many_is_named(tmp_path: Path, human: str) -> None:
    """pandas took the first column as the index and shifted the others: the errors named the other
    file or the wrong column, or a table came out with axes named after scores."""
    h, p = _files(tmp_path, human, "item_id,axis,score\nv1,pa,3\nv2,pa,2\nv3,pa,5\n")
    fields = len(human.splitlines()[0].split(","))
    line = 2 if human.count(",x") == 0 else 3
    with pytest.raises(ScoreTableError, match=rf"{h.name} line {line}: {fields + 1} fields where the header "
                                              rf"has {fields} \(item_id, axis, score"):
        agreement_from_csv(p, h, bootstrap=0)


def test_several_raters_are_told_to_combine_and_blanks_are_said(tmp_path: Path) -> None:
    h, p = _files(tmp_path, "item_id,axis,score,rater\nv1,pa,3,r1\nv1,pa,4,r2\nv2,pa,2,r1\n",
                  "item_id,axis,score\nv1,pa,3\nv2,pa,2\n")
    with pytest.raises(ScoreTableError, match=r"lines 2, 3; the file has a 'rater' column, which is not "
                                              r"read: give one human score per \(item, axis\)"):
        agreement_from_csv(p, h, bootstrap=0)
    h.write_text("item_id,axis,score\nv1,pa,3\nv2,pa,2\nv3,pa,\nv4,pa,4\n")
    p.write_text("item_id,axis,score\nv1,pa,3\nv2,pa,2\nv3,pa,4\nv4,pa,4\n")
    said: list[str] = []
    report = agreement_from_csv(p, h, bootstrap=0, warn=said.append)
    assert report.cells["pred"]["pa"].n == 3
    assert said == [f"{h}: 1 row(s) without a human score, left out of every statistic: line 4 (item 'v3')"]
    h.write_text("item_id,axis,score\nv1,pa,3\n,pa,2\n")
    with pytest.raises(ScoreTableError, match=r"human.csv line 3, column 'item_id': blank item id"):
        agreement_from_csv(p, h, bootstrap=0)


def test_blank_lines_are_skipped_and_a_short_row_is_named_for_what_it_lacks(tmp_path: Path) -> None:
    """A line of spaces, which pandas skips, was refused by the field count; a short row got the hint
    of a long one."""
    h, p = _files(tmp_path, "item_id,axis,score\nv1,pa,3\nv2,pa,2\nv3,pa,4\n",
                  "item_id,axis,score\nv1,pa,3\n   \nv2,pa,2\n\nv3,pa,5\n")
    assert agreement_from_csv(p, h, bootstrap=0).cells["pred"]["pa"].n == 3
    p.write_text("item_id,axis,score\nv1,pa,3\nv2,pa\n")
    with pytest.raises(ScoreTableError, match=r"pred.csv line 3: 2 fields where the header has 3 "
                                              r"\(item_id, axis, score\); a missing cell\? Leave a blank"):
        agreement_from_csv(p, h, bootstrap=0)


def test_files_written_with_a_space_after_each_comma_read_as_without(tmp_path: Path) -> None:
    # A review of the change that read cells as written: every row of a file written 'a, b, c' (by hand,
    # as people do) was refused, and an annotation export whose source began with a space too. The
    # spaces after a comma are dropped again; a duplicate they make says so.
    human = "item_id, axis, score\ni1, pa, 5\ni2, pa, 1\n"
    h, p = _files(tmp_path, human, "judge, item_id, axis, score\nsp, i1, pa, 5\nsp, i2, pa, 1\n")
    table = agreement_from_csv(p, h, bootstrap=0)
    assert list(table.cells) == ["sp"]
    h, p = _files(tmp_path, human, "judge,item_id,axis,score\nsp, i1,pa,5\nsp,i1 ,pa,4\n")
    with pytest.raises(ScoreTableError, match=r"\(item/axis: i1 /pa\); 1 of their item ids differ from one "
                                              r"of .*human.csv only by surrounding spaces \('i1 '/'i1'\)"):
        agreement_from_csv(p, h, bootstrap=0)


@pytest.mark.parametrize(("column", "value"),
                         [("judge", "\x1b[31mred"), ("item_id", "i\r1"), ("axis", "p\ta"),
                          ("judge", "j\u202e")])
def test_names_with_control_characters_are_refused(tmp_path: Path, column: str, value: str) -> None:
    # Before, an ESC in a judge name reached the terminal's table raw and recoloured it.
    row = {"judge": "j", "item_id": "i1", "axis": "pa", "score": "5", column: value}
    cells = ",".join(f'"{row[c]}"' for c in ("judge", "item_id", "axis", "score"))
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\n", f"judge,item_id,axis,score\n{cells}\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    kind = "a bidirectional control" if "\u202e" in value else "a control"  # (an override reverses the row)
    assert f"{p} line 2, column '{column}': {value!r} holds {kind} character" in " ".join(r.output.split())


def test_item_ids_composed_differently_across_the_two_files_are_named(tmp_path: Path) -> None:
    # A review: the composition (NFC/NFD) warning compared ids within one file; human scores typed in NFC
    # against predictions from NFD file names failed with 'no human score' listing ids that look alike.
    nfc, nfd = "ep00/Mod\u00e9l", "ep00/Mode\u0301l"
    h, p = _files(tmp_path, f"item_id,axis,score\n{nfc},pa,5\n", f"judge,item_id,axis,score\nj,{nfd},pa,4\n")
    composed = r"1 of their item ids equal one of .* once composed alike"
    with pytest.raises(ScoreTableError, match=composed) as info:
        agreement_from_csv(p, h, bootstrap=0)
    assert ascii(nfd) in str(info.value) and ascii(nfc) in str(info.value)


def test_surrounding_spaces_in_an_axis_make_no_new_axis(tmp_path: Path) -> None:
    """A spreadsheet cell 'PA ' was an axis of its own (its only judge lost every Overall statistic).
    Axis names are read without surrounding spaces, and a duplicate that makes is refused with both
    lines."""
    human = "item_id,axis,score\nv1,PA,3\nv2,PA,2\nv3,PA,4\nv1,IA,1\nv2,IA,5\nv3,IA,2\n"
    pred = ("judge,item_id,axis,score\nj1,v1,PA,3\nj1,v2,PA,1\nj1,v3,PA,5\nj1,v1,IA,2\nj1,v2,IA,5\n"
            "j1,v3,IA,2\n")
    h, p = _files(tmp_path, human.replace("v3,IA", 'v3,"IA "'), pred.replace("j1,v1,IA", 'j1,v1,"IA\u00a0"'))
    report = agreement_from_csv(p, h, bootstrap=0)
    assert list(report.axes) == ["PA", "IA"] and list(report.cells) == ["j1"]
    assert report.cells["j1"]["IA"].n == 3
    assert np.isfinite(report.cells["j1"]["overall"].stats["pearson"].value)
    h.write_text(human + 'v3,"PA ",5\n')
    with pytest.raises(ScoreTableError, match=r"human.csv: duplicate \(item_id, axis\) rows on lines "
                                              r"4, 8; axes are read without surrounding spaces, so a cell "
                                              r"'PA ' names the axis 'PA'"):
        agreement_from_csv(p, h, bootstrap=0)


def test_ids_are_read_as_written_and_spaces_that_keep_them_apart_are_named(tmp_path: Path) -> None:
    """Clip ids and sources were read without surrounding spaces, though a manifest keeps them as
    written: clips 'c1' and 'c1 ' became one bootstrap cluster (other intervals), or, in two sources,
    an error about a clip in two sources that quoted neither as written. Ids are compared as written
    now; ids that differ only by such spaces get a warning, and an item id that fails to match only
    for them says so."""
    rng = np.random.default_rng(3)
    human = [int(v) for v in rng.integers(1, 6, 12)]
    pred = "judge,item_id,axis,score\n" + "".join(f"j1,i{k},pa,{np.clip(h + rng.integers(-1, 2), 1, 5)}\n"
                                                 for k, h in enumerate(human))
    (tmp_path / "pred.csv").write_text(pred)

    def report(clips: list[str], sources: list[str]) -> tuple[list[float], list[str]]:
        cells = zip(human, clips, sources, strict=True)
        rows = "".join(f"i{k},pa,{h},{c},{s}\n" for k, (h, c, s) in enumerate(cells))
        (tmp_path / "human.csv").write_text("item_id,axis,score,clip_id,source\n" + rows)
        warned: list[str] = []
        table = agreement_from_csv(tmp_path / "pred.csv", tmp_path / "human.csv", bootstrap=300, seed=2,
                                   warn=warned.append)
        r = table.cells["j1"]["pa"].stats["pearson"]
        return [r.value, r.low, r.high], warned

    clips = [f"c{k // 2}" for k in range(12)]  # six clips of two items
    spaced, warned = report(['"c0 "', *clips[1:]], ["droid"] * 12)
    apart, _ = report(["c0a", *clips[1:]], ["droid"] * 12)  # sorts where "c0 " does
    one, _ = report(clips, ["droid"] * 12)
    assert spaced == apart != one  # two clusters, as in the manifest
    assert warned == [f"{tmp_path / 'human.csv'}: 1 clip id(s) differ from another only by surrounding "
                      "spaces ('c0 '/'c0'); they are compared as written, as different clips"]
    # in two sources: was refused as one clip in two sources
    two = ["droid"] * 6 + ["egodex"] * 6
    spaced, _ = report([*clips[:6], '"c0 "', *clips[7:]], two)
    assert spaced == report([*clips[:6], "c0a", *clips[7:]], two)[0]
    _, warned = report(clips, ["droid"] * 6 + ['"droid "'] * 6)
    assert any("1 source(s) differ from another only by surrounding spaces ('droid'/'droid ')" in w
               for w in warned)
    # an item id with a space the other file lacks matches nothing, and the error says why
    (tmp_path / "pred.csv").write_text(pred.replace("j1,i3,", 'j1,"i3 ",').replace("j1,i4,", '"j1 ",i4,'))
    with pytest.raises(ScoreTableError, match=r"1 row\(s\) have no human score in .*human.csv \(item/axis: "
                                              r"i3 /pa\); 1 of their item ids differ from one of .*human.csv "
                                              r"only by surrounding spaces \('i3 '/'i3'\), and ids are "
                                              r"compared as written: remove the spaces"):
        agreement_from_csv(tmp_path / "pred.csv", tmp_path / "human.csv", bootstrap=0)
    (tmp_path / "pred.csv").write_text(pred.replace("j1,i4,", '"j1 ",i4,'))
    warned = []
    table = agreement_from_csv(tmp_path / "pred.csv", tmp_path / "human.csv", bootstrap=0, warn=warned.append)
    assert list(table.cells) == ["j1", "j1 "] and any(
        "1 judge(s) differ from another only by surrounding spaces ('j1'/'j1 ')" in w for w in warned)


@pytest.mark.parametrize("column", ["rater", "annotator", "WorkerId", "PROLIFIC_PID"])
def test_several_raters_are_told_how_to_combine_them(tmp_path: Path, column: str) -> None:
    """The hint asked for 'their median, or a rounded mean': the median of two raters (3, 4) is 3.5,
    which is refused next, and 'rounded' said no rule. It came for a column named 'rater' only."""
    h, p = _files(tmp_path, f"item_id,axis,score,{column}\nv1,pa,3,r1\nv1,pa,4,r2\nv2,pa,2,r1\n",
                  "item_id,axis,score\nv1,pa,3\nv2,pa,2\n")
    with pytest.raises(ScoreTableError, match=rf"the file has a '{column}' column, which is not read: give "
                                              r"one human score per \(item, axis\): combine the raters' "
                                              r"scores into one whole score on the scale first: an "
                                              r"adjudicated score .*half up \(3.5 -> 4"):
        agreement_from_csv(p, h, bootstrap=0)


def test_a_judge_score_outside_the_scale_is_refused_as_a_human_one_is(tmp_path: Path) -> None:
    """A 0-10 judge against 1-5 humans was clipped into matches without a word (a 10 'matched' a 5);
    the human side refuses such a score for that reason. A score that rounds into the scale is kept."""
    h, p = _files(tmp_path, "item_id,axis,score\ni1,pa,5\ni2,pa,1\ni3,pa,3\n",
                  "judge,item_id,axis,score\nj,i1,pa,10\nj,i2,pa,2\nj,i3,pa,6\n")
    r = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert r.exit_code == 2
    assert (f"{p} line 2, item 'i1', axis 'pa', column 'score': judge score 10 is outside the scale 1..5 "
            "(2 such rows); accuracy would clip it into the scale") in " ".join(r.output.split())
    p.write_text("judge,item_id,axis,score\nj,i1,pa,5.49\nj,i2,pa,0.5\nj,i3,pa,\n")
    assert agreement_from_csv(p, h, bootstrap=0).cells["j"]["pa"].stats["exact"].value == 1.0
    p.write_text("judge,item_id,axis,score\nj,i1,pa,5.5\nj,i2,pa,1\nj,i3,pa,3\n")
    with pytest.raises(ScoreTableError, match=r"line 2, .*judge score 5.5 is outside the scale 1..5;"):
        agreement_from_csv(p, h, bootstrap=0)
    p.write_text("judge,item_id,axis,score\nj,i1,pa,10\nj,i2,pa,0\nj,i3,pa,6\n")
    assert agreement_from_csv(p, h, bootstrap=0, scale=(0, 10)).cells["j"]["pa"].n == 3


def test_errors_name_the_line_of_the_file_after_blank_lines_and_multi_line_cells(tmp_path: Path) -> None:
    """Lines were counted as rows + 2: after two blank lines, or a quoted comment spanning lines (as
    form exports write them), the line named was not the value's."""
    pred = "item_id,axis,score\n" + "".join(f"v{k},pa,3\n" for k in range(4))
    h, p = _files(tmp_path, "item_id,axis,score\nv0,pa,2\n\n\nv1,pa,3\nv2,pa,x\nv3,pa,1\n", pred)
    with pytest.raises(ScoreTableError, match=r"human.csv line 6, column 'score': not a number: 'x'"):
        agreement_from_csv(p, h, bootstrap=0)
    h.write_text('item_id,axis,score,comment\nv0,pa,3,"gripper\nmelts"\nv1,pa,2,"two\nline\nnote"\n'
                 "v2,pa,3.5,fine\nv3,pa,4,\n")
    with pytest.raises(ScoreTableError, match=r"human.csv line 7, item 'v2', column 'score': human score "):
        agreement_from_csv(p, h, bootstrap=0)
    h.write_text('item_id,axis,score,comment\nv0,pa,3,"a\nb"\nv1,pa,2,\n\nv0,pa,4,\n')
    with pytest.raises(ScoreTableError, match=r"duplicate \(item_id, axis\) rows on lines 2, 6"):
        agreement_from_csv(p, h, bootstrap=0)
    (tmp_path / "fit.csv").write_text('x,y,note\n1,2,"a\nb"\n\n2,3,\n9,4,\n')
    with pytest.raises(ScoreTableError, match=r"fit.csv line 6, column 'x': 9 is outside the range"):
        fit_from_csv(tmp_path / "fit.csv", "x", "y", score_range=(0, 5))
    # A file that is not UTF-8 (Excel's 'CSV' on Windows) names its line too.
    h.write_bytes("item_id,axis,score\nv0,pa,3\ncafé,pa,4\n".encode("cp1252"))
    with pytest.raises(ScoreTableError, match=r"human.csv line 3: not UTF-8 text \(byte e9 at offset 30\)"):
        agreement_from_csv(p, h, bootstrap=0)


def test_the_composition_hint_needs_ids_that_differ(tmp_path: Path) -> None:
    """A prediction for an axis the human file lacks for its item got the NFC/NFD hint, showing the
    same id twice ('v3'/'v3')."""
    h, p = _files(tmp_path, "item_id,axis,score\nv3,ia,4\n", "item_id,axis,score\nv3,ia,4\nv3,pa,2\n")
    with pytest.raises(ScoreTableError, match=r"1 row\(s\) have no human score in .* \(item/axis: v3/pa\)$"):
        agreement_from_csv(p, h, bootstrap=0)


def test_a_blank_judge_cell_is_refused_as_a_blank_item_id_is(tmp_path: Path) -> None:
    """A judge named once per block (the rest of its rows blank) became a second judge named '', holding
    the blank rows, while the named judge's statistics rested on the others alone."""
    h, p = _files(tmp_path, "item_id,axis,score\n" + "".join(f"i{k},PA,3\n" for k in range(1, 7)),
                  "judge,item_id,axis,score\nJ,i1,PA,2\n,i2,PA,3\nJ,i3,PA,4\nJ,i4,PA,5\n ,i5,PA,1\n"
                  "J,i6,PA,2\n")
    with pytest.raises(ScoreTableError,
                       match=r"pred.csv line 3, column 'judge': blank judge \(2 such rows\)"):
        agreement_from_csv(p, h, bootstrap=0)
    result = run("agreement", "--pred", p, "--human", h, "--bootstrap", 0)
    assert result.exit_code == 2, result.output
    assert "line 3, column 'judge': blank judge" in result.output
    p.write_text("judge,item_id,axis,score\n" + "".join(f"J,i{k},PA,{k % 5 + 1}\n" for k in range(1, 7)))
    assert agreement_from_csv(p, h, bootstrap=0).judges == ("J",)


def _segment_rows(blank: set[int], *, video: bool = True) -> str:
    """12 videos of 3 segments in one group, a video a clip, levels Good, Medium, Bad in turn; the clip
    (and with ``video`` False nothing else) of the videos in ``blank`` left blank."""
    lines = ["robot,clip,video,verdict,kiva" if video else "robot,clip,verdict,kiva"]
    for v in range(12):
        level = ("Good", "Medium", "Bad")[v % 3]
        clip = "" if v in blank else f"c{v}"
        for s in range(3):
            kiva = v % 3 + 0.1 * s + 0.01 * v
            lines.append(f"fetch,{clip},v{v},{level},{kiva}" if video else f"fetch,{clip},{level},{kiva}")
    return "\n".join(lines) + "\n"


def test_a_blank_segment_clip_is_a_clip_of_its_own_and_counted(tmp_path: Path) -> None:
    """Blank clip cells were one clip named '': the 12 segments of 4 videos moved together in the
    bootstrap, as one clip (9 clusters where there are 12 clips)."""
    from robojudge.meta import segments_from_csv

    path = tmp_path / "seg.csv"
    path.write_text(_segment_rows({0, 1, 3, 6}))
    said: list[str] = []
    table = segments_from_csv(path, {"kiva": False}, group="robot", clip="clip", video="video",
                              replicates=50, draws=50, warn=said.append)
    # 8 named clips, and the 4 blank videos each a clip of its own: 12, as with every clip named
    assert table.rho.clusters == {"fetch": 12}
    assert said == [f"{path}: 12 segment(s) with a blank 'clip' cell, each taken as a clip of its own (its "
                    "video) in the bootstrap: line 2, line 3, line 4, line 5, line 6 and 7 more"]
    named = tmp_path / "named.csv"
    named.write_text(_segment_rows(set()))
    full = segments_from_csv(named, {"kiva": False}, group="robot", clip="clip", video="video",
                             replicates=50, draws=50, warn=said.append)
    assert full.rho.clusters == {"fetch": 12} and len(said) == 1
    assert table.rho.metrics["kiva"].micro.rho == full.rho.metrics["kiva"].micro.rho
    # without a video column, each blank-clip segment is a clip of its own: 8 clips + 12 segments
    path.write_text(_segment_rows({0, 1, 3, 6}, video=False))
    alone = segments_from_csv(path, {"kiva": False}, group="robot", clip="clip", replicates=50,
                              warn=said.append)
    assert alone.rho.clusters == {"fetch": 20}
    assert "each taken as a clip of its own (the segment alone)" in said[-1]
    r = run("segments", "--in", path, "--score", "kiva", "--group", "robot", "--clip", "clip",
            "--replicates", 50, "--json")
    assert r.exit_code == 0, r.output
    assert "warning:" in r.output and "12 segment(s) with a blank 'clip' cell" in r.output


@pytest.mark.parametrize(("column", "what"), [("robot", "group"), ("video", "video")])
def test_a_blank_segment_group_or_video_is_refused(tmp_path: Path, column: str, what: str) -> None:
    """A blank group was a third group named ''; blank videos were one video, whose level (its worst
    segment's) took good videos out of the Good pool."""
    from robojudge.meta import segments_from_csv

    text = _segment_rows(set())
    lines = text.splitlines()
    header = lines[0].split(",")
    for k in (4, 5):  # lines 5 and 6 of the file
        cells = lines[k].split(",")
        cells[header.index(column)] = ""
        lines[k] = ",".join(cells)
    path = tmp_path / "seg.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScoreTableError, match=rf"seg.csv line 5, column '{column}': blank {what} "
                                              r"\(2 such rows\)"):
        segments_from_csv(path, {"kiva": False}, group="robot", clip="clip", video="video", replicates=50,
                          draws=50)
    r = run("segments", "--in", path, "--score", "kiva", "--group", "robot", "--clip", "clip", "--video",
            "video", "--replicates", 50)
    assert r.exit_code == 2 and f"column '{column}': blank {what}" in " ".join(r.output.split())
