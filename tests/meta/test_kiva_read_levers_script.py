"""scripts/kiva_read_levers.py on made-up reads: errors, candidates, k-th keypoint jerk, readers averaged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _scripts import load_script

lv = load_script("kiva_read_levers")


def _arm(n: int, seed: int, jump: int | None = None) -> np.ndarray:
    """A 4-keypoint arm swinging smoothly; ``jump`` moves its last two keypoints 6 px at that frame."""
    t = np.arange(n)
    a = 0.4 * np.sin(0.2 * t + seed)
    pts = np.zeros((n, 4, 2))
    pts[:, 0] = [50.0, 50.0]
    pts[:, 1] = pts[:, 0] + 25 * np.stack([np.cos(a / 2), np.sin(a / 2)], -1)
    pts[:, 2] = pts[:, 1] + 30 * np.stack([np.cos(a), np.sin(a)], -1)
    pts[:, 3] = pts[:, 2] + 30 * np.stack([np.cos(a + 0.5), np.sin(a + 0.5)], -1)
    if jump is not None:
        pts[jump:, 2:] += 6.0
    return pts


def _data(noise: float = 0.3) -> dict:
    """Reads with noise around true keypoints; rollout ``c1`` jumps in its second segment."""
    rng = np.random.default_rng(0)

    def read(true: np.ndarray) -> dict:
        vis = np.ones(true.shape[:2], bool)
        return {"pos": true + rng.normal(0, noise, true.shape), "vis": vis.copy(),
                "held": np.zeros(len(true), bool), "fps": 10.0, "w": 100, "h": 100,
                "true_pos": true, "true_vis": vis}

    refs = {f"r{i}": read(_arm(48, i)) for i in range(6)}
    items = {}
    for i in range(4):
        bad = i == 1
        planted = [{"start": s, "stop": s + 16, "verdict": "Bad" if bad and s == 16 else "Good",
                    "failures": [{"type": "config_jump", "visible": True}] if bad and s == 16 else []}
                   for s in (0, 16, 32)]
        read_i = read(_arm(48, 10 + i, 24 if bad else None))
        items[f"c{i}-x"] = {**read_i, "clip": f"c{i}", "planted": planted}
    return {"links": [(0, 1), (1, 2), (2, 3)], "fingers": [], "refs": refs, "items": items}


def test_read_errors_against_a_known_offset_and_visibility_misses():
    data = _data()
    for d in data["refs"].values():
        d["pos"] = d["true_pos"] + np.array([3.0, 4.0])  # 5 px off everywhere, the same on every frame
        d["vis"] = d["true_vis"].copy()
    e = lv.read_errors(data)
    assert e["median_px"] == pytest.approx(5.0) and e["p90_px"] == pytest.approx(5.0)
    assert e["visibility_wrong"] == 0.0
    # A constant offset adds nothing to a third difference: the jerk's cut is the true one's.
    assert e["jerk_p95_ratio"] == pytest.approx(1.0)
    for d in data["refs"].values():
        d["vis"][:12, 0] = False  # 12 of 48 x 4 pairs wrong: 6.25%
    assert lv.read_errors(data)["visibility_wrong"] == pytest.approx(12 / (48 * 4))


def test_segment_rows_flag_the_jump_and_count_it_by_type():
    rows = lv.segment_rows(_data(), true=False)
    assert len(rows) == 12
    bad = [r for r in rows if r["verdict"] == "Bad"]
    assert len(bad) == 1 and bad[0]["score"] > 1 and bad[0]["jerk"] > 1
    assert bad[0]["score"] == max(r["score"] for r in rows)
    counts = lv.flagged_by_type(rows)
    assert counts["config_jump"] == (1, 1)
    assert counts["none"][1] == 11
    assert lv.rho(rows) > 0.3


def test_kth_keypoint_with_k_1_is_the_measure_itself():
    data = _data()
    plain = lv.segment_rows(data, true=False)
    for true in (False, True):
        base = lv.segment_rows(data, true)
        first = lv.kth_rows(data, true, 1)
        np.testing.assert_allclose([r["score"] for r in first], [r["score"] for r in base], rtol=1e-12)
    # The jump moves two keypoints at once, so it is still flagged, and the worst, when two must move ...
    second = lv.kth_rows(data, False, 2)
    worst = max(range(len(second)), key=lambda i: second[i]["score"])
    assert second[worst]["verdict"] == "Bad" and second[worst]["jerk"] > 2
    # ... but not when three of the four must: the third is a still keypoint's read noise, no higher than
    # the clean segments' (the jump stands 2.5 times above their noise with the largest keypoint).
    third = lv.kth_rows(data, False, 3)
    noise = max(r["jerk"] for r in third if r["verdict"] == "Good")
    assert third[worst]["jerk"] < 1.25 * noise and plain[worst]["jerk"] > 2.5 * noise


def test_fold_mean_median_and_visibility():
    data = _data()
    pool = {"refs": {}, "items": {}}
    for group in ("refs", "items"):
        for key, d in data[group].items():
            n, k = d["pos"].shape[:2]
            offsets = np.array([0.0, 1.0, 5.0])[:, None, None, None]  # three candidates, 0, 1 and 5 px right
            pos = np.repeat(d["true_pos"][None], 3, 0) + offsets * np.array([1.0, 0.0])
            vis = np.stack([np.full((n, k), 0.9), np.full((n, k), 0.3), np.full((n, k), 0.2)])
            pool[group][key] = {"pos": pos, "vis": vis}
    key = "c0-x"
    mean = lv.fold(data, pool, [0, 1, 2])["items"][key]
    true = data["items"][key]["true_pos"]
    np.testing.assert_allclose(mean["pos"] - true, np.broadcast_to([2.0, 0.0], true.shape), atol=1e-9)
    assert not mean["vis"].any()  # (0.9 + 0.3 + 0.2) / 3 = 0.47, not above 0.5
    median = lv.fold(data, pool, [0, 1, 2], "median")["items"][key]
    np.testing.assert_allclose(median["pos"] - true, np.broadcast_to([1.0, 0.0], true.shape), atol=1e-9)
    first_two = lv.fold(data, pool, [0, 1])["items"][key]
    assert first_two["vis"].all()  # (0.9 + 0.3) / 2 = 0.6
    assert data["items"][key]["clip"] == first_two["clip"]  # the rest of the read is kept


def test_candidate_pool_matches_the_metrics_own_five():
    torch = pytest.importorskip("torch")
    from robojudge.kiva._infer import predict
    from robojudge.kiva._net import KeypointReader

    torch.manual_seed(0)
    net = KeypointReader(3, 3, 8).eval()
    rng = np.random.default_rng(1)
    frames = rng.integers(0, 256, (5, 32, 32, 3), dtype=np.uint8)
    pos, vis = lv.predict_pool(net, frames, 3)
    assert pos.shape == (len(lv.POOL), 5, 3, 2) and vis.shape == (len(lv.POOL), 5, 3)
    ref_pos, ref_vis = predict(net, frames, 3)
    np.testing.assert_allclose(pos[lv.SUBSETS["base5"]].mean(0), ref_pos, atol=1e-5)
    np.testing.assert_allclose(vis[lv.SUBSETS["base5"]].mean(0), ref_vis, atol=1e-6)
    # A vertical shift moves the content down, edges repeated.
    x = torch.zeros(1, 1, 6, 6)
    x[0, 0, 2, 3] = 1.0
    moved = lv.shift_xy(x, -1, 2)
    assert moved[0, 0, 4, 2] == 1.0 and float(moved.sum()) == 1.0
    assert math.isclose(float(lv.shift_xy(x, 0, 0).sum()), 1.0)


def test_ensemble_averages_the_readers_positions_and_visibility():
    a, b = _data(noise=0.5), _data(noise=0.5)
    for d in b["refs"].values():
        d["pos"] = d["pos"] + np.array([2.0, -2.0])  # the second reader reads 2 px right and up
    key = next(iter(a["refs"]))
    a["refs"][key]["prob"] = np.full(a["refs"][key]["vis"].shape, 0.9)
    b["refs"][key]["prob"] = np.full(b["refs"][key]["vis"].shape, 0.2)  # mean 0.55: visible
    b["items"]["c0-x"]["vis"][:5] = False  # cached without probabilities: 0 or 1; mean 0.5 is not visible
    both = lv.ensemble([a, b])
    ref = both["refs"][key]
    np.testing.assert_allclose(ref["pos"], (a["refs"][key]["pos"] + b["refs"][key]["pos"]) / 2)
    np.testing.assert_allclose(ref["prob"], 0.55)
    assert ref["vis"].all()
    assert not both["items"]["c0-x"]["vis"][:5].any() and both["items"]["c0-x"]["vis"][5:].all()
    # What the measure needs is carried over from the first read; both readers are named.
    assert both["items"]["c1-x"]["planted"] == a["items"]["c1-x"]["planted"]
    assert both["links"] == a["links"] and len(both["reader"]) == 2


def test_spread_by_hand_and_disagreement_finds_where_reads_part():
    # Three reads of one keypoint: 0, 3 and 6 px right of each other; their mean is the middle one.
    reads = np.zeros((3, 1, 1, 2))
    reads[:, 0, 0, 0] = [0.0, 3.0, 6.0]
    assert lv.spread(reads)[0, 0] == pytest.approx(2.0)  # (3 + 0 + 3) / 3
    data = _data()
    spreads = {g: {k: np.full(d["vis"].shape, 0.2) for k, d in data[g].items()} for g in ("refs", "items")}
    rng = np.random.default_rng(5)
    for s in spreads["refs"].values():
        s += rng.uniform(0, 0.1, s.shape)  # references: readers agree within 0.3 px
    spreads["items"]["c2-x"][20:24, 3] = 3.0  # one rollout's tip is read 3 px apart in its second segment
    rows = lv.disagreement_rows(data, spreads)
    by = {(r["item"], r["start"]): r for r in rows}
    assert by[("c2-x", 16)]["disagree"] > 5  # ten times the references' spread
    assert all(r["disagree"] < 1.5 for key, r in by.items() if key != ("c2-x", 16))
    # The larger ratio flags it; the jump of c1 stays flagged by its own score.
    assert by[("c2-x", 16)]["max"] > 1 and by[("c1-x", 16)]["max"] >= by[("c1-x", 16)]["score"] > 1
    # Keypoints read apart become unseen: only those four frames of that one keypoint.
    hidden = lv.masked(data, spreads, 99.0)["items"]["c2-x"]["vis"]
    assert not hidden[20:24, 3].any() and hidden.sum() == hidden.size - 4


def test_errors_and_kth_find_a_named_readers_cache(tmp_path):
    (tmp_path / "fetch").mkdir()
    (tmp_path / "fetch" / "_tracks.pkl").write_bytes(b"")
    (tmp_path / "fetch" / "_tracks_reader-w02.pkl").write_bytes(b"")
    assert lv._caches([tmp_path], ["fetch"])[0][2].name == "_tracks.pkl"
    assert lv._caches([tmp_path], ["fetch"], "reader-w02")[0][2].name == "_tracks_reader-w02.pkl"
    with pytest.raises(SystemExit, match="ensemble` with that reader.*_tracks_reader-x.pkl"):
        lv._caches([tmp_path], ["fetch"], "reader-x")


def test_smoothing_keeps_a_line_cuts_a_spike_and_leaves_unseen_windows_raw():
    t = np.arange(12, dtype=float)
    pos = np.stack([np.stack([2 * t, 5 - t], -1), np.stack([t, t], -1)], axis=1)  # (12, 2, 2): straight lines
    vis = np.ones((12, 2), bool)
    for mode in ("ma3", "med3", "sg5"):
        assert np.allclose(lv.smooth_positions(pos, vis, mode), pos)  # a line is its own smooth
    spike = pos.copy()
    spike[6, 0, 0] += 9.0
    assert lv.smooth_positions(spike, vis, "ma3")[6, 0, 0] == pytest.approx(pos[6, 0, 0] + 3.0)
    assert lv.smooth_positions(spike, vis, "ma3")[5, 0, 0] == pytest.approx(pos[5, 0, 0] + 3.0)
    # the median of 10, 21 (the spike) and 14: the spike is gone, the line's next value stands in
    assert lv.smooth_positions(spike, vis, "med3")[6, 0, 0] == pytest.approx(pos[7, 0, 0])
    hidden = vis.copy()
    hidden[7, 0] = False  # keypoint 0 unseen at frame 7: frames 6-8 keep keypoint 0's raw reads
    got = lv.smooth_positions(spike, hidden, "ma3")
    assert got[6, 0, 0] == spike[6, 0, 0] and got[5, 0, 0] == pytest.approx(pos[5, 0, 0] + 3.0)
    assert np.allclose(got[:, 1], pos[:, 1])
    assert got[0, 0, 0] == spike[0, 0, 0]  # ends stay raw
    with pytest.raises(ValueError, match="unknown smoothing 'ma4'"):
        lv.smooth_positions(pos, vis, "ma4")


def test_smoothing_the_reads_moves_the_cuts_with_them_and_rigidity_only_keeps_the_raw_jerk():
    data = _data(noise=0.8)
    raw = lv.segment_rows(data, False)
    smooth = lv.segment_rows(lv.smoothed(data, "ma3"), False)
    assert [r["item"] for r in smooth] == [r["item"] for r in raw]
    assert any(a["jerk"] != b["jerk"] for a, b in zip(raw, smooth, strict=True))
    before = data["refs"]["r0"]["pos"].copy()
    lv.smoothed(data, "ma3")
    assert np.array_equal(data["refs"]["r0"]["pos"], before)  # the reads are not changed in place
    mixed = lv.rigidity_smoothed_rows(data, "ma3")
    for m, r, s in zip(mixed, raw, smooth, strict=True):
        assert m["jerk"] == r["jerk"] and m["rigidity"] == pytest.approx(s["rigidity"], nan_ok=True)
        assert m["score"] == pytest.approx(max(x for x in (m["rigidity"], m["jerk"]) if not math.isnan(x)))
    jump = next(m for m in mixed if m["verdict"] == "Bad")
    assert jump["score"] > 1  # the planted jump is still flagged


def test_finger_gaps_of_references_and_finger_pass_segments():
    data = _data()
    assert lv.finger_gaps(data, False) is None  # no finger pair
    data["fingers"] = [(2, 3, 1)]
    # keypoints 2 and 3 are 30 px apart on every frame; in c2's middle segment they come to 1 px (reads) and
    # 0 px (truth) on frame 20, and frame 21's fingers are unseen in the reads
    item = data["items"]["c2-x"]
    item["planted"][1]["failures"] = [{"type": "finger_pass", "visible": True}]
    item["pos"][20, 3] = item["pos"][20, 2] + [1.0, 0.0]
    item["true_pos"][20, 3] = item["true_pos"][20, 2]
    item["vis"][21, 3] = False
    read, true = lv.finger_gaps(data, False), lv.finger_gaps(data, True)
    assert true["reference_p1"] == pytest.approx(30.0)
    assert read["reference_p1"] == pytest.approx(30.0, abs=2.0)  # reads with noise
    assert read["passes"] == [pytest.approx(1.0)] and true["passes"] == [pytest.approx(0.0)]
    item["planted"][1]["failures"][0]["visible"] = False  # a pass the main view never shows is left out
    assert lv.finger_gaps(data, True)["passes"] == []


def test_compare_readers_pairs_the_replicates_and_matches_the_plain_rho(tmp_path):
    import pickle

    from scipy.stats import spearmanr

    for robot, noise in (("fetch", 0.3), ("aloha", 0.6)):
        (tmp_path / robot).mkdir()
        data = _data(noise)
        for reader in ("reader-a", "reader-b"):
            with (tmp_path / robot / f"_tracks_{reader}.pkl").open("wb") as f:
                pickle.dump(data, f)  # the same reads: every replicate's difference is 0
    res = lv.compare_readers(tmp_path, ["fetch", "aloha"], ["reader-a", "reader-b"], replicates=200)
    diff = res.differences["reader-b"]
    assert all(v.rho == 0 and v.low == 0 and v.high == 0 for v in (*diff.groups.values(), diff.macro))
    for robot, noise in (("fetch", 0.3), ("aloha", 0.6)):
        rows = lv.segment_rows(_data(noise), False)
        plain = spearmanr([r["score"] for r in rows], [lv.LEVELS[r["verdict"]] for r in rows]).statistic
        assert res.metrics["reader-a"].groups[robot].rho == pytest.approx(plain)
        true = lv.segment_rows(_data(noise), True)
        plain_true = spearmanr([r["score"] for r in true], [lv.LEVELS[r["verdict"]] for r in true]).statistic
        assert res.metrics["true keypoints"].groups[robot].rho == pytest.approx(plain_true)
    (tmp_path / "aloha" / "_tracks_reader-b.pkl").unlink()
    with pytest.raises(SystemExit, match="_tracks_reader-b.pkl"):
        lv.compare_readers(tmp_path, ["fetch", "aloha"], ["reader-a", "reader-b"], replicates=10)


def _fingers_meet(data: dict) -> dict:
    """``data`` with keypoints 2 and 3 as a finger pair (hand 1), 30 px apart, read 1 px apart on frames
    20-23 of c2's middle segment (a finger pass read as the fingers meeting, not crossing)."""
    data["fingers"] = [(2, 3, 1)]
    item = data["items"]["c2-x"]
    item["planted"][1].update(verdict="Bad", failures=[{"type": "finger_pass", "visible": True}])
    item["pos"][20:24, 3] = item["pos"][20:24, 2] + [1.0, 0.0]
    return data


