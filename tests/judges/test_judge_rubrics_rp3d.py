"""RoboPhys-3D, caption and RoboWorM rubrics: schemas, parsing, binary-check aggregation, ids, export."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from robojudge.judges import (
    RUBRICS,
    ChatRequest,
    RubricError,
    get_rubric,
    judge_taxonomy_id,
    load_rubric_file,
    make_judge,
    parse_reply,
    split_judge_metric_id,
    taxonomy_rubrics,
)
from robojudge.judges._mock import MockBackend
from robojudge.run._judge import judge_items, judge_texts, write_judge_texts
from robojudge.taxonomy import load_taxonomy

EVENT = get_rubric("eaa_event_editing")

# (rubric id, kind, taxonomy native range [lower, upper]) for the VLM-grounded RoboPhys-3D metrics
# of App. B.2-B.4; every VLM-Grounded row of the taxonomy must be covered.
EXPECTED = {
    "dc_perspectivity": "checks",
    "iq2_interaction_score": "checks",
    "eaa_event_editing": "checks",
    "eaa_subject_action": "checks",
    "pla_physical_commonsense": "score",
    "sa_logics": "checks",
    "sa_vlm1": "checks",
    "sa_subject_adherence": "checks",
    "sa_scene_adherence": "checks",
    "if_normalized_score": "checks",
    "if_four_level_score": "score",
    "ts_vlm2": "checks",
}


def test_every_vlm_grounded_taxonomy_metric_has_a_rubric_on_its_native_scale() -> None:
    tax = load_taxonomy()
    vlm = {m.id for m in tax.metrics if m.grounding == "VLM-Grounded"}
    assert vlm == set(EXPECTED)
    assert taxonomy_rubrics() == {k: k for k in EXPECTED}
    for rid, kind in EXPECTED.items():
        r = get_rubric(rid)
        assert r.kind == kind and r.taxonomy == rid and r.version == "1"
        lower, upper = float(tax[rid].lower), float(tax[rid].upper)
        if rid == "sa_scene_adherence":
            # two checks in [0, 1]; the taxonomy's 0.5 is the paper's *effective* maximum (App. B.5 eq. 10)
            assert (r.score_min, r.score_max, upper) == (0.0, 1.0, 0.5)
        else:
            assert (r.score_min, r.score_max) == (lower, upper), rid


def test_five_check_protocols() -> None:
    for rid in ("eaa_event_editing", "eaa_subject_action"):
        r = get_rubric(rid)
        assert len(r.checks) == 5 and r.weights == (0.2,) * 5 and r.needs_instruction
    assert get_rubric("eaa_subject_action").checks[-1] == "natural_motion"  # the unnatural-motion check


def _event(**answers: Any) -> str:
    body = {"reasoning": "the cup is lifted but lands off the plate", **answers}
    return json.dumps(body)


@pytest.mark.parametrize(
    ("answers", "score"),
    [
        # 3 of 5 pass -> 3/5 = 0.6 (App. B.3.4: five binary checks, fraction passed)
        (
            dict(
                change_detected=True,
                event_occurs=True,
                event_completed=False,
                details_accurate=True,
                no_anomaly=False,
            ),
            0.6,
        ),
        # yes/no words and 0/1 count too: yes, 1, "no", "false", "Yes." -> 3 of 5 = 0.6
        (
            dict(
                change_detected="yes",
                event_occurs=1,
                event_completed="no",
                details_accurate="false",
                no_anomaly="Yes.",
            ),
            0.6,
        ),
        (
            dict(
                change_detected=True,
                event_occurs=True,
                event_completed=True,
                details_accurate=True,
                no_anomaly=True,
            ),
            1.0,
        ),
        (
            dict(
                change_detected=False,
                event_occurs=False,
                event_completed=False,
                details_accurate=False,
                no_anomaly=False,
            ),
            0.0,
        ),
    ],
)
def test_checks_aggregate_to_fraction_passed(answers: dict[str, Any], score: float) -> None:
    res = parse_reply(f"Let me look.\n```json\n{_event(**answers)}\n```", EVENT)
    assert res.ok, res.error
    assert res.score == pytest.approx(score)
    assert res.parts is not None and set(res.parts) == set(EVENT.checks)
    assert all(isinstance(v, bool) for v in res.parts.values())


@pytest.mark.parametrize(
    ("answers", "why"),
    [
        (dict(change_detected=True, event_occurs=True), "lacks the check(s) 'event_completed'"),
        (
            dict(
                change_detected=True,
                event_occurs="maybe",
                event_completed=True,
                details_accurate=True,
                no_anomaly=True,
            ),
            "'event_occurs' is 'maybe'",
        ),
        (
            dict(
                change_detected=2,
                event_occurs=True,
                event_completed=True,
                details_accurate=True,
                no_anomaly=True,
            ),
            "'change_detected' is 2",
        ),
    ],
)
def test_checks_reject_missing_or_non_boolean(answers: dict[str, Any], why: str) -> None:
    res = parse_reply(_event(**answers), EVENT)
    assert not res.ok and why in (res.error or "")


def test_likert_and_four_level_scores() -> None:
    pla, four = get_rubric("pla_physical_commonsense"), get_rubric("if_four_level_score")
    assert parse_reply('{"reasoning": "r", "physical_commonsense": 4}', pla).score == 4
    assert "outside 1-5" in (parse_reply('{"reasoning": "r", "physical_commonsense": 0}', pla).error or "")
    assert parse_reply('{"reasoning": "r", "level": 0}', four).score == 0
    assert "outside 0-3" in (parse_reply('{"reasoning": "r", "level": 4}', four).error or "")


def test_roboworm_label() -> None:
    r = get_rubric("roboworm_physics")
    assert r.labels == (("Bad", 1.0), ("Medium", 2.0), ("Good", 3.0))  # RoboWorM Table D4 levels
    assert parse_reply('{"reasoning": "r", "verdict": "good"}', r).score == 3
    res = parse_reply("{'reasoning': 'jitter', 'verdict': 'Medium.'}", r)
    assert res.score == 2 and res.parts == {"label": "Medium"}
    bad = parse_reply('{"reasoning": "r", "verdict": "excellent"}', r)
    assert not bad.ok and "not one of Bad, Medium, Good" in (bad.error or "")


def test_caption_text() -> None:
    r = get_rubric("caption")
    res = parse_reply('{"caption": "pick up the red cup and place it on the plate"}', r)
    assert res.score == 11 and res.parts == {"text": "pick up the red cup and place it on the plate"}
    assert not parse_reply('{"caption": "   "}', r).ok
    assert not parse_reply('{"caption": 3}', r).ok


def test_metric_ids_map_to_taxonomy() -> None:
    assert split_judge_metric_id("judge:qwen:dc_perspectivity") == ("qwen", "dc_perspectivity")
    assert split_judge_metric_id("iq1_psnr") is None
    assert judge_taxonomy_id("judge:qwen:pla_physical_commonsense") == "pla_physical_commonsense"
    assert judge_taxonomy_id("judge:my:judge:ts_vlm2") == "ts_vlm2"  # judge names may hold ':'
    for not_mapped in ("judge:qwen:pa", "judge:qwen:caption", "judge:qwen:nonexistent", "ts_vlm2"):
        assert judge_taxonomy_id(not_mapped) is None


RUBRIC = """
id = "mine"
version = "2"
taxonomy = "sa_scene_adherence"
[output]
kind = "checks"
checks = ["a", "b"]
weights = [0.25, 0.25]
[prompt]
system = "s"
user = "u {instruction}"
"""


def test_user_rubric_weights_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text(RUBRIC)
    r = load_rubric_file(p)
    assert (r.score_min, r.score_max, r.taxonomy) == (0.0, 0.5, "sa_scene_adherence")
    assert parse_reply('{"a": true, "b": false}', r).score == 0.25  # 0.25*1 + 0.25*0
    for old, new, why in [
        ('checks = ["a", "b"]', "checks = []", "non-empty list"),
        ("weights = [0.25, 0.25]", "weights = [1]", "2 positive numbers"),
        ('checks = ["a", "b"]', 'checks = ["a", "a"]', "repeated"),
        ('kind = "checks"', 'kind = "vibes"', "output.kind"),
        # a misspelt taxonomy id fed nothing, silently
        ('taxonomy = "sa_scene_adherence"', 'taxonomy = "sa_scene_adherance"',
         "did you mean sa_scene_adherence"),
        (
            'kind = "checks"\nchecks = ["a", "b"]\nweights = [0.25, 0.25]',
            'kind = "label"\nscore_key = "v"\nlabels = { x = 1, X = 2 }',
            "repeats a label",
        ),
    ]:
        p.write_text(RUBRIC.replace(old, new))
        with pytest.raises(RubricError, match=why):
            load_rubric_file(p)


def _script(request: ChatRequest) -> str:
    user = request.user
    if request.history:  # the repair turn
        return _event(
            change_detected=True,
            event_occurs=True,
            event_completed=True,
            details_accurate=False,
            no_anomaly=False,
        )
    if "ITEM:bad" in user:
        return '{"reasoning": "r", "change_detected": true}'
    if "key steps" in user:
        return '{"steps": "grasp the cup ; lift it"}'
    if "one plain sentence" in user:
        return '{"caption": "lift the cup"}'
    return _event(
        change_detected=True, event_occurs=True, event_completed=True, details_accurate=True, no_anomaly=False
    )


def test_judge_items_with_checks_and_captions(
    make_items: Any, store: Any, cache: Any, tmp_path: Path
) -> None:
    j = make_judge({"name": "mk", "backend": "mock", "model": "m", "replies": ["unused"]})
    backend = MockBackend(j, _script)
    rubrics = [get_rubric("eaa_event_editing"), get_rubric("caption"), get_rubric("key_steps")]
    summary = judge_items(make_items(["good", "bad"]), j, rubrics, store, cache=cache, backend=backend)
    assert summary.scored == 6 and summary.unscored == 0
    rows = {(r.item_id, r.metric): r for r in store.rows()}
    good = rows[("good", "judge:mk:eaa_event_editing")]
    assert good.value == pytest.approx(0.8)  # 4 of 5 checks
    assert good.details["taxonomy_id"] == "eaa_event_editing" and good.details["kind"] == "checks"
    assert good.details["parts"]["no_anomaly"] is False
    bad = rows[("bad", "judge:mk:eaa_event_editing")]
    assert bad.value == pytest.approx(0.6) and bad.details["parse_status"] == "repaired"  # 3 of 5 on repair
    repair_note = [r for r in backend.requests if r.history][0].history[1][1]
    assert "lacks the check(s)" in repair_note and '"no_anomaly": <true or false>' in repair_note
    caption = rows[("good", "judge:mk:caption")]
    assert caption.value == 3 and caption.details["text"] == "lift the cup"
    assert "taxonomy_id" not in caption.details
    texts = judge_texts(store, "judge:mk:caption")
    assert texts == {"bad": "lift the cup", "good": "lift the cup"}
    out = write_judge_texts(texts, tmp_path / "captions.jsonl")
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines == [
        {"item_id": "bad", "caption": "lift the cup"},
        {"item_id": "good", "caption": "lift the cup"},
    ]
    assert judge_texts(store, "judge:mk:key_steps")["good"] == "grasp the cup ; lift it"


def test_roboworm_majority_over_three_turns(make_items: Any, store: Any, cache: Any) -> None:
    # RoboWorM Table D2: three turns, majority vote; turns say Good, Medium, Good -> Good (3)
    replies = [
        '{"reasoning": "r", "verdict": "Good"}',
        '{"reasoning": "r", "verdict": "Medium"}',
        '{"reasoning": "r", "verdict": "good"}',
    ]
    j = make_judge({"name": "rw", "backend": "mock", "model": "m", "replies": replies})
    judge_items(make_items(["seg0"]), j, [get_rubric("roboworm_physics")], store, cache=cache, samples=3)
    (row,) = store.rows()
    assert row.value == 3
    assert row.details["votes"] == [3.0, 2.0, 3.0] and row.details["agreement"] is False
    assert row.details["mean"] == pytest.approx(8 / 3)


def test_all_builtin_rubrics_render() -> None:
    for name in RUBRICS.names():
        r = get_rubric(name)
        system, user = r.render("move the cup")
        assert system and user and "{instruction}" not in user
        assert not math.isnan(r.score_min)
