"""Generators sharing no clip: one rule decides the resampling strata (group_bootstrap), for the leaderboard,
the report's overview and its RoboPhys-3D intervals.

Review rev21 F3: resampling within every (source, generator) cell held a generator's only item of a source
fixed in every replicate, and the board then spoke of a clip "alone in its source" in a source of 13 items,
and counted 6 strata for 2 sources. F4: the overview still pooled, so the same metric and seed gave two
intervals. With clips shared across generators nothing changes (values computed at 96426f7a).
"""

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from robojudge.cli import app
from robojudge.meta import generator_leaderboard, group_bootstrap, group_means, lone_clusters_note
from robojudge.report._leaderboard import board_notes
from robojudge.store import ResultRow, ResultStore
from robojudge.suite import Item


def _lone_shape() -> tuple[list[str], list[str], list[str], np.ndarray]:
    """The review's build_lone.py: no clip_id, 3 generators x 12 items; g0 has 11 items in s1 and one in
    s2 (item g0-0), the others 6 and 6."""
    rng = np.random.default_rng(3)
    gens, srcs, ids, vals = [], [], [], []
    for gi, g in enumerate(["g0", "g1", "g2"]):
        for c in range(12):
            gens.append(g)
            srcs.append(("s2" if c == 0 else "s1") if g == "g0" else ("s1" if c % 2 else "s2"))
            ids.append(f"{g}-{c}")
            vals.append(0.5 + 0.05 * rng.normal(gi * 0.3, 1))
    return gens, srcs, ids, np.array(vals)


def test_a_small_cell_is_merged_into_its_generator_and_the_sources_are_counted() -> None:
    gens, srcs, ids, vals = _lone_shape()
    boot, unpaired = group_bootstrap(ids, gens, srcs, n_replicates=400, seed=1)
    assert unpaired
    assert boot.n_strata == 2 and boot.n_lone_clusters == 0  # the user's two sources, neither small
    drawn = boot.counts[:, boot.item_cluster]  # (B, items): each item is its own cluster
    g = np.array(gens)
    s2 = np.array(srcs) == "s2"
    # g0's only s2 item is resampled with g0's others, not held once in every replicate
    assert len(set(drawn[:, ids.index("g0-0")].tolist())) > 1
    assert (drawn[:, g == "g0"].sum(axis=1) == 12).all()
    # g1 keeps 6 and 6: drawn within each source
    assert (drawn[:, (g == "g1") & s2].sum(axis=1) == 6).all()
    assert (drawn[:, (g == "g1") & ~s2].sum(axis=1) == 6).all()

    board = generator_leaderboard({"pa": vals}, gens, ids, srcs, bootstrap=400, seed=1)
    assert board.unpaired and board.n_strata == 2 and board.n_lone_clusters == 0
    assert not any("only clip of its source" in n for n in board_notes(board))
    assert board.to_dict()["bootstrap"]["strata"] == 2


def test_a_clip_alone_in_its_source_and_held_once_is_still_noted() -> None:
    # g0's one clip is alone in source s3 and g0 has no other: it is drawn once in every replicate
    gens = ["g0"] + ["g1"] * 4 + ["g2"] * 4
    srcs = ["s3"] + ["s1", "s1", "s2", "s2"] * 2
    ids = [f"i{k}" for k in range(9)]
    boot, unpaired = group_bootstrap(ids, gens, srcs, n_replicates=50, seed=0)
    assert unpaired and boot.n_strata == 3 and boot.n_lone_clusters == 1
    assert (boot.counts[:, boot.item_cluster[0]] == 1).all()
    assert lone_clusters_note(boot.n_lone_clusters, boot.n_clusters).startswith("1 of 9 clips")


def test_overview_means_and_leaderboard_give_the_same_intervals_unpaired() -> None:
    gens, srcs, ids, vals = _lone_shape()
    means = group_means(vals, gens, ids, srcs, bootstrap=300, seed=7)
    board = generator_leaderboard({"m": vals}, gens, ids, srcs, bootstrap=300, seed=7)
    assert board.unpaired
    for e in board.entries:
        s, m = e.standings["m"].score, means[e.generator][0]
        assert (m.low, m.high) == (s.low, s.high)


