"""scripts/kiva_validation.py: its statistics and tables on made-up segment rows (no simulator, no reader)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from _scripts import load_script

kv = load_script("kiva_validation")
VERDICTS = ("Good", "Medium", "Bad")


def _rows(robot: str, videos_per_level: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    for level, verdict in enumerate(VERDICTS):
        for v in range(videos_per_level):
            for start in (0, 16, 32):
                # The video's worst segment carries its level; the others are Good.
                seg = verdict if start == 16 else "Good"
                lv = level if start == 16 else 0
                rows.append({"robot": robot, "item": f"{robot}{level}{v}", "clip": f"c{v}", "start": start,
                             "verdict": seg, "generator": ("oracle", "kin_mild", "kin_severe")[level],
                             "regime": "sim", "depth": None, "kiva_video": 100.0 * (level > 0) / 3,
                             "kiva": lv + rng.uniform(0, 1.2), "psnr": 30 - lv + rng.normal(0, 2),
                             "failures": ["jitter"] if lv else [], "kiva_true_keypoints": 2.0 * lv})
    return rows


def test_evaluate_per_robot_against_scipy_and_render() -> None:
    rng = np.random.default_rng(0)
    rows = _rows("fetch", 5, rng) + _rows("adroit", 5, rng)
    rows[0]["kiva"] = math.nan
    out = kv.evaluate(rows, {"kiva": False, "psnr": True}, draws=50, seed=0)
    for robot in ("fetch", "adroit"):
        mine = [r for r in rows if r["robot"] == robot and not math.isnan(r["kiva"])]
        want = stats.spearmanr([r["kiva"] for r in mine],
                               [VERDICTS.index(r["verdict"]) for r in mine]).statistic
        assert out["kiva"]["rho"][robot]["rho"] == pytest.approx(want)
        # psnr is higher-is-better: negated before the rank correlation.
        mine = [r for r in rows if r["robot"] == robot]
        want = stats.spearmanr([-r["psnr"] for r in mine],
                               [VERDICTS.index(r["verdict"]) for r in mine]).statistic
        assert out["psnr"]["rho"][robot]["rho"] == pytest.approx(want)
    assert out["kiva"]["rho"]["fetch"]["unscored"] == 1
    assert out["kiva"]["overlap"]["fetch"]["videos_per_level"] == [5, 5, 5]
    assert 0 < out["kiva"]["overlap_micro"][0] <= 1
    table = kv.render({"robots": ["fetch", "adroit"], "draws": 50, "stats": out,
                       "segments": {"fetch": 45, "adroit": 45}, "verdicts": {"fetch": "x", "adroit": "y"},
                       "no_value": {"sa_bleu": "no caption"}, "flagged": kv.flagged(rows),
                       "by": {k: kv.by_group(rows, k, seed=0) for k in ("generator", "regime", "depth")}})
    assert "| `kiva` |" in table and "| `psnr` |" in table and "`sa_bleu` (no caption)" in table
    # Every video of the group gives 33.3, so every resample does: the mean, without a zero-width interval.
    assert "| generator: fetch / kin_severe | 5 | 33.3 |" in table
    assert "| depth: adroit / n/a | 15 |" in table
    # 10 jitter segments per robot, all above 1 on true keypoints (2 or 4); by the reader, those above 1.
    jitter = [r for r in rows if r["robot"] == "fetch" and r["failures"]]
    assert f"| jitter | {sum(r['kiva'] > 1 for r in jitter)} / 10 of 10 |" in table
    assert table.index("| none |") < table.index("| jitter |")


def test_rho_intervals_pair_every_column_with_kiva_and_are_tabled() -> None:
    rng = np.random.default_rng(5)
    rows = _rows("fetch", 5, rng) + _rows("adroit", 5, rng)
    columns = {"kiva": False, "kiva_rigidity": False, "kiva_true_keypoints": False, "psnr": True}
    for r in rows:
        r["kiva_rigidity"] = r["kiva"]
    out = kv.evaluate(rows, columns, draws=20, seed=0)
    ci = kv.rho_intervals(rows, columns, replicates=300, seed=0)
    assert set(ci["metrics"]) == {"kiva", "kiva_true_keypoints", "psnr"}  # the parts of kiva get none
    assert set(ci["minus_kiva"]) == {"kiva_true_keypoints", "psnr"}
    assert ci["clusters"] == {"adroit": 5, "fetch": 5}  # clips c0..c4 of each robot
    for robot in ("fetch", "adroit"):
        rho, low, high = ci["metrics"]["kiva"][robot]
        assert rho == pytest.approx(out["kiva"]["rho"][robot]["rho"]) and low < rho < high
        d = ci["minus_kiva"]["psnr"][robot]
        assert d[0] == pytest.approx(out["psnr"]["rho"][robot]["rho"] - out["kiva"]["rho"][robot]["rho"])
    assert ci["metrics"]["kiva"]["macro"][0] == pytest.approx(out["kiva"]["rho_macro"])
    table = kv.render({"robots": ["fetch", "adroit"], "draws": 20, "stats": out, "rho_intervals": ci,
                       "segments": {"fetch": 45, "adroit": 45}, "verdicts": {"fetch": "x", "adroit": "y"},
                       "no_value": {}, "flagged": kv.flagged(rows),
                       "by": {k: kv.by_group(rows, k, seed=0) for k in ("generator", "regime", "depth")}})
    assert "300 replicates, each robot's clips redrawn within the robot (fetch 5, adroit 5)" in table
    part = table[table.index("minus `kiva`'s"):]
    k = ci["minus_kiva"]["psnr"]["fetch"]
    assert f"| `psnr` | {k[0]:.2f} [{k[1]:.2f}, {k[2]:.2f}] |" in part
    assert "| `kiva` |" not in part.split("Segments KIVA flags")[0]


def test_too_few_videos_of_a_level_is_reported_not_raised() -> None:
    rows = _rows("fetch", 5, np.random.default_rng(1)) + _rows("aloha", 3, np.random.default_rng(2))
    out = kv.evaluate(rows, {"kiva": False}, draws=20, seed=0)
    assert "3 videos have worst verdict Good" in out["kiva"]["overlap"]["aloha"]
    assert out["kiva"]["overlap_macro"] is None  # no macro over a robot without a band overlap
    assert not math.isnan(out["kiva"]["rho"]["aloha"]["rho"])


def test_write_table_between_markers(tmp_path: Path) -> None:
    doc = tmp_path / "v.md"
    doc.write_text(f"head\n{kv.BEGIN}\nold\n{kv.END}\ntail\n", encoding="utf-8")
    kv.write_table(doc, "new\n")
    assert doc.read_text(encoding="utf-8") == f"head\n{kv.BEGIN}\nnew\n{kv.END}\ntail\n"


def _judged(frames: int):
    from robojudge.kiva import Thresholds, Tracks, judge_tracks

    rng = np.random.default_rng(5)
    pos = np.cumsum(rng.normal(0, 0.5, (frames, 3, 2)), axis=0) + np.array([[10, 10], [30, 10], [50, 10]])
    tracks = Tracks(pos, np.ones((frames, 3), dtype=bool), np.ones((frames, 3)), 10.0, 64, 64)
    return judge_tracks(tracks, [(0, 1), (1, 2)], Thresholds(0.05, 5.0))


def test_segments_kiva_cannot_judge_are_kept_with_a_reason() -> None:
    facts = {"item": "a", "clip": "c", "generator": "kin_severe", "regime": "sim", "depth": None}
    # A 10-frame video: shorter than one segment.
    rows = kv.segment_rows(facts, [{"start": 0, "stop": 10, "verdict": "Bad"}], _judged(10), {})
    assert len(rows) == 1 and math.isnan(rows[0]["kiva"])
    assert rows[0]["reason"] == "the video has 10 frames; KIVA judges segments of 16 frames"
    # 38 frames: the planted labels keep a 6-frame remainder that KIVA (8 frames at least) does not judge.
    planted = [{"start": a, "stop": b, "verdict": "Good"} for a, b in ((0, 16), (16, 32), (32, 38))]
    rows = kv.segment_rows(facts, planted, _judged(38), {})
    assert [math.isnan(r["kiva"]) for r in rows] == [False, False, True]
    assert rows[2]["reason"] == "segment [32, 38) has 6 frames; scoring needs at least 8"
    # Unscored segments are counted, not dropped, by the statistics.
    for r in rows:
        r["robot"] = "fetch"
    out = kv.evaluate(rows + [{**r, "verdict": "Bad", "kiva": 9.0} for r in rows[:2]], {"kiva": False},
                      draws=1, seed=0)
    assert out["kiva"]["rho"]["fetch"]["n"] == 4 and out["kiva"]["rho"]["fetch"]["unscored"] == 1


def test_rows_carry_the_finger_value_the_old_measure_and_which_failures_the_main_view_never_shows() -> None:
    from robojudge.kiva import Thresholds, Tracks, judge_tracks

    facts = {"item": "a", "clip": "c", "generator": "kin_severe", "regime": "sim", "depth": None}
    # Two fingers (keypoints 1, 2) either side of a hand axis from keypoint 0; they swap on frames 20-27.
    n = 48
    width = np.full(n, 4.0)
    width[20:28] = -2.0
    pos = np.stack([np.tile([32.0, 10.0], (n, 1)),
                    np.stack([32.0 - width, np.full(n, 40.0)], axis=-1),
                    np.stack([32.0 + width, np.full(n, 40.0)], axis=-1)], axis=1)
    tracks = Tracks(pos, np.ones((n, 3), bool), np.ones((n, 3)), 10.0, 60, 80)
    cuts = Thresholds(math.nan, 1e9, 0.01)
    result = judge_tracks(tracks, [], cuts, fingers=[(1, 2, 0)])
    plain = judge_tracks(tracks, [], cuts)
    old = judge_tracks(tracks, [], Thresholds(math.nan, 1e9), **kv.OLD_RULE)
    planted = [{"start": a, "stop": a + 16, "verdict": v, "failures": f} for a, v, f in (
        (0, "Good", [{"type": "bend", "visible": False}]),
        (16, "Bad", [{"type": "finger_pass", "visible": True}, {"type": "jitter"}]),
        (32, "Good", []))]
    rows = kv.segment_rows(facts, planted, result, {}, old, {}, plain, v3=plain)
    assert [r["failures"] for r in rows] == [["bend (unseen)"], ["finger_pass", "jitter"], []]
    assert [r["kiva_v3"] for r in rows] == [r["kiva_no_finger"] for r in rows]  # the column v3 names
    assert math.isnan(rows[1]["kiva_true_keypoints_v3"])
    # 4 px a side, swapped to 2 px the other way: 4 px on the wrong side of a 100 px diagonal.
    assert [r["kiva_finger"] for r in rows] == pytest.approx([0.0, 0.04, 0.0])
    assert rows[1]["kiva"] == pytest.approx(4.0) and rows[1]["kiva_no_finger"] < 1e-6
    assert rows[1]["kiva_v2"] < 1e-6  # jerk only, far below its cut
    assert math.isnan(rows[1]["kiva_true_keypoints"]) and math.isnan(rows[1]["kiva_true_keypoints_v2"])
    flags = kv.flagged([{**r, "robot": "fetch"} for r in rows])
    assert flags["bend (unseen)"] == {"fetch": [0, 0, 1]}
    assert flags["finger_pass+jitter"] == {"fetch": [1, 0, 1]}


def test_finger_pairs_of_a_reader_come_from_its_checkpoint_or_the_built_in_robot() -> None:
    from types import SimpleNamespace

    from robojudge.robots import SIM_KEYPOINTS

    names = list(SIM_KEYPOINTS["franka"])
    old = SimpleNamespace(meta={"robot": "franka", "keypoints": names})
    assert kv.reader_fingers(old) == [(names.index("panda0_leftfinger"), names.index("panda0_rightfinger"),
                                       names.index("panda0_link7"))]
    assert kv.reader_fingers(SimpleNamespace(meta={"robot": "adroit", "keypoints": names})) == []
    stored = SimpleNamespace(meta={"robot": "franka", "keypoints": names, "fingers": [[6, 7, 5]]})
    assert kv.reader_fingers(stored) == [(6, 7, 5)]
    assert kv.measure(False, [(6, 7, 5)], None) == {"window": "end", "relative": False}
    assert kv.measure(True, [(6, 7, 5)], None) == {"fingers": [(6, 7, 5)], "held": None, "relative": False,
                                                   "window": "centre"}  # version 3
    now = kv.measure(True, [(6, 7, 5)], None, True)  # the current measure: versions 6 and 7
    assert now["relative"] is True and now["window"] == "lead"
    assert kv.measure(False, [(6, 7, 5)], None, True)["relative"] is False  # version 2 stays as it was


def test_ablation_table_gives_rho_per_robot_macro_and_good_segments_flagged() -> None:
    result = {"fetch": {"v2": {"rho": 0.5, "n": 54, "good_flagged": 3, "good": 32},
                        "v3": {"rho": 0.7, "n": 54, "good_flagged": 1, "good": 32}},
              "aloha": {"v2": {"rho": 0.3, "n": 54, "good_flagged": 4, "good": 31},
                        "v3": {"rho": 0.4, "n": 54, "good_flagged": 2, "good": 31}}}
    table = kv.render_ablation(result).splitlines()
    assert table[0] == "| measure (true keypoints) | fetch | aloha | macro | Good flagged |"
    assert table[2:] == ["| v2 | 0.50 | 0.30 | 0.40 | 7 of 63 |", "| v3 | 0.70 | 0.40 | 0.55 | 3 of 63 |"]
    assert set(kv.ABLATION) >= {"version 2 (windows ending in the segment)",
                                "version 3: centre windows + held frames + finger check"}


def test_a_robot_without_any_value_of_a_column_gets_no_overlap_rather_than_zero() -> None:
    rows = _rows("fetch", 5, np.random.default_rng(3)) + _rows("adroit", 5, np.random.default_rng(4))
    for r in rows:
        r["kiva_finger"] = math.nan if r["robot"] == "adroit" else r["kiva"]
    out = kv.evaluate(rows, {"kiva_finger": False}, draws=5, seed=0)
    assert out["kiva_finger"]["overlap"]["adroit"] == "no segment has a value"
    assert isinstance(out["kiva_finger"]["overlap"]["fetch"], dict)
    assert out["kiva_finger"]["overlap_macro"] is None


def _segment_suite(root: Path) -> Path:
    """Two 48-frame Fetch rollouts of one clip, with planted segment verdicts, and their reference."""
    from robojudge.video import write_video

    rng = np.random.default_rng(7)
    (root / "videos").mkdir()
    rows = []
    write_video(root / "ref.mp4", rng.integers(0, 256, (48, 24, 24, 3), dtype=np.uint8), fps=10)
    planted = (("r-oracle", ("Good", "Good", "Good")), ("r-kin_severe", ("Good", "Bad", "Medium")))
    for name, verdicts in planted:
        write_video(root / "videos" / f"{name}.mp4", rng.integers(0, 256, (48, 24, 24, 3), dtype=np.uint8),
                    fps=10)
        segs = [{"start": a, "stop": a + 16, "verdict": v, "rater": "planted", "failures": []}
                for a, v in zip((0, 16, 32), verdicts, strict=True)]
        rows.append({"item_id": name, "video": f"videos/{name}.mp4", "reference_video": "ref.mp4",
                     "clip_id": "r", "generator": name.split("-")[1], "task": "pick_and_place",
                     "regime": "sim", "meta": {"segments": segs}})
    (root / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "suite.jsonl"


def test_vlm_column_judges_every_frame_of_each_segment_clip_and_stores_the_majority(tmp_path: Path) -> None:
    from robojudge.judges import JudgeConfig
    from robojudge.judges._cache import ResponseCache
    from robojudge.judges._mock import MockBackend

    seg = kv.segment_manifest(_segment_suite(tmp_path), tmp_path / "_segments", "fetch")
    # Per segment clip, three turns that disagree: the majority is the stored value.
    turns = {"r-oracle@0": ["Good", "Medium", "Good"], "r-oracle@16": ["Good", "Good", "Good"],
             "r-oracle@32": ["Bad", "Good", "Good"], "r-kin_severe@0": ["Medium", "Good", "Good"],
             "r-kin_severe@16": ["Bad", "Medium", "Bad"], "r-kin_severe@32": ["Bad", "Bad", "Medium"]}
    seen: dict[str, int] = {}
    frames: list[int] = []

    def script(request):
        clip = Path(request.frames.path).name
        frames.append(len(request.frames))
        k = seen[clip] = seen.get(clip, -1) + 1
        assert "every frame" in request.system and "fingers" in request.user
        return json.dumps({"reasoning": "r", "verdict": turns[clip][k]})

    judge = JudgeConfig(name="vlm", backend="mock", replies=["unused"])
    with ResponseCache(tmp_path / "cache") as cache:
        values, why = kv.vlm_segments(seg, tmp_path / "judge", judge, 3, cache=cache,
                                      backend=MockBackend(judge, script))
    assert why is None and frames == [16] * 18 and set(seen.values()) == {2}
    assert values == {"r-oracle@0": 3.0, "r-oracle@16": 3.0, "r-oracle@32": 3.0, "r-kin_severe@0": 3.0,
                      "r-kin_severe@16": 1.0, "r-kin_severe@32": 1.0}
    # Joined to the planted verdicts, it is one more column of both tables, after KIVA's own.
    planted = {f"{it['item_id']}@{s['start']}": s["verdict"]
               for it in map(json.loads, (tmp_path / "suite.jsonl").read_text().splitlines())
               for s in it["meta"]["segments"]}
    rows = [{"robot": "fetch", "item": k.split("@")[0], "verdict": planted[k], "vlm": v,
             "kiva": {"Good": 0.5, "Medium": 1.5, "Bad": 3.0}[planted[k]]} for k, v in values.items()]
    agreement = kv.verdict_agreement(rows)
    assert agreement["robots"] == {"fetch": [5, 6]}  # all but the Medium segment, judged Bad
    assert agreement["micro"] == pytest.approx(5 / 6) == agreement["macro"]
    stats_ = kv.evaluate(rows, {"kiva": False, "vlm": True}, draws=5, seed=0)
    levels = [VERDICTS.index(r["verdict"]) for r in rows]
    want = stats.spearmanr([-r["vlm"] for r in rows], levels).statistic
    assert stats_["vlm"]["rho"]["fetch"]["rho"] == pytest.approx(want)
    table = kv.render({"robots": ["fetch"], "draws": 5, "stats": stats_, "segments": {"fetch": 6},
                       "verdicts": {"fetch": "x"}, "no_value": {}, "flagged": kv.flagged(
                           [{**r, "failures": [], "kiva_true_keypoints": 0.0} for r in rows]),
                       "by": {k: {} for k in ("generator", "regime", "depth")},
                       "vlm": "judge vlm: mock", "vlm_verdicts": agreement}).splitlines()
    names = [line.split("|")[1].strip() for line in table if line.startswith("| `")]
    assert names == ["`kiva`", "`vlm`", "`kiva`", "`vlm`"]
    assert any("matches the planted one on fetch 83% of 6; macro 83%, micro 83%" in line for line in table)


def test_a_judge_that_answers_nothing_usable_gives_a_reason_not_a_column(tmp_path: Path) -> None:
    from robojudge.judges import JudgeConfig
    from robojudge.judges._cache import ResponseCache

    seg = kv.segment_manifest(_segment_suite(tmp_path), tmp_path / "_segments", "fetch")
    judge = JudgeConfig(name="vlm", backend="mock", replies=['{"reasoning": "r", "verdict": "Perfect"}'])
    with ResponseCache(tmp_path / "cache") as cache:
        values, why = kv.vlm_segments(seg, tmp_path / "judge", judge, 1, cache=cache)
    assert values == {} and why


def test_readers_train_on_failures_only_from_a_suite_of_other_episodes(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="give --train-suite-seed"):
        kv.main(["--root", str(tmp_path), "--robots", "fetch", "--train-failures"])
    root = Path("r")
    own = root / "train" / "fetch-seed1"
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False) == root / "fetch" / "reader"
    assert kv.reader_folder(root, root / "fetch", "fetch", 1, True) == own / "reader-failures"
    assert kv.reader_folder(root, root / "fetch", "fetch", 1, False) == own / "reader"


def test_readers_of_other_sizes_or_epochs_get_folders_of_their_own() -> None:
    root = Path("r")
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False, size=64, epochs=30) == Path(
        "r/fetch/reader")
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False, size=128, epochs=10) == Path(
        "r/fetch/reader-s128-e10")
    assert kv.reader_folder(root, root / "fetch", "fetch", 1, True, size=64, epochs=10) == Path(
        "r/train/fetch-seed1/reader-failures-s64-e10")
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False, size=128, epochs=10,
                            stride=2) == Path("r/fetch/reader-s128-e10-h2")
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False, stride=2) == Path("r/fetch/reader-h2")
    assert kv.reader_folder(root, root / "fetch", "fetch", None, False, size=128, epochs=10, stride=2,
                            heatmap_loss=0.01) == Path("r/fetch/reader-s128-e10-h2-l0.01")


def test_the_scripts_readers_keep_their_settings_whatever_the_defaults(tmp_path: Path, monkeypatch) -> None:
    # The folder `reader` means a plain stride-4 reader on this page, whatever TrainConfig's defaults are.
    import robojudge.kiva as kiva

    seen = []

    def fake_train(manifest, robot, folder, config):
        seen.append(config)
        raise RuntimeError("stop after the config")

    monkeypatch.setattr(kiva, "train_reader", fake_train)
    monkeypatch.setattr(kv, "build_suite", lambda *a, **k: tmp_path / "m.jsonl")
    for kw in ({}, {"stride": 2, "heatmap_loss": 0.01}):
        with pytest.raises(RuntimeError, match="stop after"):
            kv.prepare("fetch", tmp_path, tmp_path / "reader", episodes=2, size=64, seed=1, reader_size=32,
                       epochs=1, threads=1, t0=0.0, **kw)
    assert (seen[0].heatmap_stride, seen[0].heatmap_loss) == (4, 0.0)
    assert (seen[1].heatmap_stride, seen[1].heatmap_loss) == (2, 0.01)


def test_segment_rows_of_several_readers_are_kept_side_by_side_in_one_cache(tmp_path: Path) -> None:
    cache = tmp_path / "_validation_kiva.json"
    cache.write_text(json.dumps({"reader": "a.pt", "measure": "3", "rows": [{"kiva": 1.0}]}))  # older form
    calls = []

    def compute(value):
        calls.append(value)
        return [{"kiva": value}]

    assert kv.cached_rows(cache, {"reader": "a.pt", "measure": "3"}, lambda: compute(9.0)) == [{"kiva": 1.0}]
    assert kv.cached_rows(cache, {"reader": "b.pt", "measure": "3"}, lambda: compute(2.0)) == [{"kiva": 2.0}]
    assert kv.cached_rows(cache, {"reader": "a.pt", "measure": "4"}, lambda: compute(3.0)) == [{"kiva": 3.0}]
    # Every reader's rows are still there: nothing is computed again.
    assert kv.cached_rows(cache, {"reader": "a.pt", "measure": "3"}, lambda: compute(9.0)) == [{"kiva": 1.0}]
    assert kv.cached_rows(cache, {"reader": "b.pt", "measure": "3"}, lambda: compute(9.0)) == [{"kiva": 2.0}]
    assert calls == [2.0, 3.0]


def test_a_mixed_training_manifest_takes_faithful_clips_from_one_suite_and_only_failures_from_the_other(
    tmp_path: Path,
) -> None:
    def suite(folder: Path) -> Path:
        folder.mkdir()
        rows = [{"item_id": f"c0-{g}", "video": f"videos/c0-{g}.mp4", "reference_video": "reference/c0.mp4",
                 "views": {"cam0": f"videos/c0-{g}.mp4"}, "clip_id": "c0", "generator": g,
                 "state": f"state/c0-{g}.npz", "meta": {"failures": planted}}
                for g, planted in (("oracle", []), ("kin_mild", [{"type": "jitter"}]))]
        (folder / "suite.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return folder / "suite.jsonl"

    judged, other = suite(tmp_path / "judged"), suite(tmp_path / "other")
    rows = [json.loads(x) for x in kv.mixed_manifest(judged, other, tmp_path / "m.jsonl", "s1-").read_text()
            .splitlines()]
    assert [(r["item_id"], r["clip_id"]) for r in rows] == [("c0-oracle", "c0"), ("s1-c0-kin_mild", "s1-c0")]
    assert rows[0]["reference_video"] == str((tmp_path / "judged/reference/c0.mp4").resolve())
    assert "reference_video" not in rows[1]  # the other suite's references stay out
    assert rows[1]["state"] == str((tmp_path / "other/state/c0-kin_mild.npz").resolve())
    assert rows[1]["views"] == {"cam0": str((tmp_path / "other/videos/c0-kin_mild.mp4").resolve())}
    with pytest.raises(SystemExit, match="give --train-failures too"):
        kv.main(["--root", str(tmp_path), "--robots", "fetch", "--train-suite-seed", "1", "--train-mixed"])
    assert kv.reader_folder(Path("r"), Path("r/fetch"), "fetch", 1, True, True) == Path(
        "r/train/fetch-seed1/reader-mixed")


def test_read_errors_are_split_by_the_frames_and_keypoints_each_failure_shows() -> None:
    err = np.arange(12.0).reshape(6, 2)  # frames x keypoints (a, b)
    vis = np.ones((6, 2), bool)
    vis[3, 1] = False
    assert kv.window_errors(err, vis, ["a", "b"], []) == {"faithful": [float(x) for x in range(12) if x != 7]}
    planted = [{"type": "bend", "start": 2, "stop": 5, "detail": {"keypoints": ["b"]}},
               {"type": "jitter", "start": 4, "stop": 9},  # names no keypoints: all; past the end: cut
               {"type": "link_stretch", "start": 0, "stop": 2, "visible": False}]
    want = {"bend": [5.0, 9.0], "jitter": [8.0, 9.0, 10.0, 11.0]}
    assert kv.window_errors(err, vis, ["a", "b"], planted) == want


def test_kiva_only_scores_no_weights_free_metric_and_tables_the_kiva_columns(tmp_path: Path, monkeypatch,
                                                                             capsys) -> None:
    rng = np.random.default_rng(3)
    prepared = {}
    for robot in ("fetch", "aloha"):
        folder = tmp_path / robot
        folder.mkdir()
        rows = [{k: v for k, v in r.items() if k not in ("robot", "psnr")} for r in _rows(robot, 4, rng)]
        for r in rows:
            for k in kv.KIVA_COLUMNS:
                r.setdefault(k, r["kiva"])
            r["reason"] = None
        (folder / "reader.pt").write_bytes(b"weights and thresholds")
        (folder / "_validation_kiva.json").write_text(json.dumps(
            {"entries": [{"reader": str(folder / "reader.pt"), "sha256": kv.file_digest(folder / "reader.pt"),
                          "measure": kv.MEASURE, "rows": rows}]}))
        prepared[robot] = (folder / "suite.jsonl", folder / "reader.pt")

    def no_scoring(*a, **k):
        raise AssertionError("--kiva-only scored a weights-free metric")

    monkeypatch.setattr(kv, "metric_segments", no_scoring)
    monkeypatch.setattr(kv, "segment_manifest", no_scoring)
    args = kv.argparse.Namespace(kiva_only=True, draws=50, seed=0, root=tmp_path / "out", out=None,
                                 judge_backend="mock", judge_samples=3, workers=1, replicates=200)
    assert kv.validate(prepared, args, 0.0) == 0
    table = capsys.readouterr().out
    assert "| `kiva` |" in table and "| `kiva_true_keypoints` |" in table and "psnr" not in table
    saved = json.loads((tmp_path / "out" / "kiva_validation.json").read_text())
    assert saved["stats"]["kiva"]["rho"]["fetch"]["rho"] > 0.5  # the made-up rows grow with the level
    assert "vlm" not in saved["stats"]  # a judge given with --kiva-only is not asked
    assert saved["rho_intervals"]["replicates"] == 200
    assert "Spearman's rho with 95% intervals" in table

    # A reader calibrated again (its file changed) is judged again, not served the rows cached for it.
    judged = []
    monkeypatch.setattr(kv, "kiva_segments", lambda m, c, r: judged.append(r) or
                        json.loads((m.parent / "_validation_kiva.json").read_text())["entries"][0]["rows"])
    (tmp_path / "fetch" / "reader.pt").write_bytes(b"weights and other thresholds")
    assert kv.validate(prepared, args, 0.0) == 0
    assert judged == ["fetch"]


def _fake_calibration(monkeypatch) -> list[tuple[str, str]]:
    """Readers as files whose calibration is kept here, by content: ``calibrate_reader`` appends to the file
    (as writing thresholds into a checkpoint changes it) and ``load_reader`` reports thresholds and their
    manifest for a file as that call left it. Returns the calls, (checkpoint, manifest)."""
    from types import SimpleNamespace

    import robojudge.kiva as kiva

    calls: list[tuple[str, str]] = []
    calibrated: dict[tuple[str, bytes], str] = {}

    def load(path):
        on = calibrated.get((str(Path(path).resolve()), Path(path).read_bytes()))
        return SimpleNamespace(thresholds=None if on is None else object(),
                               meta={"calibration": {"manifest": on}} if on else {})

    def calibrate(checkpoint, manifest, percentile, seed):
        calls.append((str(checkpoint), str(manifest)))
        Path(checkpoint).write_bytes(Path(checkpoint).read_bytes() + b"+thresholds")
        as_left = (str(Path(checkpoint).resolve()), Path(checkpoint).read_bytes())
        calibrated[as_left] = str(Path(manifest).resolve())
        return {}

    monkeypatch.setattr(kiva, "load_reader", load)
    monkeypatch.setattr(kiva, "calibrate_reader", calibrate)
    return calls


def _prepare(folder: Path, reader: Path, given: bool) -> tuple[Path, Path]:
    return kv.prepare("fetch", folder, reader, episodes=2, size=64, seed=1, reader_size=32, epochs=1,
                      threads=1, t0=0.0, given=given)


def test_a_reader_given_is_calibrated_as_a_copy_and_left_as_it_was(tmp_path: Path, monkeypatch) -> None:
    calls = _fake_calibration(monkeypatch)
    given = tmp_path / "elsewhere" / "reader-x"
    given.mkdir(parents=True)
    (given / "reader.pt").write_bytes(b"weights 1")
    (given / "reader.json").write_text("{}", encoding="utf-8")
    suite = tmp_path / "suite"
    monkeypatch.setattr(kv, "build_suite", lambda folder, *a, **k: folder / "suite.jsonl")

    manifest, ckpt = _prepare(suite, given, True)
    assert ckpt == suite / "calibrated" / "reader-x" / "reader.pt"
    assert (given / "reader.pt").read_bytes() == b"weights 1"  # the reader given, untouched
    assert ckpt.read_bytes() == b"weights 1+thresholds"
    assert (ckpt.parent / "reader.json").exists()
    assert calls == [(str(ckpt), str(manifest))]

    # Run again: the calibrated copy serves; nothing copied or calibrated again.
    assert _prepare(suite, given, True)[1] == ckpt
    assert len(calls) == 1 and ckpt.read_bytes() == b"weights 1+thresholds"

    # The reader given is trained again: a new copy, calibrated again.
    (given / "reader.pt").write_bytes(b"weights 2")
    assert _prepare(suite, given, True)[1] == ckpt
    assert ckpt.read_bytes() == b"weights 2+thresholds" and len(calls) == 2


def test_a_reader_calibrated_on_another_suite_is_calibrated_on_this_one(tmp_path: Path, monkeypatch) -> None:
    calls = _fake_calibration(monkeypatch)
    monkeypatch.setattr(kv, "build_suite", lambda folder, *a, **k: folder / "suite.jsonl")
    own = tmp_path / "a" / "reader"
    own.mkdir(parents=True)
    (own / "reader.pt").write_bytes(b"w")
    _prepare(tmp_path / "a", own, False)  # the script's own reader: calibrated where it is
    _prepare(tmp_path / "a", own, False)  # already on this suite: left alone
    _prepare(tmp_path / "b", own, False)  # another suite: its references set the thresholds
    assert calls == [(str(own / "reader.pt"), str(tmp_path / "a" / "suite.jsonl")),
                     (str(own / "reader.pt"), str(tmp_path / "b" / "suite.jsonl"))]
    assert kv.calibrated_on(own / "reader.pt", tmp_path / "b" / "suite.jsonl")
    assert not kv.calibrated_on(own / "reader.pt", tmp_path / "a" / "suite.jsonl")


def test_a_reader_given_that_is_not_there_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(kv, "build_suite", lambda folder, *a, **k: folder / "suite.jsonl")
    with pytest.raises(SystemExit, match="reader-missing: no reader.pt there"):
        _prepare(tmp_path / "suite", tmp_path / "reader-missing", True)


def test_a_column_without_values_on_a_robot_is_set_against_kiva_on_the_other_robot_only() -> None:
    # psnr has no value on adroit: its macro minus kiva's was its fetch rho minus kiva's mean over both
    # robots, and the table did not say that psnr's macro covers fetch alone.
    rng = np.random.default_rng(7)
    rows = _rows("fetch", 5, rng) + _rows("adroit", 5, rng)
    for r in rows:
        if r["robot"] == "adroit":
            r["psnr"] = math.nan
    columns = {"kiva": False, "kiva_true_keypoints": False, "psnr": True}
    out = kv.evaluate(rows, columns, draws=20, seed=0)
    ci = kv.rho_intervals(rows, columns, replicates=200, seed=0)
    fetch = out["psnr"]["rho"]["fetch"]["rho"] - out["kiva"]["rho"]["fetch"]["rho"]
    assert ci["minus_kiva"]["psnr"]["macro"][0] == pytest.approx(fetch)
    assert ci["minus_kiva"]["psnr"]["micro"][0] == pytest.approx(fetch)  # the fetch segments alone
    assert ci["macro_robots"] == {"metrics": {"psnr": ["fetch"]}, "minus_kiva": {"psnr": ["fetch"]}}
    table = kv.render({"robots": ["fetch", "adroit"], "draws": 20, "stats": out, "rho_intervals": ci,
                       "segments": {"fetch": 45, "adroit": 45}, "verdicts": {"fetch": "x", "adroit": "y"},
                       "no_value": {}, "flagged": kv.flagged(rows),
                       "by": {k: kv.by_group(rows, k, seed=0) for k in ("generator", "regime", "depth")}})
    part = table[table.index("minus `kiva`'s"):]
    assert part.count("Macro of fewer robots: `psnr` fetch.") == 1
    assert "the macro over the robots where both have a rho" in part


def test_table_c4_gives_a_group_in_two_clips_its_mean_and_the_reason() -> None:
    # Six videos in two clips (10/20/30 and 40/50/60): a resample can only give 20, 35 or 50, and that
    # set was printed as a 95% interval [20.0, 50.0]. Now the mean, and under the table why not more.
    rng = np.random.default_rng(0)
    rows = _rows("fetch", 5, rng) + _rows("adroit", 5, rng)
    for k, value in enumerate((10.0, 20.0, 30.0, 40.0, 50.0, 60.0)):
        rows.append({**rows[0], "item": f"two{k}", "clip": f"c{k // 3}", "generator": "kin_two",
                     "kiva_video": value})
    for k in range(9):  # and a group in three clips: an interval
        rows.append({**rows[0], "item": f"three{k}", "clip": f"c{k // 3}", "generator": "kin_three",
                     "kiva_video": 10.0 * k})
    by = {k: kv.by_group(rows, k, seed=0) for k in ("generator", "regime", "depth")}
    two = by["generator"]["fetch / kin_two"]
    assert (two["n"], two["mean"]) == (6, 35.0) and math.isnan(two["low"]) and math.isnan(two["high"])
    assert two["why"] == "scored items in 2 cluster(s); an interval needs at least 3"
    shown = by["generator"]["fetch / kin_three"]
    assert shown["why"] is None and shown["low"] < shown["mean"] < shown["high"]
    out = kv.evaluate(rows, {"kiva": False, "psnr": True}, draws=20, seed=0)
    table = kv.render({"robots": ["fetch", "adroit"], "draws": 20, "stats": out,
                       "segments": {"fetch": 45, "adroit": 45}, "verdicts": {"fetch": "x", "adroit": "y"},
                       "no_value": {}, "flagged": kv.flagged(rows),
                       "by": json.loads(json.dumps(by))})  # as the script saves and reads it back
    assert "| generator: fetch / kin_two | 6 | 35.0 |" in table
    assert ("No interval for generator: fetch / kin_two: scored items in 2 cluster(s); an interval needs "
            "at least 3.") in table