def test_segment_rows_judge_the_finger_gap_in_version_5_only():
    data = _fingers_meet(_data())
    v5 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, False)}
    v4 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, False, finger_gap=False)}
    met = v5[("c2-x", 16)]
    # References keep the pair 30 px apart (+- read noise): 1 px is about 30 times below their cut.
    assert met["gap"] > 20 and met["score"] == pytest.approx(max(met["gap"], met["rigidity"], met["jerk"],
                                                                 met["finger"]))
    assert math.isnan(v4[("c2-x", 16)]["gap"])
    assert all(math.isnan(r["gap"]) for r in v4.values())
    # Elsewhere the pair stays as far apart as in the references: about at its cut (the ratio can still be a
    # quiet segment's largest part), and no other segment's verdict changes.
    assert all(r["gap"] < 1.1 for k, r in v5.items() if k != ("c2-x", 16))
    assert all((v5[k]["score"] > 1) == (v4[k]["score"] > 1) for k in v5 if k != ("c2-x", 16))
    # (moving the finger also stretches link 2-3 and jerks: version 4 flags this segment by those parts)
    assert v5[("c2-x", 16)]["score"] >= v4[("c2-x", 16)]["score"] > 1


def test_rescore_keeps_the_finger_gap_among_the_parts():
    rows = {(r["item"], r["start"]): r for r in lv.segment_rows(_fingers_meet(_data()), False)}
    met = rows[("c2-x", 16)]
    assert met["gap"] > max(met["rigidity"], met["jerk"], met["finger"])  # the gap is its worst part
    score = met["score"]
    met["score"] = math.nan
    lv.rescore(met)
    assert met["score"] == pytest.approx(score) == pytest.approx(met["gap"])


