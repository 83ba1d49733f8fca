import math

import numpy as np
import pytest

from robojudge.aggregate import average_full_score, load_taxonomy, macro_average, retention, robophyscore

TAX = load_taxonomy()


def _flat(value=0.5):
    return {m: value for m in TAX.ids}


def test_afs_all_half():
    s = average_full_score(_flat())
    # Every S_d = S_l = 0.5, AFS = 4 * 0.5; paper totals: IQ-1 = 6 * 0.5, level 1 = 5 * 0.5.
    assert float(s.afs) == pytest.approx(2.0)
    assert float(s.subdim_totals()["IQ-1"]) == pytest.approx(3.0)
    assert float(s.level_totals()[1]) == pytest.approx(2.5)


def _level4_example():
    v = _flat()
    v.update(if_normalized_score=1.0, if_four_level_score=0.0, cs_collision_count=1.0,
             ts_action_planner=0.0, ts_data_engine=0.3, ts_vlm2=0.6)
    return v


def test_afs_by_hand():
    s = average_full_score(_level4_example())
    # S_IF = (1 + 0) / 2 = 0.5, S_CS = 1, S_TS = (0 + 0.3 + 0.6) / 3 = 0.3;
    # S_4 = (0.5 + 1 + 0.3) / 3 = 0.6; AFS = 3 * 0.5 + 0.6 = 2.1.
    assert float(s.levels[4]) == pytest.approx(0.6)
    assert float(s.afs) == pytest.approx(2.1)
    assert float(s.subdim_totals()["TS"]) == pytest.approx(0.9)  # 0 + 0.3 + 0.6
    assert float(s.level_totals()[4]) == pytest.approx(1.8)  # 0.5 + 1 + 0.3


def test_missing_metric_nan_versus_drop():
    v = _level4_example()
    del v["cs_collision_count"]
    strict = average_full_score(v)
    assert math.isnan(float(strict.subdims["CS"])) and math.isnan(float(strict.afs))
    assert float(strict.levels[1]) == pytest.approx(0.5)
    # drop: CS leaves level 4, S_4 = (0.5 + 0.3) / 2 = 0.4, AFS = 1.5 + 0.4 = 1.9.
    assert float(average_full_score(v, missing="drop").afs) == pytest.approx(1.9)
    # drop a NaN inside a sub-dimension: S_IF = 1 alone, S_4 = (1 + 1 + 0.3) / 3.
    w = _level4_example()
    w["if_four_level_score"] = math.nan
    assert float(average_full_score(w, missing="drop").levels[4]) == pytest.approx(2.3 / 3)
    # A level with nothing left cannot be scored out of 4.
    lone = {m: 0.5 for m in TAX.ids if TAX[m].level != 2}
    assert math.isnan(float(average_full_score(lone, missing="drop").afs))


def test_counts_behind_each_total():
    # IQ-1 from two of its six metrics at 0.5: the "IQ-1 (/6)" total is 3.0 (0.5 x 6), not their sum 1.0.
    s = average_full_score({"iq1_psnr": np.array([0.5, np.nan]), "iq1_ssim": 0.5}, missing="drop")
    np.testing.assert_allclose(s.subdim_totals()["IQ-1"], [3.0, 3.0])
    assert s.subdim_counts["IQ-1"].tolist() == [2, 1] and s.subdim_counts["AQ"].tolist() == [0, 0]
    np.testing.assert_allclose(s.level_totals()[1], [2.5, 2.5])  # from IQ-1 alone, of 5
    assert s.level_counts[1].tolist() == [1, 1] and s.level_counts[2].tolist() == [0, 0]
    full = average_full_score(_flat())
    assert int(full.subdim_counts["IQ-1"]) == 6 and int(full.level_counts[1]) == 5


def test_afs_rows_broadcast_and_unknown_key():
    v = _flat()
    v["iq1_musiq"] = np.array([0.5, 1.1])  # second row: S_IQ-1 = (0.5*5 + 1.1) / 6 = 0.6
    s = average_full_score(v)
    # S_1 = (0.6 + 4 * 0.5) / 5 = 0.52 -> AFS = 0.52 + 1.5.
    np.testing.assert_allclose(s.afs, [2.0, 2.02])
    with pytest.raises(KeyError, match="did you mean"):
        average_full_score({"iq1_musq": 0.5})


def test_robophyscore_by_hand():
    ids = TAX.robophyscore_default
    v = {m: 0.1 * (i + 1) for i, m in enumerate(ids)}
    # (0.1 + 0.2 + ... + 0.8) / 8 = 3.6 / 8 = 0.45
    assert float(robophyscore(v)) == pytest.approx(0.45)
    assert float(robophyscore(v, ["iq1_fvd", "ta_ndtw"])) == pytest.approx((v["iq1_fvd"] + v["ta_ndtw"]) / 2)
    del v[ids[0]]
    assert math.isnan(float(robophyscore(v)))
    assert float(robophyscore(v, missing="drop")) == pytest.approx(3.5 / 7)
    with pytest.raises(ValueError, match="undefined"):
        robophyscore(v, [])


def test_macro_average_by_hand():
    # Regime a: (1 + 2 + 3) / 3 = 2, regime b: 10 -> (2 + 10) / 2 = 6 (the row mean would be 4).
    m = macro_average([1.0, 2.0, 3.0, 10.0], ["a", "a", "a", "b"])
    assert m.value == 6.0 and m.per_regime == {"a": 2.0, "b": 10.0}
    assert math.isnan(macro_average([1.0, math.nan], ["a", "b"]).value)
    assert macro_average([1.0, math.nan], ["a", "b"], skipna=True).value == 1.0
    with pytest.raises(ValueError, match="labels"):
        macro_average([1.0], ["a", "b"])


def test_retention_by_hand():
    # 1.5 / 2 = 0.75
    assert retention({"GT": 2.0, "4DGS": 1.5}) == {"GT": 1.0, "4DGS": 0.75}
    with pytest.raises(KeyError, match="ground-truth"):
        retention({"VGGT": 1.0})
    with pytest.raises(ValueError, match="undefined"):
        retention({"GT": 0.0, "VGGT": 1.0})
