"""All 50 RoboPhys-3D ids are registered with the taxonomy's metadata and a provider."""

import pytest

from robojudge.aggregate import load_taxonomy
from robojudge.metrics import (
    ALL_METRICS,
    METRICS,
    Family,
    Input,
    MetricInputError,
    Provider,
    expand_metric_ids,
    get_metric,
    list_metrics,
    metric,
    not_run_by_all,
    not_run_summary,
)
from robojudge.metrics.robophys import catalog
from robojudge.metrics.robophys.catalog import CATALOG, is_unavailable
from robojudge.run._api import build_requests
from robojudge.suite import Item

COMPUTED = {"iq1_psnr", "iq1_ssim", "mq_temporal_flickering", "mq_dynamic_degree", "mq_flow_score",
            "cs_collision_count", "ta_hsd", "ta_ndtw", "ta_dyn", "ol_average_precision", "ol_average_recall",
            "cc_photometric", "ctg_camera_control", "rbg_stability", "sa_bleu"}
# Model-backed taxonomy metrics robojudge runs when their weights are present ...
MODEL_RUN = {"iq1_musiq", "iq1_lpips", "iq1_fvd", "iq1_inception_score", "ds_jepa_similarity", "aq_laion_ap",
             "cc_background", "cc_subject", "cc_style", "mq_motion_smoothness", "dc_depth_accuracy",
             "sa_clip", "aq_clip_iqa", "cc_semantics", "aq_clip_ap", "aq_hpsv3",
             "rbg_reprojection_geometric", "rbg_reprojection_photometric"}
# ... and the ones it registers only to say what they need (no implementation yet).
MODEL_STUB: set[str] = set()
EXTERNAL = {"ts_action_planner", "ts_data_engine", "ta_mean_trajectory_length", "rbg_fidelity",
            "rc_spatial_consistency"}
ITEM = Item(item_id="x", video="v.mp4", reference_video="r.mp4", instruction="do it", state="s.npz")


@pytest.mark.parametrize("entry", load_taxonomy().metrics, ids=lambda e: e.id)
def test_taxonomy_id_registered_with_its_metadata(entry):
    spec = get_metric(entry.id)
    assert spec.higher_is_better is entry.higher_is_better
    assert spec.taxonomy is not None
    assert (spec.taxonomy.subdim, spec.taxonomy.level) == (entry.subdim, entry.level)
    assert spec.taxonomy.grounding == entry.grounding
    assert spec.taxonomy.normalization == entry.normalization
    assert spec.taxonomy.name == entry.name
    assert "RoboPhys-3D" in spec.citation and "App. B." in spec.citation
    assert Input.video in spec.inputs or Input.state in spec.inputs


def test_provider_split():
    specs = {s.id: s for s in list_metrics() if s.taxonomy is not None}
    assert set(specs) == set(load_taxonomy().ids)
    by = {p: {i for i, s in specs.items() if s.provider is p} for p in Provider}
    assert by[Provider.computed] == COMPUTED
    assert by[Provider.external] == EXTERNAL
    # Every VLM-grounded metric (App. B.6, Table 14: 12 of them) is a judge metric, and only those.
    vlm = {m.id for m in load_taxonomy().metrics if m.grounding == "VLM-Grounded"}
    assert by[Provider.judge] == vlm and len(vlm) == 12
    assert by[Provider.model] == MODEL_RUN | MODEL_STUB
    assert len(COMPUTED) + len(MODEL_RUN) + len(MODEL_STUB) + len(EXTERNAL) + 12 == 50
    assert {i for i in by[Provider.model] if specs[i].weights} == MODEL_RUN
    assert all(is_unavailable(specs[i].fn) for i in MODEL_STUB)
    assert all(specs[i].family is Family.judge for i in vlm)


def test_catalog_rows_are_what_is_registered():
    # A catalog row is used only when no metric module computes its id; its provider and family are
    # those of the registered metric, and a judge row's rubric ships under the same id.
    from robojudge.judges import taxonomy_rubrics

    specs = {s.id: s for s in list_metrics()}
    wrong = {mid: (entry.provider.value, specs[mid].provider.value, specs[mid].fn.__module__)
             for mid, entry in CATALOG.items() if not is_unavailable(specs[mid].fn)}
    assert wrong == {}, "catalog rows never used (id: catalog provider, registered provider, computed by)"
    assert {mid for mid, s in specs.items() if is_unavailable(s.fn)} == set(CATALOG)
    for mid, entry in CATALOG.items():
        assert (specs[mid].provider, specs[mid].family) == (entry.provider, entry.family), mid
        assert entry.provider in (Provider.judge, Provider.external), mid
    judged = {mid for mid, e in CATALOG.items() if e.provider is Provider.judge}
    assert {r: t for r, t in taxonomy_rubrics().items() if t in judged} == {m: m for m in judged}
    assert {mid for mid, e in CATALOG.items() if e.provider is Provider.external} == EXTERNAL