def test_compare_gap_bootstraps_both_versions_on_the_same_reads(tmp_path, capsys):
    import pickle

    from scipy.stats import spearmanr

    (tmp_path / "aloha").mkdir()
    data = _fingers_meet(_data())
    with (tmp_path / "aloha" / "_tracks_reader-a.pkl").open("wb") as f:
        pickle.dump(data, f)
    res, flags = lv.compare_gap(tmp_path, ["aloha"], "reader-a", replicates=200)
    for key, true, gap in (("read v4", False, False), ("read v5", False, True), ("true v5", True, True)):
        rows = lv.segment_rows(data, true, finger_gap=gap, relative=False)
        plain = spearmanr([r["score"] for r in rows], [lv.LEVELS[r["verdict"]] for r in rows]).statistic
        assert res.metrics[key].groups["aloha"].rho == pytest.approx(plain)
    d = res.differences["read v5"].groups["aloha"]
    assert d.rho == pytest.approx(res.metrics["read v5"].groups["aloha"].rho
                                  - res.metrics["read v4"].groups["aloha"].rho)
    assert d.low <= d.rho <= d.high
    good_flagged, good, bad_flagged, bad = flags["aloha"]["read v5"]
    assert (good, bad) == (10, 2) and bad_flagged == 2  # the jump and the fingers meeting
    lv.cmd_versions(tmp_path, ["aloha"], ["reader-a"], 50)
    assert "read v5 - v4" in capsys.readouterr().out


