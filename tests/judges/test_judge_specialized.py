"""Specialized-judge score mappings (RoboJudge App. B.2) against hand-worked values."""

from __future__ import annotations

import math

import pytest

from robojudge.judges import (
    SPECIALIZED,
    NativeScoreError,
    PaIa,
    UnknownNameError,
    adapt_native,
    parse_videoscore2_reply,
    specialized_judge_config,
)
from robojudge.judges._specialized import round_half_up


@pytest.mark.parametrize(
    ("s", "mapped"),
    [
        (0.0, 1),  # 1 + round(0) = 1
        (1.0, 5),  # 1 + round(4) = 5
        (0.3, 2),  # 4 * 0.3 = 1.2 -> 1 -> 2
        (0.4, 3),  # 1.6 -> 2 -> 3
        (0.625, 4),  # 2.5 -> 3 (halves up; Python's round(2.5) would give 2) -> 4
        (0.125, 2),  # 0.5 -> 1 -> 2
        (0.87, 4),  # 3.48 -> 3 -> 4
    ],
)
def test_videocon_one_plus_round_four_s(s: float, mapped: int) -> None:
    out = adapt_native("videocon", {"physical_commonsense": s, "semantic_adherence": 1 - s})
    assert out.pa == mapped
    assert out.ia == 1 + round_half_up(4 * (1 - s))


def test_identity_mappings() -> None:
    assert adapt_native("videoscore2", {"physical": 2, "alignment": 4}) == PaIa(2.0, 4.0)
    assert adapt_native("videophy2", {"physical_commonsense": 5, "semantic_adherence": 1}) == PaIa(5.0, 1.0)


def test_phyjudge_mean_of_two() -> None:
    # PA = (trustworthiness + persistence) / 2 = (4 + 1) / 2 = 2.5; IA = semantic adherence = 3
    out = adapt_native("phyjudge", {"trustworthiness": 4, "persistence": 1, "semantic_adherence": 3})
    assert out == PaIa(2.5, 3.0)


def test_wbench_pa_only() -> None:
    out = adapt_native("wbench", {"visual_quality": 3})
    assert out.pa == 3 and out.ia is None


@pytest.mark.parametrize(
    ("name", "scores", "why"),
    [
        ("videocon", {"physical_commonsense": 1.2, "semantic_adherence": 0.5}, "outside 0-1"),
        ("videophy2", {"physical_commonsense": 0, "semantic_adherence": 3}, "outside 1-5"),
        ("videophy2", {"physical_commonsense": 3}, "'semantic_adherence' is missing"),
        ("wbench", {"visual_quality": math.nan}, "not a finite number"),
        ("phyjudge", {"trustworthiness": "4", "persistence": 1, "semantic_adherence": 3}, "not a finite"),
    ],
)
def test_bad_native_scores(name: str, scores: dict[str, float], why: str) -> None:
    with pytest.raises(NativeScoreError, match=why):
        adapt_native(name, scores)


def test_unknown_judge_suggests() -> None:
    with pytest.raises(UnknownNameError, match="videocon"):
        adapt_native("videocom", {})


def test_loaders() -> None:
    assert [n for n in SPECIALIZED.names() if SPECIALIZED.get(n).loader == "hf"] == ["videoscore2"]
    cfg = specialized_judge_config("videoscore2", device="cpu")
    assert (cfg.backend, cfg.model, cfg.device) == ("hf", "TIGER-Lab/VideoScore2", "cpu")
    assert cfg.revision is not None and len(cfg.revision) == 40
    assert cfg.identity()["revision"] == cfg.revision  # the pin is part of the judge's identity
    for adapter_only in ("videophy2", "videocon", "phyjudge", "wbench"):
        with pytest.raises(NativeScoreError, match="adapter"):
            specialized_judge_config(adapter_only)


def test_parse_videoscore2_reply() -> None:
    reply = (
        "<think>the gripper melts</think> The video is sharp but the arm deforms.\n"
        "visual quality: 4\ntext-to-video alignment: 3\nphysical/common-sense consistency: 2"
    )
    scores = parse_videoscore2_reply(reply)
    assert scores == {"visual_quality": 4.0, "alignment": 3.0, "physical": 2.0}
    assert adapt_native("videoscore2", scores) == PaIa(2.0, 3.0)
    with pytest.raises(NativeScoreError, match="physical"):
        parse_videoscore2_reply("visual quality: 4, alignment: 3")
