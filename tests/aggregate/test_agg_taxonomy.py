from collections import Counter

import pytest

from robojudge.aggregate import DEFAULT_ROBOPHYSCORE_METRICS, Taxonomy, load_taxonomy


def test_counts_match_the_paper():
    tax = load_taxonomy()
    assert len(tax.metrics) == 50 and len(tax.subdims) == 18 and tax.levels == (1, 2, 3, 4)
    # Sec. 4.1: 20 / 8 / 16 / 6 metrics and 5 / 4 / 6 / 3 sub-dimensions per level.
    assert Counter(m.level for m in tax.metrics) == {1: 20, 2: 8, 3: 16, 4: 6}
    assert [len(tax.subdims_of(lv)) for lv in tax.levels] == [5, 4, 6, 3]
    assert tax.metrics_of("IQ-1")[0] == "iq1_musiq" and len(tax.metrics_of("IQ-1")) == 6


def test_default_robophyscore_set_and_targets():
    tax = load_taxonomy()
    assert set(DEFAULT_ROBOPHYSCORE_METRICS) == {
        "ds_jepa_similarity", "cc_semantics", "sa_subject_adherence", "if_normalized_score",
        "ol_average_recall", "pla_physical_commonsense", "ta_ndtw", "iq1_fvd"}
    assert tax.task_success == ("ts_action_planner", "ts_data_engine", "ts_vlm2")


def test_validate_rejects_wrong_counts():
    tax = load_taxonomy()
    with pytest.raises(ValueError, match="counts"):
        Taxonomy(tax.metrics[:-1]).validate()


def test_unknown_metric_suggests_a_close_id():
    with pytest.raises(KeyError, match="did you mean iq1_fvd"):
        load_taxonomy()["iq1_fdv"]


def test_pool_percentile_metrics_are_the_six_of_app_b52():
    got = {m.id for m in load_taxonomy().metrics if m.uses_pool_percentiles}
    assert got == {"iq1_inception_score", "aq_clip_ap", "rbg_fidelity", "rbg_reprojection_photometric",
                   "ta_mean_trajectory_length", "cs_collision_count"}


def test_the_taxonomy_maps_judge_scores_as_the_judges_package_does() -> None:
    # The report and `aggregate` read a judge rubric score as the VLM-grounded metric it feeds without
    # loading the judges package: the taxonomy's rule must agree with the rubrics' own declarations.
    from robojudge.judges import judge_taxonomy_id, taxonomy_rubrics
    from robojudge.taxonomy import VLM_GROUNDED, load_taxonomy

    tax = load_taxonomy()
    rubrics = taxonomy_rubrics()
    assert sorted(rubrics.values()) == sorted(m.id for m in tax.metrics if m.grounding == VLM_GROUNDED)
    for rubric in [*rubrics, "pa", "ia", "caption", "key_steps", "iq1_psnr", "no_such_rubric"]:
        stored = f"judge:qwen:{rubric}"
        assert tax.fed_by_judge(stored) == judge_taxonomy_id(stored), rubric
    assert tax.fed_by_judge("pla_physical_commonsense") is None  # the metric itself is not a judge score
    # (a judge's name may hold ':')
    for stored in ("judge:my:judge:ts_vlm2", "judge::ts_vlm2", "judge:ts_vlm2", "judge:q:"):
        assert tax.fed_by_judge(stored) == judge_taxonomy_id(stored), stored