def test_version_6_judges_relative_link_lengths_and_versions_compares_it_with_version_5(tmp_path, capsys):
    import pickle

    data = _data()
    # Rollout c2 comes smoothly towards the camera: every keypoint 40% further from (50, 50) by its last
    # frame. Nothing breaks; the pixel lengths grow alike.
    item = data["items"]["c2-x"]
    grow = 1 + 0.2 * (1 - np.cos(np.pi * np.arange(48) / 47))
    noise = item["pos"] - item["true_pos"]  # (the reads' noise stays as it was)
    item["true_pos"] = 50.0 + (item["true_pos"] - 50.0) * grow[:, None, None]
    item["pos"] = item["true_pos"] + noise
    v6 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, False, **lv.MEASURES[6])}
    v5 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, False, **lv.MEASURES[5])}
    assert v5[("c2-x", 16)]["rigidity"] > 3  # read as every link stretching, beyond the cut 3 times over
    assert all(v6[("c2-x", s)]["rigidity"] < 1 for s in (0, 16, 32))
    assert v6[("c1-x", 16)]["score"] > 1  # the jump is still found
    (tmp_path / "adroit").mkdir()
    with (tmp_path / "adroit" / "_tracks_reader-a.pkl").open("wb") as f:
        pickle.dump(data, f)
    res, flags = lv.compare_versions(tmp_path, ["adroit"], "reader-a", replicates=100, versions=(5, 6))
    assert set(res.metrics) == {"read v5", "read v6", "true v5", "true v6"}
    zoom_flags = sum(v5[("c2-x", s)]["score"] > 1 for s in (0, 16, 32))
    assert zoom_flags >= 1 and all(v6[("c2-x", s)]["score"] <= 1 for s in (0, 16, 32))
    assert flags["adroit"]["read v5"][0] - zoom_flags == flags["adroit"]["read v6"][0]  # the rest alike
    lv.main(["versions", "--root", str(tmp_path), "--robots", "adroit", "--reader", "reader-a",
             "--replicates", "50", "--old", "5", "--new", "6"])
    out = capsys.readouterr().out
    assert "read v6 - v5" in out and "true v6" in out
    with pytest.raises(SystemExit):
        lv.main(["versions", "--root", str(tmp_path), "--reader", "reader-a", "--old", "6", "--new", "6"])