def test_many_generators_get_the_same_draws_in_the_overview_and_on_the_board() -> None:
    # 12 generators: names sort otherwise than their indices as text ("g10" < "g2", "10" < "2")
    rng = np.random.default_rng(4)
    gens = [f"g{k}" for k in range(12) for _ in range(6)]
    srcs = ["s1" if j % 2 else "s2" for k in range(12) for j in range(6)]
    ids = [f"i{k}" for k in range(len(gens))]
    vals = rng.uniform(0, 1, len(gens))
    means = group_means(vals, gens, ids, srcs, bootstrap=200, seed=3)
    board = generator_leaderboard({"m": vals}, gens, ids, srcs, bootstrap=200, seed=3)
    assert board.unpaired
    for e in board.entries:
        s, m = e.standings["m"].score, means[e.generator][0]
        assert (m.low, m.high) == (s.low, s.high)


# Computed with robojudge at 96426f7a (before the within-generator resampling), same inputs and seed.
_SHARED_AT_96426F7A = {"a": (0.26719375, 0.57715625), "b": (0.38430625, 0.605828125),
                       "c": (0.646734375, 0.9963375)}


def test_shared_clips_keep_the_intervals_of_96426f7a() -> None:
    rng = np.random.default_rng(11)
    gens, clips, srcs, vals = [], [], [], []
    for c in range(8):
        for g in ("a", "b", "c"):
            gens.append(g)
            clips.append(f"clip{c}")
            srcs.append("s1" if c < 4 else "s2")
            vals.append(round(float(rng.uniform(0, 1)) + 0.1 * "abc".index(g), 3))
    x = np.array(vals)
    assert not group_bootstrap(clips, gens, srcs, n_replicates=1)[1]
    means = group_means(x, gens, clips, srcs, bootstrap=300, seed=5)
    board = generator_leaderboard({"m": x}, gens, clips, srcs, bootstrap=300, seed=5)
    for e in board.entries:
        lo, hi = _SHARED_AT_96426F7A[e.generator]
        assert (means[e.generator][0].low, means[e.generator][0].high) == (pytest.approx(lo, abs=1e-12),
                                                                          pytest.approx(hi, abs=1e-12))
        s = e.standings["m"].score
        assert (s.low, s.high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert board.n_strata == 2 and board.n_lone_clusters == 0


def test_report_overview_and_metric_leaderboard_print_the_same_interval(tmp_path) -> None:
    gens, srcs, ids, vals = _lone_shape()
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "v.mp4").write_bytes(b"")
    items = [Item(item_id=i, video="v.mp4", source=s, generator=g)
             for i, s, g in zip(ids, srcs, gens, strict=True)]
    (suite / "suite.jsonl").write_text("".join(
        json.dumps(it.model_dump(exclude_none=True, exclude_defaults=True)) + "\n" for it in items))
    db = tmp_path / "results.sqlite"
    with ResultStore(f"sqlite:///{db}") as store:
        store.add([ResultRow(item_id=i, metric="iq1_ssim", config_hash="h", version="1", status="ok",
                             value=float(v)) for i, v in zip(ids, vals, strict=True)])
    runner = CliRunner()
    out = tmp_path / "report"
    r = runner.invoke(app, ["report", str(suite / "suite.jsonl"), "--db", str(db), "--out", str(out),
                            "--bootstrap", "300"])
    assert r.exit_code == 0, r.output
    rows = csv.DictReader((out / "tables" / "summary.csv").open())
    row = next(x for x in rows if x["metric"] == "iq1_ssim")
    assert "within each generator" in (out / "tables" / "summary.md").read_text()
    r = runner.invoke(app, ["leaderboard", "generators", str(suite / "suite.jsonl"), "--db", str(db),
                            "--scores", "metric:iq1_ssim", "--bootstrap", "300", "--json"])
    assert r.exit_code == 0, r.output
    board = json.loads(r.stdout)
    assert board["bootstrap"]["unpaired"] and board["bootstrap"]["strata"] == 2
    for e in board["entries"]:
        t = e["targets"]["iq1_ssim"]
        g = e["generator"]
        assert (float(row[f"{g}_low"]), float(row[f"{g}_high"])) == (t["low"], t["high"])
