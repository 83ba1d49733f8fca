"""Cluster-bootstrap intervals of AFS, RoboPhyscore and the levels, and paired differences of groups
(``bootstrap_scores``, ``aggregate scores --bootstrap``)."""

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from robojudge.aggregate import AggregateInputError, bootstrap_scores, scores_from_table
from robojudge.cli import app
from robojudge.meta import CONSTANT_WHY, ClusterBootstrap

# One metric per level, so that the AFS has a value under --missing drop; all but rc_spatial_consistency
# are among the paper's eight RoboPhyscore metrics.
METRICS = ("cc_semantics", "rc_spatial_consistency", "ol_average_recall", "if_normalized_score")
STATS = ("afs", "robophyscore", "level_1", "level_2", "level_3", "level_4")


def _table(n_clips=30, shift=0.02, noise=0.005, seed=0, generators=("old", "new")):
    """Long table: per clip a base value per metric in [0.3, 0.9]; generator k adds ``k * shift`` and
    uniform noise of half-width ``noise``, so with shift > noise every later generator is better on every
    clip and metric."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_clips):
        base = rng.uniform(0.3, 0.9, len(METRICS))
        for k, g in enumerate(generators):
            for m, b in zip(METRICS, base, strict=True):
                rows.append({"item_id": f"{g}-{c}", "generator": g, "clip_id": f"c{c}", "metric": m,
                             "value": float(b + k * shift + rng.uniform(-noise, noise))})
    return pd.DataFrame(rows)


def test_intervals_contain_the_point_estimate():
    res = bootstrap_scores(_table(), by=["generator"], bootstrap=500, cluster="clip_id", missing="drop")
    point = scores_from_table(_table(), by=["generator"], missing="drop")
    pd.testing.assert_frame_equal(res.table[point.columns], point)
    for s in STATS:
        low, high, value = res.table[f"{s}_low"], res.table[f"{s}_high"], res.table[s]
        assert low.notna().all() and high.notna().all(), s
        assert ((low <= value) & (value <= high) & (low < high)).all(), s
    # The columns follow their statistic.
    cols = list(res.table.columns)
    assert cols[cols.index("afs"):cols.index("afs") + 3] == ["afs", "afs_low", "afs_high"]


def test_same_seed_same_result_and_another_seed_differs():
    kw = {"by": ["generator"], "bootstrap": 200, "cluster": "clip_id", "missing": "drop"}
    a = bootstrap_scores(_table(), seed=7, **kw)
    b = bootstrap_scores(_table(), seed=7, **kw)
    c = bootstrap_scores(_table(), seed=8, **kw)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert not np.allclose(a.table["afs_low"], c.table["afs_low"])


def _resampled(df, counts, clusters):
    """The table one replicate stands for, built by hand: each clip's rows repeated as often as it was
    drawn, the copies given new item ids (two rows of one item and metric are refused)."""
    parts = []
    for k, label in enumerate(clusters):
        for copy in range(int(counts[k])):
            part = df[df["clip_id"] == label].copy()
            part["item_id"] = part["item_id"] + f"#{copy}"
            parts.append(part)
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("missing", ["nan", "drop"])
def test_each_replicate_redoes_the_whole_pipeline(missing):
    # Percentile normalization (cs_collision_count's bounds are its pool's 1st/99th percentiles), a metric
    # missing on one item (NaN for that group under --missing nan when the item is drawn), two regimes
    # averaged with equal weight, and two sources: every replicate must equal scores_from_table on the
    # table that replicate draws.
    rng = np.random.default_rng(3)
    rows = []
    for c in range(12):
        regime, src = ("pick", "s1") if c < 6 else ("push", "s2")
        for g in ("a", "b"):
            for m in ("cs_collision_count", "rc_spatial_consistency"):  # each its sub-dimension's only one
                if (g, c, m) == ("b", 4, "rc_spatial_consistency"):
                    continue  # item b-4 has no rc_spatial_consistency row
                value = rng.uniform(0, 6) if m == "cs_collision_count" else rng.uniform(0.2, 0.9)
                rows.append({"item_id": f"{g}-{c}", "generator": g, "clip_id": f"c{c}", "regime": regime,
                             "source": src, "metric": m, "value": value})
    df = pd.DataFrame(rows)
    kw = {"by": ["generator"], "strategy": "percentile", "macro": "regime", "missing": missing}
    res = bootstrap_scores(df, bootstrap=40, cluster="clip_id", seed=11, **kw)
    clusters = sorted(df["clip_id"].unique())
    boot = ClusterBootstrap(df["clip_id"], df["source"], 40, 11)  # the same draws
    checked = 0
    for r in range(40):
        again = scores_from_table(_resampled(df, boot.counts[r], clusters), **kw).set_index("generator")
        for g_i, g in enumerate(res.table["generator"]):
            for s in res.replicates:
                if s not in again.columns:  # (a group that no replicate row has a value for)
                    continue
                want = again.loc[g, s] if g in again.index else math.nan
                got = res.replicates[s][r, g_i]
                same = (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-9)
                assert same, (r, g, s)
                checked += 1
    assert checked >= 40 * 2 * 6  # afs, robophyscore, 4 levels (and 18 sub-dimensions)
    # b lacks rc_spatial_consistency on item b-4 (clip c4): under --missing nan its RC total is NaN in
    # every replicate that draws c4, and only there; under drop, never.
    drawn_c4 = boot.counts[:, clusters.index("c4")] > 0
    b_i = list(res.table["generator"]).index("b")
    rc = res.replicates["subdim_RC"][:, b_i]
    assert drawn_c4.any() and (~drawn_c4).any()
    assert np.isnan(rc[drawn_c4]).all() == (missing == "nan")
    assert np.isfinite(rc[~drawn_c4]).all()
    assert np.isfinite(res.replicates["subdim_CS"]).all()


def test_two_groups_identical_on_every_clip():
    # "twin" copies "old" on every clip: each replicate gives the same difference, 0, so the interval
    # is withheld as every constant bootstrap is (the reason says so), and P(twin > old) counts every
    # replicate as a tie: 0.5.
    df = _table(generators=("old",))
    twin = df.assign(generator="twin", item_id=df["item_id"].str.replace("old", "twin"))
    res = bootstrap_scores(pd.concat([df, twin]), by=["generator"], bootstrap=300, cluster="clip_id",
                           missing="drop", diff=("twin", "old"))
    afs = res.differences[0]
    assert (afs.statistic, afs.value, afs.prob_a_above) == ("afs", 0.0, 0.5)
    assert math.isnan(afs.low) and afs.why == CONSTANT_WHY
    assert afs.n_shared == afs.n_clusters == 30


def test_two_groups_alike_but_not_clip_for_clip():
    # Same distribution, independent noise per clip: the difference's interval holds 0.
    res = bootstrap_scores(_table(shift=0.0, noise=0.2), by=["generator"], bootstrap=500,
                           cluster="clip_id", missing="drop", diff=("new", "old"))
    afs = res.differences[0]
    assert afs.low < 0 < afs.high and afs.why is None
    assert 0.05 < afs.prob_a_above < 0.95


def test_a_group_better_on_every_clip_is_told_apart():
    # new = old + 0.02 (+- 0.005) on every clip and metric: the marginal intervals overlap, the paired
    # difference excludes 0.
    res = bootstrap_scores(_table(), by=["generator"], bootstrap=1000, cluster="clip_id", missing="drop",
                           diff=("new", "old"))
    t = res.table.set_index("generator")
    assert t.loc["new", "afs_low"] < t.loc["old", "afs_high"]  # overlapping marginal intervals
    afs, rps, *levels = res.differences
    assert [d.statistic for d in levels] == ["level_1", "level_2", "level_3", "level_4"]
    assert all(d.low > 0 for d in levels)
    assert afs.low > 0 and afs.prob_a_above == 1.0
    assert afs.value == pytest.approx(4 * 0.02, abs=0.01)  # one metric per level: 0.02 on each of 4 levels
    assert rps.statistic == "robophyscore" and rps.low > 0
    # Unpaired (each item its own cluster) the same data give a far wider interval.
    loose = bootstrap_scores(_table(), by=["generator"], bootstrap=1000, missing="drop", diff=("new", "old"))
    assert (loose.differences[0].high - loose.differences[0].low) > 5 * (afs.high - afs.low)


def test_fewer_than_three_clusters_withhold_the_interval():
    notes = []
    res = bootstrap_scores(_table(n_clips=2), by=["generator"], bootstrap=200, cluster="clip_id",
                           missing="drop", diff=("new", "old"), note=notes.append)
    assert res.table["afs"].notna().all()
    assert res.table["afs_low"].isna().all() and res.table["afs_high"].isna().all()
    assert res.why[("new", "afs")] == "scored items in 2 cluster(s); an interval needs at least 3"
    assert any(n.startswith("no interval for ") and "2 cluster(s)" in n for n in notes)
    afs = res.differences[0]
    assert math.isnan(afs.low) and math.isnan(afs.prob_a_above) and "2 cluster(s)" in (afs.why or "")


def test_an_interval_on_fewer_replicates_says_so():
    # "a" is on 4 of 30 clips: about (26/30)^30, 1.4% of the replicates, draw none of them and give it no
    # value; its interval rests on the others, and a note counts them.
    df = _table()
    df = df[(df["generator"] == "new") | df["clip_id"].isin(["c0", "c1", "c2", "c3"])]
    notes = []
    res = bootstrap_scores(df, by=["generator"], bootstrap=1000, cluster="clip_id", missing="drop",
                           note=notes.append)
    undefined = int(np.isnan(res.replicates["afs"][:, list(res.table["generator"]).index("old")]).sum())
    assert 0 < undefined < 100
    assert res.table.set_index("generator").loc["old", "afs_low"] > 0
    assert any(f"old afs {1000 - undefined} of 1000" in n for n in notes)


def test_a_clip_in_two_sources_is_refused():
    df = _table(n_clips=4)
    df["source"] = np.where(df["generator"] == "new", "s2", "s1")  # clip c0 in s1 (old) and s2 (new)
    with pytest.raises(AggregateInputError, match=r"cluster 'c0' .*two sources: row \d+ has source"):
        bootstrap_scores(df, by=["generator"], bootstrap=10, cluster="clip_id", missing="drop")


def test_an_empty_cluster_cell_names_its_line(tmp_path):
    df = _table(n_clips=4)
    df.loc[5, "clip_id"] = ""
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    out = CliRunner().invoke(app, ["aggregate", "scores", "--in", str(path), "--by", "generator", "--missing",
                                   "drop", "--bootstrap", "10", "--cluster", "clip_id"])
    assert out.exit_code != 0
    assert f"{path} line 7, item '{df.loc[5, 'item_id']}', column 'clip_id': empty cluster cell" in out.output


def test_bad_arguments():
    with pytest.raises(AggregateInputError, match="no column 'clip'"):
        bootstrap_scores(_table(), by=["generator"], cluster="clip")
    with pytest.raises(AggregateInputError, match="no group 'nwe' to compare \\(did you mean 'new'\\?\\)"):
        bootstrap_scores(_table(), by=["generator"], bootstrap=10, diff=("nwe", "old"))


def test_cli_columns_and_difference(tmp_path):
    path = tmp_path / "long.csv"
    _table().to_csv(path, index=False)
    runner = CliRunner()
    base = ["aggregate", "scores", "--in", str(path), "--by", "generator", "--missing", "drop"]
    out = runner.invoke(app, [*base, "--bootstrap", "200", "--cluster", "clip_id"])
    assert out.exit_code == 0, out.output
    header = out.stdout.splitlines()[0].split(",")
    for s in STATS:
        assert header[header.index(s) + 1:header.index(s) + 3] == [f"{s}_low", f"{s}_high"]
    diff = runner.invoke(app, [*base, "--bootstrap", "200", "--cluster", "clip_id", "--diff", "new,old"])
    assert diff.exit_code == 0, diff.output
    lines = diff.stdout.splitlines()
    assert lines[0] == "statistic,a,b,difference,low,high,p_a_above_b,n_clusters,n_shared_clusters,why"
    assert lines[1].startswith("afs,new,old,") and ",1.0,30,30," in lines[1]
    narrow = runner.invoke(app, [*base, "--bootstrap", "200", "--cluster", "clip_id", "--ci", "0.5"])
    wide = [float(x) for x in out.stdout.splitlines()[1].split(",")[2:4]]
    half = [float(x) for x in narrow.stdout.splitlines()[1].split(",")[2:4]]
    assert wide[0] < half[0] < half[1] < wide[1]  # --ci is --level
    plain = runner.invoke(app, base)
    assert "afs_low" not in plain.stdout  # off by default
    refused = runner.invoke(app, [*base, "--diff", "new,old"])
    assert refused.exit_code != 0 and "--diff needs --bootstrap" in refused.output