def test_version_7_keeps_a_jump_at_a_boundary_out_of_the_clean_segment_before_it(tmp_path, capsys):
    import pickle

    data = _data()
    # Rollout c3's last two keypoints jump 6 px between frames 15 and 16 (its first frame of segment 1)
    # and stay: planted Bad from frame 16.
    item = data["items"]["c3-x"]
    noise = item["pos"] - item["true_pos"]
    item["true_pos"] = _arm(48, 13, jump=16)
    item["pos"] = item["true_pos"] + noise
    item["planted"] = [{"start": s, "stop": s + 16, "verdict": "Bad" if s == 16 else "Good",
                        "failures": [{"type": "config_jump", "visible": True}] if s == 16 else []}
                       for s in (0, 16, 32)]
    for true in (False, True):
        v6 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, true, **lv.MEASURES[6])}
        v7 = {(r["item"], r["start"]): r for r in lv.segment_rows(data, true)}
        # The centre windows gave the step's largest window (frames 14-17) to the clean segment 0; version
        # 7 gives segment 0 nothing of the step, and segment 1 the window of frames 15-18.
        assert v6[("c3-x", 0)]["score"] > 1 and v6[("c3-x", 16)]["score"] > 1
        assert v7[("c3-x", 0)]["score"] < v6[("c3-x", 0)]["score"] / 3 and v7[("c3-x", 16)]["score"] > 1
        if not true:  # (true keypoints of a smooth swing all score about 1: no read noise sets the cuts)
            clean = max(v7[(c, s)]["score"] for c in ("c0-x", "c2-x") for s in (0, 16, 32))
            assert v7[("c3-x", 0)]["score"] <= clean  # no higher than the clean rollouts' read noise
        # A jump inside a segment (c1's, at frame 24) is found by both.
        assert v6[("c1-x", 16)]["score"] > 1 and v7[("c1-x", 16)]["score"] > 1
    (tmp_path / "fetch").mkdir()
    with (tmp_path / "fetch" / "_tracks_reader-a.pkl").open("wb") as f:
        pickle.dump(data, f)
    res, flags = lv.compare_versions(tmp_path, ["fetch"], "reader-a", replicates=100, versions=(6, 7))
    assert set(res.metrics) == {"read v6", "read v7", "true v6", "true v7"}
    assert set(flags["fetch"]) == set(res.metrics)
    lv.main(["versions", "--root", str(tmp_path), "--robots", "fetch", "--reader", "reader-a",
             "--replicates", "50"])
    assert "read v7 - v6" in capsys.readouterr().out  # versions compares 6 and 7 unless told