def test_a_catalog_row_for_a_registered_id_fails_instead_of_being_skipped():
    taken = r"'rbg_fidelity' is already registered \(by .*catalog\)"
    with METRICS.scratch(), pytest.raises(ValueError, match=taken):
        catalog._register_catalog()


def test_native_ranges_follow_the_paper():
    assert get_metric("iq1_psnr").native_range == (0.0, None)
    assert get_metric("iq1_ssim").native_range == (0.0, 1.0)
    assert get_metric("iq1_inception_score").native_range == (1.0, None)
    assert get_metric("cs_collision_count").native_range == (0.0, None)
    assert get_metric("pla_physical_commonsense").native_range == (1.0, 5.0)
    assert get_metric("if_four_level_score").native_range == (0.0, 3.0)
    assert get_metric("mq_flow_score").native_range == (0.0, None)


def test_existing_metrics_default_to_computed_without_place():
    spec = get_metric("pixel_frame_consistency")
    assert spec.provider is Provider.computed and spec.taxonomy is None
    d = spec.describe()
    assert d["provider"] == "computed" and d["taxonomy"] is None
    t = get_metric("iq1_fvd").describe()
    assert t["provider"] == "model" and t["taxonomy"]["subdim"] == "IQ-1" and t["taxonomy"]["level"] == 1


def test_sim_task_success_is_not_a_taxonomy_metric():
    spec = get_metric("sim_task_success")
    assert spec.family is Family.state and spec.inputs == frozenset({Input.state})
    assert spec.taxonomy is None and spec.provider is Provider.computed


def test_model_metric_error_names_its_model():
    # Every model metric of the taxonomy is implemented now; the stub message is kept for new entries.
    from robojudge.metrics._registry import Family, Provider
    from robojudge.metrics.robophys.catalog import Entry, unavailable_message

    text = unavailable_message("aq_hpsv3", Entry(Provider.model, Family.quality, "a reward model"))
    assert text.startswith("aq_hpsv3 (HPSv3) needs a reward model, which robojudge does not implement")
    with pytest.raises(MetricInputError, match="a set-level metric"):
        get_metric("iq1_fvd").compute(ITEM)


def test_judge_and_external_errors_say_where_values_come_from():
    with pytest.raises(MetricInputError, match=r"VLM-grounded.*`robojudge judge`"):
        get_metric("pla_physical_commonsense").compute(ITEM)
    with pytest.raises(MetricInputError, match="external pipeline.*RoboTwin"):
        get_metric("ts_action_planner").compute(ITEM)


def test_all_expands_to_computed_metrics_only():
    from robojudge.metrics._sets import is_set_metric

    # (set-level metrics are scored by `metrics sets`: a test's toy set metric registered in the same
    # worker is no per-item metric either)
    computed = sorted(s.id for s in list_metrics()
                      if s.provider is Provider.computed and not is_set_metric(s.id))
    assert expand_metric_ids([ALL_METRICS]) == computed
    assert COMPUTED | {"sim_task_success", "pixel_frame_consistency"} <= set(computed)
    # Explicit ids keep their place; repeats from "all" are dropped.
    out = expand_metric_ids(["iq1_fvd", "iq1_psnr", "all"])
    assert out[:2] == ["iq1_fvd", "iq1_psnr"] and out.count("iq1_psnr") == 1
    assert [r.id for r in build_requests(["all"])] == computed
    reqs = build_requests(["all"], {"iq1_psnr": {"max_db": 60}})
    assert next(r for r in reqs if r.id == "iq1_psnr").config.max_db == 60


def test_not_run_summary_lists_every_skipped_id():
    skipped = {s.id for s in not_run_by_all()}
    assert not skipped & COMPUTED and skipped >= MODEL_STUB
    text = "\n".join(not_run_summary())
    assert "model metrics not run" in text and "12 judge" in text and "5 external" in text
    assert all(i in text for i in skipped)


def test_all_is_a_reserved_id():
    meta = dict(family="pixel", inputs=set(), higher_is_better=True, native_range=(0, 1), version="1",
                citation="c", description="d")
    with METRICS.scratch():
        with pytest.raises(ValueError, match="reserved"):
            metric("all", **meta)(lambda item, config: None)  # type: ignore
        with pytest.raises(ValueError, match="provider"):
            metric("toy_p", provider="oracle", **meta)(lambda item, config: None)  # type: ignore