def test_rigidity_variants_start_from_the_measure_and_find_a_link_held_stretched_for_a_segment(tmp_path,
                                                                                             capsys):
    import pickle

    import robojudge.kiva as kiva

    data = _data()
    # Rollout c3's last link is 15% longer on exactly frames 16-31, then back: constant inside segment 1.
    item = data["items"]["c3-x"]
    noise = item["pos"] - item["true_pos"]
    true = _arm(48, 13)
    true[16:32, 3] = true[16:32, 2] + 1.15 * (true[16:32, 3] - true[16:32, 2])
    item["true_pos"], item["pos"] = true, true + noise
    plain = lv.segment_rows(data, False)
    assert lv.rigidity_rows(data, False, "cv", 0) == plain  # the stand-in is the measure itself
    assert kiva.segment_values is not lv.variant_segment_values  # and the measure's own is put back
    cv = {(r["item"], r["start"]): r for r in plain}
    median = {(r["item"], r["start"]): r for r in lv.rigidity_rows(data, False, "median", 0)}
    # Inside the segment the stretched link barely varies; against its typical length it is 15% off.
    assert median[("c3-x", 16)]["rigidity"] > 3 * cv[("c3-x", 16)]["rigidity"]
    assert median[("c3-x", 16)]["rigidity"] > 1
    assert median[("c3-x", 0)]["rigidity"] < 1 and median[("c3-x", 32)]["rigidity"] < 1
    with pytest.raises(ValueError, match="unknown rigidity variant"):
        lv.link_values(np.ones((5, 1)), 100.0, 0.0, np.ones(1), "mean")
    (tmp_path / "adroit").mkdir()
    with (tmp_path / "adroit" / "_tracks_reader-a.pkl").open("wb") as f:
        pickle.dump(data, f)
    lv.main(["rigidity", "--root", str(tmp_path), "--robots", "adroit", "--reader", "reader-a",
             "--variant", "cv", "--variant", "max", "--extend", "0", "--extend", "4"])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and all("reader-a" in x and "macro" in x for x in out)
    assert f"macro {lv.rho(plain):.3f}" in out[0] and "+4 frames" in out[1]


def test_bad_over_medium_by_hand_by_type_and_family():
    def row(verdict: str, score: float, *failures: tuple[str, float]) -> dict:
        return {"verdict": verdict, "score": score,
                "failures": [{"type": t, "severity": s} for t, s in failures]}

    rows = [row("Bad", 2.0, ("bend", 0.9)), row("Bad", 30.0, ("jitter", 0.8), ("bend", 0.6)),
            row("Medium", 1.5, ("bend", 0.3)), row("Medium", 20.0, ("config_jump", 0.4)),
            row("Medium", 2.0, ("link_stretch", 0.2)), row("Good", 0.1),
            row("Medium", math.nan, ("bend", 0.2))]
    assert lv.segment_type(rows[1]) == "jitter" and lv.segment_type(rows[5]) is None  # the most severe
    assert lv.family("config_jump") == "jerk" and lv.family("finger_pass") == "shape"
    # Pairs (Bad, Medium) among the scored: 2 x 3. Bad 2.0 beats 1.5, ties 2.0, loses to 20; Bad 30 beats all.
    assert lv.bad_over_medium(rows) == (pytest.approx((1 + 0.5 + 0 + 3) / 6), 6)
    same_type = lv.bad_over_medium(rows, lambda b, m: lv.segment_type(b) == lv.segment_type(m))
    assert same_type == (1.0, 1)  # bend 2.0 over bend 1.5
    def shape_over_jerk(b: dict, m: dict) -> bool:
        return lv.family(lv.segment_type(b)) == "shape" and lv.family(lv.segment_type(m)) == "jerk"

    shape_jerk = lv.bad_over_medium(rows, shape_over_jerk)
    assert shape_jerk == (0.0, 1)  # the severe bend under the mild jump
    assert math.isnan(lv.bad_over_medium(rows[:2])[0])


def test_tail_rows_squeeze_each_part_by_its_tail(tmp_path, capsys):
    import pickle

    rows = [{"rigidity": 4.0, "jerk": 9.0, "finger": math.nan, "gap": 0.5, "score": 9.0},
            {"rigidity": 0.5, "jerk": 0.8, "finger": math.nan, "gap": math.nan, "score": 0.8}]
    tails = {"rigidity": 2.0, "jerk": 3.0, "finger": math.nan, "gap": math.nan}
    out = lv.tail_rows(rows, tails)
    # rigidity 1 + ln 4 / ln 2 = 3, jerk 1 + ln 9 / ln 3 = 3, gap 0.5 as it is; below 1 nothing changes.
    assert out[0]["score"] == pytest.approx(3.0) and out[1]["score"] == 0.8
    data = _data()
    tails = lv.part_tails(data, True)
    assert tails["rigidity"] > 1 and tails["jerk"] > 1 and math.isnan(tails["finger"])  # no finger pairs
    (tmp_path / "fetch").mkdir()
    with (tmp_path / "fetch" / "_tracks_reader-a.pkl").open("wb") as f:
        pickle.dump(data, f)
    lv.main(["order", "--root", str(tmp_path), "--robots", "fetch", "--reader", "reader-a"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "true keypoints" in lines[0] and "reader-a" in lines[1]
    assert f"rho {lv.rho(lv.segment_rows(data, False)):.3f}" in lines[1]
    assert "all nan (0)" in lines[0]  # the toy suite has a Bad segment and no Medium one


def test_links_joins_every_row_of_the_training_suite_with_the_link_stretch_rollouts(tmp_path, capsys) -> None:
    import json

    def suite(folder, generators):
        folder.mkdir(parents=True)
        rows = [{"item_id": f"c0-{g}", "video": f"videos/c0-{g}.mp4", "reference_video": "reference/c0.mp4",
                 "views": {"cam0": f"videos/c0-{g}.mp4"}, "clip_id": "c0", "generator": g,
                 "state": f"state/c0-{g}.npz", "meta": {"failures": planted, "seed": 3, "episode": 0}}
                for g, planted in generators]
        (folder / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return folder / "suite.jsonl"

    profile = lv.links_profile()  # a custom profile (seeded by its name): one stretch per rollout
    assert (profile.name, profile.pa_types, profile.pa_count, profile.pa_rate) == (
        "kin_links", ("link_stretch",), (1, 1), 1.0)
    assert profile.pa_severity == (0.15, 1.0) and profile.ia_rate == 0.0
    train = suite(tmp_path / "train", [("oracle", []), ("kin_mild", [{"type": "jitter"}])])
    # The link-stretch suite is there already, so nothing is rendered.
    suite(tmp_path / "links" / "adroit", [("kin_links", [{"type": "link_stretch"}])])
    root = tmp_path / "links"
    args = ["links", "--root", str(root), "--robot", "adroit", "--train", str(train), "--episodes", "1"]
    assert lv.main(args) == 0
    out = tmp_path / "links" / "adroit" / "train.jsonl"
    assert f"{out}: 3 rows (1 link-stretch rollouts)" in capsys.readouterr().out
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    # The training suite's rollout with a planted failure stays (a mixed manifest would leave it out).
    assert [(r["item_id"], r["clip_id"]) for r in rows] == [
        ("c0-oracle", "c0"), ("c0-kin_mild", "c0"), ("links-c0-kin_links", "links-c0")]
    assert rows[1]["reference_video"] == str((tmp_path / "train/reference/c0.mp4").resolve())
    assert "reference_video" not in rows[2]  # the link suite's references stay out, as in a mixed manifest
    assert rows[2]["state"] == str((tmp_path / "links/adroit/state/c0-kin_links.npz").resolve())
    # A suite built with other settings is never taken for the one asked for.
    with pytest.raises(SystemExit, match="seed 4 and 1; remove"):
        lv.main([*args, "--seed", "4"])
    with pytest.raises(SystemExit, match="1 episodes, not seed 3 and 2"):
        lv.main([*args[:-1], "2"])
